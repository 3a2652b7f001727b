#!/usr/bin/env python3
"""ballast-mibfi and its fingerprint pages: two runs of MPI_Allreduce (the
second with Open MPI's Rabenseifner algorithm) on 2 ranks write
fingerprints whose series agree with themselves (the largest time of each
repetition over the ranks, labels of first/warm-up/outlier/good), and
ballast-report draws each and their comparison, which headless Chromium
renders without a console message and not blank; a comparison of
different operations or sizes says so. Bad input: a profile that is not a
fingerprint, bad options (reported once, not once per rank).

usage: check_fingerprint.py MPIEXEC MIBFI REPORT OUTDIR
"""
import json
import os
import re
import subprocess
import sys

MPIEXEC, MIBFI, REPORT, OUT = sys.argv[1:5]
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_report as cr  # noqa: E402  (chromium, not_blank, check list)

os.makedirs(OUT, exist_ok=True)
fails = []


def check(cond, what):
    if not cond:
        fails.append(what)
        print("FAIL:", what)
    return cond


def mibfi(out, extra_env, args):
    env = dict(os.environ, BALLAST_REPORT="none", **extra_env)
    p = subprocess.run([MPIEXEC, "-n", "2", "--oversubscribe", MIBFI] + args + ["-o", out],
                       env=env, capture_output=True, text=True, timeout=120)
    check(p.returncode == 0, "ballast-mibfi %s: exit %d %s" % (args, p.returncode, p.stderr[-800:]))
    return p


a, b = os.path.join(OUT, "a.json"), os.path.join(OUT, "b.json")
mibfi(a, {}, ["--reps", "300", "--bytes", "8,1000"])
mibfi(b, {"OMPI_MCA_coll_tuned_use_dynamic_rules": "1",
          "OMPI_MCA_coll_tuned_allreduce_algorithm": "6"},
      ["--reps", "300", "--bytes", "1000", "--algorithm", "rabenseifner"])
fa = json.load(open(a))["ballast_fingerprint"]
s = fa["setting"]
check(s["operation"] == "MPI_Allreduce" and s["ranks"] == 2 and s["reps"] == 300,
      "setting: %s" % s)
check(s["nodes"] == 1 and s["ranks_per_node"] == 2 and len(s["hosts"]) == 2, "nodes and hosts")
check("Open MPI" in s["mpi_library"], "the MPI library's version")
check(s["ballast_settings"].get("BALLAST_REPEAT_KEEP") == "300", "ballast's settings")
check([c["bytes"] for c in fa["cases"]] == [8, 1000], "two cases")
for c in fa["cases"]:
    ranks = c["ranks"]
    check(len(ranks) == 2 and all(len(r["wtime"]) == 300 == len(r["labels"]) for r in ranks),
          "%d bytes: every rank's 300 repetitions" % c["bytes"])
    mx = c["max"]["wtime"]
    check(mx == [max(r["wtime"][i] for r in ranks) for i in range(300)],
          "%d bytes: the largest time of each repetition" % c["bytes"])
    lab = c["max"]["labels"]
    check(len(lab) == 300 and lab[0] == "F" and set(lab) <= set("FWOG"), "labels %s" % lab[:40])
    check(all(r["labels"][0] == "F" for r in ranks), "each rank's first repetition")
fb = json.load(open(b))["ballast_fingerprint"]
check(fb["setting"]["mpi_settings"].get("OMPI_MCA_coll_tuned_allreduce_algorithm") == "6",
      "B's MPI settings name the algorithm")
check(fb["setting"]["algorithm"] == "rabenseifner", "B's --algorithm")

pages = []
for src, args in ((a, []), (b, []), (a, ["--compare", b])):
    page = os.path.join(OUT, os.path.basename(src) + ("-cmp" if args else "") + ".html")
    p = subprocess.run([sys.executable, REPORT, src] + args + ["-o", page],
                       capture_output=True, text=True, timeout=120)
    check(p.returncode == 0, "ballast-report %s %s: %s" % (src, args, p.stderr))
    if args:
        cmp_err = p.stderr
    pages.append(page)
