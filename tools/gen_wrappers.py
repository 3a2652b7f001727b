#!/usr/bin/env python3
"""Generate mon's PMPI wrappers from src/mon/mpi31.spec.

Usage: gen_wrappers.py SPEC OUTDIR

Writes OUTDIR/mon_acts.h, OUTDIR/mon_acts.c, OUTDIR/mon_wrappers.c and
OUTDIR/mon_fwrappers.c (the Fortran wrappers). Files are rewritten only when
their content changes, so an unchanged spec does not trigger a rebuild. The
spec format and the accounting rules are documented at the top of the spec
file itself. Standard library only.
"""

import os
import re
import sys

CATEGORIES = ("init", "comm", "p2p", "probe", "wait", "coll", "rma", "io")
GROUPS = ("MPI_P2P", "MPI_COLL", "MPI_RMA", "MPI_IO", "MPI_ALL")
# Category -> groups it belongs to (MPI_ALL is added to every function but
# MPI_Init, MPI_Init_thread and MPI_Finalize: the start and end of MPI are not
# the program's MPI time, README "What the figures mean").
CAT_GROUPS = {
    "init": (), "comm": (),
    "p2p": ("MPI_P2P",), "probe": ("MPI_P2P",), "wait": ("MPI_P2P",),
    "coll": ("MPI_COLL",), "rma": ("MPI_RMA",), "io": ("MPI_IO",),
}
KINDS = ("init", "finalize", "pcontrol", "start", "startall", "wait",
         "waitall", "waitany", "waitsome", "test", "testall", "testany",
         "testsome", "request_free", "topo")
KEYS = ("bytes", "partner", "status", "recv", "recv+", "req", "flag", "msg",
        "forget", "kind", "topo")


class SpecError(Exception):
    pass


class Param:
    def __init__(self, text):
        self.text = text.strip()
        m = re.match(r"^(.*?)([A-Za-z_]\w*)\s*(\[\s*\])?$", self.text)
        if not m:
            raise SpecError("cannot parse parameter %r" % text)
        self.name = m.group(2)
        base = m.group(1).replace("const", " ").strip()
        self.type = " ".join(base.split())  # e.g. "MPI_Comm", "MPI_Request *"
        self.array = bool(m.group(3))

    def base(self):
        """The MPI handle type without pointer or const, e.g. MPI_Comm."""
        return self.type.replace("*", "").strip()


class Entry:
    def __init__(self, category, proto, lineno):
        self.category = category
        self.lineno = lineno
        m = re.match(r"^(int|double)\s+(MPI_\w+)\s*\((.*)\)\s*$", proto)
        if not m:
            raise SpecError("line %d: cannot parse prototype %r" % (lineno, proto))
        self.ret, self.name, plist = m.group(1), m.group(2), m.group(3).strip()
        self.variadic = plist.endswith("...")
        if self.variadic:
            plist = plist[: plist.rindex(",")]
        self.params = [] if plist in ("", "void") else [Param(p) for p in plist.split(",")]
        self.rule = {}
        self.persistent = False

    def add_rule(self, text, lineno):
        for tok in text.split():
            if tok == "persistent":
                self.persistent = True
                continue
            if "+=" in tok:
                key, val = tok.split("+=", 1)
                key += "+"
            elif "=" in tok:
                key, val = tok.split("=", 1)
            else:
                raise SpecError("line %d: bad token %r" % (lineno, tok))
            if key not in KEYS:
                raise SpecError("line %d: unknown key %r" % (lineno, key))
            if key == "kind" and val not in KINDS:
                raise SpecError("line %d: unknown kind %r" % (lineno, val))
            self.rule[key] = val

    def param(self, name):
        for p in self.params:
            if p.name == name:
                return p
        raise SpecError("%s: no parameter %r (line %d)" % (self.name, name, self.lineno))

    def decl(self):
        ps = [p.text for p in self.params]
        if self.variadic:
            ps.append("...")
        return "%s %s(%s)" % (self.ret, self.name, ", ".join(ps) if ps else "void")

    def args(self):
        return ", ".join(p.name for p in self.params)

    @property
    def act(self):
        return "MON_ACT_" + self.name


def parse(path):
    entries, category, last = [], None, None
    with open(path) as f:
        for lineno, raw in enumerate(f, 1):
            line = raw.split("#", 1)[0].rstrip()
            if not line.strip():
                continue
            if line.startswith("["):
                category = line.strip("[] ")
                if category not in CATEGORIES:
                    raise SpecError("line %d: unknown category %r" % (lineno, category))
                last = None
            elif line[0].isspace():
                if last is None:
                    raise SpecError("line %d: rule without a prototype" % lineno)
                last.add_rule(line, lineno)
            else:
                if category is None:
                    raise SpecError("line %d: prototype before any [category]" % lineno)
                last = Entry(category, line.strip(), lineno)
                entries.append(last)
    names = [e.name for e in entries]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise SpecError("duplicate entries: %s" % ", ".join(sorted(dup)))
    return entries


# ---------------------------------------------------------------- activities

