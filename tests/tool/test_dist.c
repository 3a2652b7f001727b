/* The tools interface's api->dist_quantiles: a tool linked into the program
 * reads, inside its region_exit callback, the distribution of the region
 * being left (the instance is not in it yet: exactly the instances left
 * before), and afterwards the same quantiles pia gives (in ns); an MPI
 * function's call count; bad kinds, ids and q; no data; the state outside
 * MPI_Init .. MPI_Finalize. */
#include <math.h>
#include <string.h>

#include <ballast.h>
#include <ballast/tool.h>

#include "test_util.h"

static const ballast_tool_api_v1_t *api;
static int exits, seen_ok;

static void on_exit_cb(const ballast_tool_region_t *ev, void *user) {
  (void)user;
  if (strcmp(ev->name, "work") != 0)
    return;
  uint64_t n = 12345;
  double q = 0.5, out = -1;
  int rc = api->dist_quantiles(BALLAST_TOOL_DIST_REGION, ev->id, 1, &q, &out, &n);
  if (exits == 0)
    CHECK_EQ(rc, BALLAST_ENODATA);
  else
    CHECK_EQ(rc, 0);
  CHECK_EQ(n, (uint64_t)exits);
  seen_ok += rc == 0 && out > 0;
  exits++;
}

static int init(const ballast_tool_api_v1_t *a, ballast_tool_t *tool) {
  api = a;
  CHECK_GE(a->size, BALLAST_TOOL_API_V1_2_SIZE);
  return a->on_region_exit(tool, on_exit_cb, NULL);
}

int main(int argc, char **argv) {
  CHECK_EQ(ballast_tool_attach("dist", init), 0);
  MPI_Init(&argc, &argv);
  for (int i = 0; i < 20; i++) {
    CHECK_EQ(mon_region_begin("work"), 0);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_EQ(mon_region_end("work"), 0);
  }
  CHECK(api != NULL);
  CHECK_EQ(exits, 20);
  CHECK_EQ(seen_ok, 19);
  int id = pia_region_find("work");
  double qs[] = {0.0, 0.5, 0.9, 1.0}, t[4], p[4];
  uint64_t n = 0;
  CHECK_EQ(api->dist_quantiles(BALLAST_TOOL_DIST_REGION, id, 4, qs, t, &n), 0);
  CHECK_EQ(n, 20);
  CHECK_EQ(pia_region_quantiles(id, 4, qs, p), 0);
  for (int i = 0; i < 4; i++)
    CHECK_NEAR(t[i], p[i] * 1e9, 1e-6 * t[i]);
  int bar = pia_activity_find("MPI_Barrier");
  CHECK_EQ(api->dist_quantiles(BALLAST_TOOL_DIST_MPI, bar, 0, NULL, NULL, &n), 0);
  CHECK_EQ(n, 20);
  /* bad input */
  double bad = 1.5, out = -1;
  CHECK_EQ(api->dist_quantiles(7, id, 1, qs, t, &n), BALLAST_EINVAL);
  CHECK_EQ(n, 0);
  CHECK_EQ(api->dist_quantiles(BALLAST_TOOL_DIST_REGION, id, 1, &bad, &out, NULL),
           BALLAST_EINVAL);
  CHECK_EQ(api->dist_quantiles(BALLAST_TOOL_DIST_REGION, id, 1, NULL, &out, NULL),
           BALLAST_EINVAL);
  CHECK_EQ(api->dist_quantiles(BALLAST_TOOL_DIST_REGION, id, -1, qs, t, NULL), BALLAST_EINVAL);
  CHECK_EQ(api->dist_quantiles(BALLAST_TOOL_DIST_REGION, 1 << 30, 1, qs, t, NULL),
           BALLAST_ENOTFOUND);
  CHECK_EQ(api->dist_quantiles(BALLAST_TOOL_DIST_MPI, -2, 1, qs, t, NULL), BALLAST_ENOTFOUND);
  CHECK_EQ(api->dist_quantiles(BALLAST_TOOL_DIST_MPI, pia_activity_find(PIA_GROUP_P2P),
                               1, qs, t, NULL), BALLAST_ENOTFOUND); /* functions, not groups */
  CHECK_EQ(api->dist_quantiles(BALLAST_TOOL_DIST_MPI, pia_activity_find("MPI_Exscan"),
                               1, qs, &out, &n), BALLAST_ENODATA);
  CHECK(out == -1);
  MPI_Finalize();
  CHECK_EQ(api->dist_quantiles(BALLAST_TOOL_DIST_REGION, id, 1, qs, t, NULL), BALLAST_ESTATE);
  TEST_PASS("tool_dist");
  return 0;
}
