#!/usr/bin/env python3
"""BALLAST_MPIT under LD_PRELOAD, in programs not linked to ballast (C, and
Fortran when built): MPI_T starts inside the watched MPI_Init, the profile
names the selected variables and keeps each region's figures, and the
program's results are its own (exit status 0).

usage: check_mpit_preload.py MPIEXEC LIBBALLAST C_PLAIN_APP [--fortran F_APP]
                             [--first LIB ...]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

ap = argparse.ArgumentParser()
ap.add_argument("mpiexec")
ap.add_argument("lib")
ap.add_argument("capp")
ap.add_argument("--fortran", default=None)
ap.add_argument("--first", action="append", default=[])
o = ap.parse_args()
fails = []
tmp = tempfile.mkdtemp()
for name, app, np in (("C", o.capp, 2), ("Fortran", o.fortran, 4)):
    if not app:
        continue
    prof = os.path.join(tmp, name + ".json")
    cmd = [o.mpiexec, "-n", str(np), "--oversubscribe", "-x",
           "LD_PRELOAD=" + ":".join(o.first + [o.lib]), "-x", "BALLAST_MPIT=pml_ob1_*",
           "-x", "BALLAST_PROFILE=" + prof, "-x", "BALLAST_REPORT=none", app]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
    if p.returncode != 0:
        fails.append("%s: exit %d: %s" % (name, p.returncode, p.stderr[-1500:]))
        continue
    try:
        doc = json.load(open(prof))["ballast_profile"]
        names = sorted(v["name"] for v in doc.get("mpit", []))
        if names != ["pml_ob1_posted_recvq_length", "pml_ob1_unexpected_msgq_length"]:
            fails.append("%s: profile's variables %s" % (name, names))
        if name == "C":
            rd = doc["ranks_data"][0]
            ids = {r["name"]: str(r["id"]) for r in rd["regions"]}
            if "step" not in ids or ids["step"] not in rd.get("mpit", {}):
                fails.append("C: no MPI_T figures for region step: %s" % rd.get("mpit"))
    except (OSError, ValueError, KeyError, IndexError) as e:
        fails.append("%s: profile %r" % (name, e))
for f in fails:
    print("FAIL:", f)
if fails:
    sys.exit(1)
print("PASS mpit_preload")
