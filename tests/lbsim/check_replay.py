#!/usr/bin/env python3
"""Records written by real runs replay bit for bit: test_lbrecord (over-
decomposition and placement) and the MD droplet (examples/md) on 2 ranks,
cold and warm-started from the cold run's record, each with
BALLAST_LB_RECORD; ballast-lbsim must exit 0 and say
bit-identical, and its --json must parse with 0 differences. The MD run's
set-up remap from the blocks' estimates is predicted as measured (time and
task time per step within 10%). A record that is not one exits 2."""
import json
import os
import subprocess
import sys

lbsim, lbrecord, md, outdir = sys.argv[1:5]
mpiexec = os.environ.get("MPIEXEC", "mpiexec")


def record(name, cmd, **extra):
    path = os.path.join(outdir, f"replay_{name}.rec")
    env = dict(os.environ, BALLAST_LB_RECORD=path, BALLAST_LB="auto", **extra)
    p = subprocess.run([mpiexec, "-n", "2", "--oversubscribe", *cmd], env=env,
                       capture_output=True, text=True, timeout=240)
    if p.returncode != 0:
        sys.exit(f"{name}: the run failed ({p.returncode})\n{p.stdout}{p.stderr}")
    return path


def replay(path):
    p = subprocess.run([lbsim, path], capture_output=True, text=True)
    if p.returncode != 0 or "bit-identical (0 differences)" not in p.stdout:
        sys.exit(f"{path}: replay exit {p.returncode}\n{p.stdout}{p.stderr}")
    j = json.loads(subprocess.run([lbsim, path, "--json", "--compare"], capture_output=True,
                                  text=True, check=True).stdout)
    assert j["replay"]["differences"] == 0 and len(j["predicted"]) == 5, j
    assert j["record"]["steps"] > 0 and j["record"]["complete"], j["record"]
    return j


for name, cmd in [("over", [lbrecord, "over"]), ("placement", [lbrecord, "placement"])]:
    j = replay(record(name, cmd))
    print(f"{name}: {j['record']['steps']} steps replayed bit for bit")
# windows of 10 steps: the policy remaps on an imbalance seen in two
# windows in a row, after the start's warm-up (at most 20 steps)
md_rec = record("md", [md, "--scenario", "droplet", "--particles", "16000", "--blocks",
                       "4,4,4", "--steps", "60", "--strategy", "ballast"],
                BALLAST_LB_WINDOW="10")
j = replay(md_rec)
assert j["measured"][0]["remaps"] >= 1, j["measured"]
print(f"md: {j['record']['steps']} steps, {j['measured'][0]['remaps']} remap(s), "
      f"{j['record']['bytes_per_step']:.0f} bytes per step, replayed bit for bit")
# Its first call is the set-up remap from the blocks' estimates (D ...
# estimated, forced 3; no task has run, so no W line of step 1). The
# prediction with the recorded settings makes that remap too and takes the
# estimates for no step's seconds: its time and slowest rank's task time per
# step are the measured ones within 10% (the model is fitted on the record;
# taking the estimates as seconds at step 1 put it 10^6 times off).
with open(md_rec) as f:
    lines = f.read().splitlines()
first_d = next(l.split() for l in lines if l.startswith("D "))
assert first_d[2:4] == ["1", "estimated"] and first_d[10] == "3", first_d
assert not any(l.startswith("W 1 ") for l in lines), "a W line at the set-up call"
meas, pred = j["measured"][0], j["predicted"][0]
assert pred["remaps"] >= 1, pred
for key in ("time_per_step_s", "compute_per_step_s"):
    ratio = pred[key] / meas[key]
    assert 0.9 < ratio < 1.1, (key, ratio, pred, meas)
print(f"md: the set-up remap from the estimates; predicted/measured time per step "
      f"{pred['time_per_step_s'] / meas['time_per_step_s']:.3f}")
# The warm start from that record: its first decision is the warm start's
# remap (D ... warm-start, forced 2), carried out with the earlier run's map
# (R ... warm 1), and the record of that run replays bit for bit too.
warm_rec = record("md_warm", [md, "--scenario", "droplet", "--particles", "16000",
                              "--blocks", "4,4,4", "--steps", "30", "--strategy", "ballast"],
                  BALLAST_LB_WARMSTART=md_rec)
j = replay(warm_rec)
with open(warm_rec) as f:
    lines = f.read().splitlines()
first_d = next(l.split() for l in lines if l.startswith("D "))
first_r = next(l.split() for l in lines if l.startswith("R "))
assert first_d[2] == "1" and first_d[3] == "warm-start" and first_d[10] == "2", first_d
assert first_r[-1] == "1", first_r
print(f"md warm start: {j['record']['steps']} steps, the warm map at step {first_d[1]}, "
      f"replayed bit for bit")
bad = os.path.join(outdir, "replay_bad.rec")
with open(bad, "w") as f:
    f.write("ballast-lbrecord 99\n")
p = subprocess.run([lbsim, bad], capture_output=True, text=True)
assert p.returncode == 2 and "version 99" in p.stderr, (p.returncode, p.stderr)
print("PASS lbsim_replay: recorded runs replay bit for bit")
