#!/usr/bin/env bash
# lbsim_md.sh: how well ballast-lbsim replays and predicts the main job, and
# what the load-balancing record costs it.
#
#   bench/lbsim_md.sh [BUILD_DIR]        (default: build)
#
# Runs ballast-md as scripts/demo.sh does (droplet, 256,000 particles, blocks
# 4,4,4, 2 ranks, --strategy ballast) in rounds of three runs:
#   auto     automatic balancing with BALLAST_LB_RECORD (record A)
#   keep     the same with BALLAST_LB_THRESHOLD=1000: never remaps (record B)
#   norec    automatic balancing without a record
# and prints, per round: each record replayed (bit-identical or not), its
# size per step, lbsim's predicted/measured time per step with the recorded
# settings, the cross-predictions (B predicted from record A with
# --threshold 1000, A predicted from record B with --threshold 1.1, each
# against the other run's measured time per step), and the record's cost
# (md's time per step of auto over norec).
# Environment: LBSIM_BENCH_STEPS (default 200), LBSIM_BENCH_REPS (rounds,
# default 1), LBSIM_BENCH_KEEP=DIR keeps the records.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
md=$build/examples/md/ballast-md
lbsim=$build/tools/lbsim/ballast-lbsim
for f in "$md" "$lbsim"; do
  [ -x "$f" ] || { echo "lbsim_md: $f missing: build ballast-md and ballast-lbsim" >&2; exit 1; }
done
steps=${LBSIM_BENCH_STEPS:-200}
reps=${LBSIM_BENCH_REPS:-1}
out=${LBSIM_BENCH_KEEP:-$(mktemp -d)}
mkdir -p "$out"
. "$root/scripts/env.sh"
export OMPI_MCA_mpi_yield_when_idle=1 BALLAST_LB=auto BALLAST_REPORT=none

run() { # name, then env assignments; prints md's time per step (ms)
  local name=$1
  shift
  env "$@" mpiexec -n 2 --oversubscribe "$md" --scenario droplet --particles 256000 \
    --blocks 4,4,4 --steps "$steps" --strategy ballast > "$out/$name.out" 2>&1
  sed -n 's/^time per step (median): \([0-9.]*\) ms.*/\1/p' "$out/$name.out"
}

for r in $(seq 1 "$reps"); do
  a=$(run auto BALLAST_LB_RECORD="$out/auto.rec")
  k=$(run keep BALLAST_LB_RECORD="$out/keep.rec" BALLAST_LB_THRESHOLD=1000)
  n=$(run norec)
  "$lbsim" "$out/auto.rec" --json > "$out/auto.json" 2> "$out/auto.replay"
  "$lbsim" "$out/keep.rec" --json > "$out/keep.json" 2> "$out/keep.replay"
  "$lbsim" "$out/auto.rec" --json --no-replay --threshold 1000 > "$out/keep_from_auto.json"
  "$lbsim" "$out/keep.rec" --json --no-replay --threshold 1.1 > "$out/auto_from_keep.json"
  python3 - "$out" "$r" "$a" "$k" "$n" <<'PY'
import json, sys
out, r, a, k, n = sys.argv[1], sys.argv[2], *map(float, sys.argv[3:])
J = {x: json.load(open(f"{out}/{x}.json")) for x in
     ["auto", "keep", "keep_from_auto", "auto_from_keep"]}
meas = {x: J[x]["measured"][0]["time_per_step_s"] for x in ["auto", "keep"]}
def pred(x): return J[x]["predicted"][0]["time_per_step_s"]
print(f"round {r}: md time per step (median) auto {a:.3f} ms, keep {k:.3f} ms, "
      f"norec {n:.3f} ms; record cost auto/norec {a / n:.3f}")
for x in ["auto", "keep"]:
    rec = J[x]["record"]
    print(f"  {x}: replay differences {J[x]['replay']['differences']}, "
          f"{rec['bytes_per_step']:.0f} record bytes per step, measured "
          f"{1e3 * meas[x]:.3f} ms/step, predicted/measured {pred(x) / meas[x]:.3f}")
print(f"  keep predicted from the auto record: {1e3 * pred('keep_from_auto'):.3f} ms/step, "
      f"ratio to keep measured {pred('keep_from_auto') / meas['keep']:.3f}")
print(f"  auto predicted from the keep record: {1e3 * pred('auto_from_keep'):.3f} ms/step, "
      f"ratio to auto measured {pred('auto_from_keep') / meas['auto']:.3f}")
PY
done
