/*
 * The OTF2 writer, a ballast tool (BALLAST_TOOLS=otf2), on Debian's OTF2
 * library (libotf2-trace-dev). It uses only the public tools interface, MPI
 * and OTF2; Vampir, Scalasca and otf2-print read what it writes.
 *
 * What it records, per location (one per rank and thread; location id =
 * rank + thread index x ranks, so rank r's main thread is location r):
 * - ballast regions and tasks: Enter/Leave of a region named as the region,
 *   and of "task <key>" for a task (the task's own region nests inside);
 * - every MPI call: Enter/Leave of the function's region (paradigm MPI; the
 *   library's own calls as "ballast:<function>", so ballast's traffic never
 *   mixes with the application's figures), and inside it
 *   - MpiSend for a send when it is posted (blocking sends, MPI_Isend and
 *     its kin with the posted size, the send half of MPI_Sendrecv) or, for
 *     a persistent send, when it completes;
 *   - MpiRecv for a completed blocking receive, and for each receive that a
 *     wait or test completed (the mpi_complete event: source, tag and size
 *     from the status), and the receive half of MPI_Sendrecv;
 *   - MpiCollectiveBegin/End for a blocking collective, on its communicator
 *     (root = its rank there).
 *   Messages carry their real tag and communicator; ranks are ranks in that
 *   communicator, as OTF2 wants.
 * - remaps: Enter/Leave of "remap <strategy>".
 * Enter/Leave nest on every location (trace_nest_t): a Leave that would
 * cross an open region first leaves that region, a Leave of nothing open is
 * dropped, and what is still open at the finalize event (tasks still
 * running, regions of other threads) is left there, innermost first.
 *
 * Communicators: each one an event names (comm_id) is looked up once
 * (api->comm_ranks: its members' world ranks). At finalize every rank's
 * communicators are unified like the regions, keyed by their members and
 * the order in which the process met communicators of the same members
 * (MPI_COMM_WORLD by its own key), and rank 0 writes a Group and a Comm
 * for each; each rank maps its local ids to them (a mapping table). That
 * part, and the unification of keys across ranks, is otf2_defs.c.
 *
 * The archive is written the parallel way, one event file per location
 * through OTF2's MPI collective callbacks (OTF2_MPI_Collectives.h, over
 * PMPI so ballast neither counts nor reports them). Each rank numbers the
 * regions it meets itself; at finalize rank 0 gathers every rank's names,
 * makes one global list, writes the global definitions (clock properties,
 * strings, regions, system tree, location groups and locations with their
 * event counts, the groups and communicators) and each rank writes its
 * local definitions: the mapping of its region and communicator ids to the
 * global ones and two ClockOffset records (init and finalize: rank 0's clock minus
 * the rank's, trace_common.h), which readers apply to align the ranks'
 * CLOCK_MONOTONIC timestamps.
 *
 * Memory: each location (thread) holds at most BALLAST_TRACE_BUFFER bytes of
 * events (in chunks of 1 MiB, or one chunk of at least 256 KiB, OTF2's
 * smallest; at most 64 chunks) and OTF2 writes them to the location's file
 * when they are full (the memory callbacks below).
 */
#define OTF2_MPI_USE_PMPI
#include "otf2_defs.h"
#include "trace_common.h"

#include <ballast/tool.h>
#include <inttypes.h>
#include <otf2/OTF2_MPI_Collectives.h>
#include <otf2/otf2.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uthash.h>

#define TOOL "otf2"

enum kind { K_REGION, K_TASK, K_MPI, K_MPI_LIB, K_LB, K_N };
static const char *const kind_prefix[K_N] = {"", "task ", "", "ballast:", ""};

typedef struct reg {
  char *key; /* kind byte + name */
  uint32_t id;
  UT_hash_handle hh;
} reg_t;

/* A message completed inside the MPI call under way (mpi_complete), kept
 * until the call's mpi_exit writes its Enter and Leave around it. */
typedef struct pending {
  uint64_t t;
  const char *name; /* the posting function (a static string of ballast's) */
  int recv, partner, tag, comm_id;
  uint64_t bytes;
} pending_t;

typedef struct loc {
  OTF2_EvtWriter *w;
  uint64_t id;
  uint64_t t_last;    /* the last timestamp written: OTF2 wants them in order */
  trace_nest_t nest;  /* regions, tasks and remaps open here */
  pending_t *pend;
  int npend, cappend;
} loc_t;

typedef struct ot {
  const ballast_tool_api_v1_t *api;
  pthread_mutex_t mu;
  OTF2_Archive *ar;
  int rank, size, open, with_lib;
  MPI_Comm comm;
  trace_clock_sample_t s0;
  reg_t *regs;          /* hash: kind + name -> local id */
  reg_t **by_id;        /* local id -> entry */
  uint32_t nregs, capregs;
  loc_t *locs;          /* per thread of this rank */
  int nlocs, caplocs;
  otf2_comms_t comms;   /* the communicators met */
  uint64_t t_min, t_max;
  uint64_t t_end;       /* the finalize event's time */
  uint64_t errors;
} ot_t;

