/*
 * Repeated regions: each instance of a region marked repeated is one
 * repetition, kept in a bounded series and labelled online (first, warm-up,
 * outlier, good) by common's classifier (common/reps.h, the published
 * method of runtime-variability section 4.5).
 *
 * One state per repeated region, created at the region's first instance on
 * the thread that called MPI_Init (thread 0), which alone records
 * repetitions (other threads' instances count in the region's figures as
 * usual). The state holds the series as columns of a ring of `keep`
 * repetitions (BALLAST_REPEAT_KEEP), allocated at creation: a repetition
 * allocates nothing.
 *
 * Across ranks: every K repetitions (BALLAST_REPEAT_REDUCE) the state
 * starts one MPI_Iallreduce of K records {max, argmax, min, sum, count,
 * key, key} on mon's own duplicate of MPI_COMM_WORLD, and tests it at the
 * following repetitions: O(K) data per rank whatever the number of ranks,
 * and no rank waits for another inside a repetition. The key (the region's
 * path hashed with the batch number) tells a batch that mixed two regions
 * or two batches (ranks that repeat differently) from a good one: its
 * records stay "not reduced". Batches start in the order their K-th
 * repetitions end, whatever their region, so every rank starts the same
 * sequence of collectives: at most MON__REP_INFLIGHT are in flight, the
 * next wait in a queue (MON__REP_QUEUE) and start, in order, when one
 * completes; nothing waits. A rank so far behind that the queue fills stops
 * reducing (the others' batches are then mixed, detected and left out). At
 * MPI_Finalize (mon__reps_finalize, collective) the ranks agree on the
 * largest number of batches any rank started or queued, start the queued
 * ones and neutral ones up to it and complete them all, so no collective is
 * left unmatched.
 */
#define _GNU_SOURCE /* RUSAGE_THREAD */
#include <math.h>
#include <stdio.h>
#include <sys/resource.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "common/common_internal.h"
#include "common/env.h"
#include "common/json.h"
#include "common/reps.h"
#include "mon/mon_core.h"
#include "tool/tool_internal.h"

#define MON__REP_INFLIGHT 8
#define MON__REP_QUEUE 1024
#define REC 7 /* doubles per reduced record */

struct mon__rep {
  int region;
  uint32_t key;              /* hash of the region's path */
  uint32_t keep;             /* ring capacity */
  uint64_t n;                /* repetitions recorded (atomic, release) */
  ballast__reps_t cls;
  ballast__reps_stats_t goodl; /* the repetitions labelled good (since the
                                  warm-up's end): what PIA answers */
  int nuser;                 /* user counters registered at creation */
  int nmpit;                 /* MPI_T variables read at creation */
  long long ru0[4];          /* getrusage at the repetition's begin */
  double cur_user[MON_REP_USER_MAX];
  uint64_t timer0[MON_REP_USER_MAX];
  /* ring columns, index i % keep */
  double *wall, *mpi, *cpu, *user;
  uint64_t *bytes, *calls;
  unsigned char *label;
  double *mpit;              /* keep x nmpit: each variable's change */
  int nhw;                   /* PAPI counters (mon__papi_nevents() at creation) */
  long long *hw;             /* keep x 4: their change, where the machine has them */
  long long *ru;             /* keep x 4: vcsw, ivcsw, minflt, majflt */
  /* across ranks, per repetition */
  double *xmax, *xmin, *xmean, *xwait;
  int *xslow;
  unsigned char *xok;
  uint64_t nbatch;                /* batches this region reached */
  uint64_t skipped;               /* batches never reduced (queue full) */
  mon__rep_t *next;
};

/* A batch: queued, then in flight. */
typedef struct {
  mon__rep_t *rep;
  uint64_t first, batch;
} batch_t;

static struct {
  int n;                          /* in flight, oldest first */
  MPI_Request req[MON__REP_INFLIGHT];
  batch_t b[MON__REP_INFLIGHT];
  double *buf[MON__REP_INFLIGHT]; /* 2 * K * REC each: send, then receive */
  batch_t queue[MON__REP_QUEUE];  /* waiting to start, a ring */
  int qhead, qlen;
  int broken;                     /* the queue overflowed: no more batches */
} fl;

static mon__rep_t *reps_all;        /* every state, newest first */
static int rep_k = 16;              /* BALLAST_REPEAT_REDUCE */
static int rep_keep = 4096;         /* BALLAST_REPEAT_KEEP */
static ballast__reps_params_t rep_rules;
static MPI_Comm rep_comm = MPI_COMM_NULL;
static MPI_Datatype rep_type = MPI_DATATYPE_NULL;
static MPI_Op rep_op = MPI_OP_NULL;
static uint64_t rep_started;        /* Iallreduce calls started on rep_comm */
static int rep_size = 1, rep_rank;  /* of rep_comm */
static char user_names[MON_REP_USER_MAX][64];
static int user_count;

/* ---- the reduction's operator -------------------------------------------------------- */

/* {max, argmax, min, sum, count, key_min, key_max}: an empty record (count
 * 0) is neutral. */
static void rep_combine(void *in, void *inout, int *len, MPI_Datatype *dt) {
  (void)dt;
  const double *a = in;
  double *b = inout;
  for (int i = 0; i < *len; i++, a += REC, b += REC) {
    if (a[4] == 0)
      continue;
    if (b[4] == 0) {
      memcpy(b, a, REC * sizeof *b);
      continue;
    }
    if (a[0] > b[0] || (a[0] == b[0] && a[1] < b[1])) {
      b[0] = a[0];
      b[1] = a[1];
    }
    b[2] = a[2] < b[2] ? a[2] : b[2];
    b[3] += a[3];
    b[4] += a[4];
    b[5] = a[5] < b[5] ? a[5] : b[5];
    b[6] = a[6] > b[6] ? a[6] : b[6];
  }
}

