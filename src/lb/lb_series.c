/*
 * Load balancing over time, for the profile (and so the HTML report): per
 * context a bounded series of the judged steps, one mark per remap with what
 * it moved, predicted and measured, and snapshots of where the tasks ran.
 * The format is documented with rta_lb_create() in
 * include/ballast/rta_lb.h (profile member "lb_series").
 *
 * Every rank keeps the same series (the merged steps are reduced over ranks, the
 * decisions identical), so rank 0 of the world can write it whatever the
 * context's communicator. Nothing here communicates, and nothing here can
 * fail into load balancing: without memory a series stops growing and says
 * so in the profile ("incomplete"). A destroyed context's series stays (the
 * context is detached) until the program exits. A listener of lb's contexts
 * (lb_events.c): lb never calls it by name.
 *
 * Bounds: at most MAX_POINTS points per series (when full, neighbouring
 * points are merged in pairs and each point then stands for twice as many
 * steps, so a long run keeps its whole history at a coarser grain); at most
 * MAX_MARKS remap marks (later ones are counted, not kept); task maps of up
 * to DETAIL_TASKS tasks per task, larger ones as MAP_BINS bins of
 * consecutive tasks (in key order); the initial map and the last
 * MAX_SNAPS - 1 maps after a remap; the series of every live context and of
 * the last MAX_CLOSED destroyed ones.
 */
#include "lb/lb_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common_internal.h"
#include "common/json.h"
#include "mon/mon_hooks.h"

#define MAX_POINTS 2048
#define MAX_MARKS 256
#define MAX_SNAPS 16
#define DETAIL_TASKS 4096
#define MAP_BINS 1024
#define MAX_CLOSED 16

/* One point: steps [first, first + n) merged. */
typedef struct {
  long long first, n;
  double tmax, tavg;  /* means over the steps of the per-step max and average time */
  double wmax, wavg;  /* the same of the program's step: wall time between calls */
  double imb;         /* mean of the per-step max/avg */
  double judged;      /* the policy's imbalance at the last judged step, 0 when none */
} point_t;

typedef struct {
  long long step;
  int committed, reason;
  long long tasks;
  double bytes, s_map, s_move, s_local; /* s_local: this rank's wall time in the remap */
  double imb_before, imb_predicted, imb_after;
  double gain_predicted;                /* seconds over the horizon */
  double tmax_before, tavg_before, tmax_after, tavg_after;
} mark_t;

/* Where the tasks ran after a step: per task (keys shared with the previous
 * snapshot when equal) or, for large maps, per bin of consecutive tasks. */
typedef struct {
  long long step;
  int64_t ntasks;
  char **keys;     /* detail: ntasks keys (owned unless keys_shared) */
  int keys_shared; /* the previous snapshot's keys, not written again */
  int *owner;      /* detail: ntasks ranks; bins: MAP_BINS majority ranks */
  float *share;    /* bins: the majority's share of its bin */
  int *per_rank;   /* tasks per rank */
} snap_t;

typedef struct series {
  rta_lb_context_t *ctx; /* NULL once destroyed */
  char *root;
  int size, placement, incomplete;
  rta_policy_config_t policy;
  rta_strategy_t strategy;
  int step_time;
  int *node_of;          /* node of each base rank */
  int *world_of;         /* world rank of each base rank, NULL when identical */
  point_t *pts;
  int npts;
  long long stride, nsteps;
  point_t acc;           /* the point being filled (acc.n < stride) */
  mark_t marks[MAX_MARKS];
  int nmarks;
  long long marks_dropped;
  int open_mark;         /* index of a mark waiting for its measured effect, -1 */
  snap_t snaps[MAX_SNAPS];
  int nsnaps;
  long long snaps_dropped;
  double s_define, s_remaps, s_deciding, s_waiting, t_remap0;
  rta_lb_stats_t prev;   /* totals before the current remap */
  struct series *next;
} series_t;

static series_t *all, **tail = &all;
static int registered, nclosed;
static long long closed_dropped;                 /* series of destroyed contexts freed */
static double closed_def, closed_dec, closed_rem, closed_wait; /* their seconds, still this rank's */

/* ---- task maps ----------------------------------------------------------- */

