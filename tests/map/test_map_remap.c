/* ballast's own remap candidates (src/map/map_remap.c) and their use by
 * rta_map_graph_ex() with prev:
 *  1. the combined cost against a hand computation;
 *  2. the greedy refinement never raises the combined cost of a balanced
 *     mapping nor its imbalance above the tolerance, and repairs overload;
 *  3. the diffusion from the old mapping balances a local 4x load change
 *     while moving fewer tasks than a fresh mapping;
 *  4. the multilevel refinement never raises the overload above the
 *     tolerance, nor the combined cost when there is no overload, lowers
 *     the overload of an overloaded start, and is deterministic; within a
 *     migration budget it never moves more tasks or bytes than allowed;
 *  5. the node-level refinement within a migration budget (then the slot
 *     level, as the remap does): never over the budget, never more node or
 *     core overload, fewer bytes between nodes and fewer hop-bytes, tasks
 *     that stay on their node keep their slot, deterministic;
 *  6. a remap through the API: balance within the tolerance (or no worse
 *     than SCOTCH's remap alone), lower hop-bytes than SCOTCH's remap alone
 *     for no more tasks or bytes moved, deterministic. */
#include <stdlib.h>
#include <string.h>

#include "map/map_remap.h"
#include "remap_util.h"
#include "test_util.h"
#include "test_hw.h"

