#!/usr/bin/env python3
"""ballast-trace-merge on hand-made parts: clock alignment (offset and drift
interpolated between the init and finalize samples), a rank that died (no
end line, a torn last line), and the errors (missing part, bad header, bad
command line). Usage: test_merge.py BALLAST_TRACE_MERGE CHECK_TRACE_JSON"""
import json
import os
import subprocess
import sys
import tempfile

merge, checker = sys.argv[1], sys.argv[2]
fails = 0


def check(cond, what):
    global fails
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        fails += 1


def write_parts(d, rank1_end=True, torn=False, end_offset=-3998900, end_rtt=1000):
    out = os.path.join(d, "t.json")
    with open(out + ".part0", "w") as f:
        f.write('{"ballast_trace_part":1,"rank":0,"size":2,"t_local":1000000,"offset":0,"rtt":0}\n')
        f.write('{"ts":1000500,"ph":"B","pid":0,"tid":0,"cat":"region","name":"a"}\n')
        f.write('{"ts":1000600,"ph":"X","pid":0,"tid":0,"dur":0.400,"cat":"mpi","name":"MPI_Send",'
                '"args":{"bytes":8,"partner":1}}\n')
        f.write('{"ts":1002000,"ph":"E","pid":0,"tid":0,"cat":"region","name":"a"}\n')
        f.write('{"ballast_trace_end":1,"t_local":2000000,"offset":0,"rtt":0,"lost":0}\n')
    with open(out + ".part1", "w") as f:
        # rank 1's clock is 3.999 ms ahead at init and 100 ns less at
        # finalize, 1 ms later (100 ppm, the most taken for drift): global =
        # local + offset, offset interpolated.
        f.write('{"ballast_trace_part":1,"rank":1,"size":2,"t_local":5000000,'
                '"offset":-3999000,"rtt":1000}\n')
        f.write('{"ts":5500000,"ph":"B","pid":1,"tid":0,"cat":"region","name":"b \\"q\\""}\n')
        f.write('{"ts":5500100,"ph":"X","pid":1,"tid":0,"dur":90.000,"cat":"mpi","name":"MPI_Recv"}\n')
        f.write('{"ts":5600000,"ph":"E","pid":1,"tid":0,"cat":"region","name":"b \\"q\\""}\n')
        if rank1_end:
            f.write('{"ballast_trace_end":1,"t_local":6000000,"offset":%d,"rtt":%d,'
                    '"lost":7}\n' % (end_offset, end_rtt))
        if torn:
            f.write('{"ts":5700000,"ph":"B","pi')
    return out


def run(args):
    return subprocess.run(args, capture_output=True, text=True, timeout=30)


with tempfile.TemporaryDirectory() as d:
    out = write_parts(d)
    r = run([merge, out])
    check(r.returncode == 0, "merge of two complete parts succeeds (%s)" % r.stderr.strip())
    doc = json.load(open(out))
    evs = [e for e in doc["traceEvents"] if e["ph"] != "M"]
    ts = {(e["pid"], e["ph"]): e["ts"] for e in evs}
    # epoch = min(rank 0 init 1000000 - rtt 0, rank 1 init on rank 0's clock
    # 1001000 - rtt 1000) = 1000000 ns
    check(abs(ts[(0, "B")] - 0.5) < 1e-9, "rank 0's B at 0.5 us (got %s)" % ts[(0, "B")])
    check(abs(ts[(0, "X")] - 0.6) < 1e-9, "rank 0's X at 0.6 us")
    check(abs(ts[(1, "B")] - 501.05) < 1e-9,
          "rank 1's B at 501.05 us: offset interpolated half way (got %s)" % ts[(1, "B")])
    check(abs(ts[(1, "E")] - 601.06) < 1e-9, "rank 1's E at 601.06 us (got %s)" % ts[(1, "E")])
    x1 = [e for e in evs if e["pid"] == 1 and e["ph"] == "X"][0]
    check(abs(x1["ts"] - 501.15) < 1e-9 and abs(x1["dur"] - 90.009) < 1e-9,
          "rank 1's X moved and its duration scaled with the clock (%s, %s)"
          % (x1["ts"], x1["dur"]))
    names = {e["pid"]: e["args"]["name"] for e in doc["traceEvents"]
             if e["ph"] == "M" and e["name"] == "process_name"}
    check(names == {0: "rank 0", 1: "rank 1"}, "each rank's process is named")
    check(doc["otherData"]["lost_bytes"] == 7 and doc["otherData"]["ranks_without_end"] == 0,
          "lost bytes summed, no rank without end")
    check(doc["displayTimeUnit"] == "ns", "display unit ns")
    check(os.path.exists(out + ".part0"), "parts kept without --remove-parts")
    r = run([sys.executable, checker, out, "--ranks", "2"])
    check(r.returncode == 0, "merged trace passes the strict check (%s)" % r.stdout.strip())

    # Samples 1000 ppm apart are noise, not drift: the one with the shorter
    # round trip (the end sample, 500 ns) serves alone.
    out = write_parts(d, end_offset=-3998000, end_rtt=500)
    r = run([merge, out])
    doc = json.load(open(out))
    b1 = [e["ts"] for e in doc["traceEvents"] if e["ph"] == "B" and e["pid"] == 1]
    check(r.returncode == 0 and b1 == [502.0],
          "an implausible drift is not applied: the better sample's offset (got %s)" % b1)

    # A run that died: rank 1 has no end line and a torn last line.
    out = write_parts(d, rank1_end=False, torn=True)
    r = run([merge, out, "--remove-parts"])
    check(r.returncode == 0, "merge of a died run succeeds")
    doc = json.load(open(out))
    b1 = [e["ts"] for e in doc["traceEvents"] if e["ph"] == "B" and e["pid"] == 1]
    check(b1 == [501.0], "without an end line rank 1 is corrected by its init offset (got %s)" % b1)
    check(doc["otherData"]["ranks_without_end"] == 1, "the rank without end is counted")
    check(not os.path.exists(out + ".part0") and not os.path.exists(out + ".part1"),
          "--remove-parts removes the parts")

    # Errors: a part missing, a part that is not one, bad command lines.
    out = write_parts(d)
    os.remove(out + ".part1")
    r = run([merge, out])
    check(r.returncode == 2 and "t.json.part1" in r.stderr and "rank 1" in r.stderr,
          "a missing part: exit 2 naming it (%s)" % r.stderr.strip())
    out = write_parts(d)
    with open(out + ".part1", "w") as f:
        f.write("hello\n")
    r = run([merge, out])
    check(r.returncode == 2 and "part1: not a ballast trace part" in r.stderr,
          "a bad header: exit 2 naming the file (%s)" % r.stderr.strip())
    out = write_parts(d)
    with open(out + ".part1", "w") as f:
        f.write('{"ballast_trace_part":1,"rank":1,"size":3,"t_local":1,"offset":0,"rtt":0}\n')
    r = run([merge, out])
    check(r.returncode == 2 and "3 ranks" in r.stderr, "parts of different runs refused")
    r = run([merge])
    check(r.returncode == 1 and "usage" in r.stderr, "no argument: usage, exit 1")
    r = run([merge, out, "--bogus"])
    check(r.returncode == 1 and "--bogus" in r.stderr, "unknown option named, exit 1")
    r = run([merge, os.path.join(d, "nothing.json")])
    check(r.returncode == 2 and "nothing.json.part0" in r.stderr, "no parts at all: exit 2")

print("test_merge: %d failure(s)" % fails)
sys.exit(1 if fails else 0)
