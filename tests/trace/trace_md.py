#!/usr/bin/env python3
"""ballast-md traced by both bundled writers at once (BALLAST_TOOLS=
perfetto:otf2), with explicit load balancing and random maps so that every
step remaps and moves blocks. Each trace's counts must equal ballast's own
counts of the same run (its profile, BALLAST_PROFILE) and the md summary:
  - the Perfetto JSON passes the strict check (check_trace_json.py); per
    rank, its MPI slices per function equal the profile's calls (the
    application's and, apart, the library's), its region slices per name
    the profile's region counts, its task slices the task regions' counts;
    remap slices, moves, flow arrows and imbalance samples equal the md
    summary's remaps, tasks moved and load-balancing calls;
  - the OTF2 archive, read back with otf2-print, has the same counts in
    its ENTER records per location and region, one MPI_SEND per send call
    (blocking, nonblocking, MPI_Sendrecv) and one MPI_RECV per receive
    (blocking, and each MPI_Irecv completed by a wait or test), and one
    location per rank in its definitions;
  - read with Debian's python3-otf2 (check_otf2.py), the archive nests
    (Enter/Leave with a stack, name by name; a task's region directly in
    its task), its times are in order per location, every MpiSend pairs
    with one MpiRecv (sender, receiver, communicator, tag, bytes), and the
    messages carry ballast-md's real tags (not all 0).
The buffer is 4 KiB, so both writers flush many times during the run.
The main job (scripts/demo.sh's arguments: 256000 particles, 64 blocks, 200
steps, automatic load balancing) traced by both writers passes the strict
JSON check and python3-otf2's nesting and pairing checks.
A run under the automatic policy then checks the imbalance counter: one
sample per judged step, on rank 0, with the decision's value. Then the errors: an OTF2 archive that exists already and a trace path that
cannot be written each give one message while the run completes.
Usage: trace_md.py MPIEXEC BALLAST_MD CHECK_TRACE_JSON NP"""
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

mpiexec, md, checker, np = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
otf2_checker = os.path.join(os.path.dirname(os.path.abspath(__file__)), "check_otf2.py")
fails = 0
SKIP = {"MPI_Init", "MPI_Init_thread", "MPI_Finalize"}  # no tool events (see tool.h)
SENDS = {"MPI_Send", "MPI_Bsend", "MPI_Ssend", "MPI_Rsend", "MPI_Isend", "MPI_Ibsend",
         "MPI_Issend", "MPI_Irsend"}
RECVS = {"MPI_Recv", "MPI_Mrecv", "MPI_Irecv", "MPI_Sendrecv", "MPI_Sendrecv_replace"}
BOTH = {"MPI_Sendrecv", "MPI_Sendrecv_replace"}  # a send and a receive each


def check(cond, what):
    global fails
    if not cond:
        print("FAIL " + what)
        fails += 1
    return cond


def run_md(d, extra_env, steps=20):
    """Runs ballast-md with both writers; explicit policy, random maps."""
    env = dict(os.environ)
    for k in [k for k in env if k.startswith("BALLAST_")]:
        del env[k]
    env.update({"BALLAST_TOOLS": "perfetto:otf2", "BALLAST_TRACE_PERFETTO": d + "/trace.json",
                "BALLAST_TRACE_OTF2": d + "/otf2", "BALLAST_TRACE_MPI_MIN_US": "0",
                "BALLAST_TRACE_BUFFER": "4K", "BALLAST_PROFILE": d + "/profile.json",
                "BALLAST_REPORT": "none", "BALLAST_LB": "explicit",
                "OMPI_MCA_mpi_yield_when_idle": "1"})
    env.update(extra_env)
    cmd = [mpiexec, "-n", str(np), "--oversubscribe", md, "--json-only", "--scenario", "droplet",
           "--particles", "4000", "--steps", str(steps), "--seed", "3", "--strategy", "ballast"] + (
           ["--lb-random"] if env["BALLAST_LB"] == "explicit" else [])
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=240, env=env)
    if p.returncode != 0:
        print(p.stdout, p.stderr)
        sys.exit("ballast-md failed (%d)" % p.returncode)
    line = [l for l in p.stdout.splitlines() if l.startswith('{"md_summary":')]
    if len(line) != 1:
        sys.exit("no md_summary line:\n" + p.stdout)
    return json.loads(line[0])["md_summary"], p.stderr


