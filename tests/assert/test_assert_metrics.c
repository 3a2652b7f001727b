/* Every metric on runs whose figures are known: exact call and byte counts,
 * nested scopes (an inner scope's calls count in the outer one), waits and
 * transfers, wall and CPU time of sleeps and busy loops, the cross-rank
 * aggregates, region attachment with its instances, the failure callback,
 * and a whole-run assertion read after MPI_Finalize. Two ranks. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <ballast.h>

#include "test_util.h"

static int rank;

static int make(const char *e) {
  int id = -1;
  CHECK_EQ(pia_assert_create(e, &id), 0);
  return id;
}

static void sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

static void busy_cpu(double s) {
  struct timespec a, b;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
  volatile double x = 0;
  do {
    for (int i = 0; i < 10000; i++)
      x += i * 1e-9;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
  } while ((double)(b.tv_sec - a.tv_sec) + 1e-9 * (double)(b.tv_nsec - a.tv_nsec) < s);
}

static void p2p_counts(void) {
  int id = make("calls(MPI_Send) == 3 * (rank == 0) & bytes(MPI_Send) == 3000 * (rank == 0) &"
                " calls(MPI_Recv) == 3 * (rank == 1) & bytes(MPI_Recv) == 3 KiB * 0 + 3000 *"
                " (rank == 1) & MPICalls == 3 & MPIBytes == 3000 & MPICollectiveTime == 0");
  char buf[1000] = {0};
  CHECK_EQ(pia_assert_begin(id), 0);
  for (int i = 0; i < 3; i++) {
    if (rank == 0)
      MPI_Send(buf, 1000, MPI_BYTE, 1, 7, MPI_COMM_WORLD);
    else
      MPI_Recv(buf, 1000, MPI_BYTE, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  CHECK_EQ(pia_assert_end(id), 1);
}

static void nested(void) {
  int outer = make("calls(MPI_Barrier) == 1 & calls(MPI_Allreduce) == 2 & MPICalls == 3 &"
                   " MPICollectiveTime >= time(MPI_Barrier) + time(MPI_Allreduce) - 1e-12");
  int inner = make("calls(MPI_Barrier) == 0 & calls(MPI_Allreduce) == 2 & calls(MPI_COLL) == 2");
  int transfer = make("abs(MPITransferTime - time(MPI_Allreduce)) < 1e-9 & MPIWaitTime == 0"
                      " & MPIPointToPointTime == 0 & abs(MPITime - MPICollectiveTime) < 1e-9");
  CHECK_EQ(pia_assert_begin(outer), 0);
  CHECK_EQ(pia_assert_begin(transfer), 0);
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK_EQ(pia_assert_begin(inner), 0);
  double x = 1, y;
  MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  CHECK_EQ(pia_assert_end(inner), 1);
  CHECK_EQ(pia_assert_end(transfer), 1);
  CHECK_EQ(pia_assert_end(outer), 1);
}

static void waits(void) {
  int id = make("calls(MPI_Wait) == 1 & abs(MPIWaitTime - time(MPI_Wait)) < 1e-12 &"
                " MPIPointToPointTime >= MPIWaitTime & calls(MPI_P2P) == 2 &"
                " abs(MPITransferTime - time(MPI_Isend) - time(MPI_Irecv)) < 1e-9");
  int v = 5, w = 0;
  MPI_Request rq;
  CHECK_EQ(pia_assert_begin(id), 0);
  if (rank == 0)
    MPI_Isend(&v, 1, MPI_INT, 1, 3, MPI_COMM_WORLD, &rq);
  else
    MPI_Irecv(&w, 1, MPI_INT, 0, 3, MPI_COMM_WORLD, &rq);
  MPI_Wait(&rq, MPI_STATUS_IGNORE);
  CHECK_EQ(pia_assert_end(id), 1);
}

static void times(void) {
  int wall = make("WallTime >= 50 ms & WallTime < 5 s & CPUTime < WallTime");
  CHECK_EQ(pia_assert_begin(wall), 0);
  sleep_ms(60);
  CHECK_EQ(pia_assert_end(wall), 1);
  int cpu = make("CPUTime >= 30 milliseconds & WallTime >= 30000 microseconds");
  CHECK_EQ(pia_assert_begin(cpu), 0);
  busy_cpu(0.04);
  CHECK_EQ(pia_assert_end(cpu), 1);
  int quick = make("WallTime < 50 ms");
  CHECK_EQ(pia_assert_begin(quick), 0);
  sleep_ms(80);
  CHECK_EQ(pia_assert_end(quick), 0);
}

static void across_ranks(void) {
  int skew = make("max_ranks(WallTime) >= 100 ms & min_ranks(WallTime) < 80 ms &"
                  " avg_ranks(rank) == 0.5 & max_ranks(rank) == 1 & min_ranks(rank) == 0");
  int balance = make("max_ranks(WallTime) / avg_ranks(WallTime) < 1.1");
  /* One after the other: a scope's wall time ends before its reduction, in
   * which rank 0 waits for rank 1 (an outer scope would count that wait). */
  CHECK_EQ(pia_assert_begin(skew), 0);
  if (rank == 1)
    sleep_ms(120);
  CHECK_EQ(pia_assert_end(skew), 1);
  CHECK_EQ(pia_assert_begin(balance), 0);
  if (rank == 1)
    sleep_ms(120);
  CHECK_EQ(pia_assert_end(balance), 0); /* the same verdict on both ranks */
  MPI_Barrier(MPI_COMM_WORLD);
}

