/* The round trip of one cache line between two CPUs: what the state of a
 * virtual machine's vCPU placement is while a benchmark runs.
 *
 * Open MPI's shared-memory pipeline (the migration engine's batches of
 * parts, bench/README.md lb_migrate) hands every 32 KiB fragment from one
 * rank to the other through cache lines both touch, so its throughput
 * follows this round trip; a contiguous message copied by the kernel
 * (MPI_Alltoallv's single copy) hardly does. On the project's 2-core VM the
 * round trip alternates, for tens of seconds at a time, between about 55 ns
 * (the host runs both vCPUs on cores that share a cache) and about 330 ns
 * (it does not), and the batches' speed with it, 1.0 against 0.35 of
 * Alltoallv: the "two modes" of earlier notes. A figure measured in one
 * state is not comparable with one measured in the other; the migration
 * benchmarks print this round trip before and after their runs.
 *
 * Two threads, each pinned to one CPU, pass a flag back and forth; the
 * result is the lowest mean over BATCHES batches of ROUNDS round trips, so
 * a batch that shared its CPU with another process (a rank starting up or
 * spinning in MPI) does not count, as long as one batch ran alone.
 *
 * Usage (the tool): core_rtt [cpu_a cpu_b]; default: the first two CPUs
 * this process may run on.
 */
#define _GNU_SOURCE
#include "core_rtt.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

enum { ROUNDS = 2000, BATCHES = 40 };

typedef struct {
  _Alignas(64) atomic_int flag;
  int cpu;
} pp_t;

static int pin(int cpu) {
  cpu_set_t s;
  CPU_ZERO(&s);
  CPU_SET(cpu, &s);
  return pthread_setaffinity_np(pthread_self(), sizeof s, &s);
}

static void *echo(void *arg) {
  pp_t *p = arg;
  if (pin(p->cpu) != 0)
    return NULL;
  for (long i = 0; i < (long)ROUNDS * BATCHES; i++) {
    while (atomic_load_explicit(&p->flag, memory_order_acquire) != 1)
      ;
    atomic_store_explicit(&p->flag, 0, memory_order_release);
  }
  return NULL;
}

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

double bench_core_rtt_ns(int cpu_a, int cpu_b) {
  cpu_set_t mine;
  if (pthread_getaffinity_np(pthread_self(), sizeof mine, &mine) != 0)
    return -1;
  if (cpu_a < 0 || cpu_b < 0) {
    /* This process's first CPU (its binding, when the launcher bound it),
     * then the lowest other CPU. */
    cpu_a = cpu_b = -1;
    for (int c = 0; c < CPU_SETSIZE && cpu_a < 0; c++)
      if (CPU_ISSET(c, &mine))
        cpu_a = c;
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    for (int c = 0; c < ncpu && cpu_b < 0; c++)
      if (c != cpu_a)
        cpu_b = c;
  }
  if (cpu_a < 0 || cpu_b < 0 || cpu_a == cpu_b || pin(cpu_a) != 0) {
    pthread_setaffinity_np(pthread_self(), sizeof mine, &mine);
    return -1;
  }
  pp_t p = {.cpu = cpu_b};
  atomic_init(&p.flag, 0);
  pthread_t t;
  double best = -1;
  if (pthread_create(&t, NULL, echo, &p) == 0) {
    for (int b = 0; b < BATCHES; b++) {
      double t0 = now_ns();
      for (int i = 0; i < ROUNDS; i++) {
        atomic_store_explicit(&p.flag, 1, memory_order_release);
        while (atomic_load_explicit(&p.flag, memory_order_acquire) != 0)
          ;
      }
      double v = (now_ns() - t0) / ROUNDS;
      best = best < 0 || v < best ? v : best;
    }
    pthread_join(t, NULL);
  }
  pthread_setaffinity_np(pthread_self(), sizeof mine, &mine);
  return best;
}

int bench_core_rtt_here(void) {
  /* One process per node measures: the local rank 0 of Open MPI, MPICH or
   * Slurm, or a process started without a launcher. */
  static const char *const vars[] = {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID",
                                     "SLURM_LOCALID"};
  for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
    const char *v = getenv(vars[i]);
    if (v)
      return atoi(v) == 0;
  }
  return 1;
}

double bench_core_rtt_before(void) {
  return bench_core_rtt_here() ? bench_core_rtt_ns(-1, -1) : -1;
}

void bench_core_rtt_after(double before) {
  if (before >= 0)
    printf("# core-to-core round trip: %.0f ns before, %.0f ns after\n", before,
           bench_core_rtt_ns(-1, -1));
}

#ifdef BENCH_CORE_RTT_MAIN
int main(int argc, char **argv) {
  int a = argc > 2 ? atoi(argv[1]) : -1, b = argc > 2 ? atoi(argv[2]) : -1;
  double ns = bench_core_rtt_ns(a, b);
  if (ns < 0) {
    fprintf(stderr, "core_rtt: cannot pin two threads to two CPUs (%d, %d)\n", a, b);
    return 1;
  }
  printf("%.0f\n", ns);
  return 0;
}
#endif
