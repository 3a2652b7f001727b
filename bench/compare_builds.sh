#!/usr/bin/env bash
# Before/after comparison of two builds on the benchmarks a change is most
# likely to move: runs each benchmark from BASE_BUILD and from NEW_BUILD
# alternately (base, new, base, new, ...: both see the same drift of a shared
# machine), then prints per figure the median of each build and new/base.
#
# usage: bench/compare_builds.sh BASE_BUILD NEW_BUILD [what...]
#   what: md_fig6 lb_remap rta_map pia_region mon_overhead (default: all)
#   COMPARE_REPS=N  runs per build and benchmark (default 7); the sizes are
#                   small: one run of all five on each build takes about
#                   30 s on a 2-core machine, 7 runs about 4 minutes.
#   COMPARE_KEEP=DIR  keep every run's output under DIR (default: removed).
#
# Each figure is a cut-down run of the benchmark of the same name in
# bench/README.md (smaller sizes, fewer repetitions inside a run); compare
# the ratio, not the absolute figures, with the README's tables:
#   md_fig6       ms per step, droplet scenario, ballast strategy, 100 steps
#                 (time_per_step of ballast-md's md_summary)
#   lb_remap      migrate seconds, 32 tasks x 1 MiB per rank, zero-copy,
#                 15 timed remaps after 3 warm-up (bench_lb_remap case 6)
#   rta_map       mapping seconds, two-phase, 27-point 64^3 onto
#                 32 x 2 x 8 cores (ballast-map's "seconds", section 1)
#   pia_region    ns per find + read at 20,000 regions, 51 batches; ns
#                 per region begin + end pair (when the binary prints it)
#   mon_overhead  ns added per wrapped call (paired MPI_X - PMPI_X), per
#                 test (pingpong: per round trip, 2 wrapped calls), 501
#                 batches
# Lower is better for every figure: a ratio above 1 means the new build is
# slower.
set -euo pipefail

usage() { sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
[ $# -ge 2 ] || usage
BASE=$1 NEW=$2
shift 2
ALL="md_fig6 lb_remap rta_map pia_region mon_overhead"
WHAT=${*:-$ALL}
REPS=${COMPARE_REPS:-7}
for w in $WHAT; do
  case " $ALL " in *" $w "*) ;; *) echo "unknown benchmark: $w" >&2; usage ;; esac
done
case $REPS in '' | *[!0-9]* | 0) echo "COMPARE_REPS must be a positive integer" >&2; exit 2 ;; esac

ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=SCRIPTDIR/../scripts/env.sh
. "$ROOT/scripts/env.sh"
export BALLAST_REPORT=none OMPI_MCA_mpi_yield_when_idle=1
MPIEXEC=${MPIEXEC:-mpiexec}

OUT=${COMPARE_KEEP:-$(mktemp -d)}
mkdir -p "$OUT"
[ -n "${COMPARE_KEEP:-}" ] || trap 'rm -rf "$OUT"' EXIT

# The binary of benchmark $1 in build $2.
binary() {
  case $1 in
    md_fig6) echo "$2/examples/md/ballast-md" ;;
    lb_remap) echo "$2/bench/lb_remap/bench_lb_remap" ;;
    rta_map) echo "$2/tools/ballast-map/ballast-map" ;;
    pia_region) echo "$2/bench/pia_region/bench_pia_region" ;;
    mon_overhead) echo "$2/bench/mon_overhead/mon_overhead_wrapped" ;;
  esac
}

# Runs benchmark $1 with binary $2 once; prints "figure value" lines.
run_once() {
  local bin=$2
  case $1 in
    md_fig6)
      "$MPIEXEC" -n 2 --oversubscribe "$bin" --json-only --scenario droplet \
        --strategy ballast --blocks 4,4,4 --steps 100 --seed 1 --window 20 \
        --particles 256000 |
        sed -n 's/.*"time_per_step": *\([0-9.e+-]*\).*/ms_per_step \1/p' |
        awk '{ printf "%s %.6g\n", $1, $2 * 1e3 }' ;;
    lb_remap)
      "$MPIEXEC" -n 2 --oversubscribe "$bin" 15 zero 6 3 |
        awk '!/^#/ && NF >= 10 { print "migrate_s", $5 }' ;;
    rta_map)
      "$bin" --stencil 27:64 --nodes 32 --node-topo "pack:2 core:8" \
        --internode-cost 16 --level-costs 6,1 --strategies twophase --json |
        sed -n 's/.*"seconds": *\([0-9.e+-]*\).*/map_s \1/p' | head -n 1 ;;
    pia_region)
      "$MPIEXEC" -n 1 "$bin" 20000 51 |
        awk '!/^#/ && $1 == 20000 { print "find_read_ns_20k", $2 }
             $1 == "pair" { print "region_pair_ns", $2 }' ;;
    mon_overhead)
      "$MPIEXEC" -n 2 --oversubscribe "$bin" wrapped 501 |
        awk '$1 == "wrapped" { print $2 "_added_ns", $8 }' ;;
  esac
}

median() { sort -g | awk '{ v[NR] = $1 } END {
  if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2];
  else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

printf '# compare_builds: base %s, new %s, %s runs each, alternated\n' "$BASE" "$NEW" "$REPS"
printf '# load average at start: %s\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-14s %-20s %12s %12s %9s\n' benchmark figure base new new/base
for w in $WHAT; do
  for b in "$BASE" "$NEW"; do
    [ -x "$(binary "$w" "$b")" ] || { echo "missing: $(binary "$w" "$b")" >&2; exit 1; }
  done
  : >"$OUT/$w.base" && : >"$OUT/$w.new"
  for ((r = 1; r <= REPS; r++)); do
    for side in base new; do
      if [ $side = base ]; then b=$BASE; else b=$NEW; fi
      log="$OUT/$w.$side.$r.log"
      if ! run_once "$w" "$(binary "$w" "$b")" >"$log" 2>"$log.err"; then
        echo "$w failed with the $side build (run $r):" >&2
        cat "$log" "$log.err" >&2
        exit 1
      fi
      [ -s "$log" ] || { echo "$w: no figure in the $side build's output (run $r)" >&2; exit 1; }
      cat "$log" >>"$OUT/$w.$side"
    done
  done
  while read -r fig; do
    mb=$(awk -v f="$fig" '$1 == f { print $2 }' "$OUT/$w.base" | median)
    mn=$(awk -v f="$fig" '$1 == f { print $2 }' "$OUT/$w.new" | median)
    awk -v w="$w" -v f="$fig" -v b="$mb" -v n="$mn" 'BEGIN {
      printf "%-14s %-20s %12.6g %12.6g %9s\n", w, f, b, n,
        (b > 0 ? sprintf("%.3f", n / b) : "-") }'
  done < <(awk '{ print $1 }' "$OUT/$w.base" | sort -u)
done
printf '# load average at end: %s\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
