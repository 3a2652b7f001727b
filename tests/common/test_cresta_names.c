/* The CRESTA names of ballast/cresta.h answer exactly what ballast's one name
 * for each call answers, with CRESTA's argument order and CRESTA's keys and
 * communicators: same values, same error codes. One rank (a context over a
 * single rank still maps, moves nothing and returns its communicator). */
#include <ballast.h>
#include <ballast/cresta.h>

#include "test_util.h"

/* This test calls the CRESTA names on purpose. */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

static void pia_names(void) {
  CHECK_EQ(ipm_region(IPM_START, "outer"), 0);
  CHECK_EQ(ipm_region(IPM_START, "inner"), 0);
  CHECK_EQ(ipm_region(IPM_END, "inner"), 0);
  CHECK_EQ(ipm_region(IPM_END, "outer"), 0);
  CHECK_EQ(ipm_region(7, "outer"), BALLAST_EINVAL);
  CHECK_EQ(ipm_region(IPM_END, "outer"), BALLAST_EMISMATCH); /* not open */

  pia_regid_t outer = pia_region_find("outer");
  CHECK_GE(outer, 0);
  CHECK_EQ(pia_find_region_by_name("outer"), outer);
  CHECK_EQ(pia_find_region_by_name("nope"), pia_region_find("nope"));
  CHECK_EQ(pia_find_region_by_name(NULL), BALLAST_EINVAL);
  pia_regdata_t a, b;
  CHECK_EQ(pia_get_region_data(&a, outer), 0);
  CHECK_EQ(pia_region_data(outer, &b), 0);
  CHECK_EQ(a.id, b.id);
  CHECK_EQ(a.count, 1);
  CHECK_EQ(b.count, 1);
  CHECK(strcmp(a.name, "outer") == 0);
  CHECK_EQ(pia_get_region_data(&a, 12345), BALLAST_ENOTFOUND);
  CHECK_EQ(pia_get_region_data(NULL, outer), BALLAST_EINVAL);

  pia_act_t send = pia_activity_find("MPI_Send");
  CHECK_GE(send, 0);
  CHECK_EQ(pia_find_activity_by_name("MPI_Send"), send);
  CHECK_EQ(pia_find_activity_by_name("MPI_Bogus"), BALLAST_ENOTFOUND);
  char c = 'x';
  for (int i = 0; i < 3; i++) { /* to itself: eager, then received */
    MPI_Send(&c, 1, MPI_CHAR, 0, 0, MPI_COMM_SELF);
    MPI_Recv(&c, 1, MPI_CHAR, 0, 0, MPI_COMM_SELF, MPI_STATUS_IGNORE);
  }
  pia_actdata_t x, y;
  memset(&x, 0x55, sizeof x);
  CHECK_EQ(pia_init_activity_data(&x), 0);
  pia_actdata_init(&y);
  CHECK_EQ(x.ncalls, 0);
  CHECK(isinf(x.tmin) && isinf(y.tmin));
  CHECK_EQ(pia_init_activity_data(NULL), BALLAST_EINVAL);
  CHECK_EQ(pia_get_activity_data(&x, send), 0);
  CHECK_EQ(pia_activity_data(send, &y), 0);
  CHECK_EQ(x.ncalls, 3);
  CHECK_EQ(y.ncalls, 3);
  CHECK_EQ(x.nbytes, y.nbytes);
  CHECK_EQ(pia_get_activity_data(&x, -9), BALLAST_ENOTFOUND);
  CHECK_EQ(x.ncalls, 3); /* left unchanged on error */
}

static void rta_names(void) {
  const char *rn[] = {"root"}, *kn[] = {"a"};
  rta_task_t *root = NULL, *a = NULL, *t = NULL;
  CHECK_EQ(rta_define_task(NULL, 1, rn, NULL, &root), 0);
  CHECK_EQ(rta_define_task(root, 1, kn, NULL, &a), 0);
  CHECK_EQ(rta_define_task(root, 1, kn, NULL, NULL), BALLAST_EEXIST);
  CHECK_EQ(rta_task_find("root/a", &t), 0);
  CHECK(t == a);

  CHECK_EQ(rta_begin_task("root"), 0);
  CHECK_EQ(rta_begin_task("root/a"), 0);
  CHECK(rta_task_current() == a);
  CHECK_EQ(rta_begin_task("root/a"), BALLAST_ESTATE); /* already open */
  CHECK_EQ(rta_end_task("root"), BALLAST_EMISMATCH);  /* not innermost */
  CHECK_EQ(rta_end_task("root/a"), 0);
  CHECK_EQ(rta_end_task("root"), 0);
  CHECK(rta_task_current() == NULL);
  CHECK_EQ(rta_begin_task("root/nope"), BALLAST_ENOTFOUND);
  CHECK_EQ(rta_end_task("root/nope"), BALLAST_ENOTFOUND);
  CHECK_EQ(rta_begin_task(NULL), BALLAST_EINVAL);
  CHECK_EQ(rta_end_task(""), BALLAST_EINVAL);

  double *arr = malloc(4 * sizeof *arr);
  CHECK(arr != NULL);
  int64_t dims[1] = {4};
  CHECK_EQ(rta_register_array(a, (void **)&arr, rta_type_elem(RTA_DOUBLE), 1, dims), 0);
  CHECK_EQ(rta_register_array(a, (void **)&arr, rta_type_elem(RTA_DOUBLE), 1, dims), BALLAST_EEXIST);
  CHECK_EQ(rta_task_narrays(a), 1);

  rta_lb_config_t cfg;
  rta_lb_config_init(&cfg);
  cfg.use_env = 0;
  cfg.policy.mode = RTA_POLICY_EXPLICIT;
  rta_lb_context_t *ctx = NULL, *found = NULL;
  MPI_Comm comm = MPI_COMM_NULL;
  CHECK_EQ(rta_define_lb_context(MPI_COMM_WORLD, root, &cfg, &ctx, &comm), 0);
  CHECK(ctx != NULL && comm != MPI_COMM_NULL);
  CHECK_EQ(rta_lb_find(comm, &found), 0);
  CHECK(found == ctx);
  rta_lb_stats_t s;
  CHECK_EQ(rta_perform_load_balancing(&comm), 0);
  CHECK_EQ(rta_lb_stats(ctx, &s), 0);
  long long calls = s.calls;
  CHECK_EQ(calls, 1);
  CHECK_EQ(rta_lb_perform(ctx, &comm), 0);
  CHECK_EQ(rta_lb_stats(ctx, &s), 0);
  CHECK_EQ(s.calls, calls + 1);
  CHECK_EQ(rta_perform_load_balancing(NULL), BALLAST_EINVAL);
  MPI_Comm w = MPI_COMM_WORLD;
  CHECK_EQ(rta_perform_load_balancing(&w), BALLAST_ENOTFOUND);
  CHECK_EQ(rta_lb_destroy(ctx), 0);
  CHECK_EQ(rta_perform_load_balancing(&comm), BALLAST_ENOTFOUND);
  CHECK_EQ(rta_task_array_unregister(a, (void **)&arr), 0);
  free(arr);
  CHECK_EQ(rta_task_remove(root), 0);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  pia_names();
  rta_names();
  CHECK_EQ(rta_reset(), 0);
  TEST_PASS("common_cresta_names");
  MPI_Finalize();
  return 0;
}
