"""A Cube4 (.cubex) reader for the tests, written from the format alone
(CubeLib's reader as the reference), independent of ballast's writer.

read(path) returns a dict:
  metrics:   [{id, uniq, disp, dtype, uom, type, parent}] in file order
  regions:   {id: {name, paradigm}}
  cnodes:    [{id, callee, parent, children}] by id; "root" the root id
  locations: [{id, rank, name}] in location-id order (the data's columns)
  values:    {metric uniq: {cnode id: [value per location]}}
and raises CubeError naming the first thing that is not as the format says.

The facts checked: a POSIX ustar archive (magic "ustar\\0", version "00",
header checksums); anchor.xml begins with the XML declaration
<?xml version="1.0" encoding="UTF-8"?> and <cube version="4.x"> (4.0-4.4);
every metric has N.index = "CUBEX.INDEX", uint32 1 (endianness probe),
uint16 version 0, uint8 format 3 (dense), nothing more; N.data =
"CUBEX.DATA" then (cnodes x locations) values, one row per cnode. Rows of
an EXCLUSIVE metric follow the call tree depth first; rows of an INCLUSIVE
metric the root, then all children of a node, then each child's subtree
the same way.
"""
import struct
import tarfile
import xml.etree.ElementTree as ET

DTYPES = {"UINT64": "Q", "INT64": "q", "DOUBLE": "d", "MINDOUBLE": "d", "MAXDOUBLE": "d"}
DECL = b'<?xml version="1.0" encoding="UTF-8"?>'


class CubeError(Exception):
    pass


def need(cond, what):
    if not cond:
        raise CubeError(what)


def check_ustar(raw):
    """Walks the archive's 512-byte headers by hand: magic, version, checksum."""
    off, names = 0, []
    while off + 512 <= len(raw):
        h = raw[off:off + 512]
        if h == b"\0" * 512:
            need(raw[off + 512:off + 1024] == b"\0" * 512, "one zero block, not two, at the end")
            return names
        need(h[257:263] == b"ustar\0" and h[263:265] == b"00",
             "member at %d is not POSIX ustar: %r" % (off, h[257:265]))
        stored = int(h[148:156].split(b"\0")[0].strip() or b"0", 8)
        calc = sum(h[:148]) + 32 * 8 + sum(h[156:])
        need(stored == calc, "header checksum at %d: %d != %d" % (off, stored, calc))
        if h[124] & 0x80:
            size = int.from_bytes(h[125:136], "big")
        else:
            size = int(h[124:136].split(b"\0")[0] or b"0", 8)
        names.append(h[:100].split(b"\0")[0].decode())
        off += 512 + (size + 511) // 512 * 512
    raise CubeError("archive ends without its two zero blocks")


def parse_metrics(root):
    out = []

    def walk(el, parent):
        for m in el.findall("metric"):
            d = {"id": int(m.get("id")), "type": m.get("type"), "parent": parent}
            for tag in ("disp_name", "uniq_name", "dtype", "uom"):
                need(m.find(tag) is not None, "metric %s has no <%s>" % (d["id"], tag))
                d[tag] = m.find(tag).text or ""
            d["uniq"] = d["uniq_name"]
            need(d["type"] in ("EXCLUSIVE", "INCLUSIVE"), "metric type %r" % d["type"])
            out.append(d)
            walk(m, d["id"])

    need(root.find("metrics") is not None, "no <metrics>")
    walk(root.find("metrics"), None)
    return out


def parse_program(root):
    prog = root.find("program")
    need(prog is not None, "no <program>")
    regions = {}
    for r in prog.findall("region"):
        par = r.find("paradigm")
        regions[int(r.get("id"))] = {"name": r.find("name").text or "",
                                     "paradigm": par.text if par is not None else ""}
    cnodes, roots = {}, []

    def walk(el, parent):
        for c in el.findall("cnode"):
            cid = int(c.get("id"))
            need(cid not in cnodes, "cnode id %d twice" % cid)
            callee = int(c.get("calleeId"))
            need(callee in regions, "cnode %d calls unknown region %d" % (cid, callee))
            cnodes[cid] = {"id": cid, "callee": callee, "parent": parent, "children": []}
            if parent is None:
                roots.append(cid)
            else:
                cnodes[parent]["children"].append(cid)
            walk(c, cid)

    walk(prog, None)
    need(len(roots) == 1, "%d roots in the call tree" % len(roots))
    return regions, cnodes, roots[0]


