/* common's log-bucketed distribution (common/dist.h) on known samples:
 * uniform, log-normal, bimodal, constant, a single value and empty. Every
 * quantile asked is checked against the exact order statistic of rank
 * max(1, ceil(q n)) of the sorted sample, within the stated relative error
 * (1/128); q = 0 and q = 1 are exactly min and max; values below 64 are
 * exact. Also: the bucket bounds, the inline-to-table promotion, merging by
 * adding counts (two halves merged give the whole's quantiles and moments),
 * the flat form used by reductions, and bad input. No MPI. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/common_internal.h"
#include "common/dist.h"
#include "test_util.h"

enum { N = 100000 };

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t xorshift(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}
static double unif01(void) { return (double)(xorshift() >> 11) / 9007199254740992.0; }
static double gauss(void) {
  double u = unif01(), v = unif01();
  if (u < 1e-300)
    u = 1e-300;
  return sqrt(-2.0 * log(u)) * cos(2.0 * M_PI * v);
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

static const double qs[] = {0.0, 0.001, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9,
                            0.95, 0.99, 0.999, 0.9999, 1.0, 0.3333, 0.6667};
enum { NQ = sizeof qs / sizeof *qs };

static uint64_t exact_q(const uint64_t *sorted, size_t n, double q) {
  double k = ceil(q * (double)n);
  size_t r = k < 1.0 ? 1 : (size_t)k;
  if (r > n)
    r = n;
  return sorted[r - 1];
}

/* Checks every q of d against the sorted sample. */
static void check_quantiles(const ballast__dist_t *d, const uint64_t *s, size_t n) {
  const ballast__dist_t *ds[1] = {d};
  double out[NQ];
  CHECK_EQ(ballast__dist_quantiles(ds, 1, qs, NQ, out), 0);
  for (int i = 0; i < NQ; i++) {
    double x = (double)exact_q(s, n, qs[i]);
    double err = fabs(out[i] - x);
    if (qs[i] == 0.0 || qs[i] == 1.0 || x < 64)
      CHECK(err == 0.0);
    else
      CHECK_DLE(err, x * BALLAST__DIST_REL_ERR);
  }
}

/* Records s[0..n) into d, checks quantiles and moments; sorts s. */
static void check_sample(const char *name, uint64_t *s, size_t n) {
  ballast__dist_t d;
  ballast__dist_init(&d);
  double sum = 0;
  for (size_t i = 0; i < n; i++) {
    ballast__dist_add(&d, s[i]);
    sum += (double)s[i];
  }
  double mean = sum / (double)n, m2 = 0;
  for (size_t i = 0; i < n; i++)
    m2 += ((double)s[i] - mean) * ((double)s[i] - mean);
  qsort(s, n, sizeof *s, cmp_u64);
  check_quantiles(&d, s, n);
  const ballast__dist_t *ds[1] = {&d};
  ballast__dist_moments_t m;
  ballast__dist_moments(ds, 1, &m);
  CHECK_EQ(m.count, n);
  CHECK_EQ(m.min, s[0]);
  CHECK_EQ(m.max, s[n - 1]);
  CHECK_EQ(m.lost, 0);
  CHECK_NEAR(m.mean, mean, 1e-9 * mean + 1e-9);
  double var = n > 1 ? m2 / (double)(n - 1) : 0.0;
  CHECK_NEAR(ballast__dist_variance(&m), var, 1e-7 * var + 1e-9);

  /* Two halves merged: the same buckets, quantiles and moments. */
  ballast__dist_t a, b;
  ballast__dist_init(&a);
  ballast__dist_init(&b);
  for (size_t i = 0; i < n; i++)
    ballast__dist_add(i % 2 ? &a : &b, s[(i * 7919) % n]);
  CHECK_EQ(ballast__dist_merge(&a, &b), 0);
  for (unsigned k = 0; k < BALLAST__DIST_NBUCKETS; k++)
    CHECK_EQ(ballast__dist_count_at(&a, k), ballast__dist_count_at(&d, k));
  check_quantiles(&a, s, n);
  ballast__dist_moments_t ma;
  const ballast__dist_t *as[1] = {&a};
  ballast__dist_moments(as, 1, &ma);
  CHECK_EQ(ma.count, n);
  CHECK_EQ(ma.min, s[0]);
  CHECK_EQ(ma.max, s[n - 1]);
  CHECK_NEAR(ma.mean, mean, 1e-9 * mean + 1.0 / (double)n);
  CHECK_NEAR(ballast__dist_variance(&ma), var, 1e-6 * var + 1e-6);

  /* The flat form of b and the half a had: merged, the whole again; and
   * the two-distribution query over a and b gives the same answers. */
  ballast__dist_t a2;
  ballast__dist_init(&a2);
  for (size_t i = 0; i < n; i++)
    if (i % 2)
      ballast__dist_add(&a2, s[(i * 7919) % n]);
  ballast__dist_flat_t *f = malloc(sizeof *f), *g = malloc(sizeof *g);
  CHECK(f && g);
  ballast__dist_flat_init(f);
  ballast__dist_flat_init(g);
  ballast__dist_flat_add(f, &a2);
  ballast__dist_flat_add(g, &b);
  ballast__dist_flat_merge(f, g);
  CHECK_EQ(f->m.count, n);
  double fo[NQ], po[NQ];
  CHECK_EQ(ballast__dist_flat_quantiles(f, qs, NQ, fo), 0);
  const ballast__dist_t *pair[3] = {&a2, NULL, &b};
  CHECK_EQ(ballast__dist_quantiles(pair, 3, qs, NQ, po), 0);
  double dq[NQ];
  CHECK_EQ(ballast__dist_quantiles(ds, 1, qs, NQ, dq), 0);
  for (int i = 0; i < NQ; i++) {
    CHECK(fo[i] == dq[i]);
    CHECK(po[i] == dq[i]);
  }
  free(f);
  free(g);
  ballast__dist_free(&a2);
  ballast__dist_free(&a);
  ballast__dist_free(&b);
  ballast__dist_free(&d);
  printf("  %s: %zu values, p50 %.0f p99 %.0f (exact %llu %llu)\n", name, n, dq[5], dq[9],
         (unsigned long long)exact_q(s, n, 0.5), (unsigned long long)exact_q(s, n, 0.99));
}

