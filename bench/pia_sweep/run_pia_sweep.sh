#!/bin/sh
# Benchmark 3 of seed section 4.2.4: the overhead of monitoring + PIA queries
# on a real code, the KBA wavefront sweep of examples/sweep.
#
# Method: the same source built twice: ballast-sweep-plain (not linked to
# ballast at all: the baseline) and ballast-sweep (linked: every MPI call goes
# through the PMPI wrappers, region "sweep" is marked every iteration). Three
# variants run interleaved, REPS rounds of (plain, linked, linked --pia), so
# slow drifts of the machine hit all three alike:
#   plain    : ballast-sweep-plain
#   mon      : ballast-sweep (monitoring only)
#   mon+pia  : ballast-sweep --pia (monitoring + the seed's queries every
#              iteration: total/average time and calls of MPI_Send and
#              MPI_Recv, wall time, MPI time and count of region "sweep")
# The figure is the program's own "time:" line: the iteration loop's wall
# time, max over ranks (MPI_Init/Finalize and the end-of-run report are
# outside it). Printed: the median per variant and the ratio of medians.
#
# A fourth run per round, `ballast-sweep --ab`, alternates iterations inside
# one process (ABBA): A = MPI_* calls + region + PIA queries, B = the same
# sweep calling PMPI_* directly (no monitoring, no region, no query). It
# prints the ratio of the median A and B iteration times; the column "A/B"
# is the median of those ratios over the rounds. Being paired at the scale
# of one iteration, it resists slow drifts of a shared machine better than
# whole-run medians do; it does not include what linking alone costs.
#
# usage: run_pia_sweep.sh EXAMPLES_SWEEP_DIR [REPS (default 7)]
set -e
DIR=${1:?usage: $0 build/examples/sweep [reps]}
REPS=${2:-7}
MPIEXEC=${MPIEXEC:-mpiexec}
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../../scripts/env.sh"

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

run() { # np args... -> prints the loop time
  np=$1
  shift
  $MPIEXEC -n "$np" --oversubscribe "$@" | sed -n 's/^time: //p'
}

run_ab() { # np args... -> prints the A/B overhead in percent
  np=$1
  shift
  $MPIEXEC -n "$np" --oversubscribe "$@" --ab |
    sed -n 's/^ab: .*overhead \([-+0-9.]*\)%.*/\1/p'
}

bench() { # np label args
  np=$1 label=$2
  shift 2
  tmp=$(mktemp -d)
  r=0
  while [ $r -lt "$REPS" ]; do
    run "$np" "$DIR/ballast-sweep-plain" "$@" >> "$tmp/plain"
    run "$np" "$DIR/ballast-sweep" "$@" >> "$tmp/mon"
    run "$np" "$DIR/ballast-sweep" "$@" --pia >> "$tmp/pia"
    run_ab "$np" "$DIR/ballast-sweep" "$@" >> "$tmp/ab"
    r=$((r + 1))
  done
  p=$(median < "$tmp/plain") m=$(median < "$tmp/mon") q=$(median < "$tmp/pia")
  ab=$(median < "$tmp/ab")
  printf "%-3s %-34s %10.4f %10.4f %10.4f %+9.2f%% %+9.2f%% %+9.2f%%\n" "$np" \
    "$label" "$p" "$m" "$q" "$(echo "$m $p" | awk '{ print ($1 / $2 - 1) * 100 }')" \
    "$(echo "$q $p" | awk '{ print ($1 / $2 - 1) * 100 }')" "$ab"
  rm -rf "$tmp"
}

echo "# pia_sweep: loop time in s, median of $REPS interleaved runs; overhead = median / median(plain) - 1"
printf "%-3s %-34s %10s %10s %10s %10s %10s %10s\n" np "grid per rank, blocks, angles, iters" \
  plain mon mon+pia "mon" "mon+pia" "A/B"
bench 2 "10x10x400 b40 a6 i30" --grid 10x10x400 --blocks 40 --angles 6 --iters 30
bench 2 "20x20x200 b20 a6 i12" --grid 20x20x200 --blocks 20 --angles 6 --iters 12
bench 2 "5x5x400 b80 a3 i60" --grid 5x5x400 --blocks 80 --angles 3 --iters 60
bench 4 "10x10x400 b40 a6 i12 (oversub.)" --grid 10x10x400 --blocks 40 --angles 6 --iters 12
