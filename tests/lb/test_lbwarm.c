/* Warm start (rta_lb_warm_start(), BALLAST_LB_WARMSTART), 2 ranks.
 * A first run of a tree whose heavy tasks all start on rank 0 balances and
 * writes its profile. The same tree defined again and warm-started from that
 * profile (and from a load-balancing record written by hand): its tasks' costs are measured at once (seeded), the first
 * load-balancing call remaps to the first run's final map (every task where
 * it ended) and no later remap is needed; a new task stays where it was.
 * Refusals: another root, a tree with renamed tasks, a missing file, a file
 * that is no profile, the policy off: the code on every rank, nothing moved,
 * the run goes on and balances by itself. Through the environment: the same
 * seeding, and a bad file only warns. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <ballast/mon.h>
#include <ballast/rta.h>

#include "cpu_spin.h"
#include "test_util.h"

#define NT 12
static int me, np;
static char profile[256], garbage[256], record[256], notprof[256];
static int final_owner[NT];

static double work_of(int id) { return id < NT / 2 ? 4.0 : 1.0; }


/* Root \a rootname, NT tasks "t00".. (heavy ones on rank 0) plus \a extra
 * new tasks "n0".. on rank 1; \a prefix renames every task. */
static rta_task_t *setup(const char *rootname, const char *prefix, int extra) {
  rta_task_t *root;
  rta_task_params_t rp = RTA_TASK_PARAMS_INIT;
  CHECK_EQ(rta_task_define(NULL, 1, &rootname, &rp, &root), 0);
  for (int id = 0; id < NT + extra; id++) {
    int owner = id < NT / 2 ? 0 : id < NT ? 1 + id % (np - 1) : np - 1;
    if (owner != me)
      continue;
    char name[16];
    if (id < NT)
      snprintf(name, sizeof name, "%s%02d", prefix, id);
    else
      snprintf(name, sizeof name, "n%d", id - NT);
    const char *nm = name;
    rta_task_params_t p = RTA_TASK_PARAMS_INIT;
    p.est_work = 1.0;
    CHECK_EQ(rta_task_define(root, 1, &nm, &p, NULL), 0);
  }
  return root;
}

static rta_lb_context_t *context(rta_task_t *root, rta_policy_mode_t mode, int use_env) {
  rta_lb_config_t cfg;
  rta_lb_config_init(&cfg);
  cfg.use_env = use_env;
  cfg.policy.mode = mode;
  cfg.policy.warmup = 2;
  cfg.policy.window = 4;
  cfg.policy.threshold = 1.3;
  rta_lb_context_t *ctx;
  MPI_Comm comm;
  CHECK_EQ(rta_lb_create(MPI_COMM_WORLD, root, &cfg, &ctx, &comm), 0);
  return ctx;
}

/* One step: every local task works its share, then the load-balancing call. */
static rta_decision_t step(rta_lb_context_t *ctx) {
  for (int i = 0; i < rta_lb_nlocal(ctx); i++) {
    rta_task_t *t = rta_lb_local_task(ctx, i);
    const char *nm = rta_task_name(t);
    CHECK_EQ(rta_task_begin(t), 0);
    cpu_spin(0.001 * (nm[0] == 'n' ? 1.0 : work_of(atoi(nm + 1))));
    CHECK_EQ(rta_task_end(t), 0);
  }
  MPI_Comm comm = rta_lb_comm(ctx);
  CHECK_EQ(rta_lb_perform(ctx, &comm), 0);
  rta_decision_t d;
  CHECK_EQ(rta_lb_last_decision(ctx, &d), 0);
  return d;
}

static int owner_of(rta_lb_context_t *ctx, const char *root, const char *name) {
  char key[64];
  snprintf(key, sizeof key, "%s/%s", root, name);
  int r = -1;
  CHECK_EQ(rta_lb_task_owner(ctx, key, &r), 0);
  return r;
}

/* Known tasks ("t..") count as measured, at 1 ms x their work within
 * \a tol; new ones ("n..") are not seeded. */
static void check_seeded(rta_lb_context_t *ctx, double tol) {
  for (int i = 0; i < rta_lb_nlocal(ctx); i++) {
    rta_task_cost_t c;
    rta_task_t *t = rta_lb_local_task(ctx, i);
    CHECK_EQ(rta_task_cost(t, &c), 0);
    const char *nm = rta_task_name(t);
    CHECK_EQ(c.measured, nm[0] == 't');
    if (nm[0] == 't')
      CHECK_NEAR(c.avg_time, 0.001 * work_of(atoi(nm + 1)), tol);
  }
}

