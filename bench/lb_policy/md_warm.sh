#!/usr/bin/env bash
# Warm start on ballast-md (2 ranks): a cold run writes its profile
# (BALLAST_PROFILE), then runs alternate cold and warm
# (BALLAST_LB_WARMSTART=that profile); each prints its first and last
# window's time per step (md's summary: medians over --window steps), the
# ratio first/last, and the first and last window's compute imbalance
# (max/avg over ranks), which machine load disturbs less. Scenario and size as scripts/demo.sh unless given.
# Usage: bench/lb_policy/md_warm.sh BUILD_DIR [pairs 2] [ballast-md options...]
set -euo pipefail
build=${1:?build directory}
pairs=${2:-2}
shift $(( $# >= 2 ? 2 : 1 ))
opts=("$@")
if [ ${#opts[@]} -eq 0 ]; then
  opts=(--scenario droplet --particles 256000 --blocks 4,4,4 --steps 200)
fi
export OMPI_MCA_mpi_yield_when_idle=${OMPI_MCA_mpi_yield_when_idle:-1}
export BALLAST_LB=${BALLAST_LB:-auto} BALLAST_REPORT=none
prof=$(mktemp --suffix=.json)
trap 'rm -f "$prof"' EXIT
run() { # label, extra env...
  local label=$1; shift
  env "$@" mpiexec -n 2 --oversubscribe "$build/examples/md/ballast-md" "${opts[@]}" \
    --strategy ballast --json-only 2>/dev/null | python3 -c '
import json, sys
for l in sys.stdin:
    if "md_summary" in l:
        d = json.loads(l)["md_summary"]
        f, z = d["time_per_step_first_window"], d["time_per_step_last_window"]
        print("%-5s first window %.3f ms/step, last %.3f ms/step, first/last %.3f; "
              "imbalance first %.3f, last %.3f; remaps %d"
              % (sys.argv[1], 1e3 * f, 1e3 * z, f / z, d["imbalance_first_window"],
                 d["imbalance_last_window"], d["remaps"]))' "$label"
}
run seed BALLAST_PROFILE="$prof"
for ((p = 0; p < pairs; p++)); do
  run cold
  run warm BALLAST_LB_WARMSTART="$prof"
done
