#!/usr/bin/env python3
"""ballast-cube on synthetic Cube4 profiles (issue 31's targets).

Usage: run_bench.py MPIEXEC BALLAST_CUBE [--quick] [--no-large] [--skew-only]

1. Linear, single-level and binary call trees of 1,024 cnodes x 10,000
   locations, one EXCLUSIVE DOUBLE metric (80 MB of rows): the root's
   inclusive value, every strategy on 1 and 2 ranks, from a warm page cache
   (the file is read once first). Per configuration RUNS processes (default
   5), each timing 5 queries after opening; figures are medians: the query,
   the open (metadata + owned rows, slowest rank) and their sum. Every
   answer is checked against the value the generator knows.
2. Binary tree of 8,192 cnodes x 40,000 locations (2.6 GB of doubles):
   opened on 1 rank and on 2 ranks (every strategy); each rank's VmHWM and
   the ratio to the 1-rank figure. The file goes to CUBE_BENCH_DIR (default
   /tmp) and is deleted afterwards.
3. A skewed query load on the binary tree on 2 ranks: one subtree asked 20
   times, `rebalance` (ballast-cube as a ballast application: remapped by
   the measured query cost, rows migrated), asked 20 times again.
"""
import array
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "cubeserver"))
import cubegen  # noqa: E402

STRATEGIES = ["plain", "roundrobin", "random", "chain", "ballast"]


