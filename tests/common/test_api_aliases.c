/* The deprecated names of the public API still work: each is a real exported
 * function that gives what its new name gives (programs built against the old
 * names and the Fortran module rely on them). */
#include <ballast.h>

#include "test_util.h"

static void task_aliases(void) {
  const char *names[] = {"root"};
  rta_task_t *root = NULL, *t = NULL;
  CHECK_EQ(rta_define_task(NULL, 1, names, NULL, &root), 0);
  CHECK_EQ(rta_find_task("root", &t), 0);
  CHECK(t == root);
  CHECK_EQ(rta_find_task("nope", &t), BALLAST_ENOTFOUND);
  CHECK_EQ(rta_begin_task("root"), 0);
  CHECK(rta_current_task() == rta_task_current());
  CHECK(rta_current_task() == root);
  CHECK_EQ(rta_end_task("root"), 0);

  rta_cost_config_t a, b;
  CHECK_EQ(rta_set_window(7), 0);
  CHECK_EQ(rta_get_cost_config(&a), 0);
  CHECK_EQ(rta_cost_config_get(&b), 0);
  CHECK_EQ(a.window, 7);
  CHECK_EQ(b.window, 7);
  a.min_steps = 2;
  CHECK_EQ(rta_set_cost_config(&a), 0);
  CHECK_EQ(rta_cost_config_get(&b), 0);
  CHECK_EQ(b.min_steps, 2);
  CHECK_EQ(rta_set_cost_config(NULL), BALLAST_EINVAL);
  CHECK_EQ(rta_remove_task(root), 0);
  CHECK_EQ(rta_task_find("root", &t), BALLAST_ENOTFOUND);
  CHECK_EQ(rta_remove_task(NULL), BALLAST_EINVAL);
}

static void lb_aliases(void) {
  rta_lb_config_t a, b;
  memset(&a, 0xff, sizeof a); /* both fill every byte, padding included */
  memset(&b, 0, sizeof b);
  CHECK_EQ(rta_lb_config_default(&a), 0);
  rta_lb_config_init(&b);
  CHECK(memcmp(&a, &b, sizeof a) == 0);
  CHECK_EQ(a.strategy, RTA_MAP_TWOPHASE);
  rta_policy_config_t p, q;
  memset(&p, 0, sizeof p); /* padding: the fields are compared below */
  memset(&q, 0, sizeof q);
  CHECK_EQ(rta_policy_config_default(&p), 0);
  rta_policy_config_init(&q);
  CHECK(memcmp(&p, &q, sizeof p) == 0);
  int rank;
  MPI_Comm c;
  int ranks[1];
  rta_lb_stats_t s;
  CHECK_EQ(rta_destroy_lb_context(NULL), 0);
  CHECK_EQ(rta_task_owner(NULL, "x", &rank), BALLAST_EINVAL);
  CHECK_EQ(rta_task_comm(NULL, "x", &c), BALLAST_EINVAL);
  CHECK_EQ(rta_task_gang_ranks(NULL, "x", ranks, 1), BALLAST_EINVAL);
  CHECK_EQ(rta_lb_get_stats(NULL, &s), BALLAST_EINVAL);
}

static void pia_aliases(void) {
  CHECK_EQ(mon_region_begin("outer"), 0);
  CHECK_EQ(mon_region_begin("inner"), 0);
  pia_regid_t cur = pia_region_current();
  CHECK_EQ(pia_current_region(), cur);
  pia_regid_t outer = pia_region_parent(cur);
  CHECK_EQ(pia_parent_region(cur), outer);
  CHECK_EQ(pia_find_child_region(outer, "inner"), cur);
  CHECK_EQ(pia_child_region(outer), pia_region_child(outer));
  CHECK_EQ(pia_next_region(cur), pia_region_next(cur));
  CHECK_EQ(pia_find_region_by_path("outer/inner"), pia_region_find_by_path("outer/inner"));
  CHECK_EQ(mon_region_end("inner"), 0);
  CHECK_EQ(mon_region_end("outer"), 0);

  pia_act_t send = pia_find_activity_by_name("MPI_Send");
  CHECK_GE(send, 0);
  pia_actdata_t x, y;
  CHECK_EQ(pia_init_activity_data(&x), 0);
  CHECK_EQ(pia_init_activity_data(&y), 0);
  CHECK_EQ(pia_get_activity_data_by_region(&x, send, PIA_REGION_ALL), 0);
  CHECK_EQ(pia_region_activity_data(PIA_REGION_ALL, send, &y), 0);
  CHECK_EQ(x.ncalls, y.ncalls);
  CHECK_EQ(pia_get_activity_data_by_region(NULL, send, PIA_REGION_ALL), BALLAST_EINVAL);

  pia_partnerdata_t u, v;
  CHECK_EQ(pia_get_partner_data(&u, 0, PIA_REGION_ALL), 0);
  CHECK_EQ(pia_partner_data(0, PIA_REGION_ALL, &v), 0);
  CHECK_EQ(u.nbytes, v.nbytes);
  CHECK_EQ(pia_get_partner_volumes(&u, 1, PIA_REGION_ALL), 0);
  CHECK_EQ(pia_partner_volumes(1, PIA_REGION_ALL, &v), 0);
  CHECK_EQ(u.nmsgs, v.nmsgs);
  CHECK_EQ(pia_get_partner_volumes(NULL, 1, PIA_REGION_ALL), BALLAST_EINVAL);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  task_aliases();
  lb_aliases();
  pia_aliases();
  CHECK_EQ(rta_reset(), 0);
  TEST_PASS("common_api_aliases");
  MPI_Finalize();
  return 0;
}
