/* PIA reads while several threads run MPI (MPI_THREAD_MULTIPLE, 2 ranks):
 * T worker threads per rank exchange N messages of K ints (rank 0 sends, rank
 * 1 receives, one tag per thread) inside region "worker", while the main
 * thread reads PIA in a loop. Every read succeeds; counters never go down nor
 * above the final values; the final values are exact. */
#include <pthread.h>

#include <ballast.h>

#include "test_util.h"

enum { T = 3, N = 2000, K = 8 };

static int rank;

static void *worker(void *arg) {
  int tag = (int)(intptr_t)arg, buf[K] = {0};
  CHECK_EQ(mon_region_begin("worker"), 0);
  for (int n = 0; n < N; n++) {
    if (rank == 0)
      MPI_Send(buf, K, MPI_INT, 1, tag, MPI_COMM_WORLD);
    else
      MPI_Recv(buf, K, MPI_INT, 0, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  CHECK_EQ(mon_region_end("worker"), 0);
  return NULL;
}

int main(int argc, char **argv) {
  int provided;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  CHECK_EQ(provided, MPI_THREAD_MULTIPLE);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  pia_act_t act = pia_activity_find(rank == 0 ? "MPI_Send" : "MPI_Recv");
  pia_act_t all = pia_activity_find(PIA_GROUP_ALL);
  CHECK_GE(act, 0);
  CHECK_GE(all, 0);
  pia_actdata_t base;
  pia_actdata_init(&base);
  CHECK_EQ(pia_activity_data(act, &base), 0);
  pia_interval_t *iv;
  CHECK_EQ(pia_interval_create(&iv), 0);
  CHECK_EQ(pia_interval_track_activity(iv, act), 0);

  pthread_t th[T];
  for (int t = 0; t < T; t++)
    CHECK_EQ(pthread_create(&th[t], NULL, worker, (void *)(intptr_t)(t + 1)), 0);

  long long last_calls = 0, last_bytes = 0, reads = 0;
  const long long total = (long long)T * N;
  while (last_calls < total) {
    pia_actdata_t d;
    pia_actdata_init(&d);
    CHECK_EQ(pia_activity_data(act, &d), 0);
    long long calls = d.ncalls - base.ncalls, bytes = d.nbytes - base.nbytes;
    CHECK_GE(calls, last_calls);
    CHECK_GE(bytes, last_bytes);
    CHECK_LE(calls, total);
    CHECK_LE(bytes, total * K * 4);
    pia_actdata_t g;
    pia_actdata_init(&g);
    CHECK_EQ(pia_activity_data(all, &g), 0);
    CHECK_GE(g.ncalls, d.ncalls); /* read later, and MPI_ALL includes act */
    pia_actdata_t i;
    CHECK_EQ(pia_interval_activity_data(iv, act, &i), 0);
    CHECK_GE(i.ncalls, calls);
    CHECK_LE(i.ncalls, total);
    pia_regid_t w = pia_region_find("worker");
    if (w >= 0) {
      pia_regdata_t r;
      CHECK_EQ(pia_region_data(w, &r), 0);
      CHECK_LE(r.count, T);
    }
    last_calls = calls;
    last_bytes = bytes;
    reads++;
  }
  for (int t = 0; t < T; t++)
    CHECK_EQ(pthread_join(th[t], NULL), 0);

  pia_actdata_t d;
  pia_actdata_init(&d);
  CHECK_EQ(pia_activity_data(act, &d), 0);
  CHECK_EQ(d.ncalls - base.ncalls, total);
  CHECK_EQ(d.nbytes - base.nbytes, total * K * 4);
  pia_regid_t w = pia_region_find("worker");
  CHECK_GT(w, 0);
  pia_regdata_t r;
  CHECK_EQ(pia_region_data(w, &r), 0);
  CHECK_EQ(r.count, T); /* one instance per thread, summed over threads */
  pia_actdata_t rd;
  pia_actdata_init(&rd);
  CHECK_EQ(pia_region_activity_data(w, act, &rd), 0);
  CHECK_EQ(rd.ncalls, total);
  pia_partnerdata_t p;
  CHECK_EQ(pia_partner_data(1 - rank, w, &p), 0);
  CHECK_EQ(rank == 0 ? p.nmsgs : p.rmsgs, total);
  CHECK_GT(reads, 0);
  pia_interval_destroy(iv);
  MPI_Barrier(MPI_COMM_WORLD);
  TEST_PASS("pia_threads");
  MPI_Finalize();
  return 0;
}