def gen_acts_h(entries):
    out = ["/* Generated by tools/gen_wrappers.py from src/mon/mpi31.spec. Do not edit. */",
           "#ifndef BALLAST_MON_ACTS_H", "#define BALLAST_MON_ACTS_H", "",
           "/** Number of wrapped MPI functions (activity ids 0..MON__NACT-1). */",
           "#define MON__NACT %d" % len(entries),
           "/** Number of activity groups; their ids follow the functions'. */",
           "#define MON__NGROUPS %d" % len(GROUPS), "",
           "/** Activity ids: one per wrapped function, then the groups. */",
           "enum {"]
    for i, e in enumerate(entries):
        out.append("  %s = %d," % (e.act, i))
    for g in GROUPS:
        out.append("  MON_GRP_%s = MON__NACT + %d," % (g[4:], GROUPS.index(g)))
    out += ["};", "",
            "/** Names of activities and groups (\"MPI_Send\", ..., \"MPI_ALL\"). */",
            "extern const char *const mon__act_names[MON__NACT + MON__NGROUPS];",
            "/** Per function: bit g set when it belongs to group MON__NACT + g. */",
            "extern const unsigned mon__act_groups[MON__NACT];",
            "/** Per function: where its messages are counted for the partner",
            " *  matrix (empty ones too): MON__MSG_CALL when the call itself moved",
            " *  one (mon__record), MON__MSG_DONE when a completion or a receive",
            " *  half credits one (mon__account); 0 for no message (probes,",
            " *  collectives, local calls). */",
            "enum { MON__MSG_CALL = 1, MON__MSG_DONE = 2 };",
            "extern const unsigned char mon__act_msg[MON__NACT];", "",
            "#endif", ""]
    return "\n".join(out)


def gen_acts_c(entries):
    out = ["/* Generated by tools/gen_wrappers.py from src/mon/mpi31.spec. Do not edit. */",
           '#include "mon/mon_acts.h"', "",
           "const char *const mon__act_names[MON__NACT + MON__NGROUPS] = {"]
    for e in entries:
        out.append('  "%s",' % e.name)
    for g in GROUPS:
        out.append('  "%s",' % g)
    out += ["};", "", "const unsigned mon__act_groups[MON__NACT] = {"]
    for e in entries:
        groups = list(CAT_GROUPS[e.category])
        if e.rule.get("kind") not in ("init", "finalize"):
            groups.append("MPI_ALL")
        bits = " | ".join("(1u << %d)" % GROUPS.index(g) for g in groups) or "0"
        out.append("  %s, /* %s */" % (bits, e.name))
    out += ["};", "", "const unsigned char mon__act_msg[MON__NACT] = {"]
    for e in entries:
        out.append("  %d, /* %s */" % (msg_flags(e), e.name))
    out += ["};", ""]
    return "\n".join(out)


def msg_flags(e):
    """Where a message of e is counted: 1 at the call, 2 at completion (or
    the receive half of a sendrecv). A message is a point-to-point or
    one-sided transfer (bytes= or recv=); probes only look at one."""
    if e.category not in ("p2p", "probe", "rma"):
        return 0
    transfer = "bytes" in e.rule or "recv" in e.rule
    flags = 0
    if transfer:
        flags |= 2 if "req" in e.rule else 1
    if "recv+" in e.rule:
        flags |= 2
    return flags


# ------------------------------------------------------------------ wrappers

def c_expr(expr):
    """Spec expression -> C: helper calls f(...) become mon__w_f(...)."""
    return re.sub(r"\b([a-z_][a-z0-9_]*)\s*\(", r"mon__w_\1(", expr)


def rank_of(e, spec, status):
    """partner=R@C -> C expression of the world rank."""
    if "@" not in spec:
        raise SpecError("%s: partner needs R@C, got %r" % (e.name, spec))
    rank, handle = spec.split("@", 1)
    h = e.param(handle)
    if rank == "status":
        if not status:
            raise SpecError("%s: partner=status@... needs status=" % e.name)
        rank = "%s->MPI_SOURCE" % status
    else:
        e.param(rank)
    if h.base() == "MPI_Win":
        return "mon__w_wrank(%s, %s)" % (handle, rank)
    if h.base() == "MPI_Comm":
        return "mon__w_rank(%s, %s)" % (handle, rank)
    raise SpecError("%s: partner handle %r is not a comm or window" % (e.name, handle))


def recv_src(e, spec, pre):
    """recv=C -> (communicator expression, known sender expression): a
    communicator names the sender by the status's MPI_SOURCE; a matched
    message's sender was recorded by MPI_Mprobe (its communicator may be
    freed by now); a file has none."""
    h = e.param(spec)
    if h.base() == "MPI_Comm":
        return spec, None
    if h.base() == "MPI_File":
        return "MPI_COMM_NULL", "MON_NO_PARTNER"
    if h.base() == "MPI_Message":
        # MPI sets the handle to MPI_MESSAGE_NULL: look the sender up first.
        pre.append("int mon_mp_ = mon__wmsg_take(*%s);" % spec)
        return "MPI_COMM_NULL", "mon_mp_"
    raise SpecError("%s: recv handle %r must be a comm, file or message" % (e.name, spec))


def rule_forget(e, pre):
    """forget=H: drop the cached translation of *H before MPI frees it."""
    if "forget" in e.rule:
        h = e.param(e.rule["forget"])
        fn = {"MPI_Comm": "mon__comm_forget", "MPI_Win": "mon__win_forget"}.get(h.base())
        if fn is None:
            raise SpecError("%s: cannot forget a %s" % (e.name, h.base()))
        pre.append("%s(*%s);" % (fn, e.rule["forget"]))


def rule_bytes_partner(e, status, post, expr):
    """bytes= and partner=; expr turns a spec expression into C."""
    r = e.rule
    if "bytes" in r:
        post.append("bytes = (uint64_t)(%s);" % expr(r["bytes"]))
    if "partner" in r:
        post.append("partner = %s;" % rank_of(e, r["partner"], status))
        rank = r["partner"].split("@", 1)[0]
        if rank != "status" and "bytes" in r:
            # A transfer with MPI_PROC_NULL completes at once and moves nothing.
            post.append("if (%s == MPI_PROC_NULL)" % rank)
            post.append("  bytes = 0;")