static ot_t g = {.mu = PTHREAD_MUTEX_INITIALIZER, .comm = MPI_COMM_NULL};
static int g_attached;
static _Thread_local int t_loc = -1;

/* ---- local definitions ------------------------------------------------- */

/* The local id of a region of this kind and name (under g.mu); UINT32_MAX
 * when out of memory. */
static uint32_t region_id(int kind, const char *name) {
  size_t n = strlen(name);
  char stackkey[256], *key = n + 2 <= sizeof stackkey ? stackkey : malloc(n + 2);
  if (!key) return UINT32_MAX;
  key[0] = (char)('0' + kind);
  memcpy(key + 1, name, n + 1);
  reg_t *r;
  HASH_FIND_STR(g.regs, key, r);
  if (!r && g.nregs == g.capregs) {
    uint32_t cap = g.capregs ? 2 * g.capregs : 64;
    reg_t **nb = realloc(g.by_id, cap * sizeof *nb);
    if (nb) g.by_id = nb, g.capregs = cap;
  }
  if (!r && g.nregs < g.capregs && (r = calloc(1, sizeof *r)) && (r->key = strdup(key))) {
    r->id = g.nregs;
    g.by_id[g.nregs++] = r;
    HASH_ADD_KEYPTR(hh, g.regs, r->key, strlen(r->key), r);
  } else if (r && !r->key) {
    free(r);
    r = NULL;
  }
  if (key != stackkey) free(key);
  return r ? r->id : UINT32_MAX;
}

/* This thread's location (under g.mu); NULL out of memory. */
static loc_t *location(void) {
  if (t_loc < 0) {
    if (g.nlocs == g.caplocs) {
      int cap = g.caplocs ? 2 * g.caplocs : 4;
      loc_t *nl = realloc(g.locs, (size_t)cap * sizeof *nl);
      if (!nl) return NULL;
      g.locs = nl;
      g.caplocs = cap;
    }
    uint64_t id = (uint64_t)g.rank + (uint64_t)g.nlocs * (uint64_t)g.size;
    OTF2_EvtWriter *w = OTF2_Archive_GetEvtWriter(g.ar, id);
    if (!w) return NULL;
    memset(&g.locs[g.nlocs], 0, sizeof g.locs[0]);
    g.locs[g.nlocs].w = w;
    g.locs[g.nlocs].id = id;
    t_loc = g.nlocs++;
  }
  return &g.locs[t_loc];
}

static OTF2_EvtWriter *writer(void) {
  loc_t *l = location();
  return l ? l->w : NULL;
}

/* t, or the last time written on l when t is earlier (records of one call
 * raised out of order, e.g. MPI_Request_free's completion before its
 * mpi_enter): OTF2 readers want a location's times in order. */
static uint64_t at(loc_t *l, uint64_t t) {
  if (t < l->t_last) t = l->t_last;
  l->t_last = t;
  if (!g.t_min || t < g.t_min) g.t_min = t;
  if (t > g.t_max) g.t_max = t;
  return t;
}

/* Leaves the innermost open region of l at t (under g.mu). */
static void leave_top(loc_t *l, uint64_t t) {
  const trace_open_t *o = trace_nest_top(&l->nest);
  uint32_t id = region_id(o->kind, o->name);
  if (id == UINT32_MAX || OTF2_EvtWriter_Leave(l->w, NULL, at(l, t), id) != OTF2_SUCCESS)
    g.errors++;
  trace_nest_pop(&l->nest);
}

/* Enter or leave a region (enter != 0: Enter), nested (see the top). */
static void enter_leave(int enter, int kind, const char *name, uint64_t t) {
  pthread_mutex_lock(&g.mu);
  loc_t *l;
  uint32_t id;
  if (!name) name = "(null)";
  if (g.open && (l = location()) && (id = region_id(kind, name)) != UINT32_MAX) {
    if (enter) {
      if (trace_nest_push(&l->nest, kind, name, NULL) != 0 ||
          OTF2_EvtWriter_Enter(l->w, NULL, at(l, t), id) != OTF2_SUCCESS)
        g.errors++;
    } else {
      int above = trace_nest_find(&l->nest, kind, name);
      for (int i = 0; i < above; i++) {
        l->nest.forced++;
        leave_top(l, t);
      }
      if (above >= 0) leave_top(l, t);
    }
  } else if (g.open) {
    g.errors++;
  }
  pthread_mutex_unlock(&g.mu);
}

static void on_region_enter(const ballast_tool_region_t *ev, void *u) {
  enter_leave(1, K_REGION, ev->name, ev->t_ns);
}
static void on_region_exit(const ballast_tool_region_t *ev, void *u) {
  enter_leave(0, K_REGION, ev->name, ev->t_ns);
}
static void on_task_begin(const ballast_tool_task_t *ev, void *u) {
  enter_leave(1, K_TASK, ev->key, ev->t_ns);
}
static void on_task_end(const ballast_tool_task_t *ev, void *u) {
  enter_leave(0, K_TASK, ev->key, ev->t_ns);
}
/* A repetition labelled an outlier: a region "outlier: NAME" of no length
 * at the repetition's end, inside it (the event comes before its exit). */
