/* The cost of a remap through a load-balancing context as tasks and state
 * grow: mapping time, migration time, and the migration's throughput against
 * a plain MPI_Alltoallv of the same bytes between the same pairs of ranks.
 *
 * Every rank defines T tasks; each task's state is one registered array of S
 * bytes (doubles), so it takes rta's zero-copy path (sent from the array,
 * received into the memory that becomes the new array). With "packed" the
 * task also has 16 bytes of callback state, which forces the packed path
 * (one pack copy, one unpack copy). Each remap is explicit with the RANDOM
 * strategy and a new seed, so about (np-1)/np of the tasks move. After each
 * remap, the same per-pair byte counts are sent with MPI_Alltoallv from and
 * into preallocated, touched buffers (the floor). Remaps and Alltoallv
 * alternate so both see the same machine state. The first W pairs (default
 * 3) are warm-up, as in the OSU benchmarks: both sides' first transfers pay
 * for first use (Open MPI's single-copy path, fresh pages, the context's
 * empty pool), up to 25 times a later transfer on the project VM. They are
 * not in the medians; the first pair is printed apart (cold_*). Medians over
 * R timed pairs: ratio = median Alltoallv time / median migration time;
 * ratio_p = median over the pairs of each pair's ratio (steadier on a loaded
 * machine). BENCH_VERBOSE=1 prints every pair. The tasks' arrays come from
 * malloc(), as most applications' do; BENCH_ALLOC=rta takes them from
 * rta_array_alloc() (huge pages from the start) instead.
 *
 * Usage: mpiexec -n 2 bench_lb_remap [reps] [packed|zero] [case index] [W]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ballast/rta.h>
#include "bench_util.h"
#include "core_rtt/core_rtt.h"
#include "lb/lb_internal.h" /* the move's breakdown by phase (move_phase) */

static int me, np, packed, warmup = 3, rta_alloc;

typedef struct {
  double *a;
  char extra[16];
} st_t;

static int cb_size(rta_task_t *t, size_t *len, void *u) {
  (void)t;
  (void)u;
  *len = packed ? 16 : 0;
  return 0;
}
static int cb_pack(rta_task_t *t, void *buf, size_t len, void *u) {
  (void)u;
  memcpy(buf, ((st_t *)rta_task_data(t))->extra, len);
  return 0;
}
static int cb_unpack(rta_task_t *t, const void *buf, size_t len, void *u) {
  (void)u;
  st_t *s = calloc(1, sizeof *s);
  if (!s)
    return -1;
  if (len)
    memcpy(s->extra, buf, len);
  rta_task_set_data(t, s);
  int64_t z = 0;
  return rta_task_array_register(t, (void **)&s->a, rta_type_elem(RTA_DOUBLE), 1, &z);
}
static void cb_release(rta_task_t *t, void *u) {
  (void)u;
  free(rta_task_data(t));
}


static const char *const phase_name[LB__NPHASES] = {
    "describe", "descriptors", "plan", "pack", "exchange", "unpack", "commit",
    "tree", "other"};

/* The breakdown of one case: per phase, the median over the timed remaps
 * of the slowest rank's seconds divided by the tasks moved per rank; and
 * the migration's time beyond the Alltoallv's, per task moved. */
static void print_breakdown(double (*ph)[LB__NPHASES], const double *tasks,
                            const double *tmig, const double *ta2a, int reps) {
  double *v = malloc(sizeof(double) * (size_t)reps);
  printf("#   us per task moved:");
  for (int k = 0; k < LB__NPHASES; k++) {
    for (int r = 0; r < reps; r++)
      v[r] = tasks[r] > 0 ? ph[r][k] / tasks[r] * 1e6 : 0;
    printf(" %s %.3f", phase_name[k], bench_median(v, reps));
  }
  for (int r = 0; r < reps; r++)
    v[r] = tasks[r] > 0 ? (tmig[r] - ta2a[r]) / tasks[r] * 1e6 : 0;
  printf("; beyond the Alltoallv %.3f\n", bench_median(v, reps));
  free(v);
}

