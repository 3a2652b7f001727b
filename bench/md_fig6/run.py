#!/usr/bin/env python3
"""The seed's figure 6 on this machine: time per step of ballast-md under each
mapping strategy (static block, random, round-robin, ballast automatic) on
each scenario (uniform, droplet, moving cluster), 2 ranks.

Runs are interleaved (repetition after repetition, every variant once per
repetition, the order rotated each time) so that load changes on the machine
hit every variant alike; each figure is the median over the repetitions and
is compared as a ratio to the static block decomposition of the same
scenario, measured in the same run of this script.

Extra variants, for the cost figures:
  block-mon0    block with BALLAST_MONITOR=0 (monitoring off): monitoring cost
                = block time per step / block-mon0 time per step - 1
  ballast-mon0  droplet only: ballast with monitoring off (its cost model then
                has only the particle-count estimates, its policy wall times)
Balancing cost = lb_seconds / loop_seconds of the ballast runs.

usage: run.py --bin build/examples/md/ballast-md [--reps 3] [--steps 150]
              [--out bench/md_fig6/out]
Writes OUT/runs.jsonl (every run's md_summary), OUT/table.md, and the per-step
traces OUT/trace_<scenario>_<variant>_<rep>.txt (the figure reads them).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

SCEN = {
    # lattice sites: the uniform liquid keeps every site (23,328 = 4 x 18^3:
    # 12 cells per side, 3 per block, so the slabs are equal); droplet and
    # cluster keep a dense sphere and a dilute gas (about 22,500 and 14,500
    # particles), so the three runs take comparable time per step
    "uniform": ["--particles", "23328"],
    "droplet": ["--particles", "256000"],
    "cluster": ["--particles", "256000", "--drift", "4"],
}
STRATS = ["block", "random", "roundrobin", "ballast"]


def variants():
    v = []
    for sc in SCEN:
        for st in STRATS:
            v.append((sc, st, {}))
        v.append((sc, "block-mon0", {"BALLAST_MONITOR": "0"}))
    v.append(("droplet", "ballast-mon0", {"BALLAST_MONITOR": "0"}))
    return v


def run_one(a, sc, var, env_extra, rep):
    st = var.split("-")[0]
    trace = os.path.join(a.out, "trace_%s_%s_%d.txt" % (sc, var, rep))
    cmd = [a.mpiexec, "-n", "2", "--oversubscribe", a.bin, "--json-only", "--scenario", sc,
           "--strategy", st, "--blocks", "4,4,4", "--steps", str(a.steps), "--seed", "1",
           "--window", str(a.window), "--trace", trace] + SCEN[sc]
    env = dict(os.environ)
    for k in [k for k in env if k.startswith("BALLAST_")]:
        del env[k]
    env.update({"BALLAST_REPORT": "none", "OMPI_MCA_mpi_yield_when_idle": "1"})
    env.update(env_extra)
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900)
    lines = [l for l in p.stdout.splitlines() if l.startswith('{"md_summary":')]
    if p.returncode != 0 or len(lines) != 1:
        sys.exit("run failed (%d): %s\n%s\n%s" % (p.returncode, " ".join(cmd), p.stdout,
                                                    p.stderr))
    d = json.loads(lines[0])["md_summary"]
    d.update({"variant": var, "rep": rep, "trace": trace})
    return d


def med(rows, key):
    return statistics.median(r[key] for r in rows)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--mpiexec", default="mpiexec")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--steps", type=int, default=150)
    ap.add_argument("--window", type=int, default=20)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "out"))
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    load0 = os.getloadavg()
    t0 = time.time()
    res = []
    vs = variants()
    with open(os.path.join(a.out, "runs.jsonl"), "w") as f:
        for rep in range(a.reps):
            order = vs[rep % len(vs):] + vs[:rep % len(vs)]
            for sc, var, env in order:
                d = run_one(a, sc, var, env, rep)
                res.append(d)
                f.write(json.dumps(d) + "\n")
                f.flush()
                print("rep %d %-8s %-12s %8.2f ms/step  imbalance last %.3f  remaps %d  lb %.3f s"
                      % (rep, sc, var, 1e3 * d["time_per_step"], d["imbalance_last_window"],
                         d["remaps"], d["lb_seconds"]), flush=True)
    load1 = os.getloadavg()
    out = []
    out.append("machine: %s, %d cores; load average %.2f at start, %.2f at end; %d repetitions, "
               "%d steps, %.0f s" % (os.uname().nodename, os.cpu_count(), load0[0], load1[0],
                                     a.reps, a.steps, time.time() - t0))
    out.append("")
    out.append("| scenario | strategy | time/step ms (median) | ratio to block | first window ms "
               "| last window ms | imbalance first | imbalance last | remaps | blocks moved "
               "| lb s / loop s |")
    out.append("|---|---|---|---|---|---|---|---|---|---|---|")
    for sc in SCEN:
        base = med([r for r in res if r["scenario"] == sc and r["variant"] == "block"],
                   "time_per_step")
        for var in STRATS + ["block-mon0", "ballast-mon0"]:
            rows = [r for r in res if r["scenario"] == sc and r["variant"] == var]
            if not rows:
                continue
            tps = med(rows, "time_per_step")
            lbf = statistics.median(r["lb_seconds"] / r["loop_seconds"] for r in rows)
            out.append("| %s | %s | %.2f | %.3f | %.2f | %.2f | %.3f | %.3f | %s | %s | %.2f%% |" % (
                sc, var, 1e3 * tps, tps / base, 1e3 * med(rows, "time_per_step_first_window"),
                1e3 * med(rows, "time_per_step_last_window"), med(rows, "imbalance_first_window"),
                med(rows, "imbalance_last_window"),
                "/".join(str(r["remaps"]) for r in rows),
                "/".join(str(r["tasks_moved"]) for r in rows), 100 * lbf))
    out.append("")
    # ballast's policy threshold: share of steps whose imbalance (max/avg
    # compute over ranks) stays below it, from the traces
    for sc in SCEN:
        for var in ("block", "ballast"):
            fr = []
            for r in res:
                if r["scenario"] == sc and r["variant"] == var:
                    vals = [float(l.split()[4]) for l in open(r["trace"]) if not l.startswith("#")]
                    fr.append(sum(v <= 1.10 for v in vals) / len(vals))
            out.append("- %s, %s: steps with imbalance <= 1.10 (the policy's threshold): %.0f%% "
                       "(median over repetitions)" % (sc, var, 100 * statistics.median(fr)))
    mon = []
    for sc in SCEN:
        b = med([r for r in res if r["scenario"] == sc and r["variant"] == "block"], "time_per_step")
        m = med([r for r in res if r["scenario"] == sc and r["variant"] == "block-mon0"],
                "time_per_step")
        mon.append("%s %+.1f%%" % (sc, 100 * (b / m - 1)))
    out.append("- monitoring cost (block with monitoring on vs BALLAST_MONITOR=0, medians): "
               + ", ".join(mon))
    text = "\n".join(out)
    open(os.path.join(a.out, "table.md"), "w").write(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
