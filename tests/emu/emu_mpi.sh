#!/usr/bin/env bash
# Runs an MPI test program across an emulated cluster (tools/emucluster) of
# 2 nodes, created for this run under a unique prefix and removed on exit.
#
# usage: emu_mpi.sh EMUCLUSTER MPIEXEC MODE PROGRAM
#   nodes      PROGRAM=emu_nodes, 2 nodes x 2 ranks; also checks, from Open
#              MPI's BTL selection log, that ranks on one node use shared
#              memory (vader) and ranks on different nodes TCP.
#   bandwidth  PROGRAM=emu_pingpong, ranks 0,1 on node 0 and rank 2 on node
#              1: reports the unshaped figures, then shapes the inter-node
#              links with tbf (100mbit) and checks that 4 MiB ping-pongs
#              between nodes are at least 3 times slower than within one
#              and that the traffic went through the shaped link.
set -uo pipefail
EMU=$1 MPIEXEC=$2 MODE=$3 PROG=$4
. "$(dirname "$0")/emu_lib.sh"
emu_require
P=$(emu_prefix)
emu_cleanup_on_exit "$P"
E() { EMUCLUSTER_QUIET=1 "$EMU" --prefix "$P" "$@"; }
A=$P-node0 B=$P-node1

run() { # hostlist np program-args... ; $MPI_OPTS: extra mpirun options
  local hosts=$1 np=$2
  shift 2
  # shellcheck disable=SC2046,SC2086 # option lists are lists of words
  timeout 90 "$MPIEXEC" $(E mpirun-args) ${MPI_OPTS:-} --host "$hosts" \
    -np "$np" "$PROG" "$@"
}

case $MODE in
  nodes)
    E up 2 || emu_fail "emucluster up"
    out=$(MPI_OPTS="--mca btl_base_verbose 100" run "$A:2,$B:2" 4 "$A" "$B" 2>&1 ||
          true)
    ;;
  bandwidth)
    E up 2 || emu_fail "emucluster up"
    echo "== unshaped links"
    run "$A:2,$B:1" 3 4194304 21 0 || emu_fail "unshaped ping-pong"
    E shape --rate 100mbit --burst 256kb --latency 100ms || emu_fail "shape"
    echo "== inter-node links shaped: tbf rate 100mbit burst 256kb latency 100ms"
    before=$(ip netns exec "$A" tc -s qdisc show dev eth0 | awk '/Sent/ {print $2; exit}')
    run "$A:2,$B:1" 3 4194304 5 3 || emu_fail "shaped ping-pong"
    after=$(ip netns exec "$A" tc -s qdisc show dev eth0 | awk '/Sent/ {print $2; exit}')
    sent=$((after - before))
    echo "bytes through node 0's tbf during the shaped run: $sent"
    # 6 round trips of 4 MiB leave node 0 for node 1 at least.
    [[ $sent -ge $((6 * 4194304)) ]] || emu_fail "traffic bypassed the shaped link"
    echo "PASS"
    exit 0
    ;;
  *) emu_fail "unknown mode $MODE" ;;
esac

# nodes: the program's own checks, then the BTL chosen for every pair. Open
# MPI logs "[HOST:PID] mca: bml: Using BTL btl for send to [[J,1],R] on node
# PEERHOST" once per (process, peer).
echo "$out" | grep -vE '^\[[^]]*\] (mca|select|btl)' 
echo "$out" | grep -q '^PASS' || emu_fail "emu_nodes failed"
echo "$out" | awk -v a="$A" -v b="$B" '
  /mca: bml: Using .* btl for send to/ {
    src = $1; sub(/^\[/, "", src); sub(/:.*/, "", src)
    btl = $5; peer = $NF
    if (src != a && src != b) { print "unexpected host " src; bad++ }
    same = src == peer
    if (same && btl != "vader" && btl != "self") { print "intra-node via " btl ": " $0; bad++ }
    if (!same && btl != "tcp") { print "inter-node via " btl ": " $0; bad++ }
    if (same) intra++; else inter++
  }
  END {
    printf "BTL selection: %d intra-node entries (self/vader), %d inter-node (tcp)\n", intra, inter
    # 4 processes: each has self, 1 vader peer and 2 tcp peers.
    exit !(bad == 0 && intra == 8 && inter == 8)
  }' || emu_fail "wrong BTL selection"
echo "PASS"
