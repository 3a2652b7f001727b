#!/usr/bin/env python3
"""Runs mon_mpit twice: with BALLAST_MPIT selecting the two ob1 queue
lengths (plus a pattern that matches nothing), and with a pattern that
matches nothing valid: the second must warn once, on one line listing the
valid variables, and otherwise run as usual.

usage: check_mpit.py MPIEXEC MON_MPIT_EXE REPORT
"""
import json
import os
import subprocess
import sys
import tempfile

MPIEXEC, EXE, REPORT = sys.argv[1], sys.argv[2], sys.argv[3]
fails = []


def run(mpit, arg=None, profile=None):
    env = dict(os.environ, BALLAST_MPIT=mpit, BALLAST_REPORT="full")
    if profile:
        env["BALLAST_PROFILE"] = profile
    cmd = [MPIEXEC, "-n", "2", "--oversubscribe", EXE] + ([arg] if arg else [])
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, timeout=60)
    if p.returncode != 0:
        print(p.stdout, p.stderr)
        fails.append("exit %d with BALLAST_MPIT=%s" % (p.returncode, mpit))
    return p


tmp = tempfile.mkdtemp()
prof = os.path.join(tmp, "p.json")
p = run("pml_ob1_unexpected_msgq_length,pml_ob1_posted_recv*,nothing_like_this", None, prof)
bad = [l for l in p.stderr.splitlines() if "mon: BALLAST_MPIT" in l]
if bad:
    fails.append("a valid selection warned: %s" % bad)
try:
    doc = json.load(open(prof))["ballast_profile"]
    names = [v["name"] for v in doc["mpit"]]
    r1 = doc["ranks_data"][1]
    ids = {r["name"]: str(r["id"]) for r in r1["regions"]}
    u = names.index("pml_ob1_unexpected_msgq_length")
    q = names.index("pml_ob1_posted_recvq_length")
    if r1["mpit"][ids["drain"]][u] != [-11, 11]:
        fails.append("profile: drain's unexpected queue %s" % r1["mpit"][ids["drain"]])
    if r1["mpit"][ids["post"]][q] != [3, 3]:
        fails.append("profile: post's posted queue %s" % r1["mpit"][ids["post"]])
    rep = [x for x in r1["repeated"] if str(x["id"]) == ids["post"]][0]
    if rep["mpit"]["pml_ob1_posted_recvq_length"] != [3]:
        fails.append("profile: post's repetition %s" % rep["mpit"])
    if "# MPI_T variables per region" not in p.stdout:
        fails.append("the full report has no MPI_T section")
    page = prof + ".html"
    q = subprocess.run([sys.executable, REPORT, prof, "-o", page], capture_output=True,
                       text=True, timeout=120)
    text = open(page).read() if q.returncode == 0 else ""
    if "MPI_T variables per region" not in text or "-11 / 11" not in text:
        fails.append("the HTML page's MPI_T table: %s" % q.stderr)
except (OSError, ValueError, KeyError, IndexError) as e:
    fails.append("profile: %r" % e)
p = run("nothing_like_*", "none")
lines = [l for l in p.stderr.splitlines() if "mon: BALLAST_MPIT" in l]
if len(lines) != 1 or "pml_ob1_unexpected_msgq_length" not in lines[0] or "valid" not in lines[0]:
    fails.append("expected one line listing the valid variables, got %s" % lines)
for f in fails:
    print("FAIL:", f)
if fails:
    sys.exit(1)
print("PASS mon_mpit")
