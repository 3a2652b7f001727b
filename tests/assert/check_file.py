#!/usr/bin/env python3
"""Assertion files under LD_PRELOAD: runs plain_app (an MPI program not linked
to ballast) with BALLAST_ASSERT_FILE and checks the exact verdicts in the
end-of-run report and the JSON profile, the messages for bad lines (file,
line, column, caret, valid names), never-run regions, _config values, and
the failure actions count, warn, exit and abort.

usage: check_file.py MPIEXEC APP LIBBALLAST WORKDIR [PRELOAD_FIRST...]"""
import json
import os
import re
import subprocess
import sys

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


ASSERTIONS = """# assertions on plain_app's regions (line numbers matter)
step: calls(MPI_Barrier) == 1 & calls(MPI_Allreduce) == 1
  step :   MPICalls - calls(MPI_Pcontrol) <= _maxcalls
step: MPICalls == 5
nowhere: WallTime < 1 s
*: nprocs == 2 & calls(MPI_Barrier) == 5 & calls(MPI_Allreduce) == 5
inner: calls(MPI_Allreduce) == 1 & calls(MPI_Barrier) == 0

bad line without a colon
step: 1 + * 2
step: Wal < 1
"""


def main():
    mpiexec, app, lib, work = sys.argv[1:5]
    preload = ":".join(sys.argv[5:] + [lib])
    os.makedirs(work, exist_ok=True)
    afile = os.path.join(work, "plain.assert")
    conf = os.path.join(work, "plain.conf")
    prof = os.path.join(work, "plain_profile.json")
    with open(afile, "w") as f:
        f.write(ASSERTIONS)
    with open(conf, "w") as f:
        f.write("maxcalls = 2  # per step\n")

    def run(action=None, text=None):
        if text is not None:
            with open(afile, "w") as f:
                f.write(text)
        if os.path.exists(prof):
            os.unlink(prof)
        env = ["-x", "LD_PRELOAD=" + preload, "-x", "BALLAST_ASSERT_FILE=" + afile,
               "-x", "BALLAST_ASSERT_CONFIG=" + conf, "-x", "BALLAST_PROFILE=" + prof,
               "-x", "BALLAST_REPORT=terse"]
        if action:
            env += ["-x", "BALLAST_ASSERT_ACTION=" + action]
        cmd = [mpiexec, "-n", "2", "--oversubscribe"] + env + [app, "5"]
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True, timeout=50)
        print("== action %s: exit %d\n%s\n%s" % (action, r.returncode, r.stdout, r.stderr))
        return r

    # Counted (the default): exact verdicts in the report and the profile.
    r = run()
    out, err = r.stdout, r.stderr
    check(r.returncode == 0, "count: exit %d" % r.returncode)
    check("# assertions : 6 (2 failed, 1 never checked) over 2 rank(s)" in out,
          "count: the summary line")
    src = afile + ":"

    def block(line, status, text):
        m = re.search(r"#  \[%s\] %s: %s\n((?:#         .*\n)*)" %
                      (status, re.escape(src + str(line)), re.escape(text)), out)
        check(m is not None, "report: [%s] line %d %s" % (status, line, text))
        return m.group(1) if m else ""

    b = block(2, "PASS", "calls(MPI_Barrier) == 1 & calls(MPI_Allreduce) == 1")
    check("passes 5..5 of checks 5..5 per rank" in b, "line 2 counts")
    b = block(3, "FAIL", "MPICalls - calls(MPI_Pcontrol) <= _maxcalls")
    check("passes 4..5 of checks 5..5 per rank" in b, "line 3 counts")
    b = block(4, "FAIL", "MPICalls == 5")
    check("passes 4..5 of checks 5..5 per rank" in b, "line 4 counts")
    check("first failure: rank 1, instance 3: MPICalls = 6" in b, "line 4 first failure")
    b = block(5, "NEVER", "WallTime < 1 s")
    check("never checked" in b, "line 5 never checked")
    b = block(6, "PASS", "nprocs == 2 & calls(MPI_Barrier) == 5 & calls(MPI_Allreduce) == 5")
    check("passes 1..1 of checks 1..1 per rank" in b, "line 6 (whole run) counts")
    b = block(7, "PASS", "calls(MPI_Allreduce) == 1 & calls(MPI_Barrier) == 0")
    check("passes 5..5 of checks 5..5 per rank" in b, "line 7 (inner) counts")
    # Bad lines: reported with file, line, column and caret; the rest still run.
    check("%s9: expected 'REGION: EXPRESSION'" % src in err, "line 9: no colon")
    check("%s10: column 11: expected a number, name or '(' here" % src in err,
          "line 10: syntax error with its column in the line")
    check("\n  step: 1 + * 2\n            ^" in err, "line 10: the caret under the '*'")
    check("%s11: column 7: unknown name 'Wal'; valid: WallTime, CPUTime" % src in err,
          "line 11: the valid names")
    with open(prof) as f:
        doc = json.load(f)["ballast_profile"]["assertions"]
    check(doc["ranks"] == 2, "profile: ranks")
    by_line = {int(a["source"].rsplit(":", 1)[1]): a for a in doc["list"]}
    check(sorted(by_line) == [2, 3, 4, 5, 6, 7], "profile: the lines %r" % sorted(by_line))
    if 4 in by_line:
        a = by_line[4]
        check(a["status"] == "FAIL" and a["passes_min"] == 4 and a["passes_max"] == 5 and
              a["checks_min"] == 5 and a["checks_max"] == 5, "profile: line 4 %r" % a)
        check(a.get("first_failure") == {"rank": 1, "instance": 3, "values": {"MPICalls": 6}},
              "profile: line 4 first failure %r" % a.get("first_failure"))
    if 5 in by_line:
        check(by_line[5]["status"] == "NEVER" and by_line[5]["checks_max"] == 0,
              "profile: line 5 never")
    # warn: one line at the first failure, with the values.
    r = run("warn")
    check(r.returncode == 0, "warn: exit %d" % r.returncode)
    warn = "%s4: 'MPICalls == 5' failed (instance 3): MPICalls = 6" % src
    check(r.stderr.count(warn) == 1, "warn: the line once")
    # exit: the run completes (report printed) and exits non-zero.
    r = run("exit")
    check(r.returncode != 0, "exit: exit status 0 despite a failure")
    check("[FAIL]" in r.stdout, "exit: the report is printed")
    # exit with nothing failing: status 0.
    r = run("exit", "step: MPICalls >= 5\n*: calls(MPI_Barrier) == 5\n")
    check(r.returncode == 0, "exit, all passing: exit %d" % r.returncode)
    check("# assertions : 2 (0 failed, 0 never checked)" in r.stdout, "exit, all passing: report")
    # abort: the run stops at the first failure.
    r = run("abort", "step: MPICalls == 5\n")
    check(r.returncode != 0, "abort: exit status 0")
    check("'MPICalls == 5' failed (instance 3)" in r.stderr, "abort: the failure is named")
    check("# assertions" not in r.stdout, "abort: no report after an abort")
    if failures:
        print("%d failure(s)" % len(failures))
        return 1
    print("PASS assert_file")
    return 0


if __name__ == "__main__":
    sys.exit(main())
