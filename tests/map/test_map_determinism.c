/* Determinism: every rank maps the same inputs independently and must get
 * the same mapping, whatever it mapped before (each rank first maps a
 * different graph), and again when everything is rebuilt from scratch. */
#include <ballast/rta_map.h>

#include "test_util.h"

static uint64_t fnv(const int64_t *a, int64_t n) {
  /* FNV-1a over the bytes. */
  uint64_t h = 1469598103934665603ull;
  const unsigned char *p = (const unsigned char *)a;
  for (size_t i = 0; i < (size_t)n * sizeof *a; i++)
    h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

/* Hashes of the mappings of a stencil and an MD graph with the SCOTCH
 * strategies and random. */
static void map_all(uint64_t *h) {
  rta_graph_t *g1 = NULL, *g2 = NULL;
  CHECK_EQ(rta_graph_stencil3d(12, 12, 12, 27, 4.0, 8.0, &g1), 0);
  CHECK_EQ(rta_graph_md_cells(10, 10, 10, 50, 0.3, 2.0, 9, &g2), 0);
  rta_hw_t *hw = NULL;
  CHECK_EQ(rta_hw_create_sim(8, "pack:2 core:4", NULL, NULL, &hw), 0);
  int64_t *s = malloc(1728 * sizeof *s);
  const rta_strategy_t st[3] = {RTA_MAP_TWOPHASE, RTA_MAP_TLEAF, RTA_MAP_RANDOM};
  for (int k = 0; k < 3; k++) {
    CHECK_EQ(rta_map_graph(g1, hw, st[k], NULL, 11, s, NULL), 0);
    h[k] = fnv(s, 1728);
  }
  CHECK_EQ(rta_map_graph(g2, hw, RTA_MAP_TWOPHASE, NULL, 11, s, NULL), 0);
  h[3] = fnv(s, 1000);
  /* A remap from the stencil's two-phase mapping after a load change. */
  CHECK_EQ(rta_map_graph(g1, hw, RTA_MAP_TWOPHASE, NULL, 11, s, NULL), 0);
  for (int v = 0; v < 256; v++)
    CHECK_EQ(rta_graph_set_vertex(g1, v, 4.0, 8.0), 0);
  int64_t *r = malloc(1728 * sizeof *r);
  CHECK_EQ(rta_map_graph(g1, hw, RTA_MAP_TWOPHASE, s, 11, r, NULL), 0);
  h[4] = fnv(r, 1728);
  /* Phase 2 shared among the ranks: the same mapping as alone. */
  rta_map_options_t o;
  rta_map_options_init(&o);
  o.seed = 11;
  for (int v = 0; v < 256; v++)
    CHECK_EQ(rta_graph_set_vertex(g1, v, 1.0, 8.0), 0);
  rta_map_quality_t q;
  CHECK_EQ(rta_map_graph_par(g1, hw, RTA_MAP_TWOPHASE, NULL, &o, MPI_COMM_WORLD,
                             r, &q), 0);
  CHECK(fnv(r, 1728) == h[0]);
  CHECK_DGE(q.seconds_phase2, 0);
  free(r);
  free(s);
  rta_hw_destroy(hw);
  rta_graph_destroy(g1);
  rta_graph_destroy(g2);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  /* A different history on every rank. */
  rta_graph_t *warm = NULL;
  CHECK_EQ(rta_graph_stencil3d(6 + rank, 5, 4, 7, 1.0, 0.0, &warm), 0);
  rta_hw_t *hw = NULL;
  CHECK_EQ(rta_hw_create_sim(2 + rank, "pack:1 core:3", NULL, NULL, &hw), 0);
  int64_t *ws = malloc(rta_graph_nvert(warm) * sizeof *ws);
  CHECK_EQ(rta_map_graph(warm, hw, RTA_MAP_TWOPHASE, NULL, rank, ws, NULL), 0);
  free(ws);
  rta_hw_destroy(hw);
  rta_graph_destroy(warm);

  uint64_t h[5], h2[5];
  map_all(h);
  map_all(h2); /* everything rebuilt: same again */
  for (int k = 0; k < 5; k++)
    CHECK(h[k] == h2[k]);
  uint64_t *all = malloc(sizeof h * size);
  MPI_Allgather(h, 5, MPI_UINT64_T, all, 5, MPI_UINT64_T, MPI_COMM_WORLD);
  for (int r = 0; r < size; r++)
    for (int k = 0; k < 5; k++)
      CHECK(all[r * 5 + k] == h[k]);
  /* Different strategies give different mappings (the hashes mean something). */
  CHECK(h[0] != h[2] && h[1] != h[2]);
  free(all);
  TEST_PASS("map_determinism");
  MPI_Finalize();
  return 0;
}
