/* The automatic remap policy against synthetic step-time sequences: noise,
 * warm-up (a fixed count, a detected one, none), a single outlier, a real
 * drift (judged once per window, fired on the second imbalanced window with
 * the same slowest rank), a slowest rank that moves (noise, never fired), a
 * remap whose cost exceeds its gain, the skip after a remap, the merged
 * step's pieces (merge, pack), the off and explicit modes, the
 * environment overrides and bad input; and the ways a policy can get stuck:
 * one slow measured remap blocking every later remap (its trust decays), a
 * candidate mapping that moves nothing or gains less than its migration
 * (dropped, with a back-off), gain and cost of a candidate. Each case checks
 * the exact step at which the policy fires (or that it never does). */
#include <ballast/rta_policy.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

/* A committed remap whose seconds were all spent mapping. */
static int remapped(rta_policy_t *p, double seconds) {
  rta_remap_measure_t m = {seconds, 0, 0, 1};
  return rta_policy_remap_measured(p, &m);
}

/* A small deterministic generator so noise is the same in every run. */
static unsigned long long rng_state = 88172645463325252ULL;
static double urand(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (double)(rng_state >> 11) / 9007199254740992.0;
}

static rta_policy_t *make(int nranks, int warmup, int window, double threshold,
                          int horizon, double cost) {
  rta_policy_config_t c;
  rta_policy_config_init(&c);
  c.warmup = warmup;
  c.window = window;
  c.threshold = threshold;
  c.horizon = horizon;
  c.initial_cost = cost;
  rta_policy_t *p = NULL;
  CHECK_EQ(rta_policy_create(&c, nranks, &p), 0);
  CHECK(p != NULL);
  return p;
}

/* Feeds one step and returns the decision's remap flag. */
static int step(rta_policy_t *p, const double *t, int n, rta_decision_t *d) {
  CHECK_EQ(rta_policy_observe(p, t, n), 0);
  CHECK_EQ(rta_policy_decide(p, d), 0);
  return d->remap;
}

static void test_noise_never_fires(void) {
  rta_policy_t *p = make(4, 5, 20, 1.10, 100, 0.0);
  rta_decision_t d;
  double worst = 0;
  for (int s = 0; s < 500; s++) {
    double t[4];
    for (int r = 0; r < 4; r++)
      t[r] = 0.010 * (0.85 + 0.30 * urand()); /* +-15% noise */
    CHECK_EQ(step(p, t, 4, &d), 0);
    if (d.imbalance > worst)
      worst = d.imbalance;
  }
  CHECK_DLT(worst, 1.10);
  CHECK_DGT(worst, 1.0);
  rta_policy_destroy(p);
}

static void test_warmup_is_skipped(void) {
  rta_policy_t *p = make(2, 5, 10, 1.10, 100, 0.0);
  rta_decision_t d;
  for (int s = 0; s < 5; s++) { /* a wildly imbalanced warm-up */
    double t[2] = {0.1, 0.01};
    CHECK_EQ(step(p, t, 2, &d), 0);
    /* after the 5th step the window opens */
    CHECK_EQ(d.reason, s < 4 ? RTA_REASON_WARMUP : RTA_REASON_FILLING);
    CHECK_EQ(d.warmup_end, s < 4 ? 0 : 5);
  }
  for (int s = 0; s < 100; s++) {
    double t[2] = {0.01, 0.01};
    CHECK_EQ(step(p, t, 2, &d), 0);
    /* windows of 10 steps, one after the other */
    CHECK_EQ(d.reason, s % 10 == 9 ? RTA_REASON_BALANCED : RTA_REASON_FILLING);
  }
  CHECK_NEAR(d.imbalance, 1.0, 1e-12);
  rta_policy_destroy(p);
}

static void test_single_outlier_ignored(void) {
  rta_policy_t *p = make(2, 0, 5, 1.10, 100, 0.0);
  rta_decision_t d;
  /* Rank 0 is slightly slower (1.04); one step of rank 0 takes 3x. With the
   * outlier kept, the mean would give (4*1.04+3.12)/5 = 1.456 (imbalance
   * 1.19); the median without the outlier gives 1.04/1.02. */
  /* the first step is no window's; the window is steps 1-5 */
  double seq[6] = {1.04, 1.04, 1.04, 3.12, 1.04, 1.04};
  for (int s = 0; s < 6; s++) {
    double t[2] = {seq[s], 1.0};
    step(p, t, 2, &d);
  }
  CHECK_EQ(d.remap, 0);
  CHECK_EQ(d.reason, RTA_REASON_BALANCED);
  CHECK_EQ(d.ignored_outliers, 1);
  CHECK_NEAR(d.max_time, 1.04, 1e-12);
  CHECK_NEAR(d.imbalance, 1.04 / 1.02, 1e-12);
  CHECK_EQ(d.noise, RTA_NOISE_OUTLIERS);
  CHECK_EQ(d.slowest, 0);
  CHECK_EQ(d.persistent, 0);
  rta_policy_destroy(p);
}

