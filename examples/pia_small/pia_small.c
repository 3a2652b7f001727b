/*
 * ballast-pia-small: a program that reads its own performance data while it
 * runs, through the Performance Introspection API (ballast/pia.h).
 *
 *   solve                 (once)
 *   └── step              (once per step)
 *       ├── exchange      MPI_Sendrecv of BYTES bytes around a ring
 *       └── compute       local arithmetic and one MPI_Allreduce
 *
 * Halfway through and at the end it reads a region's time and count, an MPI
 * call's calls and bytes inside a region, and the bytes sent to each partner,
 * and checks them against what it did: the figures are exact, not estimates.
 * Exit status 1 when one disagrees.
 *
 * Usage: mpiexec -n 2 ballast-pia-small [steps (40)]
 */
#include <ballast.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { BYTES = 4096 };

static int failures;

/* A check prints the expression and both values, so a failure says what differed. */
static void expect_eq(const char *what, long long got, long long want, int rank) {
  if (got != want) {
    fprintf(stderr, "rank %d: %s is %lld, expected %lld\n", rank, what, got, want);
    failures++;
  }
}

/* Reads and prints what PIA knows after `steps` steps, checking it. */
static void introspect(int steps, int rank, int size) {
  pia_regdata_t step;
  pia_actdata_t sr;
  pia_regid_t step_id = pia_region_find_by_path("solve/step");
  pia_regid_t exch_id = pia_region_find_by_path("solve/step/exchange");
  pia_act_t sendrecv = pia_activity_find("MPI_Sendrecv");
  if (step_id < 0 || exch_id < 0 || sendrecv < 0 || pia_region_data(step_id, &step) ||
      (pia_actdata_init(&sr), pia_region_activity_data(exch_id, sendrecv, &sr))) {
    fprintf(stderr, "rank %d: a region or MPI_Sendrecv is unknown to PIA\n", rank);
    failures++;
    return;
  }
  /* Partners are ranks of MPI_COMM_WORLD; this ring runs on it. */
  pia_partnerdata_t *peer = calloc((size_t)size, sizeof *peer);
  int right = (rank + 1) % size, left = (rank + size - 1) % size;
  if (!peer || pia_partner_volumes(size, PIA_REGION_ALL, peer)) {
    fprintf(stderr, "rank %d: no partner volumes\n", rank);
    failures++;
    free(peer);
    return;
  }
  if (rank == 0) {
    printf("after %d steps: region solve/step %lld times, %.4f s (%.4f s in MPI)\n", steps,
           step.count64, step.wtime, step.mtime);
    printf("  MPI_Sendrecv in solve/step/exchange: %lld calls, %lld bytes; "
           "%lld bytes sent to rank %d, %lld received from rank %d\n",
           sr.ncalls, sr.nbytes, peer[right].nbytes, right, peer[left].rbytes, left);
  }
  expect_eq("step's count", step.count64, steps, rank);
  expect_eq("MPI_Sendrecv's calls in exchange", sr.ncalls, steps, rank);
  /* A Sendrecv's bytes are both halves: the message sent and the one received. */
  expect_eq("MPI_Sendrecv's bytes in exchange", sr.nbytes, 2LL * BYTES * steps, rank);
  expect_eq("bytes sent to the right", peer[right].nbytes, (long long)BYTES * steps, rank);
  expect_eq("bytes received from the left", peer[left].rbytes, (long long)BYTES * steps, rank);
  if (!(step.mtime <= step.wtime))
    expect_eq("step's MPI time above its wall time", 1, 0, rank);
  free(peer);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int steps = argc > 1 ? atoi(argv[1]) : 40;
  if (steps < 2) steps = 2;
  static char sbuf[BYTES], rbuf[BYTES];
  int right = (rank + 1) % size, left = (rank + size - 1) % size;
  double x = rank;

  mon_region_begin("solve");
  for (int s = 1; s <= steps; s++) {
    mon_region_begin("step");
    mon_region_begin("exchange");
    MPI_Sendrecv(sbuf, BYTES, MPI_BYTE, right, 0, rbuf, BYTES, MPI_BYTE, left, 0,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    mon_region_end("exchange");
    mon_region_begin("compute");
    for (int i = 0; i < 100000; i++) x = x * 0.999999 + rbuf[i % BYTES] * 1e-6;
    MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    mon_region_end("compute");
    mon_region_end("step");
    /* While it runs: the data so far, read between steps (a step still open
     * would not count yet). */
    if (s == steps / 2 || s == steps) introspect(s, rank, size);
  }
  mon_region_end("solve");

  int all = 0;
  MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("pia_small: %d ranks, %s\n", size, all ? "FAILED" : "all figures agree");
  MPI_Finalize();
  return all ? 1 : 0;
}
