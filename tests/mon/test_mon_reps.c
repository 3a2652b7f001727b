/* Repeated regions (mon_region_repeat, BALLAST_REPEAT): each instance is a
 * repetition, kept and labelled first / warm-up / outlier / good online; the
 * cross-rank figures of each batch of K repetitions; user counters; the
 * ring; bad input. 2 ranks; run with BALLAST_REPEAT=envrep,
 * BALLAST_REPEAT_KEEP=64 and BALLAST_REPEAT_REDUCE=16.
 *
 * Durations are spun on the wall clock, so a loaded machine can only make a
 * repetition longer: the checks that could be hit by that (extra outliers,
 * a rank preempted for milliseconds) allow a few. */
#include <time.h>

#include <ballast/pia.h>

#include "test_util.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void spin(double s) {
  double end = now() + s;
  while (now() < end) {
  }
}

static void run(const char *name, double s) {
  CHECK_EQ(mon_region_begin(name), 0);
  spin(s);
  CHECK_EQ(mon_region_end(name), 0);
}

/* A warm-up of 30 repetitions at 2x, then 1x with two 6x outliers. */
static void labels(void) {
  const double d = 1e-3;
  for (int i = 0; i < 120; i++)
    run("iter", i < 30 ? 2 * d : (i == 70 || i == 100) ? 6 * d : d);
  pia_regid_t id = pia_find_region_by_name("iter");
  CHECK_GE(id, 1);
  pia_repinfo_t in;
  CHECK_EQ(pia_region_rep_info(id, &in), 0);
  CHECK_EQ(in.count, 120);
  CHECK_EQ(in.kept, 64);
  CHECK_EQ(in.oldest, 120 - 64);
  CHECK_EQ(in.warming_up, 0);
  CHECK(in.warmup_end >= 29 && in.warmup_end <= 33);
  CHECK_EQ(pia_region_warming_up(id), 0);
  pia_rep_t r;
  CHECK_EQ(pia_region_rep_get(id, 70, &r), 0);
  CHECK_EQ(r.label, PIA_REP_OUTLIER);
  CHECK_EQ(r.index, 70);
  CHECK_DGE(r.wtime, 6 * d);
  CHECK_EQ(pia_region_rep_get(id, 100, &r), 0);
  CHECK_EQ(r.label, PIA_REP_OUTLIER);
  CHECK_GE(in.outliers, 2);
  /* Nearly all the others are good; their statistics exclude the warm-up
   * and the outliers. */
  /* After the warm-up every repetition is good or an outlier; on a loaded
   * machine preemption makes real outliers, so only a share is required. */
  CHECK_EQ(in.good + in.outliers, in.count - in.warmup_end);
  CHECK_GE(in.good, 30);
  CHECK_DLT(in.good_median, 1.5 * d);
  CHECK_DGE(in.good_min, d);
  CHECK_DLT(in.good_min, 1.5 * d);
  int good = 0;
  for (long long i = in.oldest; i < in.count; i++) {
    CHECK_EQ(pia_region_rep_get(id, i, &r), 0);
    CHECK_EQ(r.index, i);
    CHECK(r.label == PIA_REP_GOOD || r.label == PIA_REP_OUTLIER);
    good += r.label == PIA_REP_GOOD;
    if (r.label == PIA_REP_GOOD)
      CHECK_DLT(r.wtime, 3 * in.median);
  }
  CHECK_GE(good, 20);
  CHECK_EQ(pia_region_rep_get(id, 119, &r), 0);
  CHECK_EQ(pia_region_rep_last_label(id), r.label);
  /* Left the ring; never existed. */
  CHECK_EQ(pia_region_rep_get(id, 0, &r), BALLAST_ENOTFOUND);
  CHECK_EQ(pia_region_rep_get(id, 120, &r), BALLAST_ENOTFOUND);
  CHECK_EQ(pia_region_rep_get(id, -1, &r), BALLAST_EINVAL);
  CHECK_EQ(pia_region_rep_get(id, 119, NULL), BALLAST_EINVAL);
}

