#!/usr/bin/env python3
"""trace_threads (a program whose 3 threads per rank each enter "work" 50
times around one MPI_Sendrecv) under the Perfetto writer: the trace passes
the strict check and each rank has one track for its main thread (its
barrier) and one per worker thread, each with exactly 50 "work" slices and
50 MPI_Sendrecv slices; the OTF2 writer gives one location per thread with
the same counts, and python3-otf2 reads it nested with every message paired. Usage: trace_threads.py MPIEXEC TRACE_THREADS CHECKER"""
import collections
import json
import os
import shutil
import subprocess
import sys
import tempfile

mpiexec, prog, checker = sys.argv[1:4]
fails = 0


def check(cond, what):
    global fails
    if not cond:
        print("FAIL " + what)
        fails += 1


with tempfile.TemporaryDirectory() as d:
    env = dict(os.environ, BALLAST_TOOLS="perfetto:otf2", BALLAST_TRACE_PERFETTO=d + "/t.json",
               BALLAST_TRACE_OTF2=d + "/otf2", BALLAST_TRACE_MPI_MIN_US="0",
               BALLAST_REPORT="none", BALLAST_TRACE_BUFFER="4K")
    p = subprocess.run([mpiexec, "-n", "2", "--oversubscribe", prog], env=env,
                       capture_output=True, text=True, timeout=120)
    if p.returncode == 77 or "skipped" in p.stdout:
        print("MPI_THREAD_MULTIPLE not available: skipped")
        sys.exit(77)
    check(p.returncode == 0, "the program runs: " + p.stderr[-800:])
    r = subprocess.run([sys.executable, checker, d + "/t.json", "--ranks", "2"],
                       capture_output=True, text=True, timeout=60)
    check(r.returncode == 0, "strict check: " + r.stdout)
    evs = json.load(open(d + "/t.json"))["traceEvents"]
    per = collections.defaultdict(collections.Counter)
    for e in evs:
        if e["ph"] in ("B", "X"):
            per[(e["pid"], e["tid"])][e["name"]] += 1
    for pid in (0, 1):
        tracks = sorted(t for (p_, t) in per if p_ == pid)
        check(len(tracks) == 4, "rank %d: 4 thread tracks (%s)" % (pid, tracks))
        workers = [per[(pid, t)] for t in tracks if per[(pid, t)]["work"]]
        check(len(workers) == 3 and all(c["work"] == 50 and c["MPI_Sendrecv"] == 50
                                        for c in workers),
              "rank %d: 3 worker tracks of 50 work and 50 MPI_Sendrecv: %s" % (pid, workers))
    names = [e["args"]["name"] for e in evs if e["ph"] == "M" and e["name"] == "thread_name"]
    check(len(names) == 8, "every thread track is named (%s)" % names)
    exe = shutil.which("otf2-print")
    if exe:
        out = subprocess.run([exe, d + "/otf2/traces.otf2"], capture_output=True, text=True,
                             timeout=60).stdout
        enters = collections.Counter()
        for line in out.splitlines():
            f = line.split()
            if f and f[0] == "ENTER" and 'Region: "work" <' in line:
                enters[int(f[1])] += 1
        check(sorted(enters.values()) == [50] * 6 and len(enters) == 6,
              "OTF2: 6 worker locations with 50 work enters each: %s" % dict(enters))
    # Read with python3-otf2: nested on every location, each thread's 50
    # sends paired with the receives of the same thread of the other rank
    # (the thread's index is the tag).
    checker_otf2 = os.path.join(os.path.dirname(os.path.abspath(__file__)), "check_otf2.py")
    r = subprocess.run(["/usr/bin/python3", checker_otf2, d + "/otf2/traces.otf2", "--summary",
                        d + "/s.json"], capture_output=True, text=True, timeout=60)
    check(r.returncode == 0, "python3-otf2: nested, messages paired: " + r.stdout)
    if r.returncode == 0:
        s = json.load(open(d + "/s.json"))
        got = {k: (v["sends"], v["recvs"], v["tags"]) for k, v in s["ranks"].items()}
        check(got == {"0": (150, 150, [0, 1, 2]), "1": (150, 150, [0, 1, 2])},
              "OTF2: 150 sends and receives per rank, tags 0, 1, 2: %s" % got)
print("trace_threads: %d failure(s)" % fails)
sys.exit(1 if fails else 0)
