/* common's online repetition classifier (common/reps.h) on injected series:
 * a warm-up of known length found within 3 repetitions (also one longer
 * than the settling time, found late), isolated 10x spikes labelled
 * outliers and kept out of the good statistics, no warm-up, a constant
 * series, the P-square median against the exact one, bad input refused.
 * Deterministic series (a fixed-seed generator), no MPI, no clock. */
#include <stdlib.h>
#include <string.h>

#include "common/common_internal.h"
#include "common/reps.h"
#include "test_util.h"

/* A deterministic jitter in [-amp, amp]. */
static double jitter(unsigned long long *s, double amp) {
  *s = *s * 6364136223846793005ull + 1442695040888963407ull;
  double u = (double)(*s >> 11) / 9007199254740992.0; /* [0, 1) */
  return amp * (2 * u - 1);
}

/* Warm-up of \a len repetitions at \a level times the base, jitter 3%. */
static void warmup_found(int len, double level) {
  ballast__reps_t r;
  CHECK_EQ(ballast__reps_init(&r, NULL), 0);
  unsigned long long s = 42 + (unsigned)len;
  long long first_good = -1;
  for (int i = 0; i < 400; i++) {
    double x = (i < len ? level : 1.0) * (1 + jitter(&s, 0.03));
    int lab = ballast__reps_add(&r, x);
    if (i == 0)
      CHECK_EQ(lab, BALLAST__REP_FIRST);
    if (lab == BALLAST__REP_GOOD && first_good < 0 && r.warm_end > 1)
      first_good = i;
  }
  CHECK_GE(r.warm_end, len);
  CHECK_LE(r.warm_end, len + 3);
  CHECK_EQ(r.late, len > r.p.settle);
  CHECK_EQ(ballast__reps_warming(&r), 0);
  /* the good statistics hold the steady state only */
  CHECK_DLE(r.good.max, 1.031);
  CHECK_DGE(r.good.min, 0.969);
  CHECK_NEAR(ballast__p2_median(&r.good.med), 1.0, 0.02);
  CHECK_NEAR(r.good.mean, 1.0, 0.01);
  CHECK_EQ(r.good.n + r.outliers, 400 - r.warm_end);
  if (len <= r.p.settle) /* found while still warming: good from the end on */
    CHECK_EQ(first_good, r.warm_end);
}

/* Isolated 10x spikes in a series without warm-up. */
static void spikes(void) {
  ballast__reps_t r;
  CHECK_EQ(ballast__reps_init(&r, NULL), 0);
  unsigned long long s = 7;
  int spikes_after = 0, labelled = 0;
  for (int i = 0; i < 300; i++) {
    int spike = i % 37 == 5;
    double x = (spike ? 10.0 : 1.0) * (1 + jitter(&s, 0.05));
    int lab = ballast__reps_add(&r, x);
    if (spike && i >= r.p.settle) {
      spikes_after++;
      labelled += lab == BALLAST__REP_OUTLIER;
    }
    if (!spike && i >= r.p.settle)
      CHECK_EQ(lab, BALLAST__REP_GOOD);
  }
  CHECK_GT(spikes_after, 5);
  CHECK_EQ(labelled, spikes_after);
  CHECK_EQ(r.warm_end, 1);
  CHECK_EQ(r.outliers, spikes_after);
  CHECK_DLE(r.good.max, 1.051);
  CHECK_NEAR(r.good.mean, 1.0, 0.02);
  /* provisional reps joined the good ones, the early spike did not */
  CHECK_EQ(r.good.n, 299 - 1 - spikes_after);
  CHECK_EQ(r.last, BALLAST__REP_GOOD);
}

