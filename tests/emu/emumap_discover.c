/* Node discovery on the emulated cluster: rta_hw_discover() on 2 network +
 * UTS namespaces x 2 ranks finds 2 nodes, each holding exactly the ranks
 * whose hostname is that node's, numbered by their lowest rank, with two
 * slots each; distances are 0 on one slot, intra-node level costs inside a
 * node and the inter-node unit (16, complete graph) between nodes; no links
 * are measured by default. Rank 0 prints the model (rta_hw_print).
 * Launched by emumap.sh: emumap_discover NODE_A NODE_B (ranks 0,1 on A). */
#include <ballast/rta_map.h>

#include "emumap_util.h"
#include "test_hw.h"

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  char host[EMU_NRANKS][EMU_HOST_LEN];
  int me = emu_start(argc, argv, host), np = EMU_NRANKS;
  /* The launch put ranks 0,1 on node A and 2,3 on node B. */
  for (int r = 0; r < np; r++)
    CHECK_STREQ(host[r], r < 2 ? argv[1] : argv[2]);

  rta_hw_t *hw = NULL;
  CHECK_EQ(rta_hw_discover(MPI_COMM_WORLD, &hw), 0);
  CHECK_EQ(rta_hw_nnodes(hw), 2);
  CHECK_EQ(rta_hw_nslots(hw), np);
  for (int n = 0; n < 2; n++)
    CHECK_EQ(rta_hw_node_nslots(hw, n), 2);
  /* Same node exactly when same hostname; node ids by lowest rank. */
  for (int a = 0; a < np; a++) {
    CHECK_EQ(rta_hw_slot_node(hw, a), a < 2 ? 0 : 1);
    for (int b = 0; b < np; b++) {
      int same_host = strcmp(host[a], host[b]) == 0;
      int same_node = rta_hw_slot_node(hw, a) == rta_hw_slot_node(hw, b);
      CHECK_EQ(same_host, same_node);
    }
  }
  /* Distances: 0 < intra-node < inter-node (default unit 16). */
  CHECK(slot_dist(hw, 1, 1) == 0.0);
  double intra = slot_dist(hw, 0, 1);
  double inter = slot_dist(hw, 0, 2);
  CHECK_DGT(intra, 0.0);
  CHECK_DGT(inter, intra);
  CHECK_NEAR(node_dist(hw, 0, 1), 16.0, 1e-9);
  CHECK_NEAR(slot_dist(hw, 1, 3), node_dist(hw, 0, 1),
             1e-9);
  double lat, bw;
  CHECK_EQ(rta_hw_link(hw, 0, 1, &lat, &bw), BALLAST_ENOTFOUND);
  /* Every rank built the same model. */
  int nodes[EMU_NRANKS], mine[EMU_NRANKS];
  for (int s = 0; s < np; s++)
    mine[s] = rta_hw_slot_node(hw, s);
  MPI_Allreduce(mine, nodes, np, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  for (int s = 0; s < np; s++)
    CHECK_EQ(nodes[s], mine[s]);
  if (me == 0) {
    printf("model discovered on %s:2,%s:2 (intra-node distance %g, "
           "inter-node %g):\n", argv[1], argv[2], intra, inter);
    rta_hw_print(hw, stdout);
    fflush(stdout);
  }
  rta_hw_destroy(hw);
  MPI_Barrier(MPI_COMM_WORLD);
  TEST_PASS("emumap discover: 2 emulated nodes, the right ranks on each");
  MPI_Finalize();
  return 0;
}
