#!/usr/bin/env python3
"""The report and the profile are what they say (issue 19).

usage: check_outputs.py MPIEXEC OUTPUTS_APP [MD_EXE]
Runs outputs_app (tests/mon/outputs_app.c) under mpiexec -n 2 with a
hostile command line and checks, on exact values:
  - the profile is strict JSON and strict UTF-8 whatever the region names
    hold; names with control characters come back exactly, bytes that are
    not UTF-8 as U+FFFD;
  - the text report prints every name on one line, escaped, and a top-level
    region "x/y" apart from region "y" inside "x";
  - six messages from rank 0 to rank 1, four of them empty, count 6 in the
    partner matrix, the sent and received totals, and the report;
  - MPI_Init is reported apart: the profile's mpi_time is the sum of the
    activities' times less MPI_Init's, and the report has an init line;
  - the full command line is kept, escaped in the report, exact in argv;
  - with MD_EXE: an explicit load-balancing run logs no imbalance figures.
Any failure prints what differed and exits 1.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

MPIEXEC, APP = sys.argv[1], sys.argv[2]
MD = sys.argv[3] if len(sys.argv) > 3 else None
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def clean_env(extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("BALLAST_")}
    env.update(extra)
    return env


ARGS = ["plain", "two words", "new\nline", "", "quote'd"]

with tempfile.TemporaryDirectory() as tmp:
    prof = os.path.join(tmp, "p.json")
    p = subprocess.run([MPIEXEC, "-n", "2", "--oversubscribe", APP] + ARGS,
                       env=clean_env({"BALLAST_REPORT": "full", "BALLAST_PROFILE": prof,
                                      "BALLAST_REPORT_TOP": "20"}),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    out = p.stdout.decode("utf-8", "strict")  # the report is UTF-8 too
    if p.returncode != 0:
        print(out, p.stderr.decode("utf-8", "replace"))
    check(p.returncode == 0, "exit code %d" % p.returncode)
    raw = open(prof, "rb").read()

# ---- the profile: strict UTF-8, strict JSON ---------------------------------------
text = raw.decode("utf-8", "strict")
doc = json.loads(text, strict=True)["ballast_profile"]
r0, r1 = doc["ranks_data"][0], doc["ranks_data"][1]
names = {r["name"] for r in r0["regions"]}
for want in ["line\nbreak", "ctl\x01\x1b[31mred\x7f", "bad\ufffd\ufffdutf8",
             "surrogate\ufffd\ufffd\ufffd", "cut\ufffd\ufffd", "quote\"back\\slash",
             "r\u00e9sum\u00e9", "x/y", "x", "y"]:
    check(want in names, "profile region name %r (names: %r)" % (want, sorted(names)))
by_id = {r["id"]: r for r in r0["regions"]}
xy = [r for r in r0["regions"] if r["name"] == "x/y"][0]
y = [r for r in r0["regions"] if r["name"] == "y"][0]
check(xy["parent"] == 0, "x/y is a top-level region")
check(by_id[y["parent"]]["name"] == "x", "y is inside x")

# ---- the partner matrix: 6 messages, 24 bytes, empty ones included ---------------
p01, p10 = r0["partners"].get("1", {}), r1["partners"].get("0", {})
check(p01.get("msgs") == 6 and p01.get("bytes") == 24,
      "rank 0 sent 6 messages / 24 bytes to rank 1: %r" % p01)
check(p10.get("rmsgs") == 6 and p10.get("rbytes") == 24,
      "rank 1 received 6 messages / 24 bytes from rank 0: %r" % p10)
check(r0["sent"] == {"bytes": 24, "msgs": 6}, "rank 0 sent total: %r" % r0["sent"])
check(r1["received"] == {"bytes": 24, "msgs": 6}, "rank 1 received total: %r" % r1["received"])
check(r1["sent"] == {"bytes": 0, "msgs": 0}, "rank 1 sent nothing: %r" % r1["sent"])
check("sent plus bytes received" in doc["bytes_note"], "the profile says what nbytes means")

# ---- MPI_Init apart from the program's MPI time ----------------------------------
for r in (r0, r1):
    acts = r["activities"]
    init = acts.get("MPI_Init", {}).get("tsum", 0) + acts.get("MPI_Init_thread", {}).get("tsum", 0)
    total = sum(a["tsum"] for a in acts.values())
    check(init > 0 and abs(r["mpi_init"] - init) <= 1e-9 * max(1, init) + 1e-12,
          "rank %d mpi_init %r == MPI_Init's time %r" % (r["rank"], r["mpi_init"], init))
    check(abs(r["mpi_time"] - (total - init)) <= 1e-6 * max(total, 1e-3),
          "rank %d mpi_time %r == activities %r - MPI_Init %r" % (r["rank"], r["mpi_time"],
                                                                  total, init))

# ---- the command line ----------------------------------------------------------------
check(doc["argv"] == [doc["argv"][0]] + ARGS, "argv kept exactly: %r" % doc["argv"])
check(doc["argv_cut"] is False, "argv not cut")
check(os.path.basename(doc["argv"][0]) == os.path.basename(APP), "argv[0] is the program")
want_cmd = "plain two\\ words new\\nline '' quote\\'d"
check(doc["command"].endswith(want_cmd), "profile command %r ends with %r" % (doc["command"], want_cmd))

# ---- the text report -----------------------------------------------------------------
lines = out.splitlines()
rep = [l for l in lines if l.startswith("#")]
for l in lines:
    check(not re.search(r"[\x00-\x08\x0b-\x1f\x7f]", l), "no control character in %r" % l)
m = re.search(r"^# command\s*: (.*)$", out, re.M)
check(m and m.group(1).endswith(want_cmd), "report command line: %r" % (m and m.group(1)))
rows = []
on = False
for l in rep:
    if l.startswith("# region "):
        on = True
        continue
    if on:
        if l.strip() == "#" or not l.startswith("# ") or l.startswith("#  "):
            break
        rows.append(l[2:].split(" ")[0])
for want in ["line\\nbreak", "ctl\\x01\\x1B[31mred\\x7F", "bad\\xFF\\xFEutf8",
             "surrogate\\xED\\xA0\\x80", "cut\\xE2\\x82", "quote\"back\\\\slash",
             "r\u00e9sum\u00e9", "x\\/y", "x", "x/y"]:
    check(want in rows, "report region row %r (rows: %r)" % (want, rows))
m = re.search(r"^# sent\s*: (\d+) bytes in (\d+) messages", out, re.M)
check(m and (int(m.group(1)), int(m.group(2))) == (24, 6), "report sent line: %r" % (m and m.group(0)))
m = re.search(r"^# received\s*: (\d+) bytes in (\d+) messages", out, re.M)
check(m and (int(m.group(1)), int(m.group(2))) == (24, 6), "report received line")
check(re.search(r"^# bytes\s*: \d+ \(each rank's MPI calls: bytes sent plus bytes received",
                out, re.M), "report says what bytes means")
m = re.search(r"^# init \(s\)\s*: ([0-9.]+) \(MPI_Init", out, re.M)
check(m and float(m.group(1)) > 0, "report init line: %r" % (m and m.group(0)))

# ---- explicit load balancing logs no imbalance it did not measure -------------------
if MD:
    p = subprocess.run([MPIEXEC, "-n", "2", "--oversubscribe", MD, "--json-only",
                        "--scenario", "droplet", "--particles", "500", "--steps", "4",
                        "--strategy", "ballast"],
                       env=clean_env({"BALLAST_LB": "explicit", "BALLAST_VERBOSE": "2",
                                      "BALLAST_REPORT": "none"}),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    err = p.stderr.decode("utf-8", "replace")
    check(p.returncode == 0, "ballast-md explicit exit code %d" % p.returncode)
    check("remap (explicit: requested by the application" in err,
          "explicit remaps logged as such: %r" % err[-2000:])
    check("imbalance 0.000" not in err and "> threshold" not in err,
          "no imbalance figure in explicit mode")

if failures:
    print("%d check(s) failed" % len(failures))
    sys.exit(1)
print("check_outputs: all checks passed")
