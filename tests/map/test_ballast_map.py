#!/usr/bin/env python3
"""ballast-map on small inputs: figures checked against values computed here
independently (round-robin and block on a 7-point stencil), a .grf written
here and read back, the tool's own .grf output read back, an arch file, and
malformed .grf / arch / options, each with a clear message and exit code."""
import json
import os
import subprocess
import sys
import tempfile

TOOL = sys.argv[1]
fails = 0


def check(cond, what):
    global fails
    if not cond:
        print("FAIL:", what)
        fails += 1


def run(*args):
    p = subprocess.run([TOOL, *args], capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


def figures(rc_out):
    rc, out, err = rc_out
    check(rc == 0, "exit 0, got %d: %s" % (rc, err))
    return {o["strategy"]: o for o in map(json.loads, out.splitlines())}


# Independent figures: 7-point 8x8x4 stencil (face bytes 4) onto 2 nodes x
# "pack:2 core:2" (8 slots): slot s -> node s//4, package (s%4)//2.
NX, NY, NZ, NS = 8, 8, 4, 8


def dist(a, b):
    if a == b:
        return 0
    if a // 4 != b // 4:
        return 16
    if (a % 4) // 2 != (b % 4) // 2:
        return 6
    return 1


def expect(slot_of):
    cut = hop = inter = 0.0
    for z in range(NZ):
        for y in range(NY):
            for x in range(NX):
                v = x + NX * (y + NY * z)
                for (dx, dy, dz) in ((1, 0, 0), (0, 1, 0), (0, 0, 1)):
                    X, Y, Z = x + dx, y + dy, z + dz
                    if X >= NX or Y >= NY or Z >= NZ:
                        continue
                    u = X + NX * (Y + NY * Z)
                    a, b = slot_of(v), slot_of(u)
                    if a != b:
                        cut += 4
                    if a // 4 != b // 4:
                        inter += 4
                    hop += 4 * dist(a, b)
    return cut, hop, inter


n = NX * NY * NZ
f = figures(run("--stencil", "7:8x8x4", "--nodes", "2", "--node-topo", "pack:2 core:2",
                "--json"))
check(set(f) == {"twophase", "tleaf", "block", "roundrobin", "random"}, "all strategies")
for o in f.values():
    for key in ("strategy", "max_avg_load", "edge_cut", "hop_bytes", "internode_volume",
                "seconds"):
        check(key in o, "json key " + key)
for name, slot_of in (("roundrobin", lambda v: v % NS), ("block", lambda v: v // (n // NS))):
    cut, hop, inter = expect(slot_of)
    check(abs(f[name]["edge_cut"] - cut) < 1e-6, "%s edge cut %g vs %g" % (name, f[name]["edge_cut"], cut))
    check(abs(f[name]["hop_bytes"] - hop) < 1e-6, "%s hop-bytes %g vs %g" % (name, f[name]["hop_bytes"], hop))
    check(abs(f[name]["internode_volume"] - inter) < 1e-6, "%s inter-node" % name)
    check(abs(f[name]["max_avg_load"] - 1.0) < 1e-12, "%s balanced" % name)
check(f["twophase"]["hop_bytes"] < f["block"]["hop_bytes"], "two-phase beats block")
check(f["twophase"]["max_avg_load"] <= 1.03 + 1e-9, "two-phase balanced")

# The human-readable table has the same numbers.
rc, out, err = run("--stencil", "7:8x8x4", "--nodes", "2", "--node-topo", "pack:2 core:2",
                   "--strategies", "roundrobin")
check(rc == 0 and "roundrobin" in out and "%g" % expect(lambda v: v % NS)[1] in out,
      "table shows round-robin hop-bytes: " + out)

with tempfile.TemporaryDirectory() as d:
    # A .grf written here: a 4-cycle with weights, base 1 and vertex weights.
    grf = os.path.join(d, "ring.grf")
    with open(grf, "w") as fh:
        fh.write("0\n4 8\n1 011\n"
                 "5 2 10 2 1 4\n"
                 "5 2 10 1 1 3\n"
                 "1 2 1 2 10 4\n"
                 "1 2 1 1 10 3\n")
    f = figures(run("--grf", grf, "--nodes", "2", "--node-topo", "pack:1 core:1", "--json",
                    "--strategies", "twophase,roundrobin"))
    # Round-robin: 1,3 on node 0, 2,4 on node 1: cut = all edges but none
    # shared: 10 + 1 + 1 + 10 = 22.
    check(abs(f["roundrobin"]["edge_cut"] - 22) < 1e-9, "grf round-robin cut")
    # Balance first: work 5,5,1,1 splits 6/6 only as {1,3|2,4} (cut 22) or
    # {1,4|2,3} (cut 20); two-phase must find the cheaper one.
    check(abs(f["twophase"]["edge_cut"] - 20) < 1e-9, "grf two-phase cut %g" % f["twophase"]["edge_cut"])
    check(abs(f["twophase"]["max_avg_load"] - 1.0) < 1e-9, "grf two-phase load")
    # The tool's own .grf output reads back to the same figures.
    out_grf = os.path.join(d, "st.grf")
    a = figures(run("--stencil", "27:6", "--nodes", "2", "--json", "--save-grf", out_grf,
                    "--strategies", "block"))
    b = figures(run("--grf", out_grf, "--nodes", "2", "--json", "--strategies", "block"))
    check(abs(a["block"]["hop_bytes"] - b["block"]["hop_bytes"]) < 1e-9, "saved grf round trip")
    # An arch file: a 2x2 mesh of single-core nodes.
    arch = os.path.join(d, "mesh.tgt")
    with open(arch, "w") as fh:
        fh.write("mesh2D 2 2\n")
    f = figures(run("--stencil", "7:4x4x1", "--arch", arch, "--node-topo", "pack:1 core:1",
                    "--json", "--strategies", "block"))
    check(f["block"]["nodes"] == 4, "nodes from the arch")
    # Block on 4 nodes of one core = 4 rows of 4; rows 0-1, 1-2, 2-3 adjacent
    # except 1-2, which is 2 hops in a 2x2 mesh (nodes 1 and 2 are diagonal).
    check(abs(f["block"]["hop_bytes"] - (4 * 4 * 16 * 2 + 4 * 4 * 32)) < 1e-9,
          "mesh hop-bytes %g" % f["block"]["hop_bytes"])
    # Malformed inputs: clear message, non-zero exit, no crash.
    bad_grf = {
        "truncated.grf": ("0\n4 8\n0 000\n2 1 3\n2 0\n" + " " * 16, "end of file"),
        "short.grf": ("0\n4 8\n0 000\n2 1 3\n2 0\n", "the header announces"),
        "asym.grf": ("0\n3 4\n0 000\n2 1 2\n1 0\n1 1\n", "not symmetric"),
        "range.grf": ("0\n2 2\n0 000\n1 5\n1 0\n", "not a vertex"),
        "header.grf": ("1\n2 2\n0 000\n1 1\n1 0\n", "version"),
        "garbage.grf": ("0\n2 two\n0 000\n", "not an integer"),
        "count.grf": ("0\n2 4\n0 000\n1 1\n1 0\n", "arcs"),
        "loop.grf": ("0\n2 2\n0 000\n1 0\n1 1\n", "loop"),
    }
    for name, (text, msg) in bad_grf.items():
        path = os.path.join(d, name)
        with open(path, "w") as fh:
            fh.write(text)
        rc, out, err = run("--grf", path, "--nodes", "2")
        check(rc != 0 and rc < 128, "%s: exit %d" % (name, rc))
        check("malformed .grf" in err and msg in err, "%s: message %r" % (name, err))
    for text in ("tleaf 3 4 x\n", "nosucharch 4\n", ""):
        with open(arch, "w") as fh:
            fh.write(text)
        rc, out, err = run("--stencil", "7:4", "--arch", arch)
        check(rc != 0 and rc < 128, "bad arch %r: exit %d" % (text, rc))
        check("not a valid SCOTCH architecture file" in err, "bad arch message %r" % err)
    rc, out, err = run("--stencil", "7:4", "--arch", os.path.join(d, "missing.tgt"))
    check(rc != 0 and "cannot open the SCOTCH architecture file" in err, "missing arch")
    rc, out, err = run("--grf", os.path.join(d, "missing.grf"))
    check(rc != 0 and "cannot open" in err, "missing grf")
    rc, out, err = run("--stencil", "9:4")
    check(rc == 2 and "--stencil wants" in err, "bad stencil")
    rc, out, err = run("--stencil", "7:4", "--node-topo", "bogus:2")
    check(rc != 0 and "rejects the synthetic topology" in err, "bad node topology")
    rc, out, err = run("--stencil", "7:4", "--strategies", "metis")
    check(rc == 2 and "unknown strategy" in err, "bad strategy")

if fails:
    sys.exit(1)
print("PASS map_tool")