static void on_rep_outlier(const ballast_tool_rep_t *ev, void *u) {
  char n[300];
  snprintf(n, sizeof n, "outlier: %s", ev->name ? ev->name : "?");
  enter_leave(1, K_REGION, n, ev->t_ns);
  enter_leave(0, K_REGION, n, ev->t_ns);
  (void)u;
}

static void on_remap_begin(const ballast_tool_remap_begin_t *ev, void *u) {
  char n[160];
  snprintf(n, sizeof n, "remap %s", ev->strategy ? ev->strategy : "?");
  enter_leave(1, K_LB, n, ev->t_ns);
}
static void on_remap_end(const ballast_tool_remap_end_t *ev, void *u) {
  char n[160];
  snprintf(n, sizeof n, "remap %s", ev->strategy ? ev->strategy : "?");
  enter_leave(0, K_LB, n, ev->t_ns);
}

/* ---- MPI --------------------------------------------------------------- */

typedef struct coll {
  const char *name;
  OTF2_CollectiveOp op;
  OTF2_RegionRole role;
  int rooted;
} coll_t;

static const coll_t colls[] = {
    {"MPI_Barrier", OTF2_COLLECTIVE_OP_BARRIER, OTF2_REGION_ROLE_BARRIER, 0},
    {"MPI_Bcast", OTF2_COLLECTIVE_OP_BCAST, OTF2_REGION_ROLE_COLL_ONE2ALL, 1},
    {"MPI_Gather", OTF2_COLLECTIVE_OP_GATHER, OTF2_REGION_ROLE_COLL_ALL2ONE, 1},
    {"MPI_Gatherv", OTF2_COLLECTIVE_OP_GATHERV, OTF2_REGION_ROLE_COLL_ALL2ONE, 1},
    {"MPI_Scatter", OTF2_COLLECTIVE_OP_SCATTER, OTF2_REGION_ROLE_COLL_ONE2ALL, 1},
    {"MPI_Scatterv", OTF2_COLLECTIVE_OP_SCATTERV, OTF2_REGION_ROLE_COLL_ONE2ALL, 1},
    {"MPI_Allgather", OTF2_COLLECTIVE_OP_ALLGATHER, OTF2_REGION_ROLE_COLL_ALL2ALL, 0},
    {"MPI_Allgatherv", OTF2_COLLECTIVE_OP_ALLGATHERV, OTF2_REGION_ROLE_COLL_ALL2ALL, 0},
    {"MPI_Alltoall", OTF2_COLLECTIVE_OP_ALLTOALL, OTF2_REGION_ROLE_COLL_ALL2ALL, 0},
    {"MPI_Alltoallv", OTF2_COLLECTIVE_OP_ALLTOALLV, OTF2_REGION_ROLE_COLL_ALL2ALL, 0},
    {"MPI_Alltoallw", OTF2_COLLECTIVE_OP_ALLTOALLW, OTF2_REGION_ROLE_COLL_ALL2ALL, 0},
    {"MPI_Allreduce", OTF2_COLLECTIVE_OP_ALLREDUCE, OTF2_REGION_ROLE_COLL_ALL2ALL, 0},
    {"MPI_Reduce", OTF2_COLLECTIVE_OP_REDUCE, OTF2_REGION_ROLE_COLL_ALL2ONE, 1},
    {"MPI_Reduce_scatter", OTF2_COLLECTIVE_OP_REDUCE_SCATTER, OTF2_REGION_ROLE_COLL_ALL2ALL, 0},
    {"MPI_Reduce_scatter_block", OTF2_COLLECTIVE_OP_REDUCE_SCATTER_BLOCK,
     OTF2_REGION_ROLE_COLL_ALL2ALL, 0},
    {"MPI_Scan", OTF2_COLLECTIVE_OP_SCAN, OTF2_REGION_ROLE_COLL_OTHER, 0},
    {"MPI_Exscan", OTF2_COLLECTIVE_OP_EXSCAN, OTF2_REGION_ROLE_COLL_OTHER, 0},
};

static const coll_t *find_coll(const char *name) {
  for (size_t i = 0; i < sizeof colls / sizeof colls[0]; i++)
    if (strcmp(colls[i].name, name) == 0) return &colls[i];
  return NULL;
}

static int is_send(const char *n) {
  return !strcmp(n, "MPI_Send") || !strcmp(n, "MPI_Bsend") || !strcmp(n, "MPI_Ssend") ||
         !strcmp(n, "MPI_Rsend") || !strcmp(n, "MPI_Isend") || !strcmp(n, "MPI_Ibsend") ||
         !strcmp(n, "MPI_Issend") || !strcmp(n, "MPI_Irsend");
}
static int is_sendrecv(const char *n) { return strncmp(n, "MPI_Sendrecv", 12) == 0; }
static int is_recv(const char *n) { return !strcmp(n, "MPI_Recv") || !strcmp(n, "MPI_Mrecv"); }
/* A persistent send's request (MPI_Send_init, ...): its message is written
 * when it completes, once per MPI_Start. */
static int is_persistent_send(const char *n) {
  size_t l = strlen(n);
  return l > 9 && strcmp(n + l - 8, "end_init") == 0; /* MPI_Send_init, MPI_Bsend_init, ... */
}