static void snap_free(snap_t *s) {
  if (!s->keys_shared && s->keys)
    for (int64_t i = 0; i < s->ntasks; i++)
      free(s->keys[i]);
  if (!s->keys_shared)
    free(s->keys);
  free(s->owner);
  free(s->share);
  free(s->per_rank);
  memset(s, 0, sizeof *s);
}

/* The keys of \a m as a new array, or NULL. */
static char **copy_keys(const rta_mapping_t *m, int64_t n) {
  char **k = ballast__calloc((size_t)(n ? n : 1), sizeof *k);
  for (int64_t i = 0; k && i < n; i++)
    if (!(k[i] = ballast__strdup(rta_mapping_key(m, i)))) {
      for (int64_t j = 0; j < i; j++)
        free(k[j]);
      free(k);
      k = NULL;
    }
  return k;
}

static int same_keys(const snap_t *p, const rta_mapping_t *m, int64_t n) {
  if (!p || !p->keys || p->ntasks != n)
    return 0;
  for (int64_t i = 0; i < n; i++)
    if (strcmp(p->keys[i], rta_mapping_key(m, i)))
      return 0;
  return 1;
}

/* Bins of consecutive tasks: each bin's most frequent rank and its share. */
static int fill_bins(snap_t *s, const int64_t *where, int size) {
  s->owner = ballast__malloc(MAP_BINS * sizeof *s->owner);
  s->share = ballast__malloc(MAP_BINS * sizeof *s->share);
  int *cnt = ballast__calloc((size_t)size, sizeof *cnt);
  if (!s->owner || !s->share || !cnt) {
    free(cnt);
    return BALLAST_ENOMEM;
  }
  for (int b = 0; b < MAP_BINS; b++) {
    int64_t lo = s->ntasks * b / MAP_BINS, hi = s->ntasks * (b + 1) / MAP_BINS;
    int best = -1;
    for (int64_t v = lo; v < hi; v++)
      if (where[v] >= 0 && where[v] < size && ++cnt[where[v]] > (best < 0 ? 0 : cnt[best]))
        best = (int)where[v];
    s->owner[b] = best;
    s->share[b] = best >= 0 && hi > lo ? (float)cnt[best] / (float)(hi - lo) : 0.0f;
    for (int64_t v = lo; v < hi; v++) /* reset only what was counted */
      if (where[v] >= 0 && where[v] < size)
        cnt[where[v]] = 0;
  }
  free(cnt);
  return 0;
}

static int snap_fill(snap_t *s, const snap_t *prev, const rta_lb_context_t *ctx,
                     long long step) {
  const rta_mapping_t *m = ctx->mapping;
  s->step = step;
  s->ntasks = rta_mapping_ntasks(m);
  if (!(s->per_rank = ballast__calloc((size_t)ctx->size, sizeof *s->per_rank)))
    return BALLAST_ENOMEM;
  for (int64_t v = 0; v < s->ntasks; v++)
    if (ctx->where[v] >= 0 && ctx->where[v] < ctx->size)
      s->per_rank[ctx->where[v]]++;
  if (s->ntasks > DETAIL_TASKS)
    return fill_bins(s, ctx->where, ctx->size);
  if (!(s->owner = ballast__malloc((size_t)(s->ntasks ? s->ntasks : 1) * sizeof *s->owner)))
    return BALLAST_ENOMEM;
  for (int64_t v = 0; v < s->ntasks; v++)
    s->owner[v] = (int)ctx->where[v];
  if (same_keys(prev, m, s->ntasks)) {
    s->keys = prev->keys;
    s->keys_shared = 1;
    return 0;
  }
  return (s->keys = copy_keys(m, s->ntasks)) ? 0 : BALLAST_ENOMEM;
}

/* Keeps the initial map and the latest ones: when full, the oldest after the
 * initial one goes (its keys pass to its successor if that shares them). */
