/* PIA's distributions on 2 ranks, exact where the values are known:
 *  - an activity's call durations injected through mon__record with chosen
 *    tick counts (no MPI traffic): pia_activity_dist / _quantiles against the
 *    exact order statistics of the same values in ns, within
 *    PIA_DIST_REL_ERR, min and max exact, mean and variance;
 *  - the same merged over both ranks (pia_activity_dist_reduce): each rank
 *    injects its own values; the union's exact quantiles are computed here;
 *  - a region's instances of spun lengths: the test times each instance
 *    from outside (t_out >= mon's duration) and spins a known time inside
 *    (t_in <= it), so each quantile pia gives lies in
 *    [q(t_in) (1 - e), q(t_out) (1 + e)]; merged over ranks by path too;
 *  - the full report's distribution section (one reduction of the
 *    histograms): the union's count and quantiles, as printed (6 digits);
 *  - bad input and empty distributions, agreed over ranks. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ballast.h>

#include "mon/mon_acts.h"
#include "mon/mon_core.h"
#include "mon/report_capture.h"
#include "test_util.h"

enum { NV = 5000, NR = 300 };
static const double qs[] = {0.0, 0.01, 0.1, 0.5, 0.9, 0.99, 1.0, 0.25};
enum { NQ = sizeof qs / sizeof *qs };
/* The union's exact values, kept for the report's check. */
static uint64_t all_ns[2 * NV];
static double spin_in[2 * NR], spin_out[2 * NR];

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}
static int cmp_dbl(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}
static double exact_u(const uint64_t *s, size_t n, double q) {
  double k = ceil(q * (double)n);
  size_t r = k < 1 ? 1 : k > (double)n ? n : (size_t)k;
  return (double)s[r - 1];
}
static double exact_d(const double *s, size_t n, double q) {
  double k = ceil(q * (double)n);
  size_t r = k < 1 ? 1 : k > (double)n ? n : (size_t)k;
  return s[r - 1];
}

/* The ticks rank r injects as its i-th call: log-spread, 1 us .. ~30 ms at 1 GHz. */
static uint64_t ticks_of(int r, int i) {
  uint64_t x = (uint64_t)(i + 1) * 2654435761u + (uint64_t)r * 40503u;
  return 1000 + (uint64_t)(1000.0 * exp((double)(x % 10007) / 10007.0 * (r ? 10.0 : 7.0)));
}

static void check_close(double got, double exact) {
  CHECK_DLE(fabs(got - exact), exact * PIA_DIST_REL_ERR + 1e-12);
}

