/* The round trip of one cache line between two CPUs (core_rtt.c). */
#ifndef BENCH_CORE_RTT_H
#define BENCH_CORE_RTT_H

/* Nanoseconds of the round trip between cpu_a and cpu_b (negative: this
 * process's first CPU and the lowest other one), the lowest mean over 40
 * batches of 2,000; -1 when two CPUs cannot be pinned. The calling thread's
 * affinity is restored. */
double bench_core_rtt_ns(int cpu_a, int cpu_b);

/* Nonzero in the one process per node that should measure it (local rank
 * 0 under Open MPI, MPICH or Slurm; any process without a launcher). */
int bench_core_rtt_here(void);

/* What a benchmark calls before MPI_Init: the round trip now in the
 * process that measures (bench_core_rtt_here), -1 in the others. */
double bench_core_rtt_before(void);

/* What it calls after MPI_Finalize with that figure: in the process that
 * measured, prints "# core-to-core round trip: B ns before, A ns after". */
void bench_core_rtt_after(double before);

#endif
