/* Migration throughput against a plain MPI_Alltoallv of the same bytes.
 *
 * Every rank owns T tasks of S bytes each; a seeded draw sends every task to
 * another rank (a full reshuffle, the worst case of a remap). We time
 *  (a) rta's migration engine: sizes, counts, headers, rounds, direct
 *      send, receive into buffers from a pool of touched memory (what a
 *      load-balancing context keeps between remaps), commit (the source
 *      hands its states to the pool);
 *  (b) MPI_Alltoallv of the same bytes from one contiguous send buffer into
 *      one preallocated receive buffer (the floor: no sizing, no per-task
 *      buffers, no commit).
 * Runs alternate (a) and (b) so both see the same machine state; medians over
 * R repetitions. Output: one line per (T, S) with both medians, both
 * throughputs (bytes moved per second per rank) and the ratio a/b.
 *
 * Usage: [BENCH_TAIL=bytes] mpiexec -n 2 bench_lb_migrate [reps] [max_state_bytes] [min_state_bytes]
 */
#include <ballast/common.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mig/migrate.h"
#include "bench_util.h"
#include "core_rtt/core_rtt.h"

typedef struct {
  size_t len;
  unsigned char *data;
  unsigned char *staged;
} task_t;

static task_t *tasks;
static mig__pool_t *pool; /* touched memory across repetitions, as a context keeps */
static int ntasks_total;
/* BENCH_TAIL=N: every state also has an N-byte tail packed by the callback,
 * as a load-balancing context's task carries its descriptor (about 150
 * bytes): what a tail per task costs the engine. The Alltoallv still moves
 * only the heads' bytes, as bench_lb_remap's moves no descriptors. */
static size_t tail_bytes;

static int op_size(void *c, int64_t t, size_t *h, size_t *tl) {
  (void)c; *h = tasks[t].len; *tl = tail_bytes; return 0;
}
static int op_head(void *c, int64_t t, const void **p) {
  (void)c; *p = tasks[t].data; return 0;
}
static int op_pack(void *c, int64_t t, void *buf, size_t b) {
  (void)c;
  memset(buf, (int)(t & 0xff), b);
  return 0;
}
static int op_unpack(void *c, int64_t t, int src, void **head, size_t hb,
                     const void *tail, size_t tb) {
  (void)c; (void)src; (void)hb;
  if (tb != tail_bytes || (tb > 0 && ((const unsigned char *)tail)[tb - 1] != (t & 0xff)))
    return BALLAST_EINVAL; /* a tail that is not the one packed */
  tasks[t].staged = *head; /* adopt: no copy */
  *head = NULL;
  return 0;
}
static void op_finish(void *c, int64_t t, int outgoing, int outcome) {
  (void)c;
  if (outcome != MIG__COMMIT) {
    if (!outgoing) { free(tasks[t].staged); tasks[t].staged = NULL; }
    return;
  }
  if (outgoing) { mig__pool_give(pool, tasks[t].data, tasks[t].len); tasks[t].data = NULL; }
  else { tasks[t].data = tasks[t].staged; tasks[t].staged = NULL; }
}


/* Per phase of the engine (migrate.h), the median over the repetitions of
 * the slowest rank's seconds per task moved, and the migration's time
 * beyond the Alltoallv's per task moved (every rank moves all T). */
static void print_breakdown(double (*ph)[MIG__PH_NPHASES], const double *tm,
                            const double *ta, int reps, int T) {
  static const char *const name[MIG__PH_NPHASES] = {"plan", "pack", "exchange",
                                                     "unpack", "commit"};
  double *v = malloc(sizeof(double) * (size_t)reps);
  printf("#   us per task moved:");
  for (int k = 0; k < MIG__PH_NPHASES; k++) {
    for (int r = 0; r < reps; r++)
      v[r] = ph[r][k] / T * 1e6;
    printf(" %s %.3f", name[k], bench_median(v, reps));
  }
  for (int r = 0; r < reps; r++)
    v[r] = (tm[r] - ta[r]) / T * 1e6;
  printf("; beyond the Alltoallv %.3f\n", bench_median(v, reps));
  free(v);
}

