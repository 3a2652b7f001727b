/* mon's distributions, exact, without MPI traffic (mon initialised
 * directly): call durations recorded through mon__record by two threads
 * with chosen tick counts answer, summed over the threads, each quantile
 * within 1/128 of the union's exact order statistic (min and max exact),
 * the count and the activity's own call count agree, a reader thread
 * reading meanwhile sees the count grow and ordered quantiles, the group MPI_P2P
 * holds them, the library's own traffic stays out, and the buckets summed
 * over threads (foreach, flat) hold every call. Regions: instances on both
 * threads counted once each, the distribution's mean times the count is
 * the region's wall time. */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/common_internal.h"
#include "mon/mon_acts.h"
#include "mon/mon_core.h"
#include "test_util.h"

enum { NV = 20000, NREG = 500 };
static uint64_t vals[2][NV]; /* ns as mon keeps them */

static uint64_t ticks_of(int th, int i) {
  uint64_t x = (uint64_t)(i + 1) * 2654435761u + (uint64_t)th * 97u;
  return 200 + (uint64_t)(300.0 * exp((double)(x % 4099) / 4099.0 * (th ? 9.0 : 5.0)));
}

static void *worker(void *arg) {
  int th = (int)(intptr_t)arg;
  mon__tls_t *t = mon__enter();
  CHECK(t != NULL);
  for (int i = 0; i < NV; i++) {
    uint64_t tk = ticks_of(th, i);
    mon__record(t, MON_ACT_MPI_Send, 1, 8, tk);
    vals[th][i] = mon__dur_ns(tk);
  }
  /* the library's own traffic: not in the application's distribution */
  ballast__lib_begin();
  for (int i = 0; i < 100; i++)
    mon__record(t, MON_ACT_MPI_Send, 1, 8, 1000000000ull);
  ballast__lib_end();
  mon__leave(t);
  for (int i = 0; i < NREG; i++) {
    CHECK_EQ(mon_region_begin("reg"), 0);
    CHECK_EQ(mon_region_end("reg"), 0);
  }
  return NULL;
}

/* Reads while the workers record: never a count going back, quantiles
 * always ordered inside [min, max] (the table appears and groups are added
 * under the reader). */
