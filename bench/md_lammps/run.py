#!/usr/bin/env python3
"""ballast-md against LAMMPS on the same systems, the two codes run alternately.

usage: run.py [--part kernel|balance|all] [--quick] [--no-setup]
              [--bin BALLAST_MD] [--lmp LMP] [--reps R] [--out DIR]

Installs the benchmark extra `lammps` first (through scripts/setup.sh, which
does nothing when it is present). Every system starts from ONE initial
configuration that ballast-md writes as a LAMMPS data file
(--write-data-start); ballast-md reads the same file (--read-data), so both
codes integrate the same particles with the same potential (LJ cut at 2.5,
shifted), the same time step and velocity Verlet.

kernel   the 32,000-atom fcc liquid (density 0.8442, T 0.72) on 1 and 2 ranks:
         wall and CPU microseconds per atom-step of the time-step loop, the
         ratio ballast-md / LAMMPS, repetitions alternating between the codes
         (median reported); the relative difference of the final energies
         (same trajectory); energy drift of both at dt 0.005 and 0.01.
         LAMMPS: neighbor 0.3 bin, neigh_modify every 1 delay 0 check yes.
balance  the droplet (22,489 atoms) and the moving cluster (14,533 atoms) on
         2 ranks: LAMMPS static, LAMMPS `fix balance ... shift` (brick) and
         `comm_style tiled` + `fix balance ... rcb`, each with and without
         `weight time`; ballast-md block and ballast-md with ballast's
         balancing (BALLAST_LB=auto). Time per step, force-time imbalance
         (max/avg over ranks of the force time: LAMMPS's Pair row, ballast-md's
         imbalance), and the first window's time per step (balancing included).

Figures are printed as tables and written as JSON lines to DIR/runs_PART.jsonl
(DIR: build/bench_md_lammps by default).
"""
import json
import os
import re
import shutil
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_mpi_yield_when_idle="1")

LMP_HEAD = """units lj
atom_style atomic
boundary p p p
read_data {data}
pair_style lj/cut 2.5
pair_coeff 1 1 1.0 1.0 2.5
pair_modify shift yes
neighbor 0.3 bin
neigh_modify every 1 delay 0 check yes
timestep {dt}
fix nve all nve
thermo_style custom step temp pe ke etotal
thermo_modify norm no format float %.17g
thermo {thermo}
"""


def arg(name, default):
    if name in sys.argv:
        i = sys.argv.index(name)
        if i + 1 >= len(sys.argv):
            sys.exit(f"{name} needs a value")
        return sys.argv[i + 1]
    return default


class RunFailed(Exception):
    pass


def mpirun(np, cmd, env=ENV, soft=False):
    full = ["mpiexec", "-n", str(np), "--oversubscribe"] + cmd
    p = subprocess.run(full, env=env, capture_output=True, text=True)
    if p.returncode != 0 and soft:
        err = [l for l in (p.stdout + p.stderr).splitlines() if "ERROR" in l]
        raise RunFailed(err[0] if err else f"exit {p.returncode}")
    if p.returncode != 0:
        sys.exit(f"failed ({p.returncode}): {' '.join(full)}\n{p.stdout[-3000:]}\n"
                 f"{p.stderr[-3000:]}")
    return p.stdout


def md_summary(out):
    for line in out.splitlines():
        if line.startswith('{"md_summary"'):
            return json.loads(line)["md_summary"]
    sys.exit("ballast-md printed no md_summary line:\n" + out[-2000:])


# ---- LAMMPS output ----

