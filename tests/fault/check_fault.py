#!/usr/bin/env python3
"""Runs fault_victim MODE on NP ranks with BALLAST_PROFILE set, kills it as
the mode says, merges the parts with ballast-profile-merge and checks the
values of the merged profile: every rank present, its reason, region "work"
left exactly WORK times, WORK MPI_Sendrecv calls of 400 bytes each way to
each neighbour, a positive wall time. Mode "normal" (every rank finalizes)
checks the same values in the profile rank 0 wrote, and that no part or
temporary file is left beside it; mode "unwritable" (every rank finalizes,
but the profile's path is a folder, so rank 0's rename fails) that every
rank kept its part ("MPI_Finalize") and rank 0 said so once.
usage: check_fault.py MPIEXEC VICTIM MERGE MODE NP"""
import glob
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

WORK = 7
mpiexec, victim, merge, mode, np = sys.argv[1:6]
np = int(np)
tmp = tempfile.mkdtemp(prefix="ballast_fault_")
env = dict(os.environ, BALLAST_PROFILE=os.path.join(tmp, "profile.json"),
           BALLAST_REPORT="none", BALLAST_VERBOSE="0",
           # Open MPI ends the other ranks with SIGCONT, then SIGTERM after
           # this many seconds, then SIGKILL after as many again, and sleeps
           # through both whether the ranks are gone or not (its odls
           # kill_local_procs): the test waits twice this value. 1 (Open
           # MPI's default) gives a rank 1 s to run its handler, too short on
           # a loaded machine; 3 gives it 3 s for a handler that renders
           # into a buffer ready since MPI_Init and makes 4 system calls (a
           # scheduler's grace period is longer: Slurm's KillWait is 30 s).
           OMPI_MCA_odls_base_sigkill_timeout="3")
if "ASAN_OPTIONS" in env:
    # The sanitizer build: AddressSanitizer keeps SIGSEGV to itself unless
    # told to let the program install its own handler.
    env["ASAN_OPTIONS"] += ":allow_user_segv_handler=1"
if mode == "kill":
    env["BALLAST_PROFILE_INTERVAL"] = "0.2"
    # The parts are the periodic ones, written before the test's SIGKILL:
    # no handler to wait for.
    env["OMPI_MCA_odls_base_sigkill_timeout"] = "1"
if mode in ("exit", "return", "late"):
    # Every rank writes its part before it exits or is ended (the others in
    # "late" on entering MPI_Finalize): no handler to wait for
    # (mpiexec waits the whole timeout before it ends).
    env["OMPI_MCA_odls_base_sigkill_timeout"] = "2"
if mode == "unwritable":
    os.mkdir(os.path.join(tmp, "profile.json"))
    env["BALLAST_VERBOSE"] = "1"
cmd = [mpiexec, "-n", str(np), "--oversubscribe", victim, mode, tmp]
p = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def wait_ready():
    t0 = time.time()
    while time.time() - t0 < 60:
        files = glob.glob(os.path.join(tmp, "ready.[0-9]*"))
        if len(files) == np:
            return [int(open(f).read()) for f in files]
        if p.poll() is not None:
            sys.exit("victim ended before it was ready: %s" % p.stderr.read().decode())
        time.sleep(0.05)
    sys.exit("victim not ready after 60 s")


if mode in ("term", "kill"):
    for pid in wait_ready():
        os.kill(pid, signal.SIGTERM if mode == "term" else signal.SIGKILL)
try:
    p.wait(timeout=90)
except subprocess.TimeoutExpired:
    p.kill()
    sys.exit("victim did not end")


def check_rank(d, rank):
    assert d["rank"] == rank and "error" not in d, d
    work = [g for g in d["regions"] if g["name"] == "work"]
    assert len(work) == 1 and work[0]["count"] == WORK, work
    assert work[0]["wtime"] > 0 and work[0]["wtime"] <= d["wall"], (work, d["wall"])
    sr = d["activities"]["MPI_Sendrecv"]
    assert sr["ncalls"] == WORK, sr
    assert 0 < sr["tmin"] <= sr["tmax"] <= sr["tsum"], sr
    # the distributions: every instance and call in the buckets
    for dist in (work[0]["dist"], sr["dist"]):
        assert dist["count"] == WORK and sum(c for _, c in dist["buckets"]) == WORK, dist
        assert dist["min"] <= dist["p50"] <= dist["p90"] <= dist["p99"] <= dist["max"], dist
    nxt = d["partners"][str((rank + 1) % np)]
    prv = d["partners"][str((rank + np - 1) % np)]
    if np > 2:  # distinct neighbours: sends to the next, receives from the previous
        assert nxt["bytes"] == WORK * 400 and nxt["msgs"] == WORK, nxt
        assert prv["rbytes"] == WORK * 400 and prv["rmsgs"] == WORK, prv


