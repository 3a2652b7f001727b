/* When to remap: the policy state machine documented in ballast/rta_policy.h. */
#include <ballast/rta_policy.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/common_internal.h"
#include "common/env.h"

/* Back-off after dropped candidates: 1, 2, 4, 8, 16 windows, no longer. */
#define MAX_BACKOFF_SHIFT 4

/* An estimate of seconds with decaying trust: \c value as of step \c at,
 * moving towards \c floor by half its distance every horizon steps. */
typedef struct {
  double value, floor;
  long long at;
  int measured;
} est_t;

struct rta_policy {
  rta_policy_config_t cfg;
  int nranks;
  double *ring;       /* window x nranks step times, oldest overwritten */
  int filled;         /* steps in the ring (<= window) */
  int head;           /* next row to write */
  int warm_left;      /* steps still to skip */
  long long steps;    /* steps observed */
  est_t map, move;    /* estimated seconds of mapping and of migration */
  double move_bytes;  /* bytes of the migration behind move (0: unknown) */
  int skips;          /* candidates dropped in a row (back-off exponent) */
  int hold_left;      /* back-off: steps still to wait before judging */
  double *scratch;    /* window doubles, for medians */
  double *medians;    /* nranks doubles */
};

void rta_policy_config_init(rta_policy_config_t *cfg) {
  if (!cfg)
    return;
  cfg->mode = RTA_POLICY_AUTO;
  cfg->warmup = 5;
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
  }
  return "unknown";
}

static int config_valid(const rta_policy_config_t *c) {
  return c->mode >= RTA_POLICY_OFF && c->mode <= RTA_POLICY_AUTO &&
         c->warmup >= 0 && c->window >= 3 && isfinite(c->threshold) &&
         c->threshold >= 1.0 && isfinite(c->outlier) && c->outlier > 1.0 &&
         c->horizon >= 1 && isfinite(c->initial_cost) && c->initial_cost >= 0;
}

int rta_policy_create(const rta_policy_config_t *cfg, int nranks,
                      rta_policy_t **out) {
  if (!out || nranks < 1)
    return BALLAST_EINVAL;
  *out = NULL;
  rta_policy_config_t c;
  if (cfg)
    c = *cfg;
  else
    rta_policy_config_init(&c);
  if (!config_valid(&c)) {
    BALLAST_WARN("rta_policy_create: invalid configuration (window %d, warmup %d, "
                 "threshold %g, outlier %g, horizon %d, initial cost %g)",
                 c.window, c.warmup, c.threshold, c.outlier, c.horizon,
                 c.initial_cost);
    return BALLAST_EINVAL;
  }
  rta_policy_t *p = ballast__calloc(1, sizeof *p);
  if (!p)
    return BALLAST_ENOMEM;
  p->cfg = c;
  p->nranks = nranks;
  p->ring = ballast__malloc(sizeof(double) * (size_t)c.window * (size_t)nranks);
  p->scratch = ballast__malloc(sizeof(double) * (size_t)c.window);
  p->medians = ballast__malloc(sizeof(double) * (size_t)nranks);
  if (!p->ring || !p->scratch || !p->medians) {
    rta_policy_destroy(p);
    return BALLAST_ENOMEM;
  }
  p->warm_left = c.warmup;
  p->map = (est_t){c.initial_cost, c.initial_cost, 0, 0};
  p->move = (est_t){0, 0, 0, 0};
  *out = p;
  return 0;
}

void rta_policy_destroy(rta_policy_t *p) {
  if (!p)
    return;
  free(p->ring);
  free(p->scratch);
  free(p->medians);
  free(p);
}

const rta_policy_config_t *rta_policy_config(const rta_policy_t *p) {
  return p ? &p->cfg : NULL;
}

int rta_policy_observe(rta_policy_t *p, const double *times, int nranks) {
  if (!p || !times || nranks != p->nranks)
    return BALLAST_EINVAL;
  for (int r = 0; r < nranks; r++)
    if (!isfinite(times[r]) || times[r] < 0)
      return BALLAST_EINVAL;
  p->steps++;
  if (p->hold_left > 0)
    p->hold_left--;
  if (p->warm_left > 0) {
    p->warm_left--;
    return 0;
  }
  memcpy(p->ring + (size_t)p->head * (size_t)p->nranks, times,
         sizeof(double) * (size_t)nranks);
  p->head = (p->head + 1) % p->cfg.window;
  if (p->filled < p->cfg.window)
    p->filled++;
  return 0;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median_sorted(const double *v, int n) {
  return (n % 2) ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Median of rank r's window, ignoring steps of outlier x the median or more. */
static double rank_median(rta_policy_t *p, int r, int *ignored) {
  int n = p->filled;
  for (int i = 0; i < n; i++)
    p->scratch[i] = p->ring[(size_t)i * (size_t)p->nranks + (size_t)r];
  qsort(p->scratch, (size_t)n, sizeof(double), cmp_double);
  double med = median_sorted(p->scratch, n);
  int keep = n;
  /* Sorted, so the outliers are a suffix. A zero median keeps every step. */
  while (med > 0 && keep > 1 && p->scratch[keep - 1] >= p->cfg.outlier * med)
    keep--;
  *ignored += n - keep;
  return keep == n ? med : median_sorted(p->scratch, keep);
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

int rta_policy_decide(rta_policy_t *p, rta_decision_t *d) {
  if (!p || !d)
    return BALLAST_EINVAL;
  memset(d, 0, sizeof *d);
  d->step = p->steps;
  d->remap_cost = cost_now(p);
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
  if (p->warm_left > 0 || p->filled == 0) {
    d->reason = RTA_REASON_WARMUP;
    return 0;
  }
  if (p->filled < p->cfg.window) {
    d->reason = RTA_REASON_FILLING;
    return 0;
  }
  if (p->hold_left > 0) {
    d->reason = RTA_REASON_BACKOFF;
    return 0;
  }
  double mx = 0, sum = 0;
  for (int r = 0; r < p->nranks; r++) {
    p->medians[r] = rank_median(p, r, &d->ignored_outliers);
    if (p->medians[r] > mx)
      mx = p->medians[r];
    sum += p->medians[r];
  }
  double avg = sum / p->nranks;
  d->max_time = mx;
  d->avg_time = avg;
  d->imbalance = avg > 0 ? mx / avg : 1.0;
  d->predicted_gain = (mx - avg) * p->cfg.horizon;
  if (d->imbalance <= p->cfg.threshold)
    d->reason = RTA_REASON_BALANCED;
  else if (d->predicted_gain <= d->remap_cost)
    d->reason = RTA_REASON_NOT_WORTH;
  else {
    d->reason = RTA_REASON_IMBALANCED;
    d->remap = 1;
  }
  BALLAST_INFO("lb decision at step %lld: %s (imbalance %.3f, threshold %.3f, "
               "predicted gain %.3g s over %d steps, remap cost %.3g s, %d outliers "
               "ignored)",
               d->step, rta_reason_name(d->reason), d->imbalance,
               p->cfg.threshold, d->predicted_gain, p->cfg.horizon, d->remap_cost,
               d->ignored_outliers);
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
  double gain = p->cfg.horizon * d->avg_time * (c->imbalance_now - c->imbalance_after);
  d->predicted_gain = gain;
  d->remap_cost = move;
  d->predicted_imbalance = c->imbalance_after;
  d->tasks_to_move = c->tasks;
  if (c->tasks > 0 && gain > move)
    return 0;
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
  if (m->committed)
    p->skips = 0;
  p->hold_left = 0;
  p->filled = 0;
  p->head = 0;
  p->warm_left = p->cfg.warmup;
  return 0;
}

