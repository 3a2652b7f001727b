/* Noise or imbalance, on real runs through rta_lb_perform()
 * (public headers only): 16 equal tasks per rank, a busy loop on the
 * thread's CPU clock, disturbances injected by the rank a task runs on
 * (ratios, no absolute time is asserted).
 *  - noise into a balanced run: one rank with 5% of its steps 10x slower;
 *    every rank 20% slower for a window; a different rank hit (1.5x) each
 *    window: 0 remaps each, and the decisions say what they saw;
 *  - imbalance: one rank persistently 1.3x slower (a slower node): a remap
 *    within two windows of the warm-up's end;
 *  - a warm-up (every rank 2x slower for its first 12 steps): its end found
 *    within 3 steps;
 *  - a task left open when a remap is due: called off on every rank;
 *  - the traffic: a tool linked in counts ballast's own MPI calls per step
 *    (lib = 1): one MPI_Iallreduce (128 bytes) and one MPI_Wait, nothing else, as
 *    rta_policy.h states, and no MPI_Allgather at all. */
#include <stdlib.h>
#include <string.h>

#include <ballast.h>

#include "cpu_spin.h"
#include "test_util.h"

#define PER 16         /* tasks per rank */
#define UNIT 0.00025   /* CPU seconds of one task's work */
#define WIN 10         /* the policy's window */

static int me, np;

/* ballast's own MPI calls, by name, while counting is on */
static int counting;
static long n_iallreduce, n_wait, n_other;
static uint64_t iallreduce_bytes;

static void on_exit_cb(const ballast_tool_mpi_exit_t *e, void *ud) {
  (void)ud;
  if (!counting || !e->lib)
    return;
  if (!strcmp(e->name, "MPI_Iallreduce")) {
    n_iallreduce++;
    iallreduce_bytes += e->posted_bytes;
  } else if (!strcmp(e->name, "MPI_Wait")) {
    n_wait++;
  } else {
    n_other++;
    fprintf(stderr, "[rank %d] ballast's own %s during a step\n", me, e->name);
  }
}

static int tool_init(const ballast_tool_api_v1_t *api, ballast_tool_t *tool) {
  return api->on_mpi_exit(tool, on_exit_cb, NULL);
}

/* The slowdown of this rank at \a step (0-based) in scenario \a sc. */
static double factor(const char *sc, int step) {
  if (!strcmp(sc, "spikes")) /* rank 1: 1 step in 20 (5%) 10x */
    return me == 1 && step % 20 == 7 ? 10.0 : 1.0;
  if (!strcmp(sc, "machine")) /* every rank 1.2x for steps 40-49 */
    return step >= 40 && step < 50 ? 1.2 : 1.0;
  if (!strcmp(sc, "moving")) /* window-long hits, rank k mod np in the k-th */
    return (step / WIN) % np == me ? 1.5 : 1.0;
  if (!strcmp(sc, "slow")) /* a slower node */
    return me == 1 ? 1.3 : 1.0;
  if (!strcmp(sc, "warmup"))
    return step < 12 ? 2.0 : 1.0;
  return 1.0;
}

typedef struct {
  int remaps, first_remap;   /* first_remap: the step, -1 none */
  long long warmup_end;
  int judged, noise, unconfirmed, outliers_seen, machine_seen;
} outcome_t;

