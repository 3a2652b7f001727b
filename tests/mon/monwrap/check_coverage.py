#!/usr/bin/env python3
"""Coverage test of the wrappers: every function the issue requires is in the
spec, and libballast.so exports a wrapper (MPI_X) for every spec entry.

usage: check_coverage.py SPEC LIBBALLAST_SO"""
import re
import subprocess
import sys

P2P = ["Send", "Bsend", "Ssend", "Rsend", "Recv", "Sendrecv", "Sendrecv_replace",
       "Isend", "Ibsend", "Issend", "Irsend", "Irecv",
       "Send_init", "Bsend_init", "Ssend_init", "Rsend_init", "Recv_init", "Start", "Startall",
       "Probe", "Iprobe", "Mprobe", "Improbe", "Mrecv", "Imrecv"]
WAIT = ["Wait", "Waitall", "Waitany", "Waitsome", "Test", "Testall", "Testany", "Testsome",
        "Request_free"]
COLL_BASE = ["Bcast", "Gather", "Gatherv", "Scatter", "Scatterv", "Allgather", "Allgatherv",
             "Alltoall", "Alltoallv", "Alltoallw", "Reduce", "Allreduce", "Reduce_scatter",
             "Reduce_scatter_block", "Scan", "Exscan", "Barrier"]
NBR = ["Neighbor_allgather", "Neighbor_allgatherv", "Neighbor_alltoall", "Neighbor_alltoallv",
       "Neighbor_alltoallw"]
COLL = COLL_BASE + ["I" + c.lower() for c in COLL_BASE] + NBR + ["I" + n.lower() for n in NBR]
RMA = ["Put", "Get", "Accumulate", "Get_accumulate", "Fetch_and_op", "Compare_and_swap",
       "Rput", "Rget", "Raccumulate", "Rget_accumulate", "Win_fence", "Win_lock", "Win_unlock",
       "Win_lock_all", "Win_unlock_all", "Win_post", "Win_start", "Win_complete", "Win_wait",
       "Win_flush", "Win_flush_all", "Win_flush_local", "Win_flush_local_all"]
IO = []
for op in ("read", "write"):
    for v in ("", "_at", "_all", "_at_all", "_shared", "_ordered"):
        IO.append("File_%s%s" % (op, v))
    for v in ("", "_at", "_all", "_at_all", "_shared"):
        IO.append("File_i%s%s" % (op, v))
    for v in ("_all", "_at_all", "_ordered"):
        IO += ["File_%s%s_begin" % (op, v), "File_%s%s_end" % (op, v)]
INIT = ["Init", "Init_thread", "Finalize", "Pcontrol"]
COMM = ["Comm_dup", "Comm_split", "Comm_split_type", "Comm_create", "Comm_create_group",
        "Comm_free", "Intercomm_create", "Cart_create", "Graph_create", "Dist_graph_create",
        "Dist_graph_create_adjacent", "Comm_idup"]
REQUIRED = ["MPI_" + n for n in P2P + WAIT + COLL + RMA + IO + INIT + COMM]


def main():
    spec, lib = sys.argv[1:3]
    names = []
    with open(spec) as f:
        for line in f:
            m = re.match(r"^(?:int|double)\s+(MPI_\w+)\s*\(", line)
            if m:
                names.append(m.group(1))
    missing = [n for n in REQUIRED if n not in names]
    if missing:
        sys.exit("FAIL: required functions missing from the spec: " + " ".join(missing))
    if len(set(names)) != len(names):
        sys.exit("FAIL: duplicate spec entries")
    out = subprocess.run(["nm", "-D", "--defined-only", lib], stdout=subprocess.PIPE,
                         check=True, universal_newlines=True).stdout
    exported = {l.split()[-1] for l in out.splitlines() if l.strip()}
    unexported = [n for n in names if n not in exported]
    if unexported:
        sys.exit("FAIL: no wrapper exported for: " + " ".join(unexported))
    pm = [n for n in exported if n.startswith("PMPI_")]
    if pm:
        sys.exit("FAIL: libballast must not define PMPI_ symbols: " + " ".join(pm[:5]))
    print("PASS monwrap_coverage: %d required functions in the spec, %d wrappers exported"
          % (len(REQUIRED), len(names)))


if __name__ == "__main__":
    main()