static OTF2_RegionRole mpi_role(const char *n) {
  const coll_t *c = find_coll(n);
  if (c) return c->role;
  if (is_send(n) || is_recv(n) || strstr(n, "send") || strstr(n, "recv") || strstr(n, "Wait") ||
      strstr(n, "Test") || strstr(n, "robe"))
    return OTF2_REGION_ROLE_POINT2POINT;
  return OTF2_REGION_ROLE_FUNCTION;
}

/* A message of communicator comm_id with the world rank partner: the
 * communicator and the partner's rank in it. An unknown communicator (an
 * MPI_Mrecv's, which names none) stands for MPI_COMM_WORLD, where the
 * world rank is the rank. 0 when it can be written. */
static int msg_where(int comm_id, int partner, uint32_t *comm, uint32_t *rank) {
  otf2_comm_t *c = partner >= 0 ? otf2_comm_get(&g.comms, g.api, comm_id) : NULL;
  if (!c && partner >= 0) c = otf2_comm_get(&g.comms, g.api, 0);
  int r = c ? otf2_comm_rank(c, partner) : -1;
  if (r < 0) return -1;
  *comm = c->ref;
  *rank = (uint32_t)r;
  return 0;
}

static OTF2_ErrorCode write_msg(loc_t *l, uint64_t t, int recv, int comm_id, int partner,
                                int tag, uint64_t bytes) {
  uint32_t comm, rank;
  if (msg_where(comm_id, partner, &comm, &rank)) return OTF2_SUCCESS; /* no one to name */
  uint32_t utag = tag < 0 ? 0 : (uint32_t)tag;
  return recv ? OTF2_EvtWriter_MpiRecv(l->w, NULL, at(l, t), rank, comm, utag, bytes)
              : OTF2_EvtWriter_MpiSend(l->w, NULL, at(l, t), rank, comm, utag, bytes);
}

/* The records inside the call's Enter and Leave (under g.mu). */
static OTF2_ErrorCode mpi_records(loc_t *l, const ballast_tool_mpi_exit_t *ev) {
  OTF2_ErrorCode e = OTF2_SUCCESS;
  uint64_t done = 0; /* bytes of the messages completed in the call */
  for (int i = 0; i < l->npend; i++) done += l->pend[i].bytes;
  if (ev->partner >= 0 && (is_send(ev->name) || is_sendrecv(ev->name)))
    e = write_msg(l, ev->t_begin_ns, 0, ev->comm_id, ev->partner, ev->tag,
                  is_sendrecv(ev->name) ? ev->bytes - (done < ev->bytes ? done : ev->bytes)
                  : ev->bytes ? ev->bytes : ev->posted_bytes);
  for (int i = 0; i < l->npend && e == OTF2_SUCCESS; i++) {
    const pending_t *p = &l->pend[i];
    if (p->recv || is_persistent_send(p->name))
      e = write_msg(l, p->t, p->recv, p->comm_id, p->partner, p->tag, p->bytes);
  }
  l->npend = 0;
  if (e != OTF2_SUCCESS) return e;
  if (ev->partner >= 0 && is_recv(ev->name)) return write_msg(l, ev->t_ns, 1, ev->comm_id,
                                                              ev->partner, ev->tag, ev->bytes);
  const coll_t *c = find_coll(ev->name);
  otf2_comm_t *wc = c ? otf2_comm_get(&g.comms, g.api, ev->comm_id) : NULL;
  if (wc) {
    int r = c->rooted && ev->partner >= 0 ? otf2_comm_rank(wc, ev->partner) : -1;
    uint32_t root = r >= 0 ? (uint32_t)r : OTF2_UNDEFINED_UINT32;
    e = OTF2_EvtWriter_MpiCollectiveBegin(l->w, NULL, at(l, ev->t_begin_ns));
    if (e == OTF2_SUCCESS)
      e = OTF2_EvtWriter_MpiCollectiveEnd(l->w, NULL, at(l, ev->t_ns), c->op, wc->ref, root,
                                          ev->bytes, ev->bytes);
  }
  return e;
}

static void on_mpi_complete(const ballast_tool_mpi_complete_t *ev, void *u) {
  if (ev->lib && !g.with_lib) return;
  pthread_mutex_lock(&g.mu);
  loc_t *l;
  if (g.open && (l = location())) {
    if (l->npend == l->cappend) {
      int cap = l->cappend ? 2 * l->cappend : 16;
      pending_t *np = realloc(l->pend, (size_t)cap * sizeof *np);
      if (np) l->pend = np, l->cappend = cap;
    }
    if (l->npend < l->cappend)
      l->pend[l->npend++] = (pending_t){.t = ev->t_ns, .name = ev->name, .recv = ev->recv,
                                        .partner = ev->partner, .tag = ev->tag,
                                        .comm_id = ev->comm_id, .bytes = ev->bytes};
    else
      g.errors++;
  }
  pthread_mutex_unlock(&g.mu);
}

