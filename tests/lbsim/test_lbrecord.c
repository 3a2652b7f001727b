/* The load-balancing record written by a run: BALLAST_LB_RECORD=path (set
 * by ctest) records the context from its definition; its content is read
 * back with the record's reader and checked against what the run saw (steps,
 * decisions, remaps, owners, the task tree's identity). rta_lb_record()
 * starts a record later, refuses an unwritable path on every rank (the
 * context works on) and ends it with NULL.
 * Usage: test_lbrecord [over|placement] (default over). The record path is
 * the environment's; the bit-for-bit replay of it is lbsim_replay's test. */
#include <stdlib.h>
#include <string.h>

#include <ballast/pia.h>
#include <ballast/rta.h>

#include "../lb/cpu_spin.h"
#include "policy/policy.h"
#include "test_util.h"

#define NT 12
#define NSTEPS 30
#define UNIT 0.0015

static int me, np, placement;


/* Task id's work: the first half heavy. Placement: task i is rank i's. */
static double work_of(int id) { return placement ? (id == 0 ? 3.0 : 1.0) : id < NT / 2 ? 4.0 : 1.0; }
static int ntasks(void) { return placement ? np : NT; }

static rta_task_t *setup(const char *rootname) {
  const char *rn = rootname;
  rta_task_t *root;
  rta_task_params_t rp = RTA_TASK_PARAMS_INIT;
  CHECK_EQ(rta_task_define(NULL, 1, &rn, &rp, &root), 0);
  for (int id = 0; id < ntasks(); id++) {
    int owner = placement ? id : id < NT / 2 ? 0 : 1 + id % (np - 1);
    if (owner != me)
      continue;
    char name[16];
    snprintf(name, sizeof name, "t%02d", id);
    const char *nm = name;
    rta_task_params_t p = RTA_TASK_PARAMS_INIT;
    p.est_work = 1.0;
    p.state_size = 1000 + 10 * (size_t)id;
    CHECK_EQ(rta_task_define(root, 1, &nm, &p, NULL), 0);
  }
  return root;
}

/* One step: every local task spins its work; in placement mode the ranks
 * also exchange a message with their neighbour (measured bytes). */
static void step(rta_lb_context_t *ctx, MPI_Comm comm) {
  for (int i = 0; i < rta_lb_nlocal(ctx); i++) {
    rta_task_t *t = rta_lb_local_task(ctx, i);
    CHECK_EQ(rta_task_begin(t), 0);
    cpu_spin(UNIT * work_of(atoi(rta_task_name(t) + 1)));
    CHECK_EQ(rta_task_end(t), 0);
  }
  if (placement) {
    static double buf[2][512];
    int r, n;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &n);
    MPI_Sendrecv(buf[0], 512, MPI_DOUBLE, (r + 1) % n, 0, buf[1], 512, MPI_DOUBLE,
                 (r + n - 1) % n, 0, comm, MPI_STATUS_IGNORE);
  }
}

static void cfg_of(rta_lb_config_t *cfg) {
  rta_lb_config_init(cfg);
  cfg->use_env = 0;
  cfg->policy.mode = RTA_POLICY_AUTO;
  cfg->policy.warmup = 2;
  cfg->policy.window = 5;
  cfg->policy.threshold = 1.2;
  cfg->seed = 7;
}