def rule_transfer(e, status, pre, post, fortran=False):
    """recv=, recv+=, msg=, req= (and persistent), flag=: appends to pre and
    post, returns the condition under which post runs."""
    r = e.rule
    recv_comm, recv_partner = None, None
    if "recv" in r:
        recv_comm, recv_partner = recv_src(e, r["recv"], pre)
        if "req" not in r:
            if not status:
                raise SpecError("%s: recv= needs status=" % e.name)
            post.append("bytes += mon__w_rbytes(%s);" % status)
            if recv_partner is None:
                post.append("partner = mon__w_rank(%s, %s->MPI_SOURCE);" % (recv_comm, status))
            elif recv_partner != "MON_NO_PARTNER":
                post.append("partner = %s;" % recv_partner)
    if "recv+" in r:
        comm, known = recv_src(e, r["recv+"], pre)
        if not status or known is not None:
            raise SpecError("%s: recv+= needs status= and a communicator" % e.name)
        post.append("mon__account(t, %s, mon__w_rank(%s, %s->MPI_SOURCE), mon__w_rbytes(%s));"
                    % (e.act, comm, status, status))
        # The receive half is one message completed inside the call.
        post.append("if (mon_tool_ && TOOL__ON(TOOL__EV_MPI_COMPLETE))")
        post.append("  mon__tool_mpi_complete(%s, 1, mon__w_rank(%s, %s->MPI_SOURCE), "
                    "%s->MPI_TAG, mon__w_rbytes(%s), mon__w_comm_id(%s), t1);"
                    % (e.act, comm, status, status, status, comm))
    if "msg" in r:
        # The sender's world rank now, from the probe's status: the
        # communicator may be freed before the message is received.
        m, c = r["msg"].split("@", 1)
        e.param(m), e.param(c)
        if not status:
            raise SpecError("%s: msg= needs status=" % e.name)
        post.append("mon__wmsg_put(*%s, mon__w_rank(%s, %s->MPI_SOURCE));" % (m, c, status))
    if "req" in r:
        req = r["req"]
        e.param(req)
        flags = ["MON__WREQ_RECV" if "recv" in r else "0"]
        if e.persistent:
            flags.append("MON__WREQ_PERSISTENT")
        if e.category in ("p2p", "probe"):
            flags.append("MON__WREQ_P2P")  # MPI_Cancel applies
        # A receive on a communicator: wreq_post holds its rank translation;
        # a matched message's sender is known already (recv_partner).
        cid = recv_comm if recv_comm not in (None, "MPI_COMM_NULL") else None
        post.append("mon__wreq_post(*%s, %s, %s, bytes, %s, %s, %s, %s);"
                    % (req, e.act, recv_partner if recv_partner not in (None, "MON_NO_PARTNER")
                       else "partner", " | ".join(flags), recv_comm or "MPI_COMM_NULL",
                       tool_tag(e, fortran), tool_comm_id(e, fortran, cid)))
        post.append("mon_posted_ = bytes; /* for the tools' mpi_exit */")
        post.append("bytes = 0; /* accounted when the request completes */")
    elif e.persistent:
        raise SpecError("%s: persistent without req=" % e.name)
    cond = "ret == MPI_SUCCESS"
    if "flag" in r:
        e.param(r["flag"])
        cond += " && *%s" % r["flag"]
    return cond


def wrapper_generic(e):
    r = e.rule
    pre, post, after = [], [], []
    status = r.get("status")
    if status:
        e.param(status)
        pre.append("MPI_Status mon_st_;")
        pre.append("if (%s == MPI_STATUS_IGNORE)" % status)
        pre.append("  %s = &mon_st_;" % status)
    rule_forget(e, pre)
    rule_bytes_partner(e, status, post, c_expr)
    cond = rule_transfer(e, status, pre, post)
    return emit(e, pre, post, after, cond)


def has_param(e, name):
    return any(p.name == name for p in e.params)


def tool_tag(e, fortran=False):
    """C expression of the tag the call names (tools' events), -1 for none."""
    for n in ("tag", "sendtag"):
        if has_param(e, n):
            return "(int)*%s_f" % n if fortran else n
    return "-1"


def tool_tag_exit(e, fortran=False):
    """mpi_exit's tag: a completed blocking receive's from its status."""
    r = e.rule
    if "recv" in r and "req" not in r and "flag" not in r and r.get("status"):
        return "(ret == MPI_SUCCESS ? %s->MPI_TAG : %s)" % (r["status"], tool_tag(e, fortran))
    return tool_tag(e, fortran)


def tool_comm_id(e, fortran=False, comm=None):
    """C expression of the comm_id of a request posted by e: computed only
    when a tool listens (mon_tool_), -1 otherwise."""
    c = comm or tool_comm(e)
    if c == "MPI_COMM_NULL":
        return "-1"
    if fortran and comm is None:
        c = "PMPI_Comm_f2c(*%s_f)" % c
    return "(mon_tool_ ? mon__w_comm_id(%s) : -1)" % c


def tool_comm(e):
    """The communicator whose size the tools' MPI events report: the first
    MPI_Comm passed by value, else none (MPI_COMM_NULL)."""
    for p in e.params:
        if p.type == "MPI_Comm" and not p.array:
            return p.name
    return "MPI_COMM_NULL"


# The tools interface (ballast/tool.h): one predictable branch when no tool
# registered an MPI event; else mon__tool_mpi_enter/exit (wrap_tool.c) raise
# mpi_enter before the timed call and mpi_exit after mon__record.
TOOL_ON = ("TOOL__ON(TOOL__EV_MPI_ENTER | TOOL__EV_MPI_EXIT | "
           "TOOL__EV_MPI_COMPLETE)")


def tool_enter(e, t0, comm=None, tag=None):
    """C expression: zero what mon__account credits during the call, raise
    mpi_enter when registered; the ticks at which the call starts (the
    wrapper keeps t0 itself in mon_tb_, mpi_exit's t_begin_ns)."""
    return ("(mon__tl_credit_n = 0, mon__tl_credit_bytes = 0, "
            "TOOL__ON(TOOL__EV_MPI_ENTER) ? mon__tool_mpi_enter(%s, %s, %s, %s) : %s)"
            % (e.act, comm or tool_comm(e), t0, tag or tool_tag(e), t0))


