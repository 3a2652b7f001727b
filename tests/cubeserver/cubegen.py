#!/usr/bin/env python3
"""Synthetic Cube4 profiles (.cubex) with values the generator knows.

Written from the format (a POSIX ustar archive; anchor.xml; per metric id N
"N.index" = b"CUBEX.INDEX", uint32 1, uint16 0, uint8 3 (dense) or 1
(sparse: uint32 count and the row positions), and "N.data" = b"CUBEX.DATA"
then rows of little-endian 8-byte values, one per location in location-id
order). Row order: an EXCLUSIVE metric's rows follow the call tree depth
first, an INCLUSIVE metric's rows the root, then all children of a node,
then each child recursively. Independent of ballast-cube's reader.

Used by tests/cubeserver (small profiles, every value checked) and by
bench/cube_server (large profiles streamed row by row).
"""
import io
import random
import struct
import tarfile


class Tree:
    """A call tree in document (depth-first) order: parent[i] < i."""

    def __init__(self, parent, names):
        self.parent = parent
        self.names = names
        self.n = len(parent)
        self.children = [[] for _ in range(self.n)]
        for i, p in enumerate(parent):
            if p >= 0:
                self.children[p].append(i)

    def subtree(self, x):
        out, stack = [], [x]
        while stack:
            y = stack.pop()
            out.append(y)
            stack.extend(reversed(self.children[y]))
        return out

    def path(self, x):
        parts = []
        while x >= 0:
            parts.append(self.names[x])
            x = self.parent[x]
        return "/".join(reversed(parts))

    def wide_order(self):
        """INCLUSIVE row order: per root, the root, then all children of a
        node, then each child recursively (iteratively here)."""
        order = []
        for r in range(self.n):
            if self.parent[r] >= 0:
                continue
            order.append(r)
            stack = [r]
            while stack:
                x = stack.pop()
                order.extend(self.children[x])
                stack.extend(reversed(self.children[x]))
        return order


def make_tree(shape, n, seed=1):
    """binary (complete), linear (a chain), single (root + n-1 leaves) or
    random (seeded), renumbered in document order; names f<bfs index>."""
    rnd = random.Random(seed)
    kids = [[] for _ in range(n)]
    for v in range(1, n):
        if shape == "binary":
            p = (v - 1) // 2
        elif shape == "linear":
            p = v - 1
        elif shape == "single":
            p = 0
        elif shape == "random":
            p = rnd.randrange(v)
        else:
            raise ValueError(shape)
        kids[p].append(v)
    order, stack = [], [0]
    while stack:
        v = stack.pop()
        order.append(v)
        stack.extend(reversed(kids[v]))
    doc = {v: i for i, v in enumerate(order)}
    parent = [-1] * n
    for v in range(n):
        for k in kids[v]:
            parent[doc[k]] = doc[v]
    names = ["f%d" % order[i] for i in range(n)]
    names[0] = "main"
    return Tree(parent, names)


DTYPE_FMT = {"DOUBLE": "<d", "MINDOUBLE": "<d", "MAXDOUBLE": "<d", "UINT64": "<Q",
             "INT64": "<q"}


