/* Writing the load-balancing record (format and rules in policy/policy.h): a
 * listener of lb's contexts (lb_events.c), attached first. Every rank buffers its own tasks' costs; rank 0 of the
 * context writes the file and gathers the buffers at the remaps, every 64
 * judged steps and at the end. */
#include "lb/lb_internal.h"
#include "policy/policy.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uthash.h>

#include "common/bytebuf.h"
#include "common/common_internal.h"
#include "common/env.h"
#include "map/map_internal.h"
#include "task/task_hooks.h"

#define FLUSH_STEPS 64     /* judged steps between two gathers of costs */
#define COST_ROWS 512      /* sampled steps before the stride doubles */
#define EDGES_PER_LINE 4096
enum { TAG_COST = 1, TAG_BYTES = 2 };

typedef struct {
  char *key;
  int64_t id;
  UT_hash_handle hh;
} keyent_t;

struct lb__recw {
  FILE *f;               /* rank 0: the file; NULL once stopped */
  char *path;
  size_t written, max;   /* bytes so far, bound */
  long long dropped;     /* lines not written past the bound */
  keyent_t *keys;        /* rank 0: key table */
  int64_t nkeys;
  ballast__wbuf_t buf;   /* this rank's costs and bytes since the last gather */
  size_t pending;        /* buf.n before the current step's costs */
  long long sampled, stride, costlines;
  int k;                 /* remap attempts so far (graph number of the last) */
  unsigned seed;         /* the engine's seed of the current attempt */
  int warm;              /* a warm map was pending at the current attempt */
  rta_lb_stats_t before; /* statistics before the current remap */
};

/* ---- rank 0's output ------------------------------------------------------ */

static void stop_writing(struct lb__recw *w, const char *why) {
  if (!w->f)
    return;
  BALLAST_WARN("lb record '%s': %s (%s); the record stops here, the run goes on",
               w->path, why, strerror(errno));
  fclose(w->f);
  w->f = NULL;
}

/* Room for one more line group? Counts what the bound drops. */
static int room(struct lb__recw *w) {
  if (!w->f)
    return 0;
  if (w->written < w->max)
    return 1;
  w->dropped++;
  return 0;
}

static void out(struct lb__recw *w, const char *fmt, ...) {
  if (!w->f)
    return;
  va_list ap;
  va_start(ap, fmt);
  int n = vfprintf(w->f, fmt, ap);
  va_end(ap);
  if (n < 0)
    stop_writing(w, "writing failed");
  else
    w->written += (size_t)n;
}

/* A key with bytes <= 0x20, '%' and >= 0x7f as %XX. */
static void out_key(struct lb__recw *w, const char *key) {
  for (const unsigned char *p = (const unsigned char *)key; *p && w->f; p++)
    if (*p <= 0x20 || *p == '%' || *p >= 0x7f)
      out(w, "%%%02X", *p);
    else if (fputc(*p, w->f) == EOF)
      stop_writing(w, "writing failed");
    else
      w->written++;
}

/* The id of \a key, written as a K line the first time; -1 without memory. */
static int64_t key_id(struct lb__recw *w, const char *key) {
  keyent_t *e;
  HASH_FIND_STR(w->keys, key, e);
  if (e)
    return e->id;
  e = ballast__calloc(1, sizeof *e);
  if (!e || !(e->key = ballast__strdup(key))) {
    free(e);
    return -1;
  }
  e->id = w->nkeys++;
  HASH_ADD_KEYPTR(hh, w->keys, e->key, strlen(e->key), e);
  out(w, "K %lld ", (long long)e->id);
  out_key(w, key);
  out(w, "\n");
  return e->id;
}

/* Graph \a k (G/V/E lines) from the mapping's entries and the graph the
 * engine got. */
