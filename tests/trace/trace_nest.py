#!/usr/bin/env python3
"""trace_nest (4 ranks) traced by both writers at once, every nesting path
and message kind checked in both formats (see trace_nest.c):
  - the Perfetto JSON passes the strict check (check_trace_json.py: B/E in
    stack order name by name, an E carrying its B's category and args, a
    task's region directly inside its task, X inside their B);
  - the OTF2 archive, read with Debian's python3-otf2 (check_otf2.py):
    Enter/Leave nested name by name on every location, times in order,
    every MpiSend paired with an MpiRecv (sender, receiver, communicator,
    tag, bytes); per rank 12 sends and 12 receives (5 MPI_Isend + 5 MPI_Send
    + 2 starts of a persistent send; 5 receives completed by MPI_Waitall, 5
    by MPI_Test, 2 persistent), tags exactly {7, 50, 100..104}, 5 collectives on its 2-rank communicator "half" (whose
    members are the ranks of its parity) and 1 on MPI_COMM_WORLD; the
    task's region, "step", "exchange" and "pc" entered as often as the
    program did; the region left open on the second thread and the task
    open at MPI_Finalize left in both formats;
  - each writer named twice (BALLAST_TOOLS=perfetto:perfetto:otf2:otf2):
    the second declines with one line per rank, and the traces are those
    of one writer (the same slice counts, messages written once).
Usage: trace_nest.py MPIEXEC TRACE_NEST CHECK_TRACE_JSON CHECK_OTF2"""
import json
import os
import subprocess
import sys
import tempfile

mpiexec, prog, checker, check_otf2 = sys.argv[1:5]
NP, NSTEPS, NPERS = 4, 5, 2
fails = 0


def check(cond, what):
    global fails
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        fails += 1
    return cond


def run(d, tools="perfetto:otf2"):
    env = {k: v for k, v in os.environ.items() if not k.startswith("BALLAST_")}
    env.update({"BALLAST_TOOLS": tools, "BALLAST_TRACE_PERFETTO": d + "/t.json",
                "BALLAST_TRACE_OTF2": d + "/otf2", "BALLAST_REPORT": "none",
                "OMPI_MCA_mpi_yield_when_idle": "1"})
    p = subprocess.run([mpiexec, "-n", str(NP), "--oversubscribe", prog], capture_output=True,
                       text=True, timeout=120, env=env)
    if p.returncode != 0:
        print(p.stdout, p.stderr)
        sys.exit("trace_nest failed (%d)" % p.returncode)
    return p.stderr


def check_json(d):
    r = subprocess.run([sys.executable, checker, d + "/t.json", "--ranks", str(NP), "--counts",
                        d + "/counts.json"], capture_output=True, text=True, timeout=60)
    check(r.returncode == 0, "Perfetto JSON: strict check, nesting name by name: "
          + r.stdout.strip())
    counts = json.load(open(d + "/counts.json"))
    for r in range(NP):
        c = counts[str(r)]
        key = "nest/r%d" % r
        check(c.get("B/task/" + key) == NSTEPS + 1 and c.get("B/region/" + key) == NSTEPS + 1,
              "rank %d: %d task slices and %d task-region slices (5 steps + 1 left open)"
              % (r, c.get("B/task/" + key, 0), c.get("B/region/" + key, 0)))
        check(c.get("B/region/step") == NSTEPS and c.get("B/region/exchange") == NSTEPS and
              c.get("B/region/pc") == NSTEPS and c.get("B/region/thread_open") == 1,
              "rank %d: region slices step, exchange, pc, thread_open: %s" % (
                  r, [c.get("B/region/" + n) for n in ("step", "exchange", "pc", "thread_open")]))
        check(c.get("X/mpi/MPI_Pcontrol") == 2 * NSTEPS, "rank %d: MPI_Pcontrol slices" % r)
    evs = json.load(open(d + "/t.json"))["traceEvents"]
    tags = sorted({e["args"]["tag"] for e in evs if e.get("name") == "MPI_Isend"})
    check(tags == list(range(100, 100 + NSTEPS)), "JSON: MPI_Isend slices carry tags %s" % tags)


def check_archive(d):
    r = subprocess.run(["/usr/bin/python3", check_otf2, d + "/otf2/traces.otf2", "--summary",
                        d + "/otf2.json"], capture_output=True, text=True, timeout=120)
    if r.returncode == 77:
        check(False, "python3-otf2 is installed (scripts/setup.sh): " + r.stdout.strip())
        return
    check(r.returncode == 0, "OTF2 (python3-otf2): nesting, order, messages paired: "
          + r.stdout.strip())
    s = json.load(open(d + "/otf2.json"))
    n = NP * (2 * NSTEPS + NPERS)
    check(s["messages_paired"] and s["messages"] == n,
          "OTF2: %d messages, all paired (expected %d)" % (s["messages"], n))
    comms = s["comms"]
    halves = sorted(v for k, v in comms.items() if k != "MPI_COMM_WORLD")
    check(comms.get("MPI_COMM_WORLD") == list(range(NP)) and halves == [[0, 2], [1, 3]],
          "OTF2: communicators MPI_COMM_WORLD and the two halves: %s" % comms)
    for r in range(NP):
        x = s["ranks"][str(r)]
        check(x["sends"] == 2 * NSTEPS + NPERS and x["recvs"] == 2 * NSTEPS + NPERS,
              "OTF2 rank %d: %d sends, %d receives (12 and 12: waits, tests and persistent "
              "requests included)" % (r, x["sends"], x["recvs"]))
        check(x["tags"] == [7, 50] + list(range(100, 100 + NSTEPS)), "OTF2 rank %d: tags %s"
              % (r, x["tags"]))
        half = [k for k, v in comms.items() if r in v and len(v) == 2]
        coll = x["collectives"]
        check(len(half) == 1 and coll.get("%s/2" % half[0]) == NSTEPS and
              coll.get("MPI_COMM_WORLD/%d" % NP) == 1,
              "OTF2 rank %d: collectives %s (5 on its half, 1 on the world)" % (r, coll))
        e = x["enters"]
        key = "nest/r%d" % r
        check(e.get("task " + key) == NSTEPS + 1 and e.get(key) == NSTEPS + 1 and
              e.get("thread_open") == 1 and e.get("outer") == 1,
              "OTF2 rank %d: task, its region, thread_open, outer entered %s" % (
                  r, [e.get(n) for n in ("task " + key, key, "thread_open", "outer")]))


with tempfile.TemporaryDirectory() as d:
    err = run(d)
    check("wrote an OTF2 archive of 4 ranks" in err and "wrote " + d + "/t.json" in err,
          "both writers wrote their trace")
    check_json(d)
    check_archive(d)
    once = json.load(open(d + "/counts.json"))
    os.makedirs(d + "/twice")
    err = run(d + "/twice", "perfetto:perfetto:otf2:otf2")
    for w in ("perfetto", "otf2"):
        n = sum(1 for l in err.splitlines() if w + ": already attached once in this process" in l)
        check(n == NP, "%s named twice: the second declines, one line per rank (%d)" % (w, n))
    check_json(d + "/twice")
    # B slices only: the number of MPI_Test calls of the polling loop varies.
    def slices(c):
        return {r: {k: v for k, v in x.items() if k.startswith("B/")} for r, x in c.items()}
    check(slices(json.load(open(d + "/twice/counts.json"))) == slices(once),
          "named twice: the same region and task slices as named once")
    check_archive(d + "/twice")

print("trace_nest: %d failure(s)" % fails)
sys.exit(1 if fails else 0)
