/* The remap's node-level refinement (map__refine_nodes, src/map/map_refine.c),
 * checked against quantities computed here from the graph and the machine:
 *  1. a constructed case with a known better cut: an 8 x 4 grid on two
 *     nodes whose old boundary has a step (6 edges cut); with migration
 *     cheap and a budget of 4 tasks it finds the straight boundary (4
 *     edges), moving exactly the 4 tasks of the step; with a budget of 3 it
 *     moves at most 3; when the migration outweighs the gain nothing moves;
 *  2. on a remapped stencil (diffusion, SCOTCH's remap alone, the old
 *     mapping itself; two migration weights; two budgets): the node-level
 *     cost (bytes between nodes x node distance + state / steps x the
 *     largest node distance per task off its old node) never rises from a
 *     start without node overload, the node overload never rises (nodes
 *     within 1 + balrat stay within), the migration never exceeds the
 *     budget, tasks that stay on their node keep their slot, every slot is
 *     valid, and the result is deterministic;
 *  3. nothing to do (no previous mapping, a single node): unchanged. */
#include <stdlib.h>
#include <string.h>

#include "map/map_remap.h"
#include "remap_util.h"
#include "test_util.h"

/* The node level's cost, from the graph and the machine: bytes between
 * tasks on different nodes x the node distance, plus state / steps x the
 * largest node distance for every task off its old node. \a inter gets
 * the bytes between nodes, \a over the node work above (1 + balrat) x the
 * average node work. */
static double node_cost(const rta_graph_t *g, const rta_hw_t *hw,
                        const int64_t *prev, const int64_t *slot, double steps,
                        double balrat, double *inter, double *over) {
  int nn = hw->nnodes;
  double dmax = 0, hop = 0, mig = 0, total = 0;
  double *load = calloc((size_t)nn, sizeof *load);
  CHECK(load != NULL);
  for (int a = 0; a < nn; a++)
    for (int b = 0; b < nn; b++)
      if (a != b && map__hw_node_dist(hw, a, b) > dmax)
        dmax = map__hw_node_dist(hw, a, b);
  *inter = *over = 0;
  for (int64_t v = 0; v < g->nvert; v++) {
    int a = hw->slot_node[slot[v]];
    load[a] += g->work[v];
    total += g->work[v];
    for (int64_t i = g->xadj[v]; i < g->xadj[v + 1]; i++) {
      int b = hw->slot_node[slot[g->adj[i]]];
      if (b != a) {
        *inter += g->adjw[i] / 2;
        hop += g->adjw[i] / 2 * map__hw_node_dist(hw, a, b);
      }
    }
    if (prev && prev[v] >= 0 && hw->slot_node[prev[v]] != a)
      mig += g->state[v] / steps * dmax;
  }
  for (int k = 0; k < nn; k++)
    if (load[k] > (1 + balrat) * total / nn)
      *over += load[k] - (1 + balrat) * total / nn;
  free(load);
  return hop + mig;
}

/* Grid task (x, y) of the constructed case, 8 x 4. */
static int64_t gv(int x, int y) { return x + 8 * y; }

/* 8 x 4 grid, 5-point, 10 bytes per edge, work 1 and state 100 per task,
 * on 2 nodes of 2 cores (node 0: slots 0, 1; node 1: slots 2, 3). The old
 * mapping has a step in its node boundary: rows 0-1 split after x = 4,
 * rows 2-3 after x = 2 (16 tasks per node, 6 edges cut); the best
 * boundary is straight, after x = 3 (4 edges cut), 4 tasks away. */
static void step_case(rta_hw_t **hw, rta_graph_t **g, int64_t *prev) {
  CHECK_EQ(rta_hw_create_sim(2, "core:2", NULL, NULL, hw), 0);
  CHECK_EQ(rta_graph_create(32, g), 0);
  for (int y = 0; y < 4; y++)
    for (int x = 0; x < 8; x++) {
      CHECK_EQ(rta_graph_set_vertex(*g, gv(x, y), 1.0, 100.0), 0);
      if (x + 1 < 8)
        CHECK_EQ(rta_graph_add_edge(*g, gv(x, y), gv(x + 1, y), 10.0), 0);
      if (y + 1 < 4)
        CHECK_EQ(rta_graph_add_edge(*g, gv(x, y), gv(x, y + 1), 10.0), 0);
    }
  CHECK_EQ(rta_graph_nedges(*g), 7 * 4 + 8 * 3); /* merges the CSR */
  CHECK_EQ((*hw)->slot_node[1], 0);
  CHECK_EQ((*hw)->slot_node[2], 1);
  for (int y = 0; y < 4; y++)
    for (int x = 0; x < 8; x++) {
      int split = y < 2 ? 4 : 2; /* last x on node 0 */
      int node = x > split, half = (x + y) % 2; /* two cores per node */
      prev[gv(x, y)] = 2 * node + half;
    }
}

