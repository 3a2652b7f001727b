#!/usr/bin/env python3
"""Mapping benchmark (issue 4): quality, speed and scaling of ballast's
strategies, measured with the ballast-map tool on simulated machines.

  run.py TOOL [--reps N] [--big] [--skip-scaling] [--out FILE]

1. Quality: 27-point 64^3 stencil (face/edge/corner 4/2/1) onto 32 nodes x
   2 sockets x 8 cores, costs 1 (same socket) / 6 (other socket) / 16 (other
   node); every strategy; ratios against the targets.
2. Speed: 10^6 tasks (27-point 100^3) onto 1,024 nodes x 24 cores, two-phase,
   median of N runs: wall seconds of the mapping (as ballast reports it),
   CPU seconds and peak RSS of the whole process (graph generation included).
3. Scaling: tasks 10^3..10^6 (10^7 with --big) and cores 64..98,304: time per
   stage (graph build, phase 1, phase 2, metrics) and quality.
Each tool run is its own process so CPU time and peak RSS are attributable.
The machine is shared: wall times are medians, CPU times are given beside.
"""
import json
import resource
import statistics
import subprocess
import sys
import time

args = sys.argv[1:]
if not args:
    sys.exit(__doc__)
TOOL = args[0]
REPS = int(args[args.index("--reps") + 1]) if "--reps" in args else 3
BIG = "--big" in args
OUT = args[args.index("--out") + 1] if "--out" in args else None
results = {"quality": [], "speed": [], "scaling": []}