void mon__reps_sections(void);

/* ---- set-up ---------------------------------------------------------------------------- */

static void read_rules(void) {
  ballast__reps_params_init(&rep_rules);
  ballast__env_int("BALLAST_REPEAT_WARMUP_MIN", &rep_rules.min_warmup);
  ballast__env_double("BALLAST_REPEAT_WARMUP_DROP", &rep_rules.drop);
  ballast__env_int("BALLAST_REPEAT_SETTLE", &rep_rules.settle);
  ballast__env_int("BALLAST_REPEAT_WARMUP_MAX", &rep_rules.max_warmup);
  ballast__env_double("BALLAST_REPEAT_OUTLIER", &rep_rules.outlier);
  ballast__reps_t probe;
  if (ballast__reps_init(&probe, &rep_rules) != 0) {
    /* Each value was within its bounds: only the settle and the warm-up's
     * earliest end disagree. Keep the others. */
    ballast__reps_params_t def;
    ballast__reps_params_init(&def);
    int rank = 0, up = 0;
    PMPI_Initialized(&up);
    if (up)
      PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0)
      BALLAST_WARN("mon: BALLAST_REPEAT_SETTLE (%d) must exceed BALLAST_REPEAT_WARMUP_MIN (%d); "
                   "both take their defaults (%d, %d), the other rules are kept",
                   rep_rules.settle, rep_rules.min_warmup, def.settle, def.min_warmup);
    rep_rules.settle = def.settle;
    rep_rules.min_warmup = def.min_warmup;
    if (ballast__reps_init(&probe, &rep_rules) != 0)
      rep_rules = def;
  }
}

/* Marks the names of BALLAST_REPEAT (comma-separated). */
static void mark_env(void) {
  const char *v = ballast__env_string("BALLAST_REPEAT");
  if (!v)
    return;
  char name[MON__NAME_MAX + 1];
  for (const char *p = v; *p;) {
    const char *e = strchr(p, ',');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    if (len > 0 && len <= MON__NAME_MAX) {
      memcpy(name, p, len);
      name[len] = 0;
      mon__region_mark_repeated(name);
    } else if (len == 0) {
      mon__warn_once("repempty", "env",
                     "mon: BALLAST_REPEAT=\"%s\" holds an empty name (ignored; names are "
                     "separated by single commas)", v);
    } else if (len > MON__NAME_MAX) {
      mon__warn_once("replong", "env",
                     "mon: BALLAST_REPEAT holds a name longer than %d bytes (ignored)",
                     MON__NAME_MAX);
    }
    p += len + (e ? 1 : 0);
  }
}

void mon__reps_init(void) {
  rep_k = 16;
  rep_keep = 4096;
  ballast__env_int("BALLAST_REPEAT_REDUCE", &rep_k);
  ballast__env_int("BALLAST_REPEAT_KEEP", &rep_keep);
  if (rep_k > 0 && rep_keep < 2 * rep_k)
    rep_keep = 2 * rep_k; /* a batch's repetitions stay until it completes */
  read_rules();
  mark_env();
  mon__reps_sections();
  int mpi_up = 0;
  PMPI_Initialized(&mpi_up);
  if (!mpi_up)
    rep_k = 0; /* mon started without MPI (its own tests): no batches */
  if (rep_k > 0) {
    PMPI_Comm_dup(MPI_COMM_WORLD, &rep_comm);
    PMPI_Comm_size(rep_comm, &rep_size);
    PMPI_Comm_rank(rep_comm, &rep_rank);
    PMPI_Type_contiguous(REC, MPI_DOUBLE, &rep_type);
    PMPI_Type_commit(&rep_type);
    PMPI_Op_create(rep_combine, 1, &rep_op);
    for (int i = 0; i < MON__REP_INFLIGHT; i++)
      if (!(fl.buf[i] = malloc(2 * (size_t)rep_k * REC * sizeof(double))))
        fl.broken = 1;
    if (fl.broken)
      BALLAST_WARN("mon: out of memory for the repeated regions' cross-rank reductions; "
                   "repetitions are not reduced across ranks");
  }
}

int mon__reps_user_count(void) { return MON__LDACQ(&user_count); }
const char *mon__reps_user_name(int i) {
  return i >= 0 && i < mon__reps_user_count() ? user_names[i] : NULL;
}

/* The region's path, hashed (FNV-1a over "name/parent/..." from the leaf). */
static uint32_t path_key(int id) {
  uint32_t h = 2166136261u;
  for (int r = id; r > 0; r = mon__region_parent(r)) {
    for (const char *s = mon__region_name(r); *s; s++)
      h = (h ^ (unsigned char)*s) * 16777619u;
    h = (h ^ '/') * 16777619u;
  }
  return h & 0xffffffu; /* exact in a double, and in a float's mantissa */
}

static void rep_free(mon__rep_t *r) {
  if (!r)
    return;
  free(r->wall);
  free(r->bytes);
  free(r->label);
  free(r->xslow);
  free(r->mpit);
  free(r->hw);
  free(r->ru);
  free(r);
}

