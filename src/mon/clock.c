/*
 * mon's clock. Ticks come from the invariant TSC (rdtsc, about 11 ns here)
 * when /proc/cpuinfo reports both constant_tsc and nonstop_tsc, calibrated
 * once against CLOCK_MONOTONIC; otherwise from clock_gettime(CLOCK_MONOTONIC)
 * in nanoseconds. The choice is made once, before the first tick is taken,
 * so ticks of one process are always comparable.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common/common_internal.h"
#include "mon/mon_core.h"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define MON_HAVE_RDTSC 1
#else
#define MON_HAVE_RDTSC 0
#endif

static pthread_once_t clock_once = PTHREAD_ONCE_INIT;
static int clock_tsc;          /* 1: rdtsc; 0: CLOCK_MONOTONIC ns */
static int clock_ready;        /* atomic: set once the choice is made */
static double clock_sec_per_tick = 1e-9;
static uint64_t anchor_ticks, anchor_ns; /* one moment on both clocks (TSC only) */
uint64_t mon__ns_mult = 1ull << 32;   /* ns per tick, 32.32 fixed point */

static uint64_t mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Both flags must be present: constant rate and counting in deep C-states. */
static int cpu_has_invariant_tsc(void) {
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (!f)
    return 0;
  char line[4096];
  int found = 0;
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, "flags", 5) != 0)
      continue;
    found = strstr(line, " constant_tsc") && strstr(line, " nonstop_tsc");
    break;
  }
  fclose(f);
  return found;
}

#if MON_HAVE_RDTSC
/* Ticks per second measured over ~20 ms against CLOCK_MONOTONIC. */
static double calibrate_tsc(void) {
  uint64_t n0 = mono_ns(), c0 = __rdtsc();
  struct timespec nap = {0, 20 * 1000 * 1000};
  nanosleep(&nap, NULL);
  uint64_t n1 = mono_ns(), c1 = __rdtsc();
  if (n1 <= n0 || c1 <= c0)
    return 0.0;
  return (double)(c1 - c0) / ((double)(n1 - n0) * 1e-9);
}
#endif

static void clock_choose(void) {
#if MON_HAVE_RDTSC
  if (cpu_has_invariant_tsc()) {
    double hz = calibrate_tsc();
    if (hz > 1e6) {
      clock_tsc = 1;
      clock_sec_per_tick = 1.0 / hz;
      mon__ns_mult = (uint64_t)(1e9 / hz * 4294967296.0 + 0.5);
      anchor_ns = mono_ns();
      anchor_ticks = __rdtsc();
    }
  }
#endif
  __atomic_store_n(&clock_ready, 1, __ATOMIC_RELEASE);
}

void mon__clock_init(void) { pthread_once(&clock_once, clock_choose); }

int mon__clock_is_tsc(void) {
  mon__clock_init();
  return clock_tsc;
}

uint64_t mon__ticks(void) {
  if (__builtin_expect(!__atomic_load_n(&clock_ready, __ATOMIC_ACQUIRE), 0))
    mon__clock_init();
#if MON_HAVE_RDTSC
  if (clock_tsc)
    return __rdtsc();
#endif
  return mono_ns();
}

/* The tools interface's clock: CLOCK_MONOTONIC's time base, read from the
 * TSC where ticks come from it (anchored at calibration; signed, since a
 * thread may read the TSC just before the anchor). */
uint64_t mon__ticks_ns(uint64_t ticks) {
  if (!clock_tsc)
    return ticks;
  double d = (double)(int64_t)(ticks - anchor_ticks) * clock_sec_per_tick * 1e9;
  return anchor_ns + (uint64_t)(int64_t)d;
}

uint64_t mon__now_ns(void) { return mon__ticks_ns(mon__ticks()); }

double mon__tick_seconds(void) {
  mon__clock_init();
  return clock_sec_per_tick;
}

uint64_t mon__thread_cpu_ns(void) {
  struct timespec ts;
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0)
    return 0;
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t mon__process_cpu_ns(void) {
  struct timespec ts;
  if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0)
    return 0;
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