def tool(*a):
    """Runs the tool once; returns (list of JSON records, cpu seconds, wall)."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    p = subprocess.run([TOOL, *a, "--json"], capture_output=True, text=True)
    wall = time.monotonic() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        sys.exit("ballast-map failed: %s\n%s" % (" ".join(a), p.stderr))
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return [json.loads(l) for l in p.stdout.splitlines()], cpu, wall


def load_avg():
    with open("/proc/loadavg") as f:
        return f.read().split()[0]


print("# ballast mapping benchmark (load average at start: %s, %d repetitions)"
      % (load_avg(), REPS))

# ---- 1. quality -------------------------------------------------------------
Q = ["--stencil", "27:64", "--nodes", "32", "--node-topo", "pack:2 core:8",
     "--internode-cost", "16", "--level-costs", "6,1"]
print("\n## 1. Quality: 27-pt 64^3 onto 32 nodes x 2 sockets x 8 cores (1/6/16)\n")
print("| strategy | max/avg core | max/avg node | edge cut | hop-bytes | inter-node volume "
      "| seconds (median) |")
print("|---|---|---|---|---|---|---|")
q = {}
for s in ("roundrobin", "block", "random", "tleaf", "twophase"):
    runs = [tool(*Q, "--strategies", s)[0][0] for _ in range(REPS if s in ("tleaf", "twophase") else 1)]
    r = runs[0]
    r["seconds_median"] = statistics.median(x["seconds"] for x in runs)
    q[s] = r
    results["quality"].append(r)
    print("| %s | %.4f | %.4f | %.4g | %.4gM | %.4g | %.2f |" % (
        s, r["max_avg_load"], r["max_avg_load_node"], r["edge_cut"], r["hop_bytes"] / 1e6,
        r["internode_volume"], r["seconds_median"]))
tp = q["twophase"]
targets = [
    ("hop-bytes / round-robin", tp["hop_bytes"] / q["roundrobin"]["hop_bytes"], 0.15),
    ("hop-bytes / block", tp["hop_bytes"] / q["block"]["hop_bytes"], 0.25),
    ("max/avg load", tp["max_avg_load"], 1.03),
    ("inter-node volume / round-robin",
     tp["internode_volume"] / q["roundrobin"]["internode_volume"], 0.12),
]
print("\n| two-phase target | measured | target | met |\n|---|---|---|---|")
for name, val, tgt in targets:
    print("| %s | %.4f | <= %.2f | %s |" % (name, val, tgt, "yes" if val <= tgt else "NO"))
results["targets"] = [{"name": n, "value": v, "target": t} for n, v, t in targets]

# ---- 2. speed ----------------------------------------------------------------
S = ["--stencil", "27:100", "--nodes", "1024", "--node-topo", "pack:2 core:12",
     "--strategies", "twophase"]
print("\n## 2. Speed: 10^6 tasks (27-pt 100^3) onto 1,024 nodes x 24 cores, two-phase\n")
runs = []
for _ in range(REPS):
    recs, cpu, wall = tool(*S)
    r = recs[0]
    r["cpu_process"] = cpu
    r["wall_process"] = wall
    runs.append(r)
results["speed"] = runs
med = {k: statistics.median(r[k] for r in runs)
       for k in ("seconds", "seconds_phase1", "seconds_phase2", "seconds_metrics",
                 "cpu_process", "wall_process", "peak_rss_mib")}
print("| figure | median of %d |\n|---|---|" % REPS)
print("| mapping wall seconds (ballast's figure) | %.2f |" % med["seconds"])
print("| of which phase 1 / phase 2 / metrics | %.2f / %.2f / %.2f |" % (
    med["seconds_phase1"], med["seconds_phase2"], med["seconds_metrics"]))
print("| process CPU seconds (incl. graph generation) | %.2f |" % med["cpu_process"])
print("| process wall seconds | %.2f |" % med["wall_process"])
print("| peak RSS (MiB) | %.0f |" % med["peak_rss_mib"])
print("| max/avg load, hop-bytes | %.4f, %.4g |" % (runs[0]["max_avg_load"], runs[0]["hop_bytes"]))
print("| target <= 10 s wall: %s (CPU: %s) |  |" % (
    "met" if med["seconds"] <= 10 else "NOT met",
    "met" if med["cpu_process"] <= 10 else "NOT met"))

# ---- 3. scaling --------------------------------------------------------------
if "--skip-scaling" not in args:
    rows = [("10^3", "27:10", 4, "pack:2 core:8"),
            ("10^4", "27:22", 32, "pack:2 core:8"),
            ("10^5", "27:46", 256, "pack:2 core:8"),
            ("10^6", "27:100", 1024, "pack:2 core:12"),
            ("10^6", "27:100", 4096, "pack:2 core:12")]
    if BIG:
        rows.append(("10^7", "7:216", 4096, "pack:2 core:12"))
    print("\n## 3. Scaling (one run each; wall seconds per stage, process CPU and RSS)\n")
    print("| tasks | cores | strategy | build | phase 1 | phase 2 | metrics | total | CPU "
          "| RSS MiB | max/avg | hop-bytes | hop / round-robin |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for label, st, nodes, topo in rows:
        base = ["--stencil", st, "--nodes", str(nodes), "--node-topo", topo]
        rr = tool(*base, "--strategies", "roundrobin")[0][0]
        # The single pass is 3-10x slower than two-phase at 10^6 already:
        # the 10^7 row maps with two-phase only.
        for s in ("twophase", "tleaf") if not label.startswith("10^7") else ("twophase",):
            recs, cpu, wall = tool(*base, "--strategies", s)
            r = recs[0]
            r.update({"cpu_process": cpu, "label": label, "stencil": st})
            results["scaling"].append(r)
            print("| %s (%d) | %d | %s | %.2f | %.2f | %.2f | %.2f | %.2f | %.1f | %.0f | %.4f "
                  "| %.4g | %.3f |" % (
                      label, r["tasks"], r["slots"], s, r["seconds_build"],
                      r["seconds_phase1"], r["seconds_phase2"], r["seconds_metrics"],
                      r["seconds"], cpu, r["peak_rss_mib"], r["max_avg_load"],
                      r["hop_bytes"], r["hop_bytes"] / rr["hop_bytes"]))
            sys.stdout.flush()
print("\nload average at end: %s" % load_avg())
if OUT:
    with open(OUT, "w") as f:
        json.dump(results, f, indent=1)
