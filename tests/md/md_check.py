#!/usr/bin/env python3
"""Checks of the ballast-md example: runs the binary under mpiexec, parses its
one {"md_summary": ...} line and asserts on the values.

usage: md_check.py CHECK --mpiexec PATH --bin PATH [--np N]
CHECK: drift | momentum | remap | strategies | walls | placement | cli |
       ballast | ballast_placement | ballast_uniform | kernel | io | temperature |
       imbalance
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

FAILS = []


def check(cond, what, *vals):
    if not cond:
        FAILS.append(what + " " + " ".join(repr(v) for v in vals))
        print("CHECK failed:", what, *vals, file=sys.stderr)


def run(a, np, *args, expect_ok=True, env=None):
    # one rank runs as an MPI singleton: much faster to start than mpiexec
    launch = [] if np == 1 else [a.mpiexec, "-n", str(np), "--oversubscribe"]
    cmd = launch + [a.bin, "--json-only", *args]
    e = dict(os.environ)
    for k in [k for k in e if k.startswith("BALLAST_LB")]:
        del e[k]
    e.update(env or {})
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=e)
    if expect_ok and p.returncode != 0:
        print(p.stdout, p.stderr, file=sys.stderr)
        sys.exit("ballast-md failed (%d): %s" % (p.returncode, " ".join(cmd)))
    lines = [l for l in p.stdout.splitlines() if l.startswith('{"md_summary":')]
    if expect_ok:
        if len(lines) != 1:
            sys.exit("expected exactly one md_summary line, got %d:\n%s" % (len(lines), p.stdout))
        return json.loads(lines[0])["md_summary"]
    return p


# A run that every rank ends with a non-zero status after MPI_Finalize
# makes mpiexec "abort" the job: it sends the ranks still there SIGCONT,
# sleeps this many seconds, SIGTERM, sleeps again, SIGKILL. For a refused
# input rank 0 wrote its message before MPI_Finalize (stderr, unbuffered)
# and nothing else is read: no need to wait (Open MPI's default is 1).
NO_KILL_WAIT = {"OMPI_MCA_odls_base_sigkill_timeout": "0"}


def run_refused(a, runs):
    """run(a, a.np, *args, expect_ok=False) of each args in runs (inputs
    ballast-md refuses), 4 at a time: such a run is mostly mpiexec starting
    and ending ranks, waiting, not computing. Their results in order."""
    with ThreadPoolExecutor(4) as ex:
        return list(ex.map(lambda args: run(a, a.np, *args, expect_ok=False, env=NO_KILL_WAIT),
                           runs))


def ids_expected(n):
    """The uniform lattice keeps every site: ids 0..n-1."""
    x = 0
    for i in range(n):
        x ^= i
    return n * (n - 1) // 2, x


def rel(a, b):
    return abs(a - b) / max(abs(a), abs(b), 1e-300)


def drift_run(a, steps):
    d = run(a, a.np, "--particles", "864", "--steps", str(steps), "--equilibrate", "100",
            "--progress", "20")
    check(d["steps"] == steps, "steps", d["steps"])
    check(d["particles"] == 864 and d["particles_end"] == 864, "count", d["particles_end"])
    check(d["energy_drift"] <= 1e-4, "energy_drift <= 1e-4", d["energy_drift"])
    check(d["energy_drift_max"] <= 1e-4, "energy_drift_max <= 1e-4", d["energy_drift_max"])
    t = d["temperature_final"]
    check(rel(t, 2.0 * d["kinetic_final"] / (3.0 * (d["particles"] - 1))) < 1e-12,
          "T = 2 KE / (3 (N - 1))", t)
    # a liquid near the target temperature, not a frozen or exploded system
    check(0.55 < t < 0.9, "temperature near 0.72", t)
    check(-5.5 < d["energy_final"] / d["particles"] < -3.5, "E/N of the LJ liquid",
          d["energy_final"] / d["particles"])


def check_drift(a):
    # The standard LJ liquid (rho 0.8442, T 0.72 after a rescaled warm-up),
    # dt = 0.005, 300 steps, bound 1e-4 on the final drift and on every
    # sampled energy. Velocity Verlet's energy error is a bounded O(dt^2)
    # oscillation that reaches its full amplitude within the first ~100
    # steps (measured 2.5e-5 at worst over 1,000 steps), so the short run
    # meets the same bound as the long one; a bug in forces, halos or
    # migration breaks it at once (a lost ghost gives ~1e-3 in a few steps).
    drift_run(a, 300)


def check_drift1000(a):
    # The issue's own check: at most 1e-4 over 1,000 steps at dt = 0.005.
    drift_run(a, 1000)


def check_momentum(a):
    # Periodic box: the total momentum stays at its initial value (zero for
    # the liquid; +drift * cluster size for the cluster) to rounding.
    for args in (["--particles", "864", "--steps", "300", "--strategy", "random",
                  "--remap-every", "7"],
                 ["--scenario", "cluster", "--particles", "4000", "--steps", "200"]):
        d = run(a, a.np, *args)
        p0, p1 = d["momentum_initial"], d["momentum_final"]
        for k in range(3):
            check(abs(p1[k] - p0[k]) <= 1e-9 * max(1.0, d["particles"]),
                  "momentum conserved", args, k, p0[k], p1[k])
    check(abs(d["momentum_initial"][0] - 2.0 * round(d["momentum_initial"][0] / 2.0)) < 1e-9,
          "cluster momentum is drift * cluster size", d["momentum_initial"][0])
    check(d["momentum_initial"][0] > 10, "cluster drifts", d["momentum_initial"][0])


def check_remap(a):
    # md_apply_owner_map every 2 or 3 steps (random draws, round-robin
    # rotations): nothing lost or duplicated, and the dynamics unchanged.
    steps = 40
    base = run(a, a.np, "--particles", "864", "--steps", str(steps))
    n = base["particles"]
    s, x = ids_expected(n)
    check(base["id_sum"] == s and base["id_xor"] == x, "ids 0..n-1", base["id_sum"], s)
    for args in (["--strategy", "random", "--remap-every", "2"],
                 ["--strategy", "roundrobin", "--remap-every", "3"]):
        d = run(a, a.np, "--particles", "864", "--steps", str(steps), *args)
        k = int(args[-1])
        # every re-application changes the map (a new random draw or a
        # round-robin rotation), except a random draw that repeats the map
        check(d["remaps"] >= (steps - 1) // k - 2, "owner map changed", args, d["remaps"])
        check(d["tasks_moved"] >= d["remaps"], "blocks moved", d["tasks_moved"])
        check(d["bytes_moved"] > 0, "bytes moved", d["bytes_moved"])
        check(d["particles_end"] == n, "count", args, d["particles_end"], n)
        check(d["id_sum"] == s and d["id_xor"] == x, "id sum/xor", args, d["id_sum"], d["id_xor"])
        check(d["id_checksum"] == base["id_checksum"], "id checksum", args,
              d["id_checksum"], base["id_checksum"])
        check(rel(d["energy_final"], base["energy_final"]) < 1e-10, "energy",
              args, d["energy_final"], base["energy_final"])
    # the droplet moves particles between blocks all the time
    for st in ("block", "random"):
        d = run(a, a.np, "--scenario", "droplet", "--particles", "4000", "--steps", "50",
                "--strategy", st, *(["--remap-every", "4"] if st == "random" else []))
        check(d["particles_end"] == d["particles"], "droplet count", st, d["particles_end"])
        if st == "block":
            ck = d["id_checksum"]
        else:
            check(d["id_checksum"] == ck, "droplet checksum", d["id_checksum"], ck)


def check_strategies(a):
    # Same seed, different owner maps: same particles, same energies to
    # floating-point tolerance (only summation order differs), same ids.
    res = {}
    for st in ("block", "random", "roundrobin"):
        res[st] = run(a, a.np, "--scenario", "droplet", "--particles", "4000", "--steps",
                      "150", "--strategy", st, "--seed", "7")
    b = res["block"]
    for st in ("random", "roundrobin"):
        d = res[st]
        check(d["strategy"] == st, "strategy echoed", d["strategy"])
        check(d["particles_end"] == b["particles_end"] == b["particles"], "count", st)
        check(d["id_checksum"] == b["id_checksum"], "checksum", st)
        check(rel(d["energy_initial"], b["energy_initial"]) < 1e-12, "E0", st,
              d["energy_initial"], b["energy_initial"])
        check(rel(d["energy_final"], b["energy_final"]) < 1e-9, "E_end", st,
              d["energy_final"], b["energy_final"])
        check(rel(d["kinetic_final"], b["kinetic_final"]) < 1e-8, "KE_end", st,
              d["kinetic_final"], b["kinetic_final"])
    # the droplet is off-centre: a static slab decomposition is unbalanced.
    # The imbalance is measured in force time, tens of microseconds a step
    # for these 366 particles: a preemption of the lighter rank on a loaded
    # machine (the sanitizer suite runs two tests at once) can hide it, so
    # up to two more runs are allowed, as in check_ballast_uniform.
    imb = b["imbalance_first_window"]
    for attempt in range(2):
        if imb > 1.2:
            break
        print("strategies: block's first-window imbalance %.3f (attempt %d); "
              "running again" % (imb, attempt + 1), file=sys.stderr)
        imb = run(a, a.np, "--scenario", "droplet", "--particles", "4000", "--steps",
                  "150", "--strategy", "block", "--seed", "7")["imbalance_first_window"]
    check(imb > 1.2, "droplet imbalance under block", imb)
    # a different seed draws a different gas
    o = run(a, a.np, "--scenario", "droplet", "--particles", "4000", "--steps", "5",
            "--seed", "8")
    check(o["id_checksum"] != b["id_checksum"], "seed changes the gas", o["id_checksum"])


def check_walls(a):
    # A cluster thrown at the +x wall: every particle stays in [0, L], none
    # is lost, and the wall reverses the cluster's momentum.
    d = run(a, a.np, "--scenario", "cluster", "--walls", "--particles", "864",
            "--drift", "4", "--steps", "500")
    L = d["box"]
    check(d["walls"] is True, "walls echoed")
    check(d["particles_end"] == d["particles"], "count", d["particles_end"])
    check(d["position_min"] >= 0.0, "inside (min)", d["position_min"])
    check(d["position_max"] <= L, "inside (max)", d["position_max"], L)
    check(d["momentum_initial"][0] > 0, "cluster thrown at +x", d["momentum_initial"][0])
    check(d["momentum_final"][0] < 0.5 * d["momentum_initial"][0], "wall reflected it",
          d["momentum_initial"][0], d["momentum_final"][0])
    check(d["energy_drift"] < 1e-3, "walls conserve energy", d["energy_drift"])


def check_placement(a):
    # One block per rank; a random permutation each 5 steps.
    b = run(a, a.np, "--particles", "864", "--steps", "40")
    for args in (["--placement"], ["--placement", "--strategy", "random", "--remap-every", "5"]):
        d = run(a, a.np, "--particles", "864", "--steps", "40", *args)
        check(d["placement"] is True and d["blocks"] == a.np, "one block per rank",
              d["blocks"])
        check(d["particles_end"] == b["particles"], "count", d["particles_end"])
        check(d["id_checksum"] == b["id_checksum"], "checksum")
        check(rel(d["energy_final"], b["energy_final"]) < 1e-10, "energy",
              d["energy_final"], b["energy_final"])
    p = run(a, a.np, "--particles", "864", "--steps", "5", "--placement", "--blocks", "2,2,2",
            expect_ok=False)
    check(p.returncode != 0 and "one block per rank" in p.stderr, "placement mismatch",
          p.returncode, p.stderr)


def check_cli(a):
    bad = [
        (["--strategy", "ballast", "--remap-every", "3"], "ballast decides"),
        (["--lb-random"], "needs --strategy ballast"),
        (["--strategy", "greedy"], "unknown strategy"),
        (["--scenario", "gas"], "unknown scenario"),
        (["--blocks", "2,2"], "--blocks"),
        (["--blocks", "2,x,2"], "--blocks"),
        (["--particles", "12abc"], "not an integer"),
        (["--steps", "0"], "out of range"),
        (["--dt", "fast"], "not a number"),
        (["--frobnicate"], "unknown option"),
        (["--steps"], "needs a value"),
        (["--remap-every", "3"], "block strategy never changes"),
        (["--particles", "864", "--blocks", "9,1,1"], "only 3 cells"),
        (["--window", "50", "--steps", "10"], "longer than the run"),
        (["--skin", "2"], "out of range"),
        (["--skin", "thin"], "not a number"),
        (["--particles", "864", "--skin", "1"], "smaller --skin"),
    ]
    for args, msg in bad:
        p = run(a, 1, *args, expect_ok=False)
        check(p.returncode != 0, "non-zero exit", args, p.returncode)
        check(msg in p.stderr, "message", args, msg, p.stderr.strip()[:200])
        check('{"md_summary":' not in p.stdout, "no summary on error", args)
    p = run(a, 1, "--help", expect_ok=False)
    check(p.returncode == 0 and "--strategy" in p.stdout, "help", p.returncode)


def same_physics(d, b, what):
    """A run with balancing against one without: same particles, same ids,
    energies equal to floating-point tolerance (only summation order and the
    blocks' owners differ)."""
    check(d["particles_end"] == b["particles_end"] == b["particles"], "count", what,
          d["particles_end"], b["particles"])
    check(d["id_checksum"] == b["id_checksum"] and d["id_sum"] == b["id_sum"]
          and d["id_xor"] == b["id_xor"], "id checksum", what, d["id_checksum"],
          b["id_checksum"])
    check(rel(d["energy_initial"], b["energy_initial"]) < 1e-12, "E0", what,
          d["energy_initial"], b["energy_initial"])
    check(rel(d["energy_final"], b["energy_final"]) < 1e-9, "E_end", what,
          d["energy_final"], b["energy_final"])
    check(rel(d["kinetic_final"], b["kinetic_final"]) < 1e-8, "KE_end", what,
          d["kinetic_final"], b["kinetic_final"])
    for k in range(3):
        check(abs(d["momentum_final"][k] - b["momentum_final"][k]) <= 1e-9 * d["particles"],
              "momentum", what, k, d["momentum_final"][k], b["momentum_final"][k])


def check_ballast(a):
    # --strategy ballast: blocks are rta tasks moved by ballast. Explicit
    # policy with random maps moves blocks at every step (the migration path
    # under stress); the automatic policy balances the droplet; the off
    # policy makes every call a no-op. All give the physics of the static
    # block decomposition.
    common = ["--scenario", "droplet", "--particles", "4000", "--steps", "60", "--seed", "3"]
    b = run(a, a.np, *common, "--strategy", "block")
    check(b["remaps"] == 0 and b["lb_calls"] == 0, "block: no balancing", b["remaps"])
    d = run(a, a.np, *common, "--strategy", "ballast", "--lb-random",
            env={"BALLAST_LB": "explicit"})
    check(d["strategy"] == "ballast", "strategy echoed", d["strategy"])
    check(d["lb_calls"] == 60, "one load-balancing call per step", d["lb_calls"])
    check(d["lb_remaps"] == 60, "explicit: a remap at every call", d["lb_remaps"])
    check(d["remaps"] >= 50, "random maps change the owner map", d["remaps"])
    check(d["tasks_moved"] >= d["remaps"] and d["bytes_moved"] > 0, "blocks moved by ballast",
          d["tasks_moved"], d["bytes_moved"])
    check(d["lb_seconds_migrating"] > 0, "migration time from ballast", d["lb_seconds_migrating"])
    same_physics(d, b, "explicit random")
    d = run(a, a.np, *common, "--strategy", "ballast")
    # the automatic policy's first call balances the estimates in the set-up
    check(d["lb_calls"] == 61, "auto: one call per step and one in the set-up", d["lb_calls"])
    check(d["lb_imbalance_first"] > 1.0, "auto: ballast judged the imbalance",
          d["lb_imbalance_first"])
    check(d["lb_seconds"] > 0 and d["lb_seconds"] < d["loop_seconds"], "lb_seconds",
          d["lb_seconds"], d["loop_seconds"])
    same_physics(d, b, "auto")
    d = run(a, a.np, *common, "--strategy", "ballast", env={"BALLAST_LB": "off"})
    check(d["lb_calls"] == 60 and d["lb_remaps"] == 0 and d["remaps"] == 0
          and d["tasks_moved"] == 0, "off: calls are no-ops", d["lb_calls"], d["lb_remaps"])
    check(d["lb_imbalance_first"] == 0, "off: nothing judged", d["lb_imbalance_first"])
    same_physics(d, b, "off")


def check_ballast_placement(a):
    # One block per rank: ballast's remaps permute the ranks (a new
    # communicator each time a block moves); the example adopts it.
    common = ["--particles", "864", "--steps", "30", "--placement"]
    b = run(a, a.np, *common)
    d = run(a, a.np, *common, "--strategy", "ballast", "--lb-random",
            env={"BALLAST_LB": "explicit"})
    check(d["placement"] is True and d["blocks"] == a.np, "one block per rank", d["blocks"])
    check(d["lb_remaps"] == 30, "explicit: a remap at every call", d["lb_remaps"])
    check(d["remaps"] >= 3 and d["tasks_moved"] >= 2 * d["remaps"],
          "permutations moved blocks", d["remaps"], d["tasks_moved"])
    same_physics(d, b, "placement")


def check_ballast_uniform(a):
    # The balanced liquid: the automatic policy judges it (the run is longer
    # than the warm-up, at most 20 steps, + window 20; the first call's
    # balance from the estimates finds the blocks' equal estimates where they
    # are and moves nothing) and the owner map never changes, at the
    # default threshold (1.10). A task's measured work is capped by its CPU
    # time, so a rank that shares its core with another process does not look
    # loaded (before that cap, 2 ranks on this loaded 2-core machine measured
    # 1.05-1.25 and ballast moved work). 23,328 particles (4 x 18^3: 12 cells
    # per side, 3 per block, so the two slabs hold equal work) make a step
    # long (tens of ms) against a time slice; the test runs alone (RUN_SERIAL).
    # Under the address/undefined sanitizers the per-rank costs are not
    # equal: instrumented allocation and copying (halos, migration) are
    # several times slower and fall unevenly on the ranks (measured: judged
    # imbalance up to 1.12 there, 1.00-1.01 in the optimised build). The
    # sanitizer build checks memory safety of this path; the no-remap claim
    # at the default threshold is the optimised build's.
    #
    # Up to three runs, the claim holds when one of them does not remap. The
    # judged imbalance of this run is 1.00-1.05 on an idle machine, and a
    # busy process sharing a core pushed single windows to 1.05-1.08 and, in
    # 2 of 6 runs, over 1.10 (2026-11-22, a shell busy loop next to the
    # test; the same happened once in a full suite while another build ran).
    # A policy that remaps a balanced run fails all three.
    threshold = "1.25" if os.environ.get("BALLAST_TEST_SANITIZED") == "1" else "1.10"
    for attempt in range(3):
        d = run(a, a.np, "--particles", "23328", "--steps", "60", "--blocks", "4,4,4",
                "--strategy", "ballast", env={"BALLAST_LB_THRESHOLD": threshold})
        check(d["lb_calls"] == 61, "one call per step and one in the set-up", d["lb_calls"])
        check(d["lb_imbalance_last"] > 0, "the policy judged windows",
              d["lb_imbalance_last"])
        if d["remaps"] == 0 and d["tasks_moved"] == 0:
            break
        print("uniform run %d remapped (%d remaps, %d tasks moved, last judged "
              "imbalance %.3f); running again" % (attempt + 1, d["remaps"],
              d["tasks_moved"], d["lb_imbalance_last"]), file=sys.stderr)
    check(d["remaps"] == 0 and d["tasks_moved"] == 0, "uniform: no remap in 3 runs",
          d["remaps"], d["tasks_moved"], d["lb_remaps"])


# Energies of the linked-cell code that preceded the Verlet lists (commit
# f0a48b8: every pair from both sides, cells rebuilt every step), 100 steps
# from the scenario's initial state: (args, E0, E_end, KE_end).
LINKED_CELL_REFERENCE = [
    (["--scenario", "droplet", "--particles", "4000", "--seed", "3"],
     -978.2352037843991, -978.3503632726768, 337.6703701076583),
    (["--scenario", "cluster", "--particles", "4000", "--walls", "--drift", "4"],
     696.8025748655748, 696.7542103321492, 1312.281849278268),
    (["--particles", "4000", "--dt", "0.01", "--blocks", "1,1,1"],
     -21012.327970326172, -21010.735053624605, 2327.9696017408232),
]


def kernel(out):
    return [json.loads(l)["md_kernel"] for l in out.splitlines()
            if l.startswith('{"md_kernel":')][0]


def run_kernel(a, *args):
    """One run: its md_summary and md_kernel records."""
    launch = [] if a.np == 1 else [a.mpiexec, "-n", str(a.np), "--oversubscribe"]
    e = dict(os.environ)
    for k in [k for k in e if k.startswith("BALLAST_LB")]:
        del e[k]
    p = subprocess.run(launch + [a.bin, "--json-only", *args], capture_output=True, text=True,
                       timeout=300, env=e)
    if p.returncode != 0:
        print(p.stdout, p.stderr, file=sys.stderr)
        sys.exit("ballast-md failed (%d): %s" % (p.returncode, " ".join(args)))
    d = [json.loads(l)["md_summary"] for l in p.stdout.splitlines()
         if l.startswith('{"md_summary":')][0]
    return d, kernel(p.stdout)


def check_kernel(a):
    # The Verlet lists change only which pairs are visited and in which order
    # they are summed: every pair within rc is still computed. Against the
    # linked-cell code the energies after 100 steps agree to rounding
    # amplified by the dynamics (measured 2e-15 relative); 1e-10 leaves room
    # for a compiler's different contraction, and a missed pair or a stale
    # ghost gives 1e-6 or more.
    for args, e0, e1, ke in LINKED_CELL_REFERENCE:
        d = run(a, a.np, *args, "--steps", "100")
        check(rel(d["energy_initial"], e0) < 1e-12, "E0 as the linked cells", args,
              d["energy_initial"], e0)
        check(rel(d["energy_final"], e1) < 1e-10, "E_end as the linked cells", args,
              d["energy_final"], e1)
        check(rel(d["kinetic_final"], ke) < 1e-10, "KE_end as the linked cells", args,
              d["kinetic_final"], ke)
    # Skin 0 rebuilds at every step (every particle moves), skin 0.3 about
    # every 10 steps in the liquid, skin 0.6 less often: the same energies.
    res = {}
    for skin in ("0", "0.3", "0.6"):
        res[skin] = run_kernel(a, "--particles", "2048", "--steps", "80", "--equilibrate", "20",
                               "--skin", skin)
    d0, k0 = res["0"]
    check(k0["rebuilds"] == 80, "skin 0: a rebuild every step", k0["rebuilds"])
    d3, k3 = res["0.3"]
    # T 0.72 liquid: LAMMPS rebuilds its 0.3-skin list every ~10 steps here
    check(5 <= k3["steps_per_rebuild"] <= 20, "skin 0.3: rebuild interval",
          k3["steps_per_rebuild"])
    check(k3["rebuilds_forced"] == 0, "no forced rebuild without remaps",
          k3["rebuilds_forced"])
    d6, k6 = res["0.6"]
    check(k6["steps_per_rebuild"] > k3["steps_per_rebuild"], "bigger skin, rarer rebuilds",
          k6["steps_per_rebuild"], k3["steps_per_rebuild"])
    for skin, (d, k) in res.items():
        check(rel(d["energy_final"], d3["energy_final"]) < 1e-10, "same energy with skin",
              skin, d["energy_final"], d3["energy_final"])
    # A box of 3 cells of rc but not of rc + 0.3 (500 particles, L = 8.40)
    # runs with the skin that fits, unless --skin asks for more (md_cli).
    d, k = run_kernel(a, "--particles", "500", "--steps", "20")
    check(0.29 < k["skin"] < 0.3 and d["particles_end"] == 500, "small box: skin that fits",
          k["skin"])
    # Half lists: in the liquid a list holds the pairs within rc + skin once
    # (4/3 pi 2.8^3 rho / 2 = 38.8 per atom) plus the pairs with ghosts, which
    # both blocks list; 8 blocks of 2,048 atoms put many atoms near a face.
    check(35 < k3["list_entries_per_atom"] < 70, "list entries per atom",
          k3["list_entries_per_atom"])
    # The half stencil of half-cell bins: a build checks about 145 owned
    # candidates per atom (LAMMPS's count) plus the ghosts near the faces.
    check(k3["build_checks_per_atom"] < 400, "build checks per atom",
          k3["build_checks_per_atom"])

def data_atoms(path):
    """{id: (x, y, z, vx, vy, vz) as the file's strings} of a data file."""
    lines = open(path).read().split("\n")
    atoms, sec = {}, None
    for l in lines:
        t = l.split()
        if t[:1] in (["Atoms"], ["Velocities"], ["Masses"]):
            sec = t[0]
            continue
        if sec == "Atoms" and len(t) == 8:
            atoms[t[0]] = t[2:5]
        elif sec == "Velocities" and len(t) == 4:
            atoms[t[0]] = atoms[t[0]] + t[1:4]
    return atoms


def check_io(a):
    tmp = tempfile.mkdtemp(prefix="md_io_")
    try:
        io_checks(a, lambda name: os.path.join(tmp, name))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def io_checks(a, f):
    base = ["--particles", "864", "--progress", "0"]
    # A: 20 steps from the lattice, the start and the end written
    da = run(a, a.np, *base, "--steps", "20", "--write-data-start", f("a0.data"),
             "--write-data", f("a1.data"), "--write-xyz", f("a1.xyz"))
    # write, read back, write again: byte for byte the same file, whatever
    # the rank count and the blocks
    db = run(a, 1, "--read-data", f("a1.data"), "--steps", "1", "--progress", "0",
             "--blocks", "3,3,3", "--write-data-start", f("b0.data"))
    check(open(f("a1.data")).read() == open(f("b0.data")).read(),
          "data file written, read, written again: identical")
    check(db["particles"] == 864 and db["id_sum"] == da["id_sum"], "ids read back",
          db["particles"], db["id_sum"])
    check(db["box"] == da["box"], "box read back exactly", db["box"], da["box"])
    atoms = data_atoms(f("a1.data"))
    check(len(atoms) == 864 and all(len(v) == 6 for v in atoms.values()),
          "864 atoms with positions and velocities", len(atoms))
    # %.17g: every number reads back to the same double
    check(all(repr(float(x)) == repr(float(repr(float(x)))) for v in atoms.values() for x in v),
          "numbers exact")
    # restart: 20 steps from the start file follow run A (only summation
    # order differs)
    dc = run(a, a.np, "--read-data", f("a0.data"), "--steps", "20", "--progress", "0",
             "--write-data", f("c1.data"))
    check(rel(dc["energy_initial"], da["energy_initial"]) < 1e-13, "restart: E0",
          dc["energy_initial"], da["energy_initial"])
    check(rel(dc["energy_final"], da["energy_final"]) < 1e-10, "restart: E_end",
          dc["energy_final"], da["energy_final"])
    c1 = data_atoms(f("c1.data"))
    dmax = max(abs(float(c1[k][i]) - float(atoms[k][i])) for k in atoms for i in range(6))
    check(dmax < 1e-9, "restart: same positions and velocities after 20 steps", dmax)
    # XYZ: the same particles, same numbers
    xyz = open(f("a1.xyz")).read().split("\n")
    check(xyz[0] == "864" and 'Lattice="' in xyz[1] and "pos:R:3" in xyz[1], "xyz header",
          xyz[:2])
    rows = [l.split() for l in xyz[2:] if l]
    check(len(rows) == 864 and all(r[2:8] == atoms[r[1]] for r in rows),
          "xyz rows equal the data file's", len(rows))
    # XYZ read back: the same configuration as the data file
    run(a, a.np, "--read-xyz", f("a1.xyz"), "--steps", "1", "--progress", "0",
        "--write-data-start", f("x0.data"))
    check(open(f("x0.data")).read() == open(f("a1.data")).read(),
          "xyz read back: the data file of the same state")
    xyz_text = open(f("a1.xyz")).read()
    bad_xyz = [(xyz_text.replace('Lattice="', 'Lattice="1 ', 1).replace(' 0 0 0 ', ' 0 1 0 ', 1),
                ":2: Lattice is not a diagonal box"),
               (xyz_text.replace("velo:R:3", "force:R:3"), ":2: ballast-md reads the extended XYZ"),
               (xyz_text.replace("864\n", "865\n", 1), "end of file in the XYZ section: 864 of 865"),
               (xyz_text.replace("\nAr 1 ", "\nAr x ", 1), ":3: field 2 'x' is not an integer")]
    for k, (text, msg) in enumerate(bad_xyz):
        with open(f("bad%d.xyz" % k), "w") as out:
            out.write(text)
    done = run_refused(a, [("--read-xyz", f("bad%d.xyz" % k), "--steps", "1")
                           for k in range(len(bad_xyz))])
    for k, ((text, msg), p) in enumerate(zip(bad_xyz, done)):
        path = f("bad%d.xyz" % k)
        check(p.returncode == 2 and (path + msg in p.stderr if msg.startswith(":")
                                     else msg in p.stderr), "bad xyz %d" % k, msg,
              p.returncode, p.stderr.strip()[:300])
    p = run(a, 1, "--read-xyz", f("a1.xyz"), "--read-data", f("a1.data"), expect_ok=False)
    check(p.returncode == 2 and "give one starting configuration" in p.stderr,
          "--read-xyz with --read-data refused", p.returncode)
    # the droplet: sparse ids survive the round trip
    dd = run(a, a.np, "--scenario", "droplet", "--particles", "32000", "--steps", "1",
             "--progress", "0", "--write-data-start", f("d0.data"))
    de = run(a, a.np, "--read-data", f("d0.data"), "--steps", "1", "--progress", "0",
             "--write-data-start", f("e0.data"))
    check(open(f("d0.data")).read() == open(f("e0.data")).read(), "droplet round trip")
    check(de["id_checksum"] == dd["id_checksum"] and de["particles"] == dd["particles"],
          "droplet ids", de["id_checksum"], dd["id_checksum"])
    check_bad_files(a, f, open(f("a1.data")).read())


def check_bad_files(a, f, good):
    lines = good.split("\n")
    atoms_at = lines.index("Atoms # atomic")
    vel_at = lines.index("Velocities")

    def edit(i, text):
        c = list(lines)
        c[i] = text
        return "\n".join(c)
    first = atoms_at + 2  # line index of the first atom (file line first + 1)
    bad = [
        ("", ":1: empty file"),
        (edit(first, "1 1 0.5 zero 0.5 0 0 0"), ":%d: field 4 'zero' is not a number" % (first + 1)),
        (edit(first, "1 1 0.5 0.5"), ":%d: an Atoms line" % (first + 1)),
        (edit(first + 1, lines[first]), ":%d: atom id 1 appears twice" % (first + 2)),
        (edit(first, "1 2 0.5 0.5 0.5 0 0 0"), ":%d: field 2: 2 is out of range" % (first + 1)),
        ("\n".join(lines[:first + 10]), "end of file in the Atoms section: 10 of 864"),
        (good.replace("1 1\n\nAtoms", "1 2.0\n\nAtoms"), "mass 2 of type 1"),
        (good.replace("Atoms # atomic", "Atoms # full"), "style 'full'"),
        (good.replace("Velocities\n\n1 ", "Velocities\n\n9999 "), "velocity of atom 9999"),
        (good.replace("1 atom types", "1 atom types\n0 0 0 xy xz yz"), "triclinic"),
        (good.replace("\nVelocities", "\nBonds\n\n1 1 1 2\n\nVelocities"), "section 'Bonds'"),
        (good.replace("864 atoms", "864 atomz"), "unsupported header line"),
        (good.replace("\n0 ", "\n99 ", 1), "xlo >= xhi"),
        (good.replace("864 atoms\n", ""), "no 'N atoms' line"),
    ]
    for k, (text, msg) in enumerate(bad):
        with open(f("bad%d.data" % k), "w") as out:
            out.write(text)
    done = run_refused(a, [("--read-data", f("bad%d.data" % k), "--steps", "1")
                           for k in range(len(bad))])
    for k, ((text, msg), p) in enumerate(zip(bad, done)):
        path = f("bad%d.data" % k)
        check(p.returncode == 2, "bad file %d: exit status 2" % k, p.returncode,
              p.stderr[-300:])
        check(path + msg in p.stderr if msg.startswith(":") else
              (path + ":" in p.stderr and msg in p.stderr), "bad file %d: message" % k, msg,
              p.stderr.strip()[:300])
        check('{"md_summary":' not in p.stdout, "no summary for bad file %d" % k)
    p = run(a, a.np, "--read-data", f("missing.data"), "--steps", "1", expect_ok=False,
            env=NO_KILL_WAIT)
    check(p.returncode == 2 and "missing.data: cannot open" in p.stderr, "missing file",
          p.returncode, p.stderr[-200:])
    p = run(a, a.np, "--particles", "864", "--steps", "1", "--write-data",
            f("no/such/dir.data"), expect_ok=False)
    check(p.returncode == 5 and "no/such/dir.data: cannot open for writing" in p.stderr and
          '{"md_summary":' in p.stdout, "unwritable file: run completes, status 5",
          p.returncode, p.stderr[-200:])


def run_progress(a, *args):
    """A run with its human output: (progress lines split, md_summary)."""
    cmd = [a.mpiexec, "-n", str(a.np), "--oversubscribe", a.bin, *args]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    summ = [l for l in p.stdout.splitlines() if l.startswith('{"md_summary":')]
    prog = [l.split() for l in p.stdout.splitlines() if l.startswith("step ") and "/" in l]
    if p.returncode != 0 or len(summ) != 1 or not prog:
        print(p.stdout, p.stderr, file=sys.stderr)
        sys.exit("ballast-md failed (%d): %s" % (p.returncode, " ".join(cmd)))
    return prog, json.loads(summ[0])["md_summary"]


def check_temperature(a):
    # One definition, T = 2 KE / (3 (N - 1)), wherever T is set or printed:
    # the initial velocities are scaled to exactly the requested T, the
    # warm-up rescales to it, and the summary reports it (a 3N somewhere
    # would be off by 1/N = 1.2e-3 for 864 particles)
    for args in (["--particles", "864"], ["--scenario", "droplet", "--particles", "32000"],
                 ["--particles", "864", "--equilibrate", "30"]):
        d = run(a, a.np, *args, "--steps", "5", "--progress", "0", "--temperature", "0.9")
        check(abs(d["temperature_initial"] - 0.9) < 1e-12, "T at start", args,
              d["temperature_initial"])
    # the progress line prints the same T as the summary's end temperature
    prog, summ = run_progress(a, "--particles", "864", "--steps", "10", "--progress", "1")
    line = prog[-1]
    t = float(line[line.index("T") + 1])
    check(abs(t - summ["temperature_final"]) < 1e-4, "progress T = summary T", t,
          summ["temperature_final"])


def check_imbalance(a):
    # One definition (max/avg over ranks of the force time summed over a
    # window): the last progress line, covering exactly the last window,
    # prints the summary's last-window figure
    prog, summ = run_progress(a, "--scenario", "droplet", "--particles", "32000", "--blocks",
                              "4,4,4", "--steps", "40", "--window", "10", "--progress", "4")
    first = float(prog[0][prog[0].index("imbalance") + 1])
    last = float(prog[-1][prog[-1].index("imbalance") + 1])
    check(abs(first - summ["imbalance_first_window"]) < 6e-4, "first window: progress = summary",
          first, summ["imbalance_first_window"])
    check(abs(last - summ["imbalance_last_window"]) < 6e-4, "last window: progress = summary",
          last, summ["imbalance_last_window"])
    # the droplet's dense sphere sits in the first rank's slab: the force
    # time is unbalanced under the block map (about 1.9 on an idle machine)
    check(summ["imbalance_run"] > 1.3 and summ["imbalance_run"] <= a.np,
          "droplet under block: imbalanced, at most the rank count", summ["imbalance_run"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("check")
    ap.add_argument("--mpiexec", required=True)
    ap.add_argument("--bin", required=True)
    ap.add_argument("--np", type=int, default=2)
    a = ap.parse_args()
    globals()["check_" + a.check](a)
    if FAILS:
        print("%d check(s) failed" % len(FAILS), file=sys.stderr)
        sys.exit(1)
    print("md %s: all checks passed" % a.check)


if __name__ == "__main__":
    main()