static void snapshot(series_t *s, long long step) {
  if (s->nsnaps == MAX_SNAPS) {
    snap_t *old = &s->snaps[1], *succ = &s->snaps[2];
    if (succ->keys_shared && succ->keys == old->keys) {
      succ->keys_shared = old->keys_shared;
      old->keys_shared = 1;
    }
    snap_free(old);
    memmove(&s->snaps[1], &s->snaps[2], (MAX_SNAPS - 2) * sizeof *s->snaps);
    s->nsnaps--;
    s->snaps_dropped++;
  }
  snap_t *n = &s->snaps[s->nsnaps];
  memset(n, 0, sizeof *n);
  if (snap_fill(n, s->nsnaps ? &s->snaps[s->nsnaps - 1] : NULL, s->ctx, step)) {
    snap_free(n);
    s->incomplete = 1;
    return;
  }
  s->nsnaps++;
}

/* ---- the step series ------------------------------------------------------ */

static void merge(point_t *a, const point_t *b) {
  double n = (double)(a->n + b->n);
  a->tmax = (a->tmax * (double)a->n + b->tmax * (double)b->n) / n;
  a->tavg = (a->tavg * (double)a->n + b->tavg * (double)b->n) / n;
  a->wmax = (a->wmax * (double)a->n + b->wmax * (double)b->n) / n;
  a->wavg = (a->wavg * (double)a->n + b->wavg * (double)b->n) / n;
  a->imb = (a->imb * (double)a->n + b->imb * (double)b->n) / n;
  if (b->judged > 0)
    a->judged = b->judged;
  a->n += b->n;
}

static void push_point(series_t *s, const point_t *p) {
  if (!s->pts && !(s->pts = ballast__malloc(MAX_POINTS * sizeof *s->pts))) {
    s->incomplete = 1;
    return;
  }
  if (s->npts == MAX_POINTS) {
    /* Halve the resolution: the bound holds however long the run. */
    for (int i = 0; i < MAX_POINTS / 2; i++) {
      s->pts[i] = s->pts[2 * i];
      merge(&s->pts[i], &s->pts[2 * i + 1]);
    }
    s->npts = MAX_POINTS / 2;
    s->stride *= 2;
  }
  s->pts[s->npts++] = *p;
}

/* A judged step (before a remap it decides). */
static void series_step(rta_lb_context_t *ctx, const lb__step_t *ev) {
  series_t *s = ctx->series;
  if (!s)
    return;
  const rta_decision_t *d = ev->d;
  if (!ev->merged) /* no step was merged at this call: nothing to add */
    return;
  double mx = ev->merged->max_time, sum = ev->merged->sum_time;
  double wmx = ev->max_wall, wsum = ev->sum_wall;
  double avg = ctx->size ? sum / ctx->size : 0;
  point_t p = {s->nsteps + 1, 1, mx, avg, wmx, ctx->size ? wsum / ctx->size : 0,
               avg > 0 ? mx / avg : 1.0, d->imbalance};
  s->nsteps++;
  if (s->acc.n == 0)
    s->acc = p;
  else
    merge(&s->acc, &p);
  if (s->acc.n >= s->stride) {
    push_point(s, &s->acc);
    s->acc.n = 0;
  }
  /* The measured effect of the last remap: the first judgement after it. */
  if (s->open_mark >= 0 && d->imbalance > 0) {
    mark_t *m = &s->marks[s->open_mark];
    m->imb_after = d->imbalance;
    m->tmax_after = d->max_time;
    m->tavg_after = d->avg_time;
    s->open_mark = -1;
  }
  s->s_deciding = ctx->stats.seconds_deciding;
  if (d->remap)
    s->t_remap0 = MPI_Wtime();
}

/* After every remap carried out (committed or not, \a rc its code); a
 * dropped candidate leaves no mark. */
