/*
 * What a region and a wrapped MPI call cost in the hot path, for comparing
 * two builds (issue 30's distributions: within 5 ns of the build before).
 *
 * Method: one process (MPI singleton). Each round times one batch of BATCH
 * mon_region_begin/end pairs, one of BATCH MPI_Iprobe calls on an empty
 * queue and one of BATCH MPI_Comm_rank calls; the figure is the minimum
 * per-item time over ROUNDS rounds. The minimum, not the median: on a
 * machine shared with other work the median moves with the load by more
 * than the few ns compared, while the fastest batch is the one nothing
 * interrupted. Build it against each library and run the two alternately
 * (bench/README.md "dist_cost").
 *
 * usage: dist_cost [rounds (default 3000)]
 */
#include <stdio.h>
#include <stdlib.h>

#include <ballast.h>
#include "bench_util.h"

enum { BATCH = 1000 };

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rounds = argc > 1 ? atoi(argv[1]) : 3000;
  if (rounds < 1) {
    fprintf(stderr, "usage: %s [rounds >= 1]\n", argv[0]);
    MPI_Finalize();
    return 2;
  }
  double best[3] = {1e30, 1e30, 1e30};
  volatile int sink = 0;
  for (int r = 0; r < rounds; r++) {
    double t0 = bench_now();
    for (int i = 0; i < BATCH; i++) {
      mon_region_begin("pair");
      mon_region_end("pair");
    }
    double t1 = bench_now();
    for (int i = 0; i < BATCH; i++) {
      int flag;
      MPI_Status st;
      MPI_Iprobe(MPI_ANY_SOURCE, 12345, MPI_COMM_SELF, &flag, &st);
      sink += flag;
    }
    double t2 = bench_now();
    for (int i = 0; i < BATCH; i++) {
      int x;
      MPI_Comm_rank(MPI_COMM_WORLD, &x);
      sink += x;
    }
    double t3 = bench_now();
    double t[3] = {t1 - t0, t2 - t1, t3 - t2};
    for (int k = 0; k < 3; k++)
      if (t[k] / BATCH * 1e9 < best[k])
        best[k] = t[k] / BATCH * 1e9;
  }
  printf("region_pair_ns %.2f\niprobe_ns %.2f\ncomm_rank_ns %.2f\n", best[0], best[1], best[2]);
  MPI_Finalize();
  return 0;
}
