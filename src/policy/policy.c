/* When to remap: the policy state machine documented in ballast/rta_policy.h. */
#include <ballast/rta_policy.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/common_internal.h"
#include "common/env.h"
#include "common/reps.h"

/* Back-off after dropped candidates: 1, 2, 4, 8, 16 windows, no longer. */
#define MAX_BACKOFF_SHIFT 4
/* Steps skipped after a remap, at most. */
#define AFTER_REMAP 5
/* The published earliest warm-up end: a warmup setting above it is the
 * classifier's settling time, at or below it a fixed count. */
#define MIN_WARMUP 10

/* An estimate of seconds with decaying trust: \c value as of step \c at,
 * moving towards \c floor by half its distance every horizon steps. */
typedef struct {
  double value, floor;
  long long at;
  int measured;
} est_t;

/* One rank's part: its classifier, its step count, its window's times. */
struct rta_policy_rank {
  rta_policy_config_t cfg;
  ballast__reps_t reps;
  long long n;        /* steps labelled */
  double *win;        /* window doubles: the good steps of the window */
  int nwin;           /* good steps in it */
  int outl;           /* outlier steps in it */
};

struct rta_policy {
  rta_policy_config_t cfg;
  int nranks;
  int pos;            /* position in the window of the next step; -1: not collecting */
  int skip_left;      /* steps still to skip after a remap */
  int pending;        /* a closed window awaits judgement */
  rta_policy_step_t win;  /* its figures */
  long long steps;    /* steps observed */
  long long warm_end; /* step from which no rank was warming (0: not yet) */
  int streak;         /* imbalanced windows in a row with the same slowest rank */
  int prev_slowest;   /* the slowest rank of the window before (-1: none) */
  double prev_avg;    /* its average median (0: none) */
  double prev_max;    /* its max median */
  /* What the last committed remap delivered (see deliver_now): the measured
   * imbalance that asked for it, its candidate's imbalance now and after
   * (the cost model's), whether confirm accepted that candidate (consumed by
   * the next remap_measured) and whether the first window after it is still
   * to compare. */
  double remap_imb, remap_now, remap_pred;
  int accepted, check_delivery;
  double delivery;    /* realised / predicted share of the excess removed, 0..1 */
  long long delivery_at;
  est_t map, move;    /* estimated seconds of mapping and of migration */
  double move_bytes;  /* bytes of the migration behind move (0: unknown) */
  int skips;          /* candidates dropped in a row (back-off exponent) */
  int hold_left;      /* back-off: steps still to wait before judging */
  rta_policy_rank_t **ranks; /* rta_policy_observe's parts, allocated at its first call */
};

void rta_policy_config_init(rta_policy_config_t *cfg) {
  if (!cfg)
    return;
  cfg->mode = RTA_POLICY_AUTO;
  cfg->warmup = 20;
  cfg->window = 20;
  cfg->threshold = 1.10;
  cfg->outlier = 2.0;
  cfg->horizon = 100;
  cfg->initial_cost = 0.0;
}

/* Each variable through common's parser, with its bounds in common's table
 * (a window's memory is bounded there); a bad value leaves the field and is
 * named once on rank 0. */
int rta_policy_config_from_env(rta_policy_config_t *cfg) {
  if (!cfg)
    return BALLAST_EINVAL;
  static const rta_policy_mode_t mode_of[] = {RTA_POLICY_OFF, RTA_POLICY_EXPLICIT,
                                              RTA_POLICY_AUTO, RTA_POLICY_OFF,
                                              RTA_POLICY_AUTO};
  int choice, bad = 0;
  int rc = ballast__env_enum("BALLAST_LB", &choice);
  if (rc == 1)
    cfg->mode = mode_of[choice];
  bad |= rc < 0;
  bad |= ballast__env_double("BALLAST_LB_THRESHOLD", &cfg->threshold) < 0;
  bad |= ballast__env_double("BALLAST_LB_OUTLIER", &cfg->outlier) < 0;
  bad |= ballast__env_int("BALLAST_LB_WINDOW", &cfg->window) < 0;
  bad |= ballast__env_int("BALLAST_LB_WARMUP", &cfg->warmup) < 0;
  bad |= ballast__env_int("BALLAST_LB_HORIZON", &cfg->horizon) < 0;
  return bad ? BALLAST_EINVAL : 0;
}

