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
 *  3. nothing to do (no previous mapping, a single node): unchanged;
 *  4. the rebalance inside nodes (map__rebalance_nodes): on 16 tasks on two
 *     nodes of two cores, a core holding 6 (the bound is 4.12) gives the
 *     node's other core the two tasks that came from it when migration
 *     weighs most, the two with the fewest bytes to the core's other tasks
 *     when hop-bytes weigh most, and none when the budget allows no more
 *     tasks away from their old core; nothing leaves a node whose other
 *     core is full; on the remapped stencils after the node level: tasks
 *     stay on their node, cores within the bound keep their tasks and stay
 *     within it, no core gains work above its start, the overload falls,
 *     never above the budget, deterministic. */
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

/* Work of each slot of \a slot, and the total work above (1 + balrat) x the
 * average slot work in \a over; \a load: nslots. */
static void slot_loads(const rta_graph_t *g, const rta_hw_t *hw,
                       const int64_t *slot, double balrat, double *load,
                       double *over) {
  double total = 0;
  memset(load, 0, (size_t)hw->nslots * sizeof *load);
  for (int64_t v = 0; v < g->nvert; v++) {
    load[slot[v]] += g->work[v];
    total += g->work[v];
  }
  *over = 0;
  for (int s = 0; s < hw->nslots; s++)
    if (load[s] > (1 + balrat) * total / hw->nslots)
      *over += load[s] - (1 + balrat) * total / hw->nslots;
}

/* 16 tasks in a chain (10 bytes per edge, work 1, state 100) on 2 nodes of
 * 2 cores: tasks 0-5 on slot 0 (2 above the bound of 4.12), 6-7 on slot
 * 1, 8-11 on slot 2, 12-15 on slot 3. The old mapping had 4 per slot:
 * tasks 1-4 on slot 0, tasks 0 and 5-7 on slot 1, the others where they
 * are, so tasks 0 and 5 are away from their old slot. */
static void crowded_case(rta_hw_t **hw, rta_graph_t **g, int64_t *prev,
                         int64_t *start) {
  CHECK_EQ(rta_hw_create_sim(2, "core:2", NULL, NULL, hw), 0);
  CHECK_EQ(rta_graph_create(16, g), 0);
  for (int v = 0; v < 16; v++) {
    CHECK_EQ(rta_graph_set_vertex(*g, v, 1.0, 100.0), 0);
    if (v + 1 < 16)
      CHECK_EQ(rta_graph_add_edge(*g, v, v + 1, 10.0), 0);
  }
  CHECK_EQ(rta_graph_nedges(*g), 15);
  CHECK_EQ((*hw)->slot_node[1], 0);
  CHECK_EQ((*hw)->slot_node[2], 1);
  for (int v = 0; v < 16; v++) {
    start[v] = v < 6 ? 0 : v < 8 ? 1 : v < 12 ? 2 : 3;
    prev[v] = v < 4 ? 0 : v < 8 ? 1 : start[v];
  }
  prev[0] = 1; /* task 0 too came from slot 1 */
  prev[4] = 0;
}

static void rebalance_case(void) {
  rta_hw_t *hw = NULL;
  rta_graph_t *g = NULL;
  int64_t prev[16], start[16], a[16], b[16];
  double load[4], over;
  crowded_case(&hw, &g, prev, start);
  /* away from their old slot at the start: 0 and 5 (slot 1 before) */
  map__budget_t m0 = migrated(g, prev, start), big = {16, 1600};
  CHECK_EQ(m0.tasks, 2);
  /* migration weighs most (steps 1): the two that came from slot 1 go
   * back, nothing else moves */
  memcpy(a, start, sizeof a);
  CHECK_EQ(map__rebalance_nodes(g, hw, prev, 1, 0.03, &big, a), 0);
  slot_loads(g, hw, a, 0.03, load, &over);
  CHECK_NEAR(over, 0.0, 0.0);
  CHECK_EQ(moved(16, start, a), 2);
  CHECK_EQ(a[0], 1);
  CHECK_EQ(a[5], 1);
  CHECK_EQ(migrated(g, prev, a).tasks, 0);
  /* hop-bytes weigh most (steps 1e9): the two at the chain's end next to
   * slot 1 (tasks 4 and 5) move, one edge cut instead of three */
  memcpy(a, start, sizeof a);
  CHECK_EQ(map__rebalance_nodes(g, hw, prev, 1e9, 0.03, &big, a), 0);
  slot_loads(g, hw, a, 0.03, load, &over);
  CHECK_NEAR(over, 0.0, 0.0);
  CHECK_EQ(moved(16, start, a), 2);
  CHECK_EQ(a[4], 1);
  CHECK_EQ(a[5], 1);
  /* deterministic */
  memcpy(b, start, sizeof b);
  CHECK_EQ(map__rebalance_nodes(g, hw, prev, 1e9, 0.03, &big, b), 0);
  CHECK_EQ(moved(16, a, b), 0);
  /* a budget of the start's migration: task 5 goes back, which leaves
   * room in the budget for task 4; never above it */
  memcpy(a, start, sizeof a);
  CHECK_EQ(map__rebalance_nodes(g, hw, prev, 1e9, 0.03, &m0, a), 0);
  CHECK_LE(migrated(g, prev, a).tasks, m0.tasks);
  CHECK_EQ(a[5], 1);
  slot_loads(g, hw, a, 0.03, load, &over);
  CHECK_NEAR(over, 0.0, 0.0);
  /* no budget left at all, and no task that goes back: nothing moves */
  for (int v = 0; v < 16; v++)
    prev[v] = start[v] == 0 && v < 4 ? 0 : v < 8 ? 1 : start[v];
  prev[4] = prev[5] = 0;
  m0 = migrated(g, prev, start);
  memcpy(a, start, sizeof a);
  CHECK_EQ(map__rebalance_nodes(g, hw, prev, 1e9, 0.03, &m0, a), 0);
  CHECK_EQ(moved(16, start, a), 0);
  /* node 0's other core full (slot 1 holds 4, node 1 has room): nothing
   * leaves slot 0, nothing moves */
  start[8] = start[9] = 1;
  memcpy(a, start, sizeof a);
  CHECK_EQ(map__rebalance_nodes(g, hw, prev, 1e9, 0.03, &big, a), 0);
  CHECK_EQ(moved(16, start, a), 0);
  rta_graph_destroy(g);
  rta_hw_destroy(hw);
}