static void out_graph(struct lb__recw *w, int k, long long step,
                      const rta_mapping_t *m, rta_graph_t *g) {
  int64_t n = rta_mapping_ntasks(m);
  if (!room(w) || !g || rta_graph_nvert(g) != n || map__graph_finalize(g))
    return;
  for (int64_t v = 0; v < n; v++)
    if (key_id(w, rta_mapping_key(m, v)) < 0)
      return;
  out(w, "G %d %lld %lld\n", k, step, (long long)n);
  for (int64_t v = 0; v < n; v++)
    out(w, "V %lld %d %d %a %a\n", (long long)key_id(w, rta_mapping_key(m, v)),
        rta_mapping_nprocs(m, v), rta_mapping_owner(m, v), g->work[v], g->state[v]);
  for (int64_t u = 0; u < n; u++) {
    int on = 0;
    for (int64_t e = g->xadj[u]; e < g->xadj[u + 1]; e++) {
      if (g->adj[e] <= u)
        continue;
      if (on == EDGES_PER_LINE) {
        out(w, "\n");
        on = 0;
      }
      if (on++ == 0)
        out(w, "E %lld", (long long)u);
      out(w, " %d %a", g->adj[e], g->adjw[e]);
    }
    if (on)
      out(w, "\n");
  }
}

/* ---- gathering the ranks' buffers ------------------------------------------ */

/* Rank 0: the keys of one rank's buffer into the table (their K lines come
 * before the W lines that use them). */
static void register_keys(struct lb__recw *w, const unsigned char *p, size_t n) {
  ballast__rbuf_t rd = {p, p + n, 0};
  while (rd.p < rd.end && !rd.bad && w->f) {
    int tag = ballast__get_i32(&rd);
    (void)ballast__get_i64(&rd);
    if (tag == TAG_COST) {
      (void)key_id(w, ballast__get_str(&rd));
      (void)ballast__get_f64(&rd);
      continue;
    }
    int np = ballast__get_i32(&rd);
    for (int i = 0; i < np; i++) {
      (void)ballast__get_i32(&rd);
      (void)ballast__get_f64(&rd);
    }
  }
}

/* Rank 0: one rank's buffer as W and B lines. */
static void out_buffer(struct lb__recw *w, int rank, const unsigned char *p, size_t n) {
  register_keys(w, p, n);
  ballast__rbuf_t rd = {p, p + n, 0};
  long long cur = -1;
  while (rd.p < rd.end && !rd.bad && w->f) {
    int tag = ballast__get_i32(&rd);
    long long step = ballast__get_i64(&rd);
    if (tag == TAG_COST) {
      const char *key = ballast__get_str(&rd);
      double c = ballast__get_f64(&rd);
      int64_t id = key_id(w, key);
      if (step != cur) {
        if (cur >= 0)
          out(w, "\n");
        cur = -1;
        if (!room(w))
          continue;
        out(w, "W %lld", step);
        w->costlines++;
        cur = step;
      }
      if (id >= 0)
        out(w, " %lld %.6g", (long long)id, c);
      continue;
    }
    if (cur >= 0)
      out(w, "\n");
    cur = -1;
    int np = ballast__get_i32(&rd);
    int ok = room(w);
    if (ok)
      out(w, "B %lld %d", step, rank);
    for (int i = 0; i < np; i++) {
      int q = ballast__get_i32(&rd);
      double b = ballast__get_f64(&rd);
      if (ok)
        out(w, " %d %.6g", q, b);
    }
    if (ok)
      out(w, "\n");
  }
  if (cur >= 0)
    out(w, "\n");
}

/* Collective: every rank's buffer to rank 0, written there. A failure of
 * the gather (rank 0 without memory, MPI) loses these costs only: rank 0's
 * verdict goes to everyone before each step that depends on it. */
