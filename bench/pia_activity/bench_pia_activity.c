/*
 * Benchmark 2 of seed section 4.2.4: the time to read the activity data of
 * MPI_Send (pia_actdata_init + pia_activity_data) after 10 million
 * recorded MPI events, as the number of unique signatures grows.
 *
 * Method: one process (MPI singleton). Events are recorded through
 * mon__record(), the function every generated wrapper calls (mon__enter /
 * mon__record / mon__leave, exactly the wrapper's sequence minus the PMPI
 * call): real MPI calls cost ~1 us each, so 10^7 of them per point would take
 * minutes. Each event is one of MPI_Send, MPI_Recv, MPI_Isend, MPI_Bcast
 * (random), with a byte count drawn from U distinct values, so the signature
 * table (activity x region x partner x bytes) holds about 4U signatures. For
 * each U in 1, 10, ..., 10^6, 10^7 more events are recorded (the table only
 * grows: the point for U holds the signatures of all smaller U too, at most
 * 4(U + U/10 + ...) ~ 4.4U), then REPS timed loops of 2^16 reads each; the
 * median of the per-read means is printed, with the lookup by name alone,
 * the read of the group MPI_P2P (a group read sums every member activity:
 * O(activities), still independent of the signatures), and the check that
 * the MPI_Send count read equals the number recorded.
 *
 * usage: bench_pia_activity [events per point (default 10000000)] [reps (11)]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <ballast.h>

#include "mon/mon_internal.h"
#include "bench_util.h"

enum { NQ = 1 << 16 };

static uint64_t rng = 0x9E3779B97F4A7C15ull;

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  long events = argc > 1 ? atol(argv[1]) : 10000000;
  int reps = argc > 2 ? atoi(argv[2]) : 11;
  if (events < 1 || reps < 1) {
    fprintf(stderr, "usage: %s [events per point] [reps]\n", argv[0]);
    MPI_Finalize();
    return 2;
  }
  const char *names[4] = {"MPI_Send", "MPI_Recv", "MPI_Isend", "MPI_Bcast"};
  int acts[4];
  for (int i = 0; i < 4; i++)
    if ((acts[i] = pia_activity_find(names[i])) < 0) {
      fprintf(stderr, "%s: %s\n", names[i], ballast_strerror(acts[i]));
      return 1;
    }
  pia_act_t send = acts[0];
  pia_act_t p2p = pia_activity_find(PIA_GROUP_P2P);
  double *t_read = malloc(sizeof(double) * reps), *t_find = malloc(sizeof(double) * reps),
         *t_grp = malloc(sizeof(double) * reps);
  if (!t_read || !t_find || !t_grp || p2p < 0)
    return 1;
  long long sends = 0;
  pia_actdata_t base;
  pia_actdata_init(&base);
  pia_activity_data(send, &base); /* MPI_Init's own calls, if any */
  volatile double sink = 0;
  printf("# pia_activity: read MPI_Send's data; %ld recorded events per point\n",
         events);
  printf("# %9s %12s %12s %12s %12s %14s\n", "unique U", "events", "read ns",
         "find ns", "P2P grp ns", "MPI_Send calls");
  for (long u = 1; u <= 1000000; u *= 10) {
    double r0 = bench_now();
    for (long e = 0; e < events; e++) {
      uint64_t x = bench_xorshift(&rng);
      int a = (int)(x & 3);
      uint64_t bytes = 8 * (1 + (x >> 8) % (uint64_t)u);
      mon__tls_t *t = mon__enter();
      if (t) {
        mon__record(t, acts[a], 0, bytes, 100);
        mon__leave(t);
      }
      sends += a == 0;
    }
    double rec = bench_now() - r0;
    for (int r = 0; r < reps; r++) {
      pia_actdata_t d;
      double s = 0, t0 = bench_now();
      for (int i = 0; i < NQ; i++) {
        pia_actdata_init(&d);
        pia_activity_data(send, &d);
        s += d.tsum;
      }
      double t1 = bench_now();
      for (int i = 0; i < NQ; i++)
        s += pia_activity_find(names[i & 3]);
      double t2 = bench_now();
      for (int i = 0; i < NQ / 16; i++) {
        pia_actdata_init(&d);
        pia_activity_data(p2p, &d);
        s += d.tsum;
      }
      double t3 = bench_now();
      sink += s;
      t_grp[r] = (t3 - t2) / (NQ / 16) * 1e9;
      t_read[r] = (t1 - t0) / NQ * 1e9;
      t_find[r] = (t2 - t1) / NQ * 1e9;
    }
    pia_actdata_t d;
    pia_actdata_init(&d);
    pia_activity_data(send, &d);
    long long got = d.ncalls - base.ncalls;
    printf("  %9ld %12ld %12.1f %12.1f %12.1f %14lld%s  (record %.1f ns/event)\n",
           u, events, bench_median(t_read, reps), bench_median(t_find, reps),
           bench_median(t_grp, reps), got,
           got == sends ? "" : " MISMATCH", rec / events * 1e9);
    fflush(stdout);
  }
  free(t_read);
  free(t_find);
  free(t_grp);
  MPI_Finalize();
  return 0;
}