/* map__rebalance_nodes from \a start (the node level's result): its
 * invariants. \a a, \a b: nvert; \a l0, \a l1: nslots. Returns 1 when
 * it lowered the overload. */
static int check_rebalance(const rta_graph_t *g, const rta_hw_t *hw,
                           const int64_t *prev, const int64_t *start,
                           map__budget_t bud, int64_t *a, int64_t *b,
                           double *l0, double *l1) {
  int64_t n = g->nvert;
  double ov0, ov1, cap = 0;
  memcpy(a, start, n * sizeof *a);
  CHECK_EQ(map__rebalance_nodes(g, hw, prev, 3000, 0.03, &bud, a), 0);
  slot_loads(g, hw, start, 0.03, l0, &ov0);
  slot_loads(g, hw, a, 0.03, l1, &ov1);
  for (int s = 0; s < hw->nslots; s++)
    cap += l0[s];
  cap = 1.03 * cap / hw->nslots;
  CHECK_DLE(ov1, ov0);
  for (int s = 0; s < hw->nslots; s++)
    CHECK_DLE(l1[s], (l0[s] > cap ? l0[s] : cap) * (1 + 1e-12));
  for (int64_t v = 0; v < n; v++) {
    CHECK_EQ(hw->slot_node[a[v]], hw->slot_node[start[v]]);
    if (l0[start[v]] <= cap)
      CHECK_EQ(a[v], start[v]);
  }
  map__budget_t m0 = migrated(g, prev, start), m1 = migrated(g, prev, a);
  CHECK_LE(m1.tasks, m0.tasks > bud.tasks ? m0.tasks : bud.tasks);
  CHECK_DLE(m1.bytes, (m0.bytes > bud.bytes ? m0.bytes : bud.bytes) *
                          (1 + 1e-12));
  memcpy(b, start, n * sizeof *b);
  CHECK_EQ(map__rebalance_nodes(g, hw, prev, 3000, 0.03, &bud, b), 0);
  CHECK_EQ(moved(n, a, b), 0);
  return ov1 < ov0;
}

/* The rebalance after the node level on the remapped stencil: SCOTCH's
 * remap alone, then map__refine_nodes() with cheap migration. */
static void rebalance_stencil(void) {
  rta_hw_t *hw = NULL;
  rta_graph_t *g = NULL;
  CHECK_EQ(rta_hw_create_sim(4, "pack:2 core:4", NULL, NULL, &hw), 0);
  CHECK_EQ(rta_graph_stencil3d(16, 16, 16, 27, 4.0, 4096.0, &g), 0);
  int64_t n = rta_graph_nvert(g);
  int64_t *prev = malloc(n * sizeof *prev), *st = malloc(n * sizeof *st);
  int64_t *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
  double *l = malloc(2 * hw->nslots * sizeof *l);
  CHECK(prev && st && a && b && l);
  CHECK_EQ(rta_map_graph(g, hw, RTA_MAP_TWOPHASE, NULL, 3, prev, NULL), 0);
  heavy_ball(g, 16);
  rta_map_options_t o;
  rta_map_options_init(&o);
  o.seed = 3;
  o.remap_scotch_only = 1;
  CHECK_EQ(rta_map_graph_ex(g, hw, RTA_MAP_TWOPHASE, prev, &o, st, NULL), 0);
  map__budget_t bud = migrated(g, prev, st);
  int lowered = 0;
  for (int k = 0; k < 2; k++) {
    CHECK_EQ(map__refine_nodes(g, hw, prev, k ? 30000 : 10, 0.03, &bud, st), 0);
    lowered += check_rebalance(g, hw, prev, st, bud, a, b, l, l + hw->nslots);
    map__budget_t none = migrated(g, prev, st);
    check_rebalance(g, hw, prev, st, none, a, b, l, l + hw->nslots);
  }
  CHECK_GT(lowered, 0);
  free(prev);
  free(st);
  free(a);
  free(b);
  free(l);
  rta_graph_destroy(g);
  rta_hw_destroy(hw);
}

int main(void) {
  known_cut();
  properties();
  rebalance_case();
  rebalance_stencil();
  TEST_PASS("map_refine_nodes");
  return 0;
}