static int iter;

static void regions(int *ids) {
  CHECK_EQ(pia_assert_var_register("iter", PIA_VAR_INT, &iter), 0);
  const char *exprs[] = {"$iter != 3", "calls(MPI_Barrier) == 1 & calls(MPI_Allreduce) == 1",
                         "calls(MPI_Allreduce) == 1 & calls(MPI_Barrier) == 0"};
  const char *where[] = {"step", "step", "inner"};
  for (int k = 0; k < 3; k++) {
    pia_assert_options_t o;
    pia_assert_options_init(&o);
    o.expr = exprs[k];
    o.region = where[k];
    CHECK_EQ(pia_assert_create_ex(&o, &ids[k]), 0);
  }
  for (iter = 0; iter < 5; iter++) {
    CHECK_EQ(mon_region_begin("step"), 0);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_EQ(mon_region_begin("inner"), 0);
    double x = 1, y;
    MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    CHECK_EQ(mon_region_end("inner"), 0);
    CHECK_EQ(mon_region_end("step"), 0);
  }
  pia_assert_result_t r;
  CHECK_EQ(pia_assert_result(ids[0], &r), 0);
  CHECK_EQ(r.checks, 5);
  CHECK_EQ(r.passes, 4);
  CHECK_EQ(r.first_fail, 4); /* the fourth exit, iter == 3 */
  CHECK_EQ(pia_assert_result(ids[1], &r), 0);
  CHECK_EQ(r.checks, 5);
  CHECK_EQ(r.passes, 5);
  CHECK_EQ(r.first_fail, 0);
  CHECK_EQ(pia_assert_result(ids[2], &r), 0);
  CHECK_EQ(r.checks, 5);
  CHECK_EQ(r.passes, 5);
}

static struct {
  int calls, id, n;
  long long inst;
  char names[4][32];
  double values[4];
} seen;

static void on_fail(int id, const char *text, long long inst, int n, const char *const *names,
                    const double *values, void *user) {
  (void)text;
  CHECK(user == &seen);
  seen.calls++;
  seen.id = id;
  seen.inst = inst;
  seen.n = n;
  for (int i = 0; i < n && i < 4; i++) {
    snprintf(seen.names[i], sizeof seen.names[i], "%s", names[i]);
    seen.values[i] = values[i];
  }
}

static void callback(void) {
  pia_assert_on_failure(on_fail, &seen);
  int id = make("MPICalls > 100 | rank > 5");
  for (int k = 0; k < 2; k++) {
    CHECK_EQ(pia_assert_begin(id), 0);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_EQ(pia_assert_end(id), 0);
  }
  pia_assert_on_failure(NULL, NULL);
  CHECK_EQ(pia_assert_begin(id), 0);
  CHECK_EQ(pia_assert_end(id), 0);
  CHECK_EQ(seen.calls, 2);
  CHECK_EQ(seen.id, id);
  CHECK_EQ(seen.inst, 2);
  CHECK_EQ(seen.n, 2);
  CHECK(strcmp(seen.names[0], "MPICalls") == 0);
  CHECK(strcmp(seen.names[1], "rank") == 0);
  CHECK_NEAR(seen.values[0], 2, 0);
  CHECK_NEAR(seen.values[1], rank, 0);
  pia_assert_result_t r;
  CHECK_EQ(pia_assert_result(id, &r), 0);
  CHECK_EQ(r.checks, 3);
  CHECK_EQ(r.passes, 0);
  CHECK_EQ(r.first_fail, 1);
}

int main(int argc, char **argv) {
  /* Created before MPI_Init: a whole-run assertion and one on a region that
   * never runs. */
  int run_ok, run_bad, never, region_ids[3];
  pia_assert_options_t o;
  pia_assert_options_init(&o);
  o.region = PIA_ASSERT_RUN;
  o.expr = "nprocs == 2 & calls(MPI_Send) == 3 * (rank == 0) & WallTime > 0.2 s";
  CHECK_EQ(pia_assert_create_ex(&o, &run_ok), 0);
  o.expr = "MPICalls < 5";
  CHECK_EQ(pia_assert_create_ex(&o, &run_bad), 0);
  o.region = "never_entered";
  o.expr = "WallTime < 1";
  CHECK_EQ(pia_assert_create_ex(&o, &never), 0);
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  p2p_counts();
  nested();
  waits();
  times();
  across_ranks();
  regions(region_ids);
  callback();
  MPI_Finalize();
  pia_assert_result_t r;
  CHECK_EQ(pia_assert_result(run_ok, &r), 0);
  CHECK_EQ(r.checks, 1);
  CHECK_EQ(r.passes, 1);
  CHECK_EQ(pia_assert_result(run_bad, &r), 0);
  CHECK_EQ(r.checks, 1);
  CHECK_EQ(r.passes, 0);
  CHECK_EQ(r.first_fail, 1);
  CHECK_EQ(pia_assert_result(never, &r), 0);
  CHECK_EQ(r.checks, 0);
  TEST_PASS("assert_metrics");
  return 0;
}