/* The record of the run, checked on rank 0 against what the run saw. */
static void check_record(const char *path, const rta_lb_stats_t *s, const int *owner,
                         const rta_decision_t *last) {
  policy__t *r = NULL;
  CHECK_EQ(policy__open(path, &r), 0);
  CHECK_EQ(r->version, POLICY__VERSION);
  CHECK_STREQ(r->root, "rec");
  CHECK_EQ(r->ranks, np);
  CHECK_EQ(r->placement, placement);
  CHECK_EQ(r->seed, 7u);
  CHECK_EQ(r->policy.window, 5);
  CHECK(r->hw != NULL);
  CHECK_EQ(r->nsteps, NSTEPS);
  CHECK_EQ(r->ndecisions, NSTEPS);
  /* every attempt has an R line; a dropped candidate (committed 0, rc 0)
   * tells the policy nothing measured (no X line) */
  long long committed = 0, dropped = 0;
  for (int64_t i = 0; i < r->nremaps; i++) {
    committed += r->remaps[i].committed;
    dropped += !r->remaps[i].committed && r->remaps[i].rc == 0;
  }
  CHECK_EQ(committed, s->remaps);
  CHECK_EQ(r->nremaps - dropped, s->remaps + s->failed_remaps);
  CHECK_EQ(r->nmeasures, r->nremaps - dropped);
  CHECK_EQ(r->closed, 1);
  CHECK_EQ(r->dropped, 0);
  CHECK_GT(r->ncostrows, 0);
  /* the last decision, bit for bit */
  const rta_decision_t *d = &r->decisions[r->ndecisions - 1].d;
  CHECK_EQ(d->remap, last->remap);
  CHECK_EQ((int)d->reason, (int)last->reason);
  CHECK(memcmp(&d->imbalance, &last->imbalance, sizeof(double)) == 0);
  CHECK(memcmp(&d->remap_cost, &last->remap_cost, sizeof(double)) == 0);
  /* the tree's identity: the sorted keys of the definition's graph */
  char keys[NT][16];
  const char *kp[NT];
  for (int id = 0; id < ntasks(); id++) {
    snprintf(keys[id], sizeof keys[id], "rec/t%02d", id);
    kp[id] = keys[id];
  }
  CHECK_EQ(r->graphs[0].n, ntasks());
  CHECK(policy__tree_hash(r, 0) == policy__keys_hash(kp, ntasks()));
  CHECK(policy__tree_hash(r, 0) != policy__keys_hash(kp, ntasks() - 1));
  /* every task: where it ended, its state and a measured cost */
  for (int id = 0; id < ntasks(); id++) {
    policy__task_t t;
    CHECK_EQ(policy__task(r, keys[id], &t), 0);
    CHECK_EQ(t.slot, owner[id]);
    CHECK_EQ(t.nprocs, 1);
    CHECK_NEAR(t.state, 1000.0 + 10 * id, 0.5);
    CHECK_DGT(t.work, 0);
  }
  policy__task_t t;
  CHECK_EQ(policy__task(r, "rec/none", &t), BALLAST_ENOTFOUND);
  /* each remap: its graph, the engine's slots and the targets */
  for (int64_t i = 0; i < r->nremaps; i++) {
    const policy__graph_t *G = &r->graphs[r->remaps[i].k];
    CHECK_EQ(G->n, ntasks());
    CHECK(G->slot != NULL);
    /* the automatic policy judged each candidate (J before its R line) */
    CHECK(r->remaps[i].cand >= 0);
    const policy__candidate_t *c = &r->candidates[r->remaps[i].cand];
    CHECK_EQ(c->k, r->remaps[i].k);
    CHECK_EQ(c->judged, 1);
    CHECK_EQ(c->d.remap, r->remaps[i].committed);
  }
  CHECK_GT(r->nremaps, 0);
  if (placement) /* measured bytes became edges */
    CHECK_GT(r->graphs[r->remaps[0].k].xadj[ntasks()], 0);
  policy__close(r);
}

/* rta_lb_record(): a bad path is refused everywhere, a good one records from
 * now (no definition graph), NULL ends it. */
