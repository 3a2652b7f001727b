/* Run-time discovery on 4 ranks pretending to be 2 nodes (BALLAST_HW_LAYOUT
 * set by ctest to "node_of_rank=0,0,1,1"): node ids, slots, identical models
 * on every rank, measured links between the two node leaders, the other
 * layout syntaxes, an architecture file, bad layouts, and a two-phase
 * mapping on the discovered machine that every rank agrees on. */
#include <ballast/rta_map.h>

#include <unistd.h>

#include "test_util.h"
#include "test_hw.h"

static uint64_t model_hash(const rta_hw_t *hw) {
  uint64_t h = 1469598103934665603ull;
  for (int s = 0; s < rta_hw_nslots(hw); s++) {
    h = (h ^ (uint64_t)rta_hw_slot_node(hw, s)) * 1099511628211ull;
    h = (h ^ (uint64_t)rta_hw_slot_core(hw, s)) * 1099511628211ull;
  }
  for (int n = 0; n < rta_hw_nnodes(hw); n++)
    for (int l = 0; l < rta_hw_node_nlevels(hw, n); l++) {
      int a;
      double c;
      CHECK_EQ(rta_hw_node_level(hw, n, l, &a, &c, NULL), 0);
      h = (h ^ (uint64_t)a ^ ((uint64_t)c << 20)) * 1099511628211ull;
    }
  return h;
}

