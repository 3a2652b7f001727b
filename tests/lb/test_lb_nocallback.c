/* Registered arrays move with no callback at all (rta_lb.h): rank 0 defines
 * four tasks, none with callbacks (nor an ancestor with some): t0, t1 with
 * one double array each (sent whole, the single-array path), t2, t3 with an
 * int32 array and a double array (packed, with a lead array). An explicit
 * remap moves some to rank 1. There rta registers the arriving arrays
 * itself; each is read through rta_task_array() and checked element by
 * element, with its dims. On rank 0 the application's pointers of the tasks
 * that left are NULL (rta freed the arrays and cleared the pointers: no
 * stale pointer to free twice). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ballast/rta.h>

#include "test_util.h"

#define NT 4

static double dval(int id, int64_t k) { return id * 1000.5 + (double)k; }
static int32_t ival(int id, int64_t k) { return (int32_t)(id * 77 + 3 * k); }
static int64_t nd(int id) { return 50 + 40 * id; }
static int64_t ni(int id) { return 10 + id; }

static int id_of(const rta_task_t *t) { return rta_task_key(t)[4] - '0'; } /* "ar/t<id>" */

/* Checks every array of task t (moved or not) through rta_task_array(). */
static void check_task(rta_task_t *t) {
  int id = id_of(t);
  CHECK_EQ(rta_task_narrays(t), id < 2 ? 1 : 2);
  void **slot = NULL;
  int64_t dims[RTA_MAX_DIMS];
  int k = 0;
  if (id >= 2) {
    CHECK_EQ(rta_task_array(t, k++, &slot), 0);
    CHECK_EQ(rta_task_array_dims(t, slot, dims), 1);
    CHECK_EQ(dims[0], ni(id));
    const int32_t *iv = *slot;
    for (int64_t j = 0; j < ni(id); j++)
      CHECK_EQ(iv[j], ival(id, j));
  }
  CHECK_EQ(rta_task_array(t, k, &slot), 0);
  CHECK_EQ(rta_task_array_dims(t, slot, dims), 1);
  CHECK_EQ(dims[0], nd(id));
  const double *dv = *slot;
  for (int64_t j = 0; j < nd(id); j++)
    CHECK(dv[j] == dval(id, j));
  CHECK_EQ(rta_task_array(t, k + 1, &slot), BALLAST_ENOTFOUND);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me, np;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  const char *rn = "ar";
  rta_task_t *root = NULL;
  CHECK_EQ(rta_task_define(NULL, 1, &rn, NULL, &root), 0);
  double *d[NT] = {0};
  int32_t *iv[NT] = {0};
  if (me == 0) {
    for (int id = 0; id < NT; id++) {
      char name[8];
      snprintf(name, sizeof name, "t%d", id);
      const char *nm = name;
      rta_task_t *t = NULL;
      CHECK_EQ(rta_task_define(root, 1, &nm, NULL, &t), 0);
      if (id >= 2) {
        iv[id] = malloc((size_t)ni(id) * sizeof *iv[id]);
        for (int64_t j = 0; j < ni(id); j++)
          iv[id][j] = ival(id, j);
        int64_t di[1] = {ni(id)};
        CHECK_EQ(rta_task_array_register(t, (void **)&iv[id], rta_type_elem(RTA_INT32), 1, di), 0);
      }
      d[id] = malloc((size_t)nd(id) * sizeof *d[id]);
      for (int64_t j = 0; j < nd(id); j++)
        d[id][j] = dval(id, j);
      int64_t dd[1] = {nd(id)};
      CHECK_EQ(rta_task_array_register(t, (void **)&d[id], rta_type_elem(RTA_DOUBLE), 1, dd), 0);
      rta_serial_t ops;
      void *user;
      CHECK_EQ(rta_task_serial(t, &ops, &user), BALLAST_ENOTFOUND); /* no callbacks anywhere */
    }
  }
  rta_lb_config_t cfg;
  rta_lb_config_init(&cfg);
  cfg.policy.mode = RTA_POLICY_EXPLICIT;
  cfg.use_env = 0;
  rta_lb_context_t *ctx = NULL;
  MPI_Comm app;
  CHECK_EQ(rta_lb_create(MPI_COMM_WORLD, root, &cfg, &ctx, &app), 0);
  CHECK_EQ(rta_lb_perform(ctx, NULL), 0);
  rta_lb_stats_t st;
  CHECK_EQ(rta_lb_stats(ctx, &st), 0);
  CHECK_GE(st.tasks_moved, 1);
  int nloc = rta_lb_nlocal(ctx), total = 0;
  MPI_Allreduce(&nloc, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  CHECK_EQ(total, NT);
  for (int i = 0; i < nloc; i++)
    check_task(rta_lb_local_task(ctx, i));
  if (me == 1)
    CHECK_GE(nloc, 1);
  if (me == 0)
    for (int id = 0; id < NT; id++) {
      char key[8];
      snprintf(key, sizeof key, "ar/t%d", id);
      rta_task_t *t = NULL;
      if (rta_task_find(key, &t) != 0) { /* it left: rta cleared our pointers */
        CHECK(d[id] == NULL);
        CHECK(iv[id] == NULL);
      }
    }
  /* Again: tasks that arrived without callbacks move on the same way. */
  CHECK_EQ(rta_lb_perform(ctx, NULL), 0);
  nloc = rta_lb_nlocal(ctx);
  MPI_Allreduce(&nloc, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  CHECK_EQ(total, NT);
  for (int i = 0; i < nloc; i++)
    check_task(rta_lb_local_task(ctx, i));
  CHECK_EQ(rta_lb_destroy(ctx), 0);
  CHECK_EQ(rta_reset(), 0); /* frees the arrays rta holds */
  for (int id = 0; id < NT; id++) { /* ours that never left */
    free(d[id]);
    free(iv[id]);
  }
  if (me == 0)
    printf("lb_nocallback: %d tasks with arrays and no callbacks moved and checked\n", NT);
  MPI_Finalize();
  return 0;
}