/* MPI inside a repetition, and user counters and timers. */
static void traffic(int rank) {
  int c = mon_rep_counter_create("cells");
  int t = mon_rep_counter_create("solve");
  CHECK_EQ(c, 0);
  CHECK_EQ(t, 1);
  CHECK_EQ(mon_rep_counter_create("cells"), 0); /* found again */
  CHECK_EQ(mon_region_repeat("comm"), 0);
  double in[8] = {1}, out[8];
  for (int i = 0; i < 20; i++) {
    CHECK_EQ(mon_region_begin("comm"), 0);
    MPI_Allreduce(in, out, 8, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    CHECK_EQ(mon_rep_counter_add(c, 10.0 * i + rank), 0);
    CHECK_EQ(mon_rep_counter_add(c, 1.0), 0);
    CHECK_EQ(mon_rep_timer_start(t), 0);
    spin(2e-4);
    CHECK_EQ(mon_rep_timer_stop(t), 0);
    CHECK_EQ(mon_region_end("comm"), 0);
  }
  pia_regid_t id = pia_find_region_by_name("comm");
  pia_rep_t r, r0;
  CHECK_EQ(pia_region_rep_get(id, 0, &r0), 0);
  CHECK_EQ(r0.label, PIA_REP_FIRST);
  for (int i = 1; i < 20; i++) {
    CHECK_EQ(pia_region_rep_get(id, i, &r), 0);
    CHECK_EQ(r.calls, 1);
    CHECK_GT(r.bytes, 0);
    CHECK_EQ(r.bytes, r0.bytes);
    CHECK_DGT(r.mtime, 0);
    CHECK_DLE(r.mtime, r.wtime);
    CHECK_EQ(r.nuser, 2);
    CHECK_NEAR(r.user[0], 10.0 * i + rank + 1.0, 1e-12);
    CHECK_DGE(r.user[1], 2e-4);
    CHECK_DLE(r.user[1], r.wtime);
  }
  /* Outside a repeated region the counters are accepted and ignored. */
  CHECK_EQ(mon_rep_counter_add(c, 5.0), 0);
  CHECK_EQ(mon_rep_counter_add(7, 5.0), BALLAST_ENOTFOUND);
  CHECK_EQ(mon_rep_counter_add(c, NAN), BALLAST_EINVAL);
  CHECK_EQ(mon_rep_timer_start(-1), BALLAST_ENOTFOUND);
  CHECK_EQ(mon_rep_counter_create(""), BALLAST_EINVAL);
  CHECK_EQ(mon_rep_counter_create(NULL), BALLAST_EINVAL);
}

/* Rank 1 three times slower: the cross-rank figures name it. */
static void across(int rank) {
  const double d = 1e-3;
  for (int i = 0; i < 64; i++) {
    run("envrep", rank == 1 ? 3 * d : d);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  pia_regid_t id = pia_find_region_by_name("envrep");
  pia_repinfo_t in;
  CHECK_EQ(pia_region_rep_info(id, &in), 0);
  CHECK_EQ(in.reduce_every, 16);
  /* Batches 0..2 (repetitions 0..47) were started 16 repetitions or more
   * ago: wait for them with one more collective round each. */
  pia_rep_t r;
  int slow1 = 0, reduced = 0;
  for (int i = 0; i < 48; i++) {
    for (int tries = 0; tries < 1000; tries++) {
      CHECK_EQ(pia_region_rep_get(id, i, &r), 0);
      if (r.reduced)
        break;
      run("envrep", d); /* completes batches in flight */
      MPI_Barrier(MPI_COMM_WORLD);
    }
    CHECK_EQ(r.reduced, 1);
    reduced++;
    CHECK_DLE(r.min_wtime, r.mean_wtime);
    CHECK_DLE(r.mean_wtime, r.max_wtime);
    CHECK_DGE(r.waited, 0);
    CHECK(r.slowest_rank == 0 || r.slowest_rank == 1);
    if (r.slowest_rank == rank)
      CHECK(r.max_wtime == r.wtime);
    else
      CHECK_DGE(r.max_wtime, r.wtime);
    if (r.slowest_rank == 1) {
      slow1++;
      CHECK_NEAR(r.waited, r.max_wtime - r.min_wtime, 1e-12);
    }
  }
  CHECK_EQ(reduced, 48);
  CHECK_GE(slow1, 24); /* rank 0 preempted for 2 ms can take a few */
}

/* Ranks that repeat different regions: their batches pair up and are
 * detected, never reported wrong. */
static void mismatch(int rank) {
  const char *mine = rank == 0 ? "only0" : "only1";
  CHECK_EQ(mon_region_repeat(mine), 0);
  for (int i = 0; i < 16; i++)
    run(mine, 1e-4);
  MPI_Barrier(MPI_COMM_WORLD);
  pia_regid_t id = pia_find_region_by_name(mine);
  pia_rep_t r;
  for (int tries = 0; tries < 1000; tries++) {
    CHECK_EQ(pia_region_rep_get(id, 3, &r), 0);
    if (r.reduced)
      break;
    run(mine, 1e-4); /* tests the batch in flight */
  }
  CHECK_EQ(r.reduced, -1);
  /* Rank 1 starts one more batch than rank 0: MPI_Finalize must not hang. */
  if (rank == 1)
    for (int i = 0; i < 16; i++)
      run(mine, 1e-5);
}

int main(int argc, char **argv) {
  /* Marked before MPI_Init. */
  CHECK_EQ(mon_region_repeat("iter"), 0);
  CHECK_EQ(mon_region_repeat(NULL), BALLAST_EINVAL);
  CHECK_EQ(mon_region_repeat(""), BALLAST_EINVAL);
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  pia_repinfo_t in;
  CHECK_EQ(pia_region_rep_info(0, &in), BALLAST_ESTATE); /* not repeated */
  CHECK_EQ(pia_region_rep_info(123456, &in), BALLAST_ENOTFOUND);
  CHECK_EQ(pia_region_rep_info(0, NULL), BALLAST_EINVAL);
  run("plain", 1e-5);
  CHECK_EQ(pia_region_warming_up(pia_find_region_by_name("plain")), BALLAST_ESTATE);
  CHECK_STREQ(pia_rep_label_name(PIA_REP_WARMUP), "warmup");
  CHECK_STREQ(pia_rep_label_name(9), "unknown");
  labels();
  traffic(rank);
  across(rank);
  mismatch(rank);
  MPI_Finalize();
  TEST_PASS("mon_reps");
}
