#!/usr/bin/env python3
"""Runs mon_mpit twice: with BALLAST_MPIT selecting the two ob1 queue
lengths (plus a pattern that matches nothing), and with a pattern that
matches nothing valid: the second must warn once, on one line listing the
valid variables, and otherwise run as usual.

usage: check_mpit.py MPIEXEC MON_MPIT_EXE
"""
import os
import subprocess
import sys

MPIEXEC, EXE = sys.argv[1], sys.argv[2]
fails = []


def run(mpit, arg=None):
    env = dict(os.environ, BALLAST_MPIT=mpit, BALLAST_REPORT="full")
    cmd = [MPIEXEC, "-n", "2", "--oversubscribe", EXE] + ([arg] if arg else [])
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, timeout=60)
    if p.returncode != 0:
        print(p.stdout, p.stderr)
        fails.append("exit %d with BALLAST_MPIT=%s" % (p.returncode, mpit))
    return p


p = run("pml_ob1_unexpected_msgq_length,pml_ob1_posted_recv*,nothing_like_this")
bad = [l for l in p.stderr.splitlines() if "BALLAST_MPIT" in l]
if bad:
    fails.append("a valid selection warned: %s" % bad)
p = run("nothing_like_*", "none")
lines = [l for l in p.stderr.splitlines() if "BALLAST_MPIT" in l]
if len(lines) != 1 or "pml_ob1_unexpected_msgq_length" not in lines[0] or "valid" not in lines[0]:
    fails.append("expected one line listing the valid variables, got %s" % lines)
for f in fails:
    print("FAIL:", f)
if fails:
    sys.exit(1)
print("PASS mon_mpit")