def esc(s):
    return (s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;"))


def anchor_xml(tree, cnode_ids, locs, metrics, version="4.4"):
    """locs: list of (id, process rank, thread rank, name) in any order;
    metrics: dicts with id, uniq, type, dtype, parent (index or -1)."""
    out = ['<?xml version="1.0" encoding="UTF-8"?>\n', '<cube version="%s">\n' % version,
           '<attr key="CUBE_CT_AGGR" value="SUM"/>\n<doc><mirrors/></doc>\n<metrics>\n']

    def metric(i, ind):
        m = metrics[i]
        out.append('%s<metric id="%d" type="%s">\n' % (ind, m["id"], m["type"]))
        out.append('%s  <disp_name>%s</disp_name><uniq_name>%s</uniq_name>\n'
                   % (ind, esc(m.get("disp", m["uniq"])), esc(m["uniq"])))
        out.append('%s  <dtype>%s</dtype><uom>%s</uom><url></url><descr>d</descr>\n'
                   % (ind, m["dtype"], m.get("uom", "sec")))
        if m["type"] == "POSTDERIVED":
            out.append('%s  <cubepl>${a}</cubepl>\n' % ind)
        for j, mm in enumerate(metrics):
            if mm.get("parent", -1) == i:
                metric(j, ind + "  ")
        out.append('%s</metric>\n' % ind)

    for i, m in enumerate(metrics):
        if m.get("parent", -1) < 0:
            metric(i, "  ")
    out.append('</metrics>\n<program>\n')
    for i in range(tree.n):
        out.append('  <region id="%d" mod="m.c" begin="1" end="2"><name>%s</name>'
                   '<paradigm>user</paradigm><role>function</role><url></url>'
                   '<descr></descr></region>\n' % (i, esc(tree.names[i])))
    # Nested cnodes, iteratively (linear trees are deep).
    stack = [("open", r) for r in reversed(range(tree.n)) if tree.parent[r] < 0]
    while stack:
        what, x = stack.pop()
        if what == "close":
            out.append('</cnode>\n')
            continue
        out.append('<cnode id="%d" calleeId="%d">' % (cnode_ids[x], x))
        if x % 5 == 1:
            out.append('<parameter partype="numeric" parkey="p" parvalue="1"/>')
        stack.append(("close", x))
        stack.extend(("open", k) for k in reversed(tree.children[x]))
    out.append('</program>\n<system>\n<systemtreenode id="0"><name>machine</name>'
               '<class>machine</class>\n')
    by_rank = {}
    for l in locs:
        by_rank.setdefault(l[1], []).append(l)
    for g, rank in enumerate(sorted(by_rank)):
        out.append('<systemtreenode id="%d"><name>node%d</name><class>node</class>\n'
                   '<locationgroup id="%d"><name>MPI Rank %d</name><rank>%d</rank>'
                   '<type>process</type>\n' % (g + 1, rank, g, rank, rank))
        for (lid, _, thr, name) in by_rank[rank]:
            out.append('<location id="%d"><name>%s</name><rank>%d</rank><type>thread</type>'
                       '</location>\n' % (lid, esc(name), thr))
        out.append('</locationgroup></systemtreenode>\n')
    out.append('</systemtreenode>\n</system>\n</cube>\n')
    return "".join(out).encode()


class RowStream(io.RawIOBase):
    """A file object producing marker + rows lazily (large members)."""

    def __init__(self, marker, rows):
        self.buf = bytearray(marker)
        self.rows = rows

    def readable(self):
        return True

    def readinto(self, b):
        while len(self.buf) < len(b):
            try:
                self.buf += next(self.rows)
            except StopIteration:
                break
        n = min(len(b), len(self.buf))
        b[:n] = self.buf[:n]
        del self.buf[:n]
        return n


def add_member(tf, name, data=None, size=None, stream=None):
    ti = tarfile.TarInfo(name)
    ti.size = len(data) if data is not None else size
    ti.mode = 0o644
    tf.addfile(ti, io.BytesIO(data) if data is not None else io.BufferedReader(stream, 1 << 20))


def write_cubex(path, tree, cnode_ids, locs, metrics, version="4.4"):
    """metrics[i]["row"](x) -> bytes of cnode x's row (location-id order),
    or metrics[i]["present"] (sparse: the cnodes with a row). POSTDERIVED
    metrics get no members."""
    nloc = len(locs)
    with tarfile.open(path, "w", format=tarfile.USTAR_FORMAT) as tf:
        add_member(tf, "anchor.xml", anchor_xml(tree, cnode_ids, locs, metrics, version))
        for m in metrics:
            if m["type"] == "POSTDERIVED":
                continue
            order = tree.wide_order() if m["type"] == "INCLUSIVE" else list(range(tree.n))
            if m.get("present") is not None:
                pos = [p for p, x in enumerate(order) if x in m["present"]]
                idx = (b"CUBEX.INDEX" + struct.pack("<IHB", 1, 0, 1) +
                       struct.pack("<I", len(pos)) + struct.pack("<%dI" % len(pos), *pos))
                rows_order = [order[p] for p in pos]
            else:
                idx = b"CUBEX.INDEX" + struct.pack("<IHB", 1, 0, 3)
                rows_order = order
            add_member(tf, "%d.index" % m["id"], idx)
            size = 10 + len(rows_order) * nloc * 8
            add_member(tf, "%d.data" % m["id"], size=size,
                       stream=RowStream(b"CUBEX.DATA", (m["row"](x) for x in rows_order)))
