#!/usr/bin/env bash
# Runs one emumap test program (tests/emu/emumap_*.c) as 4 ranks on an emulated
# cluster of 2 nodes x 2 ranks (tools/emucluster), created for this run under
# a unique prefix and removed on any exit. The inter-node links are shaped
# with tbf (default 100mbit, burst 256kb) so that they are far slower than
# shared memory whatever the machine's load.
#
# usage: emumap.sh EMUCLUSTER MPIEXEC PROGRAM [RATE]
# The program gets the two node names as arguments (ranks 0,1 on the first)
# and prints "PASS ..." when its checks hold; this script requires that line.
# Exit 77 (skipped) where the machine cannot host a cluster (no root, no ip
# netns, nsenter or unshare), with a message saying why.
set -uo pipefail
EMU=$1 MPIEXEC=$2 PROG=$3 RATE=${4:-100mbit}
# shellcheck source=SCRIPTDIR/emu_lib.sh
. "$(dirname "$0")/emu_lib.sh"
emu_require
P=$(emu_prefix)
emu_cleanup_on_exit "$P"
E() { EMUCLUSTER_QUIET=1 "$EMU" --prefix "$P" "$@"; }
A=$P-node0 B=$P-node1

E up 2 --rate "$RATE" --burst 256kb || emu_fail "emucluster up"
echo "cluster $P: 2 nodes, inter-node links tbf rate $RATE burst 256kb"
# The 4 ranks share 2 cores and Open MPI cannot know it (2 slots a node):
# mpi_yield_when_idle keeps waiting ranks from starving the working ones.
# shellcheck disable=SC2046 # mpirun-args is a list of words
out=$(timeout 150 "$MPIEXEC" $(E mpirun-args) --mca mpi_yield_when_idle 1 --host "$A:2,$B:2" -np 4 \
      "$PROG" "$A" "$B" 2>&1)
rc=$?
echo "$out"
[[ $rc -eq 0 ]] || emu_fail "$(basename "$PROG") exited with $rc"
echo "$out" | grep -q '^PASS' || emu_fail "$(basename "$PROG") printed no PASS"