static void gather(rta_lb_context_t *ctx) {
  struct lb__recw *w = ctx->rec;
  int mine = w->buf.oom || w->buf.n > (size_t)INT32_MAX ? 0 : (int)w->buf.n;
  int *counts = NULL, *displs = NULL;
  unsigned char *all = NULL;
  int ok = 1;
  if (ctx->rank == 0) {
    counts = ballast__calloc((size_t)ctx->size, sizeof *counts);
    displs = ballast__calloc((size_t)ctx->size, sizeof *displs);
    ok = counts && displs;
  }
  ballast__lib_begin();
  MPI_Bcast(&ok, 1, MPI_INT, 0, ctx->base);
  if (ok && MPI_Gather(&mine, 1, MPI_INT, counts, 1, MPI_INT, 0, ctx->base) != MPI_SUCCESS)
    ok = 0;
  long long total = 0;
  for (int r = 0; ctx->rank == 0 && ok && r < ctx->size; r++) {
    displs[r] = (int)total;
    total += counts[r];
  }
  if (ctx->rank == 0 && ok && (total > INT32_MAX || !(all = ballast__malloc((size_t)total + 1))))
    ok = 0;
  MPI_Bcast(&ok, 1, MPI_INT, 0, ctx->base);
  if (ok && MPI_Gatherv(w->buf.p, mine, MPI_BYTE, all, counts, displs, MPI_BYTE, 0,
                        ctx->base) != MPI_SUCCESS)
    ok = 0;
  ballast__lib_end();
  for (int r = 0; ctx->rank == 0 && ok && r < ctx->size; r++)
    out_buffer(w, r, all + displs[r], (size_t)counts[r]);
  if (ctx->rank == 0 && !ok && w->f)
    BALLAST_WARN("lb record '%s': the task costs of some steps could not be "
                 "gathered (no memory or MPI failed); the record goes on without them",
                 w->path);
  if (w->f && fflush(w->f) != 0)
    stop_writing(w, "writing failed");
  free(counts);
  free(displs);
  free(all);
  w->buf.n = 0;
  w->buf.oom = 0;
  w->pending = 0;
}

/* This rank's row of partner bytes per step since the last mapping. */
static void buffer_bytes(rta_lb_context_t *ctx) {
  struct lb__recw *w = ctx->rec;
  double *sent = ballast__calloc((size_t)ctx->size, sizeof *sent);
  long long nsteps = 0;
  if (!sent || task__cost_partner_bytes(ctx->base, sent, &nsteps) || nsteps <= 0) {
    free(sent);
    return;
  }
  int np = 0;
  for (int p = 0; p < ctx->size; p++)
    np += sent[p] > 0;
  if (np) {
    ballast__put_i32(&w->buf, TAG_BYTES);
    ballast__put_i64(&w->buf, ctx->stats.steps);
    ballast__put_i32(&w->buf, np);
    for (int p = 0; p < ctx->size; p++)
      if (sent[p] > 0) {
        ballast__put_i32(&w->buf, p);
        ballast__put_f64(&w->buf, sent[p]);
      }
  }
  free(sent);
}

/* ---- the hooks -------------------------------------------------------------- */

/* The path BALLAST_LB_RECORD asks for this process's next context (the first
 * context gets the path itself, the k-th path.k), in \a buf; NULL when
 * the variable is not set. */
static const char *env_path(char *buf, size_t n) {
  static int contexts; /* contexts defined by this process while recording */
  const char *p = ballast__env_string("BALLAST_LB_RECORD");
  if (!p || !*p)
    return NULL;
  int k = contexts++;
  if (k == 0)
    snprintf(buf, n, "%s", p);
  else
    snprintf(buf, n, "%s.%d", p, k);
  return buf;
}

static void recw_free(struct lb__recw *w) {
  if (!w)
    return;
  if (w->f)
    fclose(w->f);
  keyent_t *e, *tmp;
  HASH_ITER(hh, w->keys, e, tmp) {
    HASH_DEL(w->keys, e);
    free(e->key);
    free(e);
  }
  free(w->buf.p);
  free(w->path);
  free(w);
}

static const char *mode_name(rta_policy_mode_t m) {
  return m == RTA_POLICY_OFF ? "off" : m == RTA_POLICY_EXPLICIT ? "explicit" : "auto";
}

