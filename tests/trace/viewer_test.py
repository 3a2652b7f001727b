#!/usr/bin/env python3
"""A Perfetto trace of a program opened in a real trace reader: speedscope
in headless Chromium (viewer_check.js). Asserts that the profile loaded,
that the reader logged no error and no nesting warning ("Tried to end ...
when ... was on the top of the stack", "... still open ..."), and that
the named frames appear in its frame table.

Usage: viewer_test.py SETUP_VIEWER VIEWER_DIR VIEWER_CHECK NAMES -- CMD...
  NAMES  comma-separated frame names that must appear (rank 0's main thread)
  CMD    the MPI command to run; the trace goes to BALLAST_TRACE_PERFETTO
Exit 77 (ctest: skipped) only when the reader cannot be installed (no node
or npm, no registry) or Chromium is missing, with a message saying which;
the trace is then not judged, never passed.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

setup, viewer_dir, viewer_check, names = sys.argv[1:5]
cmd = sys.argv[sys.argv.index("--") + 1:]


def skip(why):
    print("SKIP: " + why)
    sys.exit(77)


node = shutil.which("node")
if node is None:
    skip("node is not installed: the trace reader (speedscope) cannot run")
mods = os.path.join(viewer_dir, "node_modules")
if not (os.path.isdir(os.path.join(mods, "speedscope")) and
        os.path.isdir(os.path.join(mods, "playwright-core"))):
    r = subprocess.run(["bash", setup], capture_output=True, text=True, timeout=300)
    print(r.stdout + r.stderr)
    if r.returncode != 0:
        skip("speedscope could not be installed (scripts/setup_viewer.sh failed, above)")
if not os.path.exists(os.environ.get("BALLAST_CHROMIUM", "/usr/bin/chromium")):
    skip("no /usr/bin/chromium (scripts/setup.sh installs it)")

with tempfile.TemporaryDirectory() as d:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BALLAST_")}
    env.update({"BALLAST_TOOLS": "perfetto", "BALLAST_TRACE_PERFETTO": d + "/t.json",
                "BALLAST_REPORT": "none", "OMPI_MCA_mpi_yield_when_idle": "1"})
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=240, env=env)
    if p.returncode != 0 or not os.path.exists(d + "/t.json"):
        print(p.stdout[-2000:], p.stderr[-2000:])
        sys.exit("the traced run failed (%d)" % p.returncode)
    r = subprocess.run([node, viewer_check, viewer_dir, d + "/t.json"] + names.split(","),
                       capture_output=True, text=True, timeout=180)
    print(r.stdout.strip(), r.stderr.strip())
    if r.returncode == 77:
        skip(r.stdout.strip())
    try:
        out = json.loads(r.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        sys.exit("viewer_check.js gave no result")
    fails = 0
    for cond, what in [
            (out["loaded"], "speedscope loaded the trace (%s)" % out["profiles"]),
            (out["errors"] == [], "no error logged: %s" % out["errors"][:3]),
            (out["nesting_errors"] == 0,
             "no nesting warning (Tried to end ...): %d" % out["nesting_errors"]),
            (out["frames_missing"] == [] and len(out["frames_found"]) == len(names.split(",")),
             "frames %s found, missing %s" % (out["frames_found"], out["frames_missing"]))]:
        print(("ok   " if cond else "FAIL ") + what)
        fails += not cond
    print("viewer_test: %d failure(s)" % fails)
    sys.exit(1 if fails else 0)