static void activities(int rank) {
  const int act = MON_ACT_MPI_Exscan;
  pia_distdata_t d;
  double out[NQ];
  CHECK_EQ(pia_activity_dist(act, &d), BALLAST_ENODATA);
  CHECK_EQ(d.count, 0);
  CHECK_EQ(pia_activity_quantiles(act, NQ, qs, out), BALLAST_ENODATA);
  mon__tls_t *t = mon__enter();
  CHECK(t != NULL);
  static uint64_t mine[NV], all[2 * NV];
  double sum = 0;
  for (int i = 0; i < NV; i++) {
    uint64_t tk = ticks_of(rank, i);
    mon__record(t, act, MON_NO_PARTNER, 0, tk);
    mine[i] = mon__dur_ns(tk);
    sum += (double)mine[i];
  }
  mon__leave(t);
  /* each rank's ns come from its own clock calibration: gather them */
  MPI_Allgather(mine, NV, MPI_UINT64_T, all, NV, MPI_UINT64_T, MPI_COMM_WORLD);
  qsort(mine, NV, sizeof *mine, cmp_u64);
  qsort(all, 2 * NV, sizeof *all, cmp_u64);
  memcpy(all_ns, all, sizeof all_ns);
  CHECK_EQ(pia_activity_quantiles(act, NQ, qs, out), 0);
  for (int i = 0; i < NQ; i++)
    check_close(out[i] * 1e9, exact_u(mine, NV, qs[i]));
  CHECK_NEAR(out[0] * 1e9, (double)mine[0], 1e-3);
  CHECK_NEAR(out[6] * 1e9, (double)mine[NV - 1], 1e-3);
  CHECK_EQ(pia_activity_dist(act, &d), 0);
  CHECK_EQ(d.count, NV);
  CHECK_EQ(d.lost, 0);
  double mean = sum / NV, m2 = 0;
  for (int i = 0; i < NV; i++)
    m2 += ((double)mine[i] - mean) * ((double)mine[i] - mean);
  CHECK_NEAR(d.mean * 1e9, mean, mean * 1e-9);
  CHECK_NEAR(d.var * 1e18, m2 / (NV - 1), m2 / (NV - 1) * 1e-6);
  check_close(d.p50 * 1e9, exact_u(mine, NV, 0.5));
  check_close(d.p90 * 1e9, exact_u(mine, NV, 0.9));
  check_close(d.p99 * 1e9, exact_u(mine, NV, 0.99));
  /* the count agrees with the activity's own aggregate */
  pia_actdata_t a;
  pia_actdata_init(&a);
  CHECK_EQ(pia_activity_data(act, &a), 0);
  CHECK_EQ(a.ncalls, d.count);
  CHECK_NEAR(a.tmin, d.min, 1.5e-9); /* mon keeps ticks, the distribution whole ns */
  /* a group holds its members' calls: MPI_COLL includes Exscan */
  pia_distdata_t g;
  CHECK_EQ(pia_activity_dist(pia_activity_find(PIA_GROUP_COLL), &g), 0);
  CHECK_GE(g.count, d.count);
  CHECK_DLE(g.min, d.min);
  CHECK_DGE(g.max, d.max);

  /* merged over both ranks: the union's exact quantiles */
  double mo[NQ];
  pia_distdata_t md;
  CHECK_EQ(pia_activity_dist_reduce(MPI_COMM_WORLD, act, NQ, qs, mo, &md), 0);
  CHECK_EQ(md.count, 2 * NV);
  for (int i = 0; i < NQ; i++)
    check_close(mo[i] * 1e9, exact_u(all, 2 * NV, qs[i]));
  CHECK_NEAR(md.min * 1e9, (double)all[0], 1e-3);
  CHECK_NEAR(md.max * 1e9, (double)all[2 * NV - 1], 1e-3);
  check_close(md.p99 * 1e9, exact_u(all, 2 * NV, 0.99));
  /* no quantiles asked: the summary alone */
  CHECK_EQ(pia_activity_dist_reduce(MPI_COMM_WORLD, act, 0, NULL, NULL, &md), 0);
  CHECK_EQ(md.count, 2 * NV);
}

/* The full report's row of \a name in its distribution section: count and
 * mean, p50, p90, p99, max (seconds). 1 when found. */
static int report_row(FILE *f, const char *name, double *count, double v[5]) {
  char line[512];
  int in = 0;
  rewind(f);
  while (fgets(line, sizeof line, f)) {
    if (strstr(line, "distribution (s)"))
      in = 1;
    char nm[128];
    if (in && sscanf(line, "# %127s %lf %lf %lf %lf %lf %lf", nm, count, &v[0], &v[1], &v[2],
                     &v[3], &v[4]) == 7 && strcmp(nm, name) == 0)
      return 1;
  }
  return 0;
}

