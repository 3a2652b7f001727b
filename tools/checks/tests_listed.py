#!/usr/bin/env python3
"""tests/README.md lists every test of the suite with its labels.

usage: tests_listed.py TESTS_README BUILD_DIR [CTEST]

Reads the table of TESTS_README (rows `| `name` | labels | what | dir | when |`)
and the tests the build registers (`ctest --show-only=json-v1` in BUILD_DIR),
then fails (exit 1, one line per difference) when
  - ctest lists a test the README does not;
  - the README lists a test ctest does not, unless the row's "built when"
    column is not empty (tests that exist only in some configurations:
    examples, PT-Scotch, Fortran);
  - a test's labels differ between the two.
Prints "tests_listed: N tests, README and ctest agree" otherwise.
"""
import json
import re
import subprocess
import sys

ROW = re.compile(r"^\|\s*`([A-Za-z0-9_]+)`\s*\|(.*)\|\s*$")


def readme_tests(path):
    """name -> (labels as a set, conditional?) from the README's table rows."""
    tests = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = ROW.match(line.strip())
            if not m:
                continue
            cells = [c.strip() for c in m.group(2).split("|")]
            if len(cells) < 4:
                sys.exit(f"tests_listed: row of {m.group(1)} has fewer than 5 columns")
            labels = {l.strip(" `") for l in cells[0].split(",") if l.strip(" `")}
            if m.group(1) in tests:
                sys.exit(f"tests_listed: {m.group(1)} is listed twice in {path}")
            tests[m.group(1)] = (labels, cells[3] != "")
    return tests


def ctest_tests(build, ctest):
    """name -> labels as a set, for every test the build registers."""
    out = subprocess.run([ctest, "--show-only=json-v1"], cwd=build, check=True,
                         capture_output=True, text=True).stdout
    tests = {}
    for t in json.loads(out)["tests"]:
        labels = set()
        for p in t.get("properties", []):
            if p["name"] == "LABELS":
                labels = set(p["value"])
        tests[t["name"]] = labels
    return tests


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    listed = readme_tests(sys.argv[1])
    registered = ctest_tests(sys.argv[2], sys.argv[3] if len(sys.argv) == 4 else "ctest")
    errors = []
    for name in sorted(registered.keys() - listed.keys()):
        errors.append(f"{name}: registered with ctest, missing from the README")
    for name in sorted(listed.keys() - registered.keys()):
        if not listed[name][1]:
            errors.append(f"{name}: in the README, not registered with ctest "
                          "(and its 'built when' column is empty)")
    for name in sorted(listed.keys() & registered.keys()):
        if listed[name][0] != registered[name]:
            errors.append(f"{name}: labels {sorted(registered[name])} in ctest, "
                          f"{sorted(listed[name][0])} in the README")
    for e in errors:
        print(e)
    if errors:
        print(f"tests_listed: {len(errors)} differences between {sys.argv[1]} and ctest")
        return 1
    print(f"tests_listed: {len(registered)} tests, README and ctest agree")
    return 0


if __name__ == "__main__":
    sys.exit(main())
