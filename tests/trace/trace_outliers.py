#!/usr/bin/env python3
"""The trace writers mark the repetitions labelled outliers (the tools
interface's rep_outlier event): tool_rep_outlier's run under both writers
has one Perfetto instant "outlier" per outlier of region step, and one OTF2
region "outlier: step" per outlier, as many as the profile's labels hold;
the JSON passes the strict check and the OTF2 archive reads back nested.
Usage: trace_outliers.py MPIEXEC TOOL_REP_OUTLIER CHECKER"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

mpiexec, prog, checker = sys.argv[1:4]
fails = []
with tempfile.TemporaryDirectory() as d:
    env = dict(os.environ, BALLAST_TOOLS="perfetto:otf2", BALLAST_TRACE_PERFETTO=d + "/t.json",
               BALLAST_TRACE_OTF2=d + "/otf2", BALLAST_REPORT="none",
               BALLAST_PROFILE=d + "/p.json", BALLAST_MPIT="pml_ob1_posted_recvq_length")
    p = subprocess.run([mpiexec, "-n", "1", prog], env=env, capture_output=True, text=True,
                       timeout=120)
    if p.returncode != 0:
        sys.exit("the program failed: " + p.stderr[-1500:])
    prof = json.load(open(d + "/p.json"))["ballast_profile"]
    rd = prof["ranks_data"][0]
    names = {r["id"]: r["name"] for r in rd["regions"]}
    step = [r for r in rd["repeated"] if names[r["id"]] == "step"][0]
    want = step["labels"].count("O")
    r = subprocess.run([sys.executable, checker, d + "/t.json", "--ranks", "1"],
                       capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        fails.append("strict check: " + r.stdout[-800:])
    evs = json.load(open(d + "/t.json"))["traceEvents"]
    inst = [e for e in evs if e.get("ph") == "i" and e.get("name") == "outlier"]
    if len(inst) != want or want < 1:
        fails.append("Perfetto: %d outlier instants, %d outliers labelled" % (len(inst), want))
    if inst and not all(e["args"]["region"] == "step" and e["args"]["wtime_s"] > 0 for e in inst):
        fails.append("Perfetto: outlier args %s" % inst[0]["args"])
    exe = shutil.which("otf2-print")
    if exe:
        out = subprocess.run([exe, d + "/otf2/traces.otf2"], capture_output=True, text=True,
                             timeout=60).stdout
        n = sum(1 for l in out.splitlines() if l.startswith("ENTER") and '"outlier: step"' in l)
        if n != want:
            fails.append("OTF2: %d 'outlier: step' regions, %d outliers" % (n, want))
    checker_otf2 = os.path.join(os.path.dirname(os.path.abspath(__file__)), "check_otf2.py")
    r = subprocess.run(["/usr/bin/python3", checker_otf2, d + "/otf2/traces.otf2"],
                       capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        fails.append("python3-otf2: " + r.stdout[-800:])
for f in fails:
    print("FAIL:", f)
if fails:
    sys.exit(1)
print("PASS trace_outliers")
