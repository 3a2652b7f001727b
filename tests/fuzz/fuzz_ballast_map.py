#!/usr/bin/env python3
"""A seeded mutation fuzz run of ballast-map's command line: a valid command
(a generated graph or a .grf, a node topology, an architecture file, every
option) with one to three of its values swapped for boundary values or
byte-mutated, options dropped, repeated or unknown, and the .grf /
architecture file mutated too. Fails when ballast-map dies of a signal,
exits with a code other than 0, 1 or 2, prints a sanitizer report, leaves
an error without a message, or runs over 20 s.

  fuzz_ballast_map.py TOOL [SEED [SECONDS]]   (defaults 1, 20)

Iteration i depends on SEED and i only; FUZZ_FROM=i replays from i."""
import os
import random
import subprocess
import sys
import tempfile
import time

TOOL = os.path.abspath(sys.argv[1])
SEED = int(sys.argv[2]) if len(sys.argv) > 2 else 1
BUDGET = float(sys.argv[3]) if len(sys.argv) > 3 else 20.0
FROM = int(os.environ.get("FUZZ_FROM", "0"))

VALUES = ["0", "-1", "1", "2", "abc", "", "nan", "inf", "-inf", "1e308", "1e-320",
          "0x10", "2147483648", "4294967296", "9223372036854775808", "3x", " 4",
          "1,2,", ",", "1,,2", "all", "twophase,block", "random,", "core:20000",
          "pack:2 core:2", "7:2", "27:2x2x1", "7:0", "27:99999999x1x1", "2x2", "1"]

GRF = "0\n4 8\n1 011\n5 2 10 2 1 4\n5 2 10 1 1 3\n1 2 1 2 10 4\n1 2 1 1 10 3\n"
ARCHS = ["cmplt 2\n", "tleaf 1 2 5\n", "mesh2D 2 1\n", "sub 2 0 3 cmplt 4\n",
         "ltleaf 1 2 5 2 1 0\n", "hcub 1\n"]


def mutate_text(rng, s):
    b = bytearray(s.encode())
    for _ in range(rng.randint(1, 3)):
        at = rng.randint(0, len(b))
        op = rng.randrange(5)
        if op == 0 and b:
            b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
        elif op == 1:
            b[at:at] = rng.choice([b" ", b"\n", b"\0", b"-", b"9", b"x"])
        elif op == 2:
            del b[at:at + rng.randint(1, 8)]
        elif op == 3:
            b[at:at] = rng.choice(VALUES).encode()
        else:
            del b[at:]
    return bytes(b)


def command(rng, d, i):
    graph = rng.choice([["--stencil", "7:3x3x2"], ["--md", "3"], ["--grf", "G"]])
    opts = [["--nodes", "2"], ["--node-topo", "pack:1 core:2"], ["--arch", "A"],
            ["--internode-cost", "8"], ["--level-costs", "2"], ["--balrat", "0.05"],
            ["--seed", "3"], ["--strategies", "twophase,block"], ["--md-ppc", "10"],
            ["--md-ratio", "2"], ["--save-grf", "S"], ["--json"], ["--print-hw"]]
    rng.shuffle(opts)
    args = [graph] + opts[:rng.randint(1, len(opts))]
    for _ in range(rng.randint(1, 3)):
        k = rng.randrange(len(args))
        if len(args[k]) == 2:
            op = rng.randrange(3)
            if op == 0:
                args[k] = [args[k][0], rng.choice(VALUES)]
            elif op == 1:
                v = mutate_text(rng, args[k][1]).replace(b"\0", b"")
                args[k] = [args[k][0], v.decode(errors="replace")]
            else:
                args[k] = [args[k][0]]  # the value dropped
        else:
            args.append([rng.choice(["--bogus", "-x", "--nodes"])])
    flat = [a for grp in args for a in grp]
    files = {"G": os.path.join(d, "g%d.grf" % (i % 4)),
             "A": os.path.join(d, "a%d.tgt" % (i % 4)),
             "S": os.path.join(d, "s.grf")}
    with open(files["G"], "wb") as fh:
        fh.write(mutate_text(rng, GRF) if rng.random() < 0.5 else GRF.encode())
    with open(files["A"], "wb") as fh:
        a = rng.choice(ARCHS)
        fh.write(mutate_text(rng, a) if rng.random() < 0.5 else a.encode())
    return [files.get(a, a) for a in flat]


fails = runs = 0
t0 = time.time()
with tempfile.TemporaryDirectory() as d:
    i = FROM
    while time.time() - t0 < BUDGET:
        rng = random.Random(SEED * 1000003 + i)
        args = command(rng, d, i)
        try:
            # in the temporary directory: a mutated --save-grf writes where it runs
            p = subprocess.run([TOOL, *args], capture_output=True, timeout=20, cwd=d)
            rc, err = p.returncode, p.stderr.decode(errors="replace")
            bad = (rc not in (0, 1, 2) or "Sanitizer" in err or "runtime error" in err
                   or (rc != 0 and "ballast" not in err))
        except subprocess.TimeoutExpired:
            rc, err, bad = "timeout", "", True
        if bad:
            fails += 1
            print("FAIL: iteration %d, exit %s: %s\n%s" % (i, rc, args, err[-2000:]))
        runs += 1
        i += 1
print("fuzz_ballast_map: seed %d, %d runs, %d failures" % (SEED, runs, fails))
if fails or runs < 50:
    sys.exit(1)
print("PASS fuzz_ballast_map")
