#!/usr/bin/env python3
"""Writes a synthetic ballast profile of N ranks (default 1,024), shaped as
mon_profile_write() and lb_series write it: 32 ranks per node, a 3D halo
pattern (16 x 8 x 8 for 1,024 ranks), a dozen activities and 24 regions per
rank, 300 load-balancing steps with two remaps, task maps of 16,384 tasks
(aggregated, as the library writes maps of more than 4,096 tasks) and of
2,048 tasks (per task), and a performance-assertions section. Deterministic.

usage: gen_profile.py OUT.json [--ranks N]
"""
import argparse
import json
import random

ACTS = ["MPI_Init", "MPI_Isend", "MPI_Irecv", "MPI_Waitall", "MPI_Allreduce", "MPI_Barrier",
        "MPI_Bcast", "MPI_Reduce", "MPI_Probe", "MPI_Recv", "MPI_Comm_rank", "MPI_Finalize"]


def grid(n):
    """Three factors of n, largest first."""
    dims = [1, 1, 1]
    k, f = n, 2
    while k > 1:
        while k % f:
            f += 1
        k //= f
        dims[dims.index(min(dims))] *= f
    return sorted(dims, reverse=True)


def neighbours(r, dims):
    x, y, z = r % dims[0], (r // dims[0]) % dims[1], r // (dims[0] * dims[1])
    out = set()
    for d, (a, b, c) in enumerate(((1, 0, 0), (0, 1, 0), (0, 0, 1))):
        for s in (1, -1):
            q = ((x + s * a) % dims[0], (y + s * b) % dims[1], (z + s * c) % dims[2])
            j = q[0] + dims[0] * (q[1] + dims[1] * q[2])
            if j != r:
                out.add(j)
    return sorted(out)


def rank_part(r, n, rnd, dims, load):
    wall = 120.0 + rnd.uniform(-0.5, 0.5)
    mpi = 30.0 + 25.0 * (1 - load) + rnd.uniform(0, 2)
    acts = {}
    for i, a in enumerate(ACTS):
        calls = 2 if a in ("MPI_Init", "MPI_Finalize") else 300 * (1 + i % 4)
        t = mpi * (0.5 ** (i + 1)) if i else 0.8
        nb = calls * 8192 * (i % 3) if a not in ("MPI_Init", "MPI_Finalize", "MPI_Comm_rank") else 0
        acts[a] = {"ncalls": calls, "nbytes": nb, "tsum": t, "tmin": t / calls / 2,
                   "tmax": t / calls * 4}
    regions = [{"id": 0, "name": "ballast_main", "parent": -1, "count": 1, "wtime": wall,
                "mtime": mpi, "cputime": wall}]
    regions.append({"id": 1, "name": "step", "parent": 0, "count": 300, "wtime": wall * 0.95,
                    "mtime": mpi * 0.9, "cputime": wall * 0.9})
    for k, ph in enumerate(["step/integrate", "step/halo", "step/forces", "step/migrate"]):
        regions.append({"id": 2 + k, "name": ph, "parent": 1, "count": 300,
                        "wtime": wall * (0.1, 0.3, 0.5, 0.05)[k] * (0.8 + 0.4 * load),
                        "mtime": mpi * (0.0, 0.7, 0.0, 0.2)[k], "cputime": wall * 0.1})
    for b in range(18):
        regions.append({"id": 6 + b, "name": "app/block_%d" % (r * 16 + b), "parent": 4,
                        "count": 300, "wtime": rnd.uniform(0.5, 2.0) * load, "mtime": 0.0,
                        "cputime": 1.0})
    partners = {}
    for j in neighbours(r, dims):
        big = 1 if abs(j - r) == 1 else 4
        partners[str(j)] = {"bytes": 300 * 65536 // big + rnd.randrange(4096), "msgs": 300,
                            "rbytes": 300 * 65536 // big, "rmsgs": 300}
    lib = {"MPI_Allgather": {"ncalls": 300, "nbytes": 300 * 16 * n, "tsum": 0.4, "tmin": 1e-4,
                             "tmax": 0.01}}
    return {"rank": r, "wall": wall, "mpi_time": mpi, "cputime": wall, "threads": 1,
            "ballast_work": 0.9 + 0.1 * load, "ballast_wait": 0.3,
            "activities": acts, "library": lib, "regions": regions, "partners": partners,
            "run": {"host": "node%03d" % (r // 32), "pid": 1000 + r},
            "lb_series": {"seconds": 1.2 + 0.1 * load, "seconds_define": 0.5,
                          "seconds_deciding": 0.3, "seconds_remapping": 0.4 + 0.1 * load}}


def series(n, rnd, steps, remap_steps, ntasks, root, detail):
    first, cnt, tmax, tavg, imb, judged = [], [], [], [], [], []
    level = 1.9
    for s in range(1, steps + 1):
        if s - 1 in remap_steps:
            level = 1.9 if False else max(1.04, level / 1.7)
        avg = 0.40 + rnd.uniform(-0.01, 0.01)
        mx = avg * (level + rnd.uniform(-0.03, 0.03))
        first.append(s)
        cnt.append(1)
        tmax.append(round(mx, 6))
        tavg.append(round(avg, 6))
        imb.append(round(mx / avg, 4))
        judged.append(round(level, 4) if s > 25 and (s - 25) % 1 == 0 else 0)
    marks = []
    for k, s in enumerate(remap_steps):
        before = 1.9 / (1.7 ** k)
        after = max(1.04, before / 1.7)
        marks.append({"step": s, "committed": True, "reason": "imbalanced",
                      "tasks": ntasks // (4 + 4 * k), "bytes": ntasks // (4 + 4 * k) * 34000,
                      "seconds_mapping": 0.8, "seconds_migrating": 0.3,
                      "imbalance_before": round(before, 4), "imbalance_predicted": 1.03,
                      "imbalance_after": round(after, 4), "gain_predicted": 0.4 * (before - 1) * 100,
                      "tmax_before": 0.4 * before, "tavg_before": 0.4,
                      "tmax_after": 0.4 * after, "tavg_after": 0.4})
    snaps = []
    owner = [min(n - 1, t * n // ntasks) for t in range(ntasks)]
    for k, s in enumerate([0] + remap_steps):
        if k:
            for t in rnd.sample(range(ntasks), ntasks // (4 + 4 * (k - 1))):
                owner[t] = rnd.randrange(n)
        per_rank = [0] * n
        for o in owner:
            per_rank[o] += 1
        snap = {"step": s, "ntasks": ntasks, "detail": detail, "per_rank": per_rank}
        if detail:
            if k == 0:
                snap["keys"] = ["%s/blk_%d" % (root, t) for t in range(ntasks)]
            snap["owner"] = list(owner)
        else:
            bins, own, share = 1024, [], []
            for b in range(bins):
                part = owner[ntasks * b // bins:ntasks * (b + 1) // bins]
                best = max(set(part), key=part.count)
                own.append(best)
                share.append(round(part.count(best) / len(part), 3))
            snap["owner"], snap["share"] = own, share
        snaps.append(snap)
    return {"root": root, "ranks": n, "mode": "over-decomposition", "strategy": "twophase",
            "step_time": "tasks", "incomplete": False,
            "policy": {"mode": "auto", "warmup": 5, "window": 20, "threshold": 1.1,
                       "outlier": 2, "horizon": 100},
            "steps": {"total": steps, "stride": 1, "first": first, "n": cnt, "tmax": tmax,
                      "tavg": tavg, "imbalance": imb, "judged": judged,
                      "wmax": [round(2.5 * t, 6) for t in tmax],
                      "wavg": [round(2.5 * t, 6) for t in tavg]},
            "remaps": marks, "remaps_dropped": 0,
            "node_of_rank": [r // 32 for r in range(n)],
            "task_map": {"detail_limit": 4096, "bins": 1024, "snapshots_dropped": 0,
                         "snapshots": snaps}}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--ranks", type=int, default=1024)
    a = ap.parse_args()
    n = a.ranks
    rnd = random.Random(17)
    dims = grid(n)
    loads = [0.6 + 0.8 * ((r * 7919) % n) / n for r in range(n)]
    prof = {"ballast_profile": {
        "version": 1, "command": "./synthetic-app --ranks %d" % n, "ranks": n, "wall": 120.5,
        "clock": "tsc", "hwc": [],
        "ranks_data": [rank_part(r, n, rnd, dims, loads[r]) for r in range(n)],
        "load_balancing": {"contexts": 2, "calls": 600, "steps": 600, "remaps": 4,
                           "failed_remaps": 0, "tasks_moved": 9000, "bytes_moved": 3.0e8,
                           "seconds_mapping": 3.2, "seconds_migrating": 1.2,
                           "imbalance_first": 1.9, "imbalance_last": 1.06,
                           "imbalance_before": 1.12, "imbalance_predicted": 1.03,
                           "imbalance_after": 1.06},
        "lb_series": {"contexts": [series(n, rnd, 300, [25, 80], 16384, "app", False),
                                   series(n, rnd, 300, [30, 140], 2048, "aux", True)]},
        "run": {"ballast": "0.1.0", "mpi": "Open MPI v4.1.4", "date": "2026-11-24T00:00:00Z",
                "settings": {"BALLAST_LB": "auto", "BALLAST_PROFILE": "big.json"}},
        "assertions": {"assertions": [
            {"text": "MPITime / WallTime < 0.5", "where": "halo.c:42", "checks": 300,
             "passes": 300, "verdict": "held"},
            {"text": "imbalance < 1.1", "where": "region step",
             "checks": {"min": 300, "max": 300}, "passes": {"min": 120, "max": 290},
             "verdict": "failed",
             "first_failure": {"rank": 17, "instance": 3, "values": {"imbalance": 1.9}}},
            {"text": "time(MPI_Allreduce) < 10 milliseconds", "where": "region init",
             "checks": 0, "passes": 0, "verdict": "never checked"}]}}}
    with open(a.out, "w") as f:
        json.dump(prof, f, separators=(",", ":"))


if __name__ == "__main__":
    main()