check("sizes in one fingerprint only (not compared): 8" in cmp_err,
      "the comparison warns of the size B lacks: %s" % cmp_err)
text = open(pages[2]).read()
check("Warning:" in text and "sizes in one fingerprint only" in text,
      "the comparison page shows the warning")
check("Mann-Whitney U test" in text and re.search(r"p = [0-9.e+-]+", text),
      "the comparison has the rank test")
check(text.count("95% interval") >= 1, "the comparison has the quantiles' intervals")
for page in pages:
    png = page + ".png"
    exe = cr.chromium()
    p = subprocess.run([exe, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                        "--enable-logging=stderr", "--v=0", "--user-data-dir=" + png + ".profile",
                        "--screenshot=" + png, "--window-size=1400,4000",
                        "file://" + os.path.abspath(page)],
                       capture_output=True, text=True, timeout=120)
    check(p.returncode == 0 and os.path.exists(png), "chromium drew %s" % page)
    console = [l for l in p.stderr.splitlines() if ":CONSOLE" in l]
    check(not console, "no console message: %s" % console[:3])
    q = subprocess.run([exe, "--headless", "--no-sandbox", "--disable-gpu",
                        "--user-data-dir=" + png + ".profile", "--dump-dom",
                        "file://" + os.path.abspath(page)], capture_output=True, text=True,
                       timeout=120)
    check(q.stdout.count("<svg") >= 6, "%s: pictures in the DOM (%d)" % (page, q.stdout.count("<svg")))
    if os.path.exists(png):
        cr.not_blank(png)
fails.extend(cr.FAILS)

# Bad input: not a fingerprint; a bad option.
bad = os.path.join(OUT, "bad.json")
with open(bad, "w") as f:
    json.dump({"ballast_fingerprint": {"version": 1}}, f)
p = subprocess.run([sys.executable, REPORT, bad, "-o", bad + ".html"], capture_output=True,
                   text=True, timeout=60)
check(p.returncode == 2 and "not a ballast-mibfi fingerprint" in p.stderr, "bad fingerprint: %s" % p.stderr)
p = subprocess.run([MPIEXEC, "-n", "2", "--oversubscribe", MIBFI, "--reps", "10", "-o",
                    "/nonexistent-dir/x.json"], capture_output=True, text=True, timeout=120)
check(p.returncode != 0 and "cannot write" in p.stderr, "an unwritable output fails: %d %s"
      % (p.returncode, p.stderr[-300:]))
p = subprocess.run([MIBFI, "--op", "nope"], capture_output=True, text=True, timeout=60)
check(p.returncode == 2 and "unknown --op" in p.stderr, "bad option: %s" % p.stderr)
p = subprocess.run([MPIEXEC, "-n", "2", "--oversubscribe", MIBFI, "--op", "nope"],
                   capture_output=True, text=True, timeout=120)
check(p.returncode != 0 and p.stderr.count("unknown --op") == 1,
      "a bad option is reported once, not once per rank: %s" % p.stderr[-400:])
# Fingerprints of different operations: compared, with a warning.
c = os.path.join(OUT, "c.json")
mibfi(c, {}, ["--op", "bcast", "--reps", "20", "--bytes", "1000"])
p = subprocess.run([sys.executable, REPORT, a, "--compare", c, "-o", c + "-cmp.html"],
                   capture_output=True, text=True, timeout=120)
check(p.returncode == 0 and "different operation: A MPI_Allreduce, B MPI_Bcast" in p.stderr,
      "different operations are warned of: %d %s" % (p.returncode, p.stderr))
if fails:
    sys.exit("%d check(s) failed" % len(fails))
print("fingerprint: all checks passed")
