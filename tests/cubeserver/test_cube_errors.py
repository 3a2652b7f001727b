#!/usr/bin/env python3
"""ballast-cube refuses every malformed or unsupported archive with one
message naming the problem and exit status 1 (never a signal), on one and on
two ranks; then runs the in-process mutation fuzz of the reader.

Usage: test_cube_errors.py MPIEXEC BALLAST_CUBE CUBE_FUZZ
"""
import io
import os
import struct
import subprocess
import sys
import tarfile
import tempfile
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cubegen  # noqa: E402


def valid(path, **kw):
    t = cubegen.make_tree("binary", 7)
    locs = [(k, k, 0, "t%d" % k) for k in range(2)]
    m = [dict(id=0, uniq="time", type=kw.get("type", "EXCLUSIVE"), dtype=kw.get("dtype", "DOUBLE"),
              row=lambda x: struct.pack("<2d", x, x + 0.5))]
    cubegen.write_cubex(path, t, list(range(t.n)), locs, m, version=kw.get("version", "4.4"))


def rewrite(src, dst, edit):
    """Copies the archive's members through edit(name, bytes) -> bytes or
    None (dropped)."""
    with tarfile.open(src) as ti, tarfile.open(dst, "w", format=tarfile.USTAR_FORMAT) as to:
        for m in ti.getmembers():
            data = edit(m.name, ti.extractfile(m).read())
            if data is None:
                continue
            info = tarfile.TarInfo(m.name)
            info.size = len(data)
            to.addfile(info, io.BytesIO(data))


def anchor_edit(old, new):
    return lambda n, d: d.replace(old, new, 1) if n == "anchor.xml" else d


def cases(d):
    base = os.path.join(d, "base.cubex")
    valid(base)
    raw = open(base, "rb").read()
    out = []

    def add(name, expect, data=None, edit=None, **kw):
        p = os.path.join(d, name + ".cubex")
        if kw:
            valid(p, **kw)
        elif edit:
            rewrite(base, p, edit)
        else:
            open(p, "wb").write(data)
        out.append((name, p, expect))

    add("version", "version '5.0' is not supported", version="5.0")
    add("histogram", "data type 'HISTOGRAM'", dtype="HISTOGRAM")
    add("metric_type", "unknown type 'WEIRD'", type="WEIRD")
    add("empty", "empty archive", data=b"\0" * 1024)
    add("not_tar", "bad header checksum", data=b"hello, this is not an archive" * 40)
    with tarfile.open(base) as tf:
        cut = tf.getmember("0.data").offset_data + 20
    add("truncated_data", "member '0.data' of 122 bytes runs past the end", data=raw[:cut])
    add("cut_header", "truncated archive", data=raw[:700])
    bad = bytearray(raw)
    bad[3] ^= 0x20  # a letter of the first member's name: the checksum fails
    add("checksum", "bad header checksum", data=bytes(bad))
    add("no_anchor", "no anchor.xml", edit=lambda n, dd: None if n == "anchor.xml" else dd)
    add("no_data", "0.index without 0.data", edit=lambda n, dd: None if n == "0.data" else dd)
    add("index_marker", "does not begin with CUBEX.INDEX",
        edit=lambda n, dd: b"CUBEX.INDIX" + dd[11:] if n == "0.index" else dd)
    add("index_format", "index format 2 is not supported",
        edit=lambda n, dd: dd[:17] + b"\x02" if n == "0.index" else dd)
    add("endian", "bad endianness mark",
        edit=lambda n, dd: dd[:11] + struct.pack("<I", 7) + dd[15:] if n == "0.index" else dd)
    add("data_marker", "does not begin with CUBEX.DATA",
        edit=lambda n, dd: b"XUBEX.DATA" + dd[10:] if n == "0.data" else dd)
    add("data_size", "holds 130 bytes, expected 122",
        edit=lambda n, dd: dd + b"\0" * 8 if n == "0.data" else dd)
    add("xml_syntax", "anchor.xml line", edit=anchor_edit(b"</metrics>", b"</metricz>"))
    add("xml_entity", "unknown entity", edit=anchor_edit(b"<name>main", b"<name>&bogus;main"))
    add("callee", "which is not defined", edit=anchor_edit(b'calleeId="3"', b'calleeId="99"'))
    add("loc_dup", "location id 0 used twice", edit=anchor_edit(b'<location id="1"',
                                                                  b'<location id="0"'))
    add("no_cnodes", "no call paths", edit=lambda n, dd: dd.replace(b"<cnode", b"<cnodx")
        .replace(b"</cnode>", b"</cnodx>") if n == "anchor.xml" else dd)
    out.append(("missing", os.path.join(d, "nonexistent.cubex"), "No such file"))
    out.append(("directory", d, "not a regular file"))
    return out


