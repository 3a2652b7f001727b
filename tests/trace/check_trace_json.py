#!/usr/bin/env python3
"""Strict check of a Chrome / Perfetto trace-event JSON file.

Usage: check_trace_json.py TRACE.json [--ranks N] [--counts OUT.json]

Checks, failing (exit 1, one line per problem, at most 20) on the first
violations found:
- the file is valid JSON (no NaN/Infinity, no duplicate keys), an object
  with a "traceEvents" list (or a bare list);
- every event is an object with a known "ph" and the fields its phase needs
  (pid and tid integers, ts a finite number >= 0 except for metadata,
  name a string, X a dur >= 0, C numeric args, flows an id and a cat);
- per track (pid, tid) the timestamps never go backwards in file order, and
  so per counter track (pid, name);
- per track, every B has its E (same name when the E names one), in stack
  order, none left open at the end, and no E without a B; an E that carries
  a cat or args carries its B's (speedscope matches a B and its E on name
  and args: "Tried to end ... when ... was on the top of the stack");
- per track, a region B whose name is that of an open task slice (a task's
  own region) has that task as its innermost open slice: a task slice
  around its region;
- per track, complete (X) slices nest: each lies inside the innermost B
  slice open at its start, and two X slices either follow each other or
  nest (tolerance 0.002 us: timestamps are whole nanoseconds rounded on
  clock alignment);
- flow ids are paired: each (cat, id) has exactly one start (s) and one
  finish (f), and its t steps (if any) are between;
- with --ranks N: pids are 0..N-1 and each has a process_name.
With --counts, writes per pid: X slices by "cat/name", B slices by
"cat/name", counter samples, flows, instants (for a test to compare with
ballast's own counts).
"""
import collections
import json
import math
import sys

PHASES = set("BEXiICMstfbenOPND") | {"(", ")"}
TOL = 0.002


class Problems:
    def __init__(self):
        self.items = []

    def add(self, msg):
        self.items.append(msg)

    def __bool__(self):
        return bool(self.items)


def no_dupes(pairs):
    d = {}
    for k, v in pairs:
        if k in d:
            raise ValueError("duplicate key %r" % k)
        d[k] = v
    return d


def bad_constant(c):
    raise ValueError("non-standard JSON constant %s" % c)


def load(path):
    with open(path, "rb") as f:
        raw = f.read()
    doc = json.loads(raw.decode("utf-8"), object_pairs_hook=no_dupes,
                     parse_constant=bad_constant)
    if isinstance(doc, list):
        return doc
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        raise ValueError("top level is neither a list nor an object with a traceEvents list")
    return doc["traceEvents"]