/* Rank 0: the header lines. */
static void out_header(rta_lb_context_t *ctx, struct lb__recw *w, rta_graph_t *g0) {
  const rta_policy_config_t *p = rta_policy_config(ctx->policy);
  out(w, "%s %d\nC ", POLICY__MAGIC, POLICY__VERSION);
  out_key(w, ctx->root_key);
  out(w, " %d %d %s %s %u %a\n", ctx->size, ctx->placement,
      rta_strategy_name(ctx->cfg.strategy),
      ctx->cfg.step_time == RTA_LB_TIME_WALL ? "wall" : "tasks", ctx->cfg.seed,
      ctx->cfg.balrat);
  out(w, "P %s %d %d %a %a %d %a\n", mode_name(p->mode), p->warmup, p->window,
      p->threshold, p->outlier, p->horizon, p->initial_cost);
  if (w->f && map__hw_to_text(ctx->hw, w->f) != 0)
    stop_writing(w, "writing the hardware model failed");
  long pos = w->f ? ftell(w->f) : -1;
  if (pos > 0)
    w->written = (size_t)pos;
  out_graph(w, 0, ctx->stats.steps, ctx->mapping, g0);
  if (w->f && fflush(w->f) != 0)
    stop_writing(w, "writing failed");
}

int lb__record_start(rta_lb_context_t *ctx, const char *path, rta_graph_t *g0) {
  lb__record_stop(ctx); /* a record already running ends first */
  struct lb__recw *w = ballast__calloc(1, sizeof *w);
  int err = w && (w->path = ballast__strdup(path)) ? 0 : BALLAST_ENOMEM;
  if (!err) {
    int mib = 256;
    (void)ballast__env_int("BALLAST_LB_RECORD_MAX", &mib);
    w->max = (size_t)mib << 20;
    w->stride = 1;
  }
  if (!err && ctx->rank == 0 && !(w->f = fopen(path, "w"))) {
    BALLAST_WARN("lb record '%s': cannot open it for writing (%s); the run goes "
                 "on without a record", path, strerror(errno));
    err = BALLAST_EIO;
  }
  int who = -1, code = 0;
  ballast__lib_begin();
  int rc = ballast__agree(ctx->base, err, &who, &code);
  ballast__lib_end();
  if (rc) {
    /* every rank returns rank 0's reason (an unwritable path is everyone's) */
    if (who >= 0 && code)
      rc = code;
    recw_free(w);
    return rc;
  }
  if (ctx->rank == 0)
    out_header(ctx, w, g0);
  ctx->rec = w;
  return 0;
}

/* This rank's measured task costs of the step \a step just closed and
 * judged: the local tasks the cost model sampled in it
 * (task__cost_sample_step, as step_time takes them) (local). */
static void record_costs(rta_lb_context_t *ctx, long long step) {
  struct lb__recw *w = ctx->rec;
  if (!w)
    return;
  w->buf.n = w->pending; /* costs of a step that was never judged */
  if ((step - 1) % w->stride != 0)
    return;
  long long now = rta_steps();
  for (int i = 0; i < ctx->nlocal; i++) {
    rta_task_cost_t c;
    if (task__cost_sample_step(ctx->local[i]) == now &&
        rta_task_cost(ctx->local[i], &c) == 0) {
      ballast__put_i32(&w->buf, TAG_COST);
      ballast__put_i64(&w->buf, step);
      ballast__put_str(&w->buf, rta_task_key(ctx->local[i]));
      ballast__put_f64(&w->buf, c.last_time);
    }
  }
}

/* A judged step: its costs when the cost model closed one, then rank 0's
 * wall seconds and every rank's time for the step (gathered for the record
 * alone: the policy never gathers them), the merged step the policy was fed
 * at this call and the decision (forced: 1 a performance assertion asked
 * for the remap, 2 a pending warm start did, 3 balancing from the estimates
 * did: the set-up call, which closed no step, so it has no W line).
 * Collective: one MPI_Gather of one double per step, and every 64 steps the
 * buffered costs are gathered. */