def big_endian(mpiexec, tool, d):
    """An archive written on a big-endian machine (endianness mark
    00 00 00 01, values big-endian) reads the same values."""
    t = cubegen.make_tree("binary", 7)
    m = [dict(id=0, uniq="time", type="INCLUSIVE", dtype="DOUBLE",
              row=lambda x: struct.pack(">2d", x + 0.25, -x)),
         dict(id=1, uniq="visits", type="EXCLUSIVE", dtype="INT64",
              row=lambda x: struct.pack(">2q", -x, 1 << 40))]
    src, path = os.path.join(d, "be0.cubex"), os.path.join(d, "be.cubex")
    cubegen.write_cubex(src, t, list(range(t.n)), [(k, k, 0, "t") for k in range(2)], m)
    rewrite(src, path, lambda n, dd: dd[:11] + struct.pack(">IHB", 1, 0, 3)
            if n.endswith(".index") else dd)
    x = 2  # main/f1/f3 in document order
    r = subprocess.run([mpiexec, "-n", "1", tool, "-e", "locs time %s" % t.path(x), "-e",
                        "locs visits %s excl" % t.path(x), path],
                       capture_output=True, text=True, timeout=60)
    have = [l for l in r.stdout.splitlines() if l.startswith("loc ")]
    want = ["loc 0 %r" % (x + 0.25), "loc 1 %r" % float(-x), "loc 0 %r" % float(-x),
            "loc 1 %r" % float(1 << 40)]
    ok = r.returncode == 0 and [[float(v) for v in h.split()[1:]] for h in have] == \
        [[float(v) for v in w.split()[1:]] for w in want]
    print("big-endian archive: %s %r" % ("ok" if ok else "WRONG", have))
    return 0 if ok else 1


def refuse(mpiexec, tool, np_, path):
    # Every rank ends with status 1 after MPI_Finalize, and mpiexec then
    # "aborts" the job: SIGCONT to the ranks still there, a sleep of this
    # many seconds, SIGTERM, a sleep, SIGKILL. Rank 0 wrote its one line
    # (stderr) before MPI_Finalize: no need to wait (Open MPI's default is 1).
    env = dict(os.environ, OMPI_MCA_odls_base_sigkill_timeout="0")
    return subprocess.run([mpiexec, "-n", str(np_), "--oversubscribe", tool, "-e", "mem", path],
                          capture_output=True, text=True, timeout=60, env=env)


def main(argv):
    mpiexec, tool, fuzz = argv[1:4]
    failures = 0
    with tempfile.TemporaryDirectory() as d:
        failures += big_endian(mpiexec, tool, d)
        # The runs are independent and mostly mpiexec starting and ending
        # ranks (waiting, not computing): 4 at a time, checked in order.
        todo = [(name, path, expect, 2 if i % 4 == 0 else 1)
                for i, (name, path, expect) in enumerate(cases(d))]
        with ThreadPoolExecutor(4) as ex:
            runs = list(ex.map(lambda c: refuse(mpiexec, tool, c[3], c[1]), todo))
        for (name, path, expect, np_), r in zip(todo, runs):
            lines = [l for l in r.stderr.splitlines() if l.startswith("ballast-cube:")]
            ok = (r.returncode == 1 and len(lines) == 1 and expect in lines[0]
                  and "signal" not in r.stderr.lower() and "mem rank" not in r.stdout)
            print("%-15s np=%d exit %d: %s" % (name, np_, r.returncode,
                                                lines[0] if lines else r.stderr.strip()[:200]))
            if not ok:
                print("  FAILED: expected one line with %r" % expect)
                failures += 1
        base = os.path.join(d, "fuzz.cubex")
        t = cubegen.make_tree("random", 30, seed=3)
        m = [dict(id=0, uniq="v", type="EXCLUSIVE", dtype="UINT64",
                  row=lambda x: struct.pack("<3Q", x, 2 * x, 3 * x)),
             dict(id=1, uniq="t", type="INCLUSIVE", dtype="DOUBLE",
                  row=lambda x: struct.pack("<3d", x, 1, 2)),
             dict(id=2, uniq="s", type="EXCLUSIVE", dtype="MAXDOUBLE", present={1, 4, 9},
                  row=lambda x: struct.pack("<3d", x, 1, 2))]
        cubegen.write_cubex(base, t, list(range(t.n)), [(k, k, 0, "t") for k in range(3)], m)
        r = subprocess.run([fuzz, base, "3000", "31", "40", os.path.join(d, "mut.cubex")],
                           capture_output=True, text=True, timeout=240)
        print(r.stdout.strip(), r.stderr.strip())
        if r.returncode != 0 or "PASS" not in r.stdout:
            print("cube_fuzz FAILED (exit %d)" % r.returncode)
            failures += 1
    print("PASS" if failures == 0 else "FAIL (%d)" % failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
