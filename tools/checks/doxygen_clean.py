#!/usr/bin/env python3
"""Build the API reference with Doxygen and fail on any warning.

Usage: doxygen_clean.py DOXYGEN DOXYFILE WARNLOG

DOXYGEN is the doxygen program CMake found (or "DOXYGEN_EXECUTABLE-NOTFOUND":
then doxygen is looked up on PATH, in case it was installed after CMake ran).
DOXYFILE is the configured docs/Doxyfile.in, whose WARN_LOGFILE is WARNLOG.
Prints every warning and exits 1 when there is one, when doxygen fails, or
when doxygen is missing: scripts/setup.sh installs it, so a missing doxygen
is a broken setup, not a reason to pass.
"""
import os
import shutil
import subprocess
import sys


def main(argv):
    if len(argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    doxygen, doxyfile, warnlog = argv[1:]
    if not doxygen or doxygen.endswith("NOTFOUND") or not os.path.exists(doxygen):
        doxygen = shutil.which("doxygen")
    if not doxygen:
        print("docs: doxygen is not installed; scripts/setup.sh installs it "
              "(Debian package 'doxygen'). The API reference cannot be checked.",
              file=sys.stderr)
        return 1
    os.makedirs(os.path.dirname(warnlog), exist_ok=True)
    if os.path.exists(warnlog):
        os.remove(warnlog)
    proc = subprocess.run([doxygen, doxyfile], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True)
    warnings = ""
    if os.path.exists(warnlog):
        with open(warnlog, encoding="utf-8", errors="replace") as f:
            warnings = f.read().strip()
    if proc.stdout.strip():
        print(proc.stdout.strip())
    if warnings:
        n = sum(1 for line in warnings.splitlines() if ": error: " in line or ": warning: " in line)
        print(warnings)
        print("docs: %d doxygen warning(s) in the public headers (warnings are errors)"
              % max(n, 1), file=sys.stderr)
        return 1
    if proc.returncode != 0:
        print("docs: doxygen exited with %d" % proc.returncode, file=sys.stderr)
        return 1
    print("docs: the API reference built with no warning: %s"
          % os.path.join(os.path.dirname(warnlog), "html", "index.html"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
