#!/usr/bin/env python3
"""Every BALLAST_* variable through one parser (issue 19), seen from outside.

usage: check_env.py MPIEXEC ENV_APP
Runs env_app (tests/common/env_app.c) under mpiexec -n 2 with chosen
variables and checks stderr and stdout on exact values:
  - a bad value gets exactly one message, from rank 0, naming the variable,
    the value and what was expected, and the default stays;
  - a garbage BALLAST_VERBOSE does not hide the other warnings;
  - booleans in their usual spellings (BALLAST_MONITOR=OFF/false);
  - a typo'd variable is warned about once, with the likely name; variables
    of a family documented by another module are not;
  - a bad BALLAST_HW_LAYOUT (trailing junk, overflow) fails discovery on
    every rank with the same explanation.
Any failure prints what differed and exits 1.
"""
import os
import re
import subprocess
import sys

MPIEXEC, APP = sys.argv[1], sys.argv[2]
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("BALLAST_")}
    env["BALLAST_REPORT"] = "none"
    env.update(extra)
    p = subprocess.run([MPIEXEC, "-n", "2", "--oversubscribe", APP], env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, timeout=120)
    check(p.returncode == 0, "exit code %d with %r: %s" % (p.returncode, extra, p.stderr))
    ranks = {}
    for line in p.stdout.splitlines():
        m = re.match(r"rank (\d) (.*)$", line)
        if m:
            ranks[int(m.group(1))] = dict(zip(m.group(2).split()[::2], m.group(2).split()[1::2]))
    check(sorted(ranks) == [0, 1], "both ranks report: %r" % p.stdout)
    return p.stdout, p.stderr, ranks


def ballast_lines(err):
    return [l for l in err.splitlines() if l.startswith("ballast")]


# Garbage everywhere: one message per variable, rank 0 only, defaults kept.
out, err, ranks = run({"BALLAST_VERBOSE": "garbage", "BALLAST_REPORT_TOP": "5abc",
                       "BALLAST_LB_WINDOW": "1000000000", "BALLAST_LB_THRESHOLD": "1.2x",
                       "BALLAST_REGION_CPU": "maybe", "BALLAST_REPORTT": "full",
                       "BALLAST_TRACE_SOMETHING": "1", "BALLAST_ASSERT_X": "y"})
lines = ballast_lines(err)
want = ['BALLAST_VERBOSE="garbage" is not an integer',
        'BALLAST_REPORT_TOP="5abc" is not an integer',
        'BALLAST_LB_WINDOW="1000000000" is out of range (3..10000)',
        'BALLAST_LB_THRESHOLD="1.2x" is not a number',
        'BALLAST_REGION_CPU="maybe" is not a boolean',
        "BALLAST_REPORTT is not a ballast variable; ignored (did you mean BALLAST_REPORT?)"]
for w in want:
    hits = [l for l in lines if w in l]
    check(len(hits) == 1, "exactly one message %r: %r" % (w, lines))
    check(all(l.startswith("ballast[0]: warning:") for l in hits), "from rank 0: %r" % hits)
check(len(lines) == len(want), "no other message: %r" % lines)
check(not any("TRACE_SOMETHING" in l or "ASSERT_X" in l for l in lines),
      "families of other modules are not typos")
for r in (0, 1):
    check(ranks[r]["window"] == "20" and ranks[r]["threshold"] == "1.1",
          "rank %d keeps the policy defaults: %r" % (r, ranks[r]))
    check(ranks[r]["policy"] == "BALLAST_EINVAL", "bad LB variable: BALLAST_EINVAL")

# Valid values are taken; the usual boolean spellings switch monitoring off.
out, err, ranks = run({"BALLAST_LB": "EXPLICIT", "BALLAST_LB_WINDOW": "7",
                       "BALLAST_REPORT": "full", "BALLAST_MONITOR": "OFF"})
check(ballast_lines(err) == [], "valid values: no message: %r" % err)
check("##ballast" not in out, "BALLAST_MONITOR=OFF: no report")
check(ranks[0]["mode"] == "1" and ranks[0]["window"] == "7" and ranks[0]["policy"] == "BALLAST_OK",
      "BALLAST_LB=EXPLICIT, window 7 taken: %r" % ranks[0])
out, err, ranks = run({"BALLAST_REPORT": "Terse", "BALLAST_MONITOR": "false"})
check("##ballast" not in out, "BALLAST_MONITOR=false: no report")
out, err, ranks = run({"BALLAST_REPORT": "Terse", "BALLAST_MONITOR": "yes"})
check("##ballast" in out, "BALLAST_MONITOR=yes, BALLAST_REPORT=Terse: a report")

# Bad layouts: the same explanation on every rank, BALLAST_EPARSE everywhere.
for layout, why in [("nodes=1;ranks_per_node=2junk", "expected \"nodes=N;ranks_per_node=K\""),
                    ("nodes=99999999999;ranks_per_node=1", "integers from 1 to 2147483647"),
                    ("nodes=2;ranks_per_node=2", "describes 4 ranks, the communicator has 2"),
                    ("node_of_rank=0,1,", "expected ',' and a node id"),
                    ("node_of_rank=0,99999999999", "bad node id")]:
    out, err, ranks = run({"BALLAST_HW_LAYOUT": layout})
    for r in (0, 1):
        check(ranks[r]["discover"] == "BALLAST_EPARSE", "%s: rank %d %r" % (layout, r, ranks[r]))
        mine = [l for l in ballast_lines(err) if l.startswith("ballast[%d]: error: hardware" % r)]
        check(len(mine) == 1 and why in mine[0], "%s: rank %d explains: %r" % (layout, r, err))
    expl = {l.split(":", 2)[2] for l in ballast_lines(err) if "hardware discovery" in l}
    check(len(expl) == 1, "%s: every rank says the same: %r" % (layout, expl))
out, err, ranks = run({"BALLAST_HW_LAYOUT": "nodes=2,ranks_per_node=1"})
check(ranks[0]["discover"] == "BALLAST_OK" and ranks[0]["nodes"] == "2", "a good layout: 2 nodes")

if failures:
    print("%d check(s) failed" % len(failures))
    sys.exit(1)
print("check_env: all checks passed")
