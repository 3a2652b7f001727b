/* The API outside MPI_Init .. MPI_Finalize (common.h): every entry point that
 * calls MPI or measures returns BALLAST_ESTATE before MPI_Init and after
 * MPI_Finalize, instead of aborting inside MPI or returning 0 with nothing
 * measured; entry points that need no MPI (graphs, simulated machines,
 * policies, accessors of objects that exist) keep working. A context, a
 * task, a mapping and a hardware model made during the run are used after
 * MPI_Finalize. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ballast/mon.h>
#include <ballast/pia.h>
#include <ballast/rta.h>

#include "test_util.h"

#define EXPECT_STATE(call) CHECK_EQ((call), BALLAST_ESTATE)

/* Everything that needs MPI, with arguments that would be valid during the
 * run. ctx/root/hw/m may be NULL before MPI_Init (then only the calls that
 * check state before their handles are tried). */
static void outside(rta_task_t *root, rta_lb_context_t *ctx, rta_hw_t *hw) {
  MPI_Comm comm = MPI_COMM_WORLD;
  EXPECT_STATE(mon_region_begin("r"));
  EXPECT_STATE(mon_region_end("r"));
  mon_region_handle_t h = NULL;
  CHECK_EQ(mon_region_handle_create("r", &h), 0); /* valid any time (mon.h) */
  EXPECT_STATE(mon_region_enter(h));
  EXPECT_STATE(mon_region_leave(h));
  mon_region_handle_destroy(h);
  EXPECT_STATE(mon_report(MON_REPORT_TERSE));
  EXPECT_STATE(mon_profile_write("/nonexistent/x.json"));

  pia_actdata_t ad;
  pia_regdata_t rd;
  pia_partnerdata_t pd[2];
  pia_actdata_init(&ad); /* a struct reset, no MPI */
  EXPECT_STATE(pia_activity_data(0, &ad));
  EXPECT_STATE(pia_region_activity_data(0, 0, &ad));
  EXPECT_STATE(pia_region_data(0, &rd));
  EXPECT_STATE(pia_partner_data(0, PIA_REGION_ALL, pd));
  EXPECT_STATE(pia_partner_volumes(1, PIA_REGION_ALL, pd));
  EXPECT_STATE(pia_region_current());
  EXPECT_STATE(pia_region_find_by_path("ballast_main"));
  EXPECT_STATE(pia_region_find("ballast_main"));
  pia_interval_t *iv = NULL;
  CHECK_EQ(pia_interval_create(&iv), 0); /* memory only */
  EXPECT_STATE(pia_interval_mark(iv));
  pia_interval_destroy(iv);

  /* rta: the task runtime */
  EXPECT_STATE(rta_step());
  if (root) {
    EXPECT_STATE(rta_task_begin(root));
    EXPECT_STATE(rta_task_end(root));
    rta_mapping_t *m = NULL;
    EXPECT_STATE(rta_task_map(comm, root, hw, NULL, &m));
    CHECK(m == NULL);
    rta_lb_context_t *c2 = NULL;
    EXPECT_STATE(rta_lb_create(comm, root, NULL, &c2, NULL));
    CHECK(c2 == NULL);
  }
  rta_hw_t *hw2 = NULL;
  EXPECT_STATE(rta_hw_discover(comm, &hw2));
  CHECK(hw2 == NULL);
  if (ctx) {
    MPI_Comm app = rta_lb_comm(ctx);
    EXPECT_STATE(rta_lb_perform(ctx, NULL));
    EXPECT_STATE(rta_lb_perform(ctx, &app));
    /* Destroying needs no MPI after MPI_Finalize (the communicators died
     * with it): ballast's memory is freed and 0 returned. */
    CHECK_EQ(rta_lb_destroy(ctx), 0);
  }
  if (hw) {
    rta_graph_t *g = NULL;
    CHECK_EQ(rta_graph_create(rta_hw_nslots(hw), &g), 0);
    int64_t slot[64];
    EXPECT_STATE(rta_map_graph_par(g, hw, RTA_MAP_TWOPHASE, NULL, NULL, comm, slot, NULL));
    rta_graph_destroy(g);
  }
}

/* What needs no MPI still works after MPI_Finalize. */
static void still_works(rta_task_t *root, rta_hw_t *hw) {
  rta_graph_t *g = NULL;
  CHECK_EQ(rta_graph_create(4, &g), 0);
  CHECK_EQ(rta_graph_add_edge(g, 0, 1, 2.0), 0);
  CHECK_EQ(rta_graph_nvert(g), 4);
  rta_hw_t *sim = NULL;
  CHECK_EQ(rta_hw_create_sim(2, "core:2", NULL, NULL, &sim), 0);
  CHECK_EQ(rta_hw_nslots(sim), 4);
  rta_hw_destroy(sim);
  rta_graph_destroy(g);
  CHECK_GE(rta_hw_nslots(hw), 1);
  CHECK(strcmp(rta_task_key(root), "root") == 0);
  CHECK_EQ(rta_task_nchildren(root), 2);
  rta_task_t *f = NULL;
  CHECK_EQ(rta_task_find("root", &f), 0);
  CHECK(f == root);
  CHECK(strcmp(ballast_err_name(BALLAST_ESTATE), "BALLAST_ESTATE") == 0);
  /* The task tree is memory: defining and removing need no MPI. */
  const char *late[] = {"late"};
  rta_task_t *t = NULL;
  CHECK_EQ(rta_task_define(root, 1, late, NULL, &t), 0);
  CHECK_EQ(rta_task_remove(t), 0);
  double *d = NULL;
  int64_t dims[1] = {4};
  CHECK_EQ(rta_task_array_register(root, (void **)&d, rta_type_elem(RTA_DOUBLE), 1, dims),
           BALLAST_EINVAL); /* NULL data with 4 elements: refused */
  CHECK_EQ(rta_task_narrays(root), 0);
}

int main(int argc, char **argv) {
  outside(NULL, NULL, NULL); /* before MPI_Init */
  MPI_Init(&argc, &argv);
  int me, np;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  rta_task_t *root = NULL;
  const char *rn[] = {"root"};
  CHECK_EQ(rta_task_define(NULL, 1, rn, NULL, &root), 0);
  char a[16], b[16];
  snprintf(a, sizeof a, "t%d", 2 * me);
  snprintf(b, sizeof b, "t%d", 2 * me + 1);
  const char *kids[] = {a, b};
  CHECK_EQ(rta_task_define(root, 2, kids, NULL, NULL), 0);
  rta_lb_context_t *ctx = NULL;
  MPI_Comm app;
  CHECK_EQ(rta_lb_create(MPI_COMM_WORLD, root, NULL, &ctx, &app), 0);
  rta_hw_t *hw = NULL;
  CHECK_EQ(rta_hw_discover(MPI_COMM_WORLD, &hw), 0);
  CHECK_EQ(rta_task_begin(root), 0);
  CHECK_EQ(rta_task_end(root), 0);
  MPI_Finalize();

  outside(root, ctx, hw);
  still_works(root, hw);
  rta_hw_destroy(hw);
  CHECK_EQ(rta_reset(), 0);
  if (me == 0)
    printf("after_finalize: every entry point refused outside MPI\n");
  return 0;
}
