#!/usr/bin/env python3
"""Runs the C program and a Fortran program (the same MPI calls, fwrap.c and
fwrap.F90) under mpiexec with BALLAST_PROFILE, and checks that their
profiles agree rank by rank: the same activities with the same numbers of
calls and bytes, the same regions (names, nesting, counts) and the same
partners (bytes and messages both ways). Calls made in a loop until a test
succeeds (MPI_Test*, MPI_Iprobe, MPI_Improbe) may repeat a different number
of times: for those only the bytes are compared, and the call is required.

usage: compare.py MPIEXEC NP C_APP F_APP WORKDIR [--preload LIB [FIRST...]]
With --preload, F_APP is not linked to ballast: it runs with
LD_PRELOAD=FIRST:...:LIB (FIRST: the sanitizer runtime of a sanitizer build).
"""
import json
import os
import subprocess
import sys

LOOPED = {"MPI_Test", "MPI_Testall", "MPI_Testany", "MPI_Testsome", "MPI_Iprobe",
          "MPI_Improbe"}


def fail(msg):
    print("FAIL compare: " + msg)
    sys.exit(1)


def run(mpiexec, np, app, work, tag, preload=None):
    prof = os.path.join(work, "profile_%s.json" % tag)
    data = os.path.join(work, "io_%s.dat" % tag)
    for f in (prof, data):
        if os.path.exists(f):
            os.unlink(f)
    cmd = [mpiexec, "-n", np, "--oversubscribe", "-x", "BALLAST_PROFILE=" + prof,
           "-x", "BALLAST_REPORT=terse"]
    if preload:
        cmd += ["-x", "LD_PRELOAD=" + preload]
    cmd += [app, data]
    res = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         universal_newlines=True, timeout=100)
    print("$ " + " ".join(cmd))
    print(res.stdout)
    if res.returncode != 0:
        fail("%s exited with %d" % (app, res.returncode))
    if not os.path.exists(prof):
        fail("%s wrote no profile (are its MPI calls reaching ballast?)" % app)
    with open(prof) as f:
        return json.load(f)["ballast_profile"]


def regions(rank):
    """Regions as path -> count (the path names the nesting)."""
    by_id = {r["id"]: r for r in rank["regions"]}

    def path(r):
        names = []
        while r is not None:
            names.append(r["name"])
            r = by_id.get(r["parent"])
        return "/".join(reversed(names))
    return {path(r): r["count"] for r in rank["regions"]}


def compare(c, f):
    if c["ranks"] != f["ranks"]:
        fail("ranks: C %d, Fortran %d" % (c["ranks"], f["ranks"]))
    nact = 0
    for rc, rf in zip(c["ranks_data"], f["ranks_data"]):
        r = rc["rank"]
        ac, af = rc["activities"], rf["activities"]
        if sorted(ac) != sorted(af):
            fail("rank %d: activities differ: only in C %s, only in Fortran %s"
                 % (r, sorted(set(ac) - set(af)), sorted(set(af) - set(ac))))
        for name in sorted(ac):
            vc, vf = ac[name], af[name]
            if vc["nbytes"] != vf["nbytes"]:
                fail("rank %d %s: bytes C %d, Fortran %d" % (r, name, vc["nbytes"], vf["nbytes"]))
            if name in LOOPED:
                if vf["ncalls"] < 1:
                    fail("rank %d %s: no call" % (r, name))
            elif vc["ncalls"] != vf["ncalls"]:
                fail("rank %d %s: calls C %d, Fortran %d" % (r, name, vc["ncalls"], vf["ncalls"]))
            nact += 1
        gc, gf = regions(rc), regions(rf)
        if gc != gf:
            fail("rank %d: regions C %s, Fortran %s" % (r, gc, gf))
        if rc["partners"] != rf["partners"]:
            fail("rank %d: partners C %s, Fortran %s" % (r, rc["partners"], rf["partners"]))
    return nact


def main():
    args = sys.argv[1:]
    preload = None
    if "--preload" in args:
        i = args.index("--preload")
        libs = args[i + 1:]
        if not libs:
            fail("--preload needs the library")
        preload = ":".join(libs[1:] + libs[:1])
        args = args[:i]
    if len(args) != 5:
        fail(__doc__)
    mpiexec, np, capp, fapp, work = args
    os.makedirs(work, exist_ok=True)
    tag = os.path.basename(fapp) + ("_preload" if preload else "")
    c = run(mpiexec, np, capp, work, tag + "_c")
    f = run(mpiexec, np, fapp, work, tag, preload)
    nact = compare(c, f)
    # A profile with (almost) nothing in it would agree too: require the
    # program's whole set of calls.
    if nact < 60 * c["ranks"] // 2:
        fail("only %d activities over %d ranks" % (nact, c["ranks"]))
    print("OK: %s and the C program agree (%d activity rows, regions, partners)"
          % (os.path.basename(fapp), nact))


if __name__ == "__main__":
    main()
