"""Fingerprints of repeated operations (runtime-variability, section 4.7):
the statistics, a box plot per rank, an ECDF, the time per repetition
coloured by label and histograms, each with and without the outliers; and
the comparison of two fingerprints with a rank test and per-quantile
confidence intervals. Used by ballast-report for the fingerprints
ballast-mibfi writes, for --compare, and for the repeated regions of a
profile. Inline SVG, standard library only.
"""
import html
import math
import random

LABEL_COLORS = {"F": "#9c755f", "W": "#edc948", "O": "#e15759", "G": "#4e79a7"}
LABEL_NAMES = {"F": "first", "W": "warm-up", "O": "outlier", "G": "good"}
QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99)
W, H, PAD = 460, 220, 44


def esc(s):
    return html.escape(str(s), quote=True)


def quantile(sorted_v, q):
    """Linear interpolation between closest ranks (numpy's default)."""
    if not sorted_v:
        return float("nan")
    pos = q * (len(sorted_v) - 1)
    lo = int(math.floor(pos))
    hi = min(lo + 1, len(sorted_v) - 1)
    return sorted_v[lo] + (sorted_v[hi] - sorted_v[lo]) * (pos - lo)


def stats(values):
    v = sorted(values)
    n = len(v)
    if not n:
        return {"n": 0}
    mean = sum(v) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in v) / (n - 1)) if n > 1 else 0.0
    out = {"n": n, "min": v[0], "max": v[-1], "mean": mean, "sd": sd}
    for q in QUANTILES:
        out["p%g" % (100 * q)] = quantile(v, q)
    return out


def us(x):
    return "%.2f" % (x * 1e6) if isinstance(x, float) and not math.isnan(x) else "-"


def stats_table(rows):
    """rows: [(title, stats)]: one column per title, times in microseconds."""
    keys = ["n", "min"] + ["p%g" % (100 * q) for q in QUANTILES] + ["max", "mean", "sd"]
    head = "".join("<th>%s</th>" % esc(t) for t, _ in rows)
    body = []
    for k in keys:
        cells = "".join("<td>%s</td>" % (s.get(k, "-") if k == "n" else us(s.get(k)))
                        for _, s in rows)
        body.append("<tr><th>%s</th>%s</tr>" % (esc(k if k == "n" else k + " (us)"), cells))
    return "<table class='fp'><tr><th></th>%s</tr>%s</table>" % (head, "".join(body))


def axis(lo, hi, x0, x1, y, ticks=4, fmt=us):
    out = []
    for i in range(ticks + 1):
        v = lo + (hi - lo) * i / ticks
        x = x0 + (x1 - x0) * i / ticks
        out.append("<text x='%.1f' y='%.1f' font-size='10' text-anchor='middle'>%s</text>"
                   % (x, y, fmt(v)))
    return "".join(out)


def svg(title, body, w=W, h=H):
    return ("<figure class='fp'><svg width='%d' height='%d' viewBox='0 0 %d %d' "
            "role='img'><title>%s</title>%s</svg><figcaption>%s</figcaption></figure>"
            % (w, h, w, h, esc(title), body, esc(title)))


def per_rep(times, labels, title, drop_outliers=False, holders=None, first=0):
    """holders: the rank each time is from (a profile's largest time over
    the ranks, labelled as that rank labelled it), named in each point;
    first: the repetition number of times[0]."""
    pts = [(i, t, l) for i, (t, l) in enumerate(zip(times, labels))
           if not (drop_outliers and l in "OF")]
    if not pts:
        return svg(title, "")
    hi = max(t for _, t, _ in pts) or 1e-9
    n = max(len(times) - 1, 1)
    body = ["<line x1='%d' y1='%d' x2='%d' y2='%d' stroke='#888'/>" % (PAD, H - 24, W - 8,
                                                                       H - 24)]
    for i, t, l in pts:
        x = PAD + (W - 8 - PAD) * i / n
        y = H - 24 - (H - 40) * t / hi
        body.append("<circle cx='%.1f' cy='%.1f' r='1.6' fill='%s'><title>rep %d: %s us%s "
                    "(%s)</title></circle>"
                    % (x, y, LABEL_COLORS.get(l, "#000"), first + i, us(t),
                       " on rank %d" % holders[i] if holders else "", LABEL_NAMES.get(l, l)))
    body.append("<text x='4' y='14' font-size='10'>%s us</text>" % us(hi))
    body.append(axis(first, first + n, PAD, W - 8, H - 8, fmt=lambda v: "%d" % v))
    return svg(title, "".join(body))