/* A new state for region id (thread 0, outside any repetition). */
mon__rep_t *mon__rep_create(int id) {
  mon__rep_t *r = calloc(1, sizeof *r);
  if (!r)
    return NULL;
  size_t keep = (size_t)rep_keep;
  r->region = id;
  r->key = path_key(id);
  r->keep = (uint32_t)keep;
  r->nuser = mon__reps_user_count();
  ballast__reps_init(&r->cls, &rep_rules);
  ballast__reps_stats_init(&r->goodl);
  /* One block of doubles (wall, mpi, cpu, xmax, xmin, xmean, xwait, user),
   * one of counts (bytes, calls), one of bytes (label, xok). */
  r->wall = malloc(keep * (7 + (size_t)r->nuser) * sizeof(double));
  r->bytes = malloc(keep * 2 * sizeof(uint64_t));
  r->label = calloc(keep, 2);
  r->xslow = malloc(keep * sizeof(int));
  r->nmpit = mon__mpit_n;
  r->mpit = r->nmpit ? malloc(keep * (size_t)r->nmpit * sizeof(double)) : NULL;
  r->ru = malloc(keep * 4 * sizeof(long long));
  r->nhw = mon__papi_nevents();
  r->hw = r->nhw > 0 ? malloc(keep * 4 * sizeof(long long)) : NULL;
  int ok = r->wall && r->bytes && r->label && r->xslow && r->ru && (!r->nmpit || r->mpit) &&
           (!r->nhw || r->hw);
  if (!ok) {
    rep_free(r);
    return NULL;
  }
  r->mpi = r->wall + keep;
  r->cpu = r->mpi + keep;
  r->xmax = r->cpu + keep;
  r->xmin = r->xmax + keep;
  r->xmean = r->xmin + keep;
  r->xwait = r->xmean + keep;
  r->user = r->nuser ? r->xwait + keep : NULL;
  r->calls = r->bytes + keep;
  r->xok = r->label + keep;
  r->next = reps_all;
  MON__STREL(&reps_all, r);
  return r;
}

/* ---- the series ------------------------------------------------------------------------- */

/* Bytes and calls of the application's MPI so far on thread t. */
static void traffic(const mon__tls_t *t, uint64_t *bytes, uint64_t *calls) {
  uint64_t b = 0, c = 0;
  for (int a = 0; a < MON__NACT; a++) {
    b += t->act[a].nbytes;
    c += t->act[a].ncalls;
  }
  *bytes = b;
  *calls = c;
}

/* The thread's context switches and page faults. */
static void rusage4(long long v[4]) {
  struct rusage u;
  if (getrusage(RUSAGE_THREAD, &u) != 0)
    memset(&u, 0, sizeof u);
  v[0] = u.ru_nvcsw;
  v[1] = u.ru_nivcsw;
  v[2] = u.ru_minflt;
  v[3] = u.ru_majflt;
}

void mon__rep_begin(mon__tls_t *t, mon__frame_t *f) {
  mon__rep_t *r = f->rep;
  traffic(t, &f->b0, &f->n0);
  rusage4(r->ru0);
  for (int i = 0; i < r->nuser; i++)
    r->cur_user[i] = 0;
}

static double batch_key(const mon__rep_t *r, uint64_t batch) {
  return (double)((r->key ^ (uint32_t)(batch * 2654435761u)) & 0xffffffu);
}

/* Fills the cross-rank columns of completed batch slot 0. */
static void batch_done(void) {
  const batch_t *bt = &fl.b[0];
  mon__rep_t *r = bt->rep;
  const double *rec = fl.buf[0] + (size_t)rep_k * REC;
  double want = r ? batch_key(r, bt->batch) : -1;
  uint64_t n = r ? MON__LD(&r->n) : 0;
  for (int j = 0; r && j < rep_k; j++, rec += REC) {
    uint64_t i = bt->first + (uint64_t)j;
    if (i + r->keep < n) /* left the ring meanwhile */
      continue;
    size_t s = i % r->keep;
    int ok = rec[4] == (double)rep_size && rec[5] == want && rec[6] == want;
    if (ok) {
      r->xmax[s] = rec[0];
      r->xslow[s] = (int)rec[1];
      r->xmin[s] = rec[2];
      r->xmean[s] = rec[3] / rec[4];
      r->xwait[s] = rec[0] * rec[4] - rec[3];
    }
    MON__STREL(&r->xok[s], (unsigned char)(ok ? 1 : 2));
  }
  double *buf = fl.buf[0];
  for (int i = 1; i < fl.n; i++) {
    fl.req[i - 1] = fl.req[i];
    fl.b[i - 1] = fl.b[i];
    fl.buf[i - 1] = fl.buf[i];
  }
  fl.n--;
  fl.buf[fl.n] = buf;
}

/* Starts batch \a bt (rep NULL: a neutral one) in the next free slot. */
static void batch_start(const batch_t *bt) {
  int slot = fl.n;
  double *send = fl.buf[slot];
  const mon__rep_t *r = bt->rep;
  double key = r ? batch_key(r, bt->batch) : -1;
  uint64_t n = r ? MON__LD(&r->n) : 0;
  for (int j = 0; j < rep_k; j++) {
    uint64_t i = bt->first + (uint64_t)j;
    int have = r && i + r->keep >= n && i < n;
    double w = have ? r->wall[i % r->keep] : 0;
    double v[REC] = {w, rep_rank, w, w, have ? 1 : 0, key, key};
    memcpy(send + (size_t)j * REC, v, sizeof v);
  }
  fl.b[slot] = *bt;
  PMPI_Iallreduce(send, send + (size_t)rep_k * REC, rep_k, rep_type, rep_op, rep_comm,
                  &fl.req[slot]);
  fl.n++;
  rep_started++;
}