/* Independent reference: median of a copy. */
static int cmpd(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}
static double ref_median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmpd);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void test_drift_fires_exactly_when_due(void) {
  /* Rank 0's load grows linearly by 1% a step, rank 1 stays at 1.0. The
   * policy judges windows of W steps from step warm on and must fire at the
   * end of the second window in a row whose medians cross 1.10 (rank 0 the
   * slowest in both) with the gain over the cost, computed here
   * independently. */
  const int W = 9, warm = 3;
  rta_policy_t *p = make(2, warm, W, 1.10, 50, 0.5);
  rta_decision_t d;
  double hist[400];
  int fired = -1, expected = -1, streak = 0;
  for (int s = 0; s < 400 && fired < 0; s++) {
    hist[s] = 1.0 + 0.01 * s;
    double t[2] = {hist[s], 1.0};
    if (step(p, t, 2, &d))
      fired = s;
    if (expected < 0 && s >= warm + W - 1 && (s - warm + 1) % W == 0) {
      double w[64];
      for (int i = 0; i < W; i++)
        w[i] = hist[s - W + 1 + i];
      double m0 = ref_median(w, W);
      double imb = m0 / ((m0 + 1.0) / 2);
      double gain = (m0 - (m0 + 1.0) / 2) * 50;
      streak = imb > 1.10 ? streak + 1 : 0;
      if (streak >= 2 && gain > 0.5)
        expected = s;
    }
  }
  CHECK_GE(expected, 0);
  CHECK_EQ(fired, expected);
  CHECK_EQ(d.reason, RTA_REASON_IMBALANCED);
  CHECK_DGT(d.imbalance, 1.10);
  CHECK_DGT(d.predicted_gain, d.remap_cost);
  CHECK_GE(d.persistent, 2);
  CHECK_EQ(d.slowest, 0);
  rta_policy_destroy(p);
}

static void test_cost_exceeds_gain(void) {
  /* Imbalance 1.5 on 1 ms steps: over 100 steps balancing saves
   * (1.5-1.25) ms x 100 = 25 ms. A remap measured at 1 s is not worth it; one
   * at 10 ms is. */
  rta_policy_t *p = make(2, 0, 5, 1.10, 100, 0.0);
  rta_decision_t d;
  CHECK_EQ(remapped(p, 1.0), 0);
  /* windows of steps 1-5, 6-10, ..., 46-50: the last judged at step 50 */
  for (int s = 0; s < 51; s++) {
    double t[2] = {0.0015, 0.0010};
    CHECK_EQ(step(p, t, 2, &d), 0);
  }
  CHECK_EQ(d.reason, RTA_REASON_NOT_WORTH);
  CHECK_NEAR(d.imbalance, 1.2, 1e-9);
  CHECK_NEAR(d.predicted_gain, 0.025, 1e-9);
  /* Trust in the one measurement halves every horizon (100) steps: 51 steps on. */
  CHECK_NEAR(d.remap_cost, exp2(-0.51), 1e-12);
  CHECK_EQ(remapped(p, 0.010), 0);
  int fired = -1;
  for (int s = 0; s < 50 && fired < 0; s++) {
    double t[2] = {0.0015, 0.0010};
    if (step(p, t, 2, &d))
      fired = s;
  }
  CHECK_EQ(fired, 10); /* no warm-up: the second window (steps 6-10) fires */
  rta_policy_destroy(p);
}

static void test_new_warmup_after_remap(void) {
  rta_policy_t *p = make(2, 4, 6, 1.10, 100, 0.0);
  rta_decision_t d;
  int fired = -1;
  for (int s = 0; s < 30 && fired < 0; s++) {
    double t[2] = {2.0, 1.0};
    if (step(p, t, 2, &d))
      fired = s;
  }
  CHECK_EQ(fired, 4 + 2 * 6 - 1); /* warm-up, then two windows */
  CHECK_EQ(remapped(p, 0.1), 0);
  /* Still imbalanced afterwards: the policy skips min(warmup, 5) steps and
   * must see two windows again. */
  fired = -1;
  for (int s = 0; s < 30 && fired < 0; s++) {
    double t[2] = {2.0, 1.0};
    if (step(p, t, 2, &d))
      fired = s;
    else
      CHECK(d.reason == (s < 3 ? RTA_REASON_WARMUP
                         : s == 9 ? RTA_REASON_UNCONFIRMED : RTA_REASON_FILLING));
  }
  CHECK_EQ(fired, 4 + 2 * 6 - 1);
  rta_policy_destroy(p);
}