def histogram(values, title, bins=40):
    if not values:
        return svg(title, "")
    lo, hi = min(values), max(values)
    width = (hi - lo) / bins or 1e-12
    counts = [0] * bins
    for v in values:
        counts[min(int((v - lo) / width), bins - 1)] += 1
    top = max(counts)
    body = []
    bw = (W - 8 - PAD) / bins
    for i, c in enumerate(counts):
        h = (H - 40) * c / top
        body.append("<rect x='%.1f' y='%.1f' width='%.1f' height='%.1f' fill='#4e79a7'>"
                    "<title>%s-%s us: %d</title></rect>"
                    % (PAD + i * bw, H - 24 - h, max(bw - 1, 0.5), h, us(lo + i * width),
                       us(lo + (i + 1) * width), c))
    body.append(axis(lo, hi, PAD, W - 8, H - 8))
    body.append("<text x='4' y='14' font-size='10'>%d</text>" % top)
    return svg(title, "".join(body))


def ecdf(series, title):
    """series: [(name, color, values)]; the axis spans the 99th percentile
    (the curves reach 1 beyond it)."""
    vals = sorted(v for _, _, vs in series for v in vs)
    if not vals:
        return svg(title, "")
    lo, hi = vals[0], quantile(vals, 0.99)
    span = (hi - lo) or 1e-12
    body = []
    for k, (name, color, vs) in enumerate(series):
        v = sorted(vs)
        pts = " ".join("%.1f,%.1f" % (PAD + (W - 8 - PAD) * min(x - lo, span) / span,
                                      H - 24 - (H - 40) * (i + 1) / len(v))
                       for i, x in enumerate(v))
        body.append("<polyline points='%s' fill='none' stroke='%s' stroke-width='1.5'>"
                    "<title>%s</title></polyline>" % (pts, color, esc(name)))
        body.append("<text x='%d' y='%d' font-size='10' fill='%s'>%s</text>"
                    % (W - 150, 16 + 12 * k, color, esc(name)))
    body.append(axis(lo, hi, PAD, W - 8, H - 8))
    return svg(title, "".join(body))


def boxplots(ranks, title, names=None):
    """ranks: [values per rank]: box from p25 to p75, median, whiskers p5-p95;
    names: the rank of each row (default its index)."""
    qs = [(quantile(sorted(vs), 0.05), quantile(sorted(vs), 0.95)) for vs in ranks if vs]
    if not qs:
        return svg(title, "")
    lo, hi = min(a for a, _ in qs), max(b for _, b in qs)
    span = (hi - lo) or 1e-12
    row = max(8.0, min(24.0, (H - 30) / max(len(ranks), 1)))
    h = int(30 + row * len(ranks))
    body = []

    def X(v):
        return PAD + (W - 8 - PAD) * (v - lo) / span
    for r, vs in enumerate(ranks):
        s = sorted(vs)
        if not s:
            continue
        q = [quantile(s, p) for p in (0.05, 0.25, 0.5, 0.75, 0.95)]
        y = 8 + row * r
        body.append("<line x1='%.1f' x2='%.1f' y1='%.1f' y2='%.1f' stroke='#555'/>"
                    % (X(q[0]), X(q[4]), y + row / 2, y + row / 2))
        body.append("<rect x='%.1f' y='%.1f' width='%.1f' height='%.1f' fill='#a0cbe8' "
                    "stroke='#4e79a7'><title>rank %d: p5 %s, p25 %s, median %s, p75 %s, "
                    "p95 %s us</title></rect>"
                    % (X(q[1]), y + 1, max(X(q[3]) - X(q[1]), 1), row - 2,
                       names[r] if names else r, *[us(x) for x in q]))
        body.append("<line x1='%.1f' x2='%.1f' y1='%.1f' y2='%.1f' stroke='#000'/>"
                    % (X(q[2]), X(q[2]), y + 1, y + row - 1))
        body.append("<text x='2' y='%.1f' font-size='9'>%d</text>"
                    % (y + row / 2 + 3, names[r] if names else r))
    body.append(axis(lo, hi, PAD, W - 8, h - 6))
    return svg(title, "".join(body), h=h)