static double max_avg(const rta_graph_t *g, const rta_hw_t *hw,
                      const int64_t *slot) {
  rta_map_quality_t q;
  CHECK_EQ(rta_map_evaluate(g, hw, slot, NULL, &q), 0);
  return q.max_avg_load_core;
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

static void cost_by_hand(void) {
  rta_hw_t *hw = NULL;
  CHECK_EQ(rta_hw_create_sim(2, "pack:2 core:2", NULL, NULL, &hw), 0);
  rta_graph_t *g = NULL;
  CHECK_EQ(rta_graph_create(3, &g), 0);
  CHECK_EQ(rta_graph_add_edge(g, 0, 1, 10.0), 0);
  CHECK_EQ(rta_graph_add_edge(g, 1, 2, 3.0), 0);
  for (int v = 0; v < 3; v++)
    CHECK_EQ(rta_graph_set_vertex(g, v, 1.0, 100.0 * (v + 1)), 0);
  CHECK_EQ(rta_graph_nedges(g), 2); /* merges the CSR */
  int64_t prev[3] = {0, 0, 4}, slot[3] = {0, 1, 4};
  double hop, mig;
  double c = map__remap_cost(g, hw, slot, prev, 5.0, &hop, &mig);
  double d01 = slot_dist(hw, 0, 1), d14 = slot_dist(hw, 1, 4);
  CHECK_NEAR(hop, 10.0 * d01 + 3.0 * d14, 1e-9);
  /* vertex 1 (200 B) moved from slot 0 to slot 1, over 5 steps */
  CHECK_NEAR(mig, 200.0 * d01 / 5.0, 1e-9);
  CHECK_NEAR(c, hop + mig, 1e-9);
  int64_t noprev[3] = {-1, -1, -1};
  map__remap_cost(g, hw, slot, noprev, 5.0, NULL, &mig);
  CHECK_NEAR(mig, 0.0, 0.0);
  rta_graph_destroy(g);
  rta_hw_destroy(hw);
}

/* 4 nodes x 2 sockets x 4 cores = 32 slots and a 16^3 27-point stencil
 * of 4 KiB states; returns the stencil's side. */
static int fixture(rta_hw_t **hw, rta_graph_t **g) {
  CHECK_EQ(rta_hw_create_sim(4, "pack:2 core:4", NULL, NULL, hw), 0);
  CHECK_EQ(rta_graph_stencil3d(16, 16, 16, 27, 4.0, 4096.0, g), 0);
  return 16;
}

static void refine_and_diffuse(void) {
  rta_hw_t *hw = NULL;
  rta_graph_t *g = NULL;
  int nx = fixture(&hw, &g);
  int64_t n = rta_graph_nvert(g);
  int64_t *prev = malloc(n * sizeof *prev), *slot = malloc(n * sizeof *slot);
  int64_t *fresh = malloc(n * sizeof *fresh);
  CHECK_EQ(rta_map_graph(g, hw, RTA_MAP_TWOPHASE, NULL, 3, prev, NULL), 0);
  /* refinement of a balanced mapping with prev = itself: nothing to gain
   * by moving, cost never rises */
  memcpy(slot, prev, n * sizeof *slot);
  double c0 = map__remap_cost(g, hw, slot, prev, 10, NULL, NULL);
  CHECK_EQ(map__refine(g, hw, prev, 10, 0.03, 4, slot), 0);
  CHECK_DLE(map__remap_cost(g, hw, slot, prev, 10, NULL, NULL), c0);
  CHECK_DLE(max_avg(g, hw, slot), 1.03 + 1e-9 > max_avg(g, hw, prev)
                                       ? 1.03 + 1e-9 : max_avg(g, hw, prev));
  heavy_ball(g, nx);
  double before = max_avg(g, hw, prev);
  CHECK_DGT(before, 1.5); /* the ball's slots are overloaded */
  /* diffusion from the old mapping */
  CHECK_EQ(map__diffuse(g, hw, prev, 10, 0.03, slot), 0);
  double after = max_avg(g, hw, slot);
  CHECK_DLE(after, 1.10);
  CHECK_EQ(rta_map_graph(g, hw, RTA_MAP_TWOPHASE, NULL, 3, fresh, NULL), 0);
  CHECK_LT(moved(n, slot, prev), moved(n, fresh, prev));
  /* refinement repairs overload: from the old mapping itself */
  memcpy(slot, prev, n * sizeof *slot);
  CHECK_EQ(map__refine(g, hw, prev, 10, 0.03, 50, slot), 0);
  CHECK_DLT(max_avg(g, hw, slot), before);
  free(prev);
  free(slot);
  free(fresh);
  rta_graph_destroy(g);
  rta_hw_destroy(hw);
}

/* Total work above (1 + balrat) x average over the slots. */
static double overload(const rta_graph_t *g, const rta_hw_t *hw,
                       const int64_t *slot, double balrat) {
  int ns = rta_hw_nslots(hw);
  double *load = calloc((size_t)ns, sizeof *load), total = 0, ex = 0;
  for (int64_t v = 0; v < g->nvert; v++) {
    load[slot[v]] += g->work[v];
    total += g->work[v];
  }
  for (int s = 0; s < ns; s++)
    if (load[s] > (1 + balrat) * total / ns)
      ex += load[s] - (1 + balrat) * total / ns;
  free(load);
  return ex;
}

static void refine_multilevel(void) {
  rta_hw_t *hw = NULL;
  rta_graph_t *g = NULL;
  int nx = fixture(&hw, &g);
  int64_t n = rta_graph_nvert(g);
  int64_t *prev = malloc(n * sizeof *prev), *a = malloc(n * sizeof *a);
  int64_t *b = malloc(n * sizeof *b);
  CHECK_EQ(rta_map_graph(g, hw, RTA_MAP_TWOPHASE, NULL, 3, prev, NULL), 0);
  heavy_ball(g, nx);
  /* from the diffusion (balanced, ragged boundaries) and from the old
   * mapping itself (overloaded), at two migration weights */
  for (int start = 0; start < 2; start++)
    for (int k = 0; k < 2; k++) {
      double steps = k ? 1000 : 10;
      if (start == 0)
        CHECK_EQ(map__diffuse(g, hw, prev, steps, 0.03, a), 0);
      else
        memcpy(a, prev, n * sizeof *a);
      memcpy(b, a, n * sizeof *b);
      double c0 = map__remap_cost(g, hw, a, prev, steps, NULL, NULL);
      double ex0 = overload(g, hw, a, 0.03);
      CHECK_EQ(map__refine_ml(g, hw, prev, steps, 0.03, 0, NULL, a), 0);
      double c1 = map__remap_cost(g, hw, a, prev, steps, NULL, NULL);
      double ex1 = overload(g, hw, a, 0.03);
      /* (overload, cost) never worse, in that order */
      CHECK_DLE(ex1, ex0 + 1e-6);
      if (ex0 == 0)
        CHECK_DLE(c1, c0 * (1 + 1e-9));
      else
        CHECK_DLT(ex1, ex0); /* repairs the overloaded start */
      /* deterministic */
      CHECK_EQ(map__refine_ml(g, hw, prev, steps, 0.03, 0, NULL, b), 0);
      CHECK_EQ(moved(n, a, b), 0);
      if (start == 0 && k == 1) /* much to gain when moving is cheap */
        CHECK_DLT(c1, c0);
    }
  /* within a migration budget, every move priced alike (the remap's last
   * step): never more tasks or bytes moved than the budget, never more
   * overload, fewer hop-bytes from the diffusion's ragged boundaries */
  CHECK_EQ(map__diffuse(g, hw, prev, 10, 0.03, a), 0);
  map__budget_t bud = migrated(g, prev, a);
  double hb0, hb1, ex0 = overload(g, hw, a, 0.03);
  map__remap_cost(g, hw, a, prev, 10, &hb0, NULL);
  CHECK_EQ(map__refine_ml(g, hw, prev, 10000, 0.03, 1, &bud, a), 0);
  map__remap_cost(g, hw, a, prev, 10, &hb1, NULL);
  CHECK_DLT(hb1, hb0);
  CHECK_DLE(overload(g, hw, a, 0.03), ex0 + 1e-6);
  map__budget_t mk = migrated(g, prev, a);
  CHECK_LE(mk.tasks, bud.tasks);
  CHECK_DLE(mk.bytes, bud.bytes * (1 + 1e-12));
  /* no previous mapping: pure hop-bytes, never worse */
  CHECK_EQ(rta_map_graph(g, hw, RTA_MAP_ROUNDROBIN, NULL, 3, a, NULL), 0);
  double h0, h1;
  map__remap_cost(g, hw, a, NULL, 10, &h0, NULL);
  CHECK_EQ(map__refine_ml(g, hw, NULL, 10, 0.03, 0, NULL, a), 0);
  map__remap_cost(g, hw, a, NULL, 10, &h1, NULL);
  CHECK_DLT(h1, h0);
  free(prev);
  free(a);
  free(b);
  rta_graph_destroy(g);
  rta_hw_destroy(hw);
}

/* Bytes between tasks on different nodes, and the overload of the nodes
 * above (1 + balrat) x the average node work. */
static void node_terms(const rta_graph_t *g, const rta_hw_t *hw,
                       const int64_t *slot, double balrat, double *inter,
                       double *over) {
  int nn = hw->nnodes;
  double *load = calloc(nn, sizeof *load), total = 0;
  *inter = *over = 0;
  for (int64_t v = 0; v < g->nvert; v++) {
    int a = hw->slot_node[slot[v]];
    load[a] += g->work[v];
    total += g->work[v];
    for (int64_t i = g->xadj[v]; i < g->xadj[v + 1]; i++)
      if (hw->slot_node[slot[g->adj[i]]] != a)
        *inter += g->adjw[i] / 2;
  }
  for (int k = 0; k < nn; k++)
    if (load[k] > (1 + balrat) * total / nn)
      *over += load[k] - (1 + balrat) * total / nn;
  free(load);
}

/* The node-level refinement within a budget (the remap's default, with the
 * slot level after it): never more tasks or bytes moved than the budget,
 * never more node overload, fewer bytes between nodes from the diffusion's
 * ragged boundaries, a task that stays on its node keeps its slot,
 * deterministic; then the slot level: still within the budget, never more
 * core overload than the start, fewer hop-bytes than the start. */
static void refine_nodes_budget(void) {
  rta_hw_t *hw = NULL;
  rta_graph_t *g = NULL;
  int nx = fixture(&hw, &g);
  int64_t n = rta_graph_nvert(g);
  int64_t *prev = malloc(n * sizeof *prev), *a = malloc(n * sizeof *a);
  int64_t *b = malloc(n * sizeof *b), *d = malloc(n * sizeof *d);
  CHECK_EQ(rta_map_graph(g, hw, RTA_MAP_TWOPHASE, NULL, 3, prev, NULL), 0);
  heavy_ball(g, nx);
  CHECK_EQ(map__diffuse(g, hw, prev, 10, 0.03, d), 0);
  /* the budget: the diffusion's migration and half as much again */
  map__budget_t bud = migrated(g, prev, d);
  bud.tasks += bud.tasks / 2;
  bud.bytes *= 1.5;
  memcpy(a, d, n * sizeof *a);
  memcpy(b, d, n * sizeof *b);
  double in0, ov0, in1, ov1;
  node_terms(g, hw, d, 0.03, &in0, &ov0);
  CHECK_EQ(map__refine_nodes(g, hw, prev, 10, 0.03, &bud, a), 0);
  node_terms(g, hw, a, 0.03, &in1, &ov1);
  CHECK_DLT(in1, in0);
  CHECK_DLE(ov1, ov0 + 1e-6);
  int64_t kept = 0, stay = 0;
  for (int64_t v = 0; v < n; v++)
    if (hw->slot_node[a[v]] == hw->slot_node[d[v]]) {
      stay++;
      kept += a[v] == d[v];
    }
  map__budget_t mk = migrated(g, prev, a);
  CHECK_LE(mk.tasks, bud.tasks);
  CHECK_DLE(mk.bytes, bud.bytes * (1 + 1e-12));
  CHECK_EQ(kept, stay);
  CHECK_LT(stay, n); /* some tasks changed node */
  CHECK_EQ(map__refine_nodes(g, hw, prev, 10, 0.03, &bud, b), 0);
  CHECK_EQ(moved(n, a, b), 0);
  /* the slot level rebalances the cores within the same budget */
  double h0, h1;
  map__remap_cost(g, hw, d, prev, 10, &h0, NULL);
  CHECK_EQ(map__refine_ml(g, hw, prev, 30000, 0.03, 1, &bud, a), 0);
  map__remap_cost(g, hw, a, prev, 10, &h1, NULL);
  CHECK_DLT(h1, h0);
  CHECK_DLE(overload(g, hw, a, 0.03), overload(g, hw, d, 0.03) + 1e-6);
  mk = migrated(g, prev, a);
  CHECK_LE(mk.tasks, bud.tasks);
  CHECK_DLE(mk.bytes, bud.bytes * (1 + 1e-12));
  /* no previous mapping: nothing to do */
  memcpy(b, d, n * sizeof *b);
  CHECK_EQ(map__refine_nodes(g, hw, NULL, 10, 0.03, &bud, b), 0);
  CHECK_EQ(moved(n, b, d), 0);
  free(prev);
  free(a);
  free(b);
  free(d);
  rta_graph_destroy(g);
  rta_hw_destroy(hw);
}

static void remap_through_api(void) {
  rta_hw_t *hw = NULL;
  rta_graph_t *g = NULL;
  int nx = fixture(&hw, &g);
  int64_t n = rta_graph_nvert(g);
  int64_t *prev = malloc(n * sizeof *prev), *a = malloc(n * sizeof *a);
  int64_t *b = malloc(n * sizeof *b), *s = malloc(n * sizeof *s);
  CHECK_EQ(rta_map_graph(g, hw, RTA_MAP_TWOPHASE, NULL, 5, prev, NULL), 0);
  heavy_ball(g, nx);
  for (int strat = 0; strat < 2; strat++) {
    rta_strategy_t st = strat ? RTA_MAP_TLEAF : RTA_MAP_TWOPHASE;
    rta_map_options_t o;
    rta_map_options_init(&o);
    o.seed = 5;
    rta_map_quality_t qa, qs;
    CHECK_EQ(rta_map_graph_ex(g, hw, st, prev, &o, a, &qa), 0);
    CHECK_EQ(rta_map_graph_ex(g, hw, st, prev, &o, b, NULL), 0);
    CHECK_EQ(moved(n, a, b), 0); /* deterministic */
    o.remap_scotch_only = 1;
    CHECK_EQ(rta_map_graph_ex(g, hw, st, prev, &o, s, &qs), 0);
    double lim = qs.max_avg_load_core > 1.03 ? qs.max_avg_load_core : 1.03;
    CHECK_DLE(qa.max_avg_load_core, lim + 0.02);
    /* the default's rule: lower hop-bytes than SCOTCH's remap alone, for
     * no more tasks or bytes moved (its budget) */
    CHECK_DLT(qa.hop_bytes, qs.hop_bytes);
    CHECK_LE(qa.tasks_migrated, qs.tasks_migrated);
    CHECK_DLE(qa.bytes_migrated, qs.bytes_migrated * (1 + 1e-12));
    CHECK_EQ(qa.tasks_migrated, moved(n, a, prev));
    CHECK_LT(qa.tasks_migrated, n);
  }
  free(prev);
  free(a);
  free(b);
  free(s);
  rta_graph_destroy(g);
  rta_hw_destroy(hw);
}

int main(void) {
  cost_by_hand();
  refine_and_diffuse();
  refine_multilevel();
  refine_nodes_budget();
  remap_through_api();
  TEST_PASS("map_remap");
  return 0;
}
