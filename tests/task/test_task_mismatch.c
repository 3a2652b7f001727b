/* Collective validation in rta_task_map(): every rank gets the same exact
 * code for parameters that differ across ranks, a leaf defined twice, an
 * unknown partner, different roots, an empty root; a local bad argument on
 * one rank gives that rank its code and the others BALLAST_EREMOTE. A shared
 * task whose partners are declared in different orders is not a mismatch. */
#include <ballast/rta.h>

#include "test_util.h"

static int rank, size;
static rta_hw_t *hw;

/* A fresh root named \a name with one leaf per rank ("<name>/r<rank>"). */
static rta_task_t *make_root(const char *name, rta_task_params_t *leafp) {
  rta_task_t *root;
  const char *rn[] = {name};
  CHECK_EQ(rta_task_define(NULL, 1, rn, NULL, &root), 0);
  char ln[16];
  snprintf(ln, sizeof ln, "r%d", rank);
  const char *n[] = {ln};
  CHECK_EQ(rta_task_define(root, 1, n, leafp, NULL), 0);
  return root;
}

static int map(rta_task_t *root) {
  rta_mapping_t *m = (rta_mapping_t *)&m; /* must be reset to NULL on error */
  int rc = rta_task_map(MPI_COMM_WORLD, root, hw, NULL, &m);
  if (rc)
    CHECK(m == NULL);
  rta_mapping_destroy(m);
  return rc;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK_EQ(rta_hw_discover(MPI_COMM_WORLD, &hw), 0);

  /* The good case first: one leaf per rank maps. */
  rta_task_t *ok = make_root("ok", NULL);
  CHECK_EQ(map(ok), 0);

  /* A shared inner task with different work on rank 1. */
  rta_task_t *root;
  const char *rn[] = {"p"};
  CHECK_EQ(rta_task_define(NULL, 1, rn, NULL, &root), 0);
  rta_task_params_t gp = RTA_TASK_PARAMS_INIT;
  gp.est_work = rank == 1 ? 2.0 : 1.0;
  rta_task_t *grp;
  const char *gn[] = {"grp"};
  CHECK_EQ(rta_task_define(root, 1, gn, &gp, &grp), 0);
  char ln[16];
  snprintf(ln, sizeof ln, "r%d", rank);
  const char *n[] = {ln};
  CHECK_EQ(rta_task_define(grp, 1, n, NULL, NULL), 0);
  CHECK_EQ(map(root), BALLAST_EMISMATCH);
  TEST_PASS("task_mismatch: different parameters");

  /* The same shared task with partners declared in two orders: no error. */
  const char *on[] = {"o"};
  CHECK_EQ(rta_task_define(NULL, 1, on, NULL, &root), 0);
  rta_comm_est_t fwd[2] = {{"o/g/r0", 8}, {"o/g/r1", 16}};
  rta_comm_est_t bwd[2] = {{"o/g/r1", 16}, {"o/g/r0", 8}};
  gp = (rta_task_params_t)RTA_TASK_PARAMS_INIT;
  gp.ncomm = 2;
  gp.comm = rank % 2 ? bwd : fwd;
  const char *gn2[] = {"g"};
  CHECK_EQ(rta_task_define(root, 1, gn2, &gp, &grp), 0);
  CHECK_EQ(rta_task_define(grp, 1, n, NULL, NULL), 0);
  CHECK_EQ(map(root), 0);

  /* A single-processor leaf defined on two ranks. */
  const char *dn[] = {"d"};
  CHECK_EQ(rta_task_define(NULL, 1, dn, NULL, &root), 0);
  const char *both[] = {rank < 2 ? "shared" : ln};
  CHECK_EQ(rta_task_define(root, 1, both, NULL, NULL), 0);
  CHECK_EQ(map(root), BALLAST_EEXIST);
  /* ... which is fine for a 2-processor task. */
  const char *gg[] = {"gang"};
  CHECK_EQ(rta_task_define(NULL, 1, gg, NULL, &root), 0);
  rta_task_params_t two = RTA_TASK_PARAMS_INIT;
  two.nprocs = 2;
  const char *gl[] = {rank < 2 ? "pair" : ln};
  CHECK_EQ(rta_task_define(root, 1, gl, &two, NULL), 0);
  rta_mapping_t *m = NULL;
  CHECK_EQ(rta_task_map(MPI_COMM_WORLD, root, hw, NULL, &m), 0);
  int64_t pi = rta_mapping_find(m, "gang/pair");
  CHECK_GE(pi, 0);
  CHECK_EQ(rta_mapping_ndefiners(m, pi), 2);
  CHECK_EQ(rta_mapping_nprocs(m, pi), 2);
  CHECK_EQ(rta_mapping_owner(m, pi), 0);
  CHECK_EQ(rta_mapping_ntasks(m), size - 1);
  rta_mapping_destroy(m);
  TEST_PASS("task_mismatch: leaves defined on several ranks");

  /* A partner key that is no leaf under the root. */
  rta_comm_est_t ghost = {"u/nobody", 4};
  rta_task_params_t up = RTA_TASK_PARAMS_INIT;
  if (rank == size - 1) {
    up.ncomm = 1;
    up.comm = &ghost;
  }
  CHECK_EQ(map(make_root("u", &up)), BALLAST_ENOTFOUND);
  /* A partner that is an inner task is no vertex either. */
  rta_comm_est_t inner = {"ok", 4};
  up.comm = &inner;
  CHECK_EQ(map(make_root("v", &up)), BALLAST_ENOTFOUND);

  /* Different roots on different ranks. */
  rta_task_t *w = make_root("w", NULL);
  CHECK_EQ(map(rank == 0 ? ok : w), BALLAST_EMISMATCH);
  /* A root without children anywhere: no leaf to map. */
  const char *en[] = {"empty"};
  CHECK_EQ(rta_task_define(NULL, 1, en, NULL, &root), 0);
  CHECK_EQ(map(root), BALLAST_ENOTFOUND);
  TEST_PASS("task_mismatch: unknown partners, roots");

  /* A bad argument on one rank only. */
  m = (rta_mapping_t *)&m;
  int rc = rta_task_map(MPI_COMM_WORLD, rank == 1 ? NULL : ok, hw, NULL, &m);
  CHECK_EQ(rc, rank == 1 ? BALLAST_EINVAL : BALLAST_EREMOTE);
  CHECK(m == NULL);
  rc = rta_task_map(MPI_COMM_WORLD, ok, rank == 0 ? NULL : hw, NULL, &m);
  CHECK_EQ(rc, rank == 0 ? BALLAST_EINVAL : BALLAST_EREMOTE);
  /* A hardware model of another size. */
  rta_hw_t *sim = NULL;
  CHECK_EQ(rta_hw_create_sim(1, "core:3 pu:1", NULL, NULL, &sim), 0);
  CHECK_EQ(rta_hw_nslots(sim), 3);
  rc = rta_task_map(MPI_COMM_WORLD, ok, sim, NULL, &m);
  CHECK_EQ(rc, BALLAST_EINVAL);
  rta_hw_destroy(sim);
  /* And everything still works afterwards. */
  CHECK_EQ(map(ok), 0);
  TEST_PASS("task_mismatch: local errors agreed on");

  rta_hw_destroy(hw);
  CHECK_EQ(rta_reset(), 0);
  MPI_Finalize();
  return 0;
}
