/* Multiprocessor tasks (gangs) on a pretended machine of 2 nodes x 2 ranks
 * (BALLAST_HW_LAYOUT): every gang gets nprocs ranks of one node, at the
 * definition and after every remap; members get a working sub-communicator,
 * other ranks MPI_COMM_NULL; a gang larger than every node is refused with
 * BALLAST_ETOOBIG. Run with 4 ranks. */
#include <stdlib.h>
#include <string.h>

#include <ballast/rta.h>

#include "test_util.h"

static int me, np;

static int node_of(int rank) { return rank / 2; }

static void check_gang(rta_lb_context_t *ctx, const char *key) {
  int ranks[2] = {-1, -1}, small[1];
  CHECK_EQ(rta_lb_gang_ranks(ctx, key, 1, small), BALLAST_ESIZE);
  CHECK_EQ(rta_lb_gang_ranks(ctx, key, 2, ranks), 0);
  CHECK(ranks[0] >= 0 && ranks[0] < np && ranks[1] >= 0 && ranks[1] < np);
  CHECK_NE(ranks[0], ranks[1]);
  CHECK_EQ(node_of(ranks[0]), node_of(ranks[1])); /* one node */
  MPI_Comm gc;
  CHECK_EQ(rta_lb_task_comm(ctx, key, &gc), 0);
  int member = me == ranks[0] || me == ranks[1];
  CHECK_EQ(gc != MPI_COMM_NULL, member);
  if (member) {
    int sz, sum = 0;
    MPI_Comm_size(gc, &sz);
    CHECK_EQ(sz, 2);
    MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, gc);
    CHECK_EQ(sum, ranks[0] + ranks[1]);
  }
  int owner = -1;
  CHECK_EQ(rta_lb_task_owner(ctx, key, &owner), 0);
  CHECK_EQ(owner, ranks[0]);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  CHECK_EQ(np, 4);
  const char *rn = "g";
  rta_task_t *root;
  CHECK_EQ(rta_task_define(NULL, 1, &rn, NULL, &root), 0);
  /* Two gangs of 2 (defined by their first members), one single task per rank. */
  rta_task_params_t gp = RTA_TASK_PARAMS_INIT;
  gp.nprocs = 2;
  gp.est_work = 2.0;
  const char *g0 = "gang0", *g1 = "gang1";
  if (me == 1)
    CHECK_EQ(rta_task_define(root, 1, &g0, &gp, NULL), 0);
  if (me == 2)
    CHECK_EQ(rta_task_define(root, 1, &g1, &gp, NULL), 0);
  char name[16];
  snprintf(name, sizeof name, "s%d", me);
  const char *nm = name;
  CHECK_EQ(rta_task_define(root, 1, &nm, NULL, NULL), 0);

  rta_lb_config_t cfg;
  rta_lb_config_init(&cfg);
  cfg.use_env = 0;
  cfg.policy.mode = RTA_POLICY_EXPLICIT;
  cfg.strategy = RTA_MAP_RANDOM;
  rta_lb_context_t *ctx;
  MPI_Comm comm;
  CHECK_EQ(rta_lb_create(MPI_COMM_WORLD, root, &cfg, &ctx, &comm), 0);
  CHECK_EQ(rta_lb_ntasks(ctx), 6);
  /* At definition a gang starts on its definer's node. */
  int r[2];
  rta_lb_gang_ranks(ctx, "g/gang0", 2, r);
  CHECK_EQ(node_of(r[0]), node_of(1));
  rta_lb_gang_ranks(ctx, "g/gang1", 2, r);
  CHECK_EQ(node_of(r[0]), node_of(2));
  check_gang(ctx, "g/gang0");
  check_gang(ctx, "g/gang1");
  CHECK_EQ(rta_lb_task_comm(ctx, "g/s0", &comm), BALLAST_ENOTFOUND);
  comm = rta_lb_comm(ctx);
  for (int k = 0; k < 8; k++) {
    CHECK_EQ(rta_lb_perform(ctx, &comm), 0);
    check_gang(ctx, "g/gang0");
    check_gang(ctx, "g/gang1");
  }
  CHECK_EQ(rta_lb_destroy(ctx), 0);
  CHECK_EQ(rta_task_remove(root), 0);

  /* A gang of 3 fits no node of 2 slots. */
  const char *rb = "big";
  CHECK_EQ(rta_task_define(NULL, 1, &rb, NULL, &root), 0);
  gp.nprocs = 3;
  const char *bn = "huge";
  if (me == 0)
    CHECK_EQ(rta_task_define(root, 1, &bn, &gp, NULL), 0);
  CHECK_EQ(rta_task_define(root, 1, &nm, NULL, NULL), 0);
  int rc = rta_lb_create(MPI_COMM_WORLD, root, &cfg, &ctx, &comm);
  CHECK_EQ(rc, BALLAST_ETOOBIG);
  CHECK(ctx == NULL);
  CHECK_EQ(rta_task_remove(root), 0);
  TEST_PASS("lbgang: gangs on one node, sub-communicators, ETOOBIG");
  rta_reset();
  MPI_Finalize();
  return 0;
}