/* Completes what has completed and starts queued batches in free slots;
 * with \a wait, blocks until the oldest in flight completes when the
 * queue cannot move otherwise (MPI_Finalize only). */
static void progress(int wait) {
  for (;;) {
    while (fl.n > 0) {
      int done = 0;
      PMPI_Test(&fl.req[0], &done, MPI_STATUS_IGNORE);
      if (!done)
        break;
      batch_done();
    }
    while (fl.qlen > 0 && fl.n < MON__REP_INFLIGHT) {
      batch_start(&fl.queue[fl.qhead]);
      fl.qhead = (fl.qhead + 1) % MON__REP_QUEUE;
      fl.qlen--;
    }
    if (!wait || fl.n == 0)
      return;
    PMPI_Wait(&fl.req[0], MPI_STATUS_IGNORE);
    batch_done();
  }
}

static void batch_queue(mon__rep_t *r, uint64_t first) {
  uint64_t batch = r->nbatch++;
  if (fl.broken || fl.qlen == MON__REP_QUEUE) {
    if (!fl.broken)
      mon__warn_once("repqueue", "queue",
                     "mon: %d cross-rank batches of repeated regions waiting on this rank "
                     "(other ranks far behind, or repeating other regions): no more "
                     "batches are reduced", MON__REP_QUEUE);
    fl.broken = 1;
    r->skipped++;
    return;
  }
  fl.queue[(fl.qhead + fl.qlen) % MON__REP_QUEUE] = (batch_t){r, first, batch};
  fl.qlen++;
}

void mon__rep_end(mon__tls_t *t, mon__frame_t *f, uint64_t wticks, uint64_t mticks,
                  uint64_t cpu_ns) {
  mon__rep_t *r = f->rep;
  uint64_t i = r->n;
  size_t s = i % r->keep;
  double sec = mon__tick_seconds();
  uint64_t b, c;
  traffic(t, &b, &c);
  r->wall[s] = (double)wticks * sec;
  r->mpi[s] = (double)mticks * sec;
  r->cpu[s] = (double)cpu_ns * 1e-9;
  r->bytes[s] = b - f->b0;
  r->calls[s] = c - f->n0;
  for (int u = 0; u < r->nuser; u++)
    r->user[s * (size_t)r->nuser + (size_t)u] = r->cur_user[u];
  for (int v = 0; v < r->nmpit; v++)
    r->mpit[s * (size_t)r->nmpit + (size_t)v] = mon__mpit_last[v];
  if (r->nhw > 0) { /* the frame's counters were read at the region's begin */
    long long v[4];
    mon__papi_read(t, v);
    for (int k = 0; k < r->nhw && k < 4; k++)
      r->hw[s * 4 + (size_t)k] = v[k] - f->hw0[k];
  }
  long long ru[4];
  rusage4(ru);
  for (int k = 0; k < 4; k++)
    r->ru[s * 4 + (size_t)k] = ru[k] - r->ru0[k];
  double median = ballast__reps_median(&r->cls); /* what the repetition is judged by */
  long long we0 = r->cls.warm_end;
  int lab = ballast__reps_add(&r->cls, r->wall[s]);
  r->label[s] = (unsigned char)(lab < 0 ? BALLAST__REP_OUTLIER : lab);
  /* The good statistics follow the labels: a warm-up found late restarts
   * them; repetitions labelled warm-up while undecided stay out of them
   * even when the classifier then decides there was no warm-up. */
  if (r->cls.warm_end != we0 && r->cls.warm_end > 1)
    ballast__reps_stats_init(&r->goodl);
  if (r->label[s] == BALLAST__REP_GOOD)
    ballast__reps_stats_add(&r->goodl, r->wall[s]);
  if (r->label[s] == BALLAST__REP_OUTLIER && TOOL__ON(TOOL__EV_REP_OUTLIER)) {
    ballast_tool_rep_t ev = {.t_ns = mon__ticks_ns(f->t0 + wticks),
                             .t_begin_ns = mon__ticks_ns(f->t0),
                             .name = mon__region_name(r->region),
                             .id = r->region,
                             .index = (long long)i,
                             .wtime = r->wall[s],
                             .median = median};
    tool__emit_rep_outlier(&ev);
  }
  MON__ST(&r->xok[s], 0);
  MON__STREL(&r->n, i + 1);
  if (rep_k <= 0)
    return;
  if ((i + 1) % (uint64_t)rep_k == 0)
    batch_queue(r, i + 1 - (uint64_t)rep_k);
  progress(0);
}

/* ---- user counters and timers ------------------------------------------------------------- */

int mon_rep_counter_create(const char *name) {
  if (!name || !*name) {
    mon__warn_once("repctr", name ? "empty" : "null",
                   "mon: mon_rep_counter_create with %s name (refused)",
                   name ? "an empty" : "a NULL");
    return BALLAST_EINVAL;
  }
  if (strlen(name) >= sizeof user_names[0]) {
    char head[33];
    snprintf(head, sizeof head, "%.32s", name);
    mon__warn_once("repctrlong", head,
                   "mon: mon_rep_counter_create: the name \"%s...\" is longer than %d "
                   "characters (refused)", head, (int)sizeof user_names[0] - 1);
    return BALLAST_ENAMETOOLONG;
  }
  int n = mon__reps_user_count();
  for (int i = 0; i < n; i++)
    if (!strcmp(user_names[i], name))
      return i;
  if (n == MON_REP_USER_MAX) {
    mon__warn_once("repctrmax", name,
                   "mon: mon_rep_counter_create(\"%s\"): already %d counters and timers, "
                   "the most a repetition keeps (refused)", name, MON_REP_USER_MAX);
    return BALLAST_ERANGE;
  }
  snprintf(user_names[n], sizeof user_names[n], "%s", name);
  MON__STREL(&user_count, n + 1);
  return n;
}