def lmp_runs(out):
    """Per `run` command: loop seconds, steps, CPU %, Pair (min, avg, max),
    thermo rows [step, temp, pe, ke, etotal]."""
    runs, thermo, in_thermo = [], [], False
    for line in out.splitlines():
        t = line.split()
        if t[:2] == ["Step", "Temp"]:
            in_thermo, thermo = True, []
            continue
        m = re.match(r"Loop time of (\S+) on (\d+) procs for (\d+) steps", line)
        if m:
            in_thermo = False
            runs.append({"loop": float(m.group(1)), "steps": int(m.group(3)),
                         "thermo": thermo})
            continue
        if in_thermo and len(t) == 5:
            try:
                thermo.append([float(x) for x in t])
            except ValueError:
                pass
        m = re.match(r"\s*([\d.]+)% CPU use with (\d+) MPI tasks", line)
        if m and runs:
            runs[-1]["cpu_pct"] = float(m.group(1))
            runs[-1]["ranks"] = int(m.group(2))
        if t and t[0] == "Pair" and len(t) >= 8 and runs:
            runs[-1]["pair"] = [float(t[2]), float(t[4]), float(t[6])]
    if not runs:
        sys.exit("LAMMPS printed no 'Loop time' line:\n" + out[-2000:])
    return runs


def lmp(np, lmp_bin, script, path, soft=False):
    with open(path, "w") as f:
        f.write(script)
    return lmp_runs(mpirun(np, [lmp_bin, "-in", path, "-log", "none", "-echo", "none"],
                           soft=soft))


# ---- kernel comparison ----

def write_initial(bin_md, out, particles, extra=()):
    name = extra[1] if extra else "liquid"
    data = os.path.join(out, f"init_{name}_{particles}.data")
    mpirun(1, [bin_md, "--particles", str(particles), "--steps", "1", "--progress", "0",
               "--json-only", "--write-data-start", data] + list(extra))
    return data


def kernel_pair(bin_md, lmp_bin, out, data, natoms, np, steps, dt, thermo):
    """One ballast-md run and one LAMMPS run of the same system; returns both."""
    d = md_summary(mpirun(np, [bin_md, "--read-data", data, "--steps", str(steps),
                               "--dt", str(dt), "--progress", "10", "--json-only"]))
    script = LMP_HEAD.format(data=data, dt=dt, thermo=thermo) + f"run {steps}\n"
    r = lmp(np, lmp_bin, script, os.path.join(out, f"kernel_np{np}.in"))[0]
    cpu_l = r["loop"] * r.get("cpu_pct", 100.0) / 100.0 * np
    th = r["thermo"]
    e0, e1 = th[0][4], th[-1][4]
    return {
        "np": np, "steps": steps, "dt": dt, "atoms": natoms,
        "md_wall_us": 1e6 * d["loop_seconds"] / (natoms * steps),
        "md_cpu_us": 1e6 * d["loop_cpu_seconds"] / (natoms * steps),
        "lmp_wall_us": 1e6 * r["loop"] / (natoms * steps),
        "lmp_cpu_us": 1e6 * cpu_l / (natoms * steps),
        "md_drift": d["energy_drift"], "md_drift_max": d["energy_drift_max"],
        "lmp_drift": abs(e1 - e0) / abs(e0),
        "lmp_drift_max": max(abs(row[4] - e0) for row in th) / abs(e0),
        "e0_rel_diff": abs(d["energy_initial"] - e0) / abs(e0),
        "e1_rel_diff": abs(d["energy_final"] - e1) / abs(e1),
        "t0_md": d["temperature_initial"], "t0_lmp": th[0][1],
    }


