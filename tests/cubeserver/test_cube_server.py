#!/usr/bin/env python3
"""ballast-cube answers every query with the values the generator knows, on
1 and 2 ranks with every strategy, and the same text everywhere.

Usage: test_cube_server.py MPIEXEC BALLAST_CUBE

Profile A: a random call tree of 41 cnodes (cnode ids permuted, location ids
shuffled in the document), metrics of every data type Score-P writes
(UINT64 and INT64 exclusive, DOUBLE inclusive with a DOUBLE exclusive child,
MINDOUBLE, MAXDOUBLE, a sparse DOUBLE, a derived metric without data).
Profile B: the same tree with other values and one call path renamed (so
A's has no match in B and counts 0 there, as in cube_diff). Values are
multiples of 1/8, so every sum is exact and the results must be equal to
the last bit whatever the order of summation.
"""
import os
import random
import struct
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cubegen  # noqa: E402

STRATEGIES = ["plain", "roundrobin", "random", "chain", "ballast"]
# Independent runs go this many at a time: a run is mostly mpiexec starting
# and ending ranks (waiting, not computing), so they overlap well.
PARALLEL = 4
# A run with an error query ends with status 1 on every rank after
# MPI_Finalize, and mpiexec then "aborts" the job: SIGCONT to the ranks
# still there, a sleep of this many seconds, SIGTERM, a sleep, SIGKILL.
# Only rank 0 prints, and it flushes stdout after each query: no need to
# wait (Open MPI's default is 1).
ENV = dict(os.environ, OMPI_MCA_odls_base_sigkill_timeout="0")
AGG = {"UINT64": sum, "INT64": sum, "DOUBLE": sum, "MINDOUBLE": min, "MAXDOUBLE": max}


def run_all(cmds, timeout=120):
    """subprocess.run of every command (text output captured), PARALLEL at a
    time; the results in the commands' order."""
    with ThreadPoolExecutor(PARALLEL) as ex:
        return list(ex.map(lambda c: subprocess.run(c, capture_output=True, text=True,
                                                     timeout=timeout, env=ENV), cmds))


