#!/usr/bin/env python3
"""Warnings every rank raises alike are printed once per job: 4 ranks, and
the lines of stderr counted for each case:
 - a tool that cannot be loaded (BALLAST_TOOLS=a missing .so): one line;
 - BALLAST_TRACE_BUFFER=1K with the Perfetto writer (and the OTF2 writer
   when built): one line per writer;
 - an assertion file with a syntax error: one line naming file:line, its
   caret shown once;
 - a bad BALLAST_* value: one line;
 - the missing tool on ranks 1 and 2 only (MPMD): one line, by rank 1, with
   "(on 2 of 4 ranks)".
The run itself still succeeds (status 0) in every case.
usage: check_warn_once.py MPIEXEC APP PERFETTO [OTF2]"""
import os
import re
import subprocess
import sys
import tempfile

mpiexec, app, perfetto = sys.argv[1:4]
otf2 = sys.argv[4] if len(sys.argv) > 4 and sys.argv[4] else None
NP = 4
tmp = tempfile.mkdtemp(prefix="ballast_warn_")
missing = os.path.join(tmp, "no_such_tool.so")


def run(extra_env, cmd=None):
    env = dict(os.environ, BALLAST_REPORT="none", BALLAST_VERBOSE="1")
    for k in ("BALLAST_TOOLS", "BALLAST_ASSERT_FILE", "BALLAST_PROFILE"):
        env.pop(k, None)
    env.update(extra_env)
    cmd = cmd or [mpiexec, "-n", str(NP), "--oversubscribe", app]
    r = subprocess.run(cmd, env=env, cwd=tmp, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=120)
    err = r.stderr.decode(errors="replace")
    assert r.returncode == 0, "run failed (%d):\n%s" % (r.returncode, err)
    return err


def count(err, pattern, want, what):
    got = re.findall(pattern, err, re.M)
    assert len(got) == want, "%s: %d lines, want %d:\n%s" % (what, len(got), want, err)
    return got


err = run({"BALLAST_TOOLS": missing})
count(err, r'^ballast\[0\]: warning: tool "%s" cannot be loaded' % re.escape(missing), 1,
      "missing tool")
count(err, r"cannot be loaded", 1, "missing tool, any rank")
print("a tool that cannot load: 1 line on %d ranks" % NP)

writers = [("perfetto", perfetto, {"BALLAST_TRACE_PERFETTO": os.path.join(tmp, "t.json")})]
if otf2:
    writers.append(("otf2", otf2, {"BALLAST_TRACE_OTF2": os.path.join(tmp, "otf2")}))
for name, path, env in writers:
    env = dict(env, BALLAST_TOOLS=path, BALLAST_TRACE_BUFFER="1K", BALLAST_TRACE_QUIET="1")
    err = run(env)
    count(err, r"BALLAST_TRACE_BUFFER=1K is not a size", 1, name + " BALLAST_TRACE_BUFFER")
    count(err, r"^ballast-trace\[0\] .*BALLAST_TRACE_BUFFER=1K", 1, name + " from rank 0")
    print("%s with BALLAST_TRACE_BUFFER=1K: 1 line on %d ranks" % (name, NP))

afile = os.path.join(tmp, "bad.assert")
with open(afile, "w") as f:
    f.write("*: WallTime > 0\nwork: WallTime < < 1\n")
err = run({"BALLAST_ASSERT_FILE": afile})
count(err, r"^ballast\[0\]: warning: assert: %s:2:" % re.escape(afile), 1, "assertion file")
count(err, r"assert: .*:2:", 1, "assertion file, any rank")
count(err, r"\^", 1, "the caret")
print("an assertion file's syntax error: 1 line on %d ranks" % NP)

err = run({"BALLAST_REPORT_TOP": "abc"})
count(err, r"BALLAST_REPORT_TOP", 1, "bad environment value")
print("a bad environment value: 1 line on %d ranks" % NP)

base = [mpiexec, "--oversubscribe"]
cmd = base + ["-n", "1", app, ":", "-n", "2", "env", "BALLAST_TOOLS=" + missing, app,
              ":", "-n", "1", app]
err = run({}, cmd)
got = count(err, r"cannot be loaded.*", 1, "missing tool on ranks 1 and 2")
count(err, r'^ballast\[1\]: warning: tool ".*" cannot be loaded.*\(on 2 of 4 ranks\)$', 1,
      "rank 1 with the count")
print("a tool missing on 2 of 4 ranks: 1 line, by rank 1, with the count")
