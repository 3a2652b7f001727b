#!/usr/bin/env python3
"""The fortran_pia example (use mpi, linked to ballast) on 2 ranks: its own
MPI calls (MPI_Init, MPI_Comm_rank, MPI_Barrier, MPI_Finalize, one each per
rank) are in its profile, and in its report.

usage: check_pia.py MPIEXEC FORTRAN_PIA WORKDIR"""
import json
import os
import subprocess
import sys


def fail(msg):
    print("FAIL fortran_pia_calls: " + msg)
    sys.exit(1)


def main():
    mpiexec, app, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    prof = os.path.join(work, "fortran_pia_profile.json")
    if os.path.exists(prof):
        os.unlink(prof)
    cmd = [mpiexec, "-n", "2", "--oversubscribe", "-x", "BALLAST_PROFILE=" + prof,
           "-x", "BALLAST_REPORT=full", app]
    res = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         universal_newlines=True, timeout=50)
    print(res.stdout)
    if res.returncode != 0:
        fail("the example exited with %d" % res.returncode)
    if not os.path.exists(prof):
        fail("no profile at %s" % prof)
    with open(prof) as f:
        p = json.load(f)["ballast_profile"]
    if p["ranks"] != 2:
        fail("ranks %d, expected 2" % p["ranks"])
    for r in p["ranks_data"]:
        acts = r["activities"]
        for name in ("MPI_Init", "MPI_Comm_rank", "MPI_Barrier", "MPI_Finalize"):
            got = acts.get(name, {}).get("ncalls", 0)
            if got != 1:
                fail("rank %d: %s called %d times in the profile, expected 1"
                     % (r["rank"], name, got))
    for name in ("MPI_Comm_rank", "MPI_Barrier"):
        if name not in res.stdout:
            fail("%s is not in the report" % name)
    print("OK: the example's MPI calls are in its profile and report")


if __name__ == "__main__":
    main()