const char *rta_reason_name(rta_reason_t reason) {
  switch (reason) {
  case RTA_REASON_OFF: return "off";
  case RTA_REASON_EXPLICIT: return "explicit";
  case RTA_REASON_WARMUP: return "warmup";
  case RTA_REASON_FILLING: return "filling";
  case RTA_REASON_BALANCED: return "balanced";
  case RTA_REASON_NOT_WORTH: return "not-worth";
  case RTA_REASON_IMBALANCED: return "imbalanced";
  case RTA_REASON_NOTHING_MOVES: return "nothing-moves";
  case RTA_REASON_BACKOFF: return "backoff";
  case RTA_REASON_WARM_START: return "warm-start";
  case RTA_REASON_UNCONFIRMED: return "unconfirmed";
  case RTA_REASON_NOISE: return "noise";
  case RTA_REASON_ESTIMATED: return "estimated";
  }
  return "unknown";
}

static int config_valid(const rta_policy_config_t *c) {
  return c->mode >= RTA_POLICY_OFF && c->mode <= RTA_POLICY_AUTO &&
         c->warmup >= 0 && c->window >= 3 && isfinite(c->threshold) &&
         c->threshold >= 1.0 && isfinite(c->outlier) && c->outlier > 1.0 &&
         c->horizon >= 1 && isfinite(c->initial_cost) && c->initial_cost >= 0;
}

/* The configuration, or the defaults for NULL; 0 when usable (a warning
 * names the figures when not). */
static int config_take(const rta_policy_config_t *cfg, rta_policy_config_t *c,
                       const char *who) {
  if (cfg)
    *c = *cfg;
  else
    rta_policy_config_init(c);
  if (config_valid(c))
    return 0;
  BALLAST_WARN("%s: invalid configuration (window %d, warmup %d, threshold %g, "
               "outlier %g, horizon %d, initial cost %g)", who, c->window, c->warmup,
               c->threshold, c->outlier, c->horizon, c->initial_cost);
  return BALLAST_EINVAL;
}

int rta_policy_create(const rta_policy_config_t *cfg, int nranks,
                      rta_policy_t **out) {
  if (!out || nranks < 1)
    return BALLAST_EINVAL;
  *out = NULL;
  rta_policy_config_t c;
  if (config_take(cfg, &c, "rta_policy_create"))
    return BALLAST_EINVAL;
  rta_policy_t *p = ballast__calloc(1, sizeof *p);
  if (!p)
    return BALLAST_ENOMEM;
  p->cfg = c;
  p->nranks = nranks;
  p->pos = -1;
  p->skip_left = c.warmup <= MIN_WARMUP ? c.warmup : 0;
  p->prev_slowest = -1;
  p->delivery = 1.0;
  p->map = (est_t){c.initial_cost, c.initial_cost, 0, 0};
  p->move = (est_t){0, 0, 0, 0};
  *out = p;
  return 0;
}

void rta_policy_destroy(rta_policy_t *p) {
  if (!p)
    return;
  if (p->ranks)
    for (int r = 0; r < p->nranks; r++)
      rta_policy_rank_destroy(p->ranks[r]);
  free(p->ranks);
  free(p);
}

const rta_policy_config_t *rta_policy_config(const rta_policy_t *p) {
  return p ? &p->cfg : NULL;
}

/* ---- one rank's part ------------------------------------------------------ */

int rta_policy_rank_create(const rta_policy_config_t *cfg, rta_policy_rank_t **out) {
  if (!out)
    return BALLAST_EINVAL;
  *out = NULL;
  rta_policy_config_t c;
  if (config_take(cfg, &c, "rta_policy_rank_create"))
    return BALLAST_EINVAL;
  rta_policy_rank_t *k = ballast__calloc(1, sizeof *k);
  if (!k)
    return BALLAST_ENOMEM;
  k->cfg = c;
  ballast__reps_params_t rp;
  ballast__reps_params_init(&rp);
  rp.outlier = c.outlier;
  if (c.warmup > MIN_WARMUP)
    rp.settle = c.warmup;
  (void)ballast__reps_init(&k->reps, &rp); /* valid: settle > min_warmup */
  if (!(k->win = ballast__malloc(sizeof(double) * (size_t)c.window))) {
    free(k);
    return BALLAST_ENOMEM;
  }
  *out = k;
  return 0;
}