static void test_off_and_explicit(void) {
  rta_policy_config_t c;
  rta_policy_config_init(&c);
  c.mode = RTA_POLICY_OFF;
  rta_policy_t *p;
  rta_decision_t d;
  CHECK_EQ(rta_policy_create(&c, 2, &p), 0);
  for (int s = 0; s < 100; s++) {
    double t[2] = {5.0, 1.0};
    CHECK_EQ(step(p, t, 2, &d), 0);
    CHECK_EQ(d.reason, RTA_REASON_OFF);
  }
  rta_policy_destroy(p);
  c.mode = RTA_POLICY_EXPLICIT;
  CHECK_EQ(rta_policy_create(&c, 2, &p), 0);
  double t[2] = {1.0, 1.0};
  CHECK_EQ(step(p, t, 2, &d), 1);
  CHECK_EQ(d.reason, RTA_REASON_EXPLICIT);
  rta_policy_destroy(p);
}

static void test_env_overrides(void) {
  rta_policy_config_t c;
  rta_policy_config_init(&c);
  setenv("BALLAST_LB", "off", 1);
  setenv("BALLAST_LB_THRESHOLD", "1.25", 1);
  setenv("BALLAST_LB_WINDOW", "7", 1);
  setenv("BALLAST_LB_WARMUP", "2", 1);
  setenv("BALLAST_LB_HORIZON", "40", 1);
  setenv("BALLAST_LB_OUTLIER", "3", 1);
  CHECK_EQ(rta_policy_config_from_env(&c), 0);
  CHECK_EQ(c.mode, RTA_POLICY_OFF);
  CHECK_NEAR(c.threshold, 1.25, 0);
  CHECK_EQ(c.window, 7);
  CHECK_EQ(c.warmup, 2);
  CHECK_EQ(c.horizon, 40);
  CHECK_NEAR(c.outlier, 3.0, 0);
  /* Bad values: an error, a warning, and the field keeps its value. */
  setenv("BALLAST_LB", "sometimes", 1);
  setenv("BALLAST_LB_THRESHOLD", "0.5", 1);
  setenv("BALLAST_LB_WINDOW", "x12", 1);
  setenv("BALLAST_LB_WARMUP", "-3", 1);
  setenv("BALLAST_LB_HORIZON", "0", 1);
  setenv("BALLAST_LB_OUTLIER", "1", 1);
  CHECK_EQ(rta_policy_config_from_env(&c), BALLAST_EINVAL);
  CHECK_EQ(c.mode, RTA_POLICY_OFF);
  CHECK_NEAR(c.threshold, 1.25, 0);
  CHECK_EQ(c.window, 7);
  CHECK_EQ(c.warmup, 2);
  CHECK_EQ(c.horizon, 40);
  CHECK_NEAR(c.outlier, 3.0, 0);
  const char *vars[] = {"BALLAST_LB", "BALLAST_LB_THRESHOLD", "BALLAST_LB_WINDOW",
                        "BALLAST_LB_WARMUP", "BALLAST_LB_HORIZON", "BALLAST_LB_OUTLIER"};
  for (int i = 0; i < 6; i++)
    unsetenv(vars[i]);
}

static void test_bad_input(void) {
  rta_policy_t *p = NULL;
  rta_policy_config_t c;
  rta_policy_config_init(&c);
  rta_policy_config_init(NULL); /* does nothing */
  CHECK_EQ(rta_policy_create(&c, 0, &p), BALLAST_EINVAL);
  CHECK_EQ(rta_policy_create(&c, 2, NULL), BALLAST_EINVAL);
  c.window = 2;
  CHECK_EQ(rta_policy_create(&c, 2, &p), BALLAST_EINVAL);
  CHECK(p == NULL);
  rta_policy_config_init(&c);
  c.threshold = 0.9;
  CHECK_EQ(rta_policy_create(&c, 2, &p), BALLAST_EINVAL);
  CHECK_EQ(rta_policy_create(NULL, 2, &p), 0);
  double nan_t[2] = {NAN, 1.0}, neg[2] = {-1.0, 1.0}, ok[2] = {1.0, 1.0};
  CHECK_EQ(rta_policy_observe(p, nan_t, 2), BALLAST_EINVAL);
  CHECK_EQ(rta_policy_observe(p, neg, 2), BALLAST_EINVAL);
  CHECK_EQ(rta_policy_observe(p, ok, 3), BALLAST_EINVAL);
  CHECK_EQ(rta_policy_observe(p, NULL, 2), BALLAST_EINVAL);
  CHECK_EQ(rta_policy_decide(p, NULL), BALLAST_EINVAL);
  CHECK_EQ(remapped(p, -1.0),
           BALLAST_EINVAL);
  CHECK_EQ(remapped(p, INFINITY),
           BALLAST_EINVAL);
  rta_decision_t d;
  CHECK_EQ(rta_policy_decide(p, &d), 0);
  CHECK_EQ(d.step, 0); /* rejected steps were not recorded */
  CHECK_STREQ(rta_reason_name(RTA_REASON_NOT_WORTH), "not-worth");
  rta_policy_destroy(p);
  rta_policy_destroy(NULL);
}

