#!/usr/bin/env python3
"""The strict trace checker (check_trace_json.py) accepts a good trace and
rejects each kind of bad one with a message naming the problem.
Usage: test_checker.py CHECK_TRACE_JSON"""
import json
import os
import subprocess
import sys
import tempfile

checker = sys.argv[1]
fails = 0

M = [{"ph": "M", "pid": 0, "tid": 0, "name": "process_name", "args": {"name": "rank 0"}}]
GOOD = M + [
    {"ph": "B", "pid": 0, "tid": 0, "ts": 1.0, "name": "step", "cat": "region"},
    {"ph": "X", "pid": 0, "tid": 0, "ts": 2.0, "dur": 1.0, "name": "MPI_Send", "cat": "mpi"},
    {"ph": "X", "pid": 0, "tid": 0, "ts": 3.0, "dur": 0.0, "name": "move a", "cat": "migration"},
    {"ph": "s", "pid": 0, "tid": 0, "ts": 3.0, "name": "move", "cat": "migration", "id": "1"},
    {"ph": "f", "pid": 0, "tid": 1, "ts": 3.5, "name": "move", "cat": "migration", "id": "1",
     "bp": "e"},
    {"ph": "C", "pid": 0, "tid": 0, "ts": 4.0, "name": "imbalance", "args": {"imbalance": 1.5}},
    {"ph": "E", "pid": 0, "tid": 0, "ts": 5.0, "name": "step", "cat": "region"},
]


def variant(edit):
    evs = json.loads(json.dumps(GOOD))
    edit(evs)
    return evs


def setitem(i, k, v):
    def f(evs):
        evs[i][k] = v
    return f


BAD = {
    "with no open B": lambda evs: evs.insert(1, {"ph": "E", "pid": 0, "tid": 0, "ts": 0.5,
                                              "name": "x"}),
    "never ends": lambda evs: evs.pop(),
    "closes B": setitem(7, "name", "other"),
    "before the previous": setitem(2, "ts", 0.5),
    "overlaps X": lambda evs: evs.insert(3, {"ph": "X", "pid": 0, "tid": 0, "ts": 2.5,
                                             "dur": 1.0, "name": "MPI_Recv", "cat": "mpi"}),
    "after its enclosing B": setitem(2, "dur", 10.0),
    "1 start(s) and 0 finish(es)": lambda evs: evs.pop(5),
    "2 start(s)": lambda evs: evs.insert(5, dict(evs[4])),
    "unknown ph": setitem(1, "ph", "Q"),
    "X without a dur": setitem(2, "dur", -1),
    "counter without numeric args": setitem(6, "args", {"imbalance": "high"}),
    "ts missing": lambda evs: evs[1].pop("ts"),
    "no tid": lambda evs: evs[1].pop("tid"),
    "pid is not an integer": setitem(1, "pid", "0"),
    "process_name for pids": lambda evs: evs.pop(0),
    # A task and its region share the name: interleaved, the E of one
    # closes the other's B (a trace speedscope refuses).
    "of cat 'task' closes the B of cat 'region'": setitem(7, "cat", "task"),
    "has args": lambda evs: evs[1].update(args={"id": 1}) or evs[7].update(args={"id": 2}),
    "while its task is not the innermost": lambda evs: evs[1:1] + [
        evs.insert(1, {"ph": "B", "pid": 0, "tid": 0, "ts": 0.5, "name": "t", "cat": "task"}),
        evs.insert(2, {"ph": "B", "pid": 0, "tid": 0, "ts": 0.6, "name": "other",
                       "cat": "region"}),
        evs.insert(3, {"ph": "B", "pid": 0, "tid": 0, "ts": 0.7, "name": "t", "cat": "region"})],
}


def run(evs, raw=None, ranks=1):
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        f.write(raw if raw is not None else json.dumps({"traceEvents": evs}))
        path = f.name
    try:
        r = subprocess.run([sys.executable, checker, path, "--ranks", str(ranks)],
                           capture_output=True, text=True, timeout=30)
    finally:
        os.remove(path)
    return r.returncode, r.stdout


def expect(name, rc, out, want_ok, needle=None):
    global fails
    good = (rc == 0) == want_ok and (needle is None or needle in out)
    print(("ok   " if good else "FAIL ") + name + ("" if good else ": rc %d, %s" % (rc, out)))
    fails += not good


rc, out = run(GOOD)
expect("a good trace passes", rc, out, True, "valid trace")
for needle, edit in BAD.items():
    rc, out = run(variant(edit))
    expect("rejects: " + needle, rc, out, False, needle)
rc, out = run(None, raw='{"traceEvents": [')
expect("rejects: truncated JSON", rc, out, False, "not a valid trace")
rc, out = run(None, raw='{"traceEvents": [], "traceEvents": []}')
expect("rejects: duplicate keys", rc, out, False, "duplicate key")
rc, out = run(None, raw='{"traceEvents": [{"ph":"C","pid":0,"tid":0,"ts":1,"name":"c",'
                        '"args":{"v":NaN}}]}')
expect("rejects: NaN", rc, out, False, "NaN")
print("test_checker: %d failure(s)" % fails)
sys.exit(1 if fails else 0)