def case_section(name, times, labels, rank_times, holders=None, rank_names=None, first=0):
    """One fingerprint: the largest time of each repetition over the ranks
    (times, labels; holders: the rank each is from, when the labels are
    that rank's; first: the repetition number of times[0]) and each rank's
    own times (rank_names: their ranks)."""
    good = [t for t, l in zip(times, labels) if l == "G"]
    no_out = [t for t, l in zip(times, labels) if l not in "OF"]
    counts = {k: labels.count(k) for k in "FWOG"}
    parts = ["<h3>%s</h3>" % esc(name),
             "<p>%d repetitions: %s.</p>" % (len(times), ", ".join(
                 "%d %s" % (counts[k], LABEL_NAMES[k]) for k in "FWOG")),
             stats_table([("all", stats(times)), ("without first and outliers", stats(no_out)),
                          ("good", stats(good))]),
             "<div class='fpgrid'>",
             boxplots(rank_times, "time per rank (box p25-p75, whiskers p5-p95)", rank_names),
             ecdf([("all", "#4e79a7", times), ("without first, outliers", "#f28e2b", no_out)],
                  "ECDF of the time per repetition"),
             per_rep(times, labels, "time per repetition, coloured by label", holders=holders,
                     first=first),
             per_rep(times, labels, "time per repetition without the first and the outliers",
                     True, holders, first),
             histogram(times, "histogram, all repetitions"),
             histogram(no_out, "histogram without the first and the outliers"),
             "</div>"]
    return "".join(parts)


CSS = ("table.fp{border-collapse:collapse;font-size:12px;margin:6px 0}"
       "table.fp td,table.fp th{border:1px solid #ccc;padding:2px 6px;text-align:right}"
       "figure.fp{display:inline-block;margin:4px}figcaption{font-size:11px;color:#444}"
       ".fpgrid{display:flex;flex-wrap:wrap}"
       "p.warn{background:#fff3cd;border:1px solid #e0b000;padding:4px 8px}")


def setting_table(s):
    rows = []
    for k in ("operation", "algorithm", "ranks", "nodes", "ranks_per_node", "hosts", "sync",
              "reps", "mpi_library", "mpi_settings", "ballast_version", "ballast_settings",
              "date"):
        v = s.get(k)
        if isinstance(v, dict):
            v = ", ".join("%s=%s" % kv for kv in sorted(v.items())) or "(none)"
        elif isinstance(v, list):
            v = ", ".join(sorted(set(map(str, v))))
        rows.append("<tr><th>%s</th><td style='text-align:left'>%s</td></tr>"
                    % (esc(k), esc(v)))
    return "<table class='fp'>%s</table>" % "".join(rows)


def check(doc):
    fp = doc.get("ballast_fingerprint") if isinstance(doc, dict) else None
    if not isinstance(fp, dict) or not isinstance(fp.get("cases"), list) \
            or not isinstance(fp.get("setting"), dict):
        raise ValueError("not a ballast-mibfi fingerprint (no ballast_fingerprint with "
                         "setting and cases)")
    for c in fp["cases"]:
        m = c.get("max", {})
        if len(m.get("wtime", [])) != len(m.get("labels", "")):
            raise ValueError("case of %s bytes: times and labels differ in length"
                             % c.get("bytes"))
    return fp


