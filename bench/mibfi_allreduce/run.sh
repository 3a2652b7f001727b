#!/usr/bin/env bash
# The published Allreduce comparison (runtime-variability, section 4.7) as far
# as this machine allows: 1,000 bytes on 2 ranks, 1,000 and 10,000
# repetitions, Open MPI's recursive doubling (coll_tuned_allreduce_algorithm
# 3) against Rabenseifner's algorithm (6), each run twice. Writes the
# fingerprints, their pages and the comparisons into OUT and prints the
# medians, 95th percentiles and the rank test of each comparison.
# usage: bash bench/mibfi_allreduce/run.sh [BUILD [OUT]]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
out=${2:-$root/build/bench-mibfi}
mkdir -p "$out"
. "$root/scripts/env.sh"
export BALLAST_REPORT=none OMPI_MCA_coll_tuned_use_dynamic_rules=1
for reps in 1000 10000; do
  for alg in 3 6; do
    for run in 1 2; do
      OMPI_MCA_coll_tuned_allreduce_algorithm=$alg mpiexec -n 2 \
        "$build/tools/mibfi/ballast-mibfi" --op allreduce --bytes 1000 --reps $reps \
        --algorithm "alg$alg" -o "$out/r${reps}-a${alg}-${run}.json" >/dev/null
      python3 "$root/tools/ballast-report/ballast-report" "$out/r${reps}-a${alg}-${run}.json" \
        -o "$out/r${reps}-a${alg}-${run}.html"
    done
  done
  for pair in "3-1 3-2" "3-1 6-1" "6-1 6-2"; do
    set -- $pair
    python3 "$root/tools/ballast-report/ballast-report" "$out/r${reps}-a${1%-*}-${1#*-}.json" \
      --compare "$out/r${reps}-a${2%-*}-${2#*-}.json" -o "$out/r${reps}-cmp-$1-vs-$2.html"
  done
done
python3 - "$out" <<'PY'
import json, sys, os, re
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(sys.argv[0])) if False else "", ""))
out = sys.argv[1]
def q(v, p):
    v = sorted(v); i = p * (len(v) - 1); lo = int(i); hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (i - lo)
print("| reps | algorithm | run | median (us) | p95 (us) | good | outliers | warm-up end |")
print("|---|---|---|---|---|---|---|---|")
for reps in (1000, 10000):
    for alg in (3, 6):
        for run in (1, 2):
            c = json.load(open("%s/r%d-a%d-%d.json" % (out, reps, alg, run)))["ballast_fingerprint"]["cases"][0]["max"]
            t = [x for x, l in zip(c["wtime"], c["labels"])]
            g = [x for x, l in zip(c["wtime"], c["labels"]) if l == "G"]
            print("| %d | %d | %d | %.2f | %.2f | %d | %d | %d |" % (reps, alg, run, 1e6 * q(t, .5), 1e6 * q(t, .95),
                  len(g), c["labels"].count("O"), c["warmup_end"]))
for f in sorted(os.listdir(out)):
    if "-cmp-" in f:
        text = open(os.path.join(out, f)).read()
        m = re.search(r"U = (\d+), p = ([0-9.e+-]+)", text)
        rows = re.findall(r"<tr><th>p(50|95)</th><td>[^<]*</td><td>[^<]*</td><td>([^<]*)</td><td>([^<]*)</td><td>([^<]*)</td>", text)
        print(f, "U", m.group(1), "p", m.group(2), "; ".join("p%s B-A %s us [%s] %s" % r for r in rows))
PY