/* One remap measured at 0.031 s on a loaded machine, imbalance 1.84 on small
 * steps whose gain over the horizon (8.4 ms) never paid that: the policy used
 * to say "not worth it" for the rest of the run. Trust in the measurement
 * decays (half per horizon), so it fires at the first judged step where the
 * decayed cost falls under the gain, computed here independently. */
static void test_slow_measurement_decays(void) {
  const int W = 5, warm = 5, H = 100;
  rta_policy_t *p = make(2, warm, W, 1.10, H, 0.0);
  rta_decision_t d;
  CHECK_EQ(remapped(p, 0.031), 0);
  double t[2] = {0.000184, 0.000016}; /* max 1.84 x avg */
  double gain = (0.000184 - 0.0001) * H;
  int fired = -1, expected = -1;
  for (int s = 0; s < 600 && fired < 0; s++) {
    /* windows of steps 5-9, 10-14, ...: the first unconfirmed */
    int judged = s >= warm + W - 1 && (s - warm + 1) % W == 0;
    if (step(p, t, 2, &d))
      fired = s;
    else if (judged)
      CHECK_EQ(d.reason, s == warm + W - 1 ? RTA_REASON_UNCONFIRMED : RTA_REASON_NOT_WORTH);
    else
      CHECK_EQ(d.reason, s < warm - 1 ? RTA_REASON_WARMUP : RTA_REASON_FILLING);
    double cost = 0.031 * exp2(-(double)(s + 1) / H); /* age: steps since */
    if (expected < 0 && judged && s > warm + W - 1 && gain > cost)
      expected = s;
  }
  CHECK_LT(expected, 275); /* within the user's run, which stayed stuck */
  CHECK_EQ(fired, expected);
  CHECK_NEAR(d.imbalance, 1.84, 1e-9);
  CHECK_DLT(d.remap_cost, gain);
  rta_policy_destroy(p);
}

/* A cheaper measurement replaces the estimate, a dearer one counts half;
 * mapping and migration add up before a remap. */
static void test_cost_estimate(void) {
  rta_policy_t *p = make(2, 0, 3, 1.10, 1000000, 0.0);
  rta_decision_t d;
  rta_remap_measure_t m = {0.010, 0.020, 1000.0, 1};
  CHECK_EQ(rta_policy_remap_measured(p, &m), 0);
  CHECK_EQ(rta_policy_decide(p, &d), 0);
  CHECK_NEAR(d.remap_cost, 0.030, 1e-12);
  m = (rta_remap_measure_t){0.030, 0.010, 1000.0, 1};
  CHECK_EQ(rta_policy_remap_measured(p, &m), 0);
  CHECK_EQ(rta_policy_decide(p, &d), 0);
  CHECK_NEAR(d.remap_cost, 0.020 + 0.010, 1e-12); /* mapping 0.01 + half of 0.02 */
  /* A rolled-back remap's seconds count too; moving nothing leaves the
   * migration estimate alone. */
  m = (rta_remap_measure_t){0.020, 0.500, 0.0, 0};
  CHECK_EQ(rta_policy_remap_measured(p, &m), 0);
  CHECK_EQ(rta_policy_decide(p, &d), 0);
  CHECK_NEAR(d.remap_cost, 0.020 + 0.010, 1e-12);
  rta_policy_destroy(p);
}

/* Feeds imbalanced steps until the policy fires; the step or -1. */
static int run_until_fire(rta_policy_t *p, int max, rta_decision_t *d) {
  for (int s = 0; s < max; s++) {
    double t[2] = {0.003, 0.001};
    if (step(p, t, 2, d))
      return s;
  }
  return -1;
}

/* Placement mode with no permutation that helps: every candidate moves
 * nothing. Remapping every warmup + window steps would pay the mapping each
 * time for nothing; the candidate is dropped and the next judgement waits
 * 1, 2, 4, 8, 16, 16, ... windows. */
