/*
 * ballast-lb-small: load balancing of tasks whose cost drifts.
 *
 * The tasks "lb/t<k>" lie in a row; a hot spot, ten times the work of a
 * cold task, moves along the row over the run, so whichever rank holds it
 * is the slowest. Each rank starts with a contiguous slice of the row.
 * ballast's automatic policy measures every task (rta_task_begin/end),
 * judges the ranks' imbalance at every rta_lb_perform() and moves tasks
 * when a remap pays for itself. A task's state is one registered array
 * (rta_task_array_register): ballast moves it with the task, no callback needed.
 *
 * Each step prints the imbalance of the work (max/avg over ranks of the
 * tasks' costs, owners from rta_lb_task_owner) as the tasks sit now and as
 * they would without balancing, the measured time imbalance, and each remap.
 * At the end every task's array is checked on whichever rank owns it. Exit
 * status 1 when a check fails, no remap happened, or balancing did not
 * lower the work imbalance.
 *
 * Usage: mpiexec -n 2 ballast-lb-small [steps (80)] [tasks (32)]
 */
#include <ballast.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { NVALS = 512, UNIT = 20000 }; /* doubles of state per task; sqrt per unit of cost */

static int steps = 80, ntasks = 32, rank, size;

/* Cost of task k at a step: 1, plus up to 9 near the hot spot, which
 * crosses the row once over the run. */
static double cost(int k, int step) {
  double centre = (double)step * ntasks / steps, d = (k - centre) / 2.0;
  return 1.0 + 9.0 * exp(-d * d);
}

/* A task's work: a real computation proportional to its cost that reads
 * its state; a[0] counts the steps the task ran, wherever it ran. */
static double work(double *a, double c) {
  double x = 0.0;
  long n = (long)(c * UNIT);
  for (long i = 0; i < n; i++) x = sqrt(x + a[1 + i % (NVALS - 1)]);
  a[0] += 1.0;
  return x;
}

/* The root on every rank, and this rank's slice of the row: each task with
 * its state, values derived from its key, registered as an array. */
static int define_tasks(double **state, rta_task_t **root) {
  const char *rootname = "lb";
  int rc = rta_task_define(NULL, 1, &rootname, NULL, root);
  for (int k = 0; k < ntasks && !rc; k++) {
    if (k * size / ntasks != rank) continue;
    char name[32];
    const char *np = name;
    rta_task_t *t;
    int64_t dims = NVALS;
    snprintf(name, sizeof name, "t%d", k);
    if (!(state[k] = malloc(NVALS * sizeof(double)))) return BALLAST_ENOMEM;
    state[k][0] = 0.0;
    for (int i = 1; i < NVALS; i++) state[k][i] = k * NVALS + i;
    rc = rta_task_define(*root, 1, &np, NULL, &t);
    if (!rc) rc = rta_task_array_register(t, (void **)&state[k], rta_type_elem(RTA_DOUBLE), 1, &dims);
  }
  return rc;
}

/* Automatic balancing, judged over short windows so that a short run sees
 * several remaps (the defaults suit runs of hundreds of steps). Collective:
 * every rank calls it, even after a local error, so that all fail together. */
static int define_context(int rc, rta_task_t *root, rta_lb_context_t **ctx, MPI_Comm *comm) {
  rta_lb_config_t cfg;
  rta_lb_config_init(&cfg);
  cfg.policy.mode = RTA_POLICY_AUTO;
  cfg.policy.warmup = 2;
  cfg.policy.window = 5;
  rta_cost_config_t cc = {4, 2}; /* a task's cost follows the hot spot within 4 steps */
  if (!rc) rc = rta_cost_config_set(&cc);
  int rc2 = rta_lb_create(MPI_COMM_WORLD, root, &cfg, ctx, comm);
  return rc ? rc : rc2;
}

/* Runs this rank's tasks (as of the last remap) for step s. */
static double run_tasks(rta_lb_context_t *ctx, int s) {
  double x = 0;
  for (int i = 0; i < rta_lb_nlocal(ctx); i++) {
    rta_task_t *t = rta_lb_local_task(ctx, i);
    void **slot;
    /* begin/end clock the task: the cost model learns its cost from them */
    if (rta_task_begin(t) || rta_task_array(t, 0, &slot)) MPI_Abort(MPI_COMM_WORLD, 1);
    x += work(*(double **)slot, cost(atoi(rta_task_name(t) + 1), s));
    if (rta_task_end(t)) MPI_Abort(MPI_COMM_WORLD, 1);
  }
  return x;
}

/* Max/avg over ranks of the work the tasks' owners carry: the owners now
 * (live = 1) or the initial slices (without balancing). */
static double work_imbalance(rta_lb_context_t *ctx, int s, int live, double *load) {
  double max = 0, sum = 0;
  for (int r = 0; r < size; r++) load[r] = 0;
  for (int k = 0; k < ntasks; k++) {
    char key[32];
    int owner = k * size / ntasks;
    snprintf(key, sizeof key, "lb/t%d", k);
    if (live && rta_lb_task_owner(ctx, key, &owner)) return -1;
    load[owner] += cost(k, s);
  }
  for (int r = 0; r < size; r++) {
    sum += load[r];
    max = load[r] > max ? load[r] : max;
  }
  return max / (sum / size);
}

