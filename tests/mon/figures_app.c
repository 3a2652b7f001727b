/* The program behind check_figures.py: figures with known values.
 *
 * usage: figures_app SLEEP_MS
 *  - regions whose choice differs by rule: "zero_only" (200 ms, rank 0 only)
 *    and "others" (300 ms on every rank but 0), so by rank 0's time
 *    "zero_only" comes first and by the sum over ranks "others" does (two
 *    ranks or more); 24 regions "r00".."r23" of (i + 1) ms on rank i % 2
 *    plus 1 ms elsewhere, so rank 0 alone ranks them otherwise than the sum;
 *  - a load-balancing context of one task per rank (1 ms of CPU each) and
 *    NSTEPS steps; before each load-balancing call the last rank sleeps
 *    SLEEP_MS milliseconds outside its task, so the others wait for it in
 *    ballast's per-step collective (a program's step of about SLEEP_MS ms,
 *    a task time of 1 ms);
 *  - PIA agrees with the rule "MPI_Init is in no MPI total": MPI_ALL's time
 *    is the whole program's MPI time, its calls leave out MPI_Init and
 *    MPI_Finalize, MPI_Init's own activity keeps its time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <ballast.h>

#include "lb/cpu_spin.h"
#include "test_util.h"

#define NSTEPS 30

static void sleep_ms(double ms) {
  struct timespec ts = {(time_t)(ms / 1000), (long)((ms - 1000.0 * (long)(ms / 1000)) * 1e6)};
  nanosleep(&ts, NULL);
}

static void region(const char *name, double ms) {
  CHECK_EQ(mon_region_begin(name), 0);
  if (ms > 0)
    sleep_ms(ms);
  CHECK_EQ(mon_region_end(name), 0);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me, np;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  double sleep = argc > 1 ? atof(argv[1]) : 0;

  /* ---- regions ---- */
  if (me == 0)
    region("zero_only", 200);
  else
    region("others", 300);
  for (int i = 0; i < 24; i++) {
    char nm[8];
    snprintf(nm, sizeof nm, "r%02d", i);
    region(nm, i % 2 == me % 2 ? i + 1 : 1);
  }

  /* ---- load balancing: one task per rank, the last rank late ---- */
  const char *rn = "fig";
  rta_task_t *root;
  rta_task_params_t rp = RTA_TASK_PARAMS_INIT;
  CHECK_EQ(rta_task_define(NULL, 1, &rn, &rp, &root), 0);
  char tn[16];
  snprintf(tn, sizeof tn, "t%d", me);
  const char *nm = tn;
  rta_task_params_t p = RTA_TASK_PARAMS_INIT;
  p.est_work = 1.0;
  rta_task_t *task;
  CHECK_EQ(rta_task_define(root, 1, &nm, &p, &task), 0);
  rta_lb_config_t cfg;
  rta_lb_config_init(&cfg);
  cfg.use_env = 0;
  cfg.policy.mode = RTA_POLICY_AUTO;
  cfg.policy.threshold = 1e6; /* judged, never remapped */
  rta_lb_context_t *ctx;
  MPI_Comm comm;
  CHECK_EQ(rta_lb_create(MPI_COMM_WORLD, root, &cfg, &ctx, &comm), 0);
  for (int s = 0; s < NSTEPS; s++) {
    CHECK_EQ(rta_task_begin(task), 0);
    cpu_spin(0.001);
    CHECK_EQ(rta_task_end(task), 0);
    double x = 1, y = 0;
    MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, comm);
    CHECK(y == np);
    if (me == np - 1 && sleep > 0)
      sleep_ms(sleep);
    CHECK_EQ(rta_lb_perform(ctx, &comm), 0);
  }

  /* ---- PIA: MPI_Init in no MPI total ---- */
  pia_actdata_t all, init, one;
  pia_actdata_init(&all);
  pia_actdata_init(&init);
  CHECK_EQ(pia_activity_data(pia_activity_find(PIA_GROUP_ALL), &all), 0);
  CHECK_EQ(pia_activity_data(pia_activity_find("MPI_Init"), &init), 0);
  pia_regdata_t main_r;
  CHECK_EQ(pia_region_data(PIA_REGION_MAIN, &main_r), 0);
  CHECK_EQ(init.ncalls, 1);
  CHECK_DLT(0.0, init.tsum);
  /* the whole program's MPI time (%mpi's numerator) is MPI_ALL's time */
  CHECK_DLE(fabs(all.tsum - main_r.mtime), 1e-9 + 1e-9 * main_r.mtime);
  long long calls = 0;
  int nact = pia_activity_count();
  for (int a = 0; a < nact; a++) {
    const char *name = pia_activity_name(a);
    if (!name || !strncmp(name, "MPI_ALL", 7) || !strcmp(name, "MPI_P2P") ||
        !strcmp(name, "MPI_COLL") || !strcmp(name, "MPI_RMA") || !strcmp(name, "MPI_IO") ||
        !strcmp(name, "MPI_Init") || !strcmp(name, "MPI_Init_thread") ||
        !strcmp(name, "MPI_Finalize"))
      continue;
    pia_actdata_init(&one);
    CHECK_EQ(pia_activity_data(a, &one), 0);
    calls += one.ncalls;
  }
  CHECK_EQ(all.ncalls, calls);

  CHECK_EQ(rta_lb_destroy(ctx), 0);
  CHECK_EQ(rta_task_remove(root), 0);
  rta_reset();
  if (me == 0)
    printf("figures_app: %d ranks, sleep %.0f ms, %d steps\n", np, sleep, NSTEPS);
  MPI_Finalize();
  return 0;
}
