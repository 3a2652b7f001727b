#!/usr/bin/env python3
"""Runs mon_overhead unwrapped and wrapped, alternately, several rounds, and
prints the added cost per wrapped call (difference of medians).

usage: run.py MPIEXEC PLAIN WRAPPED [ROUNDS] [BATCHES]"""
import os
import statistics
import subprocess
import sys


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
        if len(f) >= 4 and f[0] == variant and f[2] == "median_ns":
            res[f[1]] = float(f[3])
    return res


def main():
    mpiexec, plain, wrapped = sys.argv[1:4]
    rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 5
    batches = int(sys.argv[5]) if len(sys.argv) > 5 else 2001
    variants = [("plain", plain, {}),
                ("wrapped", wrapped, {"BALLAST_REPORT": "none"}),
                ("wrapped_off", wrapped, {"BALLAST_REPORT": "none", "BALLAST_MONITOR": "0"})]
    res = {v: {} for v, _, _ in variants}
    for r in range(rounds):
        for v, exe, env in variants:
            for test, ns in run(mpiexec, exe, v, batches, env).items():
                res[v].setdefault(test, []).append(ns)
    print("mon_overhead: median over %d rounds of per-round medians (%d batches each), ns"
          % (rounds, batches))
    print("%-10s %10s %10s %12s %14s %12s" % ("test", "plain", "wrapped", "added", "added/call",
                                              "monitor=0"))
    for test in ("comm_rank", "iprobe", "pingpong"):
        p = statistics.median(res["plain"][test])
        w = statistics.median(res["wrapped"][test])
        o = statistics.median(res["wrapped_off"][test])
        calls = 2 if test == "pingpong" else 1  # a round trip is 2 calls per rank
        print("%-10s %10.1f %10.1f %12.1f %14.1f %12.1f"
              % (test, p, w, w - p, (w - p) / calls, o - p))


if __name__ == "__main__":
    main()