static void on_mpi_exit(const ballast_tool_mpi_exit_t *ev, void *u) {
  if (ev->lib && !g.with_lib) return;
  pthread_mutex_lock(&g.mu);
  loc_t *l;
  uint32_t id;
  if (g.open && (l = location()) &&
      (id = region_id(ev->lib ? K_MPI_LIB : K_MPI, ev->name)) != UINT32_MAX) {
    /* Met while it exists: a request's communicator may be freed before
     * the wait that completes it. */
    if (ev->comm_id >= 0) (void)otf2_comm_get(&g.comms, g.api, ev->comm_id);
    OTF2_ErrorCode e = OTF2_EvtWriter_Enter(l->w, NULL, at(l, ev->t_begin_ns), id);
    if (e == OTF2_SUCCESS) e = mpi_records(l, ev);
    if (e == OTF2_SUCCESS) e = OTF2_EvtWriter_Leave(l->w, NULL, at(l, ev->t_ns), id);
    g.errors += e != OTF2_SUCCESS;
  } else if (g.open) {
    g.errors++;
  }
  pthread_mutex_unlock(&g.mu);
}

/* ---- finalize: unification and definitions ----------------------------- */

static void ot_free(void) {
  reg_t *r, *tmp;
  HASH_ITER(hh, g.regs, r, tmp) {
    HASH_DEL(g.regs, r);
    free(r->key);
    free(r);
  }
  free(g.by_id);
  for (int t = 0; t < g.nlocs; t++) {
    trace_nest_free(&g.locs[t].nest);
    free(g.locs[t].pend);
  }
  free(g.locs);
  g.by_id = NULL;
  g.locs = NULL;
  otf2_comms_free(&g.comms);
  g.nregs = g.capregs = 0;
  g.nlocs = g.caplocs = 0;
  if (g.comm != MPI_COMM_NULL) PMPI_Comm_free(&g.comm);
}

static void write_regions(OTF2_GlobalDefWriter *gw, uint32_t *ns, const otf2_unified_t *u) {
  static const char *const desc[K_N] = {"ballast region", "ballast task", "MPI function",
                                         "MPI call made by ballast itself",
                                         "ballast load balancing"};
  OTF2_StringRef empty = otf2_gstr(gw, ns, ""), d[K_N];
  for (int k = 0; k < K_N; k++) d[k] = otf2_gstr(gw, ns, desc[k]);
  for (uint32_t i = 0; i < u->nkeys; i++) {
    int kind = u->keys[i][0] - '0';
    if (kind < 0 || kind >= K_N) kind = K_REGION;
    const char *name = u->keys[i] + 1;
    size_t l = strlen(kind_prefix[kind]) + strlen(name) + 1;
    char *full = malloc(l);
    if (full) snprintf(full, l, "%s%s", kind_prefix[kind], name);
    OTF2_StringRef sn = otf2_gstr(gw, ns, full ? full : name);
    free(full);
    int mpi = kind == K_MPI || kind == K_MPI_LIB;
    OTF2_GlobalDefWriter_WriteRegion(gw, i, sn, sn, d[kind],
                                     mpi ? mpi_role(name) : OTF2_REGION_ROLE_CODE,
                                     mpi ? OTF2_PARADIGM_MPI : OTF2_PARADIGM_USER,
                                     OTF2_REGION_FLAG_NONE, empty, 0, 0);
  }
}

/* Rank 0: locations of every rank (nloc[p] threads, their event counts). */
static void write_locations(OTF2_GlobalDefWriter *gw, uint32_t *ns, const int *nloc,
                            const uint64_t *events) {
  char buf[96];
  OTF2_StringRef mach = otf2_gstr(gw, ns, "machine"), cls = otf2_gstr(gw, ns, "machine");
  OTF2_GlobalDefWriter_WriteSystemTreeNode(gw, 0, mach, cls, OTF2_UNDEFINED_SYSTEM_TREE_NODE);
  size_t k = 0;
  for (int p = 0; p < g.size; p++) {
    snprintf(buf, sizeof buf, "rank %d", p);
    OTF2_GlobalDefWriter_WriteLocationGroup(gw, (OTF2_LocationGroupRef)p, otf2_gstr(gw, ns, buf),
                                            OTF2_LOCATION_GROUP_TYPE_PROCESS, 0,
                                            OTF2_UNDEFINED_LOCATION_GROUP);
    for (int t = 0; t < nloc[p]; t++) {
      snprintf(buf, sizeof buf, "rank %d thread %d", p, t);
      OTF2_GlobalDefWriter_WriteLocation(gw, (uint64_t)p + (uint64_t)t * (uint64_t)g.size,
                                         otf2_gstr(gw, ns, buf), OTF2_LOCATION_TYPE_CPU_THREAD,
                                         events[k++], (OTF2_LocationGroupRef)p);
    }
  }
}

