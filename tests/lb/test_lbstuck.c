/* Two ways the automatic policy could get stuck, on real runs (2 ranks):
 * - the application calls rta_step() itself and then
 *   rta_lb_perform(), which the header invites: the call must
 *   not close a second, empty step, see no task time and judge wall time.
 *   Rank 1 sleeps outside its tasks, so wall time is imbalanced (about
 *   1.5) while the tasks are balanced: the judgement must be the one of a
 *   single rta_step() per step (balanced, no remap), in both calling
 *   patterns;
 * - placement mode where no permutation helps (rank 0's task is 3x rank
 *   1's): the policy must not remap every two windows moving
 *   nothing; each candidate is dropped and the next one waits longer. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ballast/rta.h>

#include "cpu_spin.h"
#include "test_util.h"

static int me, np;


static void nap(double seconds) {
  struct timespec ts = {0, (long)(seconds * 1e9)};
  nanosleep(&ts, NULL);
}

static rta_lb_config_t config(void) {
  rta_lb_config_t cfg;
  rta_lb_config_init(&cfg);
  cfg.use_env = 0;
  cfg.policy.mode = RTA_POLICY_AUTO;
  cfg.policy.warmup = 2;
  cfg.policy.window = 5;
  cfg.policy.threshold = 1.3;
  cfg.policy.horizon = 100;
  return cfg;
}

/* Defines root \a name with \a per tasks on this rank. */
static rta_task_t *define(const char *name, int per) {
  rta_task_t *root;
  rta_task_params_t rp = RTA_TASK_PARAMS_INIT;
  CHECK_EQ(rta_task_define(NULL, 1, &name, &rp, &root), 0);
  for (int i = 0; i < per; i++) {
    char nm[16];
    snprintf(nm, sizeof nm, "r%dt%d", me, i);
    const char *p = nm;
    rta_task_params_t tp = RTA_TASK_PARAMS_INIT;
    CHECK_EQ(rta_task_define(root, 1, &p, &tp, NULL), 0);
  }
  return root;
}

/* 24 steps of two balanced 2 ms tasks per rank, rank 1 sleeping 4 ms
 * outside them; \a app_steps: the application calls rta_step() before the
 * load-balancing call. Returns the largest imbalance judged. */
static double run_balanced(const char *name, int app_steps) {
  rta_task_t *root = define(name, 2);
  rta_lb_config_t cfg = config();
  rta_lb_context_t *ctx;
  MPI_Comm comm;
  CHECK_EQ(rta_lb_create(MPI_COMM_WORLD, root, &cfg, &ctx, &comm), 0);
  double worst = 0;
  int judged = 0;
  for (int step = 0; step < 24; step++) {
    for (int i = 0; i < rta_lb_nlocal(ctx); i++) {
      rta_task_t *t = rta_lb_local_task(ctx, i);
      CHECK_EQ(rta_task_begin(t), 0);
      cpu_spin(0.002);
      CHECK_EQ(rta_task_end(t), 0);
    }
    if (me == 1)
      nap(0.004);
    if (app_steps)
      CHECK_EQ(rta_step(), 0);
    CHECK_EQ(rta_lb_perform(ctx, &comm), 0);
    rta_decision_t d;
    CHECK_EQ(rta_lb_last_decision(ctx, &d), 0);
    CHECK_EQ(d.remap, 0);
    if (d.imbalance > 0) {
      judged++;
      worst = d.imbalance > worst ? d.imbalance : worst;
      /* The slowest rank's median is its task time (4 ms), not its wall
       * time (8 ms and more). */
      CHECK_DLT(d.max_time, 0.0065);
    }
  }
  /* windows of 5 steps, one after the other, from step 3: 4 judgements */
  CHECK_GE(judged, 3);
  rta_lb_stats_t s;
  CHECK_EQ(rta_lb_stats(ctx, &s), 0);
  CHECK_EQ(s.remaps, 0);
  CHECK_EQ(rta_lb_destroy(ctx), 0);
  CHECK_EQ(rta_task_remove(root), 0);
  return worst;
}

static void test_step_called_twice(void) {
  double once = run_balanced("once", 0);
  double twice = run_balanced("twice", 1);
  CHECK_DLT(once, 1.3);
  CHECK_DLT(twice, 1.3);
  CHECK_NEAR(twice, once, 0.15);
  TEST_PASS("lbstuck: rta_step() by the application and by load balancing judge as one");
}

static void test_placement_nothing_moves(void) {
  rta_task_t *root = define("place", 1);
  rta_lb_config_t cfg = config();
  cfg.policy.window = 4;
  rta_lb_context_t *ctx;
  MPI_Comm comm;
  CHECK_EQ(rta_lb_create(MPI_COMM_WORLD, root, &cfg, &ctx, &comm), 0);
  CHECK_EQ(rta_lb_placement(ctx), 1);
  int drops = 0, backoffs = 0;
  for (int step = 0; step < 60; step++) {
    rta_task_t *t = rta_lb_local_task(ctx, 0);
    CHECK_EQ(rta_task_begin(t), 0);
    cpu_spin(me == 0 ? 0.003 : 0.001);
    CHECK_EQ(rta_task_end(t), 0);
    CHECK_EQ(rta_lb_perform(ctx, &comm), 0);
    rta_decision_t d;
    CHECK_EQ(rta_lb_last_decision(ctx, &d), 0);
    CHECK_EQ(d.remap, 0);
    drops += d.reason == RTA_REASON_NOTHING_MOVES || d.reason == RTA_REASON_NOT_WORTH;
    backoffs += d.reason == RTA_REASON_BACKOFF;
  }
  rta_lb_stats_t s;
  CHECK_EQ(rta_lb_stats(ctx, &s), 0);
  /* Before: a remap of nothing every 6 steps (9 of them). Now: a candidate
   * after two imbalanced windows, then after waits of 1, 2, 4 windows (4 at
   * most in 60 steps), none carried out. */
  CHECK_EQ(s.remaps, 0);
  CHECK_EQ(s.failed_remaps, 0);
  CHECK_EQ(s.tasks_moved, 0);
  CHECK_GE(drops, 1);
  CHECK_LE(drops, 4);
  CHECK_GT(backoffs, 20);
  CHECK_EQ(rta_lb_destroy(ctx), 0);
  CHECK_EQ(rta_task_remove(root), 0);
  TEST_PASS("lbstuck: placement that no permutation helps remaps nothing and backs off");
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  test_step_called_twice();
  test_placement_nothing_moves();
  MPI_Finalize();
  return 0;
}