void rta_policy_rank_destroy(rta_policy_rank_t *k) {
  if (!k)
    return;
  free(k->win);
  free(k);
}

void rta_policy_rank_remapped(rta_policy_rank_t *k) {
  if (!k)
    return;
  ballast__reps_rebase(&k->reps);
  k->nwin = k->outl = 0;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Whether this rank still counts its steps as warm-up: the classifier's
 * answer, or a fixed count for warmup <= MIN_WARMUP. */
static int rank_warming(const rta_policy_rank_t *k) {
  if (k->cfg.warmup <= MIN_WARMUP) /* steps 0 .. warmup-1 */
    return k->n < k->cfg.warmup;
  return ballast__reps_warming(&k->reps);
}

int rta_policy_rank_observe(rta_policy_rank_t *k, const rta_policy_t *p, int rank,
                            double seconds, rta_policy_step_t *out) {
  if (out)
    memset(out, 0, sizeof *out);
  if (!k || !p || !out || rank < 0 || rank >= p->nranks)
    return BALLAST_EINVAL;
  out->ranks = 1;
  out->win_slowest = rank;
  if (!isfinite(seconds) || seconds < 0)
    return BALLAST_EINVAL;
  /* the median before this step: what a provisional warm-up label and the
   * fixed-count warm-up judge outliers against */
  double med = ballast__reps_median(&k->reps);
  int label = ballast__reps_add(&k->reps, seconds);
  k->n++;
  int outlier = label == BALLAST__REP_OUTLIER ||
                (label == BALLAST__REP_WARMUP && med > 0 &&
                 seconds >= k->cfg.outlier * med);
  out->warming = rank_warming(k);
  out->outliers = outlier;
  out->max_time = out->sum_time = seconds;
  if (p->pos < 0)
    return label;
  if (outlier)
    k->outl++;
  else if (label != BALLAST__REP_FIRST && k->nwin < k->cfg.window)
    k->win[k->nwin++] = seconds;
  if (p->pos < k->cfg.window - 1)
    return label;
  /* the window's last step: its good median (all outliers: 0) */
  double m = 0;
  if (k->nwin > 0) {
    qsort(k->win, (size_t)k->nwin, sizeof *k->win, cmp_double);
    int n = k->nwin;
    m = (n % 2) ? k->win[n / 2] : 0.5 * (k->win[n / 2 - 1] + k->win[n / 2]);
  }
  out->window = 1;
  out->win_max = out->win_sum = m;
  if (rank == p->prev_slowest)
    out->win_prev = m;
  out->win_outliers = k->outl;
  k->nwin = k->outl = 0;
  return label;
}

/* ---- merged steps ----------------------------------------------------------- */

void rta_policy_step_merge(rta_policy_step_t *a, const rta_policy_step_t *b) {
  if (!a || !b)
    return;
  if (b->win_max > a->win_max ||
      (b->win_max == a->win_max && b->win_slowest < a->win_slowest))
    a->win_slowest = b->win_slowest;
  a->win_max = fmax(a->win_max, b->win_max);
  a->max_time = fmax(a->max_time, b->max_time);
  a->ranks += b->ranks;
  a->warming += b->warming;
  a->outliers += b->outliers;
  a->sum_time += b->sum_time;
  a->window += b->window;
  a->win_sum += b->win_sum;
  a->win_outliers += b->win_outliers;
  a->win_prev = fmax(a->win_prev, b->win_prev);
}

void rta_policy_step_pack(const rta_policy_step_t *s, double *v) {
  if (!s || !v)
    return;
  const double f[RTA_POLICY_STEP_DOUBLES] = {
      s->ranks, s->warming, s->outliers, s->max_time, s->sum_time,
      s->window, s->win_max, s->win_slowest, s->win_sum, s->win_outliers, s->win_prev};
  memcpy(v, f, sizeof f);
}

void rta_policy_step_unpack(const double *v, rta_policy_step_t *s) {
  if (!s || !v)
    return;
  *s = (rta_policy_step_t){v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9],
                           v[10]};
}

static int step_valid(const rta_policy_t *p, const rta_policy_step_t *s) {
  double v[RTA_POLICY_STEP_DOUBLES];
  rta_policy_step_pack(s, v);
  for (int i = 0; i < RTA_POLICY_STEP_DOUBLES; i++)
    if (!isfinite(v[i]) || v[i] < 0)
      return 0;
  return s->ranks == p->nranks && s->win_slowest < p->nranks;
}