def emit(e, pre, post, after, cond="ret == MPI_SUCCESS", call=None, done=False):
    """done: the call completes requests (mpi_complete events at its t1)."""
    call = call or "P%s(%s)" % (e.name, e.args())
    out = [e.decl(), "{",
           "  mon__tls_t *t = mon__enter();",
           "  if (t == NULL)",
           "    return %s;" % call]
    out += ["  " + l for l in pre]
    out += ["  int mon_tool_ = %s;" % TOOL_ON,
            "  uint64_t t0 = mon__ticks(), mon_tb_ = t0;",
            "  if (mon_tool_)",
            "    t0 = %s;" % tool_enter(e, "t0"),
            "  int ret = %s;" % call,
            "  uint64_t t1 = mon__ticks();"]
    if done:
        out += ["  if (mon_tool_)", "    mon__tl_done_ticks = t1;"]
    out += ["  uint64_t bytes = 0, mon_posted_ = 0;",
            "  int partner = MON_NO_PARTNER;"]
    if post:
        out.append("  if (%s) {" % cond)
        out += ["    " + l for l in post]
        out.append("  }")
    out.append("  mon__record(t, %s, partner, bytes, t1 - t0);" % e.act)
    out += ["  " + l for l in after]
    out += ["  if (mon_tool_)",
            "    mon__tool_mpi_exit(%s, %s, ret, partner, bytes, mon_posted_, mon_tb_, t1, %s);"
            % (e.act, tool_comm(e), tool_tag_exit(e)),
            "  mon__leave(t);", "  return ret;", "}", ""]
    return "\n".join(out)


# MPI_Request_free credits an active send before the call: its mpi_complete
# carries the time it was called.
REQ_FREE_TICKS = ("if (TOOL__ON(TOOL__EV_MPI_COMPLETE)) "
                  "mon__tl_done_ticks = mon__ticks();")


