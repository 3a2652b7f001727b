#!/usr/bin/env python3
"""Preload test: runs preload_app (a plain MPI program, not linked to ballast)
under mpiexec with LD_PRELOAD=libballast.so and BALLAST_PROFILE, then checks
the profile file for the program's exact traffic.

usage: check_preload.py MPIEXEC APP LIBBALLAST WORKDIR [PRELOAD_FIRST...]
PRELOAD_FIRST: libraries to preload before libballast (the sanitizer runtime
of a sanitizer build)."""
import json
import os
import subprocess
import sys


def fail(msg):
    print("FAIL preload: " + msg)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)


def main():
    mpiexec, app, lib, work = sys.argv[1:5]
    preload = ":".join(sys.argv[5:] + [lib])
    os.makedirs(work, exist_ok=True)
    prof = os.path.join(work, "preload_profile.json")
    if os.path.exists(prof):
        os.unlink(prof)
    cmd = [mpiexec, "-n", "2", "--oversubscribe",
           "-x", "LD_PRELOAD=" + preload, "-x", "BALLAST_PROFILE=" + prof,
           "-x", "BALLAST_REPORT=terse", app]
    run = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         universal_newlines=True, timeout=50)
    print(run.stdout)
    check(run.returncode == 0, "the program failed (%d)" % run.returncode)
    check("##ballast" in run.stdout, "no report banner in the output")
    check(os.path.exists(prof), "no profile file at %s" % prof)
    with open(prof) as f:
        doc = json.load(f)["ballast_profile"]
    check(doc["ranks"] == 2, "ranks %r" % doc["ranks"])
    ranks = {r["rank"]: r for r in doc["ranks_data"]}
    check(sorted(ranks) == [0, 1], "ranks_data %r" % sorted(ranks))

    def act(r, name):
        a = ranks[r]["activities"].get(name)
        check(a is not None, "rank %d: no activity %s" % (r, name))
        return a["ncalls"], a["nbytes"]

    def expect(r, name, calls, nbytes):
        got = act(r, name)
        check(got == (calls, nbytes), "rank %d %s: (calls, bytes) %r, expected %r"
              % (r, name, got, (calls, nbytes)))

    expect(0, "MPI_Send", 5, 500)
    expect(1, "MPI_Recv", 5, 500)  # posted for 1000, received 100 each
    for r in (0, 1):
        expect(r, "MPI_Isend", 1, 24)
        expect(r, "MPI_Irecv", 1, 24)
        expect(r, "MPI_Waitall", 1, 0)
        expect(r, "MPI_Allreduce", 1, 16)
        expect(r, "MPI_Pcontrol", 2, 0)
        expect(r, "MPI_Comm_rank", 1, 0)
        expect(r, "MPI_Init", 1, 0)
    p0 = ranks[0]["partners"].get("1")
    check(p0 is not None, "rank 0: no partner 1")
    check((p0["bytes"], p0["msgs"], p0["rbytes"], p0["rmsgs"]) == (524, 6, 24, 1),
          "rank 0 partner 1: %r" % p0)
    p1 = ranks[1]["partners"].get("0")
    check(p1 is not None and (p1["bytes"], p1["rbytes"]) == (24, 524),
          "rank 1 partner 0: %r" % p1)
    regions = {g["name"]: g for g in ranks[0]["regions"]}
    check("exchange" in regions and regions["exchange"]["count"] == 1,
          "region 'exchange' (MPI_Pcontrol): %r" % list(regions))
    print("PASS monwrap_preload")


if __name__ == "__main__":
    main()
