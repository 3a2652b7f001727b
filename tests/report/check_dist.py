#!/usr/bin/env python3
"""ballast-report's quantiles of merged "dist" members, exact: two ranks'
durations (ns) put into buckets by the profile's dist_format (64 per power
of two, exact below 64) are merged by the page's dist_quantiles, which must
answer each quantile within 1/128 of the exact order statistic of the union
(rank max(1, ceil(q n))), min and max exactly, and None for no data.

    check_dist.py BALLAST_REPORT_SCRIPT"""
import importlib.machinery
import importlib.util
import math
import random
import sys


def bucket(v):
    if v < 64:
        return v
    e = v.bit_length() - 1
    return ((e - 5) << 6) | ((v >> (e - 6)) & 63)


def dist_of(vals):
    counts = {}
    for v in vals:
        counts[bucket(v)] = counts.get(bucket(v), 0) + 1
    return {"count": len(vals), "min": min(vals) * 1e-9, "max": max(vals) * 1e-9,
            "buckets": sorted([b, c] for b, c in counts.items())}


def main():
    loader = importlib.machinery.SourceFileLoader("ballast_report", sys.argv[1])
    spec = importlib.util.spec_from_loader("ballast_report", loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    rnd = random.Random(7)
    fails = 0
    samples = {
        "log-normal": ([int(50000 * math.exp(rnd.gauss(0, 1))) for _ in range(3000)],
                       [int(80000 * math.exp(rnd.gauss(0, 0.5))) for _ in range(2000)]),
        "bimodal": ([20000 + rnd.randrange(500) for _ in range(4000)],
                    [3000000 + rnd.randrange(100000) for _ in range(1000)]),
        "small": ([rnd.randrange(64) for _ in range(100)], [7]),
        "single": ([123456789], []),
    }
    qs = (0.0, 0.01, 0.5, 0.9, 0.99, 1.0)
    for name, (a, b) in samples.items():
        union = sorted(a + b)
        dists = [dist_of(a)] + ([dist_of(b)] if b else []) + [None, {"count": 0}]
        got = mod.dist_quantiles(dists, qs)
        for q, g in zip(qs, got):
            k = max(1, min(len(union), math.ceil(q * len(union))))
            x = union[k - 1] * 1e-9
            ok = abs(g - x) <= x / 128 + 1e-15 and (q not in (0.0, 1.0) or g == x)
            if not ok:
                print("CHECK failed: %s q=%g got %r exact %r" % (name, q, g, x), file=sys.stderr)
                fails += 1
    if mod.dist_quantiles([None, {"count": 0, "buckets": []}]) is not None:
        print("CHECK failed: no data gives None", file=sys.stderr)
        fails += 1
    if fails:
        sys.exit(1)
    print("PASS report_dist")


if __name__ == "__main__":
    main()
