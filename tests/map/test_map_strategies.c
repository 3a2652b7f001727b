/* Every strategy on known graphs: the test enumerates the stencil's edges
 * and the machine's distances itself (4 nodes x 2 packages x 4 cores, costs
 * 1 / 6 / 16) and checks balance, edge cut, hop-bytes and inter-node volume
 * against ballast's figures; the baselines' mappings are checked exactly; the
 * SCOTCH strategies against the baselines; remapping against mapping from
 * scratch. No MPI needed. */
#include <ballast/rta_map.h>

#include "test_util.h"

#define NX 16
#define NS 32 /* slots: 4 nodes x 2 packages x 4 cores */

/* Independent distance: node = s / 8, package = (s % 8) / 4. */
static double dist(int a, int b) {
  if (a == b)
    return 0;
  if (a / 8 != b / 8)
    return 16;
  if ((a % 8) / 4 != (b % 8) / 4)
    return 6;
  return 1;
}

typedef struct {
  double maxavg, cut, hop, inter;
} figs_t;

/* The 27-point stencil's figures for a mapping, from the grid itself. */
static figs_t stencil_figs(const int64_t *slot, const double *work) {
  figs_t f = {0, 0, 0, 0};
  double load[NS] = {0}, total = 0;
  for (int v = 0; v < NX * NX * NX; v++) {
    load[slot[v]] += work ? work[v] : 1.0;
    total += work ? work[v] : 1.0;
  }
  for (int s = 0; s < NS; s++)
    if (load[s] / (total / NS) > f.maxavg)
      f.maxavg = load[s] / (total / NS);
  for (int z = 0; z < NX; z++)
    for (int y = 0; y < NX; y++)
      for (int x = 0; x < NX; x++)
        for (int dz = -1; dz <= 1; dz++)
          for (int dy = -1; dy <= 1; dy++)
            for (int dx = -1; dx <= 1; dx++) {
              int X = x + dx, Y = y + dy, Z = z + dz;
              if (X < 0 || Y < 0 || Z < 0 || X >= NX || Y >= NX || Z >= NX)
                continue;
              int u = x + NX * (y + NX * z), w = X + NX * (Y + NX * Z);
              if (w <= u)
                continue; /* each pair once */
              int nnz = (dx != 0) + (dy != 0) + (dz != 0);
              double b = nnz == 1 ? 4 : nnz == 2 ? 2 : 1;
              int su = (int)slot[u], sw = (int)slot[w];
              if (su != sw)
                f.cut += b;
              if (su / 8 != sw / 8)
                f.inter += b;
              f.hop += b * dist(su, sw);
            }
  return f;
}

static void same_figs(const rta_map_quality_t *q, figs_t f) {
  CHECK_NEAR(q->max_avg_load_core, f.maxavg, 1e-9);
  CHECK_NEAR(q->edge_cut, f.cut, 1e-6);
  CHECK_NEAR(q->hop_bytes, f.hop, 1e-6);
  CHECK_NEAR(q->internode_volume, f.inter, 1e-6);
}

