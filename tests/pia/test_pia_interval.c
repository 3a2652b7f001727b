/* Interval data (2 ranks): in step s (1..S) rank 0 sends s messages of K ints
 * to rank 1 inside region "step". Each step's interval shows exactly s calls
 * and s*K*4 bytes, one instance of "step", and the intervals add up to the
 * whole-run change since tracking began. Two intervals are independent. */
#include <ballast.h>

#include "test_util.h"

enum { S = 12, K = 16 };

static void step(int rank, int s) {
  int buf[K] = {0};
  mon_region_begin("step");
  for (int n = 0; n < s; n++) {
    if (rank == 0)
      MPI_Send(buf, K, MPI_INT, 1, 3, MPI_COMM_WORLD);
    else
      MPI_Recv(buf, K, MPI_INT, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  mon_region_end("step");
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  step(rank, 3); /* creates the region and some history before tracking */

  pia_regid_t reg = pia_region_find("step");
  pia_act_t act = pia_activity_find(rank == 0 ? "MPI_Send" : "MPI_Recv");
  pia_act_t p2p = pia_activity_find(PIA_GROUP_P2P);
  CHECK_GT(reg, 0);
  CHECK_GE(act, 0);
  CHECK_GE(p2p, 0);

  pia_regdata_t r0;
  pia_actdata_t a0;
  CHECK_EQ(pia_region_data(reg, &r0), 0);
  pia_actdata_init(&a0);
  CHECK_EQ(pia_activity_data(act, &a0), 0);

  pia_interval_t *iv, *whole;
  CHECK_EQ(pia_interval_create(&iv), 0);
  CHECK_EQ(pia_interval_create(&whole), 0);
  CHECK_EQ(pia_interval_track_region(iv, reg), 0);
  CHECK_EQ(pia_interval_track_activity(iv, act), 0);
  CHECK_EQ(pia_interval_track_activity(iv, p2p), 0);
  CHECK_EQ(pia_interval_track_region(whole, reg), 0);
  CHECK_EQ(pia_interval_track_activity(whole, act), 0);

  long long sum_calls = 0, sum_bytes = 0, sum_count = 0;
  double sum_w = 0, sum_m = 0, sum_t = 0;
  for (int s = 1; s <= S; s++) {
    CHECK_EQ(pia_interval_mark(iv), 0);
    pia_regdata_t r;
    pia_actdata_t d;
    /* Right after the mark nothing has happened yet. */
    CHECK_EQ(pia_interval_region_data(iv, reg, &r), 0);
    CHECK_EQ(r.count, 0);
    CHECK_EQ(pia_interval_activity_data(iv, act, &d), 0);
    CHECK_EQ(d.ncalls, 0);
    CHECK(isinf(d.tmin));

    double t0 = MPI_Wtime();
    step(rank, s);
    double wall = MPI_Wtime() - t0;

    CHECK_EQ(pia_interval_region_data(iv, reg, &r), 0);
    CHECK_EQ(r.id, reg);
    CHECK_STREQ(r.name, "step");
    CHECK_EQ(r.count, 1);
    CHECK_DGT(r.wtime, 0.0);
    CHECK_DLE(r.wtime, wall);
    CHECK_DLE(r.mtime, r.wtime);
    CHECK_EQ(pia_interval_activity_data(iv, act, &d), 0);
    CHECK_EQ(d.ncalls, s);
    CHECK_EQ(d.nbytes, (long long)s * K * 4);
    CHECK_DGT(d.tsum, 0.0);
    CHECK_DLE(d.tsum, wall);
    CHECK_DLE(d.tmin, d.tmax);
    pia_actdata_t g;
    CHECK_EQ(pia_interval_activity_data(iv, p2p, &g), 0);
    CHECK_EQ(g.ncalls, s); /* only the one call kind ran on this rank */
    sum_calls += d.ncalls;
    sum_bytes += d.nbytes;
    sum_count += r.count;
    sum_w += r.wtime;
    sum_m += r.mtime;
    sum_t += d.tsum;
  }

  /* The intervals add up to the whole-run change since tracking. */
  pia_regdata_t r1, rw;
  pia_actdata_t a1, aw;
  CHECK_EQ(pia_region_data(reg, &r1), 0);
  pia_actdata_init(&a1);
  CHECK_EQ(pia_activity_data(act, &a1), 0);
  CHECK_EQ(sum_calls, a1.ncalls - a0.ncalls);
  CHECK_EQ(sum_calls, (long long)S * (S + 1) / 2);
  CHECK_EQ(sum_bytes, a1.nbytes - a0.nbytes);
  CHECK_EQ(sum_count, r1.count64 - r0.count64);
  CHECK_NEAR(sum_w, r1.wtime - r0.wtime, 1e-9);
  CHECK_NEAR(sum_m, r1.mtime - r0.mtime, 1e-9);
  CHECK_NEAR(sum_t, a1.tsum - a0.tsum, 1e-9);
  /* and the never-marked interval saw all of it */
  CHECK_EQ(pia_interval_region_data(whole, reg, &rw), 0);
  CHECK_EQ(rw.count64, sum_count);
  CHECK_NEAR(rw.wtime, sum_w, 1e-9);
  CHECK_EQ(pia_interval_activity_data(whole, act, &aw), 0);
  CHECK_EQ(aw.ncalls, sum_calls);
  CHECK_EQ(aw.nbytes, sum_bytes);
  /* min and max of an interval are the whole-run values (documented) */
  CHECK(aw.tmin == a1.tmin);
  CHECK(aw.tmax == a1.tmax);

  pia_interval_destroy(iv);
  pia_interval_destroy(whole);
  TEST_PASS("pia_interval");
  MPI_Finalize();
  return 0;
}