static outcome_t run(const char *sc, int steps) {
  char rootname[32];
  snprintf(rootname, sizeof rootname, "noise_%s", sc);
  const char *rn = rootname;
  rta_task_t *root;
  rta_task_params_t rp = RTA_TASK_PARAMS_INIT;
  CHECK_EQ(rta_task_define(NULL, 1, &rn, &rp, &root), 0);
  for (int i = 0; i < PER; i++) {
    char name[24];
    snprintf(name, sizeof name, "r%dt%02d", me, i);
    const char *nm = name;
    rta_task_params_t p = RTA_TASK_PARAMS_INIT;
    p.est_work = 1.0;
    CHECK_EQ(rta_task_define(root, 1, &nm, &p, NULL), 0);
  }
  rta_lb_config_t cfg;
  rta_lb_config_init(&cfg);
  cfg.use_env = 0;
  cfg.policy.mode = RTA_POLICY_AUTO;
  cfg.policy.window = WIN; /* warm-up: the default (detected, at most 20 steps) */
  rta_lb_context_t *ctx;
  MPI_Comm comm;
  CHECK_EQ(rta_lb_create(MPI_COMM_WORLD, root, &cfg, &ctx, &comm), 0);
  outcome_t o = {0, -1, 0, 0, 0, 0, 0, 0};
  for (int step = 0; step < steps; step++) {
    double f = factor(sc, step);
    for (int i = 0; i < rta_lb_nlocal(ctx); i++) {
      rta_task_t *t = rta_lb_local_task(ctx, i);
      CHECK_EQ(rta_task_begin(t), 0);
      cpu_spin(UNIT * f);
      CHECK_EQ(rta_task_end(t), 0);
    }
    CHECK_EQ(rta_lb_perform(ctx, &comm), 0);
    rta_decision_t d;
    CHECK_EQ(rta_lb_last_decision(ctx, &d), 0);
    if (d.remap) {
      o.remaps++;
      if (o.first_remap < 0)
        o.first_remap = step;
    }
    if (d.imbalance > 0) {
      o.judged++;
      o.noise += d.reason == RTA_REASON_NOISE;
      o.unconfirmed += d.reason == RTA_REASON_UNCONFIRMED;
      o.outliers_seen += (d.noise & RTA_NOISE_OUTLIERS) != 0;
      o.machine_seen += (d.noise & RTA_NOISE_MACHINE) != 0;
    }
    if (d.warmup_end > 0 && !o.warmup_end)
      o.warmup_end = d.warmup_end;
  }
  rta_lb_stats_t s;
  CHECK_EQ(rta_lb_stats(ctx, &s), 0);
  CHECK_EQ(s.remaps, o.remaps);
  if (me == 0)
    printf("%s: %d remap(s) (first at step %d), warm-up end %lld, %d windows judged: "
           "%d noise, %d unconfirmed, outliers seen in %d, slower machine in %d\n",
           sc, o.remaps, o.first_remap, o.warmup_end, o.judged, o.noise, o.unconfirmed,
           o.outliers_seen, o.machine_seen);
  CHECK_EQ(rta_lb_destroy(ctx), 0);
  CHECK_EQ(rta_task_remove(root), 0);
  return o;
}

static void noise_cases(void) {
  outcome_t o = run("spikes", 100);
  CHECK_EQ(o.remaps, 0);
  CHECK_GE(o.judged, 5);
  CHECK_GE(o.outliers_seen, 1); /* the spikes were seen, and left out */
  TEST_PASS("lbnoise: 5% of one rank's steps 10x slower: no remap");
  o = run("machine", 100);
  CHECK_EQ(o.remaps, 0);
  CHECK_GE(o.judged, 5);
  TEST_PASS("lbnoise: every rank 20% slower for a window: no remap");
  o = run("moving", 120);
  CHECK_EQ(o.remaps, 0);
  CHECK_GE(o.judged, 6);
  TEST_PASS("lbnoise: a different rank hit each window: no remap");
}

static void imbalance_case(void) {
  outcome_t o = run("slow", 80);
  CHECK_GE(o.remaps, 1);
  CHECK_GT(o.warmup_end, 0);
  /* two windows after the warm-up's end, and the reduction's one call */
  CHECK_LE(o.first_remap, o.warmup_end + 2 * WIN + 1);
  TEST_PASS("lbnoise: one rank persistently 1.3x slower: remapped within two windows");
}

static void warmup_case(void) {
  outcome_t o = run("warmup", 40);
  CHECK_GE(o.warmup_end, 12);
  CHECK_LE(o.warmup_end, 12 + 3);
  CHECK_EQ(o.remaps, 0);
  TEST_PASS("lbnoise: a 12-step warm-up's end found within 3 steps");
}

/* ballast's own traffic per step, counted by a tool: the steady state of a
 * balanced run (no remap), after the warm-up. */