static int writers_done;
static void *reader(void *arg) {
  (void)arg;
  uint64_t last = 0;
  int reads = 0;
  static const double q[3] = {0.1, 0.5, 0.99};
  while (!__atomic_load_n(&writers_done, __ATOMIC_ACQUIRE) || reads < 10) {
    double o[3];
    mon__diststats_t st;
    int rc = mon__act_quantiles(MON_ACT_MPI_Send, q, 3, o, &st);
    if (rc == BALLAST_ENODATA)
      continue;
    CHECK_EQ(rc, 0);
    CHECK_GE(st.count, last);
    last = st.count;
    CHECK_DLE(st.min, o[0]);
    CHECK_DLE(o[0], o[1]);
    CHECK_DLE(o[1], o[2]);
    CHECK_DLE(o[2], st.max);
    reads++;
  }
  return NULL;
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

static int sum_cb(unsigned b, uint64_t n, void *ctx) {
  (void)b;
  *(uint64_t *)ctx += n;
  return 0;
}

int main(void) {
  setenv("BALLAST_REPORT", "none", 1);
  unsetenv("BALLAST_PROFILE");
  unsetenv("BALLAST_MONITOR");
  setenv("BALLAST_REGION_CPU", "0", 1);
  mon__init(NULL, NULL);
  CHECK(mon__active());
  double q0 = 0.5, o0 = -1;
  mon__diststats_t st;
  CHECK_EQ(mon__act_quantiles(MON_ACT_MPI_Send, &q0, 1, &o0, &st), BALLAST_ENODATA);
  CHECK_EQ(st.count, 0);
  pthread_t th[2], rd;
  CHECK_EQ(pthread_create(&rd, NULL, reader, NULL), 0);
  for (int i = 0; i < 2; i++)
    CHECK_EQ(pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i), 0);
  for (int i = 0; i < 2; i++)
    CHECK_EQ(pthread_join(th[i], NULL), 0);
  __atomic_store_n(&writers_done, 1, __ATOMIC_RELEASE);
  CHECK_EQ(pthread_join(rd, NULL), 0);

  static uint64_t all[2 * NV];
  memcpy(all, vals[0], sizeof vals[0]);
  memcpy(all + NV, vals[1], sizeof vals[1]);
  qsort(all, 2 * NV, sizeof *all, cmp_u64);
  static const double qs[] = {0.0, 0.05, 0.5, 0.75, 0.9, 0.99, 0.999, 1.0};
  enum { NQ = sizeof qs / sizeof *qs };
  double out[NQ];
  CHECK_EQ(mon__act_quantiles(MON_ACT_MPI_Send, qs, NQ, out, &st), 0);
  for (int i = 0; i < NQ; i++) {
    double k = ceil(qs[i] * 2 * NV);
    size_t r = k < 1 ? 1 : (size_t)k;
    double x = (double)all[r - 1] * 1e-9;
    CHECK_DLE(fabs(out[i] - x), x / 128 + 1e-15);
  }
  CHECK(out[0] == (double)all[0] * 1e-9);
  CHECK(out[NQ - 1] == (double)all[2 * NV - 1] * 1e-9);
  CHECK_EQ(st.count, 2 * NV);
  CHECK_EQ(st.lost, 0);
  CHECK(st.max < 1.0); /* the library's 1 s calls stayed out */
  double sum = 0;
  for (int i = 0; i < 2 * NV; i++)
    sum += (double)all[i];
  CHECK_NEAR(st.mean, sum / (2 * NV) * 1e-9, 1e-12);
  mon__actstats_t a = {0, 0, 0.0, INFINITY, 0.0};
  CHECK_EQ(mon__act_read(MON_ACT_MPI_Send, -1, &a), 0);
  CHECK_EQ(a.ncalls, st.count);
  /* the group holds the same calls (MPI_Send is its only member called) */
  double g[NQ];
  mon__diststats_t gst;
  CHECK_EQ(mon__act_quantiles(MON_GRP_P2P, qs, NQ, g, &gst), 0);
  CHECK_EQ(gst.count, st.count);
  for (int i = 0; i < NQ; i++)
    CHECK(g[i] == out[i]);
  /* buckets summed over threads: every call, flat and foreach alike */
  uint64_t nb = 0;
  CHECK_EQ(mon__act_dist_foreach(MON_ACT_MPI_Send, sum_cb, &nb), 0);
  CHECK_EQ(nb, 2 * NV);
  ballast__dist_flat_t *f = malloc(sizeof *f);
  CHECK(f);
  ballast__dist_flat_init(f);
  CHECK_EQ(mon__act_dist_flat(MON_ACT_MPI_Send, f), 0);
  CHECK_EQ(f->m.count, 2 * NV);
  double fo[NQ];
  CHECK_EQ(ballast__dist_flat_quantiles(f, qs, NQ, fo), 0);
  for (int i = 0; i < NQ; i++)
    CHECK(fo[i] * 1e-9 == out[i]);
  free(f);

  /* regions: both threads' instances */
  int id = mon__region_find("reg");
  CHECK_GE(id, 1);
  CHECK_EQ(mon__region_quantiles(id, qs, NQ, out, &st), 0);
  CHECK_EQ(st.count, 2 * NREG);
  mon__regstats_t rs;
  CHECK_EQ(mon__region_read(id, &rs), 0);
  CHECK_EQ(rs.count, st.count);
  CHECK_NEAR(st.mean * (double)st.count, rs.wtime, 2 * NREG * 1.5e-9);
  CHECK_DLE(st.min, out[2]);
  CHECK_DLE(out[2], st.max);
  nb = 0;
  CHECK_EQ(mon__region_dist_foreach(id, sum_cb, &nb), 0);
  CHECK_EQ(nb, 2 * NREG);
  /* bad input */
  CHECK_EQ(mon__region_quantiles(0, qs, 1, out, &st), BALLAST_ENODATA);
  CHECK_EQ(mon__region_quantiles(-1, qs, 1, out, NULL), BALLAST_ENOTFOUND);
  CHECK_EQ(mon__act_quantiles(MON__NACT + MON__NGROUPS, qs, 1, out, NULL), BALLAST_ENOTFOUND);
  CHECK_EQ(mon__act_dist_flat(0, NULL), BALLAST_EINVAL);
  CHECK_EQ(mon__region_dist_foreach(id, NULL, NULL), BALLAST_EINVAL);
  TEST_PASS("mon_dist");
  return 0;
}
