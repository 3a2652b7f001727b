#!/usr/bin/env python3
"""BALLAST_CUBE at 10^3-10^5 ranks, by count (src/mon/cube.c's algorithm),
from rates measured on this machine (cube_write.sh).

usage: scale.py [--paths U] [--per-node N] [--path-us T] [--fs-mbs B]

  --paths U     call paths of the job (default 91: the main job's)
  --per-node N  ranks per host (default 128)
  --path-us T   measured writer cost per call path and merge round, us
                (default 12.6: cube_write.sh, 10^5 regions on 2 ranks,
                call tree and system phase / call paths)
  --fs-mbs B    file system write bandwidth seen by the job, MB/s (default
                50: this VM's, cube_write.sh's files phase; a parallel file
                system gives 10^3-10^5)

Per rank the writer holds: its own paths (bytes + 24 B each), the union
list (bytes + 4 B each), the tree (44 B per cnode), the values twice (88 B
per cnode each, one transient) and MPI_Comm_split's O(P) exchange (two
ints per rank, twice). A host's first rank also holds its ranks' columns
twice (2 x N x 88 B per cnode); rank 0 also anchor.xml (~300 B per cnode,
~230 B per rank) and two ints per rank. Time: ceil(log2 P) merge rounds of
at most U paths, the broadcast of the union, two communicator splits and a
gather of one int per rank (latency 5 us per step assumed), anchor.xml on
rank 0 (~200 MB/s of text), and the data members (P x U x 11 metrics x 8 B)
at the file system's bandwidth.
"""
import argparse
import math

ap = argparse.ArgumentParser()
ap.add_argument("--paths", type=int, default=91)
ap.add_argument("--per-node", type=int, default=128)
ap.add_argument("--path-us", type=float, default=12.6)
ap.add_argument("--fs-mbs", type=float, default=50.0)
a = ap.parse_args()

NMET, PATH_BYTES, LAT = 11, 100, 5e-6
U = a.paths
print("call paths %d, %d ranks per host, %.1f us per path, file system %.0f MB/s" %
      (U, a.per_node, a.path_us, a.fs_mbs))
print("| ranks | merge rounds | call tree (s) | splits + gather (s) | anchor.xml (MB, s) "
      "| data (MB) | files (s) | total (s) | memory per rank (MB) | host's first rank (MB) | rank 0 (MB) |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for P in (1000, 10000, 100000):
    rounds = math.ceil(math.log2(P))
    tree = rounds * (LAT + U * a.path_us * 1e-6) + rounds * (LAT + U * PATH_BYTES / 1e9)
    splits = 2 * (rounds * LAT + P * 8 / 1e9 * 4 + P * math.log2(P) * 20e-9) + P * 4 / 1e9
    anchor_b = U * 300 + P * 230
    anchor_s = anchor_b / 200e6
    data_b = P * U * NMET * 8
    files = data_b / (a.fs_mbs * 1e6)
    mem = (U * (PATH_BYTES + 24) + U * (PATH_BYTES + 4) + U * 44 + 2 * U * NMET * 8 +
           2 * 2 * 4 * P) / 1e6
    lead = mem + 2 * a.per_node * U * NMET * 8 / 1e6
    r0 = lead + (anchor_b + 2 * 4 * P) / 1e6
    total = tree + splits + anchor_s + files
    print("| %s | %d | %.4f | %.4f | %.1f, %.3f | %.0f | %.2f | %.2f | %.2f | %.2f | %.1f |" % (
        format(P, ","), rounds, tree, splits, anchor_b / 1e6, anchor_s, data_b / 1e6, files,
        total, mem, lead, r0))