static void test_nothing_moves_backs_off(void) {
  const int W = 4;
  rta_policy_t *p = make(2, 2, W, 1.10, 100, 0.0);
  rta_decision_t d;
  rta_remap_candidate_t c = {1.5, 1.5, 0, 0.0, 0.008};
  int expect_wait[] = {2 + 2 * W - 1, W - 1, 2 * W - 1, 4 * W - 1, 8 * W - 1, 16 * W - 1,
                       16 * W - 1};
  for (int k = 0; k < 7; k++) {
    int s = run_until_fire(p, 1000, &d);
    CHECK_EQ(s, expect_wait[k]);
    CHECK_EQ(d.reason, RTA_REASON_IMBALANCED);
    CHECK_EQ(rta_policy_confirm(p, &c, &d), 0);
    CHECK_EQ(d.remap, 0);
    CHECK_EQ(d.reason, RTA_REASON_NOTHING_MOVES);
    CHECK_EQ(d.tasks_to_move, 0);
    /* The mapping paid for the candidate is what a remap costs now (the
     * first time exactly; then 8 ms again against its decayed self). */
    CHECK_EQ(rta_policy_decide(p, &d), 0);
    CHECK_EQ(d.reason, RTA_REASON_BACKOFF);
    if (k == 0)
      CHECK_NEAR(d.remap_cost, 0.008, 1e-12);
    CHECK_DLE(d.remap_cost, 0.008);
    CHECK_DGT(d.remap_cost, 0.004); /* a dearer one counts at least half */
  }
  /* A committed remap ends the back-off: the skip and two windows again. */
  rta_remap_measure_t m = {0.008, 0.001, 100.0, 1};
  CHECK_EQ(rta_policy_remap_measured(p, &m), 0);
  CHECK_EQ(run_until_fire(p, 1000, &d), 2 + 2 * W - 1);
  rta_policy_destroy(p);
}

/* A candidate that moves tasks is judged on its own prediction: gain =
 * horizon x avg x (imbalance now - after) against its migration, scaled
 * from the measured one by bytes. */
static void test_candidate_gain_and_cost(void) {
  rta_policy_t *p = make(2, 0, 3, 1.10, 100, 0.0);
  rta_decision_t d;
  rta_remap_measure_t m = {0.001, 0.010, 1e6, 1}; /* 10 ms per MB */
  CHECK_EQ(rta_policy_remap_measured(p, &m), 0);
  CHECK_GE(run_until_fire(p, 100, &d), 0); /* avg 2 ms, imbalance 1.5 */
  /* A swap of equal loads: no gain, some migration: dropped. */
  rta_remap_candidate_t c = {1.5, 1.5, 2, 2e6, 0.001};
  rta_decision_t d2 = d;
  CHECK_EQ(rta_policy_confirm(p, &c, &d2), 0);
  CHECK_EQ(d2.remap, 0);
  CHECK_EQ(d2.reason, RTA_REASON_NOT_WORTH);
  CHECK_NEAR(d2.predicted_gain, 0.0, 1e-15);
  /* The same step judged with a candidate that balances: 100 x 2 ms x 0.5 =
   * 0.1 s against 2 MB ~ 0.02 s (decayed a little): carried out. */
  rta_policy_t *q = make(2, 0, 3, 1.10, 100, 0.0);
  CHECK_EQ(rta_policy_remap_measured(q, &m), 0);
  CHECK_GE(run_until_fire(q, 100, &d), 0);
  long long at = d.step;
  c.imbalance_after = 1.0;
  CHECK_EQ(rta_policy_confirm(q, &c, &d), 0);
  CHECK_EQ(d.remap, 1);
  CHECK_EQ(d.reason, RTA_REASON_IMBALANCED);
  CHECK_NEAR(d.predicted_gain, 0.1, 1e-12);
  CHECK_NEAR(d.remap_cost, 0.020 * exp2(-(double)at / 100), 1e-12);
  CHECK_NEAR(d.predicted_imbalance, 1.0, 0);
  CHECK_EQ(d.tasks_to_move, 2);
  /* Too much to move for that gain: dropped. */
  c.bytes = 2e7;
  d2 = d;
  d2.remap = 1;
  CHECK_EQ(rta_policy_confirm(q, &c, &d2), 0);
  CHECK_EQ(d2.reason, RTA_REASON_NOT_WORTH);
  rta_policy_destroy(p);
  rta_policy_destroy(q);
}

/* Explicit remaps and requests the policy did not make are left alone;
 * bad figures are refused. */
