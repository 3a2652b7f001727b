/* The measured hardware model sees the shaped inter-node link.
 * emumap.sh brings the cluster up with tbf (100mbit) on the inter-node
 * veths. rta_hw_discover_ex(measure_links) measures latency and bandwidth
 * between the two node leaders (ranks 0 and 2). The model measures no
 * intra-node link, so this test measures one itself with the same method
 * (8 B and 1 MiB ping-pongs) between ranks 0 and 1 of node A, and compares
 * the cost of a bandwidth-dominated transfer (latency + 1 MiB / bandwidth):
 * inter-node must cost at least 3x intra-node (a 100 Mbit/s link against
 * shared memory; the margin is wide on purpose). Also checks that the model's
 * bandwidth is that of a shaped link (below 50 MB/s for 12.5 MB/s nominal,
 * the tbf burst lets part of each message through at line rate), that the
 * model's distances order the same way, and that rta_hw_refresh_links()
 * measures again with the same outcome.
 * Launched by emumap.sh: emumap_links NODE_A NODE_B. */
#include <ballast/rta_map.h>

#include "emumap_util.h"
#include "test_hw.h"

enum { BIG = 1 << 20 };

/* Intra-node link of node A (ranks 0 and 1), measured like the model does:
 * latency of 8 B, bandwidth of 1 MiB net of that latency. Same on all ranks. */
static void intra_link(double *lat, double *bw) {
  double t[2];
  t[0] = emu_pingpong(MPI_COMM_WORLD, 0, 1, 8, 20);
  t[1] = emu_pingpong(MPI_COMM_WORLD, 0, 1, BIG, 4);
  MPI_Bcast(t, 2, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  *lat = t[0] > 1e-9 ? t[0] : 1e-9;
  double tb = t[1] - t[0];
  *bw = BIG / (tb > 1e-9 ? tb : 1e-9);
}

static void check_model(const rta_hw_t *hw, int me, const char *what,
                        double *ratio) {
  CHECK_EQ(rta_hw_nnodes(hw), 2);
  double lat = 0, bw = 0, lat10 = 0, bw10 = 0;
  CHECK_EQ(rta_hw_link(hw, 0, 1, &lat, &bw), 0);
  CHECK_EQ(rta_hw_link(hw, 1, 0, &lat10, &bw10), 0);
  CHECK_NEAR(lat, lat10, 1e-12); /* symmetric */
  CHECK_NEAR(bw, bw10, 1e-3);
  CHECK_DGT(lat, 0.0);
  CHECK_DGT(bw, 0.0);
  CHECK_DLT(bw, 50e6); /* shaped: 12.5 MB/s nominal */
  double ilat, ibw;
  intra_link(&ilat, &ibw);
  double inter_cost = lat + BIG / bw, intra_cost = ilat + BIG / ibw;
  *ratio = inter_cost / intra_cost;
  if (me == 0) {
    printf("%s: inter-node (model, leaders 0-2): latency %.1f us, bandwidth "
           "%.2f MB/s, 1 MiB cost %.3f ms\n", what, lat * 1e6, bw / 1e6,
           inter_cost * 1e3);
    printf("%s: intra-node (measured here, ranks 0-1): latency %.1f us, "
           "bandwidth %.1f MB/s, 1 MiB cost %.3f ms\n", what, ilat * 1e6,
           ibw / 1e6, intra_cost * 1e3);
    printf("%s: measured link cost ratio inter/intra for 1 MiB: %.1f\n", what,
           *ratio);
    printf("%s: model distances: intra-node %g, inter-node %g\n", what,
           slot_dist(hw, 0, 1), slot_dist(hw, 0, 2));
    fflush(stdout);
  }
  CHECK_DGE(*ratio, 3.0);
  CHECK_DGT(slot_dist(hw, 0, 2), slot_dist(hw, 0, 1));
  CHECK_DGT(node_dist(hw, 0, 1), 0.0);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  char host[EMU_NRANKS][EMU_HOST_LEN];
  int me = emu_start(argc, argv, host);
  CHECK(strcmp(host[0], host[1]) == 0 && strcmp(host[0], host[2]) != 0);

  rta_hw_options_t opt;
  rta_hw_options_init(&opt);
  opt.measure_links = 1;
  rta_hw_t *hw = NULL;
  CHECK_EQ(rta_hw_discover_ex(MPI_COMM_WORLD, &opt, &hw), 0);
  if (me == 0) {
    rta_hw_print(hw, stdout);
    fflush(stdout);
  }
  double r1, r2;
  check_model(hw, me, "discover", &r1);
  CHECK_EQ(rta_hw_refresh_links(hw, MPI_COMM_WORLD), 0);
  check_model(hw, me, "refresh", &r2);
  rta_hw_destroy(hw);
  if (me == 0)
    printf("RATIO inter/intra 1 MiB link cost: %.1f (discover), %.1f "
           "(refresh)\n", r1, r2);
  TEST_PASS("emumap links: measured inter-node cost >= 3x intra-node on a "
            "shaped link");
  MPI_Finalize();
  return 0;
}