static void series_remap(rta_lb_context_t *ctx, const lb__remap_end_t *ev) {
  series_t *s = ctx->series;
  if (!s || ev->dropped)
    return;
  const rta_decision_t *d = ev->d;
  int rc = ev->rc;
  const rta_lb_stats_t *t = &ctx->stats;
  double local = MPI_Wtime() - s->t_remap0;
  if (s->nmarks == MAX_MARKS) {
    s->marks_dropped++;
  } else {
    mark_t *m = &s->marks[s->nmarks];
    *m = (mark_t){.step = s->nsteps, .committed = rc == 0, .reason = (int)d->reason,
                  .tasks = t->tasks_moved - s->prev.tasks_moved,
                  .bytes = t->bytes_moved - s->prev.bytes_moved,
                  .s_map = t->seconds_mapping - s->prev.seconds_mapping,
                  .s_move = t->seconds_migrating - s->prev.seconds_migrating,
                  .s_local = local, .imb_before = d->imbalance,
                  .imb_predicted = rc == 0 ? t->imbalance_predicted : 0,
                  .gain_predicted = d->predicted_gain,
                  .tmax_before = d->max_time, .tavg_before = d->avg_time};
    /* Only a committed remap changes what the next judgement measures. */
    s->open_mark = rc == 0 ? s->nmarks : s->open_mark;
    s->nmarks++;
  }
  s->prev = *t;
  if (rc == 0)
    snapshot(s, s->nsteps);
}

/* ---- life cycle ------------------------------------------------------------ */

static void series_free(series_t *s) {
  for (int i = s->nsnaps - 1; i >= 0; i--) /* successors first: they may share keys */
    snap_free(&s->snaps[i]);
  free(s->root);
  free(s->node_of);
  free(s->world_of);
  free(s->pts);
  free(s);
}

static void free_all(void) {
  while (all) {
    series_t *s = all;
    all = s->next;
    if (s->ctx)
      s->ctx->series = NULL;
    series_free(s);
  }
  tail = &all;
}

/* World ranks of the base ranks; NULL when they are the same (or unknown). */
static int *world_ranks(MPI_Comm base, int size) {
  MPI_Group g, w;
  int *in = ballast__malloc((size_t)size * sizeof *in);
  int *out = ballast__malloc((size_t)size * sizeof *out);
  int ok = in && out && MPI_Comm_group(base, &g) == MPI_SUCCESS;
  if (ok) {
    for (int r = 0; r < size; r++)
      in[r] = r;
    ok = MPI_Comm_group(MPI_COMM_WORLD, &w) == MPI_SUCCESS;
    if (ok) {
      ok = MPI_Group_translate_ranks(g, size, in, w, out) == MPI_SUCCESS;
      MPI_Group_free(&w);
    }
    MPI_Group_free(&g);
  }
  int same = ok;
  for (int r = 0; ok && r < size; r++)
    same &= out[r] == r;
  free(in);
  if (!ok || same) {
    free(out);
    return NULL;
  }
  return out;
}

static char *json(void *user);
static char *rank_json(void *user);

/* Opened when the context is defined (the seconds its definition took on
 * this rank, the listeners' included, are read from the context). */
static void series_open(rta_lb_context_t *ctx, const lb__defined_t *ev) {
  (void)ev; /* its definition's seconds: ctx->seconds_define, read later */
  series_t *s = ballast__calloc(1, sizeof *s);
  if (!s || !(s->root = ballast__strdup(ctx->root_key)) ||
      !(s->node_of = ballast__malloc((size_t)ctx->size * sizeof *s->node_of))) {
    if (s)
      series_free(s);
    BALLAST_WARN("rta: out of memory for the load-balancing series of \"%s\"; the "
                 "profile will not show it", ctx->root_key);
    return;
  }
  if (!registered) {
    mon__section_t sec = {.name = "lb_series", .json = json, .rank_json = rank_json};
    registered = mon__report_add_section(&sec) == 0;
    atexit(free_all);
  }
  s->ctx = ctx;
  s->size = ctx->size;
  s->placement = ctx->placement;
  s->policy = *rta_policy_config(ctx->policy);
  s->strategy = ctx->cfg.strategy;
  s->step_time = (int)ctx->cfg.step_time;
  for (int r = 0; r < ctx->size; r++)
    s->node_of[r] = rta_hw_slot_node(ctx->hw, r);
  ballast__lib_begin();
  s->world_of = world_ranks(ctx->base, ctx->size);
  ballast__lib_end();
  s->stride = 1;
  s->open_mark = -1;
  s->prev = ctx->stats;
  ctx->series = s;
  snapshot(s, 0);
  *tail = s;
  tail = &s->next;
}

