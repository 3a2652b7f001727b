#!/usr/bin/env python3
"""Every bad input ballast-map hands to SCOTCH and hwloc, every bad .grf and
every bad option value found by hand and by fuzzing (issue 19): each must
end with exit 1 or 2 (never a signal), and a message naming the file, line
and value, or the option and the value. Plus the exact .grf round trip of
--save-grf (zero weights, weights up to 2^53) and its refusals."""
import os
import re
import subprocess
import sys
import tempfile
import time

TOOL = sys.argv[1]
fails = 0


def check(cond, what):
    global fails
    if not cond:
        print("FAIL:", what)
        fails += 1


def run(*args, stdin=None, timeout=60):
    p = subprocess.run([TOOL, *args], capture_output=True, timeout=timeout,
                       input=stdin)
    return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")


def refused(args, pieces, what, code=None, stdin=None):
    """The run fails cleanly and its message holds every piece."""
    rc, out, err = run(*args, stdin=stdin)
    check(rc in (1, 2) if code is None else rc == code,
          "%s: exit %d (%s)" % (what, rc, err.strip()))
    for piece in pieces:
        check(piece in err, "%s: %r not in message %r" % (what, piece, err))
    check("AddressSanitizer" not in err and "runtime error" not in err,
          "%s: sanitizer report %r" % (what, err))


STENCIL = ("--stencil", "7:4", "--strategies", "block")