/* Rank 0: the global definitions. */
static int write_global_defs(const otf2_unified_t *u, const otf2_unified_t *uc, const int *nloc,
                             const uint64_t *events, uint64_t t0, uint64_t t1) {
  OTF2_GlobalDefWriter *gw = OTF2_Archive_GetGlobalDefWriter(g.ar);
  if (!gw) return BALLAST_EIO;
  uint32_t ns = 0;
  OTF2_GlobalDefWriter_WriteClockProperties(gw, 1000000000ull, t0, t1 > t0 ? t1 - t0 : 0,
                                            OTF2_UNDEFINED_TIMESTAMP);
  write_regions(gw, &ns, u);
  write_locations(gw, &ns, nloc, events);
  otf2_write_comms(gw, &ns, g.size, uc);
  return OTF2_Archive_CloseGlobalDefWriter(g.ar, gw) == OTF2_SUCCESS ? 0 : BALLAST_EIO;
}

/* This rank's local definitions: region mapping and clock offsets, for each
 * of its locations. */
static int write_local_defs(const otf2_unified_t *u, const otf2_unified_t *uc,
                            const trace_clock_sample_t *s1) {
  int rc = 0;
  if (OTF2_Archive_OpenDefFiles(g.ar) != OTF2_SUCCESS) return BALLAST_EIO;
  for (int t = 0; t < g.nlocs; t++) {
    OTF2_DefWriter *dw = OTF2_Archive_GetDefWriter(g.ar, g.locs[t].id);
    if (!dw) {
      rc = BALLAST_EIO;
      continue;
    }
    OTF2_IdMap *m = g.nregs ? OTF2_IdMap_CreateFromUint64Array(g.nregs, u->map, false) : NULL;
    if (m) {
      OTF2_DefWriter_WriteMappingTable(dw, OTF2_MAPPING_REGION, m);
      OTF2_IdMap_Free(m);
    }
    m = g.comms.n ? OTF2_IdMap_CreateFromUint64Array(g.comms.n, uc->map, false) : NULL;
    if (m) {
      OTF2_DefWriter_WriteMappingTable(dw, OTF2_MAPPING_COMM, m);
      OTF2_IdMap_Free(m);
    }
    /* Both samples when they give a plausible drift (readers interpolate
     * between them); otherwise the better one alone (trace_clock_global). */
    int both = trace_clock_drift_ok(&g.s0, s1);
    const trace_clock_sample_t *one =
        !both && s1->t_local > g.s0.t_local && s1->rtt < g.s0.rtt ? s1 : &g.s0;
    OTF2_DefWriter_WriteClockOffset(dw, one->t_local, one->offset, (double)one->rtt / 2);
    if (both)
      OTF2_DefWriter_WriteClockOffset(dw, s1->t_local, s1->offset, (double)s1->rtt / 2);
    OTF2_Archive_CloseDefWriter(g.ar, dw);
  }
  if (OTF2_Archive_CloseDefFiles(g.ar) != OTF2_SUCCESS) rc = BALLAST_EIO;
  return rc;
}

/* Every rank's thread count and event counts to rank 0 (nloc, events). */
static void gather_locations(const uint64_t *mine, int **nloc, uint64_t **events) {
  int *displs = NULL, tot = 0, n = mine ? g.nlocs : 0; /* no counts: out of memory */
  *nloc = g.rank == 0 ? calloc((size_t)g.size, sizeof **nloc) : NULL;
  PMPI_Gather(&n, 1, MPI_INT, *nloc, 1, MPI_INT, 0, g.comm);
  if (g.rank == 0) {
    displs = calloc((size_t)g.size, sizeof *displs);
    for (int p = 0; p < g.size && displs && *nloc; p++) displs[p] = tot, tot += (*nloc)[p];
    *events = calloc((size_t)tot + 1, sizeof **events);
  }
  PMPI_Gatherv(mine, n, MPI_UINT64_T, g.rank == 0 ? *events : NULL, *nloc, displs,
               MPI_UINT64_T, 0, g.comm);
  free(displs);
}

/* Closes the event writers (under g.mu) and returns each location's event
 * count (caller frees). */
static uint64_t *close_events(void) {
  uint64_t *n = calloc((size_t)g.nlocs + 1, sizeof *n);
  pthread_mutex_lock(&g.mu);
  /* What is still open is left now, innermost first, on every location. */
  uint64_t t = g.t_end ? g.t_end : g.api->now_ns();
  for (int k = 0; g.open && k < g.nlocs; k++)
    while (g.locs[k].nest.n > 0) leave_top(&g.locs[k], t);
  g.open = 0;
  for (int t = 0; t < g.nlocs; t++) {
    if (n) OTF2_EvtWriter_GetNumberOfEvents(g.locs[t].w, &n[t]);
    OTF2_Archive_CloseEvtWriter(g.ar, g.locs[t].w);
  }
  pthread_mutex_unlock(&g.mu);
  OTF2_Archive_CloseEvtFiles(g.ar);
  return n;
}