def profile_counts(path):
    """Per rank: application calls, library calls, region counts by name."""
    prof = json.load(open(path))["ballast_profile"]
    out = {}
    for rd in prof["ranks_data"]:
        regions = collections.Counter()
        for g in rd["regions"]:
            if g["id"] != 0:
                regions[g["name"]] += g["count"]
        app = {k: v["ncalls"] for k, v in rd["activities"].items() if k not in SKIP}
        lib = {k: v["ncalls"] for k, v in rd.get("library", {}).items() if k not in SKIP}
        out[rd["rank"]] = (app, lib, regions)
    return out


def by_prefix(counts, prefix):
    return {k[len(prefix):]: v for k, v in counts.items() if k.startswith(prefix)}


def check_perfetto(d, s, prof):
    r = subprocess.run([sys.executable, checker, d + "/trace.json", "--ranks", str(np),
                        "--counts", d + "/counts.json"], capture_output=True, text=True,
                       timeout=120)
    check(r.returncode == 0, "the Perfetto trace passes the strict check: " + r.stdout)
    counts = json.load(open(d + "/counts.json"))
    moves = flows_s = flows_f = remaps = 0
    for rank, (app, lib, regions) in prof.items():
        c = counts.get(str(rank), {})
        check(by_prefix(c, "X/mpi/") == app, "rank %d: MPI slices %s == profile %s"
              % (rank, by_prefix(c, "X/mpi/"), app))
        check(by_prefix(c, "X/mpi,ballast/") == lib, "rank %d: library MPI slices == profile %s"
              % (rank, lib))
        check(by_prefix(c, "B/region/") == dict(regions), "rank %d: region slices == profile"
              % rank)
        tasks = by_prefix(c, "B/task/")
        check(tasks and all(regions.get(k) == v for k, v in tasks.items()),
              "rank %d: task slices %s equal their regions' counts" % (rank, tasks))
        rem = sum(v for k, v in c.items() if k.startswith("B/lb/remap "))
        check(rem == s["lb_remaps"], "rank %d: %d remap slices, %d remaps" % (rank, rem,
                                                                             s["lb_remaps"]))
        remaps += rem
        moves += sum(v for k, v in c.items() if k.startswith("X/migration/move "))
        flows_s += c.get("flow_s", 0)
        flows_f += c.get("flow_f", 0)
    t = s["tasks_moved"]
    check(t > 0 and flows_s == t and flows_f == t,
          "one flow arrow per task moved: %d starts, %d finishes, %d moved" % (flows_s, flows_f, t))
    check(moves == 2 * t, "a move slice at both ends: %d for %d moved" % (moves, t))
    c0 = counts["0"]
    check(c0.get("i/lb decision") == s["lb_calls"], "rank 0: one lb decision instant per call")
    check_imbalance(d + "/trace.json", need_judged=False)


def check_imbalance(path, need_judged):
    """Rank 0's imbalance counter has one sample per judged decision, with
    the decision's value."""
    evs = json.load(open(path))["traceEvents"]
    judged = [e["args"]["imbalance"] for e in evs
              if e.get("name") == "lb decision" and e["args"]["imbalance"] > 0]
    samples = [e["args"]["imbalance"] for e in evs
               if e.get("ph") == "C" and e["name"].startswith("imbalance ")]
    check(samples == judged and (judged or not need_judged),
          "rank 0: imbalance samples %s equal the judged decisions %s" % (samples[:5], judged[:5]))
    check(all(e["pid"] == 0 for e in evs if e.get("ph") == "C"), "the counter is on rank 0")


