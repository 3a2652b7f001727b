#!/usr/bin/env bash
# The automatic policy's cost on the balanced MD liquid (ballast-md uniform,
# 2 ranks): runs alternate BALLAST_LB=off and BALLAST_LB=auto (pairs, the
# order swapped in every other pair so drift in machine load hits both), and
# the ratio auto/off of the medians of each run's time per step is printed.
# Usage: bench/lb_policy/md_auto_off.sh BUILD_DIR [pairs 4] [steps 100]
set -euo pipefail
build=${1:?build directory}
pairs=${2:-4}
steps=${3:-100}
export OMPI_MCA_mpi_yield_when_idle=${OMPI_MCA_mpi_yield_when_idle:-1}
run() {
  BALLAST_LB=$1 BALLAST_REPORT=none mpiexec -n 2 --oversubscribe "$build/examples/md/ballast-md" \
    --particles 23328 --steps "$steps" --blocks 4,4,4 --strategy ballast --json-only 2>/dev/null |
    python3 -c 'import json,sys
for l in sys.stdin:
    if "md_summary" in l: d=json.loads(l)["md_summary"]; print(d["time_per_step"], d["remaps"])'
}
off=(); auto=()
for ((p = 0; p < pairs; p++)); do
  if ((p % 2)); then a=$(run auto); o=$(run off); else o=$(run off); a=$(run auto); fi
  off+=("${o% *}"); auto+=("${a% *}")
  echo "pair $p: off ${o% *} s/step, auto ${a% *} s/step (auto remaps ${a#* })"
done
python3 - "${off[*]}" "${auto[*]}" <<'PY'
import statistics, sys
off = [float(x) for x in sys.argv[1].split()]
auto = [float(x) for x in sys.argv[2].split()]
mo, ma = statistics.median(off), statistics.median(auto)
print("median off %.3f ms/step, auto %.3f ms/step, auto/off %.3f" % (1e3 * mo, 1e3 * ma, ma / mo))
PY
