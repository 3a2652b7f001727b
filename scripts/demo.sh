#!/usr/bin/env bash
# Sets up the machine, builds ballast and runs the main job: the molecular
# dynamics example (examples/md) on the droplet scenario, 2 ranks, with
# ballast's automatic load balancing. A dense droplet sits off-centre in a
# dilute gas, so the static slab decomposition leaves one rank with most of
# the work; ballast measures each block (an rta task), remaps the blocks when
# the imbalance is worth it and moves their particles.
# It prints progress lines (time per step, imbalance, each remap ballast did),
# the md summary (time per step and imbalance in the first and last windows,
# ballast's remaps and cost), the phases' PIA region data and ballast's
# end-of-run report. Extra arguments go to ballast-md (see --help).
# Timeline (opt-in): BALLAST_TRACE_PERFETTO=md.json scripts/demo.sh loads the
# Perfetto writer (BALLAST_TOOLS=perfetto) and ends with a summary of the
# trace (remaps, imbalance over the run); BALLAST_TRACE_OTF2=DIR loads the
# OTF2 writer likewise. Open md.json in https://ui.perfetto.dev.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bash scripts/setup.sh
. scripts/env.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
targets=(ballast-md)
tools=()
if [ -n "${BALLAST_TRACE_PERFETTO:-}" ]; then targets+=(ballast_tool_perfetto); tools+=(perfetto); fi
if [ -n "${BALLAST_TRACE_OTF2:-}" ]; then targets+=(ballast_tool_otf2); tools+=(otf2); fi
cmake --build build -j "$JOBS" --target "${targets[@]}"
if [ ${#tools[@]} -gt 0 ] && [ -z "${BALLAST_TOOLS:-}" ]; then
  export BALLAST_TOOLS=$(IFS=:; echo "${tools[*]}")
fi
# ranks waiting for a neighbour yield the core (2 cores, possibly shared)
export OMPI_MCA_mpi_yield_when_idle=${OMPI_MCA_mpi_yield_when_idle:-1}
export BALLAST_LB=${BALLAST_LB:-auto}
mpiexec -n 2 --oversubscribe build/examples/md/ballast-md --scenario droplet \
  --particles 256000 --blocks 4,4,4 --steps 200 --strategy ballast --pia "$@"
if [ -n "${BALLAST_TRACE_PERFETTO:-}" ] && [ -f "$BALLAST_TRACE_PERFETTO" ]; then
  python3 tools/trace/trace_summary.py "$BALLAST_TRACE_PERFETTO"
fi
