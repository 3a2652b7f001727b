/*
 * bench_assert_eval: what one performance assertion costs.
 *
 *  eval   : one evaluation of a compiled assertion (the postfix program over
 *           its inputs, values already read): the "< 100 ns" figure.
 *           Two typical assertions, 10^6 evaluations per sample, median of
 *           7 samples, in ns per evaluation.
 *  scope  : one in-code scope, pia_assert_begin + pia_assert_end, with the
 *           metric reads at both ends and the check: an assertion on the
 *           wall time only, one on one MPI call's figures, one on MPITime
 *           (the MPI_ALL group: a sum over every monitored call), in ns per
 *           scope (10^5 per sample, median of 7).
 * Times are the thread's CPU time (CLOCK_THREAD_CPUTIME_ID), so a loaded
 * machine that deschedules the benchmark does not inflate them.
 *
 * Linked statically to reach the compiled form (src/assert). One rank.
 * usage: bench_assert_eval [samples (default 7)]
 */
#include <stdio.h>
#include <stdlib.h>

#include <ballast.h>

#include <time.h>

#include "assert/assert_internal.h"
#include "bench_util.h"

/* The thread's CPU time: time the thread was descheduled on a loaded
 * machine does not count (wall-clock medians are printed too). */
static double cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return 1e9 * (double)ts.tv_sec + (double)ts.tv_nsec;
}

static double eval_ns(const char *expr, int samples) {
  pa_prog_t p;
  char msg[512];
  if (assert__compile(expr, &p, msg, sizeof msg) != 0) {
    fprintf(stderr, "%s\n", msg);
    exit(1);
  }
  double vals[PA_MAX_INPUTS] = {0};
  double *t = malloc((size_t)samples * sizeof *t);
  const int n = 1000000;
  volatile int sink = 0;
  for (int s = 0; s < samples; s++) {
    double t0 = cpu_ns();
    for (int i = 0; i < n; i++) {
      for (int k = 0; k < p.nin; k++)
        vals[k] = 1e-3 * (double)(i & 1023) + k; /* values change every time */
      sink += assert__eval(&p, vals);
    }
    t[s] = (cpu_ns() - t0) / n;
  }
  /* The loop that writes the inputs, alone, to subtract. */
  double *b = malloc((size_t)samples * sizeof *b);
  for (int s = 0; s < samples; s++) {
    double t0 = cpu_ns();
    for (int i = 0; i < n; i++) {
      for (int k = 0; k < p.nin; k++)
        vals[k] = 1e-3 * (double)(i & 1023) + k;
      __asm__ volatile("" : : "r"(vals) : "memory");
    }
    b[s] = (cpu_ns() - t0) / n;
  }
  double r = bench_median(t, samples) - bench_median(b, samples);
  (void)sink;
  free(t);
  free(b);
  assert__prog_free(&p);
  return r;
}

static double scope_ns(const char *expr, int samples) {
  int id;
  if (pia_assert_create(expr, &id) != 0)
    exit(1);
  double *t = malloc((size_t)samples * sizeof *t);
  const int n = 100000;
  for (int s = 0; s < samples; s++) {
    double t0 = cpu_ns();
    for (int i = 0; i < n; i++) {
      pia_assert_begin(id);
      pia_assert_end(id);
    }
    t[s] = (cpu_ns() - t0) / n;
  }
  double r = bench_median(t, samples);
  free(t);
  return r;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int samples = argc > 1 ? atoi(argv[1]) : 7;
  if (samples < 1)
    samples = 7;
  const char *evals[] = {"MPITime / WallTime < 0.15 & WallTime < 10 ms",
                         "max(time(MPI_Send), time(MPI_Recv)) / WallTime < 0.2 -> "
                         "MPICalls > 0 & bytes(MPI_Send) < 2 MiB"};
  for (int i = 0; i < 2; i++)
    printf("eval  %8.1f ns  %s\n", eval_ns(evals[i], samples), evals[i]);
  const char *scopes[] = {"WallTime < 10 ms", "calls(MPI_Send) < 5 & WallTime < 1 s",
                          "MPITime / WallTime < 0.5"};
  for (int i = 0; i < 3; i++)
    printf("scope %8.1f ns  %s\n", scope_ns(scopes[i], samples), scopes[i]);
  MPI_Finalize();
  return 0;
}
