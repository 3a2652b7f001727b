#!/usr/bin/env python3
"""A tool (tt_crash.so) that faults in its region_enter callback on the last
of 2 ranks, in three setups; each checks stderr on values:
 - own+profile: the program installed its own SIGSEGV handler before MPI_Init
   and BALLAST_PROFILE is set (tool handler -> profile handler -> program's):
   ballast names the tool's path and the event; the program's handler gets
   si_code 2 (SEGV_ACCERR) and the very address the tool faulted at; the
   crashed rank's part says SIGSEGV and holds its region "work";
 - own: the same without BALLAST_PROFILE (tool handler -> program's);
 - mpi+profile: no handler of the program's: Open MPI's prints the fault,
   "Signal code: Invalid permissions (2)" and the tool's address, never
   "(-6)" (a signal raised anew);
 - init: the tool, the only one loaded, faults in its init function: named
   as crashing in its init, before any tool attached.
usage: check_crash.py MPIEXEC APP TOOL MERGE"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

mpiexec, app, tool, merge = sys.argv[1:5]
NP = 2


made = []  # the runs' folders, removed when every check passed


def run(own, profile, init=False, parts=False):
    tmp = tempfile.mkdtemp(prefix="ballast_crash_")
    made.append(tmp)
    # Open MPI ends the rank that did not crash with SIGCONT, SIGTERM after
    # this many seconds, SIGKILL after as many again, sleeping through both
    # (the run lasts twice this value). Where the test reads the parts
    # (parts=True), that rank's SIGTERM handler writes one: 3 s for it on a
    # loaded machine; elsewhere nothing of that rank is checked.
    env = dict(os.environ, BALLAST_TOOLS=tool, BALLAST_REPORT="none", BALLAST_VERBOSE="1",
               OMPI_MCA_odls_base_sigkill_timeout="3" if parts else "1",
               TT_CRASH_INIT="1" if init else "0")
    env.pop("BALLAST_PROFILE", None)
    if profile:
        env["BALLAST_PROFILE"] = os.path.join(tmp, "p.json")
    if "ASAN_OPTIONS" in env:
        env["ASAN_OPTIONS"] += ":allow_user_segv_handler=1"
    cmd = [mpiexec, "-n", str(NP), "--oversubscribe", app] + (["own"] if own else [])
    r = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=150)
    err = r.stderr.decode(errors="replace")
    assert r.returncode != 0, "the job should have failed:\n" + err
    m = re.search(r"tt_crash: faulting at (0x[0-9a-f]+)", err)
    assert m, "the tool did not fault:\n" + err
    addr = int(m.group(1), 16)
    # ballast's line: the rank, the tool as loaded and its file, the event,
    # the signal with the kernel's si_code and the address.
    named = re.findall(r'ballast\[(\d+)\]: error: tool "([^"]+)"(?: \(([^)]+)\))? crashed in '
                       r'its (\w+) (?:callback|function): SIGSEGV \(si_code (-?\d+), address (0x[0-9a-f]+)\)',
                       err)
    assert len(named) == 1, "want one line naming the tool:\n" + err
    rank, name, file, event, code, where = named[0]
    assert int(rank) == NP - 1, named
    assert os.path.realpath(name) == os.path.realpath(tool), (name, tool)
    assert event == ("init" if init else "region_enter"), named
    assert int(code) == 2 and int(where, 16) == addr, (named, hex(addr))
    return tmp, err, addr


# 1. the program's own handler, with the profile handler in between
tmp, err, addr = run(own=True, profile=True, parts=True)
got = re.findall(r"crash_app: SIGSEGV si_code (-?\d+) si_addr (0x[0-9a-f]+)", err)
assert got == [("2", hex(addr))], "the program's handler got %s, the fault was at %s:\n%s" % (
    got, hex(addr), err)
parts = sorted(glob.glob(os.path.join(tmp, "p.json.part[0-9]*")))
assert len(parts) == NP, parts
out = os.path.join(tmp, "m.json")
subprocess.run([sys.executable, merge] + parts + ["-o", out], check=True,
               stdout=subprocess.DEVNULL)
prof = json.load(open(out))["ballast_profile"]
reasons = {x["rank"]: x["reason"] for x in prof["parts"]}
assert reasons[NP - 1] == "SIGSEGV", reasons
for d in prof["ranks_data"]:
    assert [g["count"] for g in d["regions"] if g["name"] == "work"] == [1], d
print("own+profile: tool named, program's handler got si_code 2 at %s, parts %s" %
      (hex(addr), reasons))

# 2. the program's own handler, no profile handler
tmp, err, addr = run(own=True, profile=False)
got = re.findall(r"crash_app: SIGSEGV si_code (-?\d+) si_addr (0x[0-9a-f]+)", err)
assert got == [("2", hex(addr))], (got, hex(addr), err)
print("own: tool named, program's handler got si_code 2 at %s" % hex(addr))

# 3. Open MPI's handler, with the profile handler in between (in the
# sanitizer build AddressSanitizer's handler was there first, and Open MPI
# leaves an installed handler alone: ASan's report is checked instead)
# (ASan's handler then calls abort(): that SIGABRT is genuinely -6)
tmp, err, addr = run(own=False, profile=True)
if "AddressSanitizer" in err:
    m = re.search(r"SEGV on unknown address (0x[0-9a-f]+)", err)
    assert m and int(m.group(1), 16) == addr, (m and m.group(1), hex(addr), err)
    print("asan+profile: tool named, AddressSanitizer reports the fault at %s" % hex(addr))
else:
    assert "(-6)" not in err, "a signal raised anew reached Open MPI:\n" + err
    assert re.search(r"Signal code: .*\(2\)", err), "Open MPI's report:\n" + err
    m = re.search(r"Failing at address: (0x[0-9a-f]+)", err)
    assert m and int(m.group(1), 16) == addr, (m and m.group(1), hex(addr), err)
    print("mpi+profile: tool named, Open MPI reports si_code 2 at %s" % hex(addr))

# 4. a crash in the init of the only tool loaded: named too (the handlers
# are in place before the first init runs)
tmp, err, addr = run(own=True, profile=False, init=True)
got = re.findall(r"crash_app: SIGSEGV si_code (-?\d+) si_addr (0x[0-9a-f]+)", err)
assert got == [("2", hex(addr))], (got, hex(addr), err)
print("init: the only tool named as crashing in its init, program's handler got si_code 2 at %s"
      % hex(addr))
for d in made:
    shutil.rmtree(d, ignore_errors=True)