static void full_report(int rank) {
  FILE *f = report_capture(MON_REPORT_FULL);
  if (rank != 0)
    return;
  double n, v[5];
  CHECK(report_row(f, "MPI_Exscan", &n, v));
  CHECK_EQ((long)n, 2 * NV);
  static const double q[3] = {0.5, 0.9, 0.99};
  for (int i = 0; i < 3; i++) {
    double x = exact_u(all_ns, 2 * NV, q[i]) * 1e-9;
    CHECK_DLE(fabs(v[1 + i] - x), x * PIA_DIST_REL_ERR + x * 1e-5); /* 6 digits printed */
  }
  CHECK_NEAR(v[4], (double)all_ns[2 * NV - 1] * 1e-9, all_ns[2 * NV - 1] * 1e-14);
  CHECK(report_row(f, "spin", &n, v));
  CHECK_EQ((long)n, 2 * NR);
  for (int i = 0; i < 3; i++) {
    CHECK_DGE(v[1 + i], exact_d(spin_in, 2 * NR, q[i]) * (1 - PIA_DIST_REL_ERR - 1e-5));
    CHECK_DLE(v[1 + i], exact_d(spin_out, 2 * NR, q[i]) * (1 + PIA_DIST_REL_ERR + 1e-5));
  }
  fclose(f);
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void regions(int rank) {
  static double tin[2 * NR], tout[2 * NR];
  double mine_in[NR], mine_out[NR];
  for (int i = 0; i < NR; i++) {
    double len = 20e-6 + 1e-6 * (double)((i * 37 + rank * 11) % 150); /* 20..170 us */
    double t0 = now_s();
    CHECK_EQ(mon_region_begin("spin"), 0);
    double s0 = now_s(), s1;
    while ((s1 = now_s()) - s0 < len)
      ;
    CHECK_EQ(mon_region_end("spin"), 0);
    double t1 = now_s();
    mine_in[i] = s1 - s0;
    mine_out[i] = t1 - t0;
  }
  int id = pia_region_find("spin");
  CHECK_GE(id, 1);
  double out[NQ];
  CHECK_EQ(pia_region_quantiles(id, NQ, qs, out), 0);
  memcpy(tin, mine_in, sizeof mine_in);
  memcpy(tout, mine_out, sizeof mine_out);
  qsort(tin, NR, sizeof *tin, cmp_dbl);
  qsort(tout, NR, sizeof *tout, cmp_dbl);
  for (int i = 0; i < NQ; i++) {
    CHECK_DGE(out[i], exact_d(tin, NR, qs[i]) * (1 - PIA_DIST_REL_ERR));
    CHECK_DLE(out[i], exact_d(tout, NR, qs[i]) * (1 + PIA_DIST_REL_ERR));
  }
  pia_distdata_t d;
  CHECK_EQ(pia_region_dist(id, &d), 0);
  CHECK_EQ(d.count, NR);
  CHECK_DLE(d.min, d.p50);
  CHECK_DLE(d.p50, d.p90);
  CHECK_DLE(d.p90, d.p99);
  CHECK_DLE(d.p99, d.max);
  pia_regdata_t rd;
  CHECK_EQ(pia_region_data(id, &rd), 0);
  CHECK_NEAR(d.mean * NR, rd.wtime, NR * 1.5e-9); /* whole ns per instance */

  /* merged by path over both ranks: bounds from both ranks' timings */
  MPI_Allgather(mine_in, NR, MPI_DOUBLE, tin, NR, MPI_DOUBLE, MPI_COMM_WORLD);
  MPI_Allgather(mine_out, NR, MPI_DOUBLE, tout, NR, MPI_DOUBLE, MPI_COMM_WORLD);
  qsort(tin, 2 * NR, sizeof *tin, cmp_dbl);
  qsort(tout, 2 * NR, sizeof *tout, cmp_dbl);
  memcpy(spin_in, tin, sizeof spin_in);
  memcpy(spin_out, tout, sizeof spin_out);
  pia_distdata_t md;
  CHECK_EQ(pia_region_dist_reduce(MPI_COMM_WORLD, "spin", NQ, qs, out, &md), 0);
  CHECK_EQ(md.count, 2 * NR);
  for (int i = 0; i < NQ; i++) {
    CHECK_DGE(out[i], exact_d(tin, 2 * NR, qs[i]) * (1 - PIA_DIST_REL_ERR));
    CHECK_DLE(out[i], exact_d(tout, 2 * NR, qs[i]) * (1 + PIA_DIST_REL_ERR));
  }
  /* a region only rank 1 entered: rank 0 adds nothing */
  if (rank == 1) {
    CHECK_EQ(mon_region_begin("only1"), 0);
    CHECK_EQ(mon_region_end("only1"), 0);
  }
  CHECK_EQ(pia_region_dist_reduce(MPI_COMM_WORLD, "/only1", 0, NULL, NULL, &md), 0);
  CHECK_EQ(md.count, 1);
  CHECK_DGT(md.max, 0);
  CHECK_EQ(md.min, md.max);
}

static void errors(int rank) {
  pia_distdata_t d;
  double q = 0.5, out = -7;
  CHECK_EQ(pia_region_dist(0, &d), BALLAST_ENODATA); /* the program: no instances */
  CHECK_EQ(pia_region_dist(1 << 30, &d), BALLAST_ENOTFOUND);
  CHECK_EQ(pia_region_dist(-3, &d), BALLAST_ENOTFOUND);
  CHECK_EQ(pia_region_dist(0, NULL), BALLAST_EINVAL);
  CHECK_EQ(pia_activity_dist(-1, &d), BALLAST_ENOTFOUND);
  CHECK_EQ(pia_activity_dist(0, NULL), BALLAST_EINVAL);
  int id = pia_region_find("spin");
  double badq[] = {-0.01, 1.01, NAN};
  for (int i = 0; i < 3; i++) {
    CHECK_EQ(pia_region_quantiles(id, 1, &badq[i], &out), BALLAST_EINVAL);
    CHECK_EQ(pia_activity_quantiles(MON_ACT_MPI_Exscan, 1, &badq[i], &out), BALLAST_EINVAL);
  }
  CHECK(out == -7);
  CHECK_EQ(pia_region_quantiles(id, 1, NULL, &out), BALLAST_EINVAL);
  CHECK_EQ(pia_region_quantiles(id, -1, &q, &out), BALLAST_EINVAL);
  CHECK_EQ(pia_region_quantiles(id, 0, NULL, NULL), 0);
  /* a region still open has no completed instance */
  CHECK_EQ(mon_region_begin("open"), 0);
  CHECK_EQ(pia_region_dist(pia_region_find("open"), &d), BALLAST_ENODATA);
  CHECK_EQ(mon_region_end("open"), 0);
  /* collective errors are agreed: a bad q on rank 1 only */
  double qq = rank == 1 ? 2.0 : 0.5;
  int rc = pia_region_dist_reduce(MPI_COMM_WORLD, "spin", 1, &qq, &out, &d);
  CHECK_EQ(rc, rank == 1 ? BALLAST_EINVAL : BALLAST_EREMOTE);
  rc = pia_activity_dist_reduce(MPI_COMM_WORLD, rank == 0 ? -5 : 3, 0, NULL, NULL, &d);
  CHECK_EQ(rc, rank == 0 ? BALLAST_ENOTFOUND : BALLAST_EREMOTE);
  /* the same region spelt with and without the leading '/': no mismatch */
  CHECK_EQ(pia_region_dist_reduce(MPI_COMM_WORLD, rank == 0 ? "spin" : "/spin", 0, NULL,
                                  NULL, &d), 0);
  /* different regions or activities named on the ranks: a mismatch on
   * both (not a silent merge of the two) */
  CHECK_EQ(pia_region_dist_reduce(MPI_COMM_WORLD, rank == 0 ? "spin" : "open", 0, NULL,
                                  NULL, &d), BALLAST_EMISMATCH);
  CHECK_EQ(pia_activity_dist_reduce(MPI_COMM_WORLD, rank == 0 ? 2 : 3, 0, NULL, NULL, &d),
           BALLAST_EMISMATCH);
  /* nowhere: no data on any rank */
  CHECK_EQ(pia_region_dist_reduce(MPI_COMM_WORLD, "no/such/region", 0, NULL, NULL, &d),
           BALLAST_ENODATA);
  CHECK_EQ(d.count, 0);
  CHECK_EQ(pia_region_dist_reduce(MPI_COMM_WORLD, "bad//path", 0, NULL, NULL, &d),
           BALLAST_EINVAL);
  CHECK_EQ(pia_region_dist_reduce(MPI_COMM_NULL, "spin", 0, NULL, NULL, &d),
           BALLAST_EINVAL);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK_EQ(size, 2);
  activities(rank);
  regions(rank);
  full_report(rank);
  errors(rank);
  MPI_Finalize();
  double q = 0.5, out;
  pia_distdata_t d;
  CHECK_EQ(pia_region_quantiles(1, 1, &q, &out), BALLAST_ESTATE);
  CHECK_EQ(pia_activity_dist(0, &d), BALLAST_ESTATE);
  if (rank == 0)
    TEST_PASS("pia_dist");
  return 0;
}
