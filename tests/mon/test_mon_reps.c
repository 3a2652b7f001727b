/* Repeated regions (mon_region_repeat, BALLAST_REPEAT): each instance is a
 * repetition, kept and labelled first / warm-up / outlier / good online; the
 * cross-rank figures of each batch of K repetitions; user counters; the
 * ring; bad input. 2 ranks; run with BALLAST_REPEAT=envrep,
 * BALLAST_REPEAT_KEEP=128 and BALLAST_REPEAT_REDUCE=16.
 *
 * Durations are spun on the wall clock, so a loaded machine makes
 * repetitions longer than asked: what depends on the times is checked
 * against the times mon recorded. */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <ballast/pia.h>

#include "common/reps.h"
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

/* A warm-up of 30 repetitions at 2x, then 1x with two 6x outliers. The
 * wall times a loaded machine gives are not the ones asked for, so the
 * labels are checked against common's classifier replayed on the times
 * mon recorded: the same labels, warm-up end and good statistics. */
static void labels(void) {
  const double d = 1e-3;
  for (int i = 0; i < 120; i++)
    run("iter", i < 30 ? 2 * d : (i == 70 || i == 100) ? 6 * d : d);
  pia_regid_t id = pia_region_find("iter");
  CHECK_GE(id, 1);
  pia_repinfo_t in;
  CHECK_EQ(pia_region_rep_info(id, &in), 0);
  CHECK_EQ(in.count, 120);
  CHECK_EQ(in.kept, 128);
  CHECK_EQ(in.oldest, 0);
  ballast__reps_t c;
  CHECK_EQ(ballast__reps_init(&c, NULL), 0);
  pia_rep_t r;
  for (long long i = 0; i < in.count; i++) {
    CHECK_EQ(pia_region_rep_get(id, i, &r), 0);
    CHECK_EQ(r.index, i);
    CHECK_DGE(r.wtime, i < 30 ? 2 * d : (i == 70 || i == 100) ? 6 * d : d);
    CHECK_EQ(r.label, ballast__reps_add(&c, r.wtime));
  }
  CHECK_EQ(in.warming_up, ballast__reps_warming(&c));
  CHECK_EQ(in.warmup_end, c.warm_end);
  CHECK_EQ(in.outliers, c.outliers);
  /* The good statistics are those of the repetitions labelled good since
   * the warm-up's end. */
  long long ng = 0;
  double sum = 0, mn = INFINITY;
  for (long long i = in.warmup_end > 1 ? in.warmup_end : 1; i < in.count; i++) {
    CHECK_EQ(pia_region_rep_get(id, i, &r), 0);
    if (r.label == PIA_REP_GOOD) {
      ng++;
      sum += r.wtime;
      mn = r.wtime < mn ? r.wtime : mn;
    }
  }
  CHECK_EQ(in.good, ng);
  CHECK_NEAR(in.good_mean, sum / (double)ng, 1e-12);
  CHECK(in.good_min == mn);
  CHECK(in.median == ballast__reps_median(&c));
  CHECK_EQ(in.good + in.outliers, in.count - in.warmup_end);
  CHECK_EQ(pia_region_warming_up(id), in.warming_up);
  CHECK_EQ(pia_region_rep_get(id, 119, &r), 0);
  CHECK_EQ(pia_region_rep_last_label(id), r.label);
  /* Never existed; bad arguments. */
  CHECK_EQ(pia_region_rep_get(id, 120, &r), BALLAST_ERANGE);
  CHECK_EQ(pia_region_rep_get(id, -1, &r), BALLAST_EINVAL);
  CHECK_EQ(pia_region_rep_get(id, 119, NULL), BALLAST_EINVAL);
}

/* No warm-up: the repetitions labelled warm-up while undecided stay out of
 * the good statistics (an outside check found them counted). */
static void no_warmup(void) {
  CHECK_EQ(mon_region_repeat("flat"), 0);
  for (int i = 0; i < 40; i++)
    run("flat", 5e-4);
  pia_regid_t id = pia_region_find("flat");
  pia_repinfo_t in;
  CHECK_EQ(pia_region_rep_info(id, &in), 0);
  long long g = 0;
  for (long long i = 0; i < in.count; i++) {
    pia_rep_t r;
    CHECK_EQ(pia_region_rep_get(id, i, &r), 0);
    g += r.label == PIA_REP_GOOD;
  }
  CHECK_EQ(in.good, g);
  CHECK_LE(in.good + in.outliers, in.count - 1);
}

/* The ring keeps the newest BALLAST_REPEAT_KEEP repetitions. */
static void ring(void) {
  CHECK_EQ(mon_region_repeat("many"), 0);
  for (int i = 0; i < 200; i++)
    run("many", 0);
  pia_regid_t id = pia_region_find("many");
  pia_repinfo_t in;
  CHECK_EQ(pia_region_rep_info(id, &in), 0);
  CHECK_EQ(in.count, 200);
  CHECK_EQ(in.oldest, 200 - 128);
  pia_rep_t r;
  CHECK_EQ(pia_region_rep_get(id, 71, &r), BALLAST_ERANGE);
  CHECK_EQ(pia_region_rep_get(id, 72, &r), 0);
  CHECK_EQ(r.index, 72);
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
  pia_regid_t id = pia_region_find("comm");
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
  /* Bad input: refused, each problem warned of once (stderr caught). */
  fflush(stderr);
  char errpath[] = "/tmp/ballast_reps_err_XXXXXX";
  int efd = mkstemp(errpath), saved = dup(2);
  CHECK(efd >= 0 && saved >= 0);
  CHECK(dup2(efd, 2) == 2);
  for (int k = 0; k < 2; k++) {
    CHECK_EQ(mon_rep_counter_add(7, 5.0), BALLAST_ENOTFOUND);
    CHECK_EQ(mon_rep_counter_add(c, NAN), BALLAST_EINVAL);
    CHECK_EQ(mon_rep_timer_start(-1), BALLAST_ENOTFOUND);
    CHECK_EQ(mon_rep_counter_create(""), BALLAST_EINVAL);
    CHECK_EQ(mon_rep_counter_create(NULL), BALLAST_EINVAL);
  }
  fflush(stderr);
  CHECK(dup2(saved, 2) == 2);
  close(saved);
  char err[4096] = {0};
  CHECK(pread(efd, err, sizeof err - 1, 0) > 0);
  close(efd);
  unlink(errpath);
  const char *want[] = {"mon_rep_counter_add(7): no such counter", "not finite for counter",
                        "mon_rep_timer_start(-1): no such counter", "an empty name",
                        "a NULL name"};
  for (size_t k = 0; k < sizeof want / sizeof *want; k++) {
    const char *at = strstr(err, want[k]);
    CHECK(at != NULL);
    CHECK(at == NULL || strstr(at + 1, want[k]) == NULL); /* once */
  }
}