static void run(int T, size_t S, int reps) {
  rta_task_params_t rp = RTA_TASK_PARAMS_INIT;
  rp.serial = (rta_serial_t){cb_size, cb_pack, cb_unpack, cb_release};
  const char *rn = "bench";
  rta_task_t *root;
  rta_task_define(NULL, 1, &rn, &rp, &root);
  int64_t count = (int64_t)(S / sizeof(double));
  for (int i = 0; i < T; i++) {
    char name[32];
    snprintf(name, sizeof name, "t%06d", i * np + me);
    const char *nm = name;
    rta_task_params_t p = RTA_TASK_PARAMS_INIT;
    rta_task_t *t;
    rta_task_define(root, 1, &nm, &p, &t);
    st_t *s = calloc(1, sizeof *s);
    s->a = rta_alloc ? rta_array_alloc(S) : malloc(S);
    memset(s->a, i & 0xff, S);
    rta_task_set_data(t, s);
    rta_task_array_register(t, (void **)&s->a, rta_type_elem(RTA_DOUBLE), 1, &count);
  }
  rta_lb_config_t cfg;
  rta_lb_config_init(&cfg);
  cfg.use_env = 0;
  cfg.policy.mode = RTA_POLICY_EXPLICIT;
  cfg.strategy = RTA_MAP_RANDOM;
  cfg.seed = 11;
  rta_lb_context_t *ctx;
  MPI_Comm comm;
  if (rta_lb_create(MPI_COMM_WORLD, root, &cfg, &ctx, &comm) != 0)
    MPI_Abort(MPI_COMM_WORLD, 1);
  double *tmap = malloc(sizeof(double) * (size_t)reps);
  double *tmig = malloc(sizeof(double) * (size_t)reps);
  double *ta2a = malloc(sizeof(double) * (size_t)reps);
  double *bytes = malloc(sizeof(double) * (size_t)reps);
  double *ratio = malloc(sizeof(double) * (size_t)reps);
  double *tasks = malloc(sizeof(double) * (size_t)reps);
  double (*ph)[LB__NPHASES] = malloc(sizeof *ph * (size_t)reps);
  int *sc = calloc((size_t)np, sizeof *sc), *rc = calloc((size_t)np, sizeof *rc);
  int *sd = calloc((size_t)np, sizeof *sd), *rd = calloc((size_t)np, sizeof *rd);
  size_t cap = (size_t)T * S * 2 + 1;
  char *sbuf = malloc(cap), *rbuf = malloc(cap);
  memset(sbuf, 1, cap);
  memset(rbuf, 0, cap);
  char **keys = malloc(sizeof(char *) * (size_t)T * (size_t)np);
  double cold_mig = 0, cold_a2av = 0;
  for (int r = -warmup; r < reps; r++) {
    /* What this rank holds before the remap. */
    int nl = rta_lb_nlocal(ctx);
    for (int i = 0; i < nl; i++)
      keys[i] = strdup(rta_task_key(rta_lb_local_task(ctx, i)));
    rta_lb_stats_t s0, s1;
    rta_lb_stats(ctx, &s0);
    double p0[LB__NPHASES], p1[LB__NPHASES];
    memcpy(p0, ctx->move_phase, sizeof p0);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rta_lb_perform(ctx, &comm) != 0)
      MPI_Abort(MPI_COMM_WORLD, 2);
    rta_lb_stats(ctx, &s1);
    for (int k = 0; k < LB__NPHASES; k++)
      p1[k] = ctx->move_phase[k] - p0[k];
    double map_s = s1.seconds_mapping - s0.seconds_mapping;
    double mig_s = s1.seconds_migrating - s0.seconds_migrating;
    double moved = s1.bytes_moved - s0.bytes_moved;
    /* The same bytes per pair with a plain Alltoallv. */
    memset(sc, 0, sizeof(int) * (size_t)np);
    for (int i = 0; i < nl; i++) {
      int owner;
      rta_lb_task_owner(ctx, keys[i], &owner);
      if (owner != me)
        sc[owner] += (int)S;
      free(keys[i]);
    }
    MPI_Alltoall(sc, 1, MPI_INT, rc, 1, MPI_INT, MPI_COMM_WORLD);
    for (int p = 1; p < np; p++) {
      sd[p] = sd[p - 1] + sc[p - 1];
      rd[p] = rd[p - 1] + rc[p - 1];
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    MPI_Alltoallv(sbuf, sc, sd, MPI_BYTE, rbuf, rc, rd, MPI_BYTE, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    double t = MPI_Wtime() - t0, a2av_s;
    MPI_Allreduce(&t, &a2av_s, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (me == 0 && getenv("BENCH_VERBOSE"))
      printf("#   remap %2d%s: migrate %.5f s, Alltoallv %.5f s, ratio %.3f\n", r,
             r < 0 ? " (warm-up)" : "", mig_s, a2av_s,
             mig_s > 0 ? a2av_s / mig_s : 0);
    if (r == -warmup) {
      cold_mig = mig_s;
      cold_a2av = a2av_s;
    }
    if (r < 0)
      continue;
    MPI_Reduce(p1, ph[r], LB__NPHASES, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    tasks[r] = (double)(s1.tasks_moved - s0.tasks_moved) / np;
    tmap[r] = map_s;
    tmig[r] = mig_s;
    bytes[r] = moved;
    ta2a[r] = a2av_s;
    ratio[r] = mig_s > 0 ? a2av_s / mig_s : 0;
  }
  double mb = bench_median(bytes, reps), mmap = bench_median(tmap, reps);
  double mmig = bench_median(tmig, reps), ma = bench_median(ta2a, reps);
  double mr = bench_median(ratio, reps);
  if (me == 0)
    printf("%8d %10zu %10.0f %10.5f %10.5f %10.5f %10.1f %10.1f %7.3f %7.3f "
           "%10.5f %10.5f\n", T, S, mb / 1e6, mmap, mmig, ma, mb / mmig / 1e6,
           mb / ma / 1e6, ma / mmig, mr, cold_mig, cold_a2av);
  if (me == 0)
    print_breakdown(ph, tasks, tmig, ta2a, reps);
  for (int i = 0; i < rta_lb_nlocal(ctx); i++) {
    st_t *s = rta_task_data(rta_lb_local_task(ctx, i));
    free(s->a);
    free(s);
  }
  rta_lb_destroy(ctx);
  rta_task_remove(root);
  free(tmap);
  free(tmig);
  free(ta2a);
  free(bytes);
  free(ratio);
  free(tasks);
  free(ph);
  free(sc);
  free(rc);
  free(sd);
  free(rd);
  free(sbuf);
  free(rbuf);
  free(keys);
}

int main(int argc, char **argv) {
  /* The vCPU placement before MPI starts spinning (core_rtt.c). */
  double rtt0 = bench_core_rtt_before();
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  int reps = argc > 1 ? atoi(argv[1]) : 31;
  packed = argc > 2 && !strcmp(argv[2], "packed");
  if (reps < 1)
    reps = 1;
  if (argc > 4)
    warmup = atoi(argv[4]) > 0 ? atoi(argv[4]) : 0;
  rta_alloc = getenv("BENCH_ALLOC") && !strcmp(getenv("BENCH_ALLOC"), "rta");
  if (me == 0)
    printf("# %d ranks, %s path, arrays from %s, medians of %d remaps after %d "
           "warm-up (RANDOM, new seed each)\n"
           "%8s %10s %10s %10s %10s %10s %10s %10s %7s %7s %10s %10s\n", np,
           packed ? "packed" : "zero-copy", rta_alloc ? "rta_array_alloc" : "malloc",
           reps, warmup, "tasks/rk", "state_B",
           "MB_moved", "map_s", "migrate_s", "a2av_s", "mig_MB/s", "a2av_MB/s",
           "ratio", "ratio_p", "cold_mig_s", "cold_a2av_s");
  static const struct {
    int T;
    size_t S;
  } cases[] = {{16, 1024},   {256, 1024},     {4096, 1024},   {1024, 16384},
               {256, 65536}, {64, 262144},    {32, 1 << 20},  {8, 4 << 20},
               {4, 16 << 20},
               /* 9-12: the small-state targets, 4,096 tasks per rank */
               {4096, 4096}, {4096, 16384}, {4096, 65536}, {256, 1 << 20}};
  int only = argc > 3 ? atoi(argv[3]) : -1;
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
    if (only < 0 || (size_t)only == c)
      run(cases[c].T, cases[c].S, reps);
  rta_reset();
  MPI_Finalize();
  bench_core_rtt_after(rtt0);
  return 0;
}
