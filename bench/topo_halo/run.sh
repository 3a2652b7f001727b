#!/usr/bin/env bash
# Topology reordering on an emulated cluster (issue 15): brings up NODES
# emulated nodes (tools/emucluster) with tbf-shaped inter-node links, launches
# bench_topo_halo (a 3D periodic halo exchange linked to MPI only) as NODES x
# PER ranks placed round-robin over the nodes (--map-by node: rank r on node
# r mod NODES, a common default that scatters neighbours), and times, in
# alternating rounds:
#   plain      Open MPI, MPI_Cart_create(reorder = 1)
#   ballast    the same binary under LD_PRELOAD=libballast.so
#   tm-dist    Open MPI with its treematch topology component on the same
#              torus declared by MPI_Dist_graph_create_adjacent(reorder = 1)
#   ballast-dist  that program under ballast
# Prints each run's line and, per mode, the median over rounds of the
# per-run median step time, and ballast / plain as a ratio from one run of
# this script. Removes the cluster on exit.
#
# usage: bench/topo_halo/run.sh [BUILD_DIR [NODES [PER [FACE [REPS [ROUNDS [RATE]]]]]]]
#   defaults: build 3 4 262144 9 3 100mbit
# Needs root and ip netns (exits 77 with the reason otherwise).
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
BUILD=${1:-$ROOT/build} NODES=${2:-3} PER=${3:-4} FACE=${4:-262144}
REPS=${5:-9} ROUNDS=${6:-3} RATE=${7:-100mbit}
PROG=$BUILD/bench/topo_halo/bench_topo_halo
LIB=$BUILD/libballast.so
[[ -x $PROG && -f $LIB ]] || { echo "no $PROG or $LIB: build first" >&2; exit 1; }
EMU=$ROOT/tools/emucluster/emucluster
. "$ROOT/tests/emu/emu_lib.sh"
. "$ROOT/scripts/env.sh"
emu_require
P=$(emu_prefix)
emu_cleanup_on_exit "$P"
E() { EMUCLUSTER_QUIET=1 "$EMU" --prefix "$P" "$@"; }
E up "$NODES" --rate "$RATE" --burst 256kb || emu_fail "emucluster up"
hosts=""
for ((i = 0; i < NODES; i++)); do hosts+="${hosts:+,}$P-node$i:$PER"; done
NP=$((NODES * PER))
echo "cluster $P: $NODES nodes x $PER ranks (round-robin), links tbf $RATE; $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
run() { # mode, extra mpirun args..., then -- program args
  local mode=$1; shift
  local args=() ; while [[ $1 != -- ]]; do args+=("$1"); shift; done; shift
  # shellcheck disable=SC2046 # mpirun-args is a list of words
  local out; out=$(mpirun $(E mpirun-args) --mca mpi_yield_when_idle 1 \
    --host "$hosts" --map-by node -np "$NP" "${args[@]}" "$PROG" "$@" 2>&1 | grep '^halo ')
  echo "$mode: $out"
  echo "$mode $(sed -n 's/.*median_s \([0-9.]*\).*/\1/p' <<<"$out")" >> "$TMP"
}
TMP=$(mktemp)
trap 'rm -f "$TMP"; EMUCLUSTER_QUIET=1 "$EMU" --prefix "$P" down || true' EXIT
for ((r = 0; r < ROUNDS; r++)); do
  run plain -- cart "$FACE" "$REPS"
  run ballast -x LD_PRELOAD="$LIB" -x BALLAST_REPORT=none -- cart "$FACE" "$REPS"
  run tm-dist --mca topo treematch -- dist "$FACE" "$REPS"
  run ballast-dist -x LD_PRELOAD="$LIB" -x BALLAST_REPORT=none -- dist "$FACE" "$REPS"
done
python3 - "$TMP" <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    mode, _, t = line.partition(" ")
    if t.strip():
        runs.setdefault(mode, []).append(float(t))
med = {m: statistics.median(v) for m, v in runs.items()}
for m, v in med.items():
    print("median %-13s %.4f s per exchange (%d runs)" % (m, v, len(runs[m])))
if "plain" in med and "ballast" in med:
    print("ratio ballast/plain %.3f" % (med["ballast"] / med["plain"]))
if "tm-dist" in med and "ballast-dist" in med:
    print("ratio ballast-dist/tm-dist %.3f" % (med["ballast-dist"] / med["tm-dist"]))
PY