static void bucket_bounds(void) {
  uint64_t probe[] = {0, 1, 63, 64, 65, 127, 128, 129, 1000, 4095, 4096,
                      123456789, 1ull << 40, (1ull << 40) - 1, UINT64_MAX - 1, UINT64_MAX};
  for (size_t i = 0; i < sizeof probe / sizeof *probe; i++) {
    unsigned b = ballast__dist_bucket(probe[i]);
    CHECK_LT(b, BALLAST__DIST_NBUCKETS);
    CHECK(ballast__dist_bucket_lo(b) <= probe[i] && probe[i] <= ballast__dist_bucket_hi(b));
  }
  CHECK_EQ(ballast__dist_bucket(UINT64_MAX), BALLAST__DIST_NBUCKETS - 1);
  /* Consecutive buckets tile the integers, each within 1/64 of its low end. */
  for (unsigned b = 0; b + 1 < BALLAST__DIST_NBUCKETS; b++) {
    CHECK_EQ(ballast__dist_bucket_hi(b) + 1, ballast__dist_bucket_lo(b + 1));
    uint64_t lo = ballast__dist_bucket_lo(b), w = ballast__dist_bucket_hi(b) - lo + 1;
    CHECK(b < 64 ? w == 1 : w * 64 <= lo);
    CHECK_EQ(ballast__dist_bucket(lo), b);
  }
  for (int i = 0; i < 100000; i++) {
    uint64_t v = xorshift() >> (xorshift() % 64);
    unsigned b = ballast__dist_bucket(v);
    CHECK(ballast__dist_bucket_lo(b) <= v && v <= ballast__dist_bucket_hi(b));
  }
}

static void inline_and_table(void) {
  ballast__dist_t d;
  ballast__dist_init(&d);
  CHECK_EQ(sizeof d, 64);
  /* one bucket stays inline (also a value repeated), the second makes the table */
  uint64_t v[] = {100, 100, 100};
  for (size_t i = 0; i < sizeof v / sizeof *v; i++)
    ballast__dist_add(&d, v[i]);
  CHECK(d.table == NULL);
  CHECK_EQ(ballast__dist_count_at(&d, ballast__dist_bucket(100)), 3);
  CHECK_EQ(ballast__dist_count_at(&d, ballast__dist_bucket(101)), 0);
  uint64_t w[] = {5000, 7, 1000000};
  for (size_t i = 0; i < sizeof w / sizeof *w; i++)
    ballast__dist_add(&d, w[i]);
  CHECK(d.table != NULL);
  CHECK_EQ(ballast__dist_count_at(&d, ballast__dist_bucket(100)), 3);
  CHECK_EQ(ballast__dist_count_at(&d, ballast__dist_bucket(5000)), 1);
  CHECK_EQ(ballast__dist_count_at(&d, ballast__dist_bucket(7)), 1);
  CHECK_EQ(ballast__dist_count_at(&d, ballast__dist_bucket(1000000)), 1);
  CHECK_EQ(d.count, 6);
  ballast__dist_free(&d);
  CHECK_EQ(d.count, 0);
  CHECK(d.table == NULL);
  ballast__dist_free(NULL);
  /* direct bucket counts (a file's): range-checked */
  CHECK_EQ(ballast__dist_add_bucket(&d, BALLAST__DIST_NBUCKETS, 1), BALLAST_ERANGE);
  CHECK_EQ(ballast__dist_add_bucket(&d, 70, 5), 0);
  CHECK_EQ(ballast__dist_count_at(&d, 70), 5);
  ballast__dist_free(&d);
}