def page(doc, title="fingerprint"):
    fp = check(doc)
    s = fp["setting"]
    out = ["<!DOCTYPE html><html><head><meta charset='utf-8'><title>%s</title><style>%s"
           "</style></head><body><h1>%s</h1>" % (esc(title), CSS, esc(title)),
           "<h2>Setting</h2>", setting_table(s)]
    for c in fp["cases"]:
        name = "%s, %s bytes" % (s.get("operation", "?"), c.get("bytes"))
        out.append(case_section(name, c["max"]["wtime"], c["max"]["labels"],
                                [r["wtime"] for r in c.get("ranks", [])]))
    out.append("<p>Times are the largest over the ranks of each repetition; labels by "
               "ballast's classifier (first, warm-up, outlier at 2x the running median, "
               "good).</p></body></html>")
    return "".join(out)


# ---- comparison ---------------------------------------------------------------

def mann_whitney(a, b):
    """Two-sided Mann-Whitney U test, normal approximation with ties
    corrected: (U of a, p-value). Both samples need a few values."""
    n1, n2 = len(a), len(b)
    both = sorted([(v, 0) for v in a] + [(v, 1) for v in b])
    ranks = [0.0] * len(both)
    i, ties = 0, 0.0
    while i < len(both):
        j = i
        while j + 1 < len(both) and both[j + 1][0] == both[i][0]:
            j += 1
        for k in range(i, j + 1):
            ranks[k] = (i + j) / 2 + 1
        t = j - i + 1
        ties += t ** 3 - t
        i = j + 1
    r1 = sum(r for r, (_, g) in zip(ranks, both) if g == 0)
    u1 = r1 - n1 * (n1 + 1) / 2
    n = n1 + n2
    mu = n1 * n2 / 2
    var = n1 * n2 / 12 * ((n + 1) - ties / (n * (n - 1)))
    if var <= 0:
        return u1, 1.0
    z = (abs(u1 - mu) - 0.5) / math.sqrt(var)
    return u1, math.erfc(max(z, 0) / math.sqrt(2))


def bootstrap_diff(a, b, q, rounds=400, seed=1):
    """95% interval of quantile q of b less that of a (percentile bootstrap)."""
    rng = random.Random(seed)
    d = []
    for _ in range(rounds):
        ra = sorted(rng.choice(a) for _ in a)
        rb = sorted(rng.choice(b) for _ in b)
        d.append(quantile(rb, q) - quantile(ra, q))
    d.sort()
    return quantile(d, 0.025), quantile(d, 0.975)


def compare_case(name_a, ca, name_b, cb):
    ga = [t for t, l in zip(ca["max"]["wtime"], ca["max"]["labels"]) if l == "G"]
    gb = [t for t, l in zip(cb["max"]["wtime"], cb["max"]["labels"]) if l == "G"]
    if len(ga) < 5 or len(gb) < 5:
        return "<p>Fewer than 5 good repetitions on one side: no comparison.</p>"
    sa, sb = sorted(ga), sorted(gb)
    rows = []
    for q in QUANTILES:
        qa, qb = quantile(sa, q), quantile(sb, q)
        lo, hi = bootstrap_diff(ga, gb, q)
        verdict = ("B slower" if lo > 0 else "B faster" if hi < 0 else "no difference")
        rows.append("<tr><th>p%g</th><td>%s</td><td>%s</td><td>%s</td><td>%s .. %s</td>"
                    "<td>%s</td></tr>" % (100 * q, us(qa), us(qb), us(qb - qa), us(lo), us(hi),
                                          verdict))
    u, p = mann_whitney(ga, gb)
    sig = "differ (p < 0.05)" if p < 0.05 else "do not differ significantly (p >= 0.05)"
    return ("<table class='fp'><tr><th>good reps</th><th>A (us)</th><th>B (us)</th>"
            "<th>B - A</th><th>95%% interval of B - A</th><th></th></tr>%s</table>"
            "<p>Mann-Whitney U test on the good repetitions (%d of A, %d of B): U = %.0f, "
            "p = %.3g: the two %s.</p>%s"
            % ("".join(rows), len(ga), len(gb), u, p, sig,
               ecdf([(name_a, "#4e79a7", ga), (name_b, "#e15759", gb)],
                    "ECDF of the good repetitions, A and B")))