/* The innermost repeated region open on the calling thread, NULL if none. */
static mon__frame_t *innermost(void) {
  mon__tls_t *t = mon__tl_self;
  if (!t)
    return NULL;
  for (int d = t->depth - 1; d >= 0; d--)
    if (t->stack[d].rep)
      return &t->stack[d];
  return NULL;
}

static int user_check(int id, const char *fn) {
  if (id < 0 || id >= mon__reps_user_count()) {
    mon__warn_once("repid", fn, /* once per function: bad ids are unbounded */
                   "mon: %s(%d): no such counter or timer (mon_rep_counter_create "
                   "returns the ids, %d so far)", fn, id, mon__reps_user_count());
    return BALLAST_ENOTFOUND;
  }
  return MON__LD(&mon__state) == MON__ON ? 1 : 0;
}

int mon_rep_counter_add(int id, double value) {
  int rc = user_check(id, "mon_rep_counter_add");
  if (rc <= 0)
    return rc;
  if (!isfinite(value)) {
    mon__warn_once("repnan", user_names[id],
                   "mon: mon_rep_counter_add: a value that is not finite for counter "
                   "\"%s\" (refused; the counter keeps its sum)", user_names[id]);
    return BALLAST_EINVAL;
  }
  mon__frame_t *f = innermost();
  if (f && id < f->rep->nuser)
    f->rep->cur_user[id] += value;
  return 0;
}

int mon_rep_timer_start(int id) {
  int rc = user_check(id, "mon_rep_timer_start");
  if (rc <= 0)
    return rc;
  mon__frame_t *f = innermost();
  if (f && id < f->rep->nuser)
    f->rep->timer0[id] = mon__ticks();
  return 0;
}

int mon_rep_timer_stop(int id) {
  int rc = user_check(id, "mon_rep_timer_stop");
  if (rc <= 0)
    return rc;
  mon__frame_t *f = innermost();
  if (f && id < f->rep->nuser && f->rep->timer0[id]) {
    f->rep->cur_user[id] += (double)(mon__ticks() - f->rep->timer0[id]) * mon__tick_seconds();
    f->rep->timer0[id] = 0;
  }
  return 0;
}

/* ---- the end ------------------------------------------------------------------------------- */