def wrapper_kind(e):
    k = e.rule["kind"]
    if k == "init":
        # Not monitored yet while PMPI_Init runs: time it, then start mon.
        return "\n".join([
            e.decl(), "{",
            "  uint64_t t0 = mon__ticks();",
            "  int ret = P%s(%s);" % (e.name, e.args()),
            "  uint64_t t1 = mon__ticks();",
            "  if (ret != MPI_SUCCESS)",
            "    return ret;",
            "  mon__init(argc, argv);",
            "  mon__tls_t *t = mon__enter();",
            "  if (t != NULL) {",
            "    mon__record(t, %s, MON_NO_PARTNER, 0, t1 - t0);" % e.act,
            "    mon__leave(t);",
            "  }",
            "  return ret;", "}", ""])
    if k == "finalize":
        return "\n".join([
            e.decl(), "{",
            "  mon__tls_t *t = mon__enter();",
            "  if (t != NULL) {",
            "    /* Counted before the report so it appears in it; PMPI_Finalize itself is not timed. */",
            "    mon__record(t, %s, MON_NO_PARTNER, 0, 0);" % e.act,
            "    mon__leave(t);",
            "  }",
            "  mon__finalize();",
            "  mon__wrap_finalize();",
            "  int rc = PMPI_Finalize();",
            "  mon__after_finalize(); /* BALLAST_HTML: the page, once MPI is gone */",
            "  return rc;", "}", ""])
    if k == "pcontrol":
        return "\n".join([
            e.decl(), "{",
            "  const char *name = NULL;",
            "  if (level == 1 || level == -1) {",
            "    va_list ap;",
            "    va_start(ap, level);",
            "    name = va_arg(ap, const char *);",
            "    va_end(ap);",
            "  }",
            "  mon__tls_t *t = mon__enter();",
            "  if (t == NULL)",
            "    return mon__w_pcontrol(level, name, NULL);",
            "  /* Only PMPI_Pcontrol is MPI time: the region bookkeeping inside",
            "   * is ballast's own, and would otherwise land in the region's",
            "   * MPI time but not in its wall time. */",
            "  /* The region changes before the call's events, so they nest: the",
            "   * call that enters a region lies inside it, the one that leaves it",
            "   * after it (ballast/tool.h); the call is counted where it lies. */",
            "  mon__w_pcontrol_region(level, name);",
            "  int mon_tool_ = %s;" % TOOL_ON,
            "  uint64_t t0 = mon__ticks(), mon_tb_ = t0;",
            "  if (mon_tool_)",
            "    t0 = %s;" % tool_enter(e, "t0", "MPI_COMM_NULL"),
            "  mon__w_pcontrol_pass(level, name);",
            "  uint64_t t1 = mon__ticks();",
            "  mon__record(t, %s, MON_NO_PARTNER, 0, t1 - t0);" % e.act,
            "  if (mon_tool_)",
            "    mon__tool_mpi_exit(%s, MPI_COMM_NULL, MPI_SUCCESS, MON_NO_PARTNER, 0, 0, mon_tb_, t1, -1);"
            % e.act,
            "  mon__leave(t);",
            "  return MPI_SUCCESS;", "}", ""])
    if k == "topo":
        # The reordering (mapping, split) is ballast's own work, library
        # traffic: it runs outside the guard, before the call is timed; the
        # call's time and events are MPI's constructor alone.
        call = "P%s(%s)" % (e.name, e.args())
        newcomm = e.params[-1].name
        create = "(mon_re_ ? mon__w_topo_create(&mon_tp_, %s) : %s)" % (newcomm, call)
        return "\n".join([
            e.decl(), "{",
            "  mon__tls_t *t = mon__enter();",
            "  if (t == NULL)",
            "    return %s;" % call,
            "  mon__leave(t);",
            "  mon__topo_prep_t mon_tp_;",
            "  int mon_re_ = mon__w_topo_prep_%s(%s, &mon_tp_);" % (e.rule["topo"], e.args()),
            "  if ((t = mon__enter()) == NULL) {",
            "    int r_ = %s;" % create,
            "    mon__w_topo_done(&mon_tp_);",
            "    return r_;",
            "  }",
            "  int mon_tool_ = %s;" % TOOL_ON,
            "  uint64_t t0 = mon__ticks(), mon_tb_ = t0;",
            "  if (mon_tool_)",
            "    t0 = %s;" % tool_enter(e, "t0"),
            "  int ret = %s;" % create,
            "  uint64_t t1 = mon__ticks();",
            "  mon__record(t, %s, MON_NO_PARTNER, 0, t1 - t0);" % e.act,
            "  if (mon_tool_)",
            "    mon__tool_mpi_exit(%s, %s, ret, MON_NO_PARTNER, 0, 0, mon_tb_, t1, -1);"
            % (e.act, tool_comm(e)),
            "  mon__leave(t);",
            "  mon__w_topo_done(&mon_tp_);",
            "  return ret;", "}", ""])
    if k == "start":
        return emit(e, [], ["mon__wreq_start(request, 1);"], [])
    if k == "startall":
        return emit(e, [], ["mon__wreq_start(array_of_requests, count);"], [])
    # A call that fails may still free the request (Open MPI does for a
    # truncated receive): then it stops being tracked (mon__wreq_failed).
    if k == "wait":
        return emit(e, ["MPI_Status mon_st_;",
                        "if (status == MPI_STATUS_IGNORE)",
                        "  status = &mon_st_;",
                        "MPI_Request mon_rq_ = *request;"],
                    ["mon__wreq_done(t, mon_rq_, status);"],
                    ["if (ret != MPI_SUCCESS)",
                     "  mon__wreq_failed(t, mon_rq_, *request);"], done=True)
    if k == "test":
        return emit(e, ["MPI_Status mon_st_;",
                        "if (status == MPI_STATUS_IGNORE)",
                        "  status = &mon_st_;",
                        "MPI_Request mon_rq_ = *request;"],
                    ["mon__wreq_done(t, mon_rq_, status);"],
                    ["if (ret != MPI_SUCCESS)",
                     "  mon__wreq_failed(t, mon_rq_, *request);"],
                    cond="ret == MPI_SUCCESS && *flag", done=True)
    # MPI_ERR_IN_STATUS: some requests failed, the others completed all the
    # same (each status's MPI_ERROR says which; MPI_ERR_PENDING: not done).
    if k in ("waitall", "testall"):
        return emit(e, ["mon__wq_t q;",
                        "array_of_statuses = mon__wq_pre(&q, count, array_of_requests, array_of_statuses);"],
                    ["mon__wq_all(t, &q, array_of_statuses, ret == MPI_ERR_IN_STATUS);"],
                    ["mon__wq_fini(&q);"],
                    cond="(ret == MPI_SUCCESS || ret == MPI_ERR_IN_STATUS)"
                    + (" && *flag" if k == "testall" else ""), done=True)
    if k in ("waitany", "testany"):
        return emit(e, ["MPI_Status mon_st_;",
                        "if (status == MPI_STATUS_IGNORE)",
                        "  status = &mon_st_;",
                        "mon__wq_t q;",
                        "mon__wq_handles(&q, count, array_of_requests);"],
                    ["mon__wq_one(t, &q, *index, status);"],
                    ["if (ret != MPI_SUCCESS)",
                     "  mon__wq_failed_one(t, &q, *index, array_of_requests);",
                     "mon__wq_fini(&q);"],
                    cond="ret == MPI_SUCCESS" + (" && *flag" if k == "testany" else ""),
                    done=True)
    if k in ("waitsome", "testsome"):
        return emit(e, ["mon__wq_t q;",
                        "array_of_statuses = mon__wq_pre(&q, incount, array_of_requests, array_of_statuses);"],
                    ["mon__wq_some(t, &q, *outcount, array_of_indices, array_of_statuses,"
                     " ret == MPI_ERR_IN_STATUS);"],
                    ["mon__wq_fini(&q);"],
                    cond="ret == MPI_SUCCESS || ret == MPI_ERR_IN_STATUS", done=True)
    if k == "request_free":
        return emit(e, [REQ_FREE_TICKS, "mon__wreq_free(t, *request);"], [], [])
    raise SpecError("%s: unhandled kind %s" % (e.name, k))


def gen_wrappers_c(entries):
    out = ["/* Generated by tools/gen_wrappers.py from src/mon/mpi31.spec. Do not edit.",
           " * One PMPI wrapper per spec entry; the accounting rules are documented",
           " * in the spec. */",
           "#include <stdarg.h>",
           "#include <stdint.h>",
           "#include <mpi.h>",
           '#include "mon/mon_internal.h"',
           '#include "mon/wrap_internal.h"',
           '#include "mon/mon_acts.h"',
           '#include "tool/tool_internal.h"', ""]
    for e in entries:
        if e.variadic and e.rule.get("kind") != "pcontrol":
            raise SpecError("%s: only MPI_Pcontrol may be variadic" % e.name)
        out.append("BALLAST_API")
        out.append(wrapper_kind(e) if "kind" in e.rule else wrapper_generic(e))
    return "\n".join(out)


# ------------------------------------------------------------------ Fortran
#
# mon_fwrappers.c: the same functions for Fortran callers (Open MPI 4.x
# bindings). Open MPI's Fortran entry points call PMPI_ C functions directly,
# so the C wrappers never see a Fortran call: each function gets its own
# Fortran wrappers, with the spellings Open MPI's libraries export: mpi_send_
# (what gfortran calls for mpif.h and `use mpi`; the module of `use mpi` is
# interfaces only) and its aliases mpi_send, mpi_send__, MPI_SEND from
# libmpi_mpifh, and mpi_send_f08_ from libmpi_usempif08. Each converts the
# arguments its rule reads to C (MPI_*_f2c, the Fortran sentinels), calls the
# Fortran PMPI entry point (pmpi_send_, pmpi_send_f08_) and accounts exactly
# as the C wrapper does. Open MPI's Fortran layer calls PMPI_ C functions
# only, so a call is counted once; should one call an MPI_ C function, the
# C wrapper sees a re-entered thread state (mon__enter() gives NULL) and only
# passes it on. libballast does not link the Fortran libraries: each wrapper
# looks its PMPI entry point up once (mon__wf_resolve, wrap_fortran.c).

