/* Cost that mon's PMPI wrappers add to an MPI call.
 *
 * The same source is built twice: mon_overhead_plain (MPI only) and
 * mon_overhead_wrapped (linked to libballast, whose MPI_* wrap PMPI_*).
 * run.py runs both, alternately, and prints the difference of the medians.
 *
 * Each measurement times batches of calls with CLOCK_MONOTONIC and keeps the
 * per-call time of every batch; the median over the batches is printed, so a
 * preempted batch (2 cores, oversubscribed) does not move the figure.
 *   comm_rank : MPI_Comm_rank(MPI_COMM_WORLD), a cheap local wrapped call
 *   iprobe    : MPI_Iprobe on an empty queue (local, wrapped, with a status)
 *   pingpong  : 8-byte MPI_Send/MPI_Recv round trip between ranks 0 and 1;
 *               the figure is per round trip (2 wrapped calls per rank)
 * Output (rank 0): "<variant> <test> median_ns <x> batches <n> calls_per_batch <k>"
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  const char *variant = argc > 1 ? argv[1] : "?";
  int batches = argc > 2 ? atoi(argv[2]) : 2001;
  int rank, size;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &size);
  double *t = malloc((size_t)batches * sizeof *t);
  if (t == NULL || batches < 1)
    MPI_Abort(MPI_COMM_WORLD, 1);

  /* local calls: each rank on its own, rank 0 reports */
  const int k = 1000;
  int sink = 0;
  for (int b = -batches / 10; b < batches; b++) { /* warm-up batches first */
    double t0 = now_ns();
    for (int i = 0; i < k; i++) {
      int r;
      MPI_Comm_rank(MPI_COMM_WORLD, &r);
      sink += r;
    }
    if (b >= 0)
      t[b] = (now_ns() - t0) / k;
  }
  if (rank == 0)
    printf("%s comm_rank median_ns %.2f batches %d calls_per_batch %d\n", variant,
           median(t, batches), batches, k);

  for (int b = -batches / 10; b < batches; b++) {
    double t0 = now_ns();
    for (int i = 0; i < k; i++) {
      int flag;
      MPI_Status st;
      MPI_Iprobe(MPI_ANY_SOURCE, 12345, MPI_COMM_SELF, &flag, &st);
      sink += flag;
    }
    if (b >= 0)
      t[b] = (now_ns() - t0) / k;
  }
  if (rank == 0)
    printf("%s iprobe median_ns %.2f batches %d calls_per_batch %d\n", variant,
           median(t, batches), batches, k);

  PMPI_Barrier(MPI_COMM_WORLD);
  if (size >= 2 && rank < 2) {
    const int kp = 100;
    char buf[8] = {0};
    int peer = 1 - rank;
    for (int b = -batches / 10; b < batches; b++) {
      double t0 = now_ns();
      for (int i = 0; i < kp; i++) {
        if (rank == 0) {
          MPI_Send(buf, 8, MPI_CHAR, peer, 0, MPI_COMM_WORLD);
          MPI_Recv(buf, 8, MPI_CHAR, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
          MPI_Recv(buf, 8, MPI_CHAR, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          MPI_Send(buf, 8, MPI_CHAR, peer, 0, MPI_COMM_WORLD);
        }
      }
      if (b >= 0)
        t[b] = (now_ns() - t0) / kp;
    }
    if (rank == 0)
      printf("%s pingpong median_ns %.2f batches %d calls_per_batch %d\n", variant,
             median(t, batches), batches, kp);
  }
  free(t);
  if (sink == -1)
    printf("unreachable\n");
  MPI_Finalize();
  return 0;
}