int main(int argc, char **argv) {
  /* The vCPU placement before MPI starts spinning (core_rtt.c). */
  double rtt0 = bench_core_rtt_before();
  MPI_Init(&argc, &argv);
  int me, np;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  int reps = argc > 1 ? atoi(argv[1]) : 9;
  size_t max_state = argc > 2 ? (size_t)atoll(argv[2]) : ((size_t)8 << 20);
  size_t min_state = argc > 3 ? (size_t)atoll(argv[3]) : 4096;
  const char *tail_env = getenv("BENCH_TAIL");
  tail_bytes = tail_env ? (size_t)atoll(tail_env) : 0;
  if (me == 0)
    printf("%8s %10s %12s %12s %10s %10s %7s\n", "tasks/rk", "state_B", "migrate_s",
           "alltoallv_s", "mig_MB/s", "a2av_MB/s", "ratio");
  /* 4,096 tasks per rank up to 64 KiB (the small-state targets), then
   * 256 MiB moved per rank. */
  const size_t per_rank_bytes = (size_t)256 << 20;
  for (size_t S = min_state ? min_state : 4096; S <= max_state; S *= 4) {
    int T = (int)(per_rank_bytes / S);
    if (T > 4096) T = 4096;
    if (T < 2) T = 2;
    ntasks_total = T * np;
    tasks = calloc((size_t)ntasks_total, sizeof *tasks);
    double *tm = malloc(sizeof(double) * (size_t)reps), *ta = malloc(sizeof(double) * (size_t)reps);
    double (*ph)[MIG__PH_NPHASES] = malloc(sizeof *ph * (size_t)reps);
    int *owner = malloc(sizeof(int) * (size_t)ntasks_total);
    for (int t = 0; t < ntasks_total; t++) {
      owner[t] = t % np;
      tasks[t].len = S;
      if (owner[t] == me) {
        tasks[t].data = malloc(S);
        memset(tasks[t].data, t & 0xff, S);
      }
    }
    mig__move_t *moves = malloc(sizeof *moves * (size_t)ntasks_total);
    /* op_unpack adopts every head, as a load-balancing context's does. */
    const mig__ops_t ops = {op_size, op_head, op_pack, op_unpack, op_finish,
                                    NULL, 1, NULL, NULL};
    pool = mig__pool_create((size_t)256 << 20);
    /* Alltoallv buffers sized for the same bytes per rank. */
    size_t bytes_out = (size_t)T * S;
    unsigned char *sbuf = malloc(bytes_out), *rbuf = malloc(bytes_out);
    memset(sbuf, 1, bytes_out);
    memset(rbuf, 0, bytes_out);
    int *sc = calloc((size_t)np, sizeof(int)), *sd = calloc((size_t)np, sizeof(int));
    for (int r = 0; r < reps; r++) {
      /* (a) migrate: every task moves to the next rank. */
      int n = 0;
      for (int t = 0; t < ntasks_total; t++)
        if (owner[t] == me) {
          moves[n].task = t;
          moves[n].dest = (me + 1) % np;
          n++;
        }
      MPI_Barrier(MPI_COMM_WORLD);
      double t0 = MPI_Wtime();
      mig__stats_t st;
      int rc = mig__run(MPI_COMM_WORLD, moves, n, &ops, NULL, (size_t)256 << 20, pool, &st);
      MPI_Barrier(MPI_COMM_WORLD);
      tm[r] = MPI_Wtime() - t0;
      if (rc != 0) {
        fprintf(stderr, "migrate failed: %s\n", ballast_strerror(rc));
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
      MPI_Allreduce(st.phase, ph[r], MIG__PH_NPHASES, MPI_DOUBLE, MPI_MAX,
                    MPI_COMM_WORLD);
      for (int t = 0; t < ntasks_total; t++)
        owner[t] = (owner[t] + 1) % np;
      /* (b) the same bytes through one MPI_Alltoallv. */
      size_t chunk = bytes_out; /* all to the next rank, as (a) */
      for (int p = 0; p < np; p++) { sc[p] = 0; sd[p] = 0; }
      sc[(me + 1) % np] = (int)(chunk > (size_t)2147483647 ? 2147483647 : chunk);
      int *rc_ = calloc((size_t)np, sizeof(int)), *rd = calloc((size_t)np, sizeof(int));
      rc_[(me + np - 1) % np] = sc[(me + 1) % np];
      MPI_Barrier(MPI_COMM_WORLD);
      t0 = MPI_Wtime();
      MPI_Alltoallv(sbuf, sc, sd, MPI_BYTE, rbuf, rc_, rd, MPI_BYTE, MPI_COMM_WORLD);
      MPI_Barrier(MPI_COMM_WORLD);
      ta[r] = MPI_Wtime() - t0;
      free(rc_);
      free(rd);
    }
    double mm = bench_median(tm, reps), ma = bench_median(ta, reps);
    if (me == 0) {
      printf("%8d %10zu %12.6f %12.6f %10.1f %10.1f %7.3f\n", T, S, mm, ma,
             bytes_out / mm / 1e6, bytes_out / ma / 1e6, ma / mm);
      print_breakdown(ph, tm, ta, reps, T);
    }
    for (int t = 0; t < ntasks_total; t++)
      free(tasks[t].data);
    mig__pool_destroy(pool);
    free(tasks); free(tm); free(ta); free(ph); free(owner); free(moves); free(sbuf); free(rbuf);
    free(sc); free(sd);
  }
  MPI_Finalize();
  bench_core_rtt_after(rtt0);
  return 0;
}