ENTER = re.compile(r'^ENTER\s+(\d+)\s+\d+\s+Region: "(.*)" <\d+>$')


def check_otf2(d, s, prof):
    exe = shutil.which("otf2-print")
    if not check(exe is not None, "otf2-print is installed (otf2-tools; scripts/setup.sh)"):
        return
    p = subprocess.run([exe, d + "/otf2/traces.otf2"], capture_output=True, text=True,
                       timeout=120)
    check(p.returncode == 0, "otf2-print reads the archive: " + p.stderr[-500:])
    enters = collections.defaultdict(collections.Counter)
    records = collections.defaultdict(collections.Counter)
    for line in p.stdout.splitlines():
        m = ENTER.match(line)
        if m:
            enters[int(m.group(1))][m.group(2)] += 1
        parts = line.split()
        if len(parts) >= 2 and parts[0] in ("MPI_SEND", "MPI_RECV", "MPI_COLLECTIVE_END",
                                              "LEAVE"):
            records[int(parts[1])][parts[0]] += 1
    for rank, (app, lib, regions) in prof.items():
        e = enters[rank]
        mpi = {k: v for k, v in e.items() if k.startswith("MPI_")}
        check(mpi == app, "OTF2 rank %d: MPI enters %s == profile %s" % (rank, mpi, app))
        libe = {k[8:]: v for k, v in e.items() if k.startswith("ballast:")}
        check(libe == lib, "OTF2 rank %d: library enters == profile" % rank)
        regs = {k: v for k, v in e.items() if k in regions}
        check(regs == dict(regions), "OTF2 rank %d: region enters == profile" % rank)
        tasks = {k[5:]: v for k, v in e.items() if k.startswith("task ")}
        check(tasks and all(regions.get(k) == v for k, v in tasks.items()),
              "OTF2 rank %d: task enters equal their regions' counts" % rank)
        rem = sum(v for k, v in e.items() if k.startswith("remap "))
        check(rem == s["lb_remaps"], "OTF2 rank %d: %d remaps" % (rank, rem))
        sends = sum(v for k, v in app.items() if k in SENDS | BOTH) + \
            sum(v for k, v in lib.items() if k in SENDS | BOTH)
        recvs = sum(v for k, v in app.items() if k in RECVS) + \
            sum(v for k, v in lib.items() if k in RECVS)
        check(records[rank]["MPI_SEND"] == sends, "OTF2 rank %d: %d MPI_SEND for %d sends"
              % (rank, records[rank]["MPI_SEND"], sends))
        check(records[rank]["MPI_RECV"] == recvs, "OTF2 rank %d: %d MPI_RECV for %d receives"
              % (rank, records[rank]["MPI_RECV"], recvs))
        check(records[rank]["LEAVE"] == sum(e.values()), "OTF2 rank %d: every ENTER left" % rank)
    g = subprocess.run([exe, "-G", d + "/otf2/traces.otf2"], capture_output=True, text=True,
                       timeout=60).stdout
    locs = [l for l in g.splitlines() if l.startswith("LOCATION ")]
    check(len(locs) == np, "one location per rank in the definitions (%d)" % len(locs))
    check('"MPI_COMM_WORLD"' in g and "COMM " in g, "MPI_COMM_WORLD is defined")
    check_otf2_reader(d)


def check_otf2_reader(d):
    r = subprocess.run(["/usr/bin/python3", otf2_checker, d + "/otf2/traces.otf2", "--summary",
                        d + "/otf2.json"], capture_output=True, text=True, timeout=180)
    if not check(r.returncode != 77, "python3-otf2 is installed: " + r.stdout.strip()):
        return
    check(r.returncode == 0, "python3-otf2 reads a nested archive, messages paired: "
          + r.stdout.strip())
    summ = json.load(open(d + "/otf2.json"))
    sends = sum(x["sends"] for x in summ["ranks"].values())
    recvs = sum(x["recvs"] for x in summ["ranks"].values())
    tags = sorted({t for x in summ["ranks"].values() for t in x["tags"]})
    print("OTF2 (python3-otf2): %d sends, %d receives, tags %s, communicators %s"
          % (sends, recvs, tags, sorted(summ["comms"])))
    check(sends == recvs and summ["messages_paired"], "as many receives as sends, all paired")
    check(any(t != 0 for t in tags), "real tags, not all 0: %s" % tags)


