/* Cost that mon's PMPI wrappers add to an MPI call.
 *
 * The same source is built twice: mon_overhead_plain (MPI only) and
 * mon_overhead_wrapped (linked to libballast, whose MPI_* wrap PMPI_*).
 * Two comparisons, both printed by run.py:
 *  - across binaries: the median of the wrapped binary minus the median of
 *    the plain one (run alternately, several rounds);
 *  - within one process (robust to machine load): batches calling MPI_X
 *    alternate with batches calling PMPI_X, the unwrapped entry point, and
 *    the median of the paired differences is the added cost. In the plain
 *    binary the same pairing measures nothing (MPI_X is PMPI_X) and serves as
 *    the control.
 *
 * Each batch is timed with CLOCK_MONOTONIC; a per-call time per batch is
 * kept and the median over batches reported, so a preempted batch (2 cores,
 * oversubscribed) does not move the figure.
 *   comm_rank : MPI_Comm_rank(MPI_COMM_WORLD), a cheap local wrapped call
 *   iprobe    : MPI_Iprobe on an empty queue (local, wrapped, with a status)
 *   pingpong  : 8-byte MPI_Send/MPI_Recv round trip between ranks 0 and 1,
 *               per round trip (2 wrapped calls per rank)
 * Output (rank 0), one line per test:
 *   <variant> <test> mpi_ns <median> pmpi_ns <median> paired_added_ns <median>
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"

typedef struct {
  int (*comm_rank)(MPI_Comm, int *);
  int (*iprobe)(int, int, MPI_Comm, int *, MPI_Status *);
  int (*send)(const void *, int, MPI_Datatype, int, int, MPI_Comm);
  int (*recv)(void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Status *);
} entry_t;

static const entry_t wrapped = {MPI_Comm_rank, MPI_Iprobe, MPI_Send, MPI_Recv};
static const entry_t direct = {PMPI_Comm_rank, PMPI_Iprobe, PMPI_Send, PMPI_Recv};

static int rank, size, sink;

/* One batch of test `which` through entry points e; per-call ns. */
static double batch(int which, const entry_t *e) {
  double t0 = bench_now_ns();
  int k = 0;
  if (which == 0) {
    for (k = 0; k < 1000; k++) {
      int r;
      e->comm_rank(MPI_COMM_WORLD, &r);
      sink += r;
    }
  } else if (which == 1) {
    for (k = 0; k < 1000; k++) {
      int flag;
      MPI_Status st;
      e->iprobe(MPI_ANY_SOURCE, 12345, MPI_COMM_SELF, &flag, &st);
      sink += flag;
    }
  } else {
    char buf[8] = {0};
    int peer = 1 - rank;
    for (k = 0; k < 100; k++) {
      if (rank == 0) {
        e->send(buf, 8, MPI_CHAR, peer, 0, MPI_COMM_WORLD);
        e->recv(buf, 8, MPI_CHAR, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else {
        e->recv(buf, 8, MPI_CHAR, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        e->send(buf, 8, MPI_CHAR, peer, 0, MPI_COMM_WORLD);
      }
    }
  }
  return (bench_now_ns() - t0) / k;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  const char *variant = argc > 1 ? argv[1] : "?";
  int batches = argc > 2 ? atoi(argv[2]) : 2001;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &size);
  double *tw = malloc((size_t)batches * sizeof *tw);
  double *tp = malloc((size_t)batches * sizeof *tp);
  double *td = malloc((size_t)batches * sizeof *td);
  if (tw == NULL || tp == NULL || td == NULL || batches < 1 || size < 2)
    PMPI_Abort(MPI_COMM_WORLD, 1);
  static const char *names[] = {"comm_rank", "iprobe", "pingpong"};
  for (int which = 0; which < 3; which++) {
    PMPI_Barrier(MPI_COMM_WORLD);
    if (which == 2 && rank >= 2)
      continue;
    for (int b = -batches / 10; b < batches; b++) { /* warm-up batches first */
      /* alternate which of the pair goes first, against drift */
      double w, p;
      if (b % 2) {
        w = batch(which, &wrapped);
        p = batch(which, &direct);
      } else {
        p = batch(which, &direct);
        w = batch(which, &wrapped);
      }
      if (b >= 0) {
        tw[b] = w;
        tp[b] = p;
        td[b] = w - p;
      }
    }
    if (rank == 0)
      printf("%s %s mpi_ns %.2f pmpi_ns %.2f paired_added_ns %.2f batches %d\n", variant,
             names[which], bench_median(tw, batches), bench_median(tp, batches),
             bench_median(td, batches), batches);
    fflush(stdout);
  }
  free(tw);
  free(tp);
  free(td);
  if (sink == -1)
    printf("unreachable\n");
  MPI_Finalize();
  return 0;
}