static void on_finalize(const ballast_tool_finalize_t *ev, void *u0) {
  trace_clock_sample_t s1;
  /* The finalize event's time ends what is still open (close_events). */
  g.t_end = ev->t_ns;
  if (trace_clock_sync(g.comm, g.api->now_ns, &s1)) memset(&s1, 0, sizeof s1);
  uint64_t *nev = close_events();
  /* The trace's time span on rank 0's clock. */
  uint64_t lo = g.t_min ? trace_clock_global(g.t_min, &g.s0, &s1) : UINT64_MAX;
  uint64_t hi = g.t_max ? trace_clock_global(g.t_max, &g.s0, &s1) : 0, glo = 0, ghi = 0;
  PMPI_Reduce(&lo, &glo, 1, MPI_UINT64_T, MPI_MIN, 0, g.comm);
  PMPI_Reduce(&hi, &ghi, 1, MPI_UINT64_T, MPI_MAX, 0, g.comm);
  otf2_unified_t u = {0}, uc = {0};
  char *all = NULL, *allc = NULL;
  const char **keys = malloc(((size_t)g.nregs + g.comms.n + 1) * sizeof *keys);
  for (uint32_t i = 0; keys && i < g.nregs; i++) keys[i] = g.by_id[i]->key;
  for (uint32_t i = 0; keys && i < g.comms.n; i++) keys[g.nregs + i] = g.comms.v[i]->key;
  int rc = otf2_unify(g.comm, keys, keys ? g.nregs : 0, &u, &all);
  int rcc = otf2_unify(g.comm, keys ? keys + g.nregs : NULL, keys ? g.comms.n : 0, &uc, &allc);
  if (!rc) rc = rcc;
  if (!rc && !keys) rc = BALLAST_ENOMEM;
  if (!rc) rc = write_local_defs(&u, &uc, &s1);
  int *nloc = NULL;
  uint64_t *events = NULL;
  gather_locations(nev, &nloc, &events);
  if (g.rank == 0 && !rc && nloc && events)
    rc = write_global_defs(&u, &uc, nloc, events, glo, ghi);
  PMPI_Barrier(g.comm);
  if (OTF2_Archive_Close(g.ar) != OTF2_SUCCESS && !rc) rc = BALLAST_EIO;
  g.ar = NULL;
  uint64_t errs = g.errors, allerrs = 0;
  PMPI_Reduce(&errs, &allerrs, 1, MPI_UINT64_T, MPI_SUM, 0, g.comm);
  if (rc)
    trace_log(g.rank, TOOL, "writing the OTF2 archive failed (%s)", trace_strerror(rc));
  else if (g.rank == 0 && allerrs)
    trace_log(0, TOOL, "%" PRIu64 " events could not be recorded (out of memory or OTF2 errors)",
              allerrs);
  else if (g.rank == 0 && !trace_env_flag("BALLAST_TRACE_QUIET", 0))
    trace_log(0, TOOL, "wrote an OTF2 archive of %d ranks (traces.otf2)", g.size);
  free(nev);
  free(nloc);
  free(events);
  free(u.map);
  free(u.keys);
  free(all);
  free(uc.map);
  free(uc.keys);
  free(allc);
  free(keys);
  ot_free();
}

/* ---- attach ------------------------------------------------------------ */

static OTF2_FlushType pre_flush(void *u, OTF2_FileType ft, OTF2_LocationRef loc, void *cb,
                                bool final) {
  return OTF2_FLUSH;
}
static OTF2_TimeStamp post_flush(void *u, OTF2_FileType ft, OTF2_LocationRef loc) {
  return g.api->now_ns();
}
static const OTF2_FlushCallbacks flush_cbs = {.otf2_pre_flush = pre_flush,
                                              .otf2_post_flush = post_flush};

/* Bounded memory. Without memory callbacks OTF2 keeps every chunk of events
 * in memory until the archive closes. With them, an allocation refused
 * (NULL) makes OTF2 flush the buffer's chunks to its file (pre_flush
 * answers OTF2_FLUSH) and free them (free_all), then ask again: so each
 * event buffer holds at most g_chunks chunks. Definition buffers (small)
 * are not limited. The callbacks run under g.mu or at finalize, each on its
 * own buffer's data. */
typedef struct chunks {
  int n;
  void *c[];
} chunks_t;
static int g_chunks = 1;

static void *mem_alloc(void *u, OTF2_FileType ft, OTF2_LocationRef loc, void **pb, uint64_t size) {
  chunks_t *ch = *pb;
  int max = ft == OTF2_FILETYPE_EVENTS ? g_chunks : 64;
  if (!ch) {
    if (!(ch = calloc(1, sizeof *ch + (size_t)max * sizeof ch->c[0]))) return NULL;
    *pb = ch;
  }
  if (ch->n == max) return NULL; /* full: OTF2 flushes, frees, asks again */
  void *p = malloc(size);
  if (p) ch->c[ch->n++] = p;
  return p;
}

static void mem_free_all(void *u, OTF2_FileType ft, OTF2_LocationRef loc, void **pb, bool final) {
  chunks_t *ch = *pb;
  if (!ch) return;
  for (int i = 0; i < ch->n; i++) free(ch->c[i]);
  ch->n = 0;
  if (final) {
    free(ch);
    *pb = NULL;
  }
}
static const OTF2_MemoryCallbacks mem_cbs = {.otf2_allocate = mem_alloc,
                                             .otf2_free_all = mem_free_all};

/* Opens the archive for writing. A failure after OTF2 took the collective
 * callbacks leaves g.ar NULL without closing it: OTF2 3.0 frees the MPI
 * callbacks' data when their setup fails (e.g. the archive's directory
 * exists) but keeps calling them, so closing would crash; the handle is
 * left behind instead (this happens once, at init). */