def parse_system(root):
    sysel = root.find("system")
    need(sysel is not None, "no <system>")
    locs = []
    for stn in sysel.iter("systemtreenode"):
        for lg in stn.findall("locationgroup"):
            need(lg.find("type").text == "process", "location group type")
            for loc in lg.findall("location"):
                need(loc.find("type").text == "thread", "location type")
                # Score-P writes "Id" in the system tree
                locs.append({"id": int(loc.get("Id", loc.get("id"))), "rank": int(lg.find("rank").text),
                             "group": lg.find("name").text, "name": loc.find("name").text,
                             "node": stn.find("name").text})
    locs.sort(key=lambda l: l["id"])
    need([l["id"] for l in locs] == list(range(len(locs))), "location ids not 0..L-1")
    return locs


def depth_first(cnodes, root):
    out, stack = [], [root]
    while stack:
        c = stack.pop()
        out.append(c)
        stack.extend(reversed(cnodes[c]["children"]))
    return out


def wide(cnodes, root):
    """The root, then all children of a node, then each child likewise."""
    out = [root]

    def visit(c):
        out.extend(cnodes[c]["children"])
        for k in cnodes[c]["children"]:
            visit(k)

    visit(root)
    return out


def read(path):
    with open(path, "rb") as f:
        raw = f.read()
    names = check_ustar(raw)
    tf = tarfile.open(path, "r:")
    members = {m.name: tf.extractfile(m).read() for m in tf.getmembers()}
    need(sorted(names) == sorted(members), "tarfile and the headers disagree")
    need("anchor.xml" in members, "no anchor.xml")
    anchor = members["anchor.xml"]
    need(anchor.startswith(DECL), "anchor.xml does not begin with the XML declaration")
    rest = anchor[len(DECL):].lstrip()
    need(rest[:18] in (b'<cube version="4.0', b'<cube version="4.1', b'<cube version="4.2',
                       b'<cube version="4.3', b'<cube version="4.4'),
         "cube version: %r" % rest[:24])
    root = ET.fromstring(anchor)
    metrics = parse_metrics(root)
    regions, cnodes, croot = parse_program(root)
    locs = parse_system(root)
    n, nloc = len(cnodes), len(locs)
    orders = {"EXCLUSIVE": depth_first(cnodes, croot), "INCLUSIVE": wide(cnodes, croot)}
    values = {}
    for m in metrics:
        idx = members.get("%d.index" % m["id"])
        data = members.get("%d.data" % m["id"])
        need(idx is not None and data is not None, "metric %d has no index or data" % m["id"])
        need(idx[:11] == b"CUBEX.INDEX", "index marker of metric %d" % m["id"])
        need(len(idx) == 18, "dense index of metric %d is %d bytes" % (m["id"], len(idx)))
        probe, ver, fmt = struct.unpack("<IHB", idx[11:18])
        need(probe == 1 and ver == 0 and fmt == 3,
             "index of metric %d: probe %d version %d format %d" % (m["id"], probe, ver, fmt))
        need(data[:10] == b"CUBEX.DATA", "data marker of metric %d" % m["id"])
        code = DTYPES.get(m["dtype"])
        need(code is not None, "dtype %r" % m["dtype"])
        need(len(data) == 10 + 8 * n * nloc,
             "metric %d data: %d bytes for %d cnodes x %d locations" % (m["id"], len(data),
                                                                      n, nloc))
        flat = struct.unpack("<%d%s" % (n * nloc, code), data[10:])
        rows = {}
        for row, c in enumerate(orders[m["type"]]):
            rows[c] = list(flat[row * nloc:(row + 1) * nloc])
        values[m["uniq"]] = rows
    return {"metrics": metrics, "regions": regions, "cnodes": cnodes, "root": croot,
            "locations": locs, "values": values, "orders": orders}
