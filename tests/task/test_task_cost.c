/* The cost model: tasks that busy-wait for known relative times each step
 * (1 : 4 : 16) get moving averages in that order and ratio (within a loose
 * band: this is not a timing test), the window holds the configured number
 * of steps, and measurements replace estimates after min_steps. */
#include <ballast/rta.h>

#include <time.h>

#include "test_util.h"

static double cpu_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

/* Spin until the thread has used \a s seconds of CPU: the region's wall time
 * is at least \a s, and on a loaded machine every spin is stretched by about
 * the same factor, so the ratios between tasks survive (a wall-clock spin
 * would add one scheduling delay to each, squashing the ratios). */
static void spin(double s) {
  double t0 = cpu_now();
  volatile double x = 0;
  while (cpu_now() - t0 < s)
    x += 1;
}

/* Run with BALLAST_MONITOR=0: tasks still begin and end, nothing is
 * measured, rta_step says monitoring is off, and estimates serve. */
static void monitoring_off(void) {
  rta_task_t *root, *k;
  const char *rn[] = {"off"}, *kn[] = {"k"};
  rta_task_params_t p = RTA_TASK_PARAMS_INIT;
  p.est_work = 5;
  CHECK_EQ(rta_task_define(NULL, 1, rn, NULL, &root), 0);
  CHECK_EQ(rta_task_define(root, 1, kn, &p, &k), 0);
  for (int s = 0; s < 4; s++) {
    CHECK_EQ(rta_task_begin(k), 0);
    spin(0.001);
    CHECK_EQ(rta_task_end(k), 0);
    CHECK_EQ(rta_step(), BALLAST_EDISABLED);
  }
  rta_task_cost_t c;
  CHECK_EQ(rta_task_cost(k, &c), 0);
  CHECK_EQ(c.nsteps, 0);
  CHECK_EQ(c.measured, 0);
  CHECK(c.est_work == 5.0);
  CHECK_EQ(rta_steps(), 4);
  CHECK_EQ(rta_reset(), 0);
  TEST_PASS("task_cost: monitoring off");
}

/* One run of the synthetic workload. The bookkeeping is checked hard; the
 * timing ratios are returned (1: inside their band), so a run spoiled by a
 * loaded machine can be repeated. */
