/* The remap action: an assertion created with PIA_ASSERT_REMAP that fails on
 * one rank makes the next rta_lb_perform() remap on every rank
 * of the context (the request is agreed), although the policy alone never
 * would (threshold far above the imbalance); the request is consumed, so the
 * following calls do not remap; a failing assertion without the flag does
 * not remap. Two ranks. */
#include <stdio.h>

#include <ballast.h>

#include "test_util.h"

#define NT 6

static int me, np, step;

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  const char *rn = "root";
  rta_task_t *root;
  rta_task_params_t rp = RTA_TASK_PARAMS_INIT;
  CHECK_EQ(rta_task_define(NULL, 1, &rn, &rp, &root), 0);
  for (int id = 0; id < NT; id++) {
    if (id % np != me)
      continue;
    char name[16];
    snprintf(name, sizeof name, "t%d", id);
    const char *nm = name;
    rta_task_params_t p = RTA_TASK_PARAMS_INIT;
    p.est_work = 1.0 + id;
    CHECK_EQ(rta_task_define(root, 1, &nm, &p, NULL), 0);
  }
  rta_lb_config_t cfg;
  rta_lb_config_init(&cfg);
  cfg.use_env = 0;
  cfg.policy.mode = RTA_POLICY_AUTO;
  cfg.policy.warmup = 1;
  cfg.policy.window = 3;
  cfg.policy.threshold = 50; /* the policy alone never remaps */
  rta_lb_context_t *ctx;
  MPI_Comm comm;
  CHECK_EQ(rta_lb_create(MPI_COMM_WORLD, root, &cfg, &ctx, &comm), 0);

  CHECK_EQ(pia_assert_var_register("step", PIA_VAR_INT, &step), 0);
  int plain, remap;
  CHECK_EQ(pia_assert_create("$step != 1", &plain), 0); /* fails at step 1: no remap */
  pia_assert_options_t o;
  pia_assert_options_init(&o);
  o.expr = "rank == 0 | $step != 3"; /* fails on rank 1 only, at step 3 */
  o.flags = PIA_ASSERT_REMAP;
  CHECK_EQ(pia_assert_create_ex(&o, &remap), 0);
  long long prev = 0;
  for (step = 0; step < 6; step++) {
    CHECK_EQ(pia_assert_begin(plain), 0);
    CHECK_EQ(pia_assert_begin(remap), 0);
    CHECK_EQ(pia_assert_end(remap), me == 1 && step == 3 ? 0 : 1);
    CHECK_EQ(pia_assert_end(plain), step == 1 ? 0 : 1);
    CHECK_EQ(rta_lb_perform(ctx, &comm), 0);
    rta_lb_stats_t s;
    CHECK_EQ(rta_lb_stats(ctx, &s), 0);
    long long now = s.remaps + s.failed_remaps;
    rta_decision_t d;
    CHECK_EQ(rta_lb_last_decision(ctx, &d), 0);
    CHECK_EQ(d.remap, step == 3);
    CHECK_EQ(now - prev, step == 3 ? 1 : 0);
    prev = now;
  }
  CHECK_EQ(prev, 1);
  CHECK_EQ(rta_lb_destroy(ctx), 0);
  CHECK_EQ(rta_task_remove(root), 0);
  rta_reset();
  TEST_PASS("assert_lb");
  MPI_Finalize();
  return 0;
}
