#!/usr/bin/env python3
"""The examples' assertion files: ballast-sweep with examples/sweep/sweep.assert
and ballast-md with examples/md/balance.assert parse without a warning, and
every assertion is checked as often as its region runs (3 sweeps, 5 MD steps:
checks 3..3 and 5..5 per rank, the whole run once); verdicts depend on the
machine's speed and are not asserted.

usage: check_examples.py MPIEXEC BALLAST_SWEEP BALLAST_MD EXAMPLES_DIR"""
import re
import subprocess
import sys

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(cmd, afile):
    r = subprocess.run(cmd[:1] + ["-n", "2", "--oversubscribe", "-x",
                                  "BALLAST_ASSERT_FILE=" + afile] + cmd[1:],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, timeout=100)
    print(r.stdout[-3000:], r.stderr[-2000:])
    check(r.returncode == 0, "%s: exit %d" % (cmd[1], r.returncode))
    check("assert:" not in r.stderr, "%s: a warning about the assertions" % cmd[1])
    return r.stdout


def counts(out, afile):
    """line -> (checks_min, checks_max) from the report."""
    res = {}
    for m in re.finditer(r"#  \[\w+\] %s:(\d+): .*\n#         (?:passes \d+\.\.\d+ of checks "
                         r"(\d+)\.\.(\d+)|never checked)" % re.escape(afile), out):
        res[int(m.group(1))] = (int(m.group(2) or 0), int(m.group(3) or 0))
    return res


def main():
    mpiexec, sweep, md, ex = sys.argv[1:5]
    sa = ex + "/sweep/sweep.assert"
    out = run([mpiexec, sweep, "--iters", "3", "--grid", "4x4x40", "--blocks", "4"], sa)
    c = counts(out, sa)
    check(sorted(c) == [4, 7, 9], "sweep: the three assertions %r" % sorted(c))
    check(all(v == (3, 3) for v in c.values()), "sweep: checks 3..3 each %r" % c)
    ma = ex + "/md/balance.assert"
    out = run([mpiexec, md, "--steps", "5", "--particles", "500", "--progress", "0"], ma)
    c = counts(out, ma)
    check(c == {5: (5, 5), 7: (5, 5), 9: (1, 1)}, "md: checks per assertion %r" % c)
    if failures:
        return 1
    print("PASS assert_examples")
    return 0


if __name__ == "__main__":
    sys.exit(main())