int rta_policy_observe_step(rta_policy_t *p, const rta_policy_step_t *s) {
  if (!p || !s || !step_valid(p, s))
    return BALLAST_EINVAL;
  p->steps++;
  if (p->hold_left > 0)
    p->hold_left--;
  if (p->pos < 0) {
    if (p->skip_left > 0)
      p->skip_left--;
    if (p->skip_left == 0 && s->warming == 0) {
      p->pos = 0; /* the next step opens a window */
      if (!p->warm_end)
        p->warm_end = p->steps;
    }
    return 0;
  }
  if (s->window > 0 || p->pos >= p->cfg.window - 1) {
    p->win = *s;
    p->pending = s->window > 0;
    p->pos = 0;
  } else {
    p->pos++;
  }
  return 0;
}

int rta_policy_observe(rta_policy_t *p, const double *times, int nranks) {
  if (!p || !times || nranks != p->nranks)
    return BALLAST_EINVAL;
  for (int r = 0; r < nranks; r++)
    if (!isfinite(times[r]) || times[r] < 0)
      return BALLAST_EINVAL;
  if (!p->ranks) {
    p->ranks = ballast__calloc((size_t)nranks, sizeof *p->ranks);
    if (!p->ranks)
      return BALLAST_ENOMEM;
    for (int r = 0; r < nranks; r++)
      if (rta_policy_rank_create(&p->cfg, &p->ranks[r])) {
        for (int q = 0; q < r; q++)
          rta_policy_rank_destroy(p->ranks[q]);
        free(p->ranks);
        p->ranks = NULL;
        return BALLAST_ENOMEM;
      }
  }
  rta_policy_step_t all, one;
  for (int r = 0; r < nranks; r++) {
    rta_policy_rank_observe(p->ranks[r], p, r, times[r], r ? &one : &all);
    if (r)
      rta_policy_step_merge(&all, &one);
  }
  return rta_policy_observe_step(p, &all);
}

/* The estimate at step \a now: trust in the last measurements halves every
 * horizon steps, towards the floor. */
static double est_at(const rta_policy_t *p, const est_t *e, long long now) {
  double age = (double)(now - e->at);
  return e->floor + (e->value - e->floor) * exp2(-age / p->cfg.horizon);
}

/* A new measurement \a m at the current step: a cheaper one replaces the
 * estimate, a dearer one counts half. */
static void est_feed(rta_policy_t *p, est_t *e, double m) {
  double cur = est_at(p, e, p->steps);
  e->value = (!e->measured || m <= cur) ? m : cur + 0.5 * (m - cur);
  e->floor = p->cfg.initial_cost < e->value ? p->cfg.initial_cost : e->value;
  e->at = p->steps;
  e->measured = 1;
}

/* The cost a remap is expected to have now: mapping + migration. */
static double cost_now(const rta_policy_t *p) {
  return est_at(p, &p->map, p->steps) + est_at(p, &p->move, p->steps);
}

/* The share of a predicted gain to expect now (rta_policy.h, step 7): what
 * the last committed remap delivered of the drop in imbalance its candidate
 * predicted, trusted less by half every horizon steps (towards 1). */
static double deliver_now(const rta_policy_t *p) {
  double age = (double)(p->steps - p->delivery_at);
  return 1.0 - (1.0 - p->delivery) * exp2(-age / p->cfg.horizon);
}

/* The first window judged after a committed remap: what share of the
 * excess imbalance (above 1) it removed, measured, against the share its
 * candidate predicted (the cost model's: time outside the tasks dilutes the
 * measured imbalance, so the shares compare, not the drops). Less than half
 * backs the policy off as a dropped candidate does. 1 when it did not
 * deliver. */
static int check_delivery(rta_policy_t *p, double imbalance) {
  p->check_delivery = 0;
  double got = ((p->remap_imb - imbalance) / (p->remap_imb - 1.0)) /
               ((p->remap_now - p->remap_pred) / (p->remap_now - 1.0));
  p->delivery = !(got > 0) ? 0 : got > 1 ? 1 : got;
  p->delivery_at = p->steps;
  if (p->delivery < 0.5) {
    p->hold_left = p->cfg.window << p->skips;
    if (p->skips < MAX_BACKOFF_SHIFT)
      p->skips++;
  } else {
    p->skips = 0;
  }
  BALLAST_INFO("lb: the remap before step %lld delivered %.0f%% of what its candidate "
               "predicted (measured imbalance %.3f -> %.3f; predicted %.3f -> %.3f)%s",
               p->steps, 100 * p->delivery, p->remap_imb, imbalance, p->remap_now,
               p->remap_pred, p->delivery < 0.5 ? "; judging again after a back-off" : "");
  p->remap_now = p->remap_imb = p->remap_pred = 0;
  return p->delivery < 0.5;
}