/* Checks the arrays of the tasks this rank owns now; returns how many are
 * wrong and adds the tasks checked to *checked. */
static int check_state(rta_lb_context_t *ctx, int *checked) {
  int bad = 0;
  for (int k = 0; k < ntasks; k++) {
    char key[32];
    int owner = -1, ok = 0;
    rta_task_t *t;
    void **slot;
    snprintf(key, sizeof key, "lb/t%d", k);
    if (rta_lb_task_owner(ctx, key, &owner) || owner != rank) continue;
    if (!rta_task_find(key, &t) && !rta_task_array(t, 0, &slot)) {
      const double *a = *(double **)slot;
      ok = a[0] == steps;
      for (int i = 1; i < NVALS; i++) ok &= a[i] == k * NVALS + i;
      if (!ok) fprintf(stderr, "lb_small: rank %d: %s holds wrong values (a[0] = %g)\n", rank, key, a[0]);
    }
    bad += !ok;
    (*checked)++;
  }
  return bad;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc > 1) steps = atoi(argv[1]);
  if (argc > 2) ntasks = atoi(argv[2]);
  double *load = malloc((size_t)size * sizeof *load);
  double **state = calloc((size_t)(ntasks > 0 ? ntasks : 1), sizeof *state);
  if (steps < 10 || ntasks < size || !load || !state) {
    if (rank == 0) fprintf(stderr, "lb_small: want steps >= 10 and at least one task per rank\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  rta_task_t *root = NULL;
  rta_lb_context_t *ctx = NULL;
  MPI_Comm comm = MPI_COMM_NULL; /* the context's communicator, for the tasks' traffic */
  int rc = define_tasks(state, &root);
  rc = define_context(rc, root, &ctx, &comm);
  if (rc) {
    fprintf(stderr, "lb_small: rank %d: %s\n", rank, ballast_strerror(rc));
    MPI_Abort(MPI_COMM_WORLD, 1);
  }

  if (rank == 0) printf("step  hot  work-imbalance (unbalanced)  time-imbalance  my-tasks\n");
  double sum_live = 0, sum_static = 0, sink = 0;
  long long remaps = 0, moved = 0;
  int counted = 0;
  for (int s = 0; s < steps; s++) {
    double t0 = MPI_Wtime();
    sink += run_tasks(ctx, s);
    double mine = MPI_Wtime() - t0, tmax, tsum;
    MPI_Allreduce(&mine, &tmax, 1, MPI_DOUBLE, MPI_MAX, comm);
    MPI_Allreduce(&mine, &tsum, 1, MPI_DOUBLE, MPI_SUM, comm);
    double live = work_imbalance(ctx, s, 1, load), fixed = work_imbalance(ctx, s, 0, load);
    if (rank == 0)
      printf("%4d %4.0f %10.2f %14.2f %17.2f %11d\n", s, (double)s * ntasks / steps, live,
             fixed, tmax / (tsum / size), rta_lb_nlocal(ctx));
    if (remaps > 0) { /* compared from the first remap on */
      sum_live += live;
      sum_static += fixed;
      counted++;
    }

    /* The load-balancing call: collective, outside every task. */
    rta_lb_stats_t st;
    if ((rc = rta_lb_perform(ctx, &comm)) || (rc = rta_lb_stats(ctx, &st))) {
      fprintf(stderr, "lb_small: rank %d: %s\n", rank, ballast_strerror(rc));
      MPI_Abort(comm, 1);
    }
    if (st.remaps > remaps && rank == 0)
      printf("     remap %lld after step %d: %lld tasks moved, imbalance %.2f judged, %.2f predicted\n",
             st.remaps, s, st.tasks_moved - moved, st.imbalance_before, st.imbalance_predicted);
    remaps = st.remaps;
    moved = st.tasks_moved;
  }

  int all[2] = {0, 0}; /* wrong, checked */
  all[0] = check_state(ctx, &all[1]);
  MPI_Allreduce(MPI_IN_PLACE, all, 2, MPI_INT, MPI_SUM, comm);
  double mean_live = counted ? sum_live / counted : 0, mean_static = counted ? sum_static / counted : 0;
  int fail = all[0] || all[1] != ntasks || remaps < 1 || !(mean_live < mean_static);
  if (rank == 0) {
    printf("lb_small: %d ranks, %d tasks, %d steps: %lld remaps, %lld tasks moved\n", size,
           ntasks, steps, remaps, moved);
    printf("lb_small: work imbalance after the first remap %.2f, without balancing %.2f\n",
           mean_live, mean_static);
    printf("lb_small: state of %d tasks checked, %d wrong: %s\n", all[1], all[0],
           fail ? "FAILED" : "passed");
  }
  if (sink < 0) printf("%g\n", sink); /* keeps the work from being optimised away */

  rta_lb_destroy(ctx);
  rta_reset();
  for (int k = 0; k < ntasks; k++) free(state[k]); /* arrays that never left; rta freed the others */
  free(state);
  free(load);
  MPI_Finalize();
  return fail;
}