def compare_warnings(fa, fb):
    """What makes two fingerprints measure different things: a different
    operation, rank count, node count or synchronisation, and sizes only one
    of them has. One sentence each; empty when they compare like with like."""
    sa, sb = fa["setting"], fb["setting"]
    warn = []
    for k, what in (("operation", "operation"), ("ranks", "number of ranks"),
                    ("nodes", "number of nodes"), ("sync", "synchronisation")):
        if sa.get(k) != sb.get(k):
            warn.append("different %s: A %s, B %s" % (what, sa.get(k), sb.get(k)))
    ba = {c.get("bytes") for c in fa["cases"]}
    bb = {c.get("bytes") for c in fb["cases"]}
    if not ba & bb:
        warn.append("no message size in common: nothing is compared")
    elif ba != bb:
        warn.append("sizes in one fingerprint only (not compared): %s" % ", ".join(
            str(x) for x in sorted(ba ^ bb, key=lambda v: (v is None, v or 0))))
    return warn


def compare_page(doc_a, doc_b, name_a="A", name_b="B", warn=None):
    """The comparison page of two fingerprints. \a warn, when a list, gets
    compare_warnings' sentences (also shown at the top of the page)."""
    fa, fb = check(doc_a), check(doc_b)
    w = compare_warnings(fa, fb)
    if warn is not None:
        warn.extend(w)
    out = ["<!DOCTYPE html><html><head><meta charset='utf-8'><title>fingerprints compared"
           "</title><style>%s</style></head><body><h1>%s against %s</h1>"
           % (CSS, esc(name_a), esc(name_b)),
           "".join("<p class='warn'><b>Warning:</b> %s</p>" % esc(x) for x in w),
           "<div class='fpgrid'><div><h2>A: %s</h2>%s</div><div><h2>B: %s</h2>%s</div></div>"
           % (esc(name_a), setting_table(fa["setting"]), esc(name_b),
              setting_table(fb["setting"]))]
    by_b = {c.get("bytes"): c for c in fb["cases"]}
    for ca in fa["cases"]:
        cb = by_b.get(ca.get("bytes"))
        if cb is None:
            continue
        out.append("<h2>%s bytes</h2>" % esc(ca.get("bytes")))
        out.append(compare_case(name_a, ca, name_b, cb))
        out.append("<div class='fpgrid'><div>%s</div><div>%s</div></div>" % (
            case_section("A: " + name_a, ca["max"]["wtime"], ca["max"]["labels"],
                         [r["wtime"] for r in ca.get("ranks", [])]),
            case_section("B: " + name_b, cb["max"]["wtime"], cb["max"]["labels"],
                         [r["wtime"] for r in cb.get("ranks", [])])))
    out.append("</body></html>")
    return "".join(out)


# ---- the repeated regions of a profile ---------------------------------------------

def largest_series(by_rank):
    """The largest time of each repetition every rank kept, labelled as the
    rank that holds it labelled it: (first repetition, times, labels,
    holders, each rank's kept times, their ranks), or None when the ranks
    kept no repetition in common. A label a rank did not write is "?"."""
    order = sorted(by_rank)
    reps = [by_rank[q] for q in order]
    first = max(r.get("first_kept", 0) for r in reps)
    last = min(r.get("first_kept", 0) + len(r.get("wtime", [])) for r in reps)
    if last <= first:
        return None
    cols, labs = [], []
    for r in reps:
        lo = first - r.get("first_kept", 0)
        cols.append(r["wtime"][lo:lo + last - first])
        lab = str(r.get("labels", ""))[lo:lo + last - first]
        labs.append(lab + "?" * (last - first - len(lab)))
    times, labels, holders = [], [], []
    for i in range(last - first):
        c = max(range(len(cols)), key=lambda k: cols[k][i])  # the lowest rank on a tie
        times.append(cols[c][i])
        labels.append(labs[c][i])
        holders.append(order[c])
    return first, times, "".join(labels), holders, cols, order