/* The judgement of the window just closed: its figures, then noise or
 * imbalance (rta_policy.h, step 4), then gain against cost. */
static void judge_window(rta_policy_t *p, rta_decision_t *d) {
  const rta_policy_step_t *w = &p->win;
  p->pending = 0;
  double avg = w->win_sum / p->nranks, mx = w->win_max;
  int slowest = (int)w->win_slowest;
  d->max_time = mx;
  d->avg_time = avg;
  d->imbalance = avg > 0 ? mx / avg : 1.0;
  int undelivered = p->check_delivery && check_delivery(p, d->imbalance);
  d->predicted_gain = (mx - avg) * p->cfg.horizon * deliver_now(p);
  d->ignored_outliers = (int)w->win_outliers;
  d->slowest = slowest;
  if (w->win_outliers > 0)
    d->noise |= RTA_NOISE_OUTLIERS;
  /* every rank slower: the average grew, and the max no more than it
   * (one slower rank grows the max, and the imbalance, more) */
  if (p->prev_avg > 0 && avg > p->cfg.threshold * p->prev_avg &&
      d->imbalance <= p->cfg.threshold * (p->prev_max / p->prev_avg))
    d->noise |= RTA_NOISE_MACHINE;
  if (d->imbalance <= p->cfg.threshold) {
    p->streak = 0;
    d->reason = RTA_REASON_BALANCED;
  } else {
    /* the rank slowest in the imbalanced window before is still slow */
    int same = p->streak > 0 && w->win_prev > p->cfg.threshold * avg;
    if (p->streak > 0 && !same)
      d->noise |= RTA_NOISE_MOVING;
    p->streak = same ? p->streak + 1 : 1;
    d->persistent = p->streak;
    if (p->streak < 2)
      d->reason = (d->noise & RTA_NOISE_MOVING) ? RTA_REASON_NOISE : RTA_REASON_UNCONFIRMED;
    else if (d->predicted_gain <= d->remap_cost)
      d->reason = RTA_REASON_NOT_WORTH;
    else {
      d->reason = RTA_REASON_IMBALANCED;
      d->remap = 1;
    }
  }
  p->prev_slowest = slowest;
  p->prev_avg = avg;
  p->prev_max = mx;
  if (undelivered)
    p->streak = 0; /* after the back-off, two windows must show it again */
  if (d->remap)
    p->remap_imb = d->imbalance;
  BALLAST_INFO("lb decision at step %lld: %s (imbalance %.3f, threshold %.3f, slowest "
               "rank %d, %d window(s) in a row, noise:%s%s%s%s, predicted gain %.3g s "
               "over %d steps, remap cost %.3g s, %d outliers ignored)",
               d->step, rta_reason_name(d->reason), d->imbalance, p->cfg.threshold,
               slowest, d->persistent, d->noise ? "" : " none",
               (d->noise & RTA_NOISE_OUTLIERS) ? " outliers" : "",
               (d->noise & RTA_NOISE_MOVING) ? " moving" : "",
               (d->noise & RTA_NOISE_MACHINE) ? " machine" : "", d->predicted_gain,
               p->cfg.horizon, d->remap_cost, d->ignored_outliers);
}

int rta_policy_decide(rta_policy_t *p, rta_decision_t *d) {
  if (!p || !d)
    return BALLAST_EINVAL;
  memset(d, 0, sizeof *d);
  d->step = p->steps;
  d->remap_cost = cost_now(p);
  d->slowest = -1;
  d->warmup_end = p->warm_end;
  switch (p->cfg.mode) {
  case RTA_POLICY_OFF:
    d->reason = RTA_REASON_OFF;
    return 0;
  case RTA_POLICY_EXPLICIT:
    d->remap = 1;
    d->reason = RTA_REASON_EXPLICIT;
    return 0;
  case RTA_POLICY_AUTO:
    break;
  }
  if (p->pos < 0) {
    d->reason = RTA_REASON_WARMUP;
    return 0;
  }
  if (p->hold_left > 0) {
    p->pending = 0; /* a window closed during the back-off is not judged */
    d->reason = RTA_REASON_BACKOFF;
    return 0;
  }
  if (!p->pending) {
    d->reason = RTA_REASON_FILLING;
    return 0;
  }
  judge_window(p, d);
  return 0;
}

