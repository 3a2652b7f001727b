/* Repetitions classified online: the rules and their online form are
 * described in reps.h. */
#include "common/reps.h"

#include <math.h>
#include <string.h>

#include <ballast/common.h>

const char *ballast__rep_label_name(int label) {
  switch (label) {
  case BALLAST__REP_FIRST: return "first";
  case BALLAST__REP_WARMUP: return "warmup";
  case BALLAST__REP_OUTLIER: return "outlier";
  case BALLAST__REP_GOOD: return "good";
  }
  return "unknown";
}

void ballast__reps_params_init(ballast__reps_params_t *p) {
  if (!p)
    return;
  p->min_warmup = 10;
  p->drop = 0.10;
  p->outlier = 2.0;
  p->settle = 20;
  p->max_warmup = 1000;
}

/* ---- P-square median ------------------------------------------------------ */

void ballast__p2_init(ballast__p2_t *m) { memset(m, 0, sizeof *m); }

/* The height marker i moves to by \a d (+1 or -1): the parabolic
 * prediction, or the linear one when the parabola leaves its neighbours. */
static double p2_height(const ballast__p2_t *m, int i, double d) {
  const double *q = m->q, *n = m->pos;
  double par = q[i] + d / (n[i + 1] - n[i - 1]) *
                          ((n[i] - n[i - 1] + d) * (q[i + 1] - q[i]) / (n[i + 1] - n[i]) +
                           (n[i + 1] - n[i] - d) * (q[i] - q[i - 1]) / (n[i] - n[i - 1]));
  if (q[i - 1] < par && par < q[i + 1])
    return par;
  int j = i + (int)d;
  return q[i] + d * (q[j] - q[i]) / (n[j] - n[i]);
}

void ballast__p2_add(ballast__p2_t *m, double x) {
  if (m->n < 5) {
    /* insertion into the sorted first values */
    int i = (int)m->n;
    while (i > 0 && m->q[i - 1] > x) {
      m->q[i] = m->q[i - 1];
      i--;
    }
    m->q[i] = x;
    if (++m->n == 5)
      for (int k = 0; k < 5; k++) {
        m->pos[k] = k + 1;
        m->want[k] = k + 1; /* 1, 1+2p, 1+4p, 3+2p, 5 at p = 1/2 */
      }
    return;
  }
  int k;
  if (x < m->q[0]) {
    m->q[0] = x;
    k = 0;
  } else if (x >= m->q[4]) {
    m->q[4] = x;
    k = 3;
  } else {
    k = 0;
    while (k < 3 && x >= m->q[k + 1])
      k++;
  }
  for (int i = k + 1; i < 5; i++)
    m->pos[i] += 1;
  static const double dn[5] = {0, 0.25, 0.5, 0.75, 1};
  for (int i = 0; i < 5; i++)
    m->want[i] += dn[i];
  for (int i = 1; i <= 3; i++) {
    double d = m->want[i] - m->pos[i];
    if ((d >= 1 && m->pos[i + 1] - m->pos[i] > 1) ||
        (d <= -1 && m->pos[i - 1] - m->pos[i] < -1)) {
      double s = d > 0 ? 1.0 : -1.0;
      m->q[i] = p2_height(m, i, s);
      m->pos[i] += s;
    }
  }
  m->n++;
}

double ballast__p2_median(const ballast__p2_t *m) {
  if (m->n == 0)
    return 0;
  if (m->n >= 5)
    return m->q[2];
  int n = (int)m->n;
  return (n % 2) ? m->q[n / 2] : 0.5 * (m->q[n / 2 - 1] + m->q[n / 2]);
}

/* ---- statistics ----------------------------------------------------------- */

void ballast__reps_stats_init(ballast__reps_stats_t *s) {
  memset(s, 0, sizeof *s);
  ballast__p2_init(&s->med);
}

void ballast__reps_stats_add(ballast__reps_stats_t *s, double x) {
  if (s->n == 0 || x < s->min)
    s->min = x;
  if (s->n == 0 || x > s->max)
    s->max = x;
  s->n++;
  s->sum += x;
  double d = x - s->mean;
  s->mean += d / (double)s->n;
  s->m2 += d * (x - s->mean);
  ballast__p2_add(&s->med, x);
}

double ballast__reps_stats_var(const ballast__reps_stats_t *s) {
  return s->n > 1 ? s->m2 / (double)(s->n - 1) : 0;
}

