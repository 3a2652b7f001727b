/* Fixed work for the load-balancing tests: a busy loop on this thread's CPU
 * clock. The cost model caps a task's time by its CPU time, so on a shared
 * machine a loop on the wall clock would give a task whatever CPU time
 * preemption left it; this loop gives every task the same work. */
#ifndef BALLAST_TEST_CPU_SPIN_H
#define BALLAST_TEST_CPU_SPIN_H

#include <time.h>

static inline double cpu_spin_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static inline void cpu_spin(double seconds) {
  double end = cpu_spin_now() + seconds;
  while (cpu_spin_now() < end) {
  }
}

#endif
