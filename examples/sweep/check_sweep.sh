#!/bin/sh
# Runs ballast-sweep (with --pia) and ballast-sweep-plain on 4 ranks (2x2) and
# checks: identical physics (flux sums equal), and PIA's counts on rank 0 equal
# the counts the decomposition implies. Rank 0 is the (0,0) corner: in each
# octant it sends downstream along x in the 4 octants that sweep +x, and along
# y in the 4 that sweep +y, one message per z block: 8 * blocks sends per
# iteration, and as many receives (from the other 4 + 4 octants).
set -e
MPIEXEC=$1 SWEEP=$2 PLAIN=$3
ARGS="--grid 6x5x40 --blocks 8 --angles 3 --iters 5 --px 2"
out=$($MPIEXEC -n 4 --oversubscribe "$SWEEP" $ARGS --pia)
plain=$($MPIEXEC -n 4 --oversubscribe "$PLAIN" $ARGS)
echo "$out"
echo "$plain"
f1=$(echo "$out" | sed -n 's/^sweep: flux sum \([^,]*\),.*/\1/p')
f2=$(echo "$plain" | sed -n 's/^sweep: flux sum \([^,]*\),.*/\1/p')
[ -n "$f1" ] && [ "$f1" = "$f2" ] || { echo "FAIL: flux sums differ: '$f1' vs '$f2'"; exit 1; }
want=$((8 * 8 * 5))
sends=$(echo "$out" | sed -n 's/^pia: MPI_Send calls=\([0-9]*\) .*/\1/p')
recvs=$(echo "$out" | sed -n 's/^pia: MPI_Recv calls=\([0-9]*\) .*/\1/p')
count=$(echo "$out" | sed -n 's/^pia: region sweep count=\([0-9]*\) .*/\1/p')
[ "$sends" = "$want" ] || { echo "FAIL: MPI_Send calls '$sends', want $want"; exit 1; }
[ "$recvs" = "$want" ] || { echo "FAIL: MPI_Recv calls '$recvs', want $want"; exit 1; }
[ "$count" = "5" ] || { echo "FAIL: region sweep count '$count', want 5"; exit 1; }
wall=$(echo "$out" | sed -n 's/^pia: region sweep count=[0-9]* wall=\([0-9.]*\) s mpi=\([0-9.]*\) s.*/\1 \2/p')
time=$(echo "$out" | sed -n 's/^time: //p')
# 0 < mpi <= wall <= the loop's time (max over ranks)
echo "$wall $time" | awk '{ if (!($2 > 0 && $2 <= $1 && $1 > 0 && $1 <= $3)) { print "FAIL: times " $0; exit 1 } }'
echo "OK: sends=$sends recvs=$recvs count=$count wall/mpi/time=$wall $time"