/* No warm-up: warming until settle, then not; every later rep good. */
static void no_warmup(double amp) {
  ballast__reps_t r;
  ballast__reps_params_t p;
  ballast__reps_params_init(&p);
  p.settle = 15;
  CHECK_EQ(ballast__reps_init(&r, &p), 0);
  unsigned long long s = 99;
  for (int i = 0; i < 200; i++) {
    int lab = ballast__reps_add(&r, 3e-3 * (1 + jitter(&s, amp)));
    if (i == 0)
      CHECK_EQ(lab, BALLAST__REP_FIRST);
    else if (i < 15) {
      CHECK_EQ(lab, BALLAST__REP_WARMUP);
      CHECK_EQ(ballast__reps_warming(&r), 1);
    } else {
      CHECK_EQ(lab, BALLAST__REP_GOOD);
      CHECK_EQ(ballast__reps_warming(&r), 0);
    }
  }
  CHECK_EQ(r.warm_end, 1);
  CHECK_EQ(r.late, 0);
  CHECK_EQ(r.good.n, 199);
  CHECK_EQ(r.outliers, 0);
  if (amp == 0) {
    CHECK(r.good.min == 3e-3 && r.good.max == 3e-3);
    CHECK(ballast__p2_median(&r.good.med) == 3e-3);
    CHECK_DLE(ballast__reps_stats_var(&r.good), 1e-30);
  }
  CHECK_NEAR(ballast__reps_median(&r), 3e-3, 3e-3 * amp + 1e-15);
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* P-square against the exact median: exact below 5, close on a skewed
 * series (exponential-like), in place on a stream of millions (O(1)). */
static void p2_accuracy(void) {
  ballast__p2_t m;
  ballast__p2_init(&m);
  CHECK(ballast__p2_median(&m) == 0);
  double first[4] = {5, 1, 4, 2};
  for (int i = 0; i < 4; i++)
    ballast__p2_add(&m, first[i]);
  CHECK(ballast__p2_median(&m) == 3); /* (2 + 4) / 2 */
  enum { N = 20001 };
  static double v[N];
  unsigned long long s = 3;
  ballast__p2_init(&m);
  for (int i = 0; i < N; i++) {
    double u = 0.5 * (1 + jitter(&s, 0.999999));
    v[i] = -log(1 - u);
    ballast__p2_add(&m, v[i]);
  }
  qsort(v, N, sizeof *v, cmp);
  CHECK_NEAR(ballast__p2_median(&m), v[N / 2], 0.02 * v[N / 2]);
}

/* Statistics merged equal statistics fed at once. */
static void stats_merge(void) {
  ballast__reps_stats_t a, b, all;
  ballast__reps_stats_init(&a);
  ballast__reps_stats_init(&b);
  ballast__reps_stats_init(&all);
  for (int i = 0; i < 50; i++) {
    double x = 1 + (i % 7) * 0.25;
    ballast__reps_stats_add(i < 20 ? &a : &b, x);
    ballast__reps_stats_add(&all, x);
  }
  ballast__reps_stats_merge(&a, &b);
  CHECK_EQ(a.n, 50);
  CHECK_NEAR(a.sum, all.sum, 1e-12);
  CHECK_NEAR(a.mean, all.mean, 1e-12);
  CHECK_NEAR(ballast__reps_stats_var(&a), ballast__reps_stats_var(&all), 1e-12);
  CHECK(a.min == all.min && a.max == all.max);
}

static void bad_input(void) {
  ballast__reps_t r;
  ballast__reps_params_t p;
  ballast__reps_params_init(&p);
  p.settle = p.min_warmup; /* must be later */
  CHECK_EQ(ballast__reps_init(&r, &p), BALLAST_EINVAL);
  CHECK_EQ(r.p.settle, 20); /* defaults kept */
  ballast__reps_params_init(&p);
  p.outlier = 1.0;
  CHECK_EQ(ballast__reps_init(&r, &p), BALLAST_EINVAL);
  ballast__reps_params_init(&p);
  p.drop = NAN;
  CHECK_EQ(ballast__reps_init(&r, &p), BALLAST_EINVAL);
  CHECK_EQ(ballast__reps_init(&r, NULL), 0);
  CHECK_EQ(ballast__reps_warming(&r), 1);
  CHECK_EQ(r.last, -1);
  CHECK_EQ(ballast__reps_add(&r, -1), BALLAST_EINVAL);
  CHECK_EQ(ballast__reps_add(&r, NAN), BALLAST_EINVAL);
  CHECK_EQ(ballast__reps_add(&r, INFINITY), BALLAST_EINVAL);
  CHECK_EQ(r.n, 0);
  CHECK_EQ(ballast__reps_add(&r, 0), BALLAST__REP_FIRST);
  /* zeros: no median to be an outlier of, no warm-up */
  for (int i = 1; i < 30; i++)
    CHECK_EQ(ballast__reps_add(&r, 0), i < 20 ? BALLAST__REP_WARMUP : BALLAST__REP_GOOD);
  CHECK_EQ(r.warm_end, 1);
  CHECK_STREQ(ballast__rep_label_name(BALLAST__REP_OUTLIER), "outlier");
  CHECK_STREQ(ballast__rep_label_name(9), "unknown");
}

/* rebase: good statistics restart at the new level, warm-up kept. */
static void rebase(void) {
  ballast__reps_t r;
  ballast__reps_init(&r, NULL);
  for (int i = 0; i < 60; i++)
    ballast__reps_add(&r, 2.0);
  ballast__reps_rebase(&r);
  for (int i = 0; i < 40; i++)
    CHECK_EQ(ballast__reps_add(&r, 1.5), BALLAST__REP_GOOD);
  CHECK_EQ(r.good.n, 40);
  CHECK(r.good.max == 1.5);
  CHECK_EQ(ballast__reps_warming(&r), 0);
  /* against the new level, 2x is an outlier */
  CHECK_EQ(ballast__reps_add(&r, 3.1), BALLAST__REP_OUTLIER);
}

int main(void) {
  warmup_found(12, 2.0);
  warmup_found(15, 1.3);
  warmup_found(10, 3.0);
  warmup_found(60, 2.0); /* longer than settle: found late */
  warmup_found(250, 1.5);
  spikes();
  no_warmup(0);
  no_warmup(0.04);
  p2_accuracy();
  stats_merge();
  bad_input();
  rebase();
  TEST_PASS("common_reps");
  return 0;
}
