/* The distributed phase 1 (rta_map_options_t.distributed_phase1 with
 * rta_map_graph_par): on a 27-point stencil and a non-uniform MD cell graph,
 * onto 8 simulated nodes of 2 x 4 cores, the mapping is valid (every vertex on
 * a slot), balanced within the bound, within a loose factor of the
 * sequential two-phase mapping on hop-bytes and inter-node volume, and the
 * same on every rank; a remap with the flag set (sequential phase 1 by
 * definition) still works. */
#include <ballast/rta_map.h>

#include "test_util.h"

static uint64_t fnv(const int64_t *a, int64_t n) {
  uint64_t h = 1469598103934665603ull;
  const unsigned char *p = (const unsigned char *)a;
  for (size_t i = 0; i < (size_t)n * sizeof *a; i++)
    h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

/* Every rank holds the same hash. */
static void check_same(uint64_t h) {
  uint64_t lo, hi;
  MPI_Allreduce(&h, &lo, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&h, &hi, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
  CHECK(lo == hi);
}

static void one_graph(rta_graph_t *g, const rta_hw_t *hw) {
  int64_t n = rta_graph_nvert(g);
  int64_t *seq = malloc((size_t)n * sizeof *seq);
  int64_t *dist = malloc((size_t)n * sizeof *dist);
  int64_t *re = malloc((size_t)n * sizeof *re);
  CHECK(seq && dist && re);
  rta_map_options_t o;
  rta_map_options_init(&o);
  o.seed = 3;
  rta_map_quality_t qs, qd, qr;
  CHECK_EQ(rta_map_graph_ex(g, hw, RTA_MAP_TWOPHASE, NULL, &o, seq, &qs), 0);
  o.distributed_phase1 = 1;
  CHECK_EQ(rta_map_graph_par(g, hw, RTA_MAP_TWOPHASE, NULL, &o,
                             MPI_COMM_WORLD, dist, &qd), 0);
  for (int64_t v = 0; v < n; v++) {
    CHECK_GE(dist[v], 0);
    CHECK_LT(dist[v], rta_hw_nslots(hw));
  }
  check_same(fnv(dist, n));
  /* the quality record agrees with an independent evaluation */
  rta_map_quality_t qe;
  CHECK_EQ(rta_map_evaluate(g, hw, dist, NULL, &qe), 0);
  CHECK_NEAR(qe.hop_bytes, qd.hop_bytes, 1e-6 * qd.hop_bytes);
  /* balance: 3% allowed in total, slack for the granularity of the graph */
  CHECK_DLE(qd.max_avg_load_node, 1.06);
  CHECK_DLE(qd.max_avg_load_core, 1.10);
  /* quality: within a loose factor of the sequential phase 1, and far better
   * than a random mapping */
  CHECK_DLE(qd.hop_bytes, 1.5 * qs.hop_bytes);
  CHECK_DLE(qd.internode_volume, 2.0 * qs.internode_volume);
  rta_map_quality_t qrand;
  CHECK_EQ(rta_map_graph(g, hw, RTA_MAP_RANDOM, NULL, 3, re, &qrand), 0);
  CHECK_DLT(qd.hop_bytes, 0.5 * qrand.hop_bytes);
  /* a remap from the distributed result (the flag does not apply) */
  CHECK_EQ(rta_map_graph_par(g, hw, RTA_MAP_TWOPHASE, dist, &o,
                             MPI_COMM_WORLD, re, &qr), 0);
  check_same(fnv(re, n));
  CHECK_DLE(qr.max_avg_load_core, 1.10);
  CHECK_LE(qr.tasks_migrated, n / 4); /* nothing changed: little moves */
  free(seq);
  free(dist);
  free(re);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  rta_hw_t *hw = NULL;
  CHECK_EQ(rta_hw_create_sim(8, "pack:2 core:4", NULL, NULL, &hw), 0);
  rta_graph_t *g = NULL;
  CHECK_EQ(rta_graph_stencil3d(24, 24, 24, 27, 4.0, 64.0, &g), 0);
  one_graph(g, hw);
  rta_graph_destroy(g);
  CHECK_EQ(rta_graph_md_cells(20, 20, 20, 30, 0.25, 2.0, 5, &g), 0);
  one_graph(g, hw);
  rta_graph_destroy(g);
  rta_hw_destroy(hw);
  MPI_Finalize();
  return 0;
}