def rank_table(by_rank):
    """Each rank's own classification: what its classifier counted over all
    its repetitions (kept or not) and its good statistics."""
    rows = []
    for q in sorted(by_rank):
        r = by_rank[q]
        rows.append("<tr><th>%d</th><td>%s</td><td>%s</td><td>%s</td>%s</tr>" % (
            q, esc(r.get("count", "-")), esc(r.get("good", "-")), esc(r.get("outliers", "-")),
            "".join("<td>%s</td>" % us(r.get(k)) for k in
                    ("good_min", "good_median", "good_max"))))
    return ("<table class='fp'><tr><th>rank</th><th>repetitions</th><th>good</th>"
            "<th>outliers</th><th>good min (us)</th><th>good median (us)</th>"
            "<th>good max (us)</th></tr>%s</table>" % "".join(rows))


def profile_section(doc):
    """HTML of the repeated regions of a profile (its ranks' "repeated"
    members), or "" when it has none: per region, the largest time of each
    repetition kept by every rank, labelled as the rank that holds it
    labelled it (so the good column holds only times their own rank called
    good), and each rank's own classification."""
    per = {}
    for i, rd in enumerate(doc.get("ranks_data") or []):
        if not isinstance(rd, dict):
            continue
        rank = rd.get("rank", i)
        names = {r.get("id"): r.get("name") for r in rd.get("regions", [])}
        for rep in rd.get("repeated") or []:
            per.setdefault(names.get(rep.get("id"), "?"), {})[rank] = rep
    if not per:
        return ""
    out = ["<section><h2>Repeated regions: fingerprints</h2><style>%s</style>" % CSS,
           "<p>Times are the largest over the ranks of each repetition, each labelled as "
           "the rank that holds it labelled it (its own classifier: first, warm-up, outlier "
           "at 2x its running median, good), so the good column holds only times their "
           "rank called good; each rank's own counts and good statistics below the "
           "pictures.</p>"]
    for name, by_rank in sorted(per.items()):
        got = largest_series(by_rank)
        if got is None:
            continue
        first, times, labels, holders, cols, order = got
        out.append(case_section("%s (repetitions %d-%d)" % (name, first,
                                                            first + len(times) - 1),
                                times, labels, cols, holders, order, first))
        out.append(rank_table(by_rank))
        r0 = order[0]
        causes = [m for m in by_rank[r0].get("causes", {}).get("measures", [])
                  if m.get("differs")]
        if causes:
            out.append("<p>On rank %d the outliers differ from the good repetitions in: %s."
                       "</p>" % (r0, esc("; ".join(
                           "%s %.4g against %.4g" % (m["name"], m["outliers"], m["good"])
                           for m in causes))))
    out.append("</section>")
    return "".join(out)


def mpit_section(doc):
    """HTML table of the MPI_T variables per region (profile member "mpit"
    and each rank's "mpit"): the sum over ranks of each variable's change
    and the largest value any rank read at a boundary; "" without any."""
    names = [v.get("name") for v in doc.get("mpit") or []]
    if not names:
        return ""
    rows = {}
    for rd in doc.get("ranks_data") or []:
        regions = {str(r.get("id")): r.get("name") for r in rd.get("regions", [])}
        for rid, vals in (rd.get("mpit") or {}).items():
            key = regions.get(rid, rid)
            acc = rows.setdefault(key, [[0.0, 0.0] for _ in names])
            for i, (delta, largest) in enumerate(vals[:len(names)]):
                acc[i][0] += delta
                acc[i][1] = max(acc[i][1], largest)
    head = "".join("<th>%s<br>change / largest</th>" % esc(n) for n in names)
    body = "".join("<tr><th>%s</th>%s</tr>" % (esc(k), "".join(
        "<td>%.6g / %.6g</td>" % (d, m) for d, m in v)) for k, v in sorted(rows.items())
        if any(d or m for d, m in v))
    return ("<h2>MPI_T variables per region</h2><p>Read at every region boundary "
            "(BALLAST_MPIT): the change summed over the instances and the ranks, and the "
            "largest value any rank read.</p><table class='fp'><tr><th>region</th>%s</tr>%s"
            "</table>" % (head, body or "<tr><td>no region saw a change</td></tr>"))
