#!/usr/bin/python3
"""Reads an OTF2 archive with Debian's OTF2 reader (python3-otf2, the
`otf2` module of the system python) and checks what a reader relies on.

Usage: check_otf2.py ARCHIVE/traces.otf2 [--summary OUT.json]

Fails (exit 1, one line per problem, at most 20) when:
- on a location, a time goes back (OTF2 wants each location's events in
  time order);
- on a location, a Leave leaves another region than the innermost one
  entered (checked with a stack, name by name), or a region is left open
  at the end;
- the region of a task ("<key>", entered while a "task <key>" is open) is
  entered while another region is the innermost: a task's slice encloses
  its region;
- the messages do not pair up: the multiset of (sender, receiver,
  communicator, tag, bytes) over MpiSend records (ranks as world ranks,
  from the communicator's group) differs from that over MpiRecv records.
With --summary, writes per rank (location group "rank R", all its
threads): sends, recvs, the tags seen, collectives per communicator
(by its name and size), enters per region name; and the communicators
defined (name -> members as world ranks).
Exit 77 when the otf2 module cannot be imported (python3-otf2 missing).
"""
import collections
import json
import sys

try:
    import otf2
except ImportError as e:  # pragma: no cover
    print("check_otf2: cannot import otf2 (%s): install python3-otf2 (scripts/setup.sh) "
          "and run with /usr/bin/python3" % e)
    sys.exit(77)


def rank_of(location):
    """The world rank of a location: its group is "rank R"."""
    return int(location.group.name.split()[1])


def comm_members(comm):
    """World ranks of a communicator's members, in rank order."""
    return [rank_of(m) for m in comm.group.members]


def check(path):
    problems = []
    summary = collections.defaultdict(lambda: {"sends": 0, "recvs": 0, "tags": set(),
                                               "collectives": collections.Counter(),
                                               "enters": collections.Counter()})
    sends, recvs = collections.Counter(), collections.Counter()
    stacks = collections.defaultdict(list)
    last = {}
    members = {}
    with otf2.reader.open(path) as tr:
        comms = {c.name: comm_members(c) for c in tr.definitions.comms}
        for loc, ev in tr.events:
            r = rank_of(loc)
            t = ev.time
            if loc in last and t < last[loc]:
                problems.append("%s: %s at %d before the previous event at %d"
                                % (loc.name, type(ev).__name__, t, last[loc]))
            last[loc] = t
            st = stacks[loc]
            s = summary[r]
            if isinstance(ev, otf2.events.Enter):
                name = ev.region.name
                if st and any(o == "task " + name for o in st) and st[-1] != "task " + name:
                    problems.append("%s: region %r entered inside %r, not directly inside its "
                                    "task" % (loc.name, name, st[-1]))
                st.append(name)
                s["enters"][name] += 1
            elif isinstance(ev, otf2.events.Leave):
                name = ev.region.name
                if not st:
                    problems.append("%s: Leave %r with nothing entered" % (loc.name, name))
                elif st[-1] != name:
                    problems.append("%s: Leave %r while %r is the innermost region entered"
                                    % (loc.name, name, st[-1]))
                    st.pop()
                else:
                    st.pop()
            elif isinstance(ev, otf2.events.MpiSend):
                m = comm_members(ev.communicator)
                key = (r, m[ev.receiver], ev.communicator.name, ev.msg_tag, ev.msg_length)
                sends[key] += 1
                s["sends"] += 1
                s["tags"].add(ev.msg_tag)
            elif isinstance(ev, otf2.events.MpiRecv):
                m = comm_members(ev.communicator)
                key = (m[ev.sender], r, ev.communicator.name, ev.msg_tag, ev.msg_length)
                recvs[key] += 1
                s["recvs"] += 1
                s["tags"].add(ev.msg_tag)
            elif isinstance(ev, otf2.events.MpiCollectiveEnd):
                c = ev.communicator
                s["collectives"]["%s/%d" % (c.name, len(c.group.members))] += 1
            if len(problems) >= 20:
                break
        members = comms
    for loc, st in stacks.items():
        if st:
            problems.append("%s: %d region(s) never left (innermost %r)" % (loc.name, len(st),
                                                                           st[-1]))
    if sends != recvs:
        only_s = sends - recvs
        only_r = recvs - sends
        problems.append("messages do not pair up: %d send(s) without their receive (e.g. %s), "
                        "%d receive(s) without their send (e.g. %s)"
                        % (sum(only_s.values()), list(only_s)[:2], sum(only_r.values()),
                           list(only_r)[:2]))
    out = {"ranks": {str(r): {"sends": v["sends"], "recvs": v["recvs"],
                              "tags": sorted(v["tags"]), "collectives": dict(v["collectives"]),
                              "enters": dict(v["enters"])}
                     for r, v in sorted(summary.items())},
           "comms": members, "messages_paired": sends == recvs,
           "messages": sum(sends.values())}
    return problems, out


def main(argv):
    args = argv[1:]
    out_path = None
    if "--summary" in args:
        i = args.index("--summary")
        out_path = args[i + 1]
        del args[i:i + 2]
    if len(args) != 1:
        print(__doc__)
        return 2
    problems, out = check(args[0])
    if out_path:
        with open(out_path, "w") as f:
            json.dump(out, f, indent=1, sort_keys=True)
    for p in problems[:20]:
        print("%s: %s" % (args[0], p))
    if problems:
        return 1
    print("%s: nested, %d messages paired, %d communicators" % (args[0], out["messages"],
                                                                  len(out["comms"])))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