static void record_step(rta_lb_context_t *ctx, const lb__step_t *ev) {
  struct lb__recw *w = ctx->rec;
  if (!w)
    return;
  if (ev->closed)
    record_costs(ctx, ctx->stats.steps);
  double wall = ev->wall, *times = ctx->stepbuf; /* free outside remaps */
  int got = MPI_Gather(&ev->mine, 1, MPI_DOUBLE, times, 1, MPI_DOUBLE, 0, ctx->base) ==
            MPI_SUCCESS;
  const rta_decision_t *d = ev->d;
  int forced = ev->forced;
  long long step = ctx->stats.steps;
  w->pending = w->buf.n;
  if ((step - 1) % w->stride == 0 && ++w->sampled % COST_ROWS == 0)
    w->stride *= 2; /* the same on every rank: it counts steps, not costs */
  if (ctx->rank == 0 && room(w)) {
    out(w, "T %lld %a", step, wall);
    for (int r = 0; r < ctx->size; r++)
      out(w, " %a", got ? times[r] : 0.0);
    if (ev->merged) {
      double v[RTA_POLICY_STEP_DOUBLES];
      rta_policy_step_pack(ev->merged, v);
      out(w, "\nS %lld", step);
      for (int i = 0; i < RTA_POLICY_STEP_DOUBLES; i++)
        out(w, " %a", v[i]);
    }
    out(w, "\nD %lld %d %s %a %a %a %a %a %d %d %d %d %d %lld\n", d->step, d->remap,
        rta_reason_name(d->reason), d->imbalance, d->max_time, d->avg_time,
        d->predicted_gain, d->remap_cost, d->ignored_outliers, forced, d->slowest,
        d->persistent, d->noise, d->warmup_end);
  }
  if (step % FLUSH_STEPS == 0)
    gather(ctx);
}

/* Before a remap attempt (collective): gathers costs and partner bytes,
 * numbers the attempt, notes its seed, whether a warm map is pending and the
 * statistics the remap's figures are taken from. */
static void record_remap_begun(rta_lb_context_t *ctx) {
  struct lb__recw *w = ctx->rec;
  if (!w)
    return;
  buffer_bytes(ctx);
  gather(ctx);
  w->before = ctx->stats;
  w->k++;
  /* remap_map in lb.c: remap k of the context maps with seed + k - 1, k
   * counting committed and rolled-back remaps (not dropped candidates) */
  w->seed = ctx->cfg.seed + (unsigned)(ctx->stats.remaps + ctx->stats.failed_remaps);
  w->warm = ctx->warm != NULL;
}

/* Inside the remap, once the new mapping exists or failed (local): the
 * graph the engine mapped, the new mapping and the target slots (either
 * may be NULL on failure). */
static void record_mapped(rta_lb_context_t *ctx, const lb__mapped_t *ev) {
  struct lb__recw *w = ctx->rec;
  const rta_mapping_t *m = ev->m;
  const int *target = ev->slot;
  rta_graph_t *const *g = &ev->graph;
  if (w && ctx->rank == 0 && m && *g) {
    int k = w->k;
    int64_t n = rta_mapping_ntasks(m);
    out_graph(w, k, ctx->stats.steps, m, *g);
    if (room(w)) {
      out(w, "M %d slot", k);
      for (int64_t v = 0; v < n; v++)
        out(w, " %d", rta_mapping_slot(m, v));
      out(w, "\n");
    }
    if (target && room(w)) {
      out(w, "M %d target", k);
      for (int64_t v = 0; v < n; v++)
        out(w, " %d", target[v]);
      out(w, "\n");
    }
    const rta_map_quality_t *q = rta_mapping_quality(m);
    if (q && room(w))
      out(w, "Q %d %a %a %a %a %a %a %a\n", k, q->max_avg_load_core,
          q->max_avg_load_node, q->edge_cut, q->hop_bytes, q->internode_volume,
          (double)q->tasks_migrated, q->bytes_migrated);
  }
}

/* The candidate's figures and the decision after the policy judged it
 * (local). */
