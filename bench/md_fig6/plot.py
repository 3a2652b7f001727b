#!/usr/bin/env python3
"""Draws the figure-6 analogue from run.py's traces: time per step over the
run, one line per strategy, one panel per scenario (uniform, droplet,
cluster), as a PNG written with zlib and struct only (no matplotlib here).

For each scenario and strategy it plots the repetition whose median time per
step is the median of the repetitions, smoothed by a running median over 5
steps. Colours: block black, random orange, round-robin blue, ballast green
(the steps after which ballast remapped and moved blocks are marked by green
ticks at the top). The y axis of each
panel starts at 0 (ms, labelled every 20 or 50 ms); its top (printed by the
script) is 1.1 x the largest plotted value; grey grid lines every 10 ms,
vertical ones every 50 steps (labelled with the step).

usage: plot.py [--out bench/md_fig6/out] [--png bench/md_fig6/fig6.png]
"""
import argparse
import json
import os
import statistics
import struct
import zlib

COL = {"block": (0, 0, 0), "random": (230, 130, 0), "roundrobin": (30, 90, 220),
       "ballast": (0, 160, 60)}
SCEN = ["uniform", "droplet", "cluster"]
W, H, PAD = 420, 300, 30


# 3x5 digits, rows top to bottom, bit 2 = left column
FONT = {"0": [7, 5, 5, 5, 7], "1": [2, 6, 2, 2, 7], "2": [7, 1, 7, 4, 7], "3": [7, 1, 7, 1, 7],
        "4": [5, 5, 7, 1, 1], "5": [7, 4, 7, 1, 7], "6": [7, 4, 7, 5, 7], "7": [7, 1, 1, 1, 1],
        "8": [7, 5, 7, 5, 7], "9": [7, 5, 7, 1, 7]}


def png(path, w, h, px):
    raw = b"".join(b"\x00" + bytes(px[y * w * 3:(y + 1) * w * 3]) for y in range(h))

    def chunk(t, d):
        c = struct.pack(">I", len(d)) + t + d
        return c + struct.pack(">I", zlib.crc32(t + d) & 0xFFFFFFFF)
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def read_trace(path):
    v = []
    for l in open(path):
        if not l.startswith("#"):
            v.append(float(l.split()[1]))
    return v


def smooth(v, k=5):
    return [statistics.median(v[max(0, i - k // 2):i + k // 2 + 1]) for i in range(len(v))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "out"))
    ap.add_argument("--png", default=os.path.join(os.path.dirname(__file__), "fig6.png"))
    a = ap.parse_args()
    runs = [json.loads(l) for l in open(os.path.join(a.out, "runs.jsonl"))]
    tw, th = W * len(SCEN), H
    px = bytearray(b"\xff" * (tw * th * 3))

    def put(x, y, c):
        if 0 <= x < tw and 0 <= y < th:
            i = (y * tw + x) * 3
            px[i:i + 3] = bytes(c)

    def text(x, y, t, c=(90, 90, 90), k=2):
        """Digits at (x, y) (top left), k x k pixels per font pixel."""
        for ch in t:
            for r, bits in enumerate(FONT.get(ch, [0] * 5)):
                for col in range(3):
                    if bits & (4 >> col):
                        for dy in range(k):
                            for dx in range(k):
                                put(x + col * k + dx, y + r * k + dy, c)
            x += 4 * k

    def line(x0, y0, x1, y1, c):
        n = max(abs(x1 - x0), abs(y1 - y0), 1)
        for i in range(n + 1):
            x = round(x0 + (x1 - x0) * i / n)
            y = round(y0 + (y1 - y0) * i / n)
            put(x, y, c)
            put(x, y + 1, c)

    remaps = {}
    for p, sc in enumerate(SCEN):
        ox = p * W
        series = {}
        for st in COL:
            rows = [r for r in runs if r["scenario"] == sc and r["variant"] == st]
            if not rows:
                continue
            rows.sort(key=lambda r: r["time_per_step"])
            series[st] = smooth(read_trace(rows[len(rows) // 2]["trace"]))
            if st == "ballast":
                remaps[sc] = [i for i, l in enumerate(x for x in open(rows[len(rows) // 2]["trace"])
                                                      if not x.startswith("#"))
                              if len(l.split()) > 5 and l.split()[5] == "1"]
        if not series:
            continue
        n = max(len(v) for v in series.values())
        top = 1.1 * max(max(v) for v in series.values())
        x0, x1, y0, y1 = ox + PAD, ox + W - 10, H - PAD, 10

        def X(i):
            return round(x0 + (x1 - x0) * i / max(n - 1, 1))

        def Y(t):
            return round(y0 - (y0 - y1) * t / top)
        for ms in range(10, int(top * 1e3) + 1, 10):
            line(x0, Y(ms / 1e3), x1, Y(ms / 1e3), (225, 225, 225))
            if ms % (20 if top < 0.15 else 50) == 0:
                text(ox + 2, Y(ms / 1e3) - 5, str(ms))
        for s in range(50, n, 50):
            line(X(s), y0, X(s), y1, (225, 225, 225))
            text(X(s) - 4 * len(str(s)), y0 + 6, str(s))
        line(x0, y0, x1, y0, (0, 0, 0))
        line(x0, y0, x0, y1, (0, 0, 0))
        for st, v in series.items():
            for i in range(1, len(v)):
                line(X(i - 1), Y(v[i - 1]), X(i), Y(v[i]), COL[st])
        for i in remaps.get(sc, []):
            line(X(i), y1, X(i), y1 + 10, COL["ballast"])
        print("%s: y axis 0 .. %.1f ms, %d steps" % (sc, 1e3 * top, n))
    png(a.png, tw, th, px)
    print("wrote", a.png)


if __name__ == "__main__":
    main()