static void test_confirm_scope_and_bad_input(void) {
  rta_policy_config_t cf;
  rta_policy_config_init(&cf);
  cf.mode = RTA_POLICY_EXPLICIT;
  rta_policy_t *p;
  CHECK_EQ(rta_policy_create(&cf, 2, &p), 0);
  rta_decision_t d;
  double t[2] = {1.0, 1.0};
  CHECK_EQ(step(p, t, 2, &d), 1);
  rta_remap_candidate_t c = {1.0, 1.0, 0, 0, 0.1};
  CHECK_EQ(rta_policy_confirm(p, &c, &d), 0);
  CHECK_EQ(d.remap, 1);
  CHECK_EQ(d.reason, RTA_REASON_EXPLICIT);
  CHECK_EQ(rta_policy_confirm(NULL, &c, &d), BALLAST_EINVAL);
  CHECK_EQ(rta_policy_confirm(p, NULL, &d), BALLAST_EINVAL);
  CHECK_EQ(rta_policy_confirm(p, &c, NULL), BALLAST_EINVAL);
  c.bytes = NAN;
  CHECK_EQ(rta_policy_confirm(p, &c, &d), BALLAST_EINVAL);
  c.bytes = 0;
  c.tasks = -1;
  CHECK_EQ(rta_policy_confirm(p, &c, &d), BALLAST_EINVAL);
  rta_remap_measure_t m = {0.1, -0.1, 0, 1};
  CHECK_EQ(rta_policy_remap_measured(p, &m), BALLAST_EINVAL);
  CHECK_EQ(rta_policy_remap_measured(p, NULL), BALLAST_EINVAL);
  CHECK_STREQ(rta_reason_name(RTA_REASON_NOTHING_MOVES), "nothing-moves");
  CHECK_STREQ(rta_reason_name(RTA_REASON_BACKOFF), "backoff");
  rta_policy_destroy(p);
}

/* The slowest rank changes every window: noise that moves, never a remap;
 * the same imbalance on one rank fires at the second window. */
static void test_moving_slowness_is_noise(void) {
  const int W = 5;
  rta_policy_t *p = make(4, 0, W, 1.10, 100, 0.0);
  rta_decision_t d;
  int noise = 0, unconfirmed = 0;
  for (int s = 0; s < 1 + 20 * W; s++) {
    int hit = s == 0 ? 0 : ((s - 1) / W) % 4; /* window k: rank k mod 4 */
    double t[4] = {1.0, 1.0, 1.0, 1.0};
    t[hit] = 1.5;
    CHECK_EQ(step(p, t, 4, &d), 0);
    if (d.imbalance > 0) {
      CHECK_EQ(d.slowest, hit);
      CHECK_EQ(d.persistent, 1);
      noise += d.reason == RTA_REASON_NOISE;
      unconfirmed += d.reason == RTA_REASON_UNCONFIRMED;
      if (d.reason == RTA_REASON_NOISE)
        CHECK(d.noise & RTA_NOISE_MOVING);
    }
  }
  CHECK_EQ(unconfirmed, 1);
  CHECK_EQ(noise, 19);
  rta_policy_destroy(p);
  /* two ranks equally slow, the slowest of them changing each window: still
   * persistent (the window before's slowest is still slow): fires at the
   * second window */
  p = make(4, 0, W, 1.10, 100, 0.0);
  int fired = -1;
  for (int s = 0; s < 1 + 4 * W && fired < 0; s++) {
    int k = s == 0 ? 0 : ((s - 1) / W) % 2;
    double t[4] = {1.5, 1.5, 1.0, 1.0};
    t[k] += 0.01;
    if (step(p, t, 4, &d))
      fired = s;
  }
  CHECK_EQ(fired, 2 * W);
  CHECK_EQ(d.persistent, 2);
  CHECK_EQ(d.slowest, 1);
  rta_policy_destroy(p);
  /* the whole machine 1.3x slower for a window: balanced, said so */
  p = make(2, 0, W, 1.10, 100, 0.0);
  for (int s = 0; s < 1 + 3 * W; s++) {
    double f = (s > W && s <= 2 * W) ? 1.3 : 1.0, t[2] = {f, f};
    CHECK_EQ(step(p, t, 2, &d), 0);
    if (s == 2 * W) {
      CHECK_EQ(d.reason, RTA_REASON_BALANCED);
      CHECK(d.noise & RTA_NOISE_MACHINE);
    }
  }
  rta_policy_destroy(p);
}

/* A remap that delivers nothing (a slower rank the mapping cannot help: the
 * times stay as they were) backs the policy off, longer after each such
 * remap, and discounts the next predicted gains; a remap that delivers
 * ends that. One slow rank of four is not "every rank slower". */
