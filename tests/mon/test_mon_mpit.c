/* MPI_T performance variables per region (BALLAST_MPIT): the unexpected
 * queue forced by sending before the receives are posted, the posted
 * queue by receives posted before the sends; their values per region and
 * per repetition. 2 ranks. With argument "none" the run selects nothing
 * valid and must behave as without BALLAST_MPIT (check_mpit.py runs both). */
#include <ballast/pia.h>
#include <ballast/pia_assert.h>

#include "test_util.h"

static void with_vars(int rank) {
  CHECK_EQ(pia_mpit_count(), 2);
  int unexp = pia_mpit_find("pml_ob1_unexpected_msgq_length");
  int posted = pia_mpit_find("pml_ob1_posted_recvq_length");
  CHECK_GE(unexp, 0);
  CHECK_GE(posted, 0);
  CHECK_EQ(pia_mpit_find("no_such_variable"), BALLAST_ENOTFOUND);
  CHECK_EQ(pia_mpit_find(NULL), BALLAST_EINVAL);
  CHECK(pia_mpit_name(2) == NULL);
  CHECK(pia_mpit_name(-1) == NULL);
  int buf[10] = {0};
  /* Unexpected: rank 0 sends 10 messages, then a sentinel (tag 7), before
   * rank 1 posts anything. */
  if (rank == 0) {
    for (int i = 0; i < 10; i++)
      MPI_Send(&buf[i], 1, MPI_INT, 1, 5, MPI_COMM_WORLD);
    MPI_Send(&buf[0], 1, MPI_INT, 1, 7, MPI_COMM_WORLD);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 1) {
    /* Messages from one source are matched in order: once the sentinel
     * is there, the ten are in the unexpected queue too (11 with it). */
    MPI_Probe(0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK_EQ(mon_region_begin("drain"), 0);
    for (int i = 0; i < 10; i++)
      MPI_Recv(&buf[i], 1, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Recv(&buf[0], 1, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK_EQ(mon_region_end("drain"), 0);
    pia_mpitdata_t d;
    pia_regid_t id = pia_region_find("drain");
    CHECK_EQ(pia_region_mpit(id, unexp, &d), 0);
    CHECK(d.max == 11);
    CHECK(d.delta == -11);
    CHECK_EQ(pia_region_mpit(id, 9, &d), BALLAST_ENOTFOUND);
    CHECK_EQ(pia_region_mpit(id, unexp, NULL), BALLAST_EINVAL);
  }
  /* Posted: rank 1 posts 3 receives inside a repeated region's repetition;
   * an assertion on the posted queue's length at the region's end fails,
   * one on the unexpected queue holds. */
  MPI_Request rq[3];
  int a_fail = -1, a_hold = -1;
  pia_assert_options_t o;
  pia_assert_options_init(&o);
  o.region = "post";
  o.expr = "mpit(pml_ob1_posted_recvq_length) < 2";
  CHECK_EQ(pia_assert_create_ex(&o, &a_fail), 0);
  o.expr = "mpit(pml_ob1_unexpected_msgq_length) == 0";
  CHECK_EQ(pia_assert_create_ex(&o, &a_hold), 0);
  o.expr = "mpit(mpool_hugepage_bytes_allocated) >= 0"; /* valid, not selected */
  int bad;
  CHECK_EQ(pia_assert_create_ex(&o, &bad), BALLAST_ENOTFOUND);
  double now;
  CHECK_EQ(pia_mpit_read(unexp, &now), 0);
  CHECK_EQ(pia_mpit_read(7, &now), BALLAST_ENOTFOUND);
  CHECK_EQ(pia_mpit_read(unexp, NULL), BALLAST_EINVAL);
  if (rank == 1) {
    CHECK_EQ(mon_region_repeat("post"), 0);
    CHECK_EQ(mon_region_begin("post"), 0);
    for (int i = 0; i < 3; i++)
      MPI_Irecv(&buf[i], 1, MPI_INT, 0, 6, MPI_COMM_WORLD, &rq[i]);
    CHECK_EQ(mon_region_end("post"), 0);
    pia_regid_t id = pia_region_find("post");
    pia_mpitdata_t d;
    CHECK_EQ(pia_region_mpit(id, posted, &d), 0);
    CHECK(d.delta == 3);
    CHECK(d.max == 3);
    pia_rep_t r;
    CHECK_EQ(pia_region_rep_get(id, 0, &r), 0);
    CHECK_EQ(r.nmpit, 2);
    CHECK(r.mpit[posted] == 3);
    CHECK(r.mpit[unexp] == 0);
    CHECK_GE(r.vcsw + r.ivcsw, 0);
    pia_assert_result_t res;
    CHECK_EQ(pia_assert_result(a_fail, &res), 0);
    CHECK_EQ(res.checks, 1);
    CHECK_EQ(res.first_fail, 1);
    CHECK_EQ(pia_assert_result(a_hold, &res), 0);
    CHECK_EQ(res.checks, 1);
    CHECK_EQ(res.passes, 1);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0)
    for (int i = 0; i < 3; i++)
      MPI_Send(&buf[i], 1, MPI_INT, 1, 6, MPI_COMM_WORLD);
  else
    MPI_Waitall(3, rq, MPI_STATUSES_IGNORE);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  CHECK_EQ(mon_mpit_select("x"), BALLAST_ESTATE); /* after MPI_Init */
  CHECK_EQ(mon_mpit_select(NULL), BALLAST_EINVAL);
  if (argc > 1 && !strcmp(argv[1], "none")) {
    CHECK_EQ(pia_mpit_count(), 0);
    CHECK_EQ(mon_region_begin("r"), 0);
    CHECK_EQ(mon_region_end("r"), 0);
    pia_mpitdata_t d;
    CHECK_EQ(pia_region_mpit(pia_region_find("r"), 0, &d), BALLAST_ENOTFOUND);
  } else {
    with_vars(rank);
  }
  /* A whole-run assertion reads the variable at MPI_Finalize (an outside
   * check found it never evaluated). */
  int run_id = -1, have = pia_mpit_count() > 0;
  if (have) {
    pia_assert_options_t o;
    pia_assert_options_init(&o);
    o.region = PIA_ASSERT_RUN;
    o.expr = "mpit(pml_ob1_unexpected_msgq_length) >= 0";
    CHECK_EQ(pia_assert_create_ex(&o, &run_id), 0);
  }
  MPI_Finalize();
  if (have) {
    pia_assert_result_t res;
    CHECK_EQ(pia_assert_result(run_id, &res), 0);
    CHECK_EQ(res.errors, 0);
    CHECK_EQ(res.checks, 1);
    CHECK_EQ(res.passes, 1);
  }
  TEST_PASS("mon_mpit");
}