def kernel(bin_md, lmp_bin, out, quick, reps, log):
    particles = 4000 if quick else 32000
    steps = 100 if quick else 300
    dsteps = 200 if quick else 1000
    data = write_initial(bin_md, out, particles)
    natoms = int(open(data).read().split("\n")[2].split()[0])
    print(f"== kernel: {natoms}-atom fcc liquid, {steps} steps, {reps} repetitions "
          f"alternating ballast-md / LAMMPS", flush=True)
    rows = []
    for rep in range(reps):
        for np in (1, 2):
            r = kernel_pair(bin_md, lmp_bin, out, data, natoms, np, steps, 0.005, steps // 10)
            r.update(part="kernel", rep=rep)
            log(r)
            rows.append(r)
    print("ranks | wall us/atom-step md, lammps, ratio | CPU us/atom-step md, lammps, ratio"
          " | E0, E_end rel. diff")
    for np in (1, 2):
        sel = [r for r in rows if r["np"] == np]
        med = {k: statistics.median(r[k] for r in sel) for k in
               ("md_wall_us", "lmp_wall_us", "md_cpu_us", "lmp_cpu_us")}
        print(f"{np:5d} | {med['md_wall_us']:.3f}, {med['lmp_wall_us']:.3f}, "
              f"{med['md_wall_us'] / med['lmp_wall_us']:.2f} | {med['md_cpu_us']:.3f}, "
              f"{med['lmp_cpu_us']:.3f}, {med['md_cpu_us'] / med['lmp_cpu_us']:.2f} | "
              f"{max(r['e0_rel_diff'] for r in sel):.1e}, "
              f"{max(r['e1_rel_diff'] for r in sel):.1e}", flush=True)
    print(f"energy drift, {dsteps} steps on 2 ranks (|E_end - E0| / |E0|; max over "
          f"10 samples):")
    for dt in (0.005, 0.01):
        r = kernel_pair(bin_md, lmp_bin, out, data, natoms, 2, dsteps, dt, dsteps // 10)
        r.update(part="drift")
        log(r)
        print(f"  dt {dt}: ballast-md {r['md_drift']:.2e} (max {r['md_drift_max']:.2e}), "
              f"LAMMPS {r['lmp_drift']:.2e} (max {r['lmp_drift_max']:.2e}); final energies "
              f"differ by {r['e1_rel_diff']:.1e} (relative)", flush=True)


# ---- balance comparison (droplet, moving cluster) ----

LMP_BALANCE = {
    "lammps-static-auto": "",
    "lammps-static": "",
    "lammps-shift": "fix bal all balance {w} 1.05 shift xyz 10 1.05\n",
    "lammps-shift-time": "fix bal all balance {w} 1.05 shift xyz 10 1.05 weight time 1.0\n",
    "lammps-rcb": "comm_style tiled\nfix bal all balance {w} 1.05 rcb\n",
    "lammps-rcb-time": "comm_style tiled\nfix bal all balance {w} 1.05 rcb weight time 1.0\n",
}


def lmp_balance(lmp_bin, out, data, variant, steps, w):
    # comm_style must precede read_data's decomposition: put it first
    bal = LMP_BALANCE[variant].format(w=w)
    pre = "comm_style tiled\n" if "comm_style tiled" in bal else ""
    # slabs along x, as ballast-md's block map; LAMMPS's own choice for 2
    # ranks (1x1x2) happens to cut the droplet, off-centre only along x,
    # into equal halves: that is the "static-auto" variant
    if variant != "lammps-static-auto":
        pre += "processors * 1 1\n"
    fix = bal.replace("comm_style tiled\n", "")
    # the fix is defined anew before each run: LAMMPS (2022-01) resets its
    # timers at a run but not the time weight's last reading, which then
    # goes negative ("Balance weight <= 0.0"); a new fix starts from 0 (its
    # first call in the run has no time yet and balances by atom count)
    again = f"unfix bal\n{fix}" if fix else ""
    script = pre + LMP_HEAD.format(data=data, dt=0.005, thermo=steps) + fix + \
        f"run {w}\n{again}run {steps - 2 * w} pre no\n{again}run {w} pre no\n"
    runs = lmp(2, lmp_bin, script, os.path.join(out, f"{variant}.in"), soft=True)
    loop = sum(r["loop"] for r in runs)
    first, last = runs[0], runs[-1]

    def imb(r):
        return r["pair"][2] / r["pair"][1] if r.get("pair") and r["pair"][1] > 0 else float("nan")
    return {"time_per_step": loop / steps, "first_window": first["loop"] / w,
            "imbalance_first_window": imb(first), "imbalance_last_window": imb(last),
            "energy_final": runs[-1]["thermo"][-1][4]}


def md_balance(bin_md, out, data, strategy, steps, w, scenario):
    trace = os.path.join(out, f"trace_{scenario}_{strategy}.txt")
    env = dict(ENV, BALLAST_LB="auto") if strategy == "ballast" else ENV
    d = md_summary(mpirun(2, [bin_md, "--read-data", data, "--scenario", scenario,
                              "--blocks", "4,4,4", "--strategy", strategy, "--steps",
                              str(steps), "--window", str(w), "--progress", "0",
                              "--json-only", "--trace", trace], env=env))
    wall = [float(l.split()[1]) for l in open(trace) if not l.startswith("#")]
    return {"time_per_step": d["loop_seconds"] / steps,
            "first_window": sum(wall[:w]) / w,
            "imbalance_first_window": d["imbalance_first_window"],
            "imbalance_last_window": d["imbalance_last_window"],
            "energy_final": d["energy_final"], "remaps": d["remaps"]}


def balance(bin_md, lmp_bin, out, quick, reps, log):
    steps = 100 if quick else 200
    w = steps // 10
    for scenario, particles in (("droplet", 32000 if quick else 256000),
                                ("cluster", 32000 if quick else 256000)):
        data = write_initial(bin_md, out, particles, ["--scenario", scenario])
        natoms = int(open(data).read().split("\n")[2].split()[0])
        print(f"== {scenario}: {natoms} atoms, 2 ranks, {steps} steps, window {w}, "
              f"{reps} repetitions alternating the variants", flush=True)
        rows = []
        variants = list(LMP_BALANCE) + ["ballast-md-block", "ballast-md-ballast"]
        for rep in range(reps):
            for v in variants:
                if v.startswith("lammps"):
                    # a LAMMPS variant that fails (2021-09's time weight on a
                    # loaded machine: "Balance weight <= 0.0") is reported
                    # as failed, the others still run
                    try:
                        r = lmp_balance(lmp_bin, out, data, v, steps, w)
                    except RunFailed as e:
                        print(f"{v}: failed: {e}", flush=True)
                        log(dict(part="balance", scenario=scenario, variant=v, rep=rep,
                                 failed=str(e)))
                        continue
                else:
                    r = md_balance(bin_md, out, data, v.split("-")[-1], steps, w, scenario)
                r.update(part="balance", scenario=scenario, variant=v, rep=rep,
                         atoms=natoms, steps=steps, window=w)
                log(r)
                rows.append(r)
        print("variant             | ms/step | first window ms/step | force imbalance "
              "first, last window | E_end")
        for v in variants:
            sel = [r for r in rows if r["variant"] == v]
            if not sel:
                print(f"{v:19s} | failed in every repetition", flush=True)
                continue
            med = {k: statistics.median(r[k] for r in sel) for k in
                   ("time_per_step", "first_window", "imbalance_first_window",
                    "imbalance_last_window")}
            print(f"{v:19s} | {1e3 * med['time_per_step']:7.2f} | "
                  f"{1e3 * med['first_window']:20.2f} | {med['imbalance_first_window']:.3f}, "
                  f"{med['imbalance_last_window']:.3f} | {sel[0]['energy_final']:.10g}",
                  flush=True)


def main():
    quick = "--quick" in sys.argv
    part = arg("--part", "all")
    if part not in ("kernel", "balance", "all"):
        sys.exit("--part: kernel, balance or all")
    reps = int(arg("--reps", "1" if quick else "3"))
    bin_md = arg("--bin", os.path.join(ROOT, "build", "examples", "md", "ballast-md"))
    lmp_bin = arg("--lmp", "lmp")
    out = arg("--out", os.path.join(ROOT, "build", "bench_md_lammps"))
    os.makedirs(out, exist_ok=True)
    if "--no-setup" not in sys.argv:
        subprocess.run(["bash", os.path.join(ROOT, "scripts", "setup.sh"), "lammps"],
                       check=True)
    if not shutil.which(lmp_bin):
        sys.exit(f"{lmp_bin} not found: install the extra (bash scripts/setup.sh lammps) "
                 "or give --lmp")
    if not os.path.exists(bin_md):
        sys.exit(f"{bin_md} not found: build ballast-md first (cmake --build build)")
    jsonl = open(os.path.join(out, f"runs_{part}.jsonl"), "w")

    def log(r):
        jsonl.write(json.dumps(r) + "\n")
        jsonl.flush()
    if part in ("kernel", "all"):
        kernel(bin_md, lmp_bin, out, quick, reps, log)
    if part in ("balance", "all"):
        balance(bin_md, lmp_bin, out, quick, reps, log)


if __name__ == "__main__":
    main()