static void traffic_case(void) {
  const char *rn = "traffic";
  rta_task_t *root;
  rta_task_params_t rp = RTA_TASK_PARAMS_INIT;
  CHECK_EQ(rta_task_define(NULL, 1, &rn, &rp, &root), 0);
  char name[24];
  snprintf(name, sizeof name, "x%d", me);
  const char *nm = name;
  rta_task_params_t p = RTA_TASK_PARAMS_INIT;
  CHECK_EQ(rta_task_define(root, 1, &nm, &p, NULL), 0);
  rta_lb_config_t cfg;
  rta_lb_config_init(&cfg);
  cfg.use_env = 0;
  cfg.policy.mode = RTA_POLICY_AUTO;
  cfg.policy.window = 5;
  cfg.policy.warmup = 2;
  cfg.policy.threshold = 1.5; /* balanced: no remap may come into the count */
  rta_lb_context_t *ctx;
  MPI_Comm comm;
  CHECK_EQ(rta_lb_create(MPI_COMM_WORLD, root, &cfg, &ctx, &comm), 0);
  const int steps = 40;
  for (int step = 0; step < steps + 5; step++) {
    counting = step >= 5;
    rta_task_t *t = rta_lb_local_task(ctx, 0);
    CHECK_EQ(rta_task_begin(t), 0);
    cpu_spin(UNIT);
    CHECK_EQ(rta_task_end(t), 0);
    CHECK_EQ(rta_lb_perform(ctx, &comm), 0);
  }
  counting = 0;
  rta_lb_stats_t s;
  CHECK_EQ(rta_lb_stats(ctx, &s), 0);
  CHECK_EQ(s.remaps, 0);
  CHECK_EQ(n_iallreduce, steps);
  CHECK_EQ(n_wait, steps);
  CHECK_EQ(n_other, 0);
  /* 16 doubles per step, whatever the number of ranks: mon counts a
   * reduction's send and receive buffers, 128 + 128 bytes */
  CHECK_EQ(iallreduce_bytes, (uint64_t)steps * 2 * 16 * sizeof(double));
  CHECK_EQ(rta_lb_destroy(ctx), 0);
  CHECK_EQ(rta_task_remove(root), 0);
  TEST_PASS("lbnoise: per step, ballast's own traffic is one MPI_Iallreduce of 128 "
            "bytes and its MPI_Wait");
}

/* A task left open under the automatic policy: the call that would remap
 * (balance_estimates: the first) is called off on every rank with
 * BALLAST_ESTATE; at the next call the remap from the estimates happens. */
static void open_task_case(void) {
  const char *rn = "opentask";
  rta_task_t *root;
  rta_task_params_t rp = RTA_TASK_PARAMS_INIT;
  CHECK_EQ(rta_task_define(NULL, 1, &rn, &rp, &root), 0);
  for (int i = 0; i < 4; i++) {
    char name[24];
    snprintf(name, sizeof name, "r%dt%d", me, i);
    const char *nm = name;
    rta_task_params_t p = RTA_TASK_PARAMS_INIT;
    p.est_work = me == 0 ? 3.0 : 1.0; /* rank 0 holds 3x the estimated work */
    CHECK_EQ(rta_task_define(root, 1, &nm, &p, NULL), 0);
  }
  rta_lb_config_t cfg;
  rta_lb_config_init(&cfg);
  cfg.use_env = 0;
  cfg.policy.mode = RTA_POLICY_AUTO;
  cfg.balance_estimates = 1;
  rta_lb_context_t *ctx;
  MPI_Comm comm;
  CHECK_EQ(rta_lb_create(MPI_COMM_WORLD, root, &cfg, &ctx, &comm), 0);
  rta_task_t *t = rta_lb_local_task(ctx, 0);
  if (me == 0)
    CHECK_EQ(rta_task_begin(t), 0);
  CHECK_EQ(rta_lb_perform(ctx, &comm), BALLAST_ESTATE);
  rta_lb_stats_t s;
  CHECK_EQ(rta_lb_stats(ctx, &s), 0);
  CHECK_EQ(s.remaps, 0);
  if (me == 0)
    CHECK_EQ(rta_task_end(t), 0);
  CHECK_EQ(rta_lb_perform(ctx, &comm), 0);
  rta_decision_t d;
  CHECK_EQ(rta_lb_last_decision(ctx, &d), 0);
  CHECK_EQ(d.reason, RTA_REASON_ESTIMATED);
  CHECK_EQ(rta_lb_stats(ctx, &s), 0);
  CHECK_EQ(s.remaps, 1);
  CHECK_GE(s.tasks_moved, 1); /* the estimates were imbalanced: 12 against 4 */
  CHECK_EQ(rta_lb_perform(ctx, &comm), 0);
  CHECK_EQ(rta_lb_destroy(ctx), 0);
  CHECK_EQ(rta_task_remove(root), 0);
  TEST_PASS("lbnoise: a task left open calls the remap off on every rank; the "
            "estimates balance at the next call");
}

int main(int argc, char **argv) {
  CHECK_EQ(ballast_tool_attach("lbnoise_count", tool_init), 0);
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  traffic_case();
  open_task_case();
  noise_cases();
  imbalance_case();
  warmup_case();
  MPI_Finalize();
  return 0;
}
