#!/usr/bin/env python3
"""ballast vs Zoltan: runs zoltan_vs_ballast on the issue's graphs and machines.

usage: run.py [BINARY] [--quick] [--no-setup]

Installs the benchmark extra libtrilinos-zoltan-dev first (through
scripts/setup.sh, which does nothing when it is present). The binary is built
by CMake only when Zoltan was found at configure time: after the install,
re-run cmake and `make zoltan_vs_ballast`. Zoltan runs under MPI with one
rank. Every result is evaluated by ballast's rta_map_evaluate() on the same
machine model; the table is printed as the binary prints it.
"""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

CONFIGS = [
    # (graph, nodes): 27-point 64^3 stencil and a 48^3 MD cell graph (density
    # falling 4:1 along x) on 32 nodes x 2 sockets x 8 cores (costs 1/6/16),
    # and the stencil on 128 such nodes (2048 cores).
    ("stencil:64", 32),
    ("md:48", 32),
    ("stencil:64", 128),
]
QUICK = [("stencil:32", 8), ("md:24", 8)]


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    binary = args[0] if args else os.path.join(
        ROOT, "build", "bench", "zoltan", "zoltan_vs_ballast")
    if "--no-setup" not in sys.argv:
        subprocess.run(["bash", os.path.join(ROOT, "scripts", "setup.sh"),
                        "libtrilinos-zoltan-dev"], check=True)
    if not os.path.exists(binary):
        sys.exit("zoltan_vs_ballast not built (Zoltan missing at configure "
                 "time?): re-run cmake, then make zoltan_vs_ballast")
    env = dict(os.environ, BALLAST_MONITOR="0", OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    for graph, nodes in (QUICK if "--quick" in sys.argv else CONFIGS):
        print(f"== {graph} on {nodes} nodes", flush=True)
        # ballast-scotch: SCOTCH_graphRemap alone (remap_scotch_only), the
        # remap before ballast's own candidates, for comparison
        subprocess.run(["mpiexec", "-n", "1", "--oversubscribe", binary,
                        "--graph", graph, "--nodes", str(nodes), "--methods",
                        "ballast-scotch,rcb,hsfc,graph,scotch,hypergraph"],
                       env=env, check=True)


if __name__ == "__main__":
    main()