static void check_same_everywhere(uint64_t h) {
  uint64_t mn, mx;
  MPI_Allreduce(&h, &mn, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&h, &mx, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
  CHECK(mn == mx);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK_EQ(size, 4);
  const char *env = getenv("BALLAST_HW_LAYOUT");
  CHECK(env && strcmp(env, "node_of_rank=0,0,1,1") == 0);

  /* The layout from the environment. */
  rta_hw_t *hw = NULL;
  CHECK_EQ(rta_hw_discover(MPI_COMM_WORLD, &hw), 0);
  CHECK_EQ(rta_hw_nnodes(hw), 2);
  CHECK_EQ(rta_hw_nslots(hw), 4);
  for (int s = 0; s < 4; s++)
    CHECK_EQ(rta_hw_slot_node(hw, s), s / 2);
  CHECK_EQ(rta_hw_node_nslots(hw, 1), 2);
  CHECK_GE(rta_hw_node_nlevels(hw, 0), 1);
  CHECK_NEAR(slot_dist(hw, 0, 2), 16, 0);
  CHECK_DLE(slot_dist(hw, 0, 1), 6);
  check_same_everywhere(model_hash(hw));
  /* Two ranks of one node sit on distinct cores when the node has two. */
  int a0, ncores = 1;
  for (int l = 0; l < rta_hw_node_nlevels(hw, 0); l++) {
    CHECK_EQ(rta_hw_node_level(hw, 0, l, &a0, NULL, NULL), 0);
    ncores *= a0;
  }
  if (ncores >= 2)
    CHECK_NE(rta_hw_slot_core(hw, 0), rta_hw_slot_core(hw, 1));
  /* Mapping on the discovered machine: every rank agrees. */
  rta_graph_t *g = NULL;
  CHECK_EQ(rta_graph_stencil3d(8, 8, 8, 27, 4.0, 0.0, &g), 0);
  int64_t *slot = malloc(512 * sizeof *slot);
  rta_map_quality_t q;
  CHECK_EQ(rta_map_graph(g, hw, RTA_MAP_TWOPHASE, NULL, 5, slot, &q), 0);
  uint64_t h = 1469598103934665603ull;
  int cnt[4] = {0};
  for (int v = 0; v < 512; v++) {
    h = (h ^ (uint64_t)slot[v]) * 1099511628211ull;
    cnt[slot[v]]++;
  }
  for (int s = 0; s < 4; s++)
    CHECK_EQ(cnt[s], 128);
  check_same_everywhere(h);
  CHECK_EQ(rta_hw_link(hw, 0, 1, NULL, NULL), BALLAST_ENOTFOUND);
  rta_hw_destroy(hw);

  /* Measured links between the two leaders. */
  rta_hw_options_t o;
  rta_hw_options_init(&o);
  o.measure_links = 1;
  CHECK_EQ(rta_hw_discover_ex(MPI_COMM_WORLD, &o, &hw), 0);
  double lat = 0, bw = 0, lat2 = 0, bw2 = 0;
  CHECK_EQ(rta_hw_link(hw, 0, 1, &lat, &bw), 0);
  CHECK_EQ(rta_hw_link(hw, 1, 0, &lat2, &bw2), 0);
  CHECK_DGT(lat, 0);
  CHECK_DLT(lat, 0.1);
  CHECK_DGT(bw, 1e5);
  CHECK_DGT(lat2, 0);
  /* One pair: normalised to exactly one inter-node hop. */
  CHECK_NEAR(node_dist(hw, 0, 1), 16, 1e-4);
  CHECK_EQ(rta_hw_refresh_links(hw, MPI_COMM_WORLD), 0);
  CHECK_EQ(rta_hw_link(hw, 0, 1, &lat, &bw), 0);
  CHECK_DGT(lat, 0);
  if (rank == 0) {
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    rta_hw_print(hw, m);
    fclose(m);
    CHECK(strstr(buf, "measured between 2 node leaders") != NULL);
    CHECK(strstr(buf, "discovered") != NULL);
    free(buf);
  }
  rta_hw_destroy(hw);

  /* The other layout syntaxes, given as options. */
  o.measure_links = 0;
  o.layout = "nodes=2;ranks_per_node=2";
  CHECK_EQ(rta_hw_discover_ex(MPI_COMM_WORLD, &o, &hw), 0);
  CHECK_EQ(rta_hw_slot_node(hw, 1), 0);
  CHECK_EQ(rta_hw_slot_node(hw, 2), 1);
  rta_hw_destroy(hw);
  o.layout = "node_of_rank=7,3,7,3"; /* renumbered by first appearance */
  CHECK_EQ(rta_hw_discover_ex(MPI_COMM_WORLD, &o, &hw), 0);
  CHECK_EQ(rta_hw_nnodes(hw), 2);
  CHECK_EQ(rta_hw_slot_node(hw, 0), 0);
  CHECK_EQ(rta_hw_slot_node(hw, 1), 1);
  CHECK_EQ(rta_hw_slot_node(hw, 2), 0);
  rta_hw_destroy(hw);
  char path[64];
  snprintf(path, sizeof path, "/tmp/ballast_layout_%d.txt", (int)getppid());
  if (rank == 0) {
    FILE *f = fopen(path, "w");
    fprintf(f, "0\n1\n1\n2\n");
    fclose(f);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  char lay[96];
  snprintf(lay, sizeof lay, "file=%s", path);
  o.layout = lay;
  CHECK_EQ(rta_hw_discover_ex(MPI_COMM_WORLD, &o, &hw), 0);
  CHECK_EQ(rta_hw_nnodes(hw), 3);
  CHECK_EQ(rta_hw_node_nslots(hw, 1), 2);
  rta_hw_destroy(hw);
  /* The real shared-memory split: one node here. */
  o.layout = "";
  CHECK_EQ(rta_hw_discover_ex(MPI_COMM_WORLD, &o, &hw), 0);
  CHECK_EQ(rta_hw_nnodes(hw), 1);
  CHECK_EQ(rta_hw_node_nslots(hw, 0), 4);
  rta_hw_destroy(hw);
  /* Bad layouts fail on every rank, and leave nothing behind. */
  const char *bad[] = {"nodes=3;ranks_per_node=2", "node_of_rank=0,1", "nodes=x",
                       "node_of_rank=0,1,-2,1", "chunks=4"};
  for (int i = 0; i < 5; i++) {
    o.layout = bad[i];
    hw = (rta_hw_t *)&o; /* must be reset to NULL */
    CHECK_EQ(rta_hw_discover_ex(MPI_COMM_WORLD, &o, &hw), BALLAST_EPARSE);
    CHECK(hw == NULL);
  }
  /* An architecture file for the network between the pretended nodes. */
  o.layout = NULL;
  if (rank == 0) {
    FILE *f = fopen(path, "w");
    fprintf(f, "mesh2D 2 1\n");
    fclose(f);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  o.inter_arch = path;
  o.internode_cost = 20;
  CHECK_EQ(rta_hw_discover_ex(MPI_COMM_WORLD, &o, &hw), 0);
  CHECK_NEAR(slot_dist(hw, 1, 3), 20, 0);
  CHECK_EQ(rta_hw_refresh_links(hw, MPI_COMM_WORLD), 0);
  rta_hw_destroy(hw);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    FILE *f = fopen(path, "w");
    fprintf(f, "cmplt 3\n"); /* three terminals for two nodes */
    fclose(f);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK_EQ(rta_hw_discover_ex(MPI_COMM_WORLD, &o, &hw), BALLAST_EPARSE);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0)
    unlink(path);
  /* Simulated models cannot be measured. */
  CHECK_EQ(rta_hw_create_sim(2, "pack:1 core:2", NULL, NULL, &hw), 0);
  CHECK_EQ(rta_hw_refresh_links(hw, MPI_COMM_WORLD), BALLAST_ESTATE);
  rta_hw_destroy(hw);
  free(slot);
  rta_graph_destroy(g);
  TEST_PASS("map_hw_discover");
  MPI_Finalize();
  return 0;
}
