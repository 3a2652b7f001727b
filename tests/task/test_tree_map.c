/* rta_task_map() end to end, on 2 and 4 ranks:
 *  A. over-decomposition: a 4x4 stencil of blocks owned round-robin, declared
 *     partners; exact edge cut of the round-robin mapping, migration counts
 *     of a remap, and a two-phase mapping that is identical on every rank and
 *     gives every rank tasks;
 *  B. placement mode (one leaf per rank): bytes measured per rank pair from a
 *     ring exchange, exact edge cut; estimates again once nothing is measured;
 *  C. over-decomposition with declared bytes scaled by the measured bytes;
 *  D. measured bytes on a communicator that reorders the world's ranks. */
#include <ballast/rta.h>

#include <time.h>

#include "test_util.h"

/* A task's figure the test knows to exist (the call itself is checked). */
static double mapping_work(const rta_mapping_t *m, int64_t i) {
  double w = -1;
  CHECK_EQ(rta_mapping_work(m, i, &w), 0);
  return w;
}

static double mapping_state_bytes(const rta_mapping_t *m, int64_t i) {
  double b = -1;
  CHECK_EQ(rta_mapping_state_bytes(m, i, &b), 0);
  return b;
}

static int rank, size;
static rta_hw_t *hw;

static void spin(double s) {
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  do
    clock_gettime(CLOCK_MONOTONIC, &b);
  while ((b.tv_sec - a.tv_sec) + 1e-9 * (b.tv_nsec - a.tv_nsec) < s);
}

static rta_mapping_t *map(rta_task_t *root, rta_strategy_t s, int fresh) {
  rta_task_map_options_t o;
  rta_task_map_options_init(&o);
  o.strategy = s;
  o.fresh = fresh;
  rta_mapping_t *m = NULL;
  CHECK_EQ(rta_task_map(MPI_COMM_WORLD, root, hw, &o, &m), 0);
  CHECK(m != NULL);
  return m;
}

/* Every rank holds the same slots: compare with rank 0's. PMPI: the test's
 * own checking traffic must not count as the application's. */