/* Repetition i of region id once its batch completed (or gave up): the
 * batches progress at the end of any repetition, so this repeats "tick". */
static void wait_reduced(pia_regid_t id, long long i, pia_rep_t *r) {
  for (int tries = 0; tries < 20000; tries++) {
    CHECK_EQ(pia_region_rep_get(id, i, r), 0);
    if (r->reduced)
      return;
    run("tick", 1e-5);
  }
}

/* Rank 1 slower: the cross-rank figures are checked exactly against the
 * times every rank recorded, gathered here. */
static void across(int rank) {
  const double d = 1e-3;
  for (int i = 0; i < 64; i++) {
    run("envrep", rank == 1 ? 3 * d : 0);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  pia_regid_t id = pia_region_find("envrep");
  pia_repinfo_t in;
  CHECK_EQ(pia_region_rep_info(id, &in), 0);
  CHECK_EQ(in.reduce_every, 16);
  /* Batches 0..2 (repetitions 0..47) were started 16 repetitions or more
   * ago. */
  pia_rep_t r[48];
  double mine[48], all[2 * 48];
  for (int i = 0; i < 48; i++) {
    wait_reduced(id, i, &r[i]);
    CHECK_EQ(r[i].reduced, 1);
    mine[i] = r[i].wtime;
  }
  MPI_Allgather(mine, 48, MPI_DOUBLE, all, 48, MPI_DOUBLE, MPI_COMM_WORLD);
  int slow1 = 0;
  for (int i = 0; i < 48; i++) {
    double a = all[i], b = all[48 + i];
    CHECK(r[i].max_wtime == (a > b ? a : b));
    CHECK(r[i].min_wtime == (a < b ? a : b));
    CHECK_EQ(r[i].slowest_rank, b > a ? 1 : 0);
    CHECK_NEAR(r[i].mean_wtime, (a + b) / 2, 1e-15);
    CHECK_NEAR(r[i].waited, fabs(a - b), 1e-15);
    slow1 += r[i].slowest_rank == 1;
  }
  CHECK_GE(slow1, 40); /* rank 0's repetitions are empty */
}

/* Causes: two repetitions that sleep (voluntary context switches, time not
 * running) among busy ones; they are outliers and their switches show. */
static void causes(void) {
  CHECK_EQ(mon_region_repeat("io"), 0);
  for (int i = 0; i < 60; i++) {
    CHECK_EQ(mon_region_begin("io"), 0);
    if (i == 40 || i == 50) {
      struct timespec ts = {0, 20000000}; /* 20 ms asleep */
      nanosleep(&ts, NULL);
    } else {
      spin(1e-3);
    }
    CHECK_EQ(mon_region_end("io"), 0);
  }
  pia_regid_t id = pia_region_find("io");
  pia_rep_t r;
  for (int i = 40; i <= 50; i += 10) {
    CHECK_EQ(pia_region_rep_get(id, i, &r), 0);
    CHECK_EQ(r.label, PIA_REP_OUTLIER); /* 20 ms against a median of about 1 ms */
    CHECK_GE(r.vcsw, 1);
    CHECK_DLT(r.cputime, 0.5 * r.wtime); /* it did not run most of the time */
  }
}

/* Ranks that repeat different regions: their batches pair up and are
 * detected, never reported wrong. */
static void mismatch(int rank) {
  const char *mine = rank == 0 ? "only0" : "only1";
  CHECK_EQ(mon_region_repeat(mine), 0);
  for (int i = 0; i < 16; i++)
    run(mine, 1e-4);
  MPI_Barrier(MPI_COMM_WORLD);
  pia_regid_t id = pia_region_find(mine);
  pia_rep_t r;
  wait_reduced(id, 3, &r);
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
  CHECK_EQ(mon_region_repeat("tick"), 0);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  pia_repinfo_t in;
  CHECK_EQ(pia_region_rep_info(0, &in), BALLAST_ESTATE); /* not repeated */
  CHECK_EQ(pia_region_rep_info(123456, &in), BALLAST_ENOTFOUND);
  CHECK_EQ(pia_region_rep_info(0, NULL), BALLAST_EINVAL);
  run("plain", 1e-5);
  CHECK_EQ(pia_region_warming_up(pia_region_find("plain")), BALLAST_ESTATE);
  CHECK_STREQ(pia_rep_label_name(PIA_REP_WARMUP), "warmup");
  CHECK_STREQ(pia_rep_label_name(9), "unknown");
  labels();
  no_warmup();
  ring();
  traffic(rank);
  across(rank);
  causes();
  mismatch(rank);
  MPI_Finalize();
  TEST_PASS("mon_reps");
}