static void known_cut(void) {
  rta_hw_t *hw = NULL;
  rta_graph_t *g = NULL;
  int64_t prev[32], a[32], b[32];
  step_case(&hw, &g, prev);
  double in0, ov0, in1, ov1;
  double c0 = node_cost(g, hw, prev, prev, 1e6, 0.03, &in0, &ov0);
  CHECK_NEAR(in0, 6 * 10.0, 1e-9);
  CHECK_NEAR(ov0, 0.0, 0.0);
  /* cheap migration, a budget of 4 tasks: the straight boundary */
  map__budget_t bud = {4, 400};
  memcpy(a, prev, sizeof a);
  CHECK_EQ(map__refine_nodes(g, hw, prev, 1e6, 0.03, &bud, a), 0);
  double c1 = node_cost(g, hw, prev, a, 1e6, 0.03, &in1, &ov1);
  CHECK_NEAR(in1, 4 * 10.0, 1e-9);
  CHECK_NEAR(ov1, 0.0, 0.0);
  CHECK_DLT(c1, c0);
  for (int y = 0; y < 4; y++)
    for (int x = 0; x < 8; x++)
      CHECK_EQ(hw->slot_node[a[gv(x, y)]], x > 3);
  CHECK_EQ(moved(32, prev, a), 4);
  CHECK_NE(a[gv(4, 0)], prev[gv(4, 0)]);
  CHECK_NE(a[gv(4, 1)], prev[gv(4, 1)]);
  CHECK_NE(a[gv(3, 2)], prev[gv(3, 2)]);
  CHECK_NE(a[gv(3, 3)], prev[gv(3, 3)]);
  /* deterministic */
  memcpy(b, prev, sizeof b);
  CHECK_EQ(map__refine_nodes(g, hw, prev, 1e6, 0.03, &bud, b), 0);
  CHECK_EQ(moved(32, a, b), 0);
  /* a budget of 3 tasks: never more, never a higher cost */
  map__budget_t three = {3, 300};
  memcpy(b, prev, sizeof b);
  CHECK_EQ(map__refine_nodes(g, hw, prev, 1e6, 0.03, &three, b), 0);
  CHECK_LE(moved(32, prev, b), 3);
  CHECK_DLE(node_cost(g, hw, prev, b, 1e6, 0.03, &in1, &ov1), c0);
  CHECK_NEAR(ov1, 0.0, 0.0);
  /* the bytes budget binds too: 4 tasks but 399 bytes */
  map__budget_t bytes = {4, 399};
  memcpy(b, prev, sizeof b);
  CHECK_EQ(map__refine_nodes(g, hw, prev, 1e6, 0.03, &bytes, b), 0);
  CHECK_LE(moved(32, prev, b), 3);
  /* one step: a task costs 100 x 16 to move, the two edges saved 2 x 10
   * x 16 for four tasks; nothing moves */
  memcpy(b, prev, sizeof b);
  CHECK_EQ(map__refine_nodes(g, hw, prev, 1, 0.03, &bud, b), 0);
  CHECK_EQ(moved(32, prev, b), 0);
  /* no previous mapping, or a single node: nothing to do */
  memcpy(b, prev, sizeof b);
  CHECK_EQ(map__refine_nodes(g, hw, NULL, 1e6, 0.03, &bud, b), 0);
  CHECK_EQ(moved(32, prev, b), 0);
  rta_hw_t *one = NULL;
  CHECK_EQ(rta_hw_create_sim(1, "core:4", NULL, NULL, &one), 0);
  CHECK_EQ(map__refine_nodes(g, one, prev, 1e6, 0.03, &bud, b), 0);
  CHECK_EQ(moved(32, prev, b), 0);
  rta_hw_destroy(one);
  rta_graph_destroy(g);
  rta_hw_destroy(hw);
}

/* Work and state x4 inside a ball of radius n/4 around (n/4, n/2, n/2). */
static void heavy_ball(rta_graph_t *g, int n) {
  double r = n / 4.0;
  for (int64_t v = 0; v < (int64_t)n * n * n; v++) {
    double x = (double)(v % n) - n / 4.0, y = (double)((v / n) % n) - n / 2.0;
    double z = (double)(v / ((int64_t)n * n)) - n / 2.0;
    if (x * x + y * y + z * z <= r * r)
      CHECK_EQ(rta_graph_set_vertex(g, v, 4 * g->work[v], 4 * g->state[v]), 0);
  }
}