/* The cold run: balances by itself, then writes the profile. */
static void cold_run(void) {
  rta_task_t *root = setup("wm", "t", 0);
  rta_lb_context_t *ctx = context(root, RTA_POLICY_AUTO, 0);
  for (int s = 0; s < 14; s++)
    step(ctx);
  rta_lb_stats_t st;
  CHECK_EQ(rta_lb_stats(ctx, &st), 0);
  CHECK_GE(st.remaps, 1);
  int on0 = 0;
  for (int id = 0; id < NT; id++) {
    char nm[8];
    snprintf(nm, sizeof nm, "t%02d", id);
    final_owner[id] = owner_of(ctx, "wm", nm);
    on0 += final_owner[id] == 0 && id < NT / 2;
  }
  CHECK_LT(on0, NT / 2); /* heavy tasks no longer all on rank 0 */
  CHECK_EQ(rta_lb_destroy(ctx), 0);
  CHECK_EQ(rta_task_remove(root), 0);
  int rc = mon_profile_write(profile);
  CHECK_EQ(rc, 0);
  MPI_Barrier(MPI_COMM_WORLD);
  TEST_PASS("lbwarm: cold run balanced and wrote its profile");
}

/* The warm run: seeded costs, the first call adopts the final map, no
 * remap after; the new task n0 stays on its rank. */
static void warm_run(void) {
  rta_task_t *root = setup("wm", "t", 1);
  rta_lb_context_t *ctx = context(root, RTA_POLICY_AUTO, 0);
  CHECK_EQ(rta_lb_warm_start(ctx, profile), 0);
  check_seeded(ctx, 0.0012); /* the earlier run measured 4 ms or 1 ms of work */
  rta_decision_t d = step(ctx);
  CHECK_EQ(d.remap, 1);
  CHECK_EQ((int)d.reason, (int)RTA_REASON_WARM_START);
  for (int id = 0; id < NT; id++) {
    char nm[8];
    snprintf(nm, sizeof nm, "t%02d", id);
    CHECK_EQ(owner_of(ctx, "wm", nm), final_owner[id]);
  }
  CHECK_EQ(owner_of(ctx, "wm", "n0"), np - 1);
  for (int s = 0; s < 12; s++) {
    d = step(ctx);
    CHECK((int)d.reason != (int)RTA_REASON_WARM_START);
  }
  rta_lb_stats_t st;
  CHECK_EQ(rta_lb_stats(ctx, &st), 0);
  CHECK_EQ(st.remaps, 1); /* the warm map was good: nothing more to do */
  CHECK_DGT(st.imbalance_last, 0);
  CHECK_DLT(st.imbalance_last, 1.3);
  CHECK_EQ(rta_lb_destroy(ctx), 0);
  CHECK_EQ(rta_task_remove(root), 0);
  TEST_PASS("lbwarm: the warm start seeds costs and the first mapping");
}

static void refused_once(const char *rootname, const char *path);

/* A load-balancing record (src/policy/policy.h, version 2) written here by hand:
 * graph 0 at definition, graph 1 remapped after step 10 to t_i -> rank
 * i % np, then measured costs of 1 ms x work per task. */
static void write_record(void) {
  FILE *f = fopen(record, "w");
  CHECK(f != NULL);
  fprintf(f, "ballast-lbrecord 2\nC wm %d 0 twophase tasks 0 %a\n", np, 0.0);
  fprintf(f, "P auto 2 4 %a %a 100 %a\n", 1.3, 2.0, 0.0);
  for (int id = 0; id < NT; id++)
    fprintf(f, "K %d wm/t%02d\n", id, id);
  for (int g = 0; g < 2; g++) {
    fprintf(f, "G %d %d %d\n", g, g ? 10 : 0, NT);
    for (int id = 0; id < NT; id++)
      fprintf(f, "V %d 1 %d %a %a\n", id, id < NT / 2 ? 0 : 1 + id % (np - 1), 1.0, 0.0);
  }
  fprintf(f, "M 1 target");
  for (int id = 0; id < NT; id++)
    fprintf(f, " %d", id % np);
  fprintf(f, "\nR 10 1 1 0 %a %a %a %a 0 0\nX %a %a %a 1\nW 11", 6.0, 0.0, 0.01, 0.001,
          0.01, 0.001, 0.0);
  for (int id = 0; id < NT; id++)
    fprintf(f, " %d %a", id, 0.001 * work_of(id));
  fprintf(f, "\nZ 12 1 0\n");
  CHECK_EQ(fclose(f), 0);
}

/* The warm start from a record: its costs and its last committed map. */
static void record_run(void) {
  if (me == 0)
    write_record();
  MPI_Barrier(MPI_COMM_WORLD);
  rta_task_t *root = setup("wm", "t", 0);
  rta_lb_context_t *ctx = context(root, RTA_POLICY_AUTO, 0);
  CHECK_EQ(rta_lb_warm_start(ctx, record), 0);
  check_seeded(ctx, 1e-12); /* the record's costs exactly */
  rta_decision_t d = step(ctx);
  CHECK_EQ((int)d.reason, (int)RTA_REASON_WARM_START);
  for (int id = 0; id < NT; id++) {
    char nm[8];
    snprintf(nm, sizeof nm, "t%02d", id);
    CHECK_EQ(owner_of(ctx, "wm", nm), id % np);
  }
  CHECK_EQ(rta_lb_destroy(ctx), 0);
  CHECK_EQ(rta_task_remove(root), 0);
  /* The same record refused by another tree. */
  refused_once("other", record);
  TEST_PASS("lbwarm: a load-balancing record seeds costs and the first mapping");
}

