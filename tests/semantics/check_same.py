#!/usr/bin/env python3
"""A watched MPI program behaves exactly as unwatched (tests/semantics).

Runs one test program under mpiexec in several ways and requires, of every
run, exit status 0 and its "PASS <name>" line (the program asserts what the
MPI standard says its results are), and of all runs together the same
result lines: every line "SEM <world rank> <what> <values>" a run prints,
sorted, must be identical to the unwatched run's.

Runs, each named in the output:
  plain       PLAIN_APP (linked to MPI only), no ballast: the reference
  preload     PLAIN_APP with LD_PRELOAD=[FIRST:...:]LIBBALLAST
  preload_off the same with BALLAST_MONITOR=0 (the wrappers only pass on)
  noreorder   the same with BALLAST_REORDER=off (with --reorder only)
  linked      LINKED_APP (linked to ballast; it checks ballast's accounting
              too), when given
  linked_off  LINKED_APP with BALLAST_MONITOR=0
With --ref REF_APP the reference is REF_APP unwatched (the C twin of a
Fortran program) and every run above must print its lines. --watched-env
K=V is set only in the runs where ballast watches and reorders (preload,
linked): what the program must see differently there (SEM_EXPECT_REORDER).

Each process writes its result lines to WORKDIR/NAME_RUN.sem.<rank>.

usage: check_same.py --name NAME --mpiexec MPIEXEC --np NP --plain PLAIN_APP
                     --lib LIBBALLAST [--linked LINKED_APP] [--reorder] [--workdir DIR]
                     [--env K=V ...] [--first LIB ...] [--timeout S] [-- ARGS...]
"""
import argparse
import glob
import os
import subprocess
import sys
import time


def fail(name, msg):
    print("FAIL %s: %s" % (name, msg))
    sys.exit(1)


def run(o, tag, app, preload, env):
    out = os.path.join(o.workdir, "%s_%s.sem" % (o.name, tag))
    for f in glob.glob(out + ".*"):
        os.unlink(f)
    cmd = [o.mpiexec, "-n", str(o.np), "--oversubscribe", "-x", "SEM_OUT=" + out]
    if preload:
        cmd += ["-x", "LD_PRELOAD=" + ":".join(o.first + [o.lib])]
    for kv in o.env + env:
        cmd += ["-x", kv]
    cmd += [app] + o.args
    t0 = time.time()
    try:
        res = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             universal_newlines=True, timeout=o.timeout)
    except subprocess.TimeoutExpired as e:
        out = e.stdout or ""
        print(out if isinstance(out, str) else out.decode(errors="replace"))
        fail(o.name, "%s run timed out after %d s (a hang): %s" % (tag, o.timeout, " ".join(cmd)))
    print("$ %s   [%s, %.1f s]" % (" ".join(cmd), tag, time.time() - t0))
    lines = res.stdout.splitlines()
    # The program's own failures and MPI's; ballast's report lines are
    # left out of the log unless the run failed.
    for l in lines:
        if not l.startswith("SEM ") and not l.startswith("#"):
            print("  " + l)
    if res.returncode != 0:
        print(res.stdout)
        fail(o.name, "%s run exited with %d" % (tag, res.returncode))
    if not any(l.startswith("PASS ") for l in lines):
        fail(o.name, "%s run did not print PASS" % tag)
    sem = []
    for f in sorted(glob.glob(out + ".*")):
        with open(f) as fh:
            sem += [l.rstrip("\n") for l in fh if l.startswith("SEM ")]
    return sorted(sem)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--name", required=True)
    ap.add_argument("--mpiexec", required=True)
    ap.add_argument("--np", type=int, required=True)
    ap.add_argument("--plain", required=True)
    ap.add_argument("--lib", required=True)
    ap.add_argument("--linked")
    ap.add_argument("--reorder", action="store_true")
    ap.add_argument("--env", action="append", default=[])
    ap.add_argument("--first", action="append", default=[])
    ap.add_argument("--timeout", type=int, default=100)
    ap.add_argument("--workdir", default=".")
    ap.add_argument("--ref")
    ap.add_argument("--watched-env", action="append", default=[])
    ap.add_argument("args", nargs="*")
    o = ap.parse_args()
    w = o.watched_env
    runs = [("ref", o.ref, False, [])] if o.ref else []
    runs += [("plain", o.plain, False, []), ("preload", o.plain, True, w),
             ("preload_off", o.plain, True, ["BALLAST_MONITOR=0"])]
    if o.reorder:
        runs.append(("noreorder", o.plain, True, ["BALLAST_REORDER=off"]))
    if o.linked:
        runs += [("linked", o.linked, False, w),
                 ("linked_off", o.linked, False, ["BALLAST_MONITOR=0"])]
    ref = None
    for tag, app, preload, env in runs:
        got = run(o, tag, app, preload, env)
        if not got:
            fail(o.name, "%s run printed no SEM line" % tag)
        if ref is None:
            ref = got
            continue
        if got != ref:
            rs, gs = set(ref), set(got)
            for l in sorted(rs - gs)[:20]:
                print("  %s only: %s" % (runs[0][0], l))
            for l in sorted(gs - rs)[:20]:
                print("  %s only: %s" % (tag, l))
            fail(o.name, "%s run's results differ from the %s run's" % (tag, runs[0][0]))
    print("%d result lines identical in %d runs" % (len(ref), len(runs)))
    print("PASS %s" % o.name)


if __name__ == "__main__":
    main()