static void empty_and_bad(void) {
  ballast__dist_t d;
  ballast__dist_init(&d);
  const ballast__dist_t *ds[1] = {&d};
  double q = 0.5, out = -1;
  CHECK_EQ(ballast__dist_quantiles(ds, 1, &q, 1, &out), BALLAST_ENODATA);
  CHECK(out == -1);
  CHECK_EQ(ballast__dist_quantiles(ds, 0, &q, 1, &out), BALLAST_ENODATA);
  ballast__dist_add(&d, 12345);
  double bad[] = {-0.1, 1.5, NAN};
  for (int i = 0; i < 3; i++)
    CHECK_EQ(ballast__dist_quantiles(ds, 1, &bad[i], 1, &out), BALLAST_EINVAL);
  CHECK_EQ(ballast__dist_quantiles(NULL, 1, &q, 1, &out), BALLAST_EINVAL);
  CHECK_EQ(ballast__dist_quantiles(ds, 1, NULL, 1, &out), BALLAST_EINVAL);
  CHECK_EQ(ballast__dist_quantiles(ds, 1, &q, -1, &out), BALLAST_EINVAL);
  CHECK_EQ(ballast__dist_quantiles(ds, 1, &q, 0, NULL), 0);
  /* many q's at once (more than the stack's 16) */
  double many[40], mo[40];
  for (int i = 0; i < 40; i++)
    many[i] = i / 39.0;
  CHECK_EQ(ballast__dist_quantiles(ds, 1, many, 40, mo), 0);
  for (int i = 0; i < 40; i++)
    CHECK(mo[i] == 12345.0);
  ballast__dist_flat_t *f = malloc(sizeof *f);
  CHECK(f);
  ballast__dist_flat_init(f);
  CHECK_EQ(ballast__dist_flat_quantiles(f, &q, 1, &out), BALLAST_ENODATA);
  CHECK_EQ(ballast__dist_flat_quantiles(NULL, &q, 1, &out), BALLAST_EINVAL);
  free(f);
  /* an empty distribution merged changes nothing */
  ballast__dist_t e;
  ballast__dist_init(&e);
  CHECK_EQ(ballast__dist_merge(&d, &e), 0);
  CHECK_EQ(d.count, 1);
  CHECK_EQ(ballast__dist_merge(&e, &d), 0);
  CHECK_EQ(e.count, 1);
  CHECK_EQ(e.min, 12345);
  ballast__dist_free(&d);
  ballast__dist_free(&e);
}

int main(void) {
  uint64_t *s = malloc(N * sizeof *s);
  CHECK(s);
  bucket_bounds();
  inline_and_table();
  empty_and_bad();
  for (size_t i = 0; i < N; i++) /* uniform 1 us .. 2 ms */
    s[i] = 1000 + xorshift() % 1999000;
  check_sample("uniform", s, N);
  for (size_t i = 0; i < N; i++) /* log-normal, median 50 us, sigma 1 */
    s[i] = (uint64_t)(50000.0 * exp(gauss()));
  check_sample("log-normal", s, N);
  for (size_t i = 0; i < N; i++) /* bimodal: 80% near 20 us, 20% near 3 ms */
    s[i] = (uint64_t)(xorshift() % 5 ? 20000.0 + 500.0 * gauss() : 3e6 + 1e5 * gauss());
  check_sample("bimodal", s, N);
  for (size_t i = 0; i < N; i++)
    s[i] = 777777;
  check_sample("constant", s, N);
  s[0] = 42;
  check_sample("single value (exact below 64)", s, 1);
  s[0] = 987654321;
  check_sample("single value", s, 1);
  for (size_t i = 0; i < 1000; i++) /* small integers: exact */
    s[i] = xorshift() % 64;
  check_sample("below 64", s, 1000);
  for (size_t i = 0; i < N; i++) /* every octave up to 2^40 (sums below 2^63) */
    s[i] = xorshift() >> (24 + xorshift() % 40);
  check_sample("every octave", s, N);
  free(s);
  TEST_PASS("common_dist");
  return 0;
}