/* Each refused warm start: the same code on every rank, and the context
 * goes on unseeded: no warm remap, every task where it was. */
static void refused(const char *rootname, const char *prefix, const char *path,
                    rta_policy_mode_t mode, int code) {
  rta_task_t *root = setup(rootname, prefix, 0);
  rta_lb_context_t *ctx = context(root, mode, 0);
  int before = rta_lb_nlocal(ctx);
  CHECK_EQ(rta_lb_warm_start(ctx, path), code);
  for (int i = 0; i < rta_lb_nlocal(ctx); i++) {
    rta_task_cost_t c;
    CHECK_EQ(rta_task_cost(rta_lb_local_task(ctx, i), &c), 0);
    CHECK_EQ(c.measured, 0); /* nothing seeded */
  }
  rta_decision_t d = step(ctx);
  CHECK_EQ(d.remap, 0);
  CHECK_EQ(rta_lb_nlocal(ctx), before);
  CHECK_EQ(rta_lb_destroy(ctx), 0);
  CHECK_EQ(rta_task_remove(root), 0);
}

static void refused_once(const char *rootname, const char *path) {
  refused(rootname, "t", path, RTA_POLICY_AUTO, BALLAST_EMISMATCH);
}

static void test_refusals(void) {
  refused("other", "t", profile, RTA_POLICY_AUTO, BALLAST_EMISMATCH);  /* another root */
  refused("wm", "x", profile, RTA_POLICY_AUTO, BALLAST_EMISMATCH);     /* renamed tasks */
  refused("wm", "t", "/nonexistent/ballast.json", RTA_POLICY_AUTO, BALLAST_EIO);
  refused("wm", "t", garbage, RTA_POLICY_AUTO, BALLAST_EPARSE);
  refused("wm", "t", notprof, RTA_POLICY_AUTO, BALLAST_EPARSE); /* JSON, not a profile */
  refused("wm", "t", profile, RTA_POLICY_OFF, BALLAST_EDISABLED);
  CHECK_EQ(rta_lb_warm_start(NULL, profile), BALLAST_EINVAL);
  TEST_PASS("lbwarm: another tree, a missing or malformed file, policy off: refused, "
            "nothing moved");
}

static void test_env(void) {
  setenv("BALLAST_LB_WARMSTART", profile, 1);
  rta_task_t *root = setup("wm", "t", 0);
  rta_lb_context_t *ctx = context(root, RTA_POLICY_AUTO, 1);
  rta_decision_t d = step(ctx);
  CHECK_EQ((int)d.reason, (int)RTA_REASON_WARM_START);
  CHECK_EQ(rta_lb_destroy(ctx), 0);
  CHECK_EQ(rta_task_remove(root), 0);
  setenv("BALLAST_LB_WARMSTART", garbage, 1);
  root = setup("wm", "t", 0);
  ctx = context(root, RTA_POLICY_AUTO, 1); /* defined all the same */
  d = step(ctx);
  CHECK((int)d.reason != (int)RTA_REASON_WARM_START);
  CHECK_EQ(rta_lb_destroy(ctx), 0);
  CHECK_EQ(rta_task_remove(root), 0);
  unsetenv("BALLAST_LB_WARMSTART");
  TEST_PASS("lbwarm: BALLAST_LB_WARMSTART seeds; a bad file only warns");
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  /* Files named by rank 0's pid, shared with every rank. */
  int pid = (int)getpid();
  MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
  snprintf(profile, sizeof profile, "/tmp/ballast_lbwarm_%d.json", pid);
  snprintf(garbage, sizeof garbage, "/tmp/ballast_lbwarm_%d.txt", pid);
  snprintf(record, sizeof record, "/tmp/ballast_lbwarm_%d.rec", pid);
  snprintf(notprof, sizeof notprof, "/tmp/ballast_lbwarm_%d_other.json", pid);
  if (me == 0) {
    FILE *f = fopen(garbage, "w");
    CHECK(f != NULL);
    fputs("{\"ballast_profile\": [1, 2,", f);
    fclose(f);
    CHECK((f = fopen(notprof, "w")) != NULL);
    fputs("{\"lb_series\": {\"contexts\": []}, \"n\": -1.5e3, \"s\": \"a\\u0041\\n\"}", f);
    fclose(f);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  cold_run();
  warm_run();
  test_refusals();
  record_run();
  test_env();
  MPI_Barrier(MPI_COMM_WORLD);
  if (me == 0) {
    remove(profile);
    remove(garbage);
    remove(record);
    remove(notprof);
  }
  MPI_Finalize();
  return 0;
}
