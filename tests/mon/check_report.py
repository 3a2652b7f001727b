#!/usr/bin/env python3
"""Runs ballast-ring under mpiexec and checks ballast's end-of-run report
(stdout of rank 0) and JSON profile against the ring's exact traffic.

usage: check_report.py MPIEXEC RING_EXE
Each case asserts on values; any failure prints what differed and exits 1.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

MPIEXEC, RING = sys.argv[1], sys.argv[2]
NP, STEPS, BYTES, WORK = 2, 50, 2048, 20000
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(env_extra, args=(STEPS, BYTES, WORK)):
    env = dict(os.environ)
    for k in ("BALLAST_REPORT", "BALLAST_PROFILE", "BALLAST_MONITOR", "BALLAST_REPORT_TOP"):
        env.pop(k, None)
    env.update(env_extra)
    cmd = [MPIEXEC, "-n", str(NP), "--oversubscribe", RING] + [str(a) for a in args]
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, timeout=120)
    if p.returncode != 0:
        print(p.stdout)
        print(p.stderr)
    check(p.returncode == 0, "exit code %d of %s" % (p.returncode, " ".join(cmd)))
    return p.stdout, p.stderr


def table(out, header):
    """Rows of the report table whose header line starts with '# <header>'."""
    rows, on = {}, False
    for line in out.splitlines():
        if re.match(r"^# %s\s" % re.escape(header), line):
            on = True
            continue
        if on:
            if not line.startswith("# ") or line.strip() == "#":
                break
            f = line[2:].split()
            rows[f[0]] = [float(x) if x != "-" else None for x in f[1:]]
    return rows


def field(out, name):
    m = re.search(r"^# %s\s*: (.*)$" % re.escape(name), out, re.M)
    return m.group(1).strip() if m else None


# ---- full report + profile ------------------------------------------------
with tempfile.TemporaryDirectory() as tmp:
    prof = os.path.join(tmp, "ring.json")
    out, err = run({"BALLAST_REPORT": "full", "BALLAST_PROFILE": prof})
    check(out.count("##ballast##") == 1, "one banner in the full report")
    check(("ballast-ring: %d steps of %d bytes on %d ranks" % (STEPS, BYTES, NP)) in out,
          "the ring's own line")
    check(field(out, "ranks") == str(NP), "ranks line: %r" % field(out, "ranks"))
    wall = float(field(out, "wall (s)") or -1)
    check(wall > 0, "wall > 0 (%r)" % wall)
    pmpi = float(field(out, "%mpi") or -1)
    check(0 <= pmpi <= 100, "%%mpi in 0..100 (%r)" % pmpi)

    acts = table(out, "activity")
    sr = acts.get("MPI_Sendrecv")
    check(sr is not None, "MPI_Sendrecv listed")
    if sr:
        tot, avg, mn, mx, pct, calls, nbytes = sr
        check(calls == NP * STEPS, "Sendrecv calls %r == %d" % (calls, NP * STEPS))
        check(nbytes == NP * STEPS * 2 * BYTES, "Sendrecv bytes %r" % nbytes)
        check(mn <= avg + 1e-6 and avg <= mx + 1e-6, "Sendrecv min <= avg <= max")
        check(abs(tot - NP * avg) <= 1e-5 * max(1.0, tot), "Sendrecv total = ranks x avg")
    for name, calls in (("MPI_Allreduce", NP * STEPS), ("MPI_Bcast", NP),
                        ("MPI_Barrier", NP), ("MPI_Finalize", NP)):
        check(name in acts and acts[name][5] == calls,
              "%s calls == %d (%r)" % (name, calls, acts.get(name)))
    for name, row in acts.items():
        check(row[2] <= row[1] + 1e-6 <= row[3] + 2e-6, "%s min <= avg <= max" % name)

    groups = table(out, "group")
    check("MPI_ALL" in groups or any(k.endswith("ALL") for k in groups), "group table")

    regs = table(out, "region")
    for path, count in (("ring", NP), ("ring/step", NP * STEPS),
                        ("ring/step/exchange", NP * STEPS), ("ring/step/compute", NP * STEPS),
                        ("ring/step/reduce", NP * STEPS)):
        check(path in regs and regs[path][0] == count,
              "region %s count == %d (%r)" % (path, count, regs.get(path)))
    if "ring" in regs and "ring/step" in regs:
        check(regs["ring/step"][1] <= regs["ring"][1] + 1e-6, "step wall <= ring wall")
    if "ring/step/compute" in regs:
        check(regs["ring/step/compute"][4] == 0.0, "compute has no MPI time")
    check(field(out, "library") is not None, "library line in full report")
    check(field(out, "hw counters") is not None, "hw counters line in full report")

    # The profile file
    check(os.path.exists(prof), "profile written")
    if os.path.exists(prof):
        with open(prof) as f:
            doc = json.load(f)
        p = doc["ballast_profile"]
        check(p["version"] == 1, "profile version")
        check(p["ranks"] == NP, "profile ranks")
        check(p["wall"] > 0, "profile wall")
        rd = p["ranks_data"]
        check([r["rank"] for r in rd] == list(range(NP)), "ranks_data in rank order")
        for r in rd:
            rank, other = r["rank"], 1 - r["rank"]
            a = r["activities"]
            s = a.get("MPI_Sendrecv", {})
            check(s.get("ncalls") == STEPS, "rank %d Sendrecv ncalls %r" % (rank, s.get("ncalls")))
            check(s.get("nbytes") == 2 * STEPS * BYTES, "rank %d Sendrecv nbytes" % rank)
            check(0 <= s.get("tmin", -1) <= s.get("tmax", -1) <= s.get("tsum", -1),
                  "rank %d Sendrecv tmin <= tmax <= tsum" % rank)
            check(a.get("MPI_Allreduce", {}).get("ncalls") == STEPS, "rank %d Allreduce" % rank)
            check(a.get("MPI_Bcast", {}).get("ncalls") == 1, "rank %d Bcast" % rank)
            check(a.get("MPI_Barrier", {}).get("ncalls") == 1, "rank %d Barrier" % rank)
            check(a.get("MPI_Init", {}).get("ncalls", 0) +
                  a.get("MPI_Init_thread", {}).get("ncalls", 0) == 1, "rank %d Init" % rank)
            check(r["wall"] > 0 and 0 <= r["mpi_time"] <= r["wall"] * 1.01,
                  "rank %d mpi_time within wall" % rank)
            regs = {g["id"]: g for g in r["regions"]}
            check(regs[0]["name"] == "ballast_main" and regs[0]["parent"] == -1,
                  "rank %d region 0" % rank)

            def child(parent, name):
                c = [g for g in r["regions"] if g["parent"] == parent and g["name"] == name]
                return c[0] if c else None
            ring = child(0, "ring")
            step = child(ring["id"], "step") if ring else None
            check(ring is not None and ring["count"] == 1, "rank %d ring count 1" % rank)
            check(step is not None and step["count"] == STEPS, "rank %d step count" % rank)
            if step:
                for n in ("exchange", "compute", "reduce"):
                    c = child(step["id"], n)
                    check(c is not None and c["count"] == STEPS, "rank %d %s count" % (rank, n))
                    if c:
                        check(0 < c["wtime"] <= step["wtime"], "rank %d %s wtime" % (rank, n))
                        check(c["mtime"] <= c["wtime"] * 1.01 + 1e-6, "rank %d %s mtime" % (rank, n))
                check(child(step["id"], "compute")["mtime"] == 0, "rank %d compute mtime 0" % rank)
                check(step["wtime"] <= ring["wtime"], "rank %d step <= ring" % rank)
                check(ring["wtime"] <= regs[0]["wtime"], "rank %d ring <= main" % rank)
            part = r["partners"]
            check(list(part.keys()) == [str(other)], "rank %d partners %r" % (rank, list(part)))
            q = part.get(str(other), {})
            check(q.get("bytes") == STEPS * BYTES and q.get("msgs") == STEPS,
                  "rank %d sent to %d: %r" % (rank, other, q))
            check(q.get("rbytes") == STEPS * BYTES and q.get("rmsgs") == STEPS,
                  "rank %d received from %d: %r" % (rank, other, q))

# ---- terse (default) report: the top 5 only --------------------------------
out, err = run({})
check(out.count("##ballast##") == 1, "one banner in the terse report")
acts = table(out, "activity")
check(0 < len(acts) <= 5, "terse lists at most 5 activities (%d)" % len(acts))
check("MPI_Sendrecv" in acts or "MPI_Allreduce" in acts, "terse lists the ring's calls")
check(table(out, "group") == {}, "no group table in terse")
check(field(out, "library") is None, "no library line in terse")
regs = table(out, "region")
check(0 < len(regs) <= 5 and "ring" in regs, "terse regions (%r)" % list(regs))
out, err = run({"BALLAST_REPORT_TOP": "2"})
check(len(table(out, "activity")) == 2, "BALLAST_REPORT_TOP=2 lists 2 activities")

# ---- none, and monitoring off: no banner, no profile -------------------------
out, err = run({"BALLAST_REPORT": "none"})
check("##ballast" not in out, "BALLAST_REPORT=none prints nothing")
check("ballast-ring:" in out, "the program still runs with report none")
with tempfile.TemporaryDirectory() as tmp:
    prof = os.path.join(tmp, "off.json")
    out, err = run({"BALLAST_MONITOR": "0", "BALLAST_PROFILE": prof})
    check("##ballast" not in out, "BALLAST_MONITOR=0 prints no report")
    check(not os.path.exists(prof), "BALLAST_MONITOR=0 writes no profile")
    check("ballast-ring:" in out, "the program still runs with monitoring off")
out, err = run({"BALLAST_REPORT": "none", "BALLAST_PROFILE": "/nonexistent/dir/p.json"})
check("cannot write the profile to /nonexistent/dir/p.json" in err,
      "unwritable profile path: a warning, and the run still succeeds")
out, err = run({"BALLAST_REPORT": "bogus"})
check("##ballast##" in out and err.count('BALLAST_REPORT="bogus" is not one of none,terse,full') == 1,
      "bad BALLAST_REPORT: one warning (rank 0) + terse: %r" % err)

if failures:
    print("%d check(s) failed" % len(failures))
    sys.exit(1)
print("PASS mon_report (report and profile of ballast-ring)")
