/* Helpers shared by the benchmarks: a monotonic clock, the median of a
 * sample and a small deterministic generator. Header only (static inline),
 * so each benchmark stays one source file; bench/CMakeLists.txt puts bench/
 * on every benchmark's include path. */
#ifndef BALLAST_BENCH_UTIL_H
#define BALLAST_BENCH_UTIL_H

#include <stdint.h>
#include <stdlib.h>
#include <time.h>

/* Seconds on CLOCK_MONOTONIC (not MPI_Wtime: some benchmarks time code that
 * runs before MPI_Init or without MPI). */
static inline double bench_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

/* Nanoseconds on CLOCK_MONOTONIC, summed in nanoseconds so that differences
 * of a few ns keep their precision. */
static inline double bench_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static inline int bench_cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The median of v[0..n) (the mean of the two middle values when n is even).
 * Sorts v in place. */
static inline double bench_median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, bench_cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Marsaglia's xorshift64 (13, 7, 17) on the caller's state, which must not
 * be 0: each benchmark seeds its own stream, so its draws never depend on
 * another's. */
static inline uint64_t bench_xorshift(uint64_t *state) {
  uint64_t x = *state;
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  return *state = x;
}

#endif
