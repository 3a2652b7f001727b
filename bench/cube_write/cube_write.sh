#!/usr/bin/env bash
# cube_write.sh: what BALLAST_CUBE costs (src/mon/cube.c).
#
#   bench/cube_write/cube_write.sh [BUILD_DIR]      (default: build)
#
# 1. The main job (scripts/demo.sh's ballast-md: droplet, 256,000
#    particles, blocks 4,4,4, 2 ranks, --strategy ballast, automatic
#    balancing) in rounds without and with BALLAST_CUBE (both with
#    BALLAST_PROFILE, as a user who wants profiles runs it): per run the
#    whole job's wall time (mpiexec start to end), md's time per step, and
#    the writer's own time, call paths and memory on rank 0 (its
#    BALLAST_VERBOSE=2 line). Prints medians and the writer's share of the
#    job's wall time.
# 2. cube_regions (bench/cube_write/cube_regions.c): synthetic call trees of
#    10^3, 10^4 and 10^5 regions (each with one MPI call: about 2x call
#    paths) on 2 ranks, and 10^4 regions that differ on every rank
#    ("disjoint": the union is P x R), for the writer's time by phase and
#    memory per call path.
# 3. scale.py: per-rank time and memory at 10^3-10^5 ranks by count, from
#    the rates measured in 2.
# Environment: CUBE_BENCH_REPS (rounds of 1, default 3), CUBE_BENCH_STEPS
# (default 200, the main job's), CUBE_BENCH_KEEP=DIR keeps the files.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
md=$build/examples/md/ballast-md
syn=$build/bench/cube_write/cube_regions
for f in "$md" "$syn"; do
  [ -x "$f" ] || { echo "cube_write: $f missing: build ballast-md and cube_regions" >&2; exit 1; }
done
reps=${CUBE_BENCH_REPS:-3}
steps=${CUBE_BENCH_STEPS:-200}
out=${CUBE_BENCH_KEEP:-$(mktemp -d)}
mkdir -p "$out"
. "$root/scripts/env.sh"
export OMPI_MCA_mpi_yield_when_idle=1 BALLAST_LB=auto BALLAST_REPORT=none BALLAST_VERBOSE=2
results=$out/results.txt
: > "$results"

run_md() { # name, then env assignments
  local name=$1
  shift
  local t0 t1 log=$out/$name.log
  t0=$(date +%s.%N)
  env "$@" BALLAST_PROFILE="$out/$name.json" mpiexec -n 2 --oversubscribe "$md" --json-only \
    --scenario droplet --particles 256000 --blocks 4,4,4 --steps "$steps" \
    --strategy ballast > "$log" 2>&1
  t1=$(date +%s.%N)
  python3 - "$name" "$t0" "$t1" "$log" >> "$results" <<'PY'
import json, re, sys
name, t0, t1, log = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
tps, w = None, ""
for l in open(log, errors="replace"):
    if l.startswith('{"md_summary":'):
        tps = json.loads(l)["md_summary"]["time_per_step"]
    m = re.search(r"Cube profile written to .*: (\d+) call paths x (\d+) locations, ([0-9.]+) s "
                  r"\(call tree and system ([0-9.]+) s, files ([0-9.]+) s\); writer memory "
                  r"on rank 0 ([0-9.]+) MB", l)
    if m:
        w = " ".join(m.groups())
print("md", name, "%.3f" % (t1 - t0), tps, w)
PY
}

run_syn() { # R, then extra arguments
  local R=$1
  shift
  BALLAST_CUBE=$out/syn.cubex mpiexec -n 2 --oversubscribe "$syn" "$R" 8 "$@" 2>&1 |
    python3 -c 'import re, sys
for l in sys.stdin:
    m = re.search(r"Cube profile written to .*: (\d+) call paths x (\d+) locations, ([0-9.]+) s \(call tree and system ([0-9.]+) s, files ([0-9.]+) s\); writer memory on rank 0 ([0-9.]+) MB", l)
    if m:
        print("syn", sys.argv[1], " ".join(m.groups()))' "$R${1:+-$1}" >> "$results"
  ls -l "$out/syn.cubex" | awk -v r="$R${1:+-$1}" '{print "size", r, $5}' >> "$results"
}

for ((r = 0; r < reps; r++)); do
  run_md none
  run_md cube BALLAST_CUBE="$out/md.cubex"
done
ls -l "$out/md.cubex" | awk '{print "size md", $5}' >> "$results"
for R in 1000 10000 100000; do run_syn $R; done
run_syn 10000 disjoint

python3 - "$results" <<'PY'
import statistics, sys
md, syn, size = {}, [], {}
for l in open(sys.argv[1]):
    f = l.split()
    if f[0] == "md":
        md.setdefault(f[1], []).append(f[2:])
    elif f[0] == "syn":
        syn.append(f[1:])
    elif f[0] == "size":
        size[f[1]] = int(f[2])
med = lambda xs: statistics.median(xs)
print("| run | job wall (s) | md ms/step | writer (s) | call tree + system (s) | files (s) | writer / job wall |")
print("|---|---|---|---|---|---|---|")
for name in ("none", "cube"):
    rows = md.get(name, [])
    wall = med([float(r[0]) for r in rows])
    tps = med([float(r[1]) * 1e3 for r in rows])
    if name == "cube":
        w = med([float(r[4]) for r in rows])
        ct = med([float(r[5]) for r in rows])
        fi = med([float(r[6]) for r in rows])
        print("| cube (%s call paths, %s bytes) | %.2f | %.2f | %.4f | %.4f | %.4f | %.2f%% |" % (
            rows[0][2], format(size.get("md", 0), ","), wall, tps, w, ct, fi, 100 * w / wall))
    else:
        print("| none | %.2f | %.2f | | | | |" % (wall, tps))
print()
print("| synthetic regions | call paths | archive bytes | writer (s) | call tree + system (s) | files (s) | memory rank 0 (MB) | bytes per call path |")
print("|---|---|---|---|---|---|---|---|")
for r in syn:
    print("| %s | %s | %s | %s | %s | %s | %s | %.0f |" % (r[0], r[1], format(size.get(r[0], 0), ","),
          r[3], r[4], r[5], r[6], float(r[6]) * 1e6 / int(r[1])))
PY
echo "files kept in $out"