static void check_same_everywhere(const rta_mapping_t *m) {
  int64_t n = rta_mapping_ntasks(m);
  int *mine = malloc((size_t)n * sizeof *mine), *r0 = malloc((size_t)n * sizeof *r0);
  for (int64_t i = 0; i < n; i++)
    mine[i] = r0[i] = rta_mapping_slot(m, i);
  PMPI_Bcast(r0, (int)n, MPI_INT, 0, MPI_COMM_WORLD);
  for (int64_t i = 0; i < n; i++)
    CHECK_EQ(mine[i], r0[i]);
  double q[3] = {rta_mapping_quality(m)->edge_cut, rta_mapping_quality(m)->hop_bytes,
                 rta_mapping_quality(m)->max_avg_load_core};
  double q0[3] = {q[0], q[1], q[2]};
  PMPI_Bcast(q0, 3, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  for (int k = 0; k < 3; k++)
    CHECK(q[k] == q0[k]);
  free(mine);
  free(r0);
}

static void stencil(void) {
  rta_task_t *root;
  const char *rn[] = {"grid"};
  CHECK_EQ(rta_task_define(NULL, 1, rn, NULL, &root), 0);
  /* Block b of the 4x4 grid is defined (owned) by rank b % size. */
  for (int b = rank; b < 16; b += size) {
    char name[16], keys[4][24];
    rta_comm_est_t c[4];
    int nc = 0, x = b % 4, y = b / 4;
    int nb[4][2] = {{x - 1, y}, {x + 1, y}, {x, y - 1}, {x, y + 1}};
    for (int k = 0; k < 4; k++)
      if (nb[k][0] >= 0 && nb[k][0] < 4 && nb[k][1] >= 0 && nb[k][1] < 4) {
        snprintf(keys[nc], sizeof keys[nc], "grid/b%02d", nb[k][0] + 4 * nb[k][1]);
        c[nc] = (rta_comm_est_t){keys[nc], 100};
        nc++;
      }
    snprintf(name, sizeof name, "b%02d", b);
    rta_task_params_t p = RTA_TASK_PARAMS_INIT;
    p.ncomm = nc;
    p.comm = c;
    p.state_size = 1000;
    const char *n[] = {name};
    CHECK_EQ(rta_task_define(root, 1, n, &p, NULL), 0);
  }

  rta_mapping_t *m = map(root, RTA_MAP_ROUNDROBIN, 1);
  CHECK_EQ(rta_mapping_ntasks(m), 16);
  CHECK_EQ(rta_mapping_placement(m), 0);
  for (int64_t i = 0; i < 16; i++) {
    char k[16];
    snprintf(k, sizeof k, "grid/b%02d", (int)i);
    CHECK_STREQ(rta_mapping_key(m, i), k); /* sorted by key */
    CHECK_EQ(rta_mapping_find(m, k), i);
    CHECK_EQ(rta_mapping_owner(m, i), i % size);
    CHECK_EQ(rta_mapping_slot(m, i), i % size);
    CHECK(mapping_work(m, i) == 1.0); /* the estimate: nothing measured */
    CHECK(mapping_state_bytes(m, i) == 1000.0);
  }
  CHECK_EQ(rta_mapping_find(m, "grid/b16"), BALLAST_ENOTFOUND);
  CHECK_EQ(rta_mapping_find(m, NULL), BALLAST_EINVAL);
  CHECK_EQ(rta_mapping_find(NULL, "grid/b00"), BALLAST_EINVAL);
  CHECK(rta_mapping_key(m, 16) == NULL);
  /* One answer per fault for every indexed accessor (ballast.h, Errors). */
  CHECK_EQ(rta_mapping_slot(m, -1), BALLAST_ERANGE);
  CHECK_EQ(rta_mapping_slot(m, 16), BALLAST_ERANGE);
  CHECK_EQ(rta_mapping_owner(m, 16), BALLAST_ERANGE);
  CHECK_EQ(rta_mapping_nprocs(m, 16), BALLAST_ERANGE);
  CHECK_EQ(rta_mapping_ndefiners(m, -1), BALLAST_ERANGE);
  double w = 42;
  CHECK_EQ(rta_mapping_work(m, 16, &w), BALLAST_ERANGE);
  CHECK_EQ(rta_mapping_state_bytes(m, -1, &w), BALLAST_ERANGE);
  CHECK(w == 42); /* unchanged on error */
  CHECK_EQ(rta_mapping_work(m, 0, NULL), BALLAST_EINVAL);
  CHECK_EQ(rta_mapping_slot(NULL, 0), BALLAST_EINVAL);
  CHECK_EQ(rta_mapping_owner(NULL, 0), BALLAST_EINVAL);
  CHECK_EQ(rta_mapping_ntasks(NULL), BALLAST_EINVAL);
  CHECK_EQ(rta_mapping_placement(NULL), BALLAST_EINVAL);
  /* 24 grid edges of 2 x 100 bytes; with 2 or 4 slots round-robin cuts the
   * 12 horizontal ones and keeps the 12 vertical ones (v, v + 4) together. */
  CHECK(rta_mapping_quality(m)->edge_cut == 12 * 200.0);
  CHECK_EQ(rta_mapping_quality(m)->tasks_migrated, 0);
  rta_mapping_destroy(m);

  /* A remap from the current owners: what moves is counted. */
  m = map(root, RTA_MAP_BLOCK, 0);
  int64_t moved = 0;
  for (int64_t i = 0; i < 16; i++)
    moved += rta_mapping_slot(m, i) != rta_mapping_owner(m, i);
  CHECK_GT(moved, 0);
  CHECK_EQ(rta_mapping_quality(m)->tasks_migrated, moved);
  CHECK(rta_mapping_quality(m)->bytes_migrated == 1000.0 * moved);
  check_same_everywhere(m);
  rta_mapping_destroy(m);

  /* Two-phase: same everywhere, every rank gets tasks, locality at least as
   * good as round-robin's. */
  m = map(root, RTA_MAP_TWOPHASE, 0);
  check_same_everywhere(m);
  int *count = calloc((size_t)size, sizeof *count);
  for (int64_t i = 0; i < 16; i++) {
    int s = rta_mapping_slot(m, i);
    CHECK_GE(s, 0);
    CHECK_LT(s, size);
    count[s]++;
  }
  for (int r = 0; r < size; r++)
    CHECK_GT(count[r], 0);
  CHECK_DLE(rta_mapping_quality(m)->edge_cut, 12 * 200.0);
  CHECK_DLE(rta_mapping_quality(m)->max_avg_load_core, 1.5);
  free(count);
  rta_mapping_destroy(m);
  TEST_PASS("task_tree_map: stencil, over-decomposition");
}

/* Each rank sends \a bytes to its right neighbour inside its task, \a steps
 * times, closing a cost-model step each time. */
static void ring(rta_task_t *t, int bytes, int steps) {
  char *sb = calloc((size_t)bytes, 1), *rb = calloc((size_t)bytes, 1);
  for (int s = 0; s < steps; s++) {
    CHECK_EQ(rta_task_begin(t), 0);
    spin(0.001); /* some work of the task's own */
    MPI_Sendrecv(sb, bytes, MPI_BYTE, (rank + 1) % size, 7, rb, bytes, MPI_BYTE,
                 (rank + size - 1) % size, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK_EQ(rta_task_end(t), 0);
    CHECK_EQ(rta_step(), 0);
  }
  free(sb);
  free(rb);
}

static void placement(void) {
  rta_task_t *root, *leaf;
  const char *rn[] = {"ring"};
  CHECK_EQ(rta_task_define(NULL, 1, rn, NULL, &root), 0);
  char name[16];
  snprintf(name, sizeof name, "r%d", rank);
  const char *n[] = {name};
  CHECK_EQ(rta_task_define(root, 1, n, NULL, &leaf), 0);
  ring(leaf, 1000, 5);

  rta_mapping_t *m = map(root, RTA_MAP_ROUNDROBIN, 1);
  CHECK_EQ(rta_mapping_placement(m), 1);
  CHECK_EQ(rta_mapping_ntasks(m), size);
  /* Measured per rank pair: 1000 bytes per step around the ring (on 2 ranks
   * both directions fall on one edge), all cut. */
  CHECK_NEAR(rta_mapping_quality(m)->edge_cut, 1000.0 * size, 1e-6);
  /* Work: the measured time per step, not the estimate 1.0. */
  for (int64_t i = 0; i < size; i++) {
    CHECK_DGT(mapping_work(m, i), 0);
    CHECK_DLT(mapping_work(m, i), 1.0);
  }
  check_same_everywhere(m);
  rta_mapping_destroy(m);

  /* No step since that mapping: nothing measured, the (empty) declared
   * communication serves. */
  m = map(root, RTA_MAP_ROUNDROBIN, 1);
  CHECK(rta_mapping_quality(m)->edge_cut == 0.0);
  rta_mapping_destroy(m);
  TEST_PASS("task_tree_map: placement mode, measured bytes");
}

static void scaled(void) {
  rta_task_t *root, *t[2];
  const char *rn[] = {"sc"};
  CHECK_EQ(rta_task_define(NULL, 1, rn, NULL, &root), 0);
  char an[8], bn[8], ak[16], bk[16], rk[16];
  snprintf(an, sizeof an, "a%d", rank);
  snprintf(bn, sizeof bn, "b%d", rank);
  snprintf(bk, sizeof bk, "sc/b%d", rank);
  snprintf(rk, sizeof rk, "sc/a%d", (rank + 1) % size);
  snprintf(ak, sizeof ak, "sc/a%d", rank);
  /* a_r declares 10 bytes to b_r (same rank) and 50 to a_{r+1}. */
  rta_comm_est_t c[2] = {{bk, 10}, {rk, 50}};
  rta_task_params_t p[2] = {RTA_TASK_PARAMS_INIT, RTA_TASK_PARAMS_INIT};
  p[0].ncomm = 2;
  p[0].comm = c;
  const char *n[] = {an, bn};
  CHECK_EQ(rta_task_define(root, 2, n, p, t), 0);
  /* Measured: 1000 bytes per step to the right, i.e. 20 x the declared 50. */
  ring(t[0], 1000, 4);
  rta_mapping_t *m = map(root, RTA_MAP_ROUNDROBIN, 1);
  CHECK_EQ(rta_mapping_placement(m), 0);
  CHECK_EQ(rta_mapping_ntasks(m), 2 * size);
  /* Sorted keys: a0..a{size-1}, b0..: round-robin puts a_r and b_r on r, so
   * only the scaled ring edges (50 x 20 = 1000 per rank) are cut. */
  for (int r = 0; r < size; r++) {
    CHECK_EQ(rta_mapping_slot(m, r), r);
    CHECK_EQ(rta_mapping_slot(m, size + r), r);
  }
  CHECK_NEAR(rta_mapping_quality(m)->edge_cut, 1000.0 * size, 1e-6);
  check_same_everywhere(m);
  rta_mapping_destroy(m);
  TEST_PASS("task_tree_map: declared bytes scaled by measured bytes");
}

/* D. A communicator whose ranks are the world's in reverse, a simulated
 * machine of 2-core nodes, and traffic inside and across nodes: the measured
 * bytes must land on the right pairs of the context's ranks. */
static void reversed(void) {
  MPI_Comm rev;
  MPI_Comm_split(MPI_COMM_WORLD, 0, size - 1 - rank, &rev);
  int me;
  MPI_Comm_rank(rev, &me);
  CHECK_EQ(me, size - 1 - rank);
  rta_hw_t *sim = NULL;
  CHECK_EQ(rta_hw_create_sim(size / 2, "core:2 pu:1", NULL, NULL, &sim), 0);
  CHECK_EQ(rta_hw_nslots(sim), size);

  rta_task_t *root, *leaf;
  const char *rn[] = {"rv"};
  CHECK_EQ(rta_task_define(NULL, 1, rn, NULL, &root), 0);
  char name[16];
  snprintf(name, sizeof name, "r%d", me);
  const char *n[] = {name};
  CHECK_EQ(rta_task_define(root, 1, n, NULL, &leaf), 0);
  /* Even ranks send 1000 bytes to the next rank (same node); with 4 ranks
   * or more every rank also sends 500 bytes two ranks on (another node). */
  char *sb = calloc(1000, 1), *rb = calloc(1000, 1);
  for (int s = 0; s < 3; s++) {
    CHECK_EQ(rta_task_begin(leaf), 0);
    MPI_Request rq[4];
    int nr = 0;
    if (me % 2 == 0)
      MPI_Isend(sb, 1000, MPI_BYTE, me + 1, 1, rev, &rq[nr++]);
    else
      MPI_Irecv(rb, 1000, MPI_BYTE, me - 1, 1, rev, &rq[nr++]);
    if (size >= 4) {
      MPI_Isend(sb, 500, MPI_BYTE, (me + 2) % size, 2, rev, &rq[nr++]);
      MPI_Irecv(rb + 500, 500, MPI_BYTE, (me + size - 2) % size, 2, rev, &rq[nr++]);
    }
    MPI_Waitall(nr, rq, MPI_STATUSES_IGNORE);
    CHECK_EQ(rta_task_end(leaf), 0);
    CHECK_EQ(rta_step(), 0);
  }
  free(sb);
  free(rb);
  rta_task_map_options_t o;
  rta_task_map_options_init(&o);
  o.strategy = RTA_MAP_ROUNDROBIN;
  o.fresh = 1;
  rta_mapping_t *m = NULL;
  CHECK_EQ(rta_task_map(rev, root, sim, &o, &m), 0);
  CHECK_EQ(rta_mapping_placement(m), 1);
  for (int i = 0; i < size; i++)
    CHECK_EQ(rta_mapping_owner(m, i), i); /* ranks of rev, not of the world */
  double cut = 1000.0 * (size / 2) + (size >= 4 ? 500.0 * size : 0);
  double inter = size >= 4 ? 500.0 * size : 0;
  CHECK_NEAR(rta_mapping_quality(m)->edge_cut, cut, 1e-6);
  CHECK_NEAR(rta_mapping_quality(m)->internode_volume, inter, 1e-6);
  rta_mapping_destroy(m);
  rta_hw_destroy(sim);
  MPI_Comm_free(&rev);
  TEST_PASS("task_tree_map: measured bytes on a reordered communicator");
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK_EQ(rta_hw_discover(MPI_COMM_WORLD, &hw), 0);
  CHECK_EQ(rta_hw_nslots(hw), size);
  stencil();
  placement();
  scaled();
  reversed();
  rta_hw_destroy(hw);
  CHECK_EQ(rta_reset(), 0);
  MPI_Finalize();
  return 0;
}