/* Detached when the context is destroyed (its series stays). */
static void series_close(rta_lb_context_t *ctx) {
  series_t *s = ctx->series;
  if (!s)
    return;
  s->s_deciding = ctx->stats.seconds_deciding;
  s->s_waiting = ctx->seconds_waiting;
  s->s_remaps = ctx->seconds_remapping;
  s->s_define = ctx->seconds_define;
  s->ctx = NULL;
  ctx->series = NULL;
  /* A program that defines contexts again and again keeps the series of
   * the last MAX_CLOSED destroyed ones (and of every live one). */
  if (++nclosed <= MAX_CLOSED)
    return;
  for (series_t **p = &all; *p; p = &(*p)->next)
    if (!(*p)->ctx) {
      series_t *old = *p;
      *p = old->next;
      if (tail == &old->next)
        tail = p;
      closed_dropped++;
      nclosed--;
      closed_def += old->s_define;
      closed_dec += old->s_deciding;
      closed_rem += old->s_remaps;
      closed_wait += old->s_waiting;
      series_free(old);
      return;
    }
}

const lb__listener_t lb__series_listener = {
    .name = "series",
    .defined = series_open,
    .step = series_step,
    .remap_ended = series_remap,
    .destroyed = series_close};

/* ---- the profile's member ---------------------------------------------------- */

/* JSON has no inf/nan. */
static double fin(double x) { return isfinite(x) ? x : 0.0; }


static void put_ints(FILE *f, const char *name, const int *v, int64_t n) {
  fprintf(f, ",\"%s\":[", name);
  for (int64_t i = 0; i < n; i++)
    fprintf(f, "%s%d", i ? "," : "", v[i]);
  fputc(']', f);
}

/* The series as columns: compact, and what a plot reads. */
static void put_steps(FILE *f, const series_t *s) {
  static const char *const col[] = {"first", "n", "tmax", "tavg", "imbalance", "judged",
                                     "wmax", "wavg"};
  int n = s->npts + (s->acc.n > 0);
  fprintf(f, "\"steps\":{\"total\":%lld,\"stride\":%lld", s->nsteps, s->stride);
  for (int c = 0; c < 8; c++) {
    fprintf(f, ",\"%s\":[", col[c]);
    for (int i = 0; i < n; i++) {
      const point_t *p = i < s->npts ? &s->pts[i] : &s->acc;
      const double v[] = {0, 0, p->tmax, p->tavg, p->imb, p->judged, p->wmax, p->wavg};
      if (c < 2)
        fprintf(f, "%s%lld", i ? "," : "", c == 0 ? p->first : p->n);
      else
        fprintf(f, "%s%.6g", i ? "," : "", fin(v[c]));
    }
    fputc(']', f);
  }
  fputc('}', f);
}

static void put_marks(FILE *f, const series_t *s) {
  fprintf(f, ",\"remaps\":[");
  for (int i = 0; i < s->nmarks; i++) {
    const mark_t *m = &s->marks[i];
    fprintf(f, "%s{\"step\":%lld,\"committed\":%s,\"reason\":\"%s\",\"tasks\":%lld,"
            "\"bytes\":%.0f,\"seconds_mapping\":%.6g,\"seconds_migrating\":%.6g,"
            "\"imbalance_before\":%.6g,\"imbalance_predicted\":%.6g,"
            "\"imbalance_after\":%.6g,\"gain_predicted\":%.6g,"
            "\"tmax_before\":%.6g,\"tavg_before\":%.6g,\"tmax_after\":%.6g,"
            "\"tavg_after\":%.6g}",
            i ? "," : "", m->step, m->committed ? "true" : "false",
            rta_reason_name((rta_reason_t)m->reason), m->tasks, fin(m->bytes),
            fin(m->s_map), fin(m->s_move), fin(m->imb_before), fin(m->imb_predicted),
            fin(m->imb_after), fin(m->gain_predicted), fin(m->tmax_before),
            fin(m->tavg_before), fin(m->tmax_after), fin(m->tavg_after));
  }
  fprintf(f, "],\"remaps_dropped\":%lld", s->marks_dropped);
}

