/*
 * Benchmark 1 of seed section 4.2.4: the time to find a random region by name
 * and read its data (pia_region_find + pia_region_data), as the
 * number of regions grows from 100 to 1,000,000.
 *
 * Method: one process (MPI singleton). Regions "r0000000" ... are created as
 * children of the whole-program region with mon_region_begin/end, up to each
 * size in turn. For each size, a fixed array of 2^16 random region indices
 * (xorshift, fixed seed, uniform over the regions that exist) is prepared
 * outside the timed loop; a timed batch does, for BATCH consecutive indices,
 * one lookup by name and one read of the region's data, and sums a field so
 * nothing is optimised away. Each size runs REPS batches (walking through
 * the index array); the median of the per-query batch means is printed.
 * The lookup alone and the read alone are timed on other batches of the
 * index array (each column starts from caches the previous one did not
 * warm for it). Short batches and the median keep preemption (the VM is
 * shared) out of the figure. Every lookup is timed warm: each name was
 * looked up once before (the per-thread cache of pia_region_find
 * holds it), which is the steady state of a program that queries its
 * regions every time step.
 *
 * A last column is the machine's own yardstick, measured in the same run:
 * the time of one dependent random read (a pointer chase) in a buffer of
 * 64 bytes per region, i.e. one cache miss at the size of the tables a
 * query touches. Above the last-level cache no by-name lookup can be
 * cheaper than one such miss (the region's data must be read), so the ratio
 * of the first column to this one shows what the lookup adds, and whether
 * that stays flat as regions grow.
 *
 * First line: "pair NS", the median time of a mon_region_begin/end pair.
 *
 * usage: bench_pia_region [max_regions (default 1000000)] [reps (default 201)]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ballast.h>
#include "bench_util.h"

enum { NQ = 1 << 16, BATCH = 2048, NAMELEN = 16 };

static uint64_t rng = 88172645463325252ull;

/* ns per dependent random read in a buffer of n cache lines (one random
 * cyclic permutation, so the chase visits every line before repeating). */
static double chase_ns(long n, int reps) {
  enum { LINE = 64 };
  char *buf = malloc((size_t)n * LINE);
  long *perm = malloc(sizeof(long) * (size_t)n);
  if (!buf || !perm) {
    free(buf);
    free(perm);
    return -1.0;
  }
  for (long i = 0; i < n; i++)
    perm[i] = i;
  for (long i = n - 1; i > 0; i--) {
    long j = (long)(bench_xorshift(&rng) % (uint64_t)(i + 1)), t = perm[i];
    perm[i] = perm[j];
    perm[j] = t;
  }
  for (long i = 0; i < n; i++)
    *(long *)(buf + perm[i] * LINE) = perm[(i + 1) % n] * LINE;
  double *t = malloc(sizeof(double) * (size_t)reps), r = -1.0;
  if (t) {
    long p = 0;
    for (int k = 0; k < reps; k++) {
      double t0 = bench_now();
      for (int i = 0; i < BATCH; i++)
        p = *(volatile long *)(buf + p);
      t[k] = (bench_now() - t0) / BATCH * 1e9;
    }
    r = bench_median(t, reps);
    if (p == -1)
      r = 0.0; /* never: keeps the chase from being optimised out */
  }
  free(t);
  free(buf);
  free(perm);
  return r;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  long max = argc > 1 ? atol(argv[1]) : 1000000;
  int reps = argc > 2 ? atoi(argv[2]) : 201;
  if (max < 100 || reps < 1) {
    fprintf(stderr, "usage: %s [max_regions >= 100] [reps >= 1]\n", argv[0]);
    MPI_Finalize();
    return 2;
  }
  static const long sizes[] = {100, 1000, 2000, 4000, 8000, 20000, 50000,
                               100000, 200000, 500000, 1000000};
  char (*names)[NAMELEN] = malloc(sizeof(*names) * (size_t)max);
  int *ids = malloc(sizeof(int) * (size_t)max);
  int *q = malloc(sizeof(int) * NQ);
  double *t_both = malloc(sizeof(double) * reps), *t_find = malloc(sizeof(double) * reps),
         *t_read = malloc(sizeof(double) * reps);
  if (!names || !ids || !q || !t_both || !t_find || !t_read)
    return 1;
  /* The cost of a region: a begin + end pair of one region, batches of
   * BATCH, median (issue 30's target: within 5 ns of the build before the
   * distributions; run with BALLAST_REGION_CPU=0 to leave the CPU clock's
   * system call out). Printed as "pair NS" for compare_builds.sh. */
  for (int r = 0; r < reps; r++) {
    double t0 = bench_now();
    for (int i = 0; i < BATCH; i++) {
      mon_region_begin("pair");
      mon_region_end("pair");
    }
    t_both[r] = (bench_now() - t0) / BATCH * 1e9;
  }
  printf("pair %.2f\n", bench_median(t_both, reps));
  printf("# pia_region: find a random region by name + read its data\n");
  printf("# %8s %14s %14s %14s %14s %8s\n", "regions", "find+read ns", "find ns",
         "read ns", "1 miss ns", "ratio");
  long have = 0;
  volatile double sink = 0;
  for (size_t si = 0; si < sizeof sizes / sizeof *sizes && sizes[si] <= max; si++) {
    long n = sizes[si];
    for (; have < n; have++) {
      snprintf(names[have], NAMELEN, "r%07ld", have);
      mon_region_begin(names[have]);
      mon_region_end(names[have]);
      ids[have] = pia_region_find(names[have]);
      if (ids[have] < 0) {
        fprintf(stderr, "region %s: %s\n", names[have], ballast_strerror(ids[have]));
        return 1;
      }
    }
    for (int i = 0; i < NQ; i++)
      q[i] = (int)(bench_xorshift(&rng) % (uint64_t)n);
    volatile double warm = 0;
    for (long i = 0; i < n; i++) /* every name looked up once: warm caches */
      warm += pia_region_find(names[i]);
    for (int r = 0; r < reps; r++) {
      pia_regdata_t d;
      enum { NB = NQ / BATCH };
      const int *qb = q + (size_t)(r % NB) * BATCH;
      double s = 0, t0 = bench_now();
      for (int i = 0; i < BATCH; i++) {
        pia_regid_t id = pia_region_find(names[qb[i]]);
        pia_region_data(id, &d);
        s += d.count;
      }
      double t1 = bench_now();
      qb = q + (size_t)((r + NB / 3) % NB) * BATCH;
      for (int i = 0; i < BATCH; i++)
        s += pia_region_find(names[qb[i]]);
      double t2 = bench_now();
      qb = q + (size_t)((r + 2 * NB / 3) % NB) * BATCH;
      for (int i = 0; i < BATCH; i++) {
        pia_region_data(ids[qb[i]], &d);
        s += d.wtime;
      }
      double t3 = bench_now();
      sink += s;
      t_both[r] = (t1 - t0) / BATCH * 1e9;
      t_find[r] = (t2 - t1) / BATCH * 1e9;
      t_read[r] = (t3 - t2) / BATCH * 1e9;
    }
    double both = bench_median(t_both, reps), miss = chase_ns(n, reps);
    printf("  %8ld %14.1f %14.1f %14.1f %14.1f %8.2f\n", n, both, bench_median(t_find, reps),
           bench_median(t_read, reps), miss, miss > 0 ? both / miss : 0.0);
    fflush(stdout);
  }
  free(names);
  free(ids);
  free(q);
  free(t_both);
  free(t_find);
  free(t_read);
  MPI_Finalize();
  return 0;
}
