#!/usr/bin/env python3
"""BALLAST_CUBE's archive checked value by value against the JSON profile
(BALLAST_PROFILE) of the same run, through cubex_read.py, a reader written
from the Cube4 format alone.

usage: check_cube.py MPIEXEC CUBE_APP BALLAST_REPORT [BALLAST_MD]

Runs cube_app (tests/cube/cube_app.c) on 2, 3, 5 and 1 ranks, and ballast-md's
load-balanced run (tasks as regions) when given, each with both outputs,
then checks every value of every metric at every call path and location;
that the two row orders differ on these trees (reading one metric in the
other's order would be caught); that an unwritable path costs one line
on rank 0 and neither the run nor its JSON profile; that ballast-report
--cube converts the JSON profile into an archive with the same values, and
that ballast-report reads an archive back into the profile's figures (per
rank: activities' calls, bytes and time, regions' time) and draws its page.
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cubex_read  # noqa: E402

MPIEXEC = sys.argv[1]
APP, REPORT = os.path.abspath(sys.argv[2]), os.path.abspath(sys.argv[3])
MD = os.path.abspath(sys.argv[4]) if len(sys.argv) > 4 else None
DBL_MAX = sys.float_info.max
FAILS = []


def check(cond, what):
    if not cond:
        FAILS.append(what)
        print("FAIL:", what)


def run(np, cmd, env_extra, cwd):
    env = dict(os.environ)
    env.update({"BALLAST_REPORT": "none"})
    env.update(env_extra)
    return subprocess.run([MPIEXEC, "-n", str(np), "--oversubscribe"] + cmd, env=env,
                          cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          timeout=240)


def close(a, b):
    return abs(a - b) <= 1e-7 * max(abs(a), abs(b)) + 1e-9


def json_paths(rd):
    """(names from the root) -> region record, and region id -> descendants."""
    by_id = {r["id"]: r for r in rd["regions"]}
    paths, below = {}, {}
    for r in rd["regions"]:
        chain, x = [], r
        while True:
            chain.append(x["name"])
            below.setdefault(x["id"], []).append(r["id"])
            if x["parent"] < 0:
                break
            x = by_id[x["parent"]]
        paths[tuple(reversed(chain))] = r
    return paths, below, by_id


def expected(cube, rd, paths, below, by_id, cnode, uniq):
    """What the JSON profile says the archive holds at (cnode, this rank)."""
    cn = cube["cnodes"][cnode]
    reg = cube["regions"][cn["callee"]]
    names, c = [], cnode
    while c is not None:
        names.append(cube["regions"][cube["cnodes"][c]["callee"]]["name"])
        c = cube["cnodes"][c]["parent"]
    names.reverse()
    none = DBL_MAX if uniq == "min_time" else 0
    if reg["paradigm"] == "mpi":
        r = paths.get(tuple(names[:-1]))
        a = r and r.get("activities", {}).get(names[-1])
        if not a:
            return none
        return {"visits": a["ncalls"], "time": a["tsum"], "mpi": a["tsum"],
                "min_time": a["tmin"] if a["ncalls"] else DBL_MAX,
                "max_time": a["tmax"], "bytes_transferred": a["nbytes"]}.get(uniq, 0)
    r = paths.get(tuple(names))
    if not r:
        return none
    if uniq == "mpi":
        return sum(a["tsum"] for d in below[r["id"]]
                   for a in by_id[d].get("activities", {}).values())
    root = r["parent"] < 0
    return {"visits": r["count"], "time": r["wtime"], "cpu_time": r["cputime"],
            "bytes_sent": r["sent"]["bytes"], "bytes_received": r["received"]["bytes"],
            "min_time": DBL_MAX,
            "ballast_time": rd["ballast_work"] + rd["ballast_wait"] if root else 0,
            "ballast_wait": rd["ballast_wait"] if root else 0}.get(uniq, 0)


def compare(tag, cube, prof, np):
    locs = cube["locations"]
    check(len(locs) == np, "%s: %d locations for %d ranks" % (tag, len(locs), np))
    check(sorted(l["rank"] for l in locs) == list(range(np)), "%s: each rank once" % tag)
    uniq = [m["uniq"] for m in cube["metrics"]]
    for want in ("visits", "time", "mpi", "min_time", "max_time", "bytes_transferred",
                 "bytes_sent", "bytes_received", "cpu_time", "ballast_time", "ballast_wait"):
        check(want in uniq, "%s: metric %s" % (tag, want))
    types = {m["uniq"]: (m["type"], m["dtype"], m["parent"]) for m in cube["metrics"]}
    ids = {m["uniq"]: m["id"] for m in cube["metrics"]}
    check(types["visits"][:2] == ("EXCLUSIVE", "UINT64"), "%s: visits type" % tag)
    check(types["time"][:2] == ("INCLUSIVE", "DOUBLE"), "%s: time type" % tag)
    check(types["mpi"][2] == ids["time"], "%s: mpi is time's child" % tag)
    check(types["min_time"][1] == "MINDOUBLE" and types["max_time"][1] == "MAXDOUBLE",
          "%s: min/max dtypes" % tag)
    check(cube["regions"][cube["cnodes"][cube["root"]]["callee"]]["name"] == "ballast_main",
          "%s: root is ballast_main" % tag)
    # an inclusive metric's rows hold inclusive values: never below the sum
    # of the children (Cube's exclusive value, the computation, is >= 0)
    for m in cube["metrics"]:
        if m["type"] != "INCLUSIVE":
            continue
        v = cube["values"][m["uniq"]]
        for c, cn in cube["cnodes"].items():
            for li in range(len(locs)):
                ch = sum(v[k][li] for k in cn["children"])
                check(v[c][li] >= ch - 1e-9 * max(1.0, abs(ch)),
                      "%s: %s at cnode %d location %d below its children's %r < %r" %
                      (tag, m["uniq"], c, li, v[c][li], ch))
    ranks = {rd["rank"]: rd for rd in prof["ranks_data"]}
    nval = 0
    for li, loc in enumerate(locs):
        rd = ranks[loc["rank"]]
        check(loc["group"] == "MPI Rank %d" % loc["rank"], "%s: group name %r" % (tag, loc))
        if "run" in rd:
            check(loc["node"] == rd["run"]["host"], "%s: node of rank %d" % (tag, loc["rank"]))
        paths, below, by_id = json_paths(rd)
        # every region and activity of the rank is a call path of the archive
        seen = set()
        for c in cube["cnodes"]:
            names, x = [], c
            while x is not None:
                names.append(cube["regions"][cube["cnodes"][x]["callee"]]["name"])
                x = cube["cnodes"][x]["parent"]
            seen.add(tuple(reversed(names)))
        for p, r in paths.items():
            check(p in seen, "%s: region path %r of rank %d missing" % (tag, p, rd["rank"]))
            for a in r.get("activities", {}):
                check(p + (a,) in seen, "%s: %r in %r missing" % (tag, a, p))
        for u in uniq:
            for c in cube["cnodes"]:
                got = cube["values"][u][c][li]
                want = expected(cube, rd, paths, below, by_id, c, u)
                nval += 1
                check(close(float(got), float(want)),
                      "%s: %s at cnode %d rank %d: archive %r, profile %r" %
                      (tag, u, c, loc["rank"], got, want))
    return nval


def one_run(tag, np, cmd, tmp):
    cubef, proff = os.path.join(tmp, tag + ".cubex"), os.path.join(tmp, tag + ".json")
    p = run(np, cmd, {"BALLAST_CUBE": cubef, "BALLAST_PROFILE": proff}, tmp)
    check(p.returncode == 0, "%s: exit %d: %s" % (tag, p.returncode, p.stderr[-2000:]))
    check(b"Cube" not in p.stderr, "%s: no warning: %r" % (tag, p.stderr[-500:]))
    if p.returncode:
        return None
    try:
        cube = cubex_read.read(cubef)
    except cubex_read.CubeError as e:
        check(False, "%s: reader refuses the archive: %s" % (tag, e))
        return None
    check(not os.path.exists(cubef + ".tmp"), "%s: PATH.tmp left behind" % tag)
    prof = json.load(open(proff))["ballast_profile"]
    n = compare(tag, cube, prof, np)
    print("%s: %d ranks, %d call paths, %d values checked" % (tag, np, len(cube["cnodes"]), n))
    report_checks(tag, cubef, proff, cube, prof, tmp)
    return cube


def same_values(tag, a, b):
    check(len(a["cnodes"]) == len(b["cnodes"]), "%s: cnode counts" % tag)
    bad = 0
    for u in a["values"]:
        for c, row in a["values"][u].items():
            for x, y in zip(row, b["values"].get(u, {}).get(c, [])):
                bad += not close(float(x), float(y))
    check(bad == 0, "%s: %d values differ" % (tag, bad))


def report_checks(tag, cubef, proff, cube, prof, tmp):
    """The converter and the page's reader of .cubex (tools/ballast-report)."""
    conv = os.path.join(tmp, tag + ".conv.cubex")
    p = subprocess.run([sys.executable, REPORT, "--cube", conv, proff],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    check(p.returncode == 0, "%s: ballast-report --cube: %r" % (tag, p.stderr[-500:]))
    if p.returncode == 0:
        try:
            c2 = cubex_read.read(conv)
            compare(tag + " (converted)", c2, prof, len(cube["locations"]))
            same_values(tag + " converted vs written", cube, c2)
        except cubex_read.CubeError as e:
            check(False, "%s: converted archive refused: %s" % (tag, e))
    page = os.path.join(tmp, tag + ".cube.html")
    p = subprocess.run([sys.executable, REPORT, cubef, "-o", page],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    check(p.returncode == 0 and os.path.getsize(page) > 1000,
          "%s: ballast-report on the archive: %r" % (tag, p.stderr[-500:]))
    from importlib.machinery import SourceFileLoader
    br = SourceFileLoader("ballast_report", REPORT).load_module()
    back = br.cube_to_profile(cubef)["ballast_profile"]
    for rd in prof["ranks_data"]:
        bd = [d for d in back["ranks_data"] if d["rank"] == rd["rank"]][0]
        for name, a in rd["activities"].items():
            b = bd["activities"].get(name)
            check(b is not None and b["ncalls"] == a["ncalls"] and b["nbytes"] == a["nbytes"]
                  and close(b["tsum"], a["tsum"]) and close(b["tmax"], a["tmax"]),
                  "%s: rank %d %s read back: %r vs %r" % (tag, rd["rank"], name, b, a))
        check(close(bd["wall"], rd["wall"]) and close(bd["mpi_time"], rd["mpi_time"]) and
              close(bd["mpi_init"], rd["mpi_init"]),
              "%s: rank %d wall/mpi/init read back" % (tag, rd["rank"]))
        want = sorted((g["name"], g["count"]) for g in rd["regions"])
        got = sorted((g["name"], g["count"]) for g in bd["regions"])
        check(want == got, "%s: rank %d regions read back" % (tag, rd["rank"]))


def bad_inputs(tmp):
    """ballast-report refuses what it cannot convert or read, in one line."""
    old = os.path.join(tmp, "old.json")
    with open(old, "w") as f:
        json.dump({"ballast_profile": {"ranks": 1, "ranks_data": [
            {"rank": 0, "regions": [{"id": 0, "name": "ballast_main", "parent": -1}]}]}}, f)
    good = os.path.join(tmp, "app2.cubex")
    cut = os.path.join(tmp, "cut.cubex")
    if not os.path.exists(good):
        return  # its run failed, and said so
    with open(good, "rb") as f, open(cut, "wb") as g:
        g.write(f.read()[:os.path.getsize(good) // 2])
    for args, want in (([ "--cube", os.path.join(tmp, "x.cubex"), old], ("no per-region MPI",)),
                       ([cut, "-o", os.path.join(tmp, "cut.html")], ("cut short", "not a Cube4 archive")),
                       (["--cube", os.path.join(tmp, "no", "dir", "x.cubex"),
                         os.path.join(tmp, "app2.json")], ("cannot write",))):
        p = subprocess.run([sys.executable, REPORT] + args, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=120)
        err = p.stderr.decode("utf-8", "replace")
        check(p.returncode != 0 and any(w in err for w in want) and "Traceback" not in err and
              len(err.strip().splitlines()) == 1, "ballast-report %r: %r" % (args, err))


def main():
    tmp = tempfile.mkdtemp(prefix="cube_")
    cube = one_run("app2", 2, [APP], tmp)
    if cube:
        o = cube["orders"]
        check(o["EXCLUSIVE"] != o["INCLUSIVE"], "the two row orders differ on this tree")
        names = {cube["regions"][c["callee"]]["name"] for c in cube["cnodes"].values()}
        check({"only_rank0", "only_rank1", "inner <&>", "MPI_Sendrecv"} <= names,
              "the union holds both ranks' own regions and the XML-escaped name")
    one_run("app3", 3, [APP], tmp)
    one_run("app5", 5, [APP], tmp)  # three rounds of the binomial merge
    one_run("app1", 1, [APP], tmp)  # no merge at all
    if MD:
        one_run("md", 2, [MD, "--json-only", "--scenario", "droplet", "--particles", "400",
                          "--steps", "6", "--strategy", "ballast"], tmp)
    # an unwritable path: one line on rank 0, the run and its profile intact
    proff = os.path.join(tmp, "bad.json")
    p = run(2, [APP], {"BALLAST_CUBE": os.path.join(tmp, "no", "such", "dir", "x.cubex"),
                       "BALLAST_PROFILE": proff}, tmp)
    err = p.stderr.decode("utf-8", "replace")
    lines = [l for l in err.splitlines() if "Cube" in l]
    check(p.returncode == 0, "bad path: exit %d" % p.returncode)
    check(len(lines) == 1 and "no Cube profile written to" in lines[0] and
          lines[0].startswith("ballast[0]"), "bad path: one line on rank 0: %r" % err[-1500:])
    check(os.path.exists(proff) and json.load(open(proff))["ballast_profile"]["ranks"] == 2,
          "bad path: the JSON profile is written")
    bad_inputs(tmp)
    if FAILS:
        print("%d failure(s)" % len(FAILS))
        sys.exit(1)
    print("PASS")


main()