static void put_maps(FILE *f, const series_t *s) {
  fprintf(f, ",\"task_map\":{\"detail_limit\":%d,\"bins\":%d,\"snapshots_dropped\":%lld,"
          "\"snapshots\":[", DETAIL_TASKS, MAP_BINS, s->snaps_dropped);
  for (int i = 0; i < s->nsnaps; i++) {
    const snap_t *p = &s->snaps[i];
    int detail = p->ntasks <= DETAIL_TASKS;
    fprintf(f, "%s{\"step\":%lld,\"ntasks\":%lld,\"detail\":%s", i ? "," : "", p->step,
            (long long)p->ntasks, detail ? "true" : "false");
    put_ints(f, "per_rank", p->per_rank, s->size);
    if (detail && !p->keys_shared) {
      fprintf(f, ",\"keys\":[");
      for (int64_t v = 0; v < p->ntasks; v++) {
        if (v)
          fputc(',', f);
        ballast__json_str(f, p->keys[v]);
      }
      fputc(']', f);
    }
    put_ints(f, "owner", p->owner, detail ? p->ntasks : MAP_BINS);
    if (!detail) {
      fprintf(f, ",\"share\":[");
      for (int b = 0; b < MAP_BINS; b++)
        fprintf(f, "%s%.3g", b ? "," : "", p->share[b]);
      fputc(']', f);
    }
    fputc('}', f);
  }
  fprintf(f, "]}");
}

static void put_series(FILE *f, const series_t *s) {
  const rta_policy_config_t *p = &s->policy;
  static const char *const modes[] = {"off", "explicit", "auto"};
  fprintf(f, "{\"root\":");
  ballast__json_str(f, s->root);
  fprintf(f, ",\"ranks\":%d,\"mode\":\"%s\",\"strategy\":\"%s\",\"step_time\":\"%s\","
          "\"incomplete\":%s,\"policy\":{\"mode\":\"%s\",\"warmup\":%d,\"window\":%d,"
          "\"threshold\":%.6g,\"outlier\":%.6g,\"horizon\":%d},",
          s->size, s->placement ? "placement" : "over-decomposition",
          rta_strategy_name(s->strategy), s->step_time ? "wall" : "tasks",
          s->incomplete ? "true" : "false",
          p->mode >= 0 && p->mode <= 2 ? modes[p->mode] : "?", p->warmup, p->window,
          p->threshold, p->outlier, p->horizon);
  put_steps(f, s);
  put_marks(f, s);
  put_ints(f, "node_of_rank", s->node_of, s->size);
  if (s->world_of)
    put_ints(f, "world_rank", s->world_of, s->size);
  put_maps(f, s);
  fputc('}', f);
}

/* Rank 0: {"contexts":[...]}, every context defined in the run. */
static char *json(void *user) {
  (void)user;
  ballast__text_t t;
  FILE *f = ballast__text_open(&t);
  if (!f)
    return NULL;
  fprintf(f, "{\"contexts\":[");
  for (series_t *s = all; s; s = s->next) {
    if (s != all)
      fputc(',', f);
    put_series(f, s);
  }
  fprintf(f, "],\"contexts_dropped\":%lld}", closed_dropped);
  return ballast__text_close(&t);
}

/* Every rank: its own seconds in load balancing, summed over contexts; of
 * those, the time waiting for other ranks (lb.c: the per-step collective and
 * the definition's first collective). */
static char *rank_json(void *user) {
  (void)user;
  double def = closed_def, dec = closed_dec, rem = closed_rem, wait = closed_wait;
  for (series_t *s = all; s; s = s->next) {
    def += s->ctx ? s->ctx->seconds_define : s->s_define;
    dec += s->ctx ? s->ctx->stats.seconds_deciding : s->s_deciding;
    wait += s->ctx ? s->ctx->seconds_waiting : s->s_waiting;
    rem += s->ctx ? s->ctx->seconds_remapping : s->s_remaps;
  }
  char *b = ballast__malloc(224);
  if (b)
    snprintf(b, 224, "{\"seconds\":%.9g,\"seconds_define\":%.9g,\"seconds_deciding\":%.9g,"
             "\"seconds_remapping\":%.9g,\"seconds_waiting\":%.9g}", fin(def + dec + rem),
             fin(def), fin(dec), fin(rem), fin(wait));
  return b;
}
