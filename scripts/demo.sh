#!/usr/bin/env bash
# Sets up the machine, builds ballast and runs the main job: a monitored MPI
# program on 2 ranks that prints ballast's end-of-run report.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bash scripts/setup.sh
. scripts/env.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j "$JOBS"
BALLAST_REPORT=${BALLAST_REPORT:-full} mpiexec -n 2 --oversubscribe build/examples/ring/ballast-ring "$@"