void ballast__reps_stats_merge(ballast__reps_stats_t *a, const ballast__reps_stats_t *b) {
  if (b->n == 0)
    return;
  if (a->n == 0) {
    *a = *b;
    return;
  }
  double n = (double)(a->n + b->n), d = b->mean - a->mean;
  a->m2 += b->m2 + d * d * (double)a->n * (double)b->n / n;
  a->mean += d * (double)b->n / n;
  if (b->n > a->n)
    a->med = b->med;
  a->n += b->n;
  a->sum += b->sum;
  a->min = b->min < a->min ? b->min : a->min;
  a->max = b->max > a->max ? b->max : a->max;
}

/* ---- the classifier -------------------------------------------------------- */

static int params_valid(const ballast__reps_params_t *p) {
  return p->min_warmup >= 2 && isfinite(p->drop) && p->drop > 0 &&
         isfinite(p->outlier) && p->outlier > 1 && p->settle > p->min_warmup &&
         p->max_warmup >= 0;
}

int ballast__reps_init(ballast__reps_t *r, const ballast__reps_params_t *p) {
  memset(r, 0, sizeof *r);
  ballast__reps_params_init(&r->p);
  int rc = 0;
  if (p && params_valid(p))
    r->p = *p;
  else if (p)
    rc = BALLAST_EINVAL;
  ballast__p2_init(&r->med_all);
  ballast__p2_init(&r->med_post);
  ballast__reps_stats_init(&r->good);
  ballast__reps_stats_init(&r->prov);
  r->last = -1;
  return rc;
}

double ballast__reps_median(const ballast__reps_t *r) {
  return r->med_post.n >= 5 ? ballast__p2_median(&r->med_post)
                            : ballast__p2_median(&r->med_all);
}

int ballast__reps_warming(const ballast__reps_t *r) {
  return r->n == 0 || r->warm_end == 0;
}

void ballast__reps_rebase(ballast__reps_t *r) {
  ballast__p2_init(&r->med_post);
  ballast__reps_stats_init(&r->good);
  r->outliers = 0;
}

/* Repetition \a x after the warm-up: good or outlier. */
static int judge(ballast__reps_t *r, double x) {
  double med = ballast__reps_median(r);
  ballast__p2_add(&r->med_post, x);
  if (med > 0 && x >= r->p.outlier * med) {
    r->outliers++;
    return BALLAST__REP_OUTLIER;
  }
  ballast__reps_stats_add(&r->good, x);
  return BALLAST__REP_GOOD;
}

int ballast__reps_add(ballast__reps_t *r, double x) {
  if (!isfinite(x) || x < 0)
    return BALLAST_EINVAL;
  long long w = r->n++;
  if (w == 0)
    return r->last = BALLAST__REP_FIRST;
  /* The published rule: the cumulative minimum of 1..w against the one of
   * 1..w-1, measured in the median of 1..w-1. */
  double med = ballast__p2_median(&r->med_all);
  int cliff = w >= r->p.min_warmup && w > 1 && r->cummin - x > r->p.drop * med;
  if (w == 1 || x < r->cummin)
    r->cummin = x;
  ballast__p2_add(&r->med_all, x);
  int late = r->warm_end == 1 && cliff && w <= r->p.max_warmup;
  if ((r->warm_end == 0 && cliff) || late) {
    r->warm_end = w;
    r->late = late;
    ballast__reps_rebase(r);
    return r->last = judge(r, x);
  }
  if (r->warm_end > 0)
    return r->last = judge(r, x);
  if (w < r->p.settle) {
    /* Provisional warm-up: kept apart until the verdict, outliers against
     * the median so far left out. */
    if (!(med > 0 && x >= r->p.outlier * med))
      ballast__reps_stats_add(&r->prov, x);
    return r->last = BALLAST__REP_WARMUP;
  }
  /* settle repetitions without a cliff: there was no warm-up. */
  r->warm_end = 1;
  r->med_post = r->med_all;
  r->good = r->prov;
  ballast__reps_stats_init(&r->prov);
  /* x is already in med_all (and so in med_post): judge it against the
   * median without adding it twice */
  double m = ballast__reps_median(r);
  if (m > 0 && x >= r->p.outlier * m) {
    r->outliers++;
    return r->last = BALLAST__REP_OUTLIER;
  }
  ballast__reps_stats_add(&r->good, x);
  return r->last = BALLAST__REP_GOOD;
}