# MPI handle type -> its f2c conversion.
F2C = {"MPI_Comm": "PMPI_Comm_f2c", "MPI_Datatype": "PMPI_Type_f2c",
       "MPI_Win": "PMPI_Win_f2c", "MPI_File": "PMPI_File_f2c",
       "MPI_Message": "PMPI_Message_f2c", "MPI_Request": "PMPI_Request_f2c",
       "MPI_Op": "PMPI_Op_f2c", "MPI_Group": "PMPI_Group_f2c",
       "MPI_Info": "PMPI_Info_f2c"}
# Volume helpers that read arrays of handles: Fortran variants (wrap_fortran.c).
F_HELPERS = ("alltoallw", "nbr_alltoallw")
# C parameters that have no Fortran counterpart.
F_DROPPED = ("argc", "argv")


def f_params(e):
    """Fortran-side C parameters: (declaration, name) pairs, ierror and the
    hidden lengths of CHARACTER arguments included (gfortran: size_t)."""
    ps, lens = [], []
    for p in e.params:
        if p.name in F_DROPPED:
            continue
        n = p.name + "_f"
        if p.type == "char *":
            ps.append(("char *" + n, n))
            lens.append(("size_t %s_len" % p.name, p.name + "_len"))
        elif p.type == "void *":
            ps.append(("void *" + n, n))
        elif p.base() in ("MPI_Aint", "MPI_Offset"):
            ps.append(("%s *%s" % (p.base(), n), n))
        else:
            ps.append(("MPI_Fint *" + n, n))
    if e.rule.get("kind") != "pcontrol":
        ps.append(("MPI_Fint *ierr", "ierr"))
    return ps + lens


def f_refs(e):
    """Names of the C parameters that the rule reads."""
    names = set()
    for key, val in e.rule.items():
        if key != "kind":
            names.update(re.findall(r"[A-Za-z_]\w*", val))
    # A file handle only says "no partner" (recv=fh): nothing reads it.
    return [p for p in e.params
            if p.name in names and p.name != "status" and p.base() != "MPI_File"]


def f_convert(e, p):
    """(before the call, after the call) C lines giving the C value of p. A
    handle that MPI returns is converted after the call only; one that the
    rule reads before it (forget=, recv= of a message) before."""
    n, b = p.name, p.base()
    if p.type == "int *" or (b == "int" and p.array):
        return ["int *%s = (int *)%s_f;" % (n, n)], []
    if p.type == "int":
        return ["int %s = (int)*%s_f;" % (n, n)], []
    if p.type == "void *":
        return ["const void *%s = mon__wf_buf(%s_f);" % (n, n)], []
    if b in F2C and p.array:
        return ["const MPI_Fint *%s = %s_f;" % (n, n)], []
    if b in F2C and "*" in p.type:
        conv = "%s(*%s_f)" % (F2C[b], n)
        if n in (e.rule.get("forget"), e.rule.get("recv")):
            return ["%s %s_c_ = %s;" % (b, n, conv), "%s *%s = &%s_c_;" % (b, n, n)], []
        return (["%s %s_c_;" % (b, n), "%s *%s = &%s_c_;" % (b, n, n)],
                ["%s_c_ = %s;" % (n, conv)])
    if b in F2C:
        return ["%s %s = %s(*%s_f);" % (b, n, F2C[b], n)], []
    raise SpecError("%s: no Fortran conversion for parameter %s (%s)" % (e.name, n, p.type))


def f_expr(expr):
    out = c_expr(expr)
    for h in F_HELPERS:
        out = out.replace("mon__w_%s(" % h, "mon__wf_%s(" % h)
    return out


def f_generic(e):
    """Body of a Fortran wrapper for a rule without kind=: (pre, refresh, post, after, cond)."""
    r = e.rule
    pre, refresh, post = [], [], []
    for p in f_refs(e):
        before, after = f_convert(e, p)
        pre += before
        refresh += after
    status = r.get("status")
    if status:
        pre += ["MPI_Fint mon_fst_[MON__WF_STATUS_SIZE];",
                "if (mon__wf_status_ignore(%s_f))" % status,
                "  %s_f = mon_fst_;" % status,
                "MPI_Status mon_st_;",
                "MPI_Status *%s = &mon_st_;" % status]
        refresh.append("PMPI_Status_f2c(%s_f, %s);" % (status, status))
    rule_forget(e, pre)
    rule_bytes_partner(e, status, post, f_expr)
    cond = rule_transfer(e, status, pre, post, fortran=True)
    return pre, refresh, post, [], cond


# Wait/test family: the Fortran request handles are converted before the call
# (MPI sets completed ones to MPI_REQUEST_NULL), statuses after it; indices
# come back 1-based. wrap_fortran.c holds the array helpers (mon__wfq_*).
F_STATUS_PRE = ["MPI_Fint mon_fst_[MON__WF_STATUS_SIZE];",
                "if (mon__wf_status_ignore(status_f))",
                "  status_f = mon_fst_;"]


F_DONE_TICKS = "if (mon_tool_) mon__tl_done_ticks = t1;"


