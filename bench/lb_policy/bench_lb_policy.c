/* The automatic policy's cost on a balanced run: the same balanced
 * workload (tasks of fixed CPU work and a ring halo exchange per step) in
 * blocks of steps under four treatments, alternated in one run so machine
 * load hits them alike:
 *   off   a context with the policy off (the load-balancing call returns at once)
 *   auto  a context with the automatic policy (never remaps: balanced)
 *   coll  the off context plus one MPI_Iallreduce of 16 doubles per step,
 *         started at a step and completed (MPI_Wait) at the next: the
 *         collective the automatic policy makes each step (rta_policy.h)
 *   step  the off context plus rta_step() per step, the cost model's
 *         closing of a step that the automatic policy does
 * Each block's wall time per step is the max over ranks; a treatment's figure
 * is the median over rounds; the ratios to off are printed.
 * Usage: bench_lb_policy [tasks/rank 8] [us/task 250] [steps/block 20]
 *        [rounds 15] [halo KiB 64] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ballast/rta.h>

#include "bench_util.h"

enum { OFF, AUTO, COLL, STEP, NT };
static const char *names[NT] = {"off", "auto", "coll", "step"};

static int me, np;

/* Fixed work: a busy loop on this thread's CPU clock, so preemption on a
 * shared machine stretches it in wall time only, as it would real work. */
static void spin(double seconds) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  double end = ts.tv_sec + 1e-9 * ts.tv_nsec + seconds;
  do
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  while (ts.tv_sec + 1e-9 * ts.tv_nsec < end);
}

static rta_task_t *define(const char *name, int per) {
  rta_task_t *root;
  rta_task_params_t rp = RTA_TASK_PARAMS_INIT;
  if (rta_task_define(NULL, 1, &name, &rp, &root))
    MPI_Abort(MPI_COMM_WORLD, 1);
  for (int i = 0; i < per; i++) {
    char nm[32];
    snprintf(nm, sizeof nm, "r%d_%d", me, i);
    const char *p = nm;
    rta_task_params_t tp = RTA_TASK_PARAMS_INIT;
    if (rta_task_define(root, 1, &p, &tp, NULL))
      MPI_Abort(MPI_COMM_WORLD, 1);
  }
  return root;
}

static rta_lb_context_t *context(rta_task_t *root, rta_policy_mode_t mode, MPI_Comm *comm) {
  rta_lb_config_t cfg;
  rta_lb_config_init(&cfg);
  cfg.use_env = 0;
  cfg.policy.mode = mode;
  rta_lb_context_t *ctx;
  if (rta_lb_create(MPI_COMM_WORLD, root, &cfg, &ctx, comm))
    MPI_Abort(MPI_COMM_WORLD, 1);
  return ctx;
}

/* One block of \a steps under treatment \a t; wall seconds per step, max
 * over ranks. */
static double block(int t, rta_lb_context_t *ctx, MPI_Comm *comm, int steps,
                    double work, char *sbuf, char *rbuf, int halo) {
  int right = (me + 1) % np, left = (me + np - 1) % np;
  double t0 = bench_now();
  for (int s = 0; s < steps; s++) {
    for (int i = 0; i < rta_lb_nlocal(ctx); i++) {
      rta_task_t *task = rta_lb_local_task(ctx, i);
      rta_task_begin(task);
      spin(work);
      rta_task_end(task);
    }
    MPI_Sendrecv(sbuf, halo, MPI_BYTE, right, 0, rbuf, halo, MPI_BYTE, left, 0, *comm,
                 MPI_STATUS_IGNORE);
    if (t == COLL) {
      static double v[16], r[16];
      static MPI_Request req = MPI_REQUEST_NULL;
      MPI_Wait(&req, MPI_STATUS_IGNORE); /* the previous step's */
      v[0] = work;
      MPI_Iallreduce(v, r, 16, MPI_DOUBLE, MPI_MAX, *comm, &req);
      if (s == steps - 1) /* the block ends with nothing in flight */
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    } else if (t == STEP) {
      rta_step();
    }
    if (rta_lb_perform(ctx, comm))
      MPI_Abort(MPI_COMM_WORLD, 2);
  }
  double per = (bench_now() - t0) / steps, mx;
  MPI_Allreduce(&per, &mx, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return mx;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  int per = argc > 1 ? atoi(argv[1]) : 8;
  double work = (argc > 2 ? atof(argv[2]) : 250) * 1e-6;
  int steps = argc > 3 ? atoi(argv[3]) : 20;
  int rounds = argc > 4 ? atoi(argv[4]) : 15;
  int halo = (argc > 5 ? atoi(argv[5]) : 64) * 1024;
  if (per < 1 || work <= 0 || steps < 1 || rounds < 1 || halo < 0 || np > 64) {
    if (!me)
      fprintf(stderr, "bench_lb_policy: bad arguments (or more than 64 ranks)\n");
    MPI_Finalize();
    return 1;
  }
  char *sbuf = calloc((size_t)halo + 1, 1), *rbuf = calloc((size_t)halo + 1, 1);
  MPI_Comm comm_off, comm_auto;
  rta_task_t *root_off = define("off", per), *root_auto = define("auto", per);
  rta_lb_context_t *c_off = context(root_off, RTA_POLICY_OFF, &comm_off);
  rta_lb_context_t *c_auto = context(root_auto, RTA_POLICY_AUTO, &comm_auto);
  double *fig[NT];
  for (int t = 0; t < NT; t++)
    fig[t] = calloc((size_t)rounds, sizeof(double));
  for (int t = 0; t < NT; t++) /* warm-up round, not counted */
    block(t, t == AUTO ? c_auto : c_off, t == AUTO ? &comm_auto : &comm_off, steps, work,
          sbuf, rbuf, halo);
  for (int r = 0; r < rounds; r++)
    for (int k = 0; k < NT; k++) {
      int t = (k + r) % NT; /* rotate the order: no treatment always first */
      fig[t][r] = block(t, t == AUTO ? c_auto : c_off, t == AUTO ? &comm_auto : &comm_off,
                        steps, work, sbuf, rbuf, halo);
    }
  rta_lb_stats_t st;
  rta_lb_stats(c_auto, &st);
  if (!me) {
    double med[NT];
    for (int t = 0; t < NT; t++)
      med[t] = bench_median(fig[t], rounds);
    printf("bench_lb_policy: %d ranks, %d tasks/rank x %.0f us, halo %d KiB, %d steps x "
           "%d rounds per treatment\n", np, per, work * 1e6, halo / 1024, steps, rounds);
    for (int t = 0; t < NT; t++)
      printf("  %-5s %.4f ms/step  ratio to off %.3f\n", names[t], 1e3 * med[t],
             med[t] / med[OFF]);
    printf("  auto policy: %lld steps judged, %lld remaps, %.3g s deciding on rank 0\n",
           st.steps, st.remaps, st.seconds_deciding);
  }
  rta_lb_destroy(c_auto);
  rta_lb_destroy(c_off);
  for (int t = 0; t < NT; t++)
    free(fig[t]);
  free(sbuf);
  free(rbuf);
  MPI_Finalize();
  return 0;
}