static void record_judged(rta_lb_context_t *ctx, const lb__judged_t *ev) {
  const rta_remap_candidate_t *c = ev->c;
  const rta_decision_t *d = ev->d;
  int judged = ev->judged;
  struct lb__recw *w = ctx->rec;
  if (!w || ctx->rank != 0 || !room(w))
    return;
  out(w, "J %lld %d %d %a %a %lld %a %a %d %s %a %a %a %lld\n", d->step, w->k, judged,
      c->imbalance_now, c->imbalance_after, c->tasks, c->bytes, c->mapping_seconds,
      d->remap, rta_reason_name(d->reason), d->predicted_gain, d->remap_cost,
      d->predicted_imbalance, d->tasks_to_move);
}

/* After the remap attempt (local): its outcome from the statistics and,
 * unless dropped, what rta_policy_remap_measured() was given. */
static void record_remap_ended(rta_lb_context_t *ctx, const lb__remap_end_t *ev) {
  int rc = ev->rc, dropped = ev->dropped;
  const rta_remap_measure_t *m = ev->cost;
  struct lb__recw *w = ctx->rec;
  if (!w || ctx->rank != 0 || !room(w))
    return;
  const rta_lb_stats_t *a = &w->before, *b = &ctx->stats;
  int committed = !dropped && rc == 0;
  out(w, "R %lld %d %d %d %a %a %a %a %u %d\n", b->steps, w->k, committed,
      rc > 0 ? 0 : rc, (double)(b->tasks_moved - a->tasks_moved),
      b->bytes_moved - a->bytes_moved, b->seconds_mapping - a->seconds_mapping,
      b->seconds_migrating - a->seconds_migrating, w->seed, w->warm);
  if (!dropped)
    out(w, "X %a %a %a %d\n", m->mapping, m->migration, m->bytes, m->committed);
}

void lb__record_stop(rta_lb_context_t *ctx) {
  struct lb__recw *w = ctx->rec;
  if (!w)
    return;
  int fin = 0;
  MPI_Finalized(&fin);
  if (!fin) {
    buffer_bytes(ctx);
    gather(ctx);
  }
  if (ctx->rank == 0 && w->f) {
    /* the closing line is written past the bound too: it says what was dropped */
    fprintf(w->f, "Z %lld %lld %lld\n", ctx->stats.steps, w->costlines, w->dropped);
    if (fclose(w->f) != 0)
      BALLAST_WARN("lb record '%s': closing it failed (%s)", w->path, strerror(errno));
    else
      BALLAST_INFO("lb record '%s': %lld steps, %zu bytes", w->path, ctx->stats.steps,
                   w->written);
    w->f = NULL;
  }
  ctx->rec = NULL;
  recw_free(w);
}

int rta_lb_record(rta_lb_context_t *ctx, const char *path) {
  if (!ctx)
    return BALLAST_EINVAL;
  int rc0 = ballast__need_mpi("rta_lb_record");
  if (rc0)
    return rc0;
  if (!path) {
    lb__record_stop(ctx);
    return 0;
  }
  return lb__record_start(ctx, path, NULL);
}

/* ---- the listener -------------------------------------------------------- */

/* Graphs are kept while a record runs, and at a definition when
 * BALLAST_LB_RECORD will start one (ctx->mapping is not made yet). */
static int record_wants_graph(const rta_lb_context_t *ctx) {
  if (ctx->rec)
    return 1;
  const char *p = ctx->mapping ? NULL : ballast__env_string("BALLAST_LB_RECORD");
  return p && *p;
}

/* BALLAST_LB_RECORD: a record of every context from its definition; one
 * that cannot be written is only a warning. */
static void record_defined(rta_lb_context_t *ctx, const lb__defined_t *ev) {
  char buf[4096];
  const char *path = env_path(buf, sizeof buf);
  if (path)
    (void)lb__record_start(ctx, path, ev->graph);
}

const lb__listener_t lb__record_listener = {
    .name = "record",
    .wants_graph = record_wants_graph,
    .defined = record_defined,
    .step = record_step,
    .remap_begun = record_remap_begun,
    .mapped = record_mapped,
    .judged = record_judged,
    .remap_ended = record_remap_ended,
    .destroyed = lb__record_stop,
};