def f_kind(e):
    k = e.rule["kind"]
    if k in ("start", "startall"):
        n, reqs = ("1", "request_f") if k == "start" else ("(int)*count_f", "array_of_requests_f")
        return ([], [], ["mon__wfq_start(%s, %s);" % (reqs, n)], [], "ret == MPI_SUCCESS")
    if k in ("wait", "test"):
        return (F_STATUS_PRE + ["MPI_Request mon_rq_ = PMPI_Request_f2c(*request_f);"], [],
                [F_DONE_TICKS, "MPI_Status mon_st_;",
                 "PMPI_Status_f2c(status_f, &mon_st_);",
                 "mon__wreq_done(t, mon_rq_, &mon_st_);"],
                ["if (ret != MPI_SUCCESS)",
                 "  mon__wreq_failed(t, mon_rq_, PMPI_Request_f2c(*request_f));"],
                "ret == MPI_SUCCESS" + (" && *flag_f" if k == "test" else ""))
    if k in ("waitall", "testall"):
        return (["mon__wfq_t q;",
                 "array_of_statuses_f = mon__wfq_pre(&q, (int)*count_f, array_of_requests_f,"
                 " array_of_statuses_f);"], [],
                [F_DONE_TICKS,
                 "mon__wfq_all(t, &q, array_of_statuses_f, ret == MPI_ERR_IN_STATUS);"],
                ["mon__wfq_fini(&q);"],
                "(ret == MPI_SUCCESS || ret == MPI_ERR_IN_STATUS)"
                + (" && *flag_f" if k == "testall" else ""))
    if k in ("waitany", "testany"):
        return (F_STATUS_PRE + ["mon__wfq_t q;",
                                "mon__wfq_handles(&q, (int)*count_f, array_of_requests_f);"], [],
                [F_DONE_TICKS, "mon__wfq_one(t, &q, *index_f, status_f);"],
                ["if (ret != MPI_SUCCESS)",
                 "  mon__wfq_failed_one(t, &q, *index_f, array_of_requests_f);",
                 "mon__wfq_fini(&q);"],
                "ret == MPI_SUCCESS" + (" && *flag_f" if k == "testany" else ""))
    if k in ("waitsome", "testsome"):
        return (["mon__wfq_t q;",
                 "array_of_statuses_f = mon__wfq_pre(&q, (int)*incount_f, array_of_requests_f,"
                 " array_of_statuses_f);"], [],
                [F_DONE_TICKS,
                 "mon__wfq_some(t, &q, *outcount_f, array_of_indices_f, array_of_statuses_f,"
                 " ret == MPI_ERR_IN_STATUS);"],
                ["mon__wfq_fini(&q);"],
                "ret == MPI_SUCCESS || ret == MPI_ERR_IN_STATUS")
    if k == "request_free":
        return ([REQ_FREE_TICKS, "mon__wreq_free(t, PMPI_Request_f2c(*request_f));"], [], [], [],
                "ret == MPI_SUCCESS")
    raise SpecError("%s: unhandled kind %s for Fortran" % (e.name, k))


def f_special(e, names):
    """Fortran bodies of init, finalize and pcontrol."""
    k = e.rule["kind"]
    call = "fn(%s);" % ", ".join("&ret_f" if n == "ierr" else n for n in names)
    if k == "init":
        return ["MPI_Fint ret_f = MPI_SUCCESS;",
                "uint64_t t0 = mon__ticks();", call, "uint64_t t1 = mon__ticks();",
                "if (ierr)", "  *ierr = ret_f;",
                "if (ret_f != MPI_SUCCESS)", "  return;",
                "mon__init(NULL, NULL); /* the command comes from /proc/self/cmdline */",
                "mon__tls_t *t = mon__enter();",
                "if (t != NULL) {",
                "  mon__record(t, %s, MON_NO_PARTNER, 0, t1 - t0);" % e.act,
                "  mon__leave(t);", "}"]
    if k == "finalize":
        return ["mon__tls_t *t = mon__enter();",
                "if (t != NULL) {",
                "  mon__record(t, %s, MON_NO_PARTNER, 0, 0);" % e.act,
                "  mon__leave(t);", "}",
                "mon__finalize();", "mon__wrap_finalize();",
                "fn(%s);" % ", ".join(names),
                "mon__after_finalize(); /* BALLAST_HTML: the page, once MPI is gone */"]
    if k == "topo" and e.rule["topo"] in ("cart", "graph"):
        # Through the C wrapper, which reorders (BALLAST_REORDER), accounts
        # and raises the events once. LOGICALs: nonzero is true (gfortran).
        comm_in, reorder, comm_out = e.params[0].name, "reorder", e.params[-1].name
        if e.rule["topo"] == "cart":
            conv = ["int nd_ = (int)*ndims_f;",
                    "int *per_ = malloc((size_t)(nd_ > 0 ? nd_ : 1) * sizeof *per_);",
                    "if (per_ == NULL) {", "  fn(%s);" % ", ".join(names), "  return;", "}",
                    "for (int i = 0; i < nd_; i++)", "  per_[i] = periods_f[i] != 0;"]
            call = ("MPI_Cart_create(PMPI_Comm_f2c(*%s_f), nd_, (const int *)dims_f, per_, "
                    "*%s_f != 0, &out_)" % (comm_in, reorder))
            done = ["free(per_);"]
        else:
            conv = []
            call = ("MPI_Graph_create(PMPI_Comm_f2c(*%s_f), (int)*nnodes_f, (const int *)index_f, "
                    "(const int *)edges_f, *%s_f != 0, &out_)" % (comm_in, reorder))
            done = []
        return conv + ["MPI_Comm out_ = MPI_COMM_NULL;",
                       "int ret = %s;" % call] + done + [
                       "if (ret == MPI_SUCCESS)",
                       "  *%s_f = PMPI_Comm_c2f(out_);" % comm_out,
                       "if (ierr)", "  *ierr = (MPI_Fint)ret;"]
    if k == "pcontrol":
        # As in C, only the PMPI call is MPI time, not the region bookkeeping.
        return ["mon__tls_t *t = mon__enter();",
                "mon__wf_pcontrol((int)*level_f);",
                "if (t == NULL) {", "  fn(level_f);", "  return;", "}",
                "uint64_t t0 = mon__ticks();", "fn(level_f);",
                "uint64_t t1 = mon__ticks();",
                "mon__record(t, %s, MON_NO_PARTNER, 0, t1 - t0);" % e.act,
                "mon__leave(t);"]
    return None


