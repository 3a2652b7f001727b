#!/usr/bin/env python3
"""A text summary of a trace written by ballast's Perfetto writer: what the
timeline will show before opening it in https://ui.perfetto.dev.

Usage: trace_summary.py TRACE.json

Prints the ranks and threads, the events per kind, each remap (when, on
rank 0's clock from the start of the trace; strategy; tasks and bytes moved;
committed or not), and the imbalance counter over the run (first judged,
before and after the first remap, last), so a run whose load balancing
worked shows the imbalance falling after the remap.
"""
import collections
import json
import sys


def main(path):
    with open(path) as f:
        events = json.load(f)["traceEvents"]
    kinds = collections.Counter()
    tracks = set()
    remaps = []
    imbalance = []
    result = {}
    t_end = 0.0
    for e in events:
        ph = e.get("ph")
        if ph == "M":
            continue
        tracks.add((e["pid"], e["tid"]))
        t_end = max(t_end, e["ts"] + e.get("dur", 0))
        kinds[(ph, e.get("cat", ""))] += 1
        # The outcome of a remap is the instant "remap result" just before
        # the remap slice's E (whose args repeat its B's), on rank 0.
        if ph == "i" and e.get("name") == "remap result" and e["pid"] == 0:
            result = e.get("args", {})
        elif ph == "E" and e.get("cat") == "lb" and e["pid"] == 0:
            remaps.append((e["ts"], e["name"], result))
            result = {}
        elif ph == "C" and e["name"].startswith("imbalance"):
            v = e["args"].get("imbalance", 0)
            if v > 0:  # 0: the policy did not judge this step (warm-up)
                imbalance.append((e["ts"], v))
    ranks = sorted({p for p, _ in tracks})
    print("trace %s: %d ranks, %d thread tracks, %.3f s" % (path, len(ranks), len(tracks),
                                                          t_end / 1e6))
    names = {"B": "slices", "X": "slices", "C": "counter samples", "i": "instants",
             "s": "flow starts", "f": "flow ends"}
    for (ph, cat), n in sorted(kinds.items()):
        if ph in ("B", "X", "C", "i", "s", "f"):
            print("  %-10s %-16s %d" % (cat or "-", names[ph], n))
    print("remaps: %d" % len(remaps))
    for ts, name, a in remaps[:10]:
        print("  at %8.3f s  %-18s %4s tasks moved, %10s bytes, mapping %.3f s, migration %.3f s,"
              " %s" % (ts / 1e6, name, a.get("tasks_moved", "?"), a.get("bytes_moved", "?"),
                       a.get("mapping_s", 0), a.get("migration_s", 0),
                       "committed" if a.get("committed") else "rolled back"))
    if len(remaps) > 10:
        print("  ... %d more" % (len(remaps) - 10))
    if imbalance:
        first = imbalance[0]
        last = imbalance[-1]
        line = "imbalance (max/avg step time): first judged %.3f at %.3f s" % (first[1],
                                                                               first[0] / 1e6)
        if remaps:
            before = [v for t, v in imbalance if t <= remaps[0][0]]
            after = [v for t, v in imbalance if t > remaps[0][0]]
            if before and after:
                line += "; %.3f before the first remap, %.3f after it" % (before[-1], after[0])
        print(line + "; last %.3f at %.3f s" % (last[1], last[0] / 1e6))
    else:
        print("imbalance: no step was judged")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[2])
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
