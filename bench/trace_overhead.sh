#!/usr/bin/env bash
# trace_overhead.sh: the cost of the bundled trace writers on the main job,
# and the size of what they write.
#
#   bench/trace_overhead.sh [BUILD_DIR]        (default: build)
#
# Runs ballast-md as scripts/demo.sh does (droplet, 256,000 particles,
# blocks 4,4,4, 2 ranks, --strategy ballast, automatic balancing) under five
# configurations, in rounds (none, perfetto, perfetto20, otf2, both, none,
# ...) so every configuration sees the same drift of a shared machine:
#   none        no tool
#   perfetto    the Perfetto writer, every MPI call a slice
#   perfetto20  the Perfetto writer, MPI calls of 20 us or more (the demo's)
#   otf2        the OTF2 writer
#   both        both writers at once
# and prints per configuration the median time per step (md's
# time_per_step: the loop's wall time over the steps, balancing included),
# its ratio to "none", and the size of the trace each writer wrote (the
# merged JSON file; the OTF2 archive directory) in the last round.
# Environment: TRACE_BENCH_STEPS (default 200, the main job's), TRACE_BENCH_REPS
# (rounds, default 3), TRACE_BENCH_KEEP=DIR keeps the traces of the last round.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
md=$build/examples/md/ballast-md
for f in "$md" "$build/ballast/tools/perfetto.so" "$build/ballast/tools/otf2.so"; do
  [ -e "$f" ] || { echo "trace_overhead: $f missing: build ballast-md and the writers first" >&2; exit 1; }
done
steps=${TRACE_BENCH_STEPS:-200}
reps=${TRACE_BENCH_REPS:-3}
out=${TRACE_BENCH_KEEP:-$(mktemp -d)}
mkdir -p "$out"
. "$root/scripts/env.sh"
export OMPI_MCA_mpi_yield_when_idle=1 BALLAST_LB=auto BALLAST_REPORT=none BALLAST_TRACE_QUIET=1
results=$out/results.txt
: > "$results"

run() { # name, then env assignments
  local name=$1
  shift
  rm -rf "$out/$name.json" "$out/$name.otf2"
  env "$@" BALLAST_TRACE_PERFETTO="$out/$name.json" BALLAST_TRACE_OTF2="$out/$name.otf2" \
    mpiexec -n 2 --oversubscribe "$md" --json-only --scenario droplet --particles 256000 \
    --blocks 4,4,4 --steps "$steps" --strategy ballast |
    python3 -c 'import json,sys
for l in sys.stdin:
    if l.startswith("{\"md_summary\":"):
        print(sys.argv[1], json.loads(l)["md_summary"]["time_per_step"])' "$name" >> "$results"
}

for ((r = 0; r < reps; r++)); do
  run none BALLAST_TOOLS=
  run perfetto BALLAST_TOOLS=perfetto BALLAST_TRACE_MPI_MIN_US=0
  run perfetto20 BALLAST_TOOLS=perfetto BALLAST_TRACE_MPI_MIN_US=20
  run otf2 BALLAST_TOOLS=otf2
  run both BALLAST_TOOLS=perfetto:otf2 BALLAST_TRACE_MPI_MIN_US=0
done

python3 - "$results" "$out" "$steps" <<'EOF'
import os, statistics, sys
res, out, steps = sys.argv[1], sys.argv[2], sys.argv[3]
t = {}
for line in open(res):
    name, v = line.split()
    t.setdefault(name, []).append(float(v))
def size(p):
    if os.path.isfile(p):
        return os.path.getsize(p)
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(p) for f in fs) \
        if os.path.isdir(p) else 0
base = statistics.median(t["none"])
print("trace_overhead: ballast-md droplet 256000 particles, %s steps, 2 ranks, %d rounds"
      % (steps, len(t["none"])))
print("%-11s %12s %8s %14s %14s" % ("config", "ms/step", "ratio", "json bytes", "otf2 bytes"))
for name in ["none", "perfetto", "perfetto20", "otf2", "both"]:
    m = statistics.median(t[name])
    print("%-11s %12.3f %8.3f %14d %14d" % (name, m * 1e3, m / base,
          size(os.path.join(out, name + ".json")), size(os.path.join(out, name + ".otf2"))))
EOF
[ -n "${TRACE_BENCH_KEEP:-}" ] || rm -rf "$out"