def profile(path, shape, n, nloc):
    """Rows cycle through 16 base rows (multiples of 1/4: every sum exact).
    Returns the root's inclusive value."""
    base = [array.array("d", (((l * 7 + j * 13) % 101) / 4 for l in range(nloc)))
            for j in range(16)]
    raw = [b.tobytes() for b in base]
    sums = [sum(b) for b in base]
    t = cubegen.make_tree(shape, n)
    locs = [(l, l // 4, l % 4, "thread %d" % (l % 4)) for l in range(nloc)]
    m = [dict(id=0, uniq="time", type="EXCLUSIVE", dtype="DOUBLE", row=lambda x: raw[x % 16])]
    cubegen.write_cubex(path, t, list(range(n)), locs, m)
    return sum(sums[x % 16] for x in range(n))


def warm(path):
    with open(path, "rb") as f:
        while f.read(1 << 24):
            pass


def run(mpiexec, tool, np_, strategy, path, queries):
    cmd = [mpiexec, "-n", str(np_), "--oversubscribe", tool, "-s", strategy, "--time"]
    for q in queries:
        cmd += ["-e", q]
    r = subprocess.run(cmd + [path], capture_output=True, text=True, timeout=900)
    if r.returncode != 0:
        raise RuntimeError("%s failed: %s" % (" ".join(cmd), r.stderr))
    return r.stdout.splitlines()


def timing(mpiexec, tool, path, want, runs):
    rows = []
    for np_ in (1, 2):
        for s in STRATEGIES:
            qt, ot = [], []
            for _ in range(runs):
                out = run(mpiexec, tool, np_, s, path, ["incl time main"] * 5)
                vals = [float(l.split()[1]) for l in out if l.startswith("value ")]
                if vals != [want] * 5:
                    raise RuntimeError("%s np=%d: root value %r, want %r" % (s, np_, vals, want))
                ot.append(float([l for l in out if l.startswith("open_time")][0].split()[1]))
                qt += [float(l.split()[1]) for l in out if l.startswith("time ")]
            rows.append((np_, s, statistics.median(qt), statistics.median(ot)))
    return rows


def memory(mpiexec, tool, path, want, runs):
    out = {}
    for np_, strategies in ((1, ["plain"]), (2, STRATEGIES)):
        for s in strategies:
            hwm, ot = [], []
            for _ in range(runs):
                lines = run(mpiexec, tool, np_, s, path, ["mem", "incl time main"])
                val = [float(l.split()[1]) for l in lines if l.startswith("value ")]
                if val != [want]:
                    raise RuntimeError("large %s np=%d: %r, want %r" % (s, np_, val, want))
                hwm.append([int(l.split()[4]) for l in lines if l.startswith("mem rank")])
                ot.append(float([l for l in lines if l.startswith("open_time")][0].split()[1]))
            out[(np_, s)] = ([statistics.median(h[r] for h in hwm) for r in range(np_)],
                             statistics.median(ot))
    return out


def skewed(mpiexec, tool, d, runs):
    """A skewed load: 20 queries on main/f1/f3's subtree (mostly one
    rank's), `rebalance`, 20 more; medians of the query times
    before and after, over RUNS processes."""
    path = os.path.join(d, "cube_bench_skew.cubex")
    want = None
    profile(path, "binary", 1024, 10000)
    warm(path)
    t = cubegen.make_tree("binary", 1024)
    x1 = t.children[t.children[0][0]][0]  # main/f1/f3: 255 cnodes
    hot = "incl time " + t.path(x1)
    print("\n## skewed load: `%s` x 20, rebalance, x 20 (binary 1,024 x 10,000, 2 ranks)" % hot)
    print("| strategy | query before (s) | query after (s) | rebalance line |")
    print("|---|---|---|---|")
    try:
        for s in ("ballast", "chain"):
            before, after, line = [], [], ""
            for _ in range(runs):
                out = run(mpiexec, tool, 2, s, path, [hot] * 20 + ["rebalance"] + [hot] * 20)
                cur, skip = before, False
                for l in out:
                    if l.startswith("rebalance moved"):
                        line, cur, skip = l, after, True  # its own time follows
                    elif l.startswith("time ") and skip:
                        skip = False
                    elif l.startswith("time "):
                        cur.append(float(l.split()[1]))
                vals = {l for l in out if l.startswith("value ")}
                if want is None:
                    want = vals
                if len(vals) != 1 or vals != want:
                    raise RuntimeError("skewed: answers differ: %r" % vals)
            print("| %s | %.4f | %.4f | %s |" % (s, statistics.median(before),
                                                 statistics.median(after), line))
    finally:
        os.remove(path)


def main(argv):
    mpiexec, tool = argv[1], argv[2]
    quick = "--quick" in argv
    runs = int(os.environ.get("CUBE_BENCH_RUNS", "2" if quick else "5"))
    d = os.environ.get("CUBE_BENCH_DIR", "/tmp")
    print("# %s, load %s" % (time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                             open("/proc/loadavg").read().split()[0]))
    if "--skew-only" in argv:
        skewed(mpiexec, tool, d, runs)
        return 0
    for shape in ("binary", "linear", "single"):
        path = os.path.join(d, "cube_bench_%s.cubex" % shape)
        want = profile(path, shape, 1024, 10000)
        warm(path)
        print("\n## %s tree, 1,024 cnodes x 10,000 locations, root inclusive value %r" %
              (shape, want))
        print("| ranks | strategy | query (s) | open (s) | open + query (s) |")
        print("|---|---|---|---|---|")
        for np_, s, q, o in timing(mpiexec, tool, path, want, runs):
            print("| %d | %s | %.4f | %.3f | %.3f |" % (np_, s, q, o, q + o))
        sys.stdout.flush()
        os.remove(path)
    skewed(mpiexec, tool, d, runs)
    if "--no-large" in argv:
        return 0
    path = os.path.join(d, "cube_bench_large.cubex")
    t0 = time.time()
    want = profile(path, "binary", 8192, 40000)
    print("\n## binary tree, 8,192 cnodes x 40,000 locations (%.2f GB, written in %.0f s)" %
          (os.path.getsize(path) / 1e9, time.time() - t0))
    try:
        warm(path)
        mem = memory(mpiexec, tool, path, want, max(2, runs // 2))
    finally:
        os.remove(path)
    one = mem[(1, "plain")][0][0]
    print("| ranks | strategy | VmHWM per rank (MiB) | max / 1-rank | open (s) |")
    print("|---|---|---|---|---|")
    for (np_, s), (h, o) in mem.items():
        print("| %d | %s | %s | %.2f | %.2f |" % (np_, s, ", ".join("%.0f" % (x / 1024) for x in h),
                                                  max(h) / one, o))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