with tempfile.TemporaryDirectory() as d:
    def write(name, data):
        path = os.path.join(d, name)
        with open(path, "wb") as fh:
            fh.write(data.encode() if isinstance(data, str) else data)
        return path

    # ---- SCOTCH architecture files: file, line and value in the message.
    arch_cases = [
        ("cmplt 0\n", "1", "cmplt size 0"),
        ("cmplt -1\n", "1", "cmplt size -1"),
        ("hcub 0\n", "1", "hcub dimension 0"),
        ("mesh2D 0 0\n", "1", "a dimension 0"),
        ("torus2D nan 2\n", "1", "'nan' is not an integer"),
        ("sub 2 2 10 2 1\n", "1", "unknown architecture '2'"),
        ("sub 2 2 10 cmplt 4\n", "1", "sub terminal 10 does not exist"),
        ("sub 2 1 1\ncmplt 4\n", "1", "sub terminal 1 listed twice"),
        ("ltleaf 2 2 10 2 1\n2 1 1\n", "2", "permutation entry 1 appears twice"),
        ("ltleaf 2 2 10 2 1 3 0 1 2\n", "1", "permutation size 3"),
        ("torus3D 100000 100000 100000\n", "1", "more than 1048576 terminals"),
        ("cmplt 2 junk\n", "1", "unexpected 'junk'"),
        ("cmplt 2\n\n\n7\n", "4", "unexpected '7'"),
        ("tleaf 2 4 0 2 1\n", "1", "tleaf link cost 0"),
        ("varcmplt\n", "1", "'varcmplt' is not accepted"),
        ("meshXD 6 1 1 1 1 1 2\n", "1", "dimension count 6"),
        ("cmplt 2\x00zz\n", "1", "NUL byte"),
        ("", "1", "architecture name was expected"),
    ]
    for i, (text, line, piece) in enumerate(arch_cases):
        path = write("a%d.tgt" % i, text)
        refused(STENCIL + ("--arch", path), [path, "line %s:" % line, piece],
                "arch %r" % text)
    # Good ones still map: the terminal count checked against SCOTCH's.
    for text, nodes in (("sub 2 3 1 cmplt 4\n", 2), ("ltleaf 2 2 10 2 1 2 1 0\n", 4),
                        ("torusXD 5 1 1 1 1 2\n", 2), ("CMPLT 3\n", 3)):
        path = write("good.tgt", text)
        rc, out, err = run(*STENCIL, "--arch", path, "--node-topo", "core:2")
        check(rc == 0 and ("onto %d nodes" % nodes) in out, "arch %r: %d %s" % (text, rc, err))

    # ---- hwloc XML: an object without complete_cpuset crashed hwloc 2.9.
    lst = subprocess.run(["lstopo-no-graphics", "--if", "synthetic", "--input",
                          "pack:2 core:2 pu:1", "--of", "xml", "-"],
                         capture_output=True, text=True)
    xml = lst.stdout
    check(lst.returncode == 0 and "complete_cpuset" in xml, "lstopo makes an XML")
    good = write("good.xml", xml)
    rc, out, err = run(*STENCIL, "--node-topo", good)
    check(rc == 0 and "4 slots" in out, "the good XML maps: %s %s" % (out, err))
    for attr in ("complete_cpuset", "complete_nodeset", "nodeset"):
        # drop the attribute from the first Core only
        bad = re.sub(r'(<object type="Core"[^>]*?) %s="[^"]*"' % attr, r"\1", xml, count=1)
        line = bad[:bad.index('<object type="Core"')].count("\n") + 1
        path = write("no_%s.xml" % attr, bad)
        refused(STENCIL + ("--node-topo", path),
                [path, "line %d:" % line, "'%s'" % attr], "XML without " + attr)
    path = write("nul.xml", xml.replace("Core", "Co\x00re", 1))
    refused(STENCIL + ("--node-topo", path), [path, "NUL byte"], "XML with a NUL")
    path = write("none.xml", '<?xml version="1.0"?>\n<topology version="2.0">\n</topology>\n')
    refused(STENCIL + ("--node-topo", path), [path, "no <object>"], "XML without objects")

    # ---- synthetic nodes: bounded before hwloc spends minutes on them.
    for topo in ("core:20000", "pack:2 core:2048 pu:2", "pack:64 core:64 pu:2"):
        t0 = time.time()
        refused(STENCIL + ("--node-topo", topo), ["'%s'" % topo, "more than 4096"],
                "synthetic " + topo)
        check(time.time() - t0 < 10, "synthetic %s refused quickly" % topo)

    # ---- .grf input.
    path = write("nul.grf", b"0\n2 2\n0 000\n1 1\x00zz\n1 0\n")
    refused(("--grf", path, "--nodes", "2"), [path + ":4:", "neighbour is not an integer"],
            ".grf with a NUL in a number")
    path = write("huge.grf", "0\n1000000000 1000000000\n0 000\n1 1\n1 0\n")
    t0 = time.time()
    refused(("--grf", path), [path + ":3:", "announces 1000000000 vertices",
                              "file has"], ".grf header of 10^9 arcs")
    check(time.time() - t0 < 10, "10^9 arcs refused quickly")
    # Through a pipe the size is unknown: memory grows with what is read.
    refused(("--grf", "/dev/stdin"), ["end of file"], ".grf of 10^9 arcs on a pipe",
            stdin=b"0\n3 2000000000\n0 000\n1 1\n1 0\n")
    for flags, body in (("010", "1 9223372036854775807 1\n1 9223372036854775807 0\n"),
                        ("001", "9223372036854775807 1 1\n1 1 0\n")):
        path = write("big.grf", "0\n2 2\n0 %s\n%s" % (flags, body))
        refused(("--grf", path), [path + ":4:", "9223372036854775807 above 2^53"],
                ".grf weight near 2^63 (%s)" % flags)
    refused(("--grf", d), ["--grf", "'%s'" % d, "directory"], "--grf on a directory", code=2)

    # ---- --save-grf: exact round trip, zero weights and 2^53 included.
    src = ("0\n3 4\n0 011\n"
           "0 1 9007199254740992 1\n"
           "7 2 9007199254740992 0 0 2\n"
           "9007199254740992 1 0 1\n")
    path = write("exact.grf", src)
    out = os.path.join(d, "exact_out.grf")
    rc, _, err = run("--grf", path, "--nodes", "1", "--save-grf", out, "--strategies", "block")
    check(rc == 0, "save exact: %s" % err)
    with open(out) as fh:
        check(fh.read() == src, "the saved .grf is the file read, byte for byte")
    out2 = os.path.join(d, "again.grf")
    rc, _, err = run("--grf", out, "--nodes", "1", "--save-grf", out2, "--strategies", "block")
    with open(out2) as fh:
        check(rc == 0 and fh.read() == src, "and again")
    # Fractional work (the MD generator's) cannot be written exactly.
    out3 = os.path.join(d, "md.grf")
    refused(("--md", "3", "--save-grf", out3), ["--save-grf", "not an integer"],
            "MD graph saved as .grf")
    check(not os.path.exists(out3), "no partial file left")
    refused(STENCIL + ("--save-grf", "/dev/full"), ["--save-grf", "/dev/full"],
            "--save-grf on a full device")
    check(os.path.exists("/dev/full"), "/dev/full left alone")

# ---- option values: each names the option and the value.
options = [
    ("--nodes", "abc"), ("--nodes", "-5"), ("--nodes", "0"), ("--nodes", "3x"),
    ("--balrat", "-1"), ("--balrat", "inf"), ("--balrat", "nan"), ("--balrat", "0"),
    ("--seed", "abc"), ("--seed", "-1"), ("--seed", "4294967296"),
    ("--level-costs", "1,2,"), ("--level-costs", ",1"), ("--level-costs", "1,-2"),
    ("--strategies", ""), ("--strategies", "block,,random"), ("--strategies", "metis"),
    ("--internode-cost", "-3"), ("--internode-cost", "nan"), ("--internode-cost", "inf"),
    ("--internode-cost", "0"), ("--node-topo", ""), ("--arch", ""), ("--grf", ""),
    ("--md-ppc", "0"), ("--md-ratio", "-1"),
]
for opt, val in options:
    args = ("--stencil", "7:4", opt, val) if opt != "--grf" else (opt, val)
    if opt != "--strategies":
        args += ("--strategies", "block")
    refused(args, [opt, "'%s'" % val], "%s %r" % (opt, val), code=2)

if fails:
    sys.exit(1)
print("PASS map_inputs")
