/* The automatic policy wired into rta_lb_perform(): a busy-loop
 * workload, all heavy tasks on rank 0, is remapped exactly when the policy
 * decides so (never during warm-up or while the window fills, each remap
 * with reason "imbalanced", imbalance over the threshold and gain over the
 * cost), and the remap spreads the work. BALLAST_LB=off makes the call do
 * nothing at all; BALLAST_LB=explicit overrides an automatic configuration. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ballast/rta.h>

#include "cpu_spin.h"
#include "test_util.h"

#define NT 12
#define UNIT 0.002 /* seconds of busy loop per unit of work */

static int me, np;
static long long total_remaps, total_moved; /* over every context: the profile's figures */

static double work_of(int id) { return id < NT / 2 ? 4.0 : 1.0; }


/* max/avg over ranks of the work this rank's tasks carry (deterministic). */
static double work_imbalance(rta_lb_context_t *ctx) {
  double w = 0, mx, sum;
  for (int i = 0; i < rta_lb_nlocal(ctx); i++)
    w += work_of(atoi(rta_task_name(rta_lb_local_task(ctx, i)) + 1));
  MPI_Allreduce(&w, &mx, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(&w, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return mx / (sum / np);
}

static rta_task_t *setup(const char *rootname) {
  const char *rn = rootname;
  rta_task_t *root;
  rta_task_params_t rp = RTA_TASK_PARAMS_INIT;
  CHECK_EQ(rta_task_define(NULL, 1, &rn, &rp, &root), 0);
  /* Heavy tasks (ids < NT/2) all on rank 0, light ones spread over the rest. */
  for (int id = 0; id < NT; id++) {
    int owner = id < NT / 2 ? 0 : 1 + id % (np - 1);
    if (owner != me)
      continue;
    char name[16];
    snprintf(name, sizeof name, "t%02d", id);
    const char *nm = name;
    rta_task_params_t p = RTA_TASK_PARAMS_INIT;
    p.est_work = 1.0; /* estimates say nothing: measurements must decide */
    CHECK_EQ(rta_task_define(root, 1, &nm, &p, NULL), 0);
  }
  return root;
}

static void run_steps(rta_lb_context_t *ctx) {
  for (int i = 0; i < rta_lb_nlocal(ctx); i++) {
    rta_task_t *t = rta_lb_local_task(ctx, i);
    CHECK_EQ(rta_task_begin(t), 0);
    cpu_spin(UNIT * work_of(atoi(rta_task_name(t) + 1)));
    CHECK_EQ(rta_task_end(t), 0);
  }
}

static void test_auto(void) {
  rta_task_t *root = setup("au");
  rta_lb_config_t cfg;
  rta_lb_config_init(&cfg);
  cfg.use_env = 0;
  cfg.policy.mode = RTA_POLICY_AUTO;
  cfg.policy.warmup = 2;
  cfg.policy.window = 4;
  cfg.policy.threshold = 1.3;
  cfg.policy.horizon = 100;
  cfg.strategy = RTA_MAP_TWOPHASE;
  rta_lb_context_t *ctx;
  MPI_Comm comm;
  CHECK_EQ(rta_lb_create(MPI_COMM_WORLD, root, &cfg, &ctx, &comm), 0);
  double before = work_imbalance(ctx);
  CHECK_DGT(before, 1.5);
  long long remaps = 0, since = 0;
  int first_remap_step = -1;
  for (int step = 0; step < 24; step++) {
    run_steps(ctx);
    CHECK_EQ(rta_lb_perform(ctx, &comm), 0);
    rta_decision_t d;
    rta_lb_stats_t s;
    CHECK_EQ(rta_lb_last_decision(ctx, &d), 0);
    CHECK_EQ(rta_lb_stats(ctx, &s), 0);
    /* A remap happened exactly when the policy said so. */
    CHECK_EQ(s.remaps + s.failed_remaps, remaps + d.remap);
    since++;
    if (d.remap) {
      CHECK_EQ((int)d.reason, (int)RTA_REASON_IMBALANCED);
      CHECK_DGT(d.imbalance, cfg.policy.threshold);
      CHECK_DGT(d.predicted_gain, d.remap_cost);
      /* never before a warm-up and a full window since start or the last remap */
      CHECK_GE(since, cfg.policy.warmup + cfg.policy.window);
      since = 0;
      if (first_remap_step < 0)
        first_remap_step = step;
    } else {
      CHECK((int)d.reason != (int)RTA_REASON_IMBALANCED);
      if (since <= cfg.policy.warmup)
        CHECK_EQ((int)d.reason, (int)RTA_REASON_WARMUP);
    }
    remaps = s.remaps + s.failed_remaps;
  }
  CHECK_GE(first_remap_step, 0);
  rta_lb_stats_t s;
  rta_lb_stats(ctx, &s);
  CHECK_GE(s.remaps, 1);
  CHECK_EQ(s.failed_remaps, 0);
  CHECK_GT(s.tasks_moved, 0);
  CHECK_DGT(s.imbalance_before, cfg.policy.threshold);
  CHECK_DGT(s.seconds_mapping, 0);
  double after = work_imbalance(ctx);
  CHECK_DLT(after, before);
  total_remaps += s.remaps;
  total_moved += s.tasks_moved;
  CHECK_EQ(rta_lb_destroy(ctx), 0);
  CHECK_EQ(rta_task_remove(root), 0);
  TEST_PASS("lbauto: remaps exactly when the policy says, work spread");
}

static void test_env_off(void) {
  setenv("BALLAST_LB", "off", 1);
  rta_task_t *root = setup("off");
  rta_lb_config_t cfg;
  rta_lb_config_init(&cfg); /* auto in code, off from the environment */
  rta_lb_context_t *ctx;
  MPI_Comm comm;
  CHECK_EQ(rta_lb_create(MPI_COMM_WORLD, root, &cfg, &ctx, &comm), 0);
  CHECK_EQ((int)rta_lb_policy(ctx)->mode, (int)RTA_POLICY_OFF);
  long long steps0 = rta_steps();
  MPI_Comm c0 = comm;
  for (int step = 0; step < 30; step++) {
    run_steps(ctx);
    CHECK_EQ(rta_lb_perform(ctx, &comm), 0);
    CHECK(comm == c0);
  }
  CHECK_EQ(rta_steps(), steps0); /* no step closed, nothing measured */
  rta_lb_stats_t s;
  rta_lb_stats(ctx, &s);
  CHECK_EQ(s.calls, 30);
  CHECK_EQ(s.steps, 0);
  CHECK_EQ(s.remaps, 0);
  CHECK_EQ(s.tasks_moved, 0);
  rta_decision_t d;
  rta_lb_last_decision(ctx, &d);
  CHECK_EQ(d.remap, 0);
  CHECK_DGT(work_imbalance(ctx), 1.5); /* nothing moved */
  CHECK_EQ(rta_lb_destroy(ctx), 0);
  CHECK_EQ(rta_task_remove(root), 0);

  /* explicit from the environment: every call remaps */
  setenv("BALLAST_LB", "explicit", 1);
  root = setup("ex");
  CHECK_EQ(rta_lb_create(MPI_COMM_WORLD, root, &cfg, &ctx, &comm), 0);
  for (int step = 0; step < 3; step++) {
    run_steps(ctx);
    CHECK_EQ(rta_lb_perform(ctx, &comm), 0);
    rta_lb_last_decision(ctx, &d);
    CHECK_EQ((int)d.reason, (int)RTA_REASON_EXPLICIT);
  }
  rta_lb_stats(ctx, &s);
  CHECK_EQ(s.remaps, 3);
  total_remaps += s.remaps;
  total_moved += s.tasks_moved;
  CHECK_EQ(rta_lb_destroy(ctx), 0);
  CHECK_EQ(rta_task_remove(root), 0);
  unsetenv("BALLAST_LB");
  TEST_PASS("lbauto: BALLAST_LB=off does nothing, explicit overrides");
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  test_auto();
  test_env_off();
  rta_reset();
  MPI_Finalize();
  /* The profile (BALLAST_PROFILE, written by rank 0 at MPI_Finalize) carries
   * load balancing's section, with the destroyed contexts' figures. */
  const char *path = getenv("BALLAST_PROFILE");
  if (me == 0 && path) {
    FILE *f = fopen(path, "r");
    CHECK(f != NULL);
    static char buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    const char *lb = strstr(buf, "\"load_balancing\":{");
    CHECK(lb != NULL);
    long long contexts = -1, remaps = -1, moved = -1;
    CHECK(sscanf(lb, "\"load_balancing\":{\"contexts\":%lld", &contexts) == 1);
    CHECK_EQ(contexts, 3);
    const char *r = strstr(lb, "\"remaps\":");
    CHECK(r && sscanf(r, "\"remaps\":%lld", &remaps) == 1);
    CHECK_EQ(remaps, total_remaps);
    const char *m = strstr(lb, "\"tasks_moved\":");
    CHECK(m && sscanf(m, "\"tasks_moved\":%lld", &moved) == 1);
    CHECK_EQ(moved, total_moved);
    CHECK(strstr(lb, "\"seconds_mapping\":") && strstr(lb, "\"imbalance_before\":"));
    printf("PASS lbauto: the profile records load balancing\n");
  }
  return 0;
}