static int run_attempt(int attempt) {
  rta_cost_config_t cfg = {4, 3};
  CHECK_EQ(rta_cost_config_set(&cfg), 0);
  rta_task_t *root, *k[4];
  const char *rn[] = {"cost"};
  const char *kn[] = {"a", "b", "c", "once"};
  rta_task_params_t p[4];
  for (int i = 0; i < 4; i++) {
    p[i] = (rta_task_params_t)RTA_TASK_PARAMS_INIT;
    p[i].est_work = 10.0 * (i + 1);
  }
  CHECK_EQ(rta_task_define(NULL, 1, rn, NULL, &root), 0);
  CHECK_EQ(rta_task_define(root, 4, kn, p, k), 0);

  rta_task_cost_t c;
  CHECK_EQ(rta_task_cost(k[0], &c), 0);
  CHECK_EQ(c.measured, 0);
  CHECK_EQ(c.nsteps, 0);
  CHECK(c.est_work == 10.0);
  CHECK_EQ(rta_task_cost(NULL, &c), BALLAST_EINVAL);

  const double unit = 0.005;
  long long s0 = rta_steps();
  for (int step = 0; step < 6; step++) {
    CHECK_EQ(rta_task_begin(root), 0);
    for (int i = 0; i < 3; i++) {
      CHECK_EQ(rta_task_begin(k[i]), 0);
      spin(unit * (i == 0 ? 1 : i == 1 ? 2 : 16));
      CHECK_EQ(rta_task_end(k[i]), 0);
    }
    /* "b" runs twice in a step: its step time is the sum of both. */
    CHECK_EQ(rta_task_begin(k[1]), 0);
    spin(unit * 2);
    CHECK_EQ(rta_task_end(k[1]), 0);
    if (step == 0) {
      CHECK_EQ(rta_task_begin(k[3]), 0);
      spin(unit);
      CHECK_EQ(rta_task_end(k[3]), 0);
    }
    CHECK_EQ(rta_task_end(root), 0);
    CHECK_EQ(rta_step(), 0);
    CHECK_EQ(rta_task_cost(k[0], &c), 0);
    CHECK_EQ(c.nsteps, step + 1 < 4 ? step + 1 : 4);
    CHECK_EQ(c.total_steps, step + 1);
    /* Estimates until min_steps (3) are measured. */
    CHECK_EQ(c.measured, step + 1 >= 3);
  }
  CHECK_EQ(rta_steps() - s0, 6);

  rta_task_cost_t ca, cb, cc, co, cr;
  CHECK_EQ(rta_task_cost(k[0], &ca), 0);
  CHECK_EQ(rta_task_cost(k[1], &cb), 0);
  CHECK_EQ(rta_task_cost(k[2], &cc), 0);
  CHECK_EQ(rta_task_cost(k[3], &co), 0);
  CHECK_EQ(rta_task_cost(root, &cr), 0);
  CHECK_DGE(ca.avg_time, unit);
  CHECK_DGE(cb.avg_time, 4 * unit);
  CHECK_DGE(cc.avg_time, 16 * unit);
  /* a : b : c = 1 : 4 : 16 (b runs twice for 2 units). Soft checks, in a
   * loose band: on a loaded machine a preempted spin lasts longer. */
  double rab = cb.avg_time / ca.avg_time, rbc = cc.avg_time / cb.avg_time;
  int ok = ca.avg_time < cb.avg_time && cb.avg_time < cc.avg_time &&
           rab > 2.0 && rab < 10.0 && rbc > 2.0 && rbc < 10.0;
  if (!ok)
    fprintf(stderr, "attempt %d: b/a %.2f c/b %.2f (expected 4 and 4)\n",
            attempt, rab, rbc);
  CHECK_DGT(ca.last_time, 0);
  /* The root's region includes its children: at least their sum. */
  CHECK_DGE(cr.avg_time, ca.avg_time + cb.avg_time + cc.avg_time);
  /* "once" ran in one step only: one sample, still on its estimate. */
  CHECK_EQ(co.nsteps, 1);
  CHECK_EQ(co.measured, 0);
  CHECK(co.est_work == 40.0);

  /* A smaller window keeps the most recent samples; min_steps is clamped. */
  CHECK_EQ(rta_cost_set_window(2), 0);
  CHECK_EQ(rta_cost_config_get(&cfg), 0);
  CHECK_EQ(cfg.window, 2);
  CHECK_EQ(cfg.min_steps, 2);
  CHECK_EQ(rta_task_cost(k[2], &cc), 0);
  CHECK_EQ(cc.nsteps, 2);
  CHECK_EQ(cc.measured, 1);

  /* A step in which a task's time jumps moves its average the right way. */
  CHECK_EQ(rta_task_begin(k[0]), 0);
  spin(unit * 16);
  CHECK_EQ(rta_task_end(k[0]), 0);
  CHECK_EQ(rta_step(), 0);
  rta_task_cost_t ca2;
  CHECK_EQ(rta_task_cost(k[0], &ca2), 0);
  ok = ok && ca2.avg_time > 2 * ca.avg_time;
  CHECK_DGE(ca2.last_time, unit * 16);
  CHECK_EQ(ca2.total_steps, 7);
  CHECK_EQ(ca2.nsteps, 2);
  CHECK_EQ(rta_reset(), 0);
  return ok;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  if (argc > 1 && strcmp(argv[1], "off") == 0) {
    monitoring_off();
    MPI_Finalize();
    return 0;
  }
  rta_cost_config_t cfg;
  CHECK_EQ(rta_cost_config_get(&cfg), 0);
  CHECK_EQ(cfg.window, 10);
  CHECK_EQ(cfg.min_steps, 3);
  /* Bad configurations, each rejected and leaving the old one. */
  CHECK_EQ(rta_cost_config_set(NULL), BALLAST_EINVAL);
  CHECK_EQ(rta_cost_config_get(NULL), BALLAST_EINVAL);
  cfg.window = 0;
  CHECK_EQ(rta_cost_config_set(&cfg), BALLAST_EINVAL);
  cfg.window = 4;
  cfg.min_steps = 5;
  CHECK_EQ(rta_cost_config_set(&cfg), BALLAST_EINVAL);
  cfg.min_steps = 0;
  CHECK_EQ(rta_cost_config_set(&cfg), BALLAST_EINVAL);
  CHECK_EQ(rta_cost_set_window(0), BALLAST_EINVAL);
  cfg.min_steps = 3;
  CHECK_EQ(rta_cost_config_set(&cfg), 0);

  int ok = 0;
  for (int attempt = 0; attempt < 5 && !ok; attempt++)
    ok = run_attempt(attempt);
  CHECK(ok);
  TEST_PASS("task_cost: moving averages and estimate switch");

  CHECK_EQ(rta_cost_config_get(&cfg), 0);
  CHECK_EQ(cfg.window, 10); /* rta_reset restored the defaults */
  MPI_Finalize();
  return 0;
}
