#!/usr/bin/env python3
"""Tests of the HTML report (tools/ballast-report, BALLAST_HTML).

usage: check_report.py CHECK --report PATH [--mpiexec PATH --md PATH --ring PATH
                       --gen PATH] --out DIR
CHECK:
  md       the main job (the MD droplet, 2 ranks, automatic balancing) with
           BALLAST_HTML: the profile's series shows the remap and the
           imbalance falling; the page, drawn in headless Chromium, is not
           blank, logs nothing to the console and has every section, with
           and without JavaScript.
  large    a synthetic 1,024-rank profile (gen_profile.py): drawn in under
           2 s of CPU time, under 5 MB, and in Chromium as above.
  nopython BALLAST_HTML without python3 in PATH: the run succeeds, warns,
           keeps the profile; bad inputs to ballast-report are refused with
           a message.
"""
import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import time
import zlib

SECTIONS = ["glance", "ranks", "activities", "regions", "comm", "lb", "tasks", "assertions", "repeated"]
FAILS = []


def check(cond, what, *vals):
    if not cond:
        FAILS.append(what)
        print("CHECK failed:", what, *vals, file=sys.stderr)
    return cond


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        p = shutil.which(name)
        if p:
            return p
    sys.exit("chromium is not installed (scripts/setup.sh installs it)")


def png_rows(path):
    """The PNG's size and its filtered scanlines (zlib only)."""
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        return None
    pos, idat = 8, b""
    w = h = bpp = 0
    while pos < len(data):
        n = int.from_bytes(data[pos:pos + 4], "big")
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h = int.from_bytes(body[0:4], "big"), int.from_bytes(body[4:8], "big")
            bpp = {2: 3, 6: 4, 0: 1, 4: 2}.get(body[9], 4) * body[8] // 8
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    stride = w * bpp + 1
    return w, h, [raw[i * stride:(i + 1) * stride] for i in range(h)]


def not_blank(png):
    """A uniform image has a handful of distinct filtered scanlines (one per
    filter type); a drawn page has thousands."""
    got = png_rows(png)
    if not check(got is not None, "the screenshot is a PNG", png):
        return
    w, h, rows = got
    check(w == 1400 and h >= 1000, "screenshot size", w, h)
    distinct = len(set(rows))
    check(distinct > 200, "the page is not blank (distinct scanlines)", distinct)
    print("screenshot %s: %dx%d, %d distinct scanlines" % (png, w, h, distinct))


def browse(page, out_png):
    """Screenshot with console logging; DOM with JavaScript on and off."""
    exe = chromium()
    base = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
            "--enable-logging=stderr", "--v=0", "--user-data-dir=" + out_png + ".profile"]
    url = "file://" + os.path.abspath(page)
    t0 = time.time()
    p = subprocess.run(base + ["--screenshot=" + out_png, "--window-size=1400,4000", url],
                       capture_output=True, text=True, timeout=120)
    t_shot = time.time() - t0
    check(p.returncode == 0 and os.path.exists(out_png), "chromium took the screenshot",
          p.returncode, p.stderr[-2000:])
    logs = p.stderr
    doms = {}
    # Without JavaScript: the same page with its script removed (--dump-dom
    # itself needs scripting, so Chromium's switch cannot be used here).
    nojs = out_png + ".nojs.html"
    with open(page, encoding="utf-8") as f:
        text = f.read()
    with open(nojs, "w", encoding="utf-8") as f:
        f.write(re.sub(r"<script>.*?</script>", "", text, flags=re.S))
    # The sorting script: a copy that clicks "sort by MPI" once loaded.
    clicked = out_png + ".sorted.html"
    with open(clicked, "w", encoding="utf-8") as f:
        f.write(text.replace("</body>", "<script>document.querySelector("
                             "'button[data-sort=m]').click()</script></body>"))
    q = subprocess.run(base + ["--dump-dom", "file://" + os.path.abspath(clicked)],
                       capture_output=True, text=True, timeout=120)
    logs += q.stderr
    cols = [(float(x), float(m)) for m, x in re.findall(
        r'<g data-r="\d+" data-w="[^"]*" data-c="[^"]*" data-m="([^"]*)" data-b="[^"]*" '
        r'transform="translate\(([\d.]+),0\)"', q.stdout)]
    cols.sort()
    check(len(cols) >= 2 and all(a[1] >= b[1] for a, b in zip(cols, cols[1:])),
          "the script sorts the rank columns by MPI time", cols[:4])
    for js in (True, False):
        q = subprocess.run(base + ["--dump-dom", url if js else "file://" + os.path.abspath(nojs)],
                           capture_output=True, text=True, timeout=120)
        check(q.returncode == 0, "chromium dumped the DOM (js %s)" % js, q.stderr[-2000:])
        doms[js] = q.stdout
        logs += q.stderr
    console = [l for l in logs.splitlines() if ":CONSOLE" in l]
    check(not console, "no console message", console[:5])
    for js, dom in doms.items():
        ids = re.findall(r'<section id="([a-z]+)"', dom)
        check(ids == SECTIONS, "every section, in order (js %s)" % js, ids)
        check(dom.count("<svg") >= 8, "pictures drawn (js %s)" % js, dom.count("<svg"))
    if os.path.exists(out_png):
        not_blank(out_png)
    print("chromium: screenshot in %.1f s (wall, with its start)" % t_shot)
    return doms[True]