static int finite_nonneg(double x) { return isfinite(x) && x >= 0; }

int rta_policy_confirm(rta_policy_t *p, const rta_remap_candidate_t *c,
                       rta_decision_t *d) {
  if (!p || !c || !d || !finite_nonneg(c->imbalance_now) ||
      !finite_nonneg(c->imbalance_after) || c->tasks < 0 || !finite_nonneg(c->bytes) ||
      !finite_nonneg(c->mapping_seconds))
    return BALLAST_EINVAL;
  if (p->cfg.mode != RTA_POLICY_AUTO || !d->remap || d->reason != RTA_REASON_IMBALANCED)
    return 0;
  /* The mapping is paid for: only its migration is still to weigh. */
  double move = est_at(p, &p->move, p->steps);
  if (p->move_bytes > 0)
    move *= c->bytes / p->move_bytes;
  double gain = p->cfg.horizon * d->avg_time * (c->imbalance_now - c->imbalance_after) *
                deliver_now(p);
  d->predicted_gain = gain;
  d->remap_cost = move;
  d->predicted_imbalance = c->imbalance_after;
  d->tasks_to_move = c->tasks;
  if (c->tasks > 0 && gain > move) {
    p->remap_now = c->imbalance_now;
    p->remap_pred = c->imbalance_after;
    p->accepted = 1;
    return 0;
  }
  d->remap = 0;
  d->reason = c->tasks == 0 ? RTA_REASON_NOTHING_MOVES : RTA_REASON_NOT_WORTH;
  est_feed(p, &p->map, c->mapping_seconds);
  p->hold_left = p->cfg.window << p->skips;
  if (p->skips < MAX_BACKOFF_SHIFT)
    p->skips++;
  BALLAST_INFO("lb candidate at step %lld dropped: %s (%lld tasks, predicted "
               "imbalance %.3f from %.3f, gain %.3g s, migration %.3g s); next "
               "judgement in %d steps", d->step, rta_reason_name(d->reason),
               c->tasks, c->imbalance_after, c->imbalance_now, gain, move,
               p->hold_left);
  return 0;
}

int rta_policy_remap_measured(rta_policy_t *p, const rta_remap_measure_t *m) {
  if (!p || !m || !finite_nonneg(m->mapping) || !finite_nonneg(m->migration) ||
      !finite_nonneg(m->bytes))
    return BALLAST_EINVAL;
  est_feed(p, &p->map, m->mapping);
  /* A migration of nothing says nothing about the cost per byte. */
  if (m->bytes > 0 || !p->move.measured) {
    est_feed(p, &p->move, m->migration);
    p->move_bytes = m->bytes;
  }
  /* a committed remap ends the back-off; the first window after it says
   * whether it delivered (a remap the policy did not judge, explicit or
   * forced, has no prediction to check) */
  if (m->committed && deliver_now(p) >= 0.5)
    p->skips = 0; /* after remaps that did not deliver, the back-off keeps growing */
  /* only a remap of a candidate confirm accepted has a prediction (an
   * explicit, forced or warm remap in between makes an older one stale) */
  p->check_delivery = m->committed && p->accepted && p->remap_imb > 1.0 &&
                      p->remap_now > 1.0 && p->remap_pred < p->remap_now;
  p->accepted = 0;
  if (!p->check_delivery)
    p->remap_now = p->remap_imb = p->remap_pred = 0;
  p->hold_left = 0;
  p->pos = -1;
  p->pending = 0;
  p->skip_left = p->cfg.warmup < AFTER_REMAP ? p->cfg.warmup : AFTER_REMAP;
  p->streak = 0;
  p->prev_slowest = -1;
  p->prev_avg = 0;
  p->prev_max = 0;
  if (p->ranks)
    for (int r = 0; r < p->nranks; r++)
      rta_policy_rank_remapped(p->ranks[r]);
  return 0;
}

