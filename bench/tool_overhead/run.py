#!/usr/bin/env python3
"""Runs tool_overhead in its four modes alternately (none, other, exit, both,
none, ...) for several rounds and prints, per mode, the median over rounds of
the paired ns the wrapper adds to MPI_Comm_rank and of the ns of one region
begin/end pair, with the difference and ratio to "none" (see
tool_overhead.c).

usage: run.py MPIEXEC TOOL_OVERHEAD [ROUNDS [BATCHES]]"""
import os
import statistics
import subprocess
import sys

MODES = ("none", "other", "exit", "both")


def run(mpiexec, exe, mode, batches):
    env = dict(os.environ)
    # BALLAST_REGION_CPU=0: a region pair without its two CPU-time system
    # calls, so what a region callback adds is not lost in them.
    env.update({"BALLAST_REPORT": "none", "BALLAST_REGION_CPU": "0", "OMPI_ALLOW_RUN_AS_ROOT": "1",
                "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"})
    env.pop("BALLAST_TOOLS", None)
    out = subprocess.run([mpiexec, "-n", "1", exe, mode, str(batches)], stdout=subprocess.PIPE,
                         env=env, check=True, universal_newlines=True).stdout
    res = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 8 and f[0] == mode and f[1] == "comm_rank":
            res["added"] = float(f[7])
            res["mpi"] = float(f[3])
        elif len(f) >= 4 and f[0] == mode and f[1] == "region":
            res["region"] = float(f[3])
    return res


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    mpiexec, exe = sys.argv[1:3]
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    batches = int(sys.argv[4]) if len(sys.argv) > 4 else 501
    got = {m: [] for m in MODES}
    for _ in range(rounds):
        for m in MODES:
            got[m].append(run(mpiexec, exe, m, batches))
    med = {m: {k: statistics.median(r[k] for r in got[m]) for k in ("added", "mpi", "region")}
           for m in MODES}
    try:
        load = open("/proc/loadavg").read().split()[0]
    except OSError:
        load = "?"
    print("tool_overhead: %d rounds x %d batches of 1000 calls, load %s" % (rounds, batches, load))
    print("%-6s %16s %12s %14s %12s %12s" % ("mode", "wrapper adds ns", "vs none ns",
                                            "region pair ns", "vs none ns", "ratio"))
    n = med["none"]
    for m in MODES:
        r = med[m]
        print("%-6s %16.2f %+12.2f %14.2f %+12.2f %12.3f" % (
            m, r["added"], r["added"] - n["added"], r["region"], r["region"] - n["region"],
            r["region"] / n["region"]))


if __name__ == "__main__":
    main()
