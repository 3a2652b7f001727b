/* Several threads record and open regions while another thread reads the
 * aggregates, the regions and the partner matrix: reads never go backwards,
 * and once the writers are done every figure is exact. Also the library's
 * own traffic (ballast__lib_begin/end) stays out of the application's figures. */
#include <pthread.h>
#include <stdlib.h>

#include <ballast/mon.h>
#include "common/common_internal.h"
#include "mon/mon_acts.h"
#include "mon/mon_internal.h"
#include "test_util.h"

#define NWRITERS 4
#define NITER 200000
#define RITER 2000

static int done_writers;

static void *writer(void *arg) {
  int k = (int)(intptr_t)arg;
  mon_region_handle_t h;
  CHECK_EQ(mon_region_handle_create("chunk", &h), 0);
  CHECK_EQ(mon_region_begin("worker"), 0);
  for (int i = 0; i < NITER; i++) {
    if (i % (NITER / RITER) == 0)
      CHECK_EQ(mon_region_enter(h), 0);
    mon__tls_t *t = mon__enter();
    CHECK(t != NULL);
    mon__record(t, MON_ACT_MPI_Send, k, 8, 3);
    mon__record(t, MON_ACT_MPI_Recv, k, 16, 5);
    mon__leave(t);
    if (i % (NITER / RITER) == NITER / RITER - 1)
      CHECK_EQ(mon_region_leave(h), 0);
  }
  /* library traffic: not the application's */
  ballast__lib_begin();
  mon__tls_t *t = mon__enter();
  mon__record(t, MON_ACT_MPI_Send, k, 1000, 7);
  mon__leave(t);
  ballast__lib_end();
  CHECK_EQ(ballast__lib_depth(), 0);
  CHECK_EQ(mon_region_end("worker"), 0);
  mon_region_handle_destroy(h);
  __atomic_add_fetch(&done_writers, 1, __ATOMIC_RELEASE);
  return NULL;
}

static void *reader(void *arg) {
  (void)arg;
  uint64_t last_calls = 0, last_bytes = 0, last_p = 0, last_cnt = 0;
  long reads = 0;
  while (__atomic_load_n(&done_writers, __ATOMIC_ACQUIRE) < NWRITERS || reads < 10) {
    mon__actstats_t s = {0, 0, 0.0, INFINITY, 0.0};
    CHECK_EQ(mon__act_read(MON_ACT_MPI_Send, -1, &s), 0);
    CHECK_GE(s.ncalls, last_calls);
    CHECK_GE(s.nbytes, last_bytes);
    CHECK_LE(s.ncalls, (uint64_t)NWRITERS * NITER);
    last_calls = s.ncalls;
    last_bytes = s.nbytes;
    mon__partner_t p;
    CHECK_EQ(mon__partner_read(-1, 1, &p), 0);
    CHECK_GE(p.msgs, last_p);
    last_p = p.msgs;
    int w = mon__region_find("worker");
    if (w > 0) {
      int c = mon__region_find_child(w, "chunk");
      if (c > 0) {
        mon__regstats_t r;
        CHECK_EQ(mon__region_read(c, &r), 0);
        CHECK_GE(r.count, last_cnt);
        last_cnt = r.count;
      }
    }
    reads++;
  }
  return NULL;
}

int main(void) {
  setenv("BALLAST_REPORT", "none", 1);
  unsetenv("BALLAST_PROFILE");
  unsetenv("BALLAST_MONITOR");
  mon__init(NULL, NULL);
  pthread_t w[NWRITERS], r;
  CHECK_EQ(pthread_create(&r, NULL, reader, NULL), 0);
  for (int k = 0; k < NWRITERS; k++)
    CHECK_EQ(pthread_create(&w[k], NULL, writer, (void *)(intptr_t)k), 0);
  for (int k = 0; k < NWRITERS; k++)
    pthread_join(w[k], NULL);
  pthread_join(r, NULL);

  /* The threads are gone; their figures stay. */
  mon__actstats_t s = {0, 0, 0.0, INFINITY, 0.0};
  CHECK_EQ(mon__act_read(MON_ACT_MPI_Send, -1, &s), 0);
  CHECK_EQ(s.ncalls, (uint64_t)NWRITERS * NITER);
  CHECK_EQ(s.nbytes, (uint64_t)NWRITERS * NITER * 8);
  CHECK_DLE(s.tmin, s.tmax);
  mon__actstats_t rv = {0, 0, 0.0, INFINITY, 0.0};
  CHECK_EQ(mon__act_read(MON_ACT_MPI_Recv, -1, &rv), 0);
  CHECK_EQ(rv.ncalls, (uint64_t)NWRITERS * NITER);
  CHECK_EQ(rv.nbytes, (uint64_t)NWRITERS * NITER * 16);
  mon__actstats_t p2p = {0, 0, 0.0, INFINITY, 0.0};
  CHECK_EQ(mon__act_read(MON_GRP_P2P, -1, &p2p), 0);
  CHECK_EQ(p2p.ncalls, 2ull * NWRITERS * NITER);

  int wid = mon__region_find("worker");
  CHECK_GT(wid, 0);
  CHECK_EQ(mon__region_parent(wid), 0); /* each thread's stack starts empty */
  int cid = mon__region_find_child(wid, "chunk");
  CHECK_GT(cid, 0);
  mon__regstats_t rw, rc;
  CHECK_EQ(mon__region_read(wid, &rw), 0);
  CHECK_EQ(mon__region_read(cid, &rc), 0);
  CHECK_EQ(rw.count, NWRITERS);
  CHECK_EQ(rc.count, (uint64_t)NWRITERS * RITER);
  CHECK_DLE(rc.wtime, rw.wtime);
  CHECK_DLE(rc.mtime, rw.mtime);
  /* MPI time is inclusive: "worker" holds all the calls (3 + 5 ticks each) */
  double tick = mon__tick_seconds();
  CHECK_NEAR(rw.mtime, (double)NWRITERS * NITER * 8 * tick, 1e-9 * rw.mtime + 1e-12);
  /* all activity of "chunk" was recorded with "chunk" innermost */
  mon__actstats_t cs = {0, 0, 0.0, INFINITY, 0.0};
  CHECK_EQ(mon__act_read(MON_ACT_MPI_Send, cid, &cs), 0);
  CHECK_EQ(cs.ncalls, (uint64_t)NWRITERS * NITER);

  for (int k = 0; k < NWRITERS; k++) {
    mon__partner_t p;
    CHECK_EQ(mon__partner_read(-1, k, &p), 0);
    CHECK_EQ(p.msgs, NITER);
    CHECK_EQ(p.bytes, (uint64_t)NITER * 8);
    CHECK_EQ(p.rmsgs, NITER);
    CHECK_EQ(p.rbytes, (uint64_t)NITER * 16);
    CHECK_EQ(mon__partner_read(cid, k, &p), 0);
    CHECK_EQ(p.msgs, NITER);
  }
  /* the 4 library sends of 1000 bytes are nowhere in the application's data */
  CHECK_EQ(mon__sig_count(), 2ull * NWRITERS);
  TEST_PASS("mon_threads");
  mon__finalize();
  return 0;
}