static void test_remap_that_does_not_deliver(void) {
  const int W = 5;
  rta_policy_t *p = make(4, 0, W, 1.10, 100, 0.0);
  rta_decision_t d;
  rta_remap_candidate_t c = {1.3, 1.01, 3, 0.0, 0.0};
  int fires[8], nf = 0, backoff = 0;
  for (int s = 0; s < 400 && nf < 8; s++) {
    double t[4] = {1.0, 1.3, 1.0, 1.0};
    if (step(p, t, 4, &d)) {
      CHECK_EQ(rta_policy_confirm(p, &c, &d), 0);
      if (d.remap) {
        fires[nf++] = s;
        rta_remap_measure_t m = {0.0, 0.0, 0.0, 1};
        CHECK_EQ(rta_policy_remap_measured(p, &m), 0);
      }
    }
    backoff += d.reason == RTA_REASON_BACKOFF;
    if (d.imbalance > 0)
      CHECK(!(d.noise & RTA_NOISE_MACHINE));
  }
  /* the first remap at the second window; after each that did not deliver,
   * its first window, a back-off of 1, 2, 4 ... windows, then two windows
   * to confirm the imbalance again */
  CHECK_GE(nf, 6);
  CHECK_EQ(fires[0], 2 * W);
  int gap1 = fires[1] - fires[0];
  CHECK_GE(gap1, 3 * W);
  for (int k = 2; k < nf; k++) /* the back-off doubles, up to 16 windows */
    CHECK_EQ(fires[k] - fires[k - 1], gap1 + W * ((1 << (k - 1 < 4 ? k - 1 : 4)) - 1));
  CHECK_GT(backoff, 0);
  rta_policy_destroy(p);
  /* the same, but the remap balances the ranks: no back-off after it */
  p = make(4, 0, W, 1.10, 100, 0.0);
  int fired = 0;
  for (int s = 0; s < 200; s++) {
    double t[4] = {1.0, fired ? 1.0 : 1.3, 1.0, 1.0};
    if (step(p, t, 4, &d)) {
      CHECK_EQ(rta_policy_confirm(p, &c, &d), 0);
      CHECK(d.remap);
      fired++;
      rta_remap_measure_t m = {0.0, 0.0, 0.0, 1};
      CHECK_EQ(rta_policy_remap_measured(p, &m), 0);
    }
    CHECK(d.reason != RTA_REASON_BACKOFF);
  }
  CHECK_EQ(fired, 1);
  rta_policy_destroy(p);
  /* a remap the policy did not judge (forced, warm, explicit) right after
   * an accepted one: the accepted one's prediction is stale, nothing is
   * checked, no back-off follows */
  p = make(4, 0, W, 1.10, 100, 0.0);
  int at = -1;
  for (int s = 0; s < 200; s++) {
    double t[4] = {1.0, 1.3, 1.0, 1.0};
    int fire = step(p, t, 4, &d);
    CHECK(d.reason != RTA_REASON_BACKOFF);
    if (fire && at < 0) {
      at = s;
      CHECK_EQ(rta_policy_confirm(p, &c, &d), 0);
      rta_remap_measure_t m = {0.0, 0.0, 0.0, 1};
      CHECK_EQ(rta_policy_remap_measured(p, &m), 0);
      CHECK_EQ(rta_policy_remap_measured(p, &m), 0); /* the forced one */
    } else if (fire) {
      break;
    }
  }
  CHECK_EQ(at, 2 * W);
  rta_policy_destroy(p);
  /* every rank 1.3x slower for a window: the machine; one rank of four
   * 1.5x slower for a window (the average grows 12.5%): not the machine */
  p = make(4, 0, W, 1.10, 100, 0.0);
  for (int s = 0; s < 1 + 5 * W; s++) {
    double all = (s > W && s <= 2 * W) ? 1.3 : 1.0;
    double t[4] = {all, all, all, all};
    if (s > 3 * W && s <= 4 * W)
      t[2] = 1.5;
    CHECK_EQ(step(p, t, 4, &d), 0);
    if (s == 2 * W)
      CHECK(d.noise & RTA_NOISE_MACHINE);
    if (s == 4 * W) {
      CHECK_EQ(d.reason, RTA_REASON_UNCONFIRMED);
      CHECK(!(d.noise & RTA_NOISE_MACHINE));
    }
  }
  rta_policy_destroy(p);
}

/* A detected warm-up (warmup 20: the classifier's settling time): ranks
 * 1.8x slower for their first 12 steps; the windows open within 3 steps of
 * its end, and a run without one opens them at step 20. */