def page_checks(page):
    text = open(page, encoding="utf-8").read()
    size = os.path.getsize(page)
    check(size < 5 * 1024 * 1024, "page under 5 MB", size)
    # self-contained: no fetch of anything
    check(not re.search(r'(src|href)="(https?:|//)', text), "no external resource")
    check("<script src" not in text and "<link" not in text, "no external script or style")
    return text, size


def check_md(a):
    os.makedirs(a.out, exist_ok=True)
    page, prof = os.path.join(a.out, "md.html"), os.path.join(a.out, "md.json")
    for f in (page, prof):
        if os.path.exists(f):
            os.remove(f)
    env = dict(os.environ, BALLAST_HTML=page, BALLAST_PROFILE=prof, BALLAST_REPORT="none",
               BALLAST_LB="auto", OMPI_MCA_mpi_yield_when_idle="1")
    cmd = [a.mpiexec, "-n", "2", "--oversubscribe", a.md, "--scenario", "droplet",
           "--particles", "4000", "--steps", "80", "--seed", "3", "--blocks", "4,4,4",
           "--strategy", "ballast", "--json-only"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=240, env=env)
    if not check(p.returncode == 0, "the MD run succeeded", p.returncode, p.stderr[-3000:]):
        return
    check("BALLAST_HTML" not in p.stderr, "no BALLAST_HTML warning", p.stderr[-2000:])
    check(os.path.exists(page), "BALLAST_HTML wrote the page", page)
    d = json.load(open(prof))["ballast_profile"]
    ctx = d["lb_series"]["contexts"][0]
    st, marks = ctx["steps"], ctx["remaps"]
    # one point per step the policy was fed: every call's but the first's
    # and those of the calls right after a remap (the automatic policy's
    # reduction completes a call later; a remap drops the step before it)
    check(len(st["tmax"]) == st["total"] and 80 - 1 - len(marks) <= st["total"] <= 79,
          "one point per step fed", st["total"], len(marks))
    check(all(x >= y > 0 for x, y in zip(st["tmax"], st["tavg"])), "max >= avg > 0 per step")
    committed = [m for m in marks if m["committed"]]
    if check(committed, "the droplet was remapped", marks):
        m = committed[0]
        check(m["tasks"] > 0 and m["bytes"] > 0, "the remap moved tasks and bytes", m)
        # the first: from the blocks' estimates at the first call (ballast-md
        # sets balance_estimates), judged on no measurement
        check(m["reason"] == "estimated" and m["step"] <= 1, "balanced from the estimates",
              m["reason"], m["step"])
    # the profile's last-remap figures hold after a remap from the estimates
    # too (no measured imbalance before it: 0; the mapping's prediction set)
    lbs = d.get("load_balancing", {})
    if committed:
        check(lbs.get("remaps", 0) >= 1 and lbs.get("imbalance_predicted", 0) >= 1.0,
              "the profile's load_balancing has the last remap's prediction", lbs)
    measured = [x for x in committed if x["reason"] == "imbalanced"]
    if committed and not measured:
        print("no measured remap after the estimates' (%d steps)" % st["total"])
    if measured:
        m = measured[0]
        check(m["imbalance_before"] > 1.1, "imbalanced before the remap", m["imbalance_before"])
        check(0 < m["imbalance_after"] < m["imbalance_before"], "imbalance fell at the remap",
              m["imbalance_before"], m["imbalance_after"])
        before = [i for f, i in zip(st["first"], st["imbalance"]) if f <= m["step"]]
        after = [i for f, i in zip(st["first"], st["imbalance"]) if f > m["step"] + 5]
        check(sum(after) / len(after) < sum(before) / len(before),
              "the per-step imbalance fell after the remap",
              sum(before) / len(before), sum(after) / len(after))
        print("remap at step %d: %d tasks, %d bytes; imbalance %.3f -> %.3f (predicted %.3f)"
              % (m["step"], m["tasks"], m["bytes"], m["imbalance_before"],
                 m["imbalance_after"], m["imbalance_predicted"]))
    maps = ctx["task_map"]["snapshots"]
    check(len(maps) == 1 + len(committed), "a task map at start and after each remap", len(maps))
    check(maps[0]["ntasks"] == 64 and len(maps[0]["keys"]) == 64, "64 blocks by key",
          maps[0]["ntasks"])
    check(sum(maps[-1]["per_rank"]) == 64, "every block somewhere", maps[-1]["per_rank"])
    for r in d["ranks_data"]:
        check(r["run"]["host"] and r["lb_series"]["seconds"] > 0, "each rank's host and lb time",
              r.get("run"), r.get("lb_series"))
        # ballast's own time = work + waiting = load balancing's seconds here
        # (no topology mapping), README "What the figures mean"
        check(abs(r["ballast_work"] + r["ballast_wait"] - r["lb_series"]["seconds"]) < 1e-6
              and r["ballast_wait"] == r["lb_series"]["seconds_waiting"],
              "ballast's work and waiting make up load balancing's seconds", r["ballast_work"],
              r["ballast_wait"], r["lb_series"])
    # the program's step (wall time between calls) beside the task time
    check(len(st["wmax"]) == st["total"] and
          all(w >= a for w, a in zip(st["wmax"], st["wavg"])),
          "the program's step per point, max >= avg", st.get("wmax"))
    med = lambda v: sorted(v)[len(v) // 2]
    check(med(st["wmax"]) >= med(st["tmax"]), "the program's step holds the task time",
          med(st["wmax"]), med(st["tmax"]))
    text, size = page_checks(page)
    check("the judged imbalance fell from" in text, "the page states the imbalance falling")
    check("program&#x27;s step, slowest rank" in text and "task time judged, slowest rank" in text,
          "the chart draws the program's step beside the task time")
    check("ballast&#x27;s own work" in text and "waiting in ballast" in text,
          "ballast's own time shown as work and waiting")
    check(text.count('class="mark"') >= 2, "remap marked on both charts")
    dom = browse(page, os.path.join(a.out, "md.png"))
    check("R1" in dom, "remap R1 in the rendered page")
    print("md page: %d bytes" % size)


def check_large(a):
    os.makedirs(a.out, exist_ok=True)
    prof, page = os.path.join(a.out, "big.json"), os.path.join(a.out, "big.html")
    subprocess.run([sys.executable, a.gen, prof, "--ranks", "1024"], check=True, timeout=120)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.time()
    p = subprocess.run([sys.executable, a.report, prof, "-o", page], capture_output=True,
                       text=True, timeout=120)
    wall = time.time() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    check(p.returncode == 0, "ballast-report drew the page", p.stderr)
    # CPU time: the machine running the suite is shared, wall time is not the tool's
    check(cpu < 2.0, "drawn in under 2 s of CPU time", cpu)
    text, size = page_checks(page)
    print("1,024 ranks: profile %d bytes, page %d bytes, drawn in %.2f s CPU (%.2f s wall)"
          % (os.path.getsize(prof), size, cpu, wall))
    check("one pixel: 2 x 2 ranks" in text, "the matrix aggregated to blocks of ranks")
    check("of the bin" in text, "task maps aggregated in bins")
    check("1 of 3 assertion(s) held" in text, "assertions and verdicts shown")
    browse(page, os.path.join(a.out, "big.png"))


def check_nopython(a):
    os.makedirs(a.out, exist_ok=True)
    page = os.path.join(a.out, "nopy.html")
    if os.path.exists(page):
        os.remove(page)
    bindir = os.path.join(a.out, "nopy-bin")  # an empty PATH
    os.makedirs(bindir, exist_ok=True)
    # One rank as an MPI singleton: Open MPI then only checks that its
    # launch agent exists (ssh is not in the empty PATH either).
    env = dict(os.environ, BALLAST_HTML=page, BALLAST_REPORT="none", PATH=bindir,
               TMPDIR=a.out, OMPI_MCA_plm_rsh_agent="/bin/false")
    check(shutil.which("python3", path=bindir) is None, "python3 absent from the PATH", bindir)
    p = subprocess.run([a.ring], capture_output=True, text=True, timeout=120, env=env)
    check(p.returncode == 0, "the run succeeds without python3", p.returncode, p.stderr[-2000:])
    check("cannot run python3" in p.stderr and "not in PATH" in p.stderr,
          "a clear warning names python3", p.stderr[-2000:])
    m = re.search(r"the profile is kept at (\S+);", p.stderr)
    if check(m, "the warning says where the profile is", p.stderr[-2000:]):
        kept = m.group(1)
        check(os.path.exists(kept), "the profile is kept", kept)
        q = subprocess.run([sys.executable, a.report, kept, "-o", page], capture_output=True,
                           text=True, timeout=60)
        check(q.returncode == 0 and os.path.exists(page), "the kept profile draws later",
              q.stderr)
        os.remove(kept)
    # bad inputs: an exit code and a message naming the problem
    bad = os.path.join(a.out, "bad.json")
    cases = [(os.path.join(a.out, "none.json"), "cannot read"),
             (bad, "not valid JSON"), (bad, "not a ballast profile"),
             (bad, "no integer \"rank\""), (bad, "no rank of the profile has data"),
             (bad, "unexpected content")]
    contents = [None, "{\"ballast_profile\": ", "{\"x\": 1}",
                '{"ballast_profile": {"ranks": 1, "ranks_data": [{"wall": 1}]}}',
                '{"ballast_profile": {"ranks": 1, "ranks_data": [{"rank": 0, "error": "out of memory"}]}}',
                '{"ballast_profile": {"ranks": 1, "ranks_data": [{"rank": 0, "wall": 1}], '
                '"lb_series": {"contexts": [{"steps": {"first": 5}}]}}}']
    for (path, msg), content in zip(cases, contents):
        if content is not None:
            with open(path, "w") as f:
                f.write(content)
        q = subprocess.run([sys.executable, a.report, path, "-o", page], capture_output=True,
                           text=True, timeout=60)
        check(q.returncode == 2 and msg in q.stderr, "refused: " + msg, q.returncode, q.stderr)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("check", choices=["md", "large", "nopython"])
    ap.add_argument("--report", required=True)
    ap.add_argument("--mpiexec")
    ap.add_argument("--md")
    ap.add_argument("--ring")
    ap.add_argument("--gen")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    {"md": check_md, "large": check_large, "nopython": check_nopython}[a.check](a)
    if FAILS:
        sys.exit("%d check(s) failed: %s" % (len(FAILS), "; ".join(FAILS)))
    print("report %s: all checks passed" % a.check)


if __name__ == "__main__":
    main()
