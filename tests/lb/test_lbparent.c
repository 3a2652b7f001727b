/* Where arriving tasks are defined: a task keeps its stage under its parent
 * when the destination's parent has that stage; a parent the destination
 * does not have is defined there (default parameters) and removed again when
 * the remap rolls back, so the task tree is as it was.
 *
 * Tree: root "mp" on every rank; "mp/all" on every rank, under which rank r
 * defines leaf id = k * np + r in stage k (same number of stages
 * everywhere); "mp/own<r>" only on rank r, with leaves of its own. Each leaf
 * holds one array of doubles derived from its id. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <ballast/rta.h>

#include "mig/migrate.h"
#include "test_util.h"

#define K 4   /* stages under mp/all */
#define NOWN 3 /* leaves under each mp/own<r> */
#define ROWS 500

static int me, np;
static int fail_unpack_rank = -1;

static double val(int id, int i) { return id * 1000.0 + i * 0.5; }

static int cb_size(rta_task_t *t, size_t *len, void *u) {
  (void)t;
  (void)u;
  *len = 0;
  return 0;
}
static int cb_pack(rta_task_t *t, void *buf, size_t len, void *u) {
  (void)t;
  (void)buf;
  (void)len;
  (void)u;
  return 0;
}
static int cb_unpack(rta_task_t *t, const void *buf, size_t len, void *u) {
  (void)buf;
  (void)len;
  (void)u;
  if (me == fail_unpack_rank)
    return -1;
  double **slot = calloc(1, sizeof *slot);
  rta_task_set_data(t, slot);
  int64_t z = 0;
  return rta_task_array_register(t, (void **)slot, rta_type_elem(RTA_DOUBLE), 1, &z);
}
static void cb_release(rta_task_t *t, void *u) {
  (void)u;
  double **slot = rta_task_data(t);
  CHECK(*slot == NULL);
  free(slot);
}

/* Leaf ids are in the names: mp/all/a<id>, mp/own<r>/o<id>. */
static void leaf(rta_task_t *parent, const char *fmt, int id) {
  char name[32];
  snprintf(name, sizeof name, fmt, id);
  const char *nm = name;
  rta_task_t *t;
  CHECK_EQ(rta_task_define(parent, 1, &nm, NULL, &t), 0);
  double **slot = calloc(1, sizeof *slot);
  *slot = malloc(ROWS * sizeof(double));
  for (int i = 0; i < ROWS; i++)
    (*slot)[i] = val(id, i);
  rta_task_set_data(t, slot);
  int64_t d = ROWS;
  CHECK_EQ(rta_task_array_register(t, (void **)slot, rta_type_elem(RTA_DOUBLE), 1, &d), 0);
}

/* Verifies every local leaf; returns the global count of leaves. */
static int64_t check_leaves(rta_lb_context_t *ctx) {
  int64_t n = rta_lb_nlocal(ctx), all;
  for (int i = 0; i < n; i++) {
    rta_task_t *t = rta_lb_local_task(ctx, i);
    const char *key = rta_task_key(t), *nm = rta_task_name(t);
    int id = atoi(nm + 1);
    double **slot = rta_task_data(t);
    CHECK(slot && *slot);
    for (int j = 0; j < ROWS; j++)
      CHECK((*slot)[j] == val(id, j));
    if (nm[0] == 'a') {
      CHECK(strncmp(key, "mp/all/", 7) == 0);
      CHECK_EQ(rta_task_stage(t), id / np); /* the stage it was defined in */
    } else {
      char want[32];
      snprintf(want, sizeof want, "mp/own%d/o%d", id / NOWN, id);
      CHECK_STREQ(key, want);
    }
  }
  MPI_Allreduce(&n, &all, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  return all;
}

/* Bit r: this rank has mp/own<r>. */
static unsigned own_groups(void) {
  unsigned bits = 0;
  for (int r = 0; r < np; r++) {
    char key[32];
    snprintf(key, sizeof key, "mp/own%d", r);
    rta_task_t *t;
    if (rta_task_find(key, &t) == 0)
      bits |= 1u << r;
  }
  return bits;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  rta_task_params_t rp = RTA_TASK_PARAMS_INIT;
  rp.serial = (rta_serial_t){cb_size, cb_pack, cb_unpack, cb_release};
  const char *rn = "mp";
  rta_task_t *root, *all, *own;
  CHECK_EQ(rta_task_define(NULL, 1, &rn, &rp, &root), 0);
  const char *an = "all";
  CHECK_EQ(rta_task_define(root, 1, &an, NULL, &all), 0);
  char on[16];
  snprintf(on, sizeof on, "own%d", me);
  const char *onp = on;
  CHECK_EQ(rta_task_define(root, 1, &onp, NULL, &own), 0);
  for (int k = 0; k < K; k++)
    leaf(all, "a%d", k * np + me);
  for (int i = 0; i < NOWN; i++)
    leaf(own, "o%d", me * NOWN + i);
  CHECK_EQ(rta_task_nstages(all), K);
  const int64_t total = (int64_t)np * (K + NOWN);

  rta_lb_config_t cfg;
  rta_lb_config_init(&cfg);
  cfg.use_env = 0;
  cfg.policy.mode = RTA_POLICY_EXPLICIT;
  cfg.strategy = RTA_MAP_RANDOM;
  cfg.seed = 5;
  rta_lb_context_t *ctx;
  MPI_Comm comm;
  CHECK_EQ(rta_lb_create(MPI_COMM_WORLD, root, &cfg, &ctx, &comm), 0);
  CHECK_EQ(check_leaves(ctx), total);

  /* Remaps move leaves of mp/own<r> to ranks without that group: it is
   * defined there. Stages under mp/all stay as they were. */
  int made_somewhere = 0;
  for (int k = 0; k < 6; k++) {
    CHECK_EQ(rta_lb_perform(ctx, &comm), 0);
    CHECK_EQ(check_leaves(ctx), total);
    CHECK_EQ(rta_task_nstages(all), K); /* arrivals opened no new stage */
    CHECK_EQ(rta_task_nstages(root), 2); /* nor did the groups defined here */
    made_somewhere |= (own_groups() & ~(1u << me)) != 0;
  }
  int any;
  MPI_Allreduce(&made_somewhere, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  CHECK_EQ(any, 1);

  /* A rollback removes the groups the failed remap defined. Retry until the
   * failing rank really received something. */
  int failed = 0;
  for (int attempt = 0; attempt < 8 && !failed; attempt++) {
    unsigned before = own_groups();
    int nlocal = rta_lb_nlocal(ctx), nst = rta_task_nstages(root);
    fail_unpack_rank = np - 1;
    int rc = rta_lb_perform(ctx, &comm);
    fail_unpack_rank = -1;
    if (rc != 0) {
      failed = 1;
      CHECK_EQ(own_groups(), before);
      CHECK_EQ(rta_lb_nlocal(ctx), nlocal);
      CHECK_EQ(rta_task_nstages(root), nst); /* the tree as it was */
    }
    CHECK_EQ(check_leaves(ctx), total);
  }
  CHECK_EQ(failed, 1);
  CHECK_EQ(rta_lb_perform(ctx, &comm), 0);
  CHECK_EQ(check_leaves(ctx), total);

  for (int i = 0; i < rta_lb_nlocal(ctx); i++) {
    double **slot = rta_task_data(rta_lb_local_task(ctx, i));
    free(*slot);
    free(slot);
  }
  CHECK_EQ(rta_lb_destroy(ctx), 0);
  rta_reset();
  TEST_PASS("lb_parent");
  MPI_Finalize();
  return 0;
}
