#!/usr/bin/env bash
# Placement benchmark on an emulated cluster (issue 7 part 3): brings up 2
# emulated nodes (tools/emucluster) with tbf-shaped inter-node links, runs
# bench_emu_placement as 2 nodes x 2 ranks, and removes the cluster on exit.
#
# usage: bench/emu_placement/run.sh [BUILD_DIR [RATE [REPS [HEAVY_BYTES [SEED]]]]]
#   BUILD_DIR   default build; the program is BUILD_DIR/bench/emu_placement/
#   RATE        tbf rate of every node's link, default 100mbit (burst 256kb)
#   REPS        timed exchanges per workload and placement, default 21
#   HEAVY_BYTES heavy message / stencil y-halo bytes, default 524288
# Needs root and ip netns (exits 77 with the reason otherwise).
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
BUILD=${1:-$ROOT/build} RATE=${2:-100mbit} REPS=${3:-21}
HEAVY=${4:-524288} SEED=${5:-12345}
PROG=$BUILD/bench/emu_placement/bench_emu_placement
[[ -x $PROG ]] || { echo "no $PROG: build first" >&2; exit 1; }
EMU=$ROOT/tools/emucluster/emucluster
. "$ROOT/tests/emu/emu_lib.sh"
. "$ROOT/scripts/env.sh"
emu_require
P=$(emu_prefix)
emu_cleanup_on_exit "$P"
E() { EMUCLUSTER_QUIET=1 "$EMU" --prefix "$P" "$@"; }
E up 2 --rate "$RATE" --burst 256kb || emu_fail "emucluster up"
echo "cluster $P: 2 nodes, inter-node links tbf rate $RATE burst 256kb; $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
# 4 ranks share the machine's cores, which Open MPI cannot see (2 slots a
# node): mpi_yield_when_idle keeps waiting ranks from starving the others.
# shellcheck disable=SC2046 # mpirun-args is a list of words
mpirun $(E mpirun-args) --mca mpi_yield_when_idle 1 \
  --host "$P-node0:2,$P-node1:2" -np 4 "$PROG" "$REPS" "$HEAVY" "$SEED"