void mon__reps_finalize(void) {
  if (rep_comm == MPI_COMM_NULL)
    return;
  /* Every rank starts its queued batches, then neutral ones up to the
   * busiest rank's count, on the reduction communicator, and completes
   * them all; the count is agreed on MPI_COMM_WORLD, which carries none of
   * the batches. A rank whose queue overflowed still takes part. */
  unsigned long long mine = rep_started + (unsigned long long)fl.qlen, most = 0;
  PMPI_Allreduce(&mine, &most, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
  int can = fl.buf[MON__REP_INFLIGHT - 1] != NULL;
  if (!can) {
    BALLAST_WARN("mon: no buffers for the cross-rank batches; MPI_Finalize may wait");
    return;
  }
  progress(1);
  while (rep_started < most) {
    if (fl.n == MON__REP_INFLIGHT) {
      PMPI_Wait(&fl.req[0], MPI_STATUS_IGNORE);
      batch_done();
    }
    batch_t neutral = {NULL, 0, 0};
    batch_start(&neutral);
  }
  progress(1);
}

void mon__reps_free(void) {
  mon__rep_t *r = reps_all;
  reps_all = NULL;
  while (r) {
    mon__rep_t *n = r->next;
    rep_free(r);
    r = n;
  }
  if (rep_op != MPI_OP_NULL) {
    int fin = 0;
    PMPI_Finalized(&fin);
    if (!fin) {
      PMPI_Op_free(&rep_op);
      PMPI_Type_free(&rep_type);
      PMPI_Comm_free(&rep_comm);
    }
  }
  rep_op = MPI_OP_NULL;
  rep_type = MPI_DATATYPE_NULL;
  rep_comm = MPI_COMM_NULL;
  rep_started = 0;
  for (int i = 0; i < MON__REP_INFLIGHT; i++)
    free(fl.buf[i]);
  memset(&fl, 0, sizeof fl);
}

/* ---- read side ------------------------------------------------------------------------------ */

int mon__rep_info(int region, mon__repinfo_t *out) {
  int rc = mon__region_is_repeated(region);
  if (rc <= 0)
    return rc < 0 ? rc : BALLAST_ESTATE;
  memset(out, 0, sizeof *out);
  mon__rep_t *r = mon__region_rep(region);
  if (!r) { /* marked, not yet entered on thread 0 */
    out->keep = (uint64_t)rep_keep;
    out->warming = 1;
    out->last = -1;
    out->reduce_every = rep_k > 0 ? (uint64_t)rep_k : 0;
    return 0;
  }
  uint64_t n = MON__LDACQ(&r->n);
  const ballast__reps_t *c = &r->cls;
  out->count = n;
  out->keep = r->keep;
  out->oldest = n > r->keep ? n - r->keep : 0;
  out->warming = ballast__reps_warming(c);
  out->warm_end = (uint64_t)c->warm_end;
  out->last = n ? r->label[(n - 1) % r->keep] : -1;
  out->outliers = (uint64_t)c->outliers;
  const ballast__reps_stats_t *g = &r->goodl;
  out->good = (uint64_t)g->n;
  out->good_mean = g->n ? g->mean : 0;
  out->good_min = g->n ? g->min : 0;
  out->good_max = g->n ? g->max : 0;
  out->good_sd = sqrt(ballast__reps_stats_var(g));
  out->good_median = ballast__p2_median(&g->med);
  out->median = ballast__reps_median(c);
  out->skipped = r->skipped;
  out->reduce_every = rep_k > 0 ? (uint64_t)rep_k : 0;
  return 0;
}

int mon__rep_get(int region, uint64_t index, mon__rep_rec_t *out) {
  int rc = mon__region_is_repeated(region);
  if (rc <= 0)
    return rc < 0 ? rc : BALLAST_ESTATE;
  mon__rep_t *r = mon__region_rep(region);
  if (!r)
    return BALLAST_ERANGE; /* no repetition yet */
  uint64_t n = MON__LDACQ(&r->n);
  if (index >= n || index + r->keep < n)
    return BALLAST_ERANGE;
  size_t s = index % r->keep;
  memset(out, 0, sizeof *out);
  out->index = index;
  out->label = r->label[s];
  out->wtime = r->wall[s];
  out->mtime = r->mpi[s];
  out->cputime = r->cpu[s];
  out->bytes = r->bytes[s];
  out->calls = r->calls[s];
  out->nuser = r->nuser;
  for (int u = 0; u < r->nuser; u++)
    out->user[u] = r->user[s * (size_t)r->nuser + (size_t)u];
  out->nmpit = r->nmpit;
  for (int v = 0; v < r->nmpit; v++)
    out->mpit[v] = r->mpit[s * (size_t)r->nmpit + (size_t)v];
  memcpy(out->ru, r->ru + s * 4, sizeof out->ru);
  out->nhw = r->nhw < 4 ? r->nhw : 4;
  for (int k = 0; k < out->nhw; k++)
    out->hw[k] = r->hw[s * 4 + (size_t)k];
  unsigned char x = MON__LDACQ(&r->xok[s]);
  out->reduced = x == 1 ? 1 : x == 2 ? -1 : 0;
  if (x == 1) {
    out->xmax = r->xmax[s];
    out->xmin = r->xmin[s];
    out->xmean = r->xmean[s];
    out->xwait = r->xwait[s];
    out->xslow = r->xslow[s];
  }
  return 0;
}

int mon__reps_first(void) {
  mon__rep_t *r = MON__LDACQ(&reps_all);
  int best = -1;
  for (; r; r = r->next)
    if (best < 0 || r->region < best)
      best = r->region;
  return best;
}

int mon__reps_next(int region) {
  int best = -1;
  for (mon__rep_t *r = MON__LDACQ(&reps_all); r; r = r->next)
    if (r->region > region && (best < 0 || r->region < best))
      best = r->region;
  return best;
}

/* ---- the report and the profile ------------------------------------------------------------ */

/* The region's path as the report prints it ("step/solve"), in buf. */
static void path_of(int id, char *buf, size_t len) {
  int chain[64], n = 0;
  for (int r = id; r > 0 && n < 64; r = mon__region_parent(r))
    chain[n++] = r;
  size_t o = 0;
  buf[0] = 0;
  for (int i = n - 1; i >= 0 && o + 1 < len; i--) {
    const char *parent = i + 1 < n ? mon__region_name(chain[i + 1]) : NULL;
    o += (size_t)snprintf(buf + o, len - o, "%s%s", o ? "/" : "",
                          mon__path_step(parent, mon__region_name(chain[i])));
  }
}

/* Cross-rank figures of the kept, reduced repetitions of r. */
typedef struct {
  uint64_t n;
  double imb, waited; /* sum of max/mean; sum of the time waited */
  int slowest, slowest_n;
} across_t;

static across_t across_of(const mon__rep_t *r) {
  across_t a = {0, 0, 0, -1, 0};
  uint64_t n = MON__LDACQ(&r->n), first = n > r->keep ? n - r->keep : 0;
  int cand = -1, votes = 0; /* the most frequent slowest rank (majority vote) */
  for (uint64_t i = first; i < n; i++) {
    size_t s = i % r->keep;
    if (MON__LDACQ(&r->xok[s]) != 1)
      continue;
    a.n++;
    a.imb += r->xmean[s] > 0 ? r->xmax[s] / r->xmean[s] : 1;
    a.waited += r->xwait[s];
    if (votes == 0)
      cand = r->xslow[s], votes = 1;
    else
      votes += r->xslow[s] == cand ? 1 : -1;
  }
  a.slowest = cand;
  for (uint64_t i = first; cand >= 0 && i < n; i++)
    a.slowest_n += MON__LDACQ(&r->xok[i % r->keep]) == 1 && r->xslow[i % r->keep] == cand;
  return a;
}

/* What else differed between the kept outliers and the kept good
 * repetitions: the mean of each measure over both. */
enum { C_WALL, C_OFFCPU, C_MPI, C_BYTES, C_VCSW, C_IVCSW, C_MINFLT, C_MAJFLT, C_FIXED };
static const char *const cause_names[C_FIXED] = {
    "wall time (s)", "time not running (s)", "MPI time (s)", "MPI bytes",
    "voluntary context switches", "involuntary context switches", "minor page faults",
    "major page faults"};

#define C_MAX (C_FIXED + MON_MPIT_MAX + 4)
typedef struct {
  int n;                     /* measures: C_FIXED + MPI_T variables + PAPI counters */
  int nmpit;
  uint64_t ngood, nout;
  double good[C_MAX], out[C_MAX];
} causes_t;

static void rep_measures(const mon__rep_t *r, size_t s, double *m) {
  m[C_WALL] = r->wall[s];
  m[C_OFFCPU] = mon__cfg.region_cpu && r->wall[s] > r->cpu[s] ? r->wall[s] - r->cpu[s] : 0;
  m[C_MPI] = r->mpi[s];
  m[C_BYTES] = (double)r->bytes[s];
  for (int k = 0; k < 4; k++)
    m[C_VCSW + k] = (double)r->ru[s * 4 + (size_t)k];
  for (int v = 0; v < r->nmpit; v++)
    m[C_FIXED + v] = r->mpit[s * (size_t)r->nmpit + (size_t)v];
  for (int k = 0; k < r->nhw && k < 4; k++)
    m[C_FIXED + r->nmpit + k] = (double)r->hw[s * 4 + (size_t)k];
}

static causes_t causes_of(const mon__rep_t *r) {
  causes_t c;
  memset(&c, 0, sizeof c);
  c.nmpit = r->nmpit;
  c.n = C_FIXED + r->nmpit + (r->nhw < 4 ? r->nhw : 4);
  uint64_t n = MON__LDACQ(&r->n), first = n > r->keep ? n - r->keep : 0;
  double m[C_MAX];
  for (uint64_t i = first; i < n; i++) {
    size_t s = i % r->keep;
    int lab = r->label[s];
    if (lab != BALLAST__REP_GOOD && lab != BALLAST__REP_OUTLIER)
      continue;
    rep_measures(r, s, m);
    double *acc = lab == BALLAST__REP_GOOD ? c.good : c.out;
    for (int k = 0; k < c.n; k++)
      acc[k] += m[k];
    *(lab == BALLAST__REP_GOOD ? &c.ngood : &c.nout) += 1;
  }
  for (int k = 0; k < c.n; k++) {
    c.good[k] = c.ngood ? c.good[k] / (double)c.ngood : 0;
    c.out[k] = c.nout ? c.out[k] / (double)c.nout : 0;
  }
  return c;
}

static const char *cause_name(const causes_t *c, int k) {
  if (k < C_FIXED)
    return cause_names[k];
  if (k < C_FIXED + c->nmpit)
    return mon__mpit_name(k - C_FIXED);
  return mon__papi_event_name(k - C_FIXED - c->nmpit);
}

/* A measure "differs" when its outliers' mean is at least 1.5x (or at most
 * 1/1.5 of) the good ones', or nonzero where the good ones' is zero. */
static int cause_differs(double good, double out) {
  if (good == 0)
    return out != 0;
  double q = out / good;
  return q >= 1.5 || q <= 1 / 1.5;
}

static void causes_report(FILE *f, const mon__rep_t *r) {
  causes_t c = causes_of(r);
  if (!c.nout || !c.ngood)
    return;
  fprintf(f, "#   outliers against good (means of %llu and %llu kept):",
          (unsigned long long)c.nout, (unsigned long long)c.ngood);
  int any = 0;
  for (int k = 0; k < c.n; k++) {
    if (k == C_WALL || !cause_differs(c.good[k], c.out[k]))
      continue;
    fprintf(f, "%s %s %.4g vs %.4g", any++ ? ";" : "", cause_name(&c, k), c.out[k], c.good[k]);
  }
  fprintf(f, "%s\n", any ? "" : " nothing else measured differs (1.5x)");
}

static void section_report(FILE *f, void *user) {
  (void)user;
  if (mon__cfg.report != MON__REPORT_FULL || mon__reps_first() < 0)
    return;
  fprintf(f, "#\n# repeated regions (rank 0; seconds; good: after the warm-up, "
             "outliers left out)\n");
  fprintf(f, "# %-30s %8s %8s %8s %8s %11s %11s %11s %11s\n", "region", "[reps]", "warmup",
          "outliers", "[good]", "good med", "good mean", "good min", "good max");
  for (int id = mon__reps_first(); id >= 0; id = mon__reps_next(id)) {
    mon__repinfo_t i;
    if (mon__rep_info(id, &i) != 0)
      continue;
    char path[512];
    path_of(id, path, sizeof path);
    char wend[24];
    if (i.warm_end)
      snprintf(wend, sizeof wend, "%llu", (unsigned long long)i.warm_end);
    else
      snprintf(wend, sizeof wend, "open");
    fprintf(f, "# %-30s %8llu %8s %8llu %8llu %11.6f %11.6f %11.6f %11.6f\n", path,
            (unsigned long long)i.count, wend, (unsigned long long)i.outliers,
            (unsigned long long)i.good, i.good_median, i.good_mean, i.good_min, i.good_max);
    across_t a = across_of(mon__region_rep(id));
    if (a.n)
      fprintf(f, "#   across ranks (%llu reps reduced): <max/mean> %.3f, slowest rank %d "
                 "in %d, time waited %.6f\n",
              (unsigned long long)a.n, a.imb / (double)a.n, a.slowest, a.slowest_n,
              a.waited);
    causes_report(f, mon__region_rep(id));
  }
}

static void put_doubles(FILE *f, const char *name, const double *v, const mon__rep_t *r,
                        uint64_t first, uint64_t n) {
  fprintf(f, ",\"%s\":[", name);
  for (uint64_t i = first; i < n; i++)
    fprintf(f, "%s%.9g", i > first ? "," : "", v[i % r->keep]);
  fputc(']', f);
}

/* This rank's repeated regions: what PIA answers, and the kept series. */
static void rank_json_one(FILE *f, const mon__rep_t *r) {
  mon__repinfo_t i;
  if (mon__rep_info(r->region, &i) != 0)
    return;
  uint64_t n = i.count, first = i.oldest;
  fprintf(f, "{\"id\":%d,\"count\":%llu,\"first_kept\":%llu,\"warmup_end\":%llu,"
             "\"warming_up\":%d,\"outliers\":%llu,\"good\":%llu,\"good_median\":%.9g,"
             "\"good_mean\":%.9g,\"good_min\":%.9g,\"good_max\":%.9g,\"good_sd\":%.9g,"
             "\"median\":%.9g,\"reduce_every\":%llu,\"labels\":\"",
          r->region, (unsigned long long)n, (unsigned long long)first,
          (unsigned long long)i.warm_end, i.warming, (unsigned long long)i.outliers,
          (unsigned long long)i.good, i.good_median, i.good_mean, i.good_min, i.good_max,
          i.good_sd, i.median, (unsigned long long)i.reduce_every);
  for (uint64_t k = first; k < n; k++)
    fputc("FWOG"[r->label[k % r->keep] & 3], f);
  fputc('"', f);
  put_doubles(f, "wtime", r->wall, r, first, n);
  put_doubles(f, "mtime", r->mpi, r, first, n);
  put_doubles(f, "cputime", r->cpu, r, first, n);
  fprintf(f, ",\"bytes\":[");
  for (uint64_t k = first; k < n; k++)
    fprintf(f, "%s%llu", k > first ? "," : "", (unsigned long long)r->bytes[k % r->keep]);
  fprintf(f, "],\"calls\":[");
  for (uint64_t k = first; k < n; k++)
    fprintf(f, "%s%llu", k > first ? "," : "", (unsigned long long)r->calls[k % r->keep]);
  fputc(']', f);
  static const char *const ru_names[4] = {"vcsw", "ivcsw", "minflt", "majflt"};
  for (int k = 0; k < 4; k++) {
    fprintf(f, ",\"%s\":[", ru_names[k]);
    for (uint64_t j = first; j < n; j++)
      fprintf(f, "%s%lld", j > first ? "," : "", r->ru[(j % r->keep) * 4 + (size_t)k]);
    fputc(']', f);
  }
  if (r->nmpit) {
    fprintf(f, ",\"mpit\":{");
    for (int v = 0; v < r->nmpit; v++) {
      fprintf(f, "%s\"%s\":[", v ? "," : "", mon__mpit_name(v));
      for (uint64_t j = first; j < n; j++)
        fprintf(f, "%s%.9g", j > first ? "," : "",
                r->mpit[(j % r->keep) * (size_t)r->nmpit + (size_t)v]);
      fputc(']', f);
    }
    fputc('}', f);
  }
  causes_t c = causes_of(r);
  fprintf(f, ",\"causes\":{\"outliers\":%llu,\"good\":%llu,\"measures\":[",
          (unsigned long long)c.nout, (unsigned long long)c.ngood);
  for (int k = 0; k < c.n; k++)
    fprintf(f, "%s{\"name\":\"%s\",\"outliers\":%.9g,\"good\":%.9g,\"differs\":%s}",
            k ? "," : "", cause_name(&c, k), c.out[k], c.good[k],
            c.nout && c.ngood && cause_differs(c.good[k], c.out[k]) ? "true" : "false");
  fprintf(f, "]}");
  if (r->nuser) {
    fprintf(f, ",\"user\":{");
    for (int u = 0; u < r->nuser; u++) {
      fputs(u ? "," : "", f);
      ballast__json_str(f, user_names[u]);
      fputs(":[", f);
      for (uint64_t k = first; k < n; k++)
        fprintf(f, "%s%.9g", k > first ? "," : "",
                r->user[(k % r->keep) * (size_t)r->nuser + (size_t)u]);
      fputc(']', f);
    }
    fputc('}', f);
  }
  /* Across ranks: per kept repetition, null where not reduced. */
  fprintf(f, ",\"across\":{\"slowest\":[");
  for (uint64_t k = first; k < n; k++) {
    size_t s = k % r->keep;
    if (MON__LDACQ(&r->xok[s]) == 1)
      fprintf(f, "%s%d", k > first ? "," : "", r->xslow[s]);
    else
      fprintf(f, "%snull", k > first ? "," : "");
  }
  fputc(']', f);
  const double *cols[] = {r->xmax, r->xmin, r->xmean, r->xwait};
  const char *names[] = {"max", "min", "mean", "waited"};
  for (int c = 0; c < 4; c++) {
    fprintf(f, ",\"%s\":[", names[c]);
    for (uint64_t k = first; k < n; k++) {
      size_t s = k % r->keep;
      if (MON__LDACQ(&r->xok[s]) == 1)
        fprintf(f, "%s%.9g", k > first ? "," : "", cols[c][s]);
      else
        fprintf(f, "%snull", k > first ? "," : "");
    }
    fputc(']', f);
  }
  fprintf(f, "}}");
}

static char *section_rank_json(void *user) {
  (void)user;
  if (mon__reps_first() < 0)
    return NULL;
  ballast__text_t t;
  FILE *f = ballast__text_open(&t);
  if (!f)
    return NULL;
  fputc('[', f);
  int k = 0;
  for (int id = mon__reps_first(); id >= 0; id = mon__reps_next(id)) {
    if (k++)
      fputc(',', f);
    rank_json_one(f, mon__region_rep(id));
  }
  fputc(']', f);
  return ballast__text_close(&t);
}

void mon__reps_sections(void) {
  mon__section_t s = {.name = "repeated", .report = section_report,
                      .rank_json = section_rank_json};
  mon__report_add_section(&s);
}
