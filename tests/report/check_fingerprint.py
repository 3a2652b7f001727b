#!/usr/bin/env python3
"""ballast-mibfi and its fingerprint pages: two runs of MPI_Allreduce (the
second with Open MPI's Rabenseifner algorithm) on 2 ranks write
fingerprints whose series agree with themselves (the largest time of each
repetition over the ranks, labels of first/warm-up/outlier/good), and
ballast-report draws each and their comparison, which headless Chromium
renders without a console message and not blank; a comparison of
different operations or sizes says so. A profile's repeated
region on the page, two ranks with outliers on different repetitions: each
repetition's largest time carries its own rank's label and names that rank,
the good column holds only good times. Bad input: a profile that is not a
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

# A profile's repeated regions on the page (fingerprint.profile_section): two
# ranks whose outliers fall on different repetitions. Rank 0 keeps
# repetitions 0-39 at 1 ms, outliers at 10 and 20 (12 ms); rank 1 keeps 4-39
# at 1.5 ms, 1.7 ms at 30 (good), outliers at 15, 25 and 35 (15 ms); a third
# rank without a part (ballast-profile-merge's "error") has none. Each
# repetition's largest time must carry the label of the rank that holds it:
# rep 15 is rank 1's 15 ms outlier, not "good" as rank 0 labelled its own
# 1 ms; the good column holds rank 1's 31 good times (1.5 to 1.7 ms), never
# an outlier of another rank.
def rep_rank(rank, first, n, base, special):
    times = [special.get(i, (base, "G"))[0] for i in range(first, n)]
    labels = "".join("F" if i == 0 else "W" if i < 4 else special.get(i, (base, "G"))[1]
                     for i in range(first, n))
    return {"rank": rank, "wall": 1.0, "mpi_time": 0.0,
            "regions": [{"id": 0, "name": "ballast_main", "parent": -1, "count": 1,
                         "wtime": 1.0},
                        {"id": 3, "name": "step", "parent": 0, "count": n, "wtime": sum(times)}],
            "repeated": [{"id": 3, "count": n, "first_kept": first, "warmup_end": 4,
                          "labels": labels, "wtime": times,
                          "good": labels.count("G"),
                          "outliers": labels.count("O")}]}


r0 = rep_rank(0, 0, 40, 1e-3, {10: (12e-3, "O"), 20: (12e-3, "O")})
r1 = rep_rank(1, 4, 40, 1.5e-3, {15: (15e-3, "O"), 25: (15e-3, "O"), 35: (15e-3, "O"),
                                 30: (1.7e-3, "G")})
prof = os.path.join(OUT, "reps_profile.json")
with open(prof, "w") as f:
    json.dump({"ballast_profile": {"version": 1, "command": "reps", "ranks": 3, "wall": 1.0,
                                   "ranks_data": [r0, r1, {"rank": 2, "error": "no part"}]}}, f)
page = os.path.join(OUT, "reps_profile.html")
p = subprocess.run([sys.executable, REPORT, prof, "-o", page], capture_output=True, text=True,
                   timeout=120)
if check(p.returncode == 0, "ballast-report on the repeated regions' profile: %s" % p.stderr):
    text = open(page).read()
    sec = text[text.find('<section id="repeated">'):]
    fig = sec[sec.find("<title>time per repetition, coloured by label"):]
    fig = fig[:fig.find("</figure>")]
    pts = re.findall(r"<title>rep (\d+): ([0-9.]+) us on rank (\d+) \(([a-z-]+)\)</title>", fig)
    check([int(i) for i, _, _, _ in pts] == list(range(4, 40)),
          "one point per repetition both ranks kept: %s" % [i for i, _, _, _ in pts])
    names = {"F": "first", "W": "warm-up", "O": "outlier", "G": "good"}
    by = {0: r0["repeated"][0], 1: r1["repeated"][0]}
    for i, t, q, lab in pts:
        i, q = int(i), int(q)
        own = {k: (r["wtime"][i - r["first_kept"]], r["labels"][i - r["first_kept"]])
               for k, r in by.items()}
        holder = max(own, key=lambda k: own[k][0])
        check(q == holder and t == "%.2f" % (own[q][0] * 1e6) and lab == names[own[q][1]],
              "rep %d: %s us on rank %d (%s); the largest is rank %d's %r" % (
                  i, t, q, lab, holder, own[holder]))
    check(("15", "15000.00", "1", "outlier") in pts, "rep 15 is rank 1's outlier")
    table = sec[sec.find("<table class='fp'>"):]
    rows = dict(re.findall(r"<tr><th>([^<]+)</th>((?:<td>[^<]*</td>)+)</tr>",
                           table[:table.find("</table>")]))
    cells = {k: re.findall(r"<td>([^<]*)</td>", v) for k, v in rows.items()}
    check(cells.get("n") == ["36", "31", "31"], "all / without first and outliers / good "
          "n: %s" % cells.get("n"))
    check(cells.get("max (us)", [""])[-1] == "1700.00" and
          cells.get("min (us)", [""])[-1] == "1500.00",
          "the good column spans rank 1's good times: min %s max %s"
          % (cells.get("min (us)"), cells.get("max (us)")))
    check("<title>rank 0: " in sec and "<title>rank 1: " in sec and "rank 2" not in sec,
          "the box plot's rows are ranks 0 and 1")
    check(re.search(r"<tr><th>1</th><td>40</td><td>%d</td><td>3</td>" %
                    r1["repeated"][0]["good"], sec) is not None,
          "rank 1's own classification in the rank table")

if fails:
    sys.exit("%d check(s) failed" % len(fails))
print("fingerprint: all checks passed")