def build(seed, rename=None):
    rnd = random.Random(seed)
    tree = cubegen.make_tree("random", 41, seed=7)
    if rename is not None:
        tree.names[rename] = "renamed"
    ids = [(i * 17 + 5) % 41 + 100 for i in range(tree.n)]
    lids = [4, 1, 5, 0, 3, 2]
    locs = [(lids[k], k // 2, k % 2, "thread %d" % k) for k in range(6)]
    order = sorted(range(6), key=lambda k: lids[k])  # row position -> doc location
    n, L = tree.n, 6
    V = {}
    V["visits"] = [[rnd.randrange(0, 100) for _ in range(L)] for _ in range(n)]
    V["time"] = [[rnd.randrange(0, 400) / 8 for _ in range(L)] for _ in range(n)]
    V["mpi"] = [[rnd.randrange(0, 200) / 4 for _ in range(L)] for _ in range(n)]
    V["min_time"] = [[rnd.randrange(1, 800) / 8 for _ in range(L)] for _ in range(n)]
    V["max_time"] = [[rnd.randrange(1, 800) / 8 for _ in range(L)] for _ in range(n)]
    V["delta"] = [[rnd.randrange(-50, 50) for _ in range(L)] for _ in range(n)]
    present = set(rnd.sample(range(n), 15))
    V["sparse"] = [[rnd.randrange(0, 80) / 2 if x in present else 0.0 for _ in range(L)]
                   for x in range(n)]
    # V[m][x][k] is the exclusive value at doc location k; rows are in
    # location-id order.
    incl_time = [[sum(V["time"][y][k] for y in tree.subtree(x)) for k in range(L)]
                 for x in range(n)]

    def rowf(values, fmt):
        return lambda x: b"".join(struct.pack(fmt, values[x][k]) for k in order)

    metrics = [
        dict(id=0, uniq="visits", type="EXCLUSIVE", dtype="UINT64", uom="occ",
             row=rowf(V["visits"], "<Q")),
        dict(id=1, uniq="time", type="INCLUSIVE", dtype="DOUBLE", row=rowf(incl_time, "<d")),
        dict(id=2, uniq="mpi", type="EXCLUSIVE", dtype="DOUBLE", parent=1,
             row=rowf(V["mpi"], "<d")),
        dict(id=3, uniq="min_time", type="EXCLUSIVE", dtype="MINDOUBLE",
             row=rowf(V["min_time"], "<d")),
        dict(id=4, uniq="max_time", type="EXCLUSIVE", dtype="MAXDOUBLE",
             row=rowf(V["max_time"], "<d")),
        dict(id=6, uniq="delta", type="EXCLUSIVE", dtype="INT64", row=rowf(V["delta"], "<q")),
        dict(id=9, uniq="sparse", type="EXCLUSIVE", dtype="DOUBLE", present=present,
             row=rowf(V["sparse"], "<d")),
        dict(id=5, uniq="ratio", type="POSTDERIVED", dtype="DOUBLE"),
    ]
    return tree, ids, locs, metrics, V


class Expect:
    def __init__(self, tree, locs, V, dtypes):
        self.t, self.locs, self.V, self.dt = tree, locs, V, dtypes
        self.kidx = {l[0]: k for k, l in enumerate(locs)}  # location id -> doc index

    def cell(self, m, x, k, incl):
        if not incl:
            return self.V[m][x][k]
        vals = [self.V[m][y][k] for y in self.t.subtree(x)]
        return AGG[self.dt[m]](vals)

    def value(self, m, x, incl, sel=None):
        ks = [self.kidx[i] for i in sel] if sel else range(len(self.locs))
        return AGG[self.dt[m]]([self.cell(m, x, k, incl) for k in ks])

    def locs_of(self, m, x, incl, sel=None):
        ids = sel if sel else sorted(self.kidx)
        return [(i, self.cell(m, x, self.kidx[i], incl)) for i in ids]

    def top(self, m, k, incl):
        v = [(self.value(m, x, incl), x) for x in range(self.t.n)]
        v.sort(key=lambda p: (-p[0], p[1]))
        return v[:k]


def queries(ta, ea, eb, tb_paths):
    """(query, expected lines) pairs."""
    q = []
    mid = max(range(ta.n), key=lambda x: (len(ta.subtree(x)) > 3 and ta.parent[x] >= 0,
                                          -x))
    leaf = [x for x in range(ta.n) if not ta.children[x]][0]
    for m in ["visits", "time", "mpi", "min_time", "max_time", "delta", "sparse"]:
        for x in [0, mid, leaf]:
            p = ta.path(x)
            for incl in (True, False):
                verb = "incl" if incl else "excl"
                q.append(("%s %s %s" % (verb, m, p), ["value %r" % float(ea.value(m, x, incl))]))
            q.append(("incl %s %s @3,0-1" % (m, p),
                      ["value %r" % float(ea.value(m, x, True, [3, 0, 1]))]))
            q.append(("locs %s %s incl @2,5" % (m, p),
                      ["loc %d %r" % (i, float(v)) for i, v in ea.locs_of(m, x, True, [2, 5])]))
        q.append(("locs %s id:%d excl" % (m, 100 + (mid * 17 + 5) % 41),
                  ["loc %d %r" % (i, float(v)) for i, v in ea.locs_of(m, mid, False)]))
        for incl in (True, False):
            q.append(("top 4 %s %s" % (m, "incl" if incl else "excl"),
                      ["top %d %r %s" % (i + 1, float(v), ta.path(x))
                       for i, (v, x) in enumerate(ea.top(m, 4, incl))]))
    for x in [0, mid, leaf]:
        p = ta.path(x)
        for m in ["time", "visits"]:
            a = ea.value(m, x, True)
            b = eb.value(m, tb_paths[p], True) if p in tb_paths else 0
            q.append(("diff incl %s %s" % (m, p), ["diff %r %r %r" % (float(a), float(b),
                                                                     float(a - b))]))
    errors = ["incl nosuch main", "incl time main/nowhere", "incl ratio main",
              "locs time main @99", "top 0 time", "frobnicate"]
    for e in errors:
        q.append((e, ["error"]))
    return q


def parse_blocks(text):
    blocks, cur = [], None
    for line in text.splitlines():
        if line.startswith("> "):
            cur = [line[2:], []]
            blocks.append(cur)
        elif cur is not None:
            cur[1].append(line)
    return blocks


def check_run(out, qs, np_, ntot):
    blocks = parse_blocks(out)
    got = {b[0]: b[1] for b in blocks}
    bad = 0
    for query, want in qs:
        have = [l for l in got.get(query, ["(no answer)"]) if not l.startswith("time ")]
        if want == ["error"]:
            ok = len(have) == 1 and have[0].startswith("error ")
        else:
            ok = len(have) == len(want) and all(
                parse_vals(h) == parse_vals(w) for h, w in zip(have, want))
        if not ok:
            bad += 1
            if bad < 8:
                print("MISMATCH %r: have %r want %r" % (query, have, want))
    mem = got.get("mem", [])
    owned = sum(int(l.split()[-1]) for l in mem)
    if len(mem) != np_ or owned != ntot or any(int(l.split()[4]) <= 0 for l in mem):
        print("bad mem report: %r" % mem)
        bad += 1
    return bad


def parse_vals(line):
    """The line's words, numbers as floats (so 3 and 3.0 are equal)."""
    out = []
    for p in line.split():
        try:
            out.append(float(p))
        except ValueError:
            out.append(p)
    return out


def skewed(mpiexec, tool, d, pa, pb, qs, ta):
    """A skewed query load (one subtree asked 40 times), `rebalance` (rows
    move to the owners ballast's remap chose), then every query again: the
    answers are unchanged, and the ranks still own every cnode once."""
    script = os.path.join(d, "skew.txt")
    hot = ta.path(ta.children[0][0])
    with open(script, "w") as f:
        f.write("locs visits %s incl\n" % hot * 40)
        f.write("rebalance\n")
        for query, _ in qs:
            f.write(query + "\n")
        f.write("rebalance\nmem\n")
    bad = 0
    strategies = ("plain", "ballast")
    runs = run_all([[mpiexec, "-n", "2", "--oversubscribe", tool, "-s", s, "-q", script, pa, pb]
                    for s in strategies])
    for s, r in zip(strategies, runs):
        reb = [l for l in r.stdout.splitlines() if l.startswith("rebalance moved")]
        n = check_run(r.stdout, qs, 2, ta.n) + (len(reb) != 2) + (r.returncode != 1)
        print("skewed load, rebalance, %-8s np=2: %d wrong; %s" % (s, n, "; ".join(reb)))
        bad += n
    return bad


def big_tree(mpiexec, tool, d):
    """A binary tree of 1,023 cnodes: round-robin cuts every call, so more
    values are in flight than the server's rings hold (64 each)."""
    t = cubegen.make_tree("binary", 1023)
    L = 3
    val = [[(x * 7 + k * 3) % 11 / 4 for k in range(L)] for x in range(t.n)]
    m = [dict(id=0, uniq="time", type="EXCLUSIVE", dtype="DOUBLE",
              row=lambda x: struct.pack("<%dd" % L, *val[x]))]
    path = os.path.join(d, "big.cubex")
    cubegen.write_cubex(path, t, list(range(t.n)), [(k, k, 0, "t") for k in range(L)], m)
    incl = [sum(sum(val[y]) for y in t.subtree(x)) for x in range(t.n)]
    x1 = t.children[0][1]
    want = ["value %r" % incl[0], "value %r" % incl[x1]]
    top = sorted(range(t.n), key=lambda x: (-incl[x], x))[:3]
    want += ["top %d %r %s" % (i + 1, incl[x], t.path(x)) for i, x in enumerate(top)]
    bad = 0
    setups = [(np_, s) for np_ in (1, 2) for s in STRATEGIES]
    runs = run_all([[mpiexec, "-n", str(np_), "--oversubscribe", tool, "-s", s,
                     "-e", "incl time main", "-e", "incl time " + t.path(x1),
                     "-e", "top 3 time incl", path] for np_, s in setups])
    for (np_, s), r in zip(setups, runs):
        have = [l for l in r.stdout.splitlines() if not l.startswith("> ")]
        ok = r.returncode == 0 and [parse_vals(h) for h in have] == [parse_vals(w)
                                                                     for w in want]
        print("binary 1,023 %-10s np=%d: %s" % (s, np_, "ok" if ok else "WRONG"))
        if not ok:
            print("  have %r\n  want %r\n%s" % (have, want, r.stderr))
            bad += 1
    return bad


def forest(mpiexec, tool, d):
    """Two roots (main and other): the inclusive rows' order restarts per
    root; exclusive values of the inclusive metric and top-k over both."""
    t = cubegen.Tree([-1, 0, 1, 1, 0, -1, 5, 6, 5],
                     ["main", "a", "b", "c", "d", "other", "e", "f", "g"])
    ex = [float(i + 1) for i in range(t.n)]
    incl = [sum(ex[y] for y in t.subtree(x)) for x in range(t.n)]
    m = [dict(id=0, uniq="t", type="INCLUSIVE", dtype="DOUBLE",
              row=lambda x: struct.pack("<2d", incl[x], 2 * incl[x])),
         dict(id=1, uniq="e", type="EXCLUSIVE", dtype="DOUBLE",
              row=lambda x: struct.pack("<2d", ex[x], 2 * ex[x]))]
    path = os.path.join(d, "forest.cubex")
    cubegen.write_cubex(path, t, [10 + i for i in range(t.n)], [(0, 0, 0, "a"), (1, 1, 0, "b")], m)
    q, want = [], []
    for x in range(t.n):
        q += ["-e", "incl t " + t.path(x), "-e", "excl t " + t.path(x), "-e", "incl e " + t.path(x)]
        want += ["value %r" % (3 * incl[x]), "value %r" % (3 * ex[x]), "value %r" % (3 * incl[x])]
    q += ["-e", "top 3 t excl", "-e", "top 3 e incl"]
    for vals in ([3 * v for v in ex], [3 * v for v in incl]):
        order = sorted(range(t.n), key=lambda x: (-vals[x], x))[:3]
        want += ["top %d %r %s" % (i + 1, vals[x], t.path(x)) for i, x in enumerate(order)]
    bad = 0
    setups = [(np_, s) for np_ in (1, 2) for s in STRATEGIES]
    runs = run_all([[mpiexec, "-n", str(np_), "--oversubscribe", tool, "-s", s] + q + [path]
                    for np_, s in setups])
    for (np_, s), r in zip(setups, runs):
        have = [l for l in r.stdout.splitlines() if not l.startswith("> ")]
        ok = r.returncode == 0 and [parse_vals(h) for h in have] == [parse_vals(w)
                                                                     for w in want]
        print("forest %-10s np=%d: %s" % (s, np_, "ok" if ok else "WRONG"))
        if not ok:
            print("  have %r\n  want %r\n%s" % (have, want, r.stderr))
            bad += 1
    return bad


def main(argv):
    mpiexec, tool = argv[1], argv[2]
    ta, ids, locs, metrics, VA = build(11)
    leaf = [x for x in range(ta.n) if not ta.children[x]][-1]
    tb, idsb, locsb, metricsb, VB = build(12, rename=leaf)
    dt = {m["uniq"]: m["dtype"] for m in metrics}
    ea, eb = Expect(ta, locs, VA, dt), Expect(tb, locsb, VB, dt)
    tb_paths = {tb.path(x): x for x in range(tb.n)}
    qs = queries(ta, ea, eb, tb_paths)
    failures = 0
    with tempfile.TemporaryDirectory() as d:
        pa, pb = os.path.join(d, "a.cubex"), os.path.join(d, "b.cubex")
        cubegen.write_cubex(pa, ta, ids, locs, metrics)
        cubegen.write_cubex(pb, tb, idsb, locsb, metricsb)
        script = os.path.join(d, "q.txt")
        with open(script, "w") as f:
            f.write("# every query of the test\n")
            for query, _ in qs:
                f.write(query + "\n")
            f.write("mem\n")
        texts = {}
        setups = [(np_, s) for np_ in (1, 2) for s in STRATEGIES]
        runs = run_all([[mpiexec, "-n", str(np_), "--oversubscribe", tool, "-s", s, "--seed", "3",
                         "-q", script, pa, pb] for np_, s in setups])
        for (np_, s), r in zip(setups, runs):
            if r.returncode != 1:  # the error queries make the exit status 1
                print("%s on %d: exit %d\n%s" % (s, np_, r.returncode, r.stderr))
                failures += 1
            bad = check_run(r.stdout, qs, np_, ta.n)
            print("%-10s np=%d: %d queries, %d wrong" % (s, np_, len(qs), bad))
            failures += bad
            texts[(s, np_)] = "\n".join(l for l in r.stdout.splitlines()
                                        if not l.startswith("mem "))
        failures += skewed(mpiexec, tool, d, pa, pb, qs, ta)
        ref = texts[("plain", 1)]
        for k, t in texts.items():
            if t != ref:
                print("output of %s on %d ranks differs from plain on 1" % k)
                failures += 1
        failures += big_tree(mpiexec, tool, d)
        failures += forest(mpiexec, tool, d)
    print("PASS" if failures == 0 else "FAIL (%d)" % failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