int main(void) {
  rta_graph_t *g = NULL;
  CHECK_EQ(rta_graph_stencil3d(NX, NX, NX, 27, 4.0, 100.0, &g), 0);
  /* 3*15*16*16 faces, 6*15*15*16 edges, 4*15^3 corners. */
  CHECK_EQ(rta_graph_nedges(g), 3 * 15 * 256 + 6 * 225 * 16 + 4 * 3375);
  rta_hw_t *hw = NULL;
  CHECK_EQ(rta_hw_create_sim(4, "pack:2 core:4", NULL, NULL, &hw), 0);
  int n = NX * NX * NX;
  int64_t *s[RTA_MAP_NSTRATEGIES], *again = malloc(n * sizeof *again);
  rta_map_quality_t q[RTA_MAP_NSTRATEGIES];
  for (int k = 0; k < RTA_MAP_NSTRATEGIES; k++) {
    s[k] = malloc(n * sizeof *s[k]);
    CHECK_EQ(rta_map_graph(g, hw, (rta_strategy_t)k, NULL, 7, s[k], &q[k]), 0);
    figs_t f = stencil_figs(s[k], NULL);
    same_figs(&q[k], f);
    CHECK_EQ(q[k].tasks_migrated, 0);
    CHECK_DGE(q[k].seconds, 0);
    /* Deterministic. */
    CHECK_EQ(rta_map_graph(g, hw, (rta_strategy_t)k, NULL, 7, again, NULL), 0);
    CHECK_EQ(memcmp(again, s[k], n * sizeof *again), 0);
  }
  /* Baselines, exactly. */
  for (int v = 0; v < n; v++) {
    CHECK_EQ(s[RTA_MAP_ROUNDROBIN][v], v % NS);
    CHECK_EQ(s[RTA_MAP_BLOCK][v], v / (n / NS));
  }
  CHECK_NEAR(q[RTA_MAP_BLOCK].max_avg_load_core, 1.0, 1e-12);
  CHECK_NEAR(q[RTA_MAP_ROUNDROBIN].max_avg_load_core, 1.0, 1e-12);
  /* Random: another seed, another mapping. */
  CHECK_EQ(rta_map_graph(g, hw, RTA_MAP_RANDOM, NULL, 8, again, NULL), 0);
  CHECK_NE(memcmp(again, s[RTA_MAP_RANDOM], n * sizeof *again), 0);
  /* The SCOTCH strategies: balanced, and far better than the baselines. */
  rta_map_quality_t *tp = &q[RTA_MAP_TWOPHASE], *tl = &q[RTA_MAP_TLEAF];
  CHECK_DLE(tp->max_avg_load_core, 1.03 + 1e-9);
  CHECK_DLE(tl->max_avg_load_core, 1.05);
  CHECK_DLE(tp->hop_bytes, 0.55 * q[RTA_MAP_BLOCK].hop_bytes);
  CHECK_DLE(tp->hop_bytes, 0.2 * q[RTA_MAP_ROUNDROBIN].hop_bytes);
  CHECK_DLE(tl->hop_bytes, 0.55 * q[RTA_MAP_BLOCK].hop_bytes);
  CHECK_DLE(tp->internode_volume, 0.2 * q[RTA_MAP_ROUNDROBIN].internode_volume);
  CHECK_DLT(q[RTA_MAP_ROUNDROBIN].hop_bytes, q[RTA_MAP_RANDOM].hop_bytes);
  /* Two-phase: every slot is used. */
  int used[NS] = {0};
  for (int v = 0; v < n; v++)
    used[s[RTA_MAP_TWOPHASE][v]] = 1;
  for (int k = 0; k < NS; k++)
    CHECK_EQ(used[k], 1);

  /* Remap after a load change: one corner's tasks get 3x the work. The
   * remap moves fewer tasks than a fresh mapping and stays balanced. */
  double *work = malloc(n * sizeof *work);
  for (int v = 0; v < n; v++) {
    int x = v % NX, y = (v / NX) % NX;
    work[v] = (x < 4 && y < 4) ? 3.0 : 1.0;
    CHECK_EQ(rta_graph_set_vertex(g, v, work[v], 100.0), 0);
  }
  int64_t *fresh = malloc(n * sizeof *fresh);
  rta_map_quality_t qr, qf;
  CHECK_EQ(rta_map_graph(g, hw, RTA_MAP_TWOPHASE, s[RTA_MAP_TWOPHASE], 7, again,
                         &qr), 0);
  CHECK_EQ(rta_map_graph(g, hw, RTA_MAP_TWOPHASE, NULL, 7, fresh, &qf), 0);
  figs_t fr = stencil_figs(again, work);
  same_figs(&qr, fr);
  int64_t moved = 0, moved_fresh = 0;
  for (int v = 0; v < n; v++) {
    moved += again[v] != s[RTA_MAP_TWOPHASE][v];
    moved_fresh += fresh[v] != s[RTA_MAP_TWOPHASE][v];
  }
  CHECK_EQ(qr.tasks_migrated, moved);
  CHECK_NEAR(qr.bytes_migrated, 100.0 * moved, 1e-6);
  CHECK_LT(moved, moved_fresh);
  CHECK_DLE(qr.max_avg_load_core, 1.10);
  /* The same result through rta_map_evaluate(). */
  rta_map_quality_t qe;
  CHECK_EQ(rta_map_evaluate(g, hw, again, s[RTA_MAP_TWOPHASE], &qe), 0);
  CHECK_NEAR(qe.hop_bytes, qr.hop_bytes, 1e-9);
  CHECK_EQ(qe.tasks_migrated, moved);

  /* Bad input. */
  int64_t bad = -5;
  CHECK_EQ(rta_map_graph(g, hw, (rta_strategy_t)9, NULL, 1, again, NULL), BALLAST_EINVAL);
  CHECK_EQ(rta_map_graph(NULL, hw, RTA_MAP_BLOCK, NULL, 1, again, NULL), BALLAST_EINVAL);
  again[0] = NS; /* slot out of range */
  CHECK_EQ(rta_map_evaluate(g, hw, again, NULL, &qe), BALLAST_EINVAL);
  s[RTA_MAP_BLOCK][0] = bad;
  CHECK_EQ(rta_map_graph(g, hw, RTA_MAP_TWOPHASE, s[RTA_MAP_BLOCK], 1, again, NULL),
           BALLAST_EINVAL);
  rta_strategy_t st;
  CHECK_EQ(rta_strategy_parse("tleaf", &st), 0);
  CHECK_EQ(st, RTA_MAP_TLEAF);
  CHECK_EQ(rta_strategy_parse("metis", &st), BALLAST_EINVAL);
  CHECK_STREQ(rta_strategy_name(RTA_MAP_ROUNDROBIN), "roundrobin");

  for (int k = 0; k < RTA_MAP_NSTRATEGIES; k++)
    free(s[k]);
  free(again);
  free(fresh);
  free(work);
  rta_hw_destroy(hw);
  rta_graph_destroy(g);
  TEST_PASS("map_strategies");
  return 0;
}
