/* ballast_tool_attach: a tool linked into the program, queued before
 * MPI_Init (its init runs there), another attached after (its init runs at
 * once, its callbacks after the first's), return codes for a declining and
 * a failing init and bad arguments, the limit of BALLAST_TOOL_MAX tools,
 * and BALLAST_ESTATE after MPI_Finalize. */
#include <string.h>

#include <ballast.h>

#include "test_util.h"

static int inits[2], me;
static long seen[2];
static int last = 1;
static uint64_t last_t;
static const ballast_tool_api_v1_t *api_seen;

static void exit_cb(const ballast_tool_mpi_exit_t *e, void *ud) {
  int who = (int)(intptr_t)ud;
  if (seen[1] > 0 || who == 1) /* once both listen: strictly 0, 1, 0, 1 */
    CHECK_EQ(who, 1 - last);
  CHECK(e->t_ns >= last_t || who == 1);
  last_t = e->t_ns;
  last = who;
  seen[who]++;
}

static int init_a(const ballast_tool_api_v1_t *api, ballast_tool_t *tool) {
  inits[0]++;
  api_seen = api;
  CHECK_STREQ(api->tool_name(tool), "linked_a");
  CHECK(api->world_rank() >= 0); /* runs at MPI_Init, after PMPI_Init */
  CHECK_EQ(api->on_mpi_exit(NULL, exit_cb, NULL), BALLAST_EINVAL);
  CHECK_EQ(api->on_mpi_exit(tool, NULL, NULL), BALLAST_EINVAL);
  return api->on_mpi_exit(tool, exit_cb, (void *)(intptr_t)0);
}
static int init_b(const ballast_tool_api_v1_t *api, ballast_tool_t *tool) {
  inits[1]++;
  CHECK_STREQ(api->tool_name(tool), "linked_b");
  return api->on_mpi_exit(tool, exit_cb, (void *)(intptr_t)1);
}
static int init_decline(const ballast_tool_api_v1_t *api, ballast_tool_t *tool) {
  (void)api;
  (void)tool;
  return 3;
}
static int init_fail(const ballast_tool_api_v1_t *api, ballast_tool_t *tool) {
  (void)api;
  (void)tool;
  return -1;
}

int main(int argc, char **argv) {
  CHECK_EQ(ballast_tool_attach("linked_a", init_a), 0); /* queued */
  CHECK_EQ(inits[0], 0);
  CHECK_EQ(ballast_tool_attach(NULL, init_a), BALLAST_EINVAL);
  CHECK_EQ(ballast_tool_attach("", init_a), BALLAST_EINVAL);
  CHECK_EQ(ballast_tool_attach("x", NULL), BALLAST_EINVAL);
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  CHECK_EQ(inits[0], 1);
  CHECK(seen[0] >= 1); /* MPI_Comm_rank */
  CHECK_EQ(ballast_tool_attach("linked_b", init_b), 0); /* runs at once */
  CHECK_EQ(inits[1], 1);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK_EQ(seen[1], 2);
  CHECK_EQ(ballast_tool_attach("linked_decline", init_decline), 1);
  CHECK_EQ(ballast_tool_attach("linked_fail", init_fail), BALLAST_ECALLBACK);
  /* 4 tools so far: the rest of the table, then one too many */
  for (int i = 4; i < BALLAST_TOOL_MAX; i++)
    CHECK_EQ(ballast_tool_attach("linked_decline", init_decline), 1);
  CHECK_EQ(ballast_tool_attach("one_too_many", init_decline), BALLAST_ERANGE);
  uint64_t t0 = api_seen->now_ns(), t1 = ballast_tool_now_ns();
  CHECK(t1 >= t0 && t1 - t0 < 1000000000u);
  CHECK_EQ(api_seen->world_size(), 1);
  MPI_Finalize();
  CHECK_EQ(ballast_tool_attach("late", init_b), BALLAST_ESTATE);
  CHECK_EQ(inits[1], 1);
  printf("PASS tool_attach\n");
  return 0;
}