if mode == "normal":
    err = p.stderr.read().decode()
    assert p.returncode == 0, "mode normal failed (%d): %s" % (p.returncode, err)
    left = sorted(os.path.basename(x) for x in os.listdir(tmp))
    assert left == ["profile.json"], "left beside the profile: %s" % left
    prof = json.load(open(os.path.join(tmp, "profile.json")))["ballast_profile"]
    assert prof["ranks"] == np and "merged_from_parts" not in prof
    for rank in range(np):
        check_rank(prof["ranks_data"][rank], rank)
    print("normal on %d ranks: the profile has every rank, no part left" % np)
    shutil.rmtree(tmp, ignore_errors=True)
    sys.exit(0)
if mode == "unwritable":
    err = p.stderr.read().decode()
    assert p.returncode == 0, "mode unwritable failed (%d): %s" % (p.returncode, err)
    said = [l for l in err.splitlines() if "was not written" in l]
    assert len(said) == 1 and said[0].startswith("ballast[0]: warning:"), err
    assert "ballast-profile-merge" in said[0], said
    assert not os.path.exists(os.path.join(tmp, "profile.json.tmp")), os.listdir(tmp)
else:
    assert p.returncode != 0, "the job should have failed (mode %s)" % mode
    assert not os.path.exists(os.path.join(tmp, "profile.json")), "no MPI_Finalize, no profile"
# mpiexec may return while a rank it signalled is still in its handler:
# give the ranks' processes time to end.
for _ in range(200):
    parts = sorted(x for x in glob.glob(os.path.join(tmp, "profile.json.part[0-9]*"))
                   if not x.endswith(".tmp"))
    if len(parts) == np:
        break
    time.sleep(0.05)
assert len(parts) == np, "parts: %s" % parts
out = os.path.join(tmp, "merged.json")
r = subprocess.run([sys.executable, merge] + parts + ["-o", out])
assert r.returncode == 0
prof = json.load(open(out))["ballast_profile"]
assert prof["ranks"] == np and prof["version"] == 1
assert prof["wall"] > 0
EXIT = "exit without MPI_Finalize"
# "leave": Open MPI may end the working ranks (SIGTERM) before or after they
# enter MPI_Finalize; either way their part is there.
want = {"abort": lambda r: {"MPI_Abort" if r == 0 else "SIGTERM"},
        "term": lambda r: {"SIGTERM"},
        "segv": lambda r: {"SIGSEGV" if r == np - 1 else "SIGTERM"},
        "sigabrt": lambda r: {"SIGABRT" if r == np - 1 else "SIGTERM"},
        "exit": lambda r: {EXIT},
        "return": lambda r: {EXIT},
        "leave": lambda r: {EXIT} if r == np - 1 else {"SIGTERM", "MPI_Finalize"},
        "late": lambda r: {EXIT} if r == np - 1 else {"MPI_Finalize"},
        "unwritable": lambda r: {"MPI_Finalize"},
        "kill": lambda r: {"interval"}}[mode]
# every rank's distributions merged by ballast-profile-merge
jd = prof["distributions"]
for dist in (jd["regions"]["work"], jd["activities"]["MPI_Sendrecv"]):
    assert dist["count"] == WORK * np, dist
    assert sum(c for _, c in dist["buckets"]) == WORK * np, dist
    assert dist["min"] <= dist["p50"] <= dist["p99"] <= dist["max"], dist
reasons = {x["rank"]: x["reason"] for x in prof["parts"]}
for rank in range(np):
    assert reasons[rank] in want(rank), (rank, reasons[rank], want(rank))
    check_rank(prof["ranks_data"][rank], rank)
print("fault %s on %d ranks: every rank's part, merged and checked (%s)" %
      (mode, np, ", ".join("%d:%s" % kv for kv in sorted(reasons.items()))))
shutil.rmtree(tmp, ignore_errors=True)  # kept when a check failed
