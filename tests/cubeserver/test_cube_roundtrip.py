#!/usr/bin/env python3
"""ballast-cube reads ballast's own Cube export: a 2-rank run of cube_app
writes BALLAST_CUBE and BALLAST_PROFILE; ballast-cube, on 1 and 2 ranks with
every strategy, answers the same, and its figures equal the profile's (the
root's inclusive time is the ranks' summed wall time; each region's
exclusive visits its instances summed over the ranks); a MINDOUBLE metric
without a value prints none and is left out of top.

usage: test_cube_roundtrip.py MPIEXEC CUBE_APP BALLAST_CUBE
"""
import json
import os
import subprocess
import sys
import tempfile

MPIEXEC, APP, CUBE = sys.argv[1:4]
fails = []
tmp = tempfile.mkdtemp()
cubex, prof = os.path.join(tmp, "r.cubex"), os.path.join(tmp, "r.json")
env = dict(os.environ, BALLAST_REPORT="none", BALLAST_CUBE=cubex, BALLAST_PROFILE=prof)
p = subprocess.run([MPIEXEC, "-n", "2", "--oversubscribe", APP], env=env, capture_output=True,
                   text=True, timeout=120)
if p.returncode != 0:
    sys.exit("cube_app failed: %s" % p.stderr[-2000:])
doc = json.load(open(prof))["ballast_profile"]
wall = sum(r["wall"] for r in doc["ranks_data"])
regions = {}
for rd in doc["ranks_data"]:
    by_id = {r["id"]: r for r in rd["regions"]}
    for r in rd["regions"]:
        if r["id"] == 0:
            continue
        path, q = [], r
        while q["id"] != 0:
            path.insert(0, q["name"])
            q = by_id[q["parent"]]
        key = "ballast_main/" + "/".join(path)
        regions[key] = regions.get(key, 0) + r["count"]
queries = ["incl time ballast_main"] + ["excl visits \"%s\"" % k for k in sorted(regions)]
outs = {}
for np in (1, 2):
    for strat in ("plain", "roundrobin", "random", "chain", "ballast"):
        args = [MPIEXEC, "-n", str(np), "--oversubscribe", CUBE, "-s", strat]
        for q in queries:
            args += ["-e", q]
        r = subprocess.run(args + [cubex], capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            fails.append("ballast-cube -n %d -s %s: %s" % (np, strat, r.stderr[-500:]))
            continue
        outs[(np, strat)] = r.stdout
texts = set(outs.values())
if len(texts) != 1:
    fails.append("answers differ across rank counts and strategies")
if outs:
    vals = [float(l.split()[1]) for l in next(iter(outs.values())).splitlines()
            if l.startswith("value ")]
    if len(vals) != len(queries):
        fails.append("%d answers for %d queries" % (len(vals), len(queries)))
    else:
        if abs(vals[0] - wall) > 1e-6 * max(wall, 1e-9):
            fails.append("root inclusive time %r, profile's wall %r" % (vals[0], wall))
        for (k, n), v in zip(sorted(regions.items()), vals[1:]):
            if v != n:
                fails.append("visits of %s: %r, profile %d" % (k, v, n))
# A MINDOUBLE metric where nothing was measured (a region's own row of the
# shortest MPI call: its calls are its MPI children's rows) prints none and
# ranks nowhere in top; the subtree's minimum is a real value.
r = subprocess.run([MPIEXEC, "-n", "2", "--oversubscribe", CUBE,
                    "-e", "excl min_time ballast_main/step/compute",
                    "-e", "incl min_time ballast_main/step",
                    "-e", "top 50 min_time", cubex], capture_output=True, text=True, timeout=120)
lines = r.stdout.splitlines()
vals = [l for l in lines if l.startswith("value ")]
tops = [l for l in lines if l.startswith("top ")]
if r.returncode != 0 or len(vals) != 2 or vals[0] != "value none":
    fails.append("min_time without a value: %r %s" % (vals, r.stderr[-300:]))
elif not 0 < float(vals[1].split()[1]) < 1:
    fails.append("the subtree's shortest MPI call: %r" % vals[1])
if not tops or any(not 0 <= float(l.split()[2]) < 1 or "/MPI_" not in l for l in tops):
    fails.append("top min_time lists only MPI calls with a value: %r" % tops[:5])
for f in fails:
    print("FAIL:", f)
if fails:
    sys.exit(1)
print("PASS cube_roundtrip (%d queries, 10 runs)" % len(queries))