/* One start: the node level's invariants against \a start. */
static void check_start(const rta_graph_t *g, const rta_hw_t *hw,
                        const int64_t *prev, const int64_t *start,
                        double steps, map__budget_t bud, int64_t *a,
                        int64_t *b) {
  int64_t n = g->nvert;
  double in0, ov0, in1, ov1;
  double c0 = node_cost(g, hw, prev, start, steps, 0.03, &in0, &ov0);
  memcpy(a, start, n * sizeof *a);
  CHECK_EQ(map__refine_nodes(g, hw, prev, steps, 0.03, &bud, a), 0);
  double c1 = node_cost(g, hw, prev, a, steps, 0.03, &in1, &ov1);
  CHECK_DLE(ov1, ov0 + 1e-9 * (ov0 + 1));
  if (ov0 == 0) {
    CHECK_NEAR(ov1, 0.0, 1e-9);
    CHECK_DLE(c1, c0 * (1 + 1e-9));
  }
  /* never above the budget (nor further above a start that is) */
  map__budget_t m0 = migrated(g, prev, start), m1 = migrated(g, prev, a);
  CHECK_LE(m1.tasks, m0.tasks > bud.tasks ? m0.tasks : bud.tasks);
  CHECK_DLE(m1.bytes, (m0.bytes > bud.bytes ? m0.bytes : bud.bytes) *
                          (1 + 1e-12));
  for (int64_t v = 0; v < n; v++) {
    CHECK(a[v] >= 0 && a[v] < hw->nslots);
    if (hw->slot_node[a[v]] == hw->slot_node[start[v]])
      CHECK_EQ(a[v], start[v]);
  }
  memcpy(b, start, n * sizeof *b);
  CHECK_EQ(map__refine_nodes(g, hw, prev, steps, 0.03, &bud, b), 0);
  CHECK_EQ(moved(n, a, b), 0);
}

static void properties(void) {
  rta_hw_t *hw = NULL;
  rta_graph_t *g = NULL;
  CHECK_EQ(rta_hw_create_sim(4, "pack:2 core:4", NULL, NULL, &hw), 0);
  CHECK_EQ(rta_graph_stencil3d(16, 16, 16, 27, 4.0, 4096.0, &g), 0);
  int64_t n = rta_graph_nvert(g);
  int64_t *prev = malloc(n * sizeof *prev), *st = malloc(3 * n * sizeof *st);
  int64_t *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
  CHECK(prev && st && a && b);
  CHECK_EQ(rta_map_graph(g, hw, RTA_MAP_TWOPHASE, NULL, 3, prev, NULL), 0);
  heavy_ball(g, 16);
  /* three starts: the diffusion, SCOTCH's remap alone, the old mapping */
  CHECK_EQ(map__diffuse(g, hw, prev, 10, 0.03, st), 0);
  rta_map_options_t o;
  rta_map_options_init(&o);
  o.seed = 3;
  o.remap_scotch_only = 1;
  CHECK_EQ(rta_map_graph_ex(g, hw, RTA_MAP_TWOPHASE, prev, &o, st + n, NULL),
           0);
  memcpy(st + 2 * n, prev, n * sizeof *st);
  int improved = 0;
  for (int k = 0; k < 3; k++)
    for (int w = 0; w < 2; w++)
      for (int half = 0; half < 2; half++) {
        const int64_t *s = st + k * n;
        double steps = w ? 30000 : 10;
        map__budget_t bud = migrated(g, prev, s);
        if (half) { /* half the start's migration, or a few tasks */
          bud.tasks = bud.tasks / 2 + 8;
          bud.bytes = bud.bytes / 2 + 8 * 4096.0;
        }
        check_start(g, hw, prev, s, steps, bud, a, b);
        double i0, i1, o0, o1;
        node_cost(g, hw, prev, s, steps, 0.03, &i0, &o0);
        node_cost(g, hw, prev, a, steps, 0.03, &i1, &o1);
        improved += i1 < i0;
      }
  /* cheap migration lowers the bytes between nodes from some start */
  CHECK_GT(improved, 0);
  free(prev);
  free(st);
  free(a);
  free(b);
  rta_graph_destroy(g);
  rta_hw_destroy(hw);
}

int main(void) {
  known_cut();
  properties();
  TEST_PASS("map_refine_nodes");
  return 0;
}
