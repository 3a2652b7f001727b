#!/bin/sh
# The cost of performance assertions (bench/README.md, "assert_eval").
#
# 1. bench_assert_eval: one evaluation of a compiled assertion, and one
#    in-code scope (begin + end with the metric reads and the check).
# 2. Overhead on real codes, as ratios of medians within one run: the same
#    binary with and without BALLAST_ASSERT_FILE, REPS interleaved rounds
#    (without, with), so slow drifts of the machine hit both alike:
#      sweep: ballast-sweep, examples/sweep/sweep.assert (three assertions on
#             region "sweep", checked at each of its exits); figure: the
#             program's "time:" line (loop wall time, max over ranks);
#      md   : ballast-md, examples/md/balance.assert (a cross-rank balance
#             assertion on every step: one MPI_Allreduce per step, one on
#             "step/forces", one on the whole run); figure: its "loop X s".
#
# usage: run_assert.sh BENCH_ASSERT_EVAL BALLAST_SWEEP BALLAST_MD EXAMPLES_DIR [REPS (7)] [NP (2)]
set -e
EVAL=${1:?usage: $0 bench_assert_eval ballast-sweep ballast-md examples_dir [reps] [np]}
SWEEP=${2:?} MD=${3:?} EX=${4:?}
REPS=${5:-7}
NP=${6:-2}
MPIEXEC=${MPIEXEC:-mpiexec}
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../../scripts/env.sh"
export BALLAST_REPORT=none

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "# assert_eval: cost of one evaluation and of one in-code scope (median of 7)"
"$EVAL" 7

sweep() { # [file]
  $MPIEXEC -n "$NP" --oversubscribe ${1:+-x BALLAST_ASSERT_FILE=$1} "$SWEEP" --iters 100 |
    sed -n 's/^time: //p'
}
md() { # [file]
  $MPIEXEC -n "$NP" --oversubscribe ${1:+-x BALLAST_ASSERT_FILE=$1} "$MD" --steps 100 \
    --particles 4000 --progress 0 | sed -n 's/.*; loop \([0-9.]*\) s.*/\1/p'
}

tmp=$(mktemp -d)
r=0
while [ "$r" -lt "$REPS" ]; do
  sweep >> "$tmp/sweep0"
  sweep "$EX/sweep/sweep.assert" >> "$tmp/sweep1"
  md >> "$tmp/md0"
  md "$EX/md/balance.assert" >> "$tmp/md1"
  r=$((r + 1))
done
echo "# overhead of assertion files: loop time in s, median of $REPS interleaved runs, $NP ranks"
printf "%-6s %10s %10s %9s\n" code without with ratio
for c in sweep md; do
  a=$(median < "$tmp/${c}0") b=$(median < "$tmp/${c}1")
  printf "%-6s %10.4f %10.4f %9.4f\n" "$c" "$a" "$b" "$(echo "$b $a" | awk '{ print $1 / $2 }')"
done
rm -rf "$tmp"