def is_num(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def check_fields(i, ev, p):
    """Per-event field checks; returns False when the event cannot be used further."""
    if not isinstance(ev, dict):
        p.add("event %d is not an object" % i)
        return False
    ph = ev.get("ph")
    if ph not in PHASES:
        p.add("event %d: unknown ph %r" % (i, ph))
        return False
    for k in ("pid", "tid"):
        if k in ev and not isinstance(ev[k], int):
            p.add("event %d: %s is not an integer" % (i, k))
            return False
    if "pid" not in ev:
        p.add("event %d (%s): no pid" % (i, ph))
        return False
    if ph != "M":
        if "tid" not in ev:
            p.add("event %d (%s): no tid" % (i, ph))
            return False
        if not is_num(ev.get("ts")) or ev["ts"] < 0:
            p.add("event %d (%s): ts missing, not a number or negative" % (i, ph))
            return False
    if ph != "E" and not isinstance(ev.get("name"), str):
        p.add("event %d (%s): name missing or not a string" % (i, ph))
        return False
    if ph == "X" and (not is_num(ev.get("dur")) or ev["dur"] < 0):
        p.add("event %d: X without a dur >= 0" % i)
        return False
    if ph == "C":
        a = ev.get("args")
        if not isinstance(a, dict) or not a or not all(is_num(v) for v in a.values()):
            p.add("event %d: counter without numeric args" % i)
            return False
    if ph in ("s", "t", "f") and ("id" not in ev or not isinstance(ev.get("cat"), str)):
        p.add("event %d: flow %s without id or cat" % (i, ph))
        return False
    if ph == "f" and ev.get("bp", "e") != "e":
        p.add("event %d: flow finish with binding point %r" % (i, ev.get("bp")))
    if "args" in ev and not isinstance(ev["args"], dict):
        p.add("event %d: args is not an object" % i)
    return True


class Track:
    def __init__(self):
        self.last_ts = None
        self.stack = []       # open B: (name, ts, index, cat, args)
        self.xs = []          # open X intervals: (start, end, index)


def check_track_event(i, ev, tr, p, b_spans, x_in_b):
    ph, ts = ev["ph"], ev["ts"]
    key = (ev["pid"], ev["tid"])
    if tr.last_ts is not None and ts < tr.last_ts:
        p.add("event %d (%s %r) on track pid %d tid %d: ts %.3f before the previous %.3f"
              % (i, ph, ev.get("name"), key[0], key[1], ts, tr.last_ts))
    tr.last_ts = ts if tr.last_ts is None else max(ts, tr.last_ts)
    # X slices that ended by ts are closed.
    while tr.xs and tr.xs[-1][1] <= ts + TOL:
        tr.xs.pop()
    if ph == "B":
        if tr.xs:
            p.add("event %d: B %r inside the X slice of event %d" % (i, ev["name"], tr.xs[-1][2]))
        cat = ev.get("cat")
        if cat == "region" and any(o[3] == "task" and o[0] == ev["name"] for o in tr.stack) \
                and not (tr.stack[-1][3] == "task" and tr.stack[-1][0] == ev["name"]):
            p.add("event %d: region B %r while its task is not the innermost open slice (%r)"
                  % (i, ev["name"], tr.stack[-1][0]))
        tr.stack.append((ev["name"], ts, i, cat, ev.get("args")))
    elif ph == "E":
        if tr.xs:
            p.add("event %d: E inside the X slice of event %d" % (i, tr.xs[-1][2]))
        if not tr.stack:
            p.add("event %d: E %r on pid %d tid %d with no open B"
                  % (i, ev.get("name"), key[0], key[1]))
        else:
            name, t0, bi, cat, args = tr.stack.pop()
            if "name" in ev and ev["name"] != name:
                p.add("event %d: E %r closes B %r (event %d)" % (i, ev["name"], name, bi))
            elif "cat" in ev and ev["cat"] != cat:
                p.add("event %d: E %r of cat %r closes the B of cat %r (event %d)"
                      % (i, ev.get("name"), ev["cat"], cat, bi))
            elif "args" in ev and ev["args"] != args:
                p.add("event %d: E %r has args %s, its B (event %d) %s"
                      % (i, ev.get("name"), json.dumps(ev["args"]), bi, json.dumps(args)))
            b_spans[bi] = ts
    elif ph == "X":
        end = ts + ev["dur"]
        if tr.xs and end > tr.xs[-1][1] + TOL:
            p.add("event %d: X %r [%.3f, %.3f] overlaps X of event %d ending at %.3f"
                  % (i, ev["name"], ts, end, tr.xs[-1][2], tr.xs[-1][1]))
        tr.xs.append((ts, end, i))
        if tr.stack:  # the enclosing B, checked once its E is known
            x_in_b.append((i, end, tr.stack[-1][2]))


def check(events, ranks):
    p = Problems()
    tracks = collections.defaultdict(Track)
    counters = {}
    flows = collections.defaultdict(lambda: {"s": [], "t": [], "f": []})
    named = set()
    pids = set()
    b_spans = {}
    x_in_b = []
    counts = collections.defaultdict(lambda: collections.Counter())
    for i, ev in enumerate(events):
        if not check_fields(i, ev, p):
            if len(p.items) >= 20:
                break
            continue
        ph, pid = ev["ph"], ev["pid"]
        pids.add(pid)
        c = counts[str(pid)]
        if ph == "M":
            if ev["name"] == "process_name":
                named.add(pid)
            continue
        if ph == "C":
            k = (pid, ev["name"])
            if k in counters and ev["ts"] < counters[k]:
                p.add("event %d: counter %r on pid %d goes back in time" % (i, ev["name"], pid))
            counters[k] = ev["ts"]
            c["C/" + ev["name"]] += 1
            continue
        tr = tracks[(pid, ev["tid"])]
        check_track_event(i, ev, tr, p, b_spans, x_in_b)
        if ph in ("s", "t", "f"):
            flows[(ev["cat"], json.dumps(ev["id"]))][ph].append((ev["ts"], i))
            c["flow_" + ph] += 1
        elif ph in ("B", "X"):
            c[ph + "/" + ev.get("cat", "") + "/" + ev["name"]] += 1
        elif ph in ("i", "I"):
            c["i/" + ev["name"]] += 1
        if len(p.items) >= 20:
            break
    for (pid, tid), tr in tracks.items():
        for name, ts, bi, cat, args in tr.stack:
            p.add("B %r (event %d) on pid %d tid %d never ends" % (name, bi, pid, tid))
    for xi, xend, bi in x_in_b:
        bend = b_spans.get(bi)
        if bend is not None and xend > bend + TOL:
            p.add("X event %d ends at %.3f after its enclosing B (event %d) ends at %.3f"
                  % (xi, xend, bi, bend))
    for (cat, fid), f in flows.items():
        if len(f["s"]) != 1 or len(f["f"]) != 1:
            p.add("flow %s id %s: %d start(s) and %d finish(es), expected 1 and 1"
                  % (cat, fid, len(f["s"]), len(f["f"])))
    if ranks is not None:
        want = set(range(ranks))
        if pids != want:
            p.add("pids %s, expected 0..%d" % (sorted(pids), ranks - 1))
        if named != want:
            p.add("process_name for pids %s, expected 0..%d" % (sorted(named), ranks - 1))
    return p, counts


def main(argv):
    args = argv[1:]
    ranks = None
    counts_out = None
    path = None
    while args:
        a = args.pop(0)
        if a == "--ranks":
            ranks = int(args.pop(0))
        elif a == "--counts":
            counts_out = args.pop(0)
        elif path is None:
            path = a
        else:
            print("usage: check_trace_json.py TRACE.json [--ranks N] [--counts OUT.json]")
            return 2
    if path is None:
        print("usage: check_trace_json.py TRACE.json [--ranks N] [--counts OUT.json]")
        return 2
    try:
        events = load(path)
    except (OSError, ValueError) as e:
        print("%s: not a valid trace: %s" % (path, e))
        return 1
    p, counts = check(events, ranks)
    if counts_out:
        with open(counts_out, "w") as f:
            json.dump({k: dict(v) for k, v in counts.items()}, f, indent=1, sort_keys=True)
    if p:
        for m in p.items[:20]:
            print("%s: %s" % (path, m))
        return 1
    print("%s: valid trace, %d events, %d tracks" % (path, len(events), len(
        {(e["pid"], e.get("tid")) for e in events if isinstance(e, dict) and e.get("ph") != "M"})))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