static void test_api(const char *envpath) {
  rta_task_t *root = setup("api");
  rta_lb_config_t cfg;
  cfg_of(&cfg);
  rta_lb_context_t *ctx;
  MPI_Comm comm;
  CHECK_EQ(rta_lb_create(MPI_COMM_WORLD, root, &cfg, &ctx, &comm), 0);
  CHECK_EQ(rta_lb_record(NULL, "x"), BALLAST_EINVAL);
  CHECK_EQ(rta_lb_record(ctx, "/nonexistent-dir/sub/x.rec"), BALLAST_EIO);
  char path[512];
  snprintf(path, sizeof path, "%s.api", envpath);
  CHECK_EQ(rta_lb_record(ctx, path), 0);
  for (int i = 0; i < 8; i++) {
    step(ctx, comm);
    CHECK_EQ(rta_lb_perform(ctx, &comm), 0);
  }
  CHECK_EQ(rta_lb_record(ctx, NULL), 0);
  step(ctx, comm);
  CHECK_EQ(rta_lb_perform(ctx, &comm), 0); /* not recorded */
  CHECK_EQ(rta_lb_destroy(ctx), 0);
  CHECK_EQ(rta_task_remove(root), 0);
  if (me == 0) {
    policy__t *r;
    CHECK_EQ(policy__open(path, &r), 0);
    CHECK_EQ(r->nsteps, 8);
    CHECK_EQ(r->closed, 1);
    CHECK(r->ngraphs == 0 || r->graphs[0].n == 0);
    policy__close(r);
    /* the variable's record of this second context (path.1), ended by the call */
    snprintf(path, sizeof path, "%s.1", envpath);
    CHECK_EQ(policy__open(path, &r), 0);
    CHECK_EQ(r->nsteps, 0);
    CHECK_EQ(r->closed, 1);
    policy__close(r);
  }
  TEST_PASS("lbrecord: rta_lb_record refuses a bad path, records, ends with NULL");
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  placement = argc > 1 && !strcmp(argv[1], "placement");
  const char *envpath = getenv("BALLAST_LB_RECORD");
  CHECK(envpath != NULL);
  rta_task_t *root = setup("rec");
  rta_lb_config_t cfg;
  cfg_of(&cfg);
  rta_lb_context_t *ctx;
  MPI_Comm comm;
  CHECK_EQ(rta_lb_create(MPI_COMM_WORLD, root, &cfg, &ctx, &comm), 0);
  for (int i = 0; i < NSTEPS; i++) {
    step(ctx, comm);
    CHECK_EQ(rta_lb_perform(ctx, &comm), 0);
  }
  /* The record's gathers (one a step, the costs' every 64 steps and at
   * remaps) are ballast's own traffic: none in the program's figures. */
  pia_actdata_t ga = {0}; /* pia_activity_data adds into it */
  CHECK_EQ(pia_activity_data(pia_activity_find("MPI_Gather"), &ga), 0);
  CHECK_EQ(pia_activity_data(pia_activity_find("MPI_Gatherv"), &ga), 0);
  CHECK_EQ(ga.ncalls, 0);
  rta_lb_stats_t s;
  rta_decision_t last;
  CHECK_EQ(rta_lb_stats(ctx, &s), 0);
  CHECK_EQ(rta_lb_last_decision(ctx, &last), 0);
  /* Placement on 2 ranks with work 3:1: no permutation helps, so the
   * policy drops every candidate as moving nothing (the record still holds
   * each attempt, checked below); over-decomposition remaps. */
  if (!placement || np > 2)
    CHECK_GE(s.remaps, 1);
  int owner[NT];
  for (int id = 0; id < ntasks(); id++) {
    char key[32];
    snprintf(key, sizeof key, "rec/t%02d", id);
    CHECK_EQ(rta_lb_task_owner(ctx, key, &owner[id]), 0);
    if (placement) /* the record speaks of base ranks: who hosts task i */
      owner[id] = -1;
  }
  if (placement) /* rank i of the returned communicator hosts task i */
    for (int id = 0; id < np; id++) {
      int host = -1, mine = 0;
      MPI_Comm_rank(comm, &mine);
      int base = me;
      MPI_Allreduce(mine == id ? &base : &host, &owner[id], 1, MPI_INT, MPI_MAX,
                    MPI_COMM_WORLD);
    }
  CHECK_EQ(rta_lb_destroy(ctx), 0);
  CHECK_EQ(rta_task_remove(root), 0);
  if (me == 0)
    check_record(envpath, &s, owner, &last);
  MPI_Barrier(MPI_COMM_WORLD);
  TEST_PASS(placement ? "lbrecord: placement run recorded and read back"
                      : "lbrecord: over-decomposition run recorded and read back");
  if (!placement)
    test_api(envpath);
  rta_reset();
  MPI_Finalize();
  return 0;
}