DEMO = ["--scenario", "droplet", "--particles", "256000", "--blocks", "4,4,4", "--steps", "200",
        "--strategy", "ballast", "--json-only"]


def check_main_job(d):
    env = {k: v for k, v in os.environ.items() if not k.startswith("BALLAST_")}
    m = d + "/main"
    os.makedirs(m)
    env.update({"BALLAST_TOOLS": "perfetto:otf2", "BALLAST_TRACE_PERFETTO": m + "/t.json",
                "BALLAST_TRACE_OTF2": m + "/otf2", "BALLAST_LB": "auto", "BALLAST_REPORT": "none",
                "OMPI_MCA_mpi_yield_when_idle": "1"})
    p = subprocess.run([mpiexec, "-n", "2", "--oversubscribe", md] + DEMO, capture_output=True,
                       text=True, timeout=240, env=env)
    if not check(p.returncode == 0, "the main job runs traced: " + p.stderr[-500:]):
        return
    r = subprocess.run([sys.executable, checker, m + "/t.json", "--ranks", "2"],
                       capture_output=True, text=True, timeout=120)
    check(r.returncode == 0, "main job: the Perfetto trace nests (strict check): " + r.stdout)
    r = subprocess.run(["/usr/bin/python3", otf2_checker, m + "/otf2/traces.otf2"],
                       capture_output=True, text=True, timeout=180)
    check(r.returncode == 0, "main job: python3-otf2 reads the archive nested, messages "
          "paired: " + r.stdout)
    print(r.stdout.strip())


def check_auto(d):
    # The automatic policy judges steps after its warm-up: the counter track.
    os.remove(d + "/trace.json")
    s, err = run_md(d, {"BALLAST_TOOLS": "perfetto", "BALLAST_LB": "auto",
                        "BALLAST_LB_WARMUP": "2", "BALLAST_LB_WINDOW": "5"}, steps=16)
    check(s["lb_imbalance_first"] > 0, "auto: ballast judged steps")
    check_imbalance(d + "/trace.json", need_judged=True)


def check_errors(d):
    # The archive exists: OTF2 refuses it on every rank; one message, the
    # run completes, the Perfetto writer still writes.
    os.remove(d + "/trace.json")
    s, err = run_md(d, {}, steps=4)
    check(s["steps"] == 4, "the run completes with an OTF2 archive in the way")
    check("exists already" in err, "the OTF2 writer says why it is off: " + err)
    check(os.path.exists(d + "/trace.json"), "the other writer works on")
    s, err = run_md(d, {"BALLAST_TRACE_PERFETTO": d + "/no/such/dir/t.json",
                        "BALLAST_TOOLS": "perfetto"}, steps=4)
    check(s["steps"] == 4, "the run completes with an unwritable trace path")
    check("no/such/dir/t.json.part" in err, "the Perfetto writer names the path: " + err)


with tempfile.TemporaryDirectory() as d:
    s, err = run_md(d, {})
    check(s["lb_remaps"] > 0 and s["tasks_moved"] > 0, "the run remapped and moved blocks")
    prof = profile_counts(d + "/profile.json")
    check(sorted(prof) == list(range(np)), "profile of every rank")
    check_perfetto(d, s, prof)
    check_otf2(d, s, prof)
    check_main_job(d)
    check_auto(d)
    check_errors(d)

print("trace_md: %d failure(s)" % fails)
sys.exit(1 if fails else 0)
