#!/usr/bin/env python3
"""Topology reordering under LD_PRELOAD: topo_preload_app (the test program of
test_topo_reorder.c linked to MPI only, never rebuilt for ballast) runs on 8
ranks spread round-robin over 2 nodes with libballast.so preloaded; the
program checks its own communicators (rank order, topology queries, fewer
links between nodes), and this script checks that the profile says what
ballast did: the three Cartesian and graph constructors reordered, hop-bytes
lower after than before (the distributed graphs keep MPI's order).

usage: check_preload.py MPIEXEC APP LIBBALLAST WORKDIR [PRELOAD_FIRST...]"""
import json
import os
import subprocess
import sys


def fail(msg):
    print("FAIL topo_preload: " + msg)
    sys.exit(1)


def main():
    mpiexec, app, lib, work = sys.argv[1:5]
    preload = ":".join(sys.argv[5:] + [lib])
    os.makedirs(work, exist_ok=True)
    prof = os.path.join(work, "topo_preload_profile.json")
    if os.path.exists(prof):
        os.unlink(prof)
    cmd = [mpiexec, "-n", "8", "--oversubscribe", "-x", "LD_PRELOAD=" + preload,
           "-x", "BALLAST_PROFILE=" + prof,
           "-x", "BALLAST_HW_LAYOUT=node_of_rank=0,1,0,1,0,1,0,1", app, "on"]
    run = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         universal_newlines=True, timeout=100)
    print(run.stdout)
    if run.returncode != 0:
        fail("the program failed (%d)" % run.returncode)
    if "topology reorder: 3 calls reordered" not in run.stdout:
        fail("the report does not say that 3 calls were reordered")
    with open(prof) as f:
        doc = json.load(f)["ballast_profile"]
    t = doc.get("topology_reorder")
    if not t or t["reordered"] != 3:
        fail("profile member topology_reorder: %r" % t)
    names = [c["call"] for c in t["calls"]]
    want = ["MPI_Cart_create", "MPI_Cart_create", "MPI_Graph_create"]
    if names != want:
        fail("calls %r, expected %r" % (names, want))
    for c in t["calls"]:
        if not (c["ranks"] == 8 and c["nodes"] == 2 and
                c["hop_bytes_after"] < c["hop_bytes_before"] and c["seconds"] > 0):
            fail("call %r" % c)
    print("PASS topo_preload")


if __name__ == "__main__":
    main()
