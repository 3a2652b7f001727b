#!/usr/bin/env python3
"""Mapping at scale, by simulation (issue 7, part 4).

  run.py BALLAST_MAP [DIST_VS_SEQ] [--rows a,b,...] [--skip-dist] [--out FILE]

1. ballast-map (one process per run: wall, CPU, peak RSS attributable) on
   machine models of 1,024 to 10,000 nodes: a fat-tree as a SCOTCH tree-leaf
   network (leaf switches of 32 or 100 nodes, 2 hops between switches) and a
   3D torus, nodes of 2 sockets; task graphs of 10^5 to 10^7 vertices
   (27-point and 7-point stencils, MD linked-cell graphs). Strategies:
   two-phase everywhere; the single-pass tree-leaf where it runs in a few
   minutes (its quality is the reference: two-phase within 5% of it).
2. dist_vs_seq under mpiexec -n 1/2/4: the two-phase mapping with the
   sequential phase 1 and with the distributed (PT-Scotch) one.
Reuses bench/rta_map/run.py's way of running the tool (its tool() helper is
copied in spirit: one subprocess, --json, getrusage of the children).
"""
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

args = sys.argv[1:]
if not args:
    sys.exit(__doc__)
TOOL = args[0]
DIST = args[1] if len(args) > 1 and not args[1].startswith("--") else None
OUT = args[args.index("--out") + 1] if "--out" in args else None
ONLY = args[args.index("--rows") + 1].split(",") if "--rows" in args else None
TMP = tempfile.mkdtemp(prefix="map_scale_")


def arch(name, text):
    path = os.path.join(TMP, name + ".tgt")
    with open(path, "w") as f:
        f.write(text + "\n")
    return path


FT1K = arch("fattree1024", "tleaf 2 32 2 32 1")     # 32 switches x 32 nodes
FT10K = arch("fattree10000", "tleaf 2 100 2 100 1")  # 100 x 100 nodes
TOR1K = arch("torus1024", "torus3D 8 8 16")
TOR10K = arch("torus10000", "torus3D 25 20 20")

# (row id, graph args, arch, node topology, strategies)
ROWS = [
    ("a", ["--stencil", "27:46"], FT1K, "pack:2 core:8", "twophase,tleaf"),
    ("b", ["--stencil", "27:46"], TOR1K, "pack:2 core:8", "twophase,tleaf"),
    ("c", ["--stencil", "27:100"], FT1K, "pack:2 core:12", "twophase"),
    ("d", ["--md", "100", "--md-ratio", "0.3"], TOR1K, "pack:2 core:12", "twophase"),
    ("e", ["--stencil", "27:100"], FT10K, "pack:2 core:5", "twophase"),
    ("f", ["--stencil", "7:216"], TOR10K, "pack:2 core:5", "twophase"),
]


def tool(*a):
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    p = subprocess.run([TOOL, *a, "--json"], capture_output=True, text=True)
    wall = time.monotonic() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        print("ballast-map failed: %s\n%s" % (" ".join(a), p.stderr))
        return [], 0, wall
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return [json.loads(l) for l in p.stdout.splitlines() if l.startswith("{")], cpu, wall


def load():
    with open("/proc/loadavg") as f:
        return f.read().split()[0]


results = {"rows": [], "dist": []}
print("# map_scale (load average at start %s)\n" % load())
print("| row | tasks | nodes | cores | network | strategy | build | phase 1 | phase 2 "
      "| metrics | total wall | process CPU | RSS MiB | max/avg | hop-bytes | inter-node |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for rid, graph, net, topo, strats in ROWS:
    if ONLY and rid not in ONLY:
        continue
    for s in strats.split(","):
        recs, cpu, wall = tool(*graph, "--arch", net, "--node-topo", topo,
                               "--strategies", s)
        if not recs:
            continue
        r = recs[0]
        r.update({"row": rid, "cpu_process": cpu, "wall_process": wall,
                  "network": os.path.basename(net)})
        results["rows"].append(r)
        print("| %s | %d | %d | %d | %s | %s | %.2f | %.2f | %.2f | %.2f | %.2f | %.1f "
              "| %.0f | %.4f | %.4g | %.4g |" % (
                  rid, r["tasks"], r["nodes"], r["slots"], r["network"], s,
                  r["seconds_build"], r["seconds_phase1"], r["seconds_phase2"],
                  r["seconds_metrics"], r["seconds"], cpu, r["peak_rss_mib"],
                  r["max_avg_load"], r["hop_bytes"], r["internode_volume"]))
        sys.stdout.flush()

if DIST and "--skip-dist" not in args:
    print("\n## distributed phase 1 vs sequential (27-pt 100^3 onto 1,024 x 24)\n")
    env = dict(os.environ, BALLAST_MONITOR="0", OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    for np in (1, 2, 4):
        p = subprocess.run(["mpiexec", "-n", str(np), "--oversubscribe", DIST,
                            "--stencil", "27:100", "--nodes", "1024", "--topo",
                            "pack:2 core:12"], capture_output=True, text=True, env=env)
        for l in p.stdout.splitlines():
            if l.startswith("{"):
                results["dist"].append(json.loads(l))
                print(l)
        sys.stdout.flush()
print("\nload average at end: %s" % load())
if OUT:
    with open(OUT, "w") as f:
        json.dump(results, f, indent=1)
