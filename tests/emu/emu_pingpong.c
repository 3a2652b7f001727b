/* Ping-pong between ranks on the same emulated node and on different
 * emulated nodes (tools/emucluster), launched by emu_run.sh. Rank 0 plays
 * against the first other rank on its host (intra-node: shared memory) and
 * against the first rank on another host (inter-node: TCP over the veths
 * and the bridge, possibly shaped by tc tbf). Prints the median round trip
 * and bandwidth of large messages and the latency of small ones.
 *
 * usage: emu_pingpong BYTES REPS MIN_RATIO
 * With MIN_RATIO > 0 it checks that the inter-node round trip of BYTES is at
 * least MIN_RATIO times the intra-node one: an emulation-correctness check
 * (a shaped link must be slower than shared memory), with a margin the
 * caller keeps large; 0 only reports. */
#include <time.h>
#include <unistd.h>

#include "test_util.h"

enum { HOST_LEN = 64, SMALL = 8, SMALL_REPS = 100, MAX_REPS = 100 };

static int cmp_dbl(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* A barrier that sleeps while it waits: the ranks not playing in a phase
 * must leave the (two) cores to the ones that do, or the intra-node figures
 * measure the scheduler. */
static void lazy_barrier(void) {
  MPI_Request req;
  int done = 0;
  const struct timespec nap = {0, 200000};
  CHECK_EQ(MPI_Ibarrier(MPI_COMM_WORLD, &req), MPI_SUCCESS);
  while (!done) {
    CHECK_EQ(MPI_Test(&req, &done, MPI_STATUS_IGNORE), MPI_SUCCESS);
    if (!done)
      nanosleep(&nap, NULL);
  }
}

/* Median round-trip time (s) of `reps` ping-pongs of `bytes` between rank 0
 * and `peer`, after one warm-up; only rank 0 gets a meaningful value. */
static double pingpong(int rank, int peer, char *buf, int bytes, int reps) {
  double t[MAX_REPS + 1];
  for (int r = 0; r <= reps; r++) {
    double t0 = MPI_Wtime();
    if (rank == 0) {
      CHECK_EQ(MPI_Send(buf, bytes, MPI_CHAR, peer, 1, MPI_COMM_WORLD),
               MPI_SUCCESS);
      CHECK_EQ(MPI_Recv(buf, bytes, MPI_CHAR, peer, 2, MPI_COMM_WORLD,
                        MPI_STATUS_IGNORE), MPI_SUCCESS);
    } else if (rank == peer) {
      CHECK_EQ(MPI_Recv(buf, bytes, MPI_CHAR, 0, 1, MPI_COMM_WORLD,
                        MPI_STATUS_IGNORE), MPI_SUCCESS);
      CHECK_EQ(MPI_Send(buf, bytes, MPI_CHAR, 0, 2, MPI_COMM_WORLD),
               MPI_SUCCESS);
    }
    t[r] = MPI_Wtime() - t0;
  }
  qsort(t + 1, (size_t)reps, sizeof(double), cmp_dbl);
  return t[1 + reps / 2];
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = -1, size = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK_EQ(argc, 4);
  int bytes = atoi(argv[1]), reps = atoi(argv[2]);
  double min_ratio = atof(argv[3]);
  CHECK_GT(bytes, 0);
  CHECK(reps >= 1 && reps <= MAX_REPS);
  CHECK_GE(size, 3);

  char me[HOST_LEN] = {0};
  CHECK_EQ(gethostname(me, sizeof me - 1), 0);
  char *all = calloc((size_t)size, HOST_LEN);
  CHECK(all != NULL);
  MPI_Allgather(me, HOST_LEN, MPI_CHAR, all, HOST_LEN, MPI_CHAR,
                MPI_COMM_WORLD);
  int intra = -1, inter = -1;
  for (int r = 1; r < size; r++) {
    int same = strcmp(all + (size_t)r * HOST_LEN, all) == 0;
    if (same && intra < 0)
      intra = r;
    if (!same && inter < 0)
      inter = r;
  }
  CHECK(intra > 0 && inter > 0);

  char *buf = malloc((size_t)bytes);
  CHECK(buf != NULL);
  memset(buf, rank, (size_t)bytes);
  double big_intra = pingpong(rank, intra, buf, bytes, reps);
  lazy_barrier();
  double big_inter = pingpong(rank, inter, buf, bytes, reps);
  lazy_barrier();
  double lat_intra = pingpong(rank, intra, buf, SMALL, SMALL_REPS);
  lazy_barrier();
  double lat_inter = pingpong(rank, inter, buf, SMALL, SMALL_REPS);
  lazy_barrier();

  if (rank == 0) {
    const char *hi = all + (size_t)intra * HOST_LEN;
    const char *ho = all + (size_t)inter * HOST_LEN;
    double ratio = big_inter / big_intra;
    printf("ping-pong %d B, median of %d round trips:\n", bytes, reps);
    printf("  intra-node %s<->%s: %9.3f ms  %9.1f MB/s\n", me, hi,
           big_intra * 1e3, 2.0 * bytes / big_intra / 1e6);
    printf("  inter-node %s<->%s: %9.3f ms  %9.1f MB/s\n", me, ho,
           big_inter * 1e3, 2.0 * bytes / big_inter / 1e6);
    printf("  inter/intra round-trip time ratio: %.2f\n", ratio);
    printf("latency %d B (half round trip, median): intra %.1f us, "
           "inter %.1f us\n", SMALL, lat_intra / 2 * 1e6,
           lat_inter / 2 * 1e6);
    CHECK(strcmp(hi, me) == 0);
    CHECK(strcmp(ho, me) != 0);
    CHECK(big_intra > 0.0);
    if (min_ratio > 0) {
      if (ratio < min_ratio)
        fprintf(stderr, "inter-node ping-pong only %.2f x slower than "
                "intra-node (want >= %.2f)\n", ratio, min_ratio);
      CHECK(ratio >= min_ratio);
    }
    printf("PASS\n");
  }
  free(buf);
  free(all);
  MPI_Finalize();
  return 0;
}
