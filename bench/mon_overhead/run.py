#!/usr/bin/env python3
"""Runs mon_overhead unwrapped (plain), wrapped, and wrapped with
BALLAST_MONITOR=0, alternately, for several rounds, and prints the cost the
wrappers add per call, two ways (see mon_overhead.c):
  across binaries: median over rounds of (wrapped - plain) medians;
  paired: median over rounds of the in-process MPI_X - PMPI_X medians.

usage: run.py MPIEXEC PLAIN WRAPPED [ROUNDS [BATCHES]]"""
import os
import statistics
import subprocess
import sys

TESTS = ("comm_rank", "iprobe", "pingpong")


def run(mpiexec, exe, variant, batches, extra_env):
    env = dict(os.environ)
    env.update(extra_env)
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    out = subprocess.run([mpiexec, "-n", "2", "--oversubscribe", exe, variant, str(batches)],
                         stdout=subprocess.PIPE, env=env, check=True,
                         universal_newlines=True).stdout
    res = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 8 and f[0] == variant and f[1] in TESTS:
            res[f[1]] = {"mpi": float(f[3]), "pmpi": float(f[5]), "paired": float(f[7])}
    return res


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    mpiexec, plain, wrapped = sys.argv[1:4]
    rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 5
    batches = int(sys.argv[5]) if len(sys.argv) > 5 else 2001
    variants = [("plain", plain, {}),
                ("wrapped", wrapped, {"BALLAST_REPORT": "none"}),
                ("monitor0", wrapped, {"BALLAST_REPORT": "none", "BALLAST_MONITOR": "0"})]
    res = {v: {t: [] for t in TESTS} for v, _, _ in variants}
    for _ in range(rounds):
        for v, exe, env in variants:
            for test, r in run(mpiexec, exe, v, batches, env).items():
                res[v][test].append(r)

    def med(v, t, key):
        return statistics.median(r[key] for r in res[v][t])

    print("mon_overhead: %d rounds x %d batches, medians in ns per call "
          "(pingpong: per round trip = 2 calls per rank)" % (rounds, batches))
    print("%-10s %9s %9s %9s | %10s %10s %10s | %14s" % (
        "test", "plain", "wrapped", "added", "paired", "control", "monitor=0", "added/call"))
    for t in TESTS:
        p, w = med("plain", t, "mpi"), med("wrapped", t, "mpi")
        paired, control = med("wrapped", t, "paired"), med("plain", t, "paired")
        off = med("monitor0", t, "paired")
        calls = 2 if t == "pingpong" else 1
        print("%-10s %9.1f %9.1f %9.1f | %10.1f %10.1f %10.1f | %14.1f" % (
            t, p, w, w - p, paired, control, off, paired / calls))
    print("added = wrapped - plain binary; paired = MPI_X - PMPI_X batches in the wrapped "
          "process; control = the same pairing in the plain binary; monitor=0 = paired "
          "with BALLAST_MONITOR=0; added/call = paired / calls per test unit")


if __name__ == "__main__":
    main()