def f_body(e, names):
    special = f_special(e, names) if "kind" in e.rule else None
    if special is not None:
        return special
    pre, refresh, post, after, cond = (f_kind(e) if "kind" in e.rule else f_generic(e))
    # The tools' MPI events as in C (the communicator converted from Fortran).
    comm = tool_comm(e)
    fcomm = "PMPI_Comm_f2c(*%s_f)" % comm if comm != "MPI_COMM_NULL" else comm
    out = ["mon__tls_t *t = mon__enter();",
           "if (t == NULL) {", "  fn(%s);" % ", ".join(names), "  return;", "}"]
    out += pre
    out += ["MPI_Fint ret_f = MPI_SUCCESS;",
            "int mon_tool_ = %s;" % TOOL_ON,
            "uint64_t t0 = mon__ticks(), mon_tb_ = t0;",
            "if (mon_tool_)",
            "  t0 = %s;" % tool_enter(e, "t0", fcomm, tool_tag(e, True)),
            "fn(%s);" % ", ".join("&ret_f" if n == "ierr" else n for n in names),
            "uint64_t t1 = mon__ticks();",
            "if (ierr)", "  *ierr = ret_f;",
            "uint64_t bytes = 0, mon_posted_ = 0;",
            "int partner = MON_NO_PARTNER;",
            "int ret = (int)ret_f;"]
    if refresh or post:
        out.append("if (%s) {" % cond)
        out += ["  " + l for l in refresh + post]
        out.append("}")
    out.append("mon__record(t, %s, partner, bytes, t1 - t0);" % e.act)
    out += after
    out += ["if (mon_tool_)",
            "  mon__tool_mpi_exit(%s, %s, ret, partner, bytes, mon_posted_, mon_tb_, t1, %s);"
            % (e.act, fcomm, tool_tag_exit(e, True)),
            "mon__leave(t);"]
    return out


def f_symbols(e):
    """(mpif.h/use mpi spellings, main one, f08 spelling, PMPI of each)."""
    low = e.name.lower()
    return ([low, low + "__", e.name.upper()], low + "_", low + "_f08_",
            "p" + low + "_", "p" + low + "_f08_")


def gen_fwrapper(e):
    ps = f_params(e)
    decl = ", ".join(d for d, _ in ps) or "void"
    names = [n for _, n in ps]
    aliases, f77, f08, p77, p08 = f_symbols(e)
    fn_t = "mon_wf_%s_fn" % e.name
    ierr = "ierr" if "ierr" in names else "NULL"
    out = ["/* %s */" % e.name,
           "typedef void %s(%s);" % (fn_t, decl),
           "static void *pmpi_%s[2]; /* resolved %s, %s */" % (e.name, p77, p08),
           "static void wf_%s(%s *fn%s)" % (e.name, fn_t, "".join(", " + d for d, _ in ps)),
           "{"]
    out += ["  " + l for l in f_body(e, names)]
    out += ["}", ""]
    for i, (sym, pm) in enumerate(((f77, p77), (f08, p08))):
        out += ["BALLAST_API void %s(%s)" % (sym, decl), "{",
                '  %s *fn = (%s *)mon__wf_resolve(&pmpi_%s[%d], "%s", %d);'
                % (fn_t, fn_t, e.name, i, pm, i),
                "  if (fn)",
                "    wf_%s(fn%s);" % (e.name, "".join(", " + n for n in names)),
                "  else",
                '    mon__wf_missing("%s", %s);' % (pm, ierr), "}"]
    for a in aliases:
        out.append('BALLAST_API void %s(%s) __attribute__((alias("%s")));' % (a, decl, f77))
    out.append("")
    return "\n".join(out)


def gen_fwrappers_c(entries):
    out = ["/* Generated by tools/gen_wrappers.py from src/mon/mpi31.spec. Do not edit.",
           " * The Fortran wrappers (Open MPI bindings: mpif.h, use mpi, use mpi_f08);",
           " * see the generator's Fortran section. */",
           "#include <stddef.h>",
           "#include <stdint.h>",
           "#include <stdlib.h>",
           "#include <mpi.h>",
           '#include "mon/mon_internal.h"',
           '#include "mon/wrap_internal.h"',
           '#include "mon/wrap_fortran.h"',
           '#include "mon/mon_acts.h"',
           '#include "tool/tool_internal.h"', "",
           "_Static_assert(sizeof(MPI_Fint) == sizeof(int),",
           '               "the Fortran wrappers read INTEGER arrays as int arrays");', ""]
    for e in entries:
        out.append(gen_fwrapper(e))
    return "\n".join(out)


def write_if_changed(path, text):
    try:
        with open(path) as f:
            if f.read() == text:
                return
    except OSError:
        pass
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def main(argv):
    if len(argv) != 3:
        sys.stderr.write("usage: gen_wrappers.py SPEC OUTDIR\n")
        return 2
    try:
        entries = parse(argv[1])
        files = {"mon_acts.h": gen_acts_h(entries), "mon_acts.c": gen_acts_c(entries),
                 "mon_wrappers.c": gen_wrappers_c(entries),
                 "mon_fwrappers.c": gen_fwrappers_c(entries)}
    except SpecError as err:
        sys.stderr.write("gen_wrappers.py: %s: %s\n" % (argv[1], err))
        return 1
    os.makedirs(argv[2], exist_ok=True)
    for name, text in files.items():
        write_if_changed(os.path.join(argv[2], name), text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