static void test_detected_warmup(void) {
  for (int len = 0; len <= 12; len += 12) {
    rta_policy_t *p = make(2, 20, 10, 1.10, 100, 0.0);
    rta_decision_t d;
    for (int s = 0; s < 60; s++) {
      double f = s < len ? 1.8 : 1.0, t[2] = {0.002 * f, 0.0021 * f};
      CHECK_EQ(step(p, t, 2, &d), 0);
    }
    if (len) {
      CHECK_GE(d.warmup_end, len);
      CHECK_LE(d.warmup_end, len + 3);
    } else {
      CHECK_EQ(d.warmup_end, 21); /* steps 0-20 seen, no cliff */
    }
    rta_policy_destroy(p);
  }
}

/* The merged step: merge is a max/sum with MAXLOC; pack and unpack are
 * inverse; a rank's part refuses bad input with a neutral contribution. */
static void test_merged_step(void) {
  rta_policy_step_t a = {1, 1, 0, 2.0, 2.0, 1, 3.0, 0, 3.0, 1, 0};
  rta_policy_step_t b = {1, 0, 1, 5.0, 5.0, 1, 3.0, 1, 3.0, 2, 2.5};
  rta_policy_step_t c = {1, 0, 0, 1.0, 1.0, 1, 4.0, 2, 4.0, 0, 0};
  rta_policy_step_merge(&b, &a); /* tie on win_max: the lower rank */
  CHECK(b.win_slowest == 0 && b.win_max == 3.0 && b.win_sum == 6.0);
  rta_policy_step_merge(&b, &c);
  CHECK(b.ranks == 3 && b.warming == 1 && b.outliers == 1 && b.max_time == 5.0);
  CHECK(b.sum_time == 8.0 && b.window == 3 && b.win_slowest == 2 && b.win_max == 4.0);
  CHECK(b.win_outliers == 3 && b.win_prev == 2.5);
  double v[RTA_POLICY_STEP_DOUBLES];
  rta_policy_step_pack(&b, v);
  rta_policy_step_t u;
  rta_policy_step_unpack(v, &u);
  CHECK(memcmp(&u, &b, sizeof u) == 0);
  rta_policy_t *p = make(3, 0, 3, 1.10, 100, 0.0);
  CHECK_EQ(rta_policy_observe_step(p, &b), 0);
  b.ranks = 2; /* not the policy's ranks */
  CHECK_EQ(rta_policy_observe_step(p, &b), BALLAST_EINVAL);
  b.ranks = 3;
  b.max_time = NAN;
  CHECK_EQ(rta_policy_observe_step(p, &b), BALLAST_EINVAL);
  CHECK_EQ(rta_policy_observe_step(NULL, &a), BALLAST_EINVAL);
  rta_policy_rank_t *k;
  CHECK_EQ(rta_policy_rank_create(NULL, &k), 0);
  CHECK_EQ(rta_policy_rank_create(NULL, NULL), BALLAST_EINVAL);
  CHECK_EQ(rta_policy_rank_observe(k, p, 3, 1.0, &u), BALLAST_EINVAL);
  CHECK_EQ(rta_policy_rank_observe(k, p, 1, -1.0, &u), BALLAST_EINVAL);
  CHECK(u.ranks == 1 && u.max_time == 0 && u.window == 0 && u.win_slowest == 1);
  CHECK_EQ(rta_policy_rank_observe(k, p, 1, 1.0, &u), 0); /* the first step */
  CHECK_EQ(rta_policy_rank_observe(k, p, 1, 1.0, &u), 1); /* warm-up, provisional */
  CHECK(u.max_time == 1.0 && u.warming == 1);
  rta_policy_rank_remapped(k);
  rta_policy_rank_remapped(NULL);
  rta_policy_rank_destroy(k);
  rta_policy_rank_destroy(NULL);
  rta_policy_destroy(p);
}

int main(void) {
  test_noise_never_fires();
  test_warmup_is_skipped();
  test_single_outlier_ignored();
  test_drift_fires_exactly_when_due();
  test_cost_exceeds_gain();
  test_new_warmup_after_remap();
  test_off_and_explicit();
  test_env_overrides();
  test_bad_input();
  test_slow_measurement_decays();
  test_cost_estimate();
  test_nothing_moves_backs_off();
  test_candidate_gain_and_cost();
  test_confirm_scope_and_bad_input();
  test_moving_slowness_is_noise();
  test_remap_that_does_not_deliver();
  test_detected_warmup();
  test_merged_step();
  TEST_PASS("lb_policy");
  return 0;
}
