#!/usr/bin/env python3
"""Runs the mon_reps test program with BALLAST_REPORT=full and BALLAST_PROFILE
and checks what the report and the profile say of its repeated regions
against what the program did (see test_mon_reps.c).

usage: check_reps_output.py MPIEXEC MON_REPS_EXE REPORT
"""
import json
import os
import subprocess
import sys
import tempfile

MPIEXEC, EXE, REPORT = sys.argv[1], sys.argv[2], sys.argv[3]
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


with tempfile.TemporaryDirectory() as tmp:
    prof = os.path.join(tmp, "p.json")
    env = dict(os.environ, BALLAST_REPORT="full", BALLAST_PROFILE=prof,
               BALLAST_REPEAT="envrep", BALLAST_REPEAT_KEEP="128", BALLAST_REPEAT_REDUCE="16")
    p = subprocess.run([MPIEXEC, "-n", "2", "--oversubscribe", EXE], env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, timeout=120)
    if p.returncode != 0:
        print(p.stdout, p.stderr)
    check(p.returncode == 0, "exit code %d" % p.returncode)
    out = p.stdout
    check("# repeated regions (rank 0" in out, "the full report has the repeated regions")
    rows = {l.split()[1]: l.split() for l in out.splitlines()
            if l.startswith("# ") and len(l.split()) == 10 and l.split()[1] in
            ("iter", "comm", "envrep", "only0", "only1")}
    check("iter" in rows and rows["iter"][2] == "120", "report: iter 120 repetitions: %s"
          % rows.get("iter"))
    check("envrep" in rows, "report lists envrep")
    check("across ranks" in out, "report: the cross-rank line")
    check("voluntary context switches" in out, "report: the outliers' causes")
    if not os.path.exists(prof):
        print("FAIL: no profile written")
        sys.exit(1)
    with open(prof) as f:
        doc = json.load(f)["ballast_profile"]
    for rank, rd in enumerate(doc["ranks_data"]):
        reps = rd.get("repeated")
        check(isinstance(reps, list) and len(reps) >= 4, "rank %d: repeated regions" % rank)
        if not isinstance(reps, list):
            continue
        names = {r["id"]: r["name"] for r in rd["regions"]}
        by = {names[r["id"]]: r for r in reps}
        it = by.get("iter")
        check(it is not None, "rank %d: iter in the profile" % rank)
        if it:
            n, first = it["count"], it["first_kept"]
            check((n, first) == (120, 0), "rank %d: iter count/first_kept %s" % (rank, (n, first)))
            kept = n - first
            for key in ("wtime", "mtime", "cputime", "bytes", "calls"):
                check(len(it[key]) == kept, "rank %d: iter %s has %d values" % (rank, key, len(it[key])))
            labels = it["labels"]
            check(len(labels) == kept and labels[0] == "F" and set(labels) <= set("FWGO"),
                  "rank %d: iter labels %s" % (rank, labels))
            w = it["warmup_end"]
            check(set(labels[w:]) <= set("GO"), "rank %d: after the warm-up G or O" % rank)
            check(labels[max(w, 1):].count("G") == it["good"]
                  and labels[max(w, 1):].count("O") == it["outliers"],
                  "rank %d: label counts %s" % (rank, labels))
            check(it["good"] + it["outliers"] == n - it["warmup_end"], "rank %d: good+outliers" % rank)
            good = [w for w, l in zip(it["wtime"], it["labels"]) if l == "G"]
            check(good and min(good) >= it["good_min"] - 1e-12, "rank %d: good_min" % rank)
        cm = by.get("comm")
        if cm:
            check(cm["labels"][0] == "F", "rank %d: comm's first repetition is F" % rank)
            check(all(c == 1 for c in cm["calls"][1:]), "rank %d: comm one call per rep" % rank)
            check(set(cm.get("user", {})) == {"cells", "solve"}, "rank %d: user counters" % rank)
            cells = cm["user"]["cells"]
            check(all(abs(cells[i] - (10 * i + rank + 1)) < 1e-9 for i in range(1, 20)),
                  "rank %d: cells per repetition" % rank)
        ev = by.get("envrep")
        if ev:
            slow = [s for s in ev["across"]["slowest"] if s is not None]
            check(len(slow) >= 48, "rank %d: envrep reduced repetitions %d" % (rank, len(slow)))
            check(slow.count(1) >= len(slow) * 3 // 4, "rank %d: envrep slowest mostly rank 1" % rank)
            mx, mn = ev["across"]["max"], ev["across"]["min"]
            check(all(a is None or a >= b for a, b in zip(mx, mn)), "rank %d: max >= min" % rank)
        io = by.get("io")
        check(io is not None, "rank %d: io in the profile" % rank)
        if io:
            ms = {m["name"]: m for m in io["causes"]["measures"]}
            check(io["causes"]["outliers"] >= 2, "rank %d: io's outliers" % rank)
            v = ms.get("voluntary context switches", {})
            check(v.get("differs") and v["outliers"] > v["good"],
                  "rank %d: io's outliers differ in voluntary context switches: %s" % (rank, v))
            t = ms.get("time not running (s)", {})
            check(t.get("differs") and t["outliers"] > t["good"],
                  "rank %d: io's outliers did not run: %s" % (rank, t))
        for nm in ("only0", "only1"):
            r = by.get(nm)
            if r:
                check(all(s is None for s in r["across"]["slowest"]),
                      "rank %d: %s mixed batches never reported" % (rank, nm))

    # The HTML page draws each repeated region's fingerprint.
    page = os.path.join(tmp, "p.html")
    q = subprocess.run([sys.executable, REPORT, prof, "-o", page], capture_output=True,
                       text=True, timeout=120)
    check(q.returncode == 0, "ballast-report: %s" % q.stderr)
    if q.returncode == 0:
        text = open(page).read()
        sec = text[text.find('<section id="repeated">'):]
        check("Repeated regions: fingerprints" in sec and sec.count("<h3>") >= 4,
              "the page's fingerprints of the repeated regions")
        check(sec.count("<svg") >= 24, "the fingerprints' pictures (%d)" % sec.count("<svg"))

if failures:
    print("%d failure(s)" % len(failures))
    sys.exit(1)
print("PASS mon_reps_output")