static int ot_open(const char *dir, uint64_t chunk) {
  g.ar = OTF2_Archive_Open(dir, "traces", OTF2_FILEMODE_WRITE, chunk,
                           OTF2_CHUNK_SIZE_DEFINITIONS_DEFAULT, OTF2_SUBSTRATE_POSIX,
                           OTF2_COMPRESSION_NONE);
  if (!g.ar) return BALLAST_EIO;
  if (OTF2_Archive_SetFlushCallbacks(g.ar, &flush_cbs, NULL) != OTF2_SUCCESS ||
      OTF2_Archive_SetMemoryCallbacks(g.ar, &mem_cbs, NULL) != OTF2_SUCCESS ||
      OTF2_MPI_Archive_SetCollectiveCallbacks(g.ar, MPI_COMM_WORLD, MPI_COMM_NULL) !=
          OTF2_SUCCESS) {
    g.ar = NULL;
    return BALLAST_EIO;
  }
  if (OTF2_Archive_SetCreator(g.ar, "ballast OTF2 writer") != OTF2_SUCCESS ||
      OTF2_Archive_OpenEvtFiles(g.ar) != OTF2_SUCCESS)
    return BALLAST_EIO;
  return 0;
}

/* Rank 0's verdict on the archive's place: OTF2 refuses to write over an
 * archive, and finding out inside OTF2 leaves it in the state above. */
static int ot_exists(const char *dir) {
  int exists = 0;
  if (g.rank == 0) {
    size_t n = strlen(dir) + 16;
    char *p = malloc(n);
    if (p) {
      snprintf(p, n, "%s/traces.otf2", dir);
      exists = access(p, F_OK) == 0;
      snprintf(p, n, "%s/traces", dir);
      exists = exists || access(p, F_OK) == 0;
      free(p);
    }
  }
  PMPI_Bcast(&exists, 1, MPI_INT, 0, g.comm);
  return exists;
}

static int ot_setup(const ballast_tool_api_v1_t *api) {
  g.api = api;
  g.rank = api->world_rank();
  g.size = api->world_size();
  g.with_lib = trace_env_flag("BALLAST_TRACE_LIB", 1);
  const char *d = getenv("BALLAST_TRACE_OTF2");
  const char *dir = d && *d ? d : "ballast_otf2";
  /* The buffer in chunks of 1 MiB (at least one chunk of 256 KiB, OTF2's
   * smallest; at most 64). */
  uint64_t buf = trace_env_size("BALLAST_TRACE_BUFFER", 4u << 20, 4096, g.rank, TOOL);
  uint64_t chunk = buf < (1u << 20) ? (buf < 256u * 1024 ? 256u * 1024 : buf) : 1u << 20;
  g_chunks = buf / chunk < 1 ? 1 : buf / chunk > 64 ? 64 : (int)(buf / chunk);
  if (PMPI_Comm_dup(MPI_COMM_WORLD, &g.comm)) return BALLAST_EMPI;
  int rc = trace_clock_sync(g.comm, api->now_ns, &g.s0);
  if (rc) return rc;
  if (ot_exists(dir)) {
    if (g.rank == 0)
      trace_log(0, TOOL, "%s/traces.otf2 exists already: not written over (remove it or set "
              "BALLAST_TRACE_OTF2 to another directory)", dir);
    return BALLAST_EEXIST;
  }
  rc = ot_open(dir, chunk);
  if (!rc) {
    /* The init thread's location exists even if it records nothing, so
     * every rank has its location r in the archive. */
    pthread_mutex_lock(&g.mu);
    if (!writer()) rc = BALLAST_ENOMEM;
    pthread_mutex_unlock(&g.mu);
  }
  int bad = rc != 0, anybad = 0;
  if (PMPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, g.comm)) return BALLAST_EMPI;
  if (anybad) {
    trace_log(g.rank, TOOL, "cannot create the OTF2 archive %s/traces.otf2 (%s)", dir,
              rc ? "here" : "on another rank");
    return rc ? rc : BALLAST_EREMOTE;
  }
  g.open = 1;
  return 0;
}

static const trace_callbacks_t ot_callbacks = {
    .region_enter = on_region_enter, .region_exit = on_region_exit,
    .task_begin = on_task_begin,     .task_end = on_task_end,
    .mpi_exit = on_mpi_exit,         .remap_begin = on_remap_begin,
    .remap_end = on_remap_end,       .finalize = on_finalize,
    .mpi_complete = on_mpi_complete, .rep_outlier = on_rep_outlier};

__attribute__((visibility("default"))) int ballast_tool_init_v1(const ballast_tool_api_v1_t *api,
                                                                 ballast_tool_t *tool) {
  int rc = trace_init_check(api, g_attached, TOOL);
  if (rc) return rc;
  rc = ot_setup(api);
  if (rc == 0) rc = trace_register(api, tool, &ot_callbacks);
  if (rc) {
    g.open = 0;
    if (g.ar) OTF2_Archive_Close(g.ar);
    g.ar = NULL;
    ot_free();
    return rc;
  }
  g_attached = 1;
  return 0;
}
