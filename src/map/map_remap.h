/*
 * ballast's own remap (map_remap.c), used by map.c when a mapping is given
 * the previous one: the combined cost that chooses between SCOTCH's remap
 * and a diffusion of the load, their greedy refinement, then the default's
 * rule, the lowest hop-bytes within SCOTCH's remap's migration, by
 * multilevel refinements (map_refine.c) with the nodes and then the cores
 * as parts. Internal, never installed.
 */
#ifndef BALLAST_RTA_MAP_REMAP_H
#define BALLAST_RTA_MAP_REMAP_H

#include <stdint.h>

#include "map/map_internal.h"

/* Slot distances tabulated (float) up to this many slots. */
#define MAP__DIST_TABLE_MAX 2048

/** Slot distances for the refinements: a table, or map__hw_dist(). */
typedef struct {
  const rta_hw_t *hw;
  float *t; /* ns x ns, or NULL: ask map__hw_dist */
  int ns;
} map__dist_t;

/** Fills \a d (free d->t after). 0 or BALLAST_ENOMEM. */
int map__dist_init(map__dist_t *d, const rta_hw_t *hw);

static inline double map__dist(const map__dist_t *d, int a, int b) {
  return d->t ? d->t[(size_t)a * d->ns + b] : map__hw_dist(d->hw, a, b);
}

/**
 * Combined cost of \a slot after \a prev, in hop-bytes per step: the
 * mapping's hop-bytes plus, for every vertex that moves, its state bytes x
 * the distance from its old slot to its new one / \a steps (a migration is
 * one message of the state, paid once every \a steps steps). Vertices with
 * prev -1 cost nothing to place. \a hop and \a mig (may be NULL) get the
 * two terms.
 */
double map__remap_cost(const rta_graph_t *g, const rta_hw_t *hw,
                       const int64_t *slot, const int64_t *prev, double steps,
                       double *hop, double *mig);

/**
 * Greedy refinement of map__remap_cost(), in place: up to \a passes sweeps
 * over the vertices; a vertex moves to its old slot or to a slot of one of
 * its neighbours when that lowers the combined cost and the target's work
 * stays within (1 + balrat) x average; a vertex on a slot above that bound
 * takes the cheapest such move even when it costs (balance repair).
 * Deterministic.
 * 0 or BALLAST_ENOMEM.
 */
int map__refine(const rta_graph_t *g, const rta_hw_t *hw, const int64_t *prev,
                double steps, double balrat, int passes, int64_t *slot);

/** A bound on what a remap migrates: tasks away from their old slot and
 *  their state bytes. */
typedef struct {
  int64_t tasks;
  double bytes;
} map__budget_t;

/**
 * Multilevel refinement of map__remap_cost() at \a steps, in place
 * (map_refine.c); with \a flat, a move costs state / steps x the largest
 * slot distance whatever its distance; with \a bud (may be NULL), no move
 * takes the tasks away from their old slot, or their state bytes, above
 * the budget (nor further above it when it starts above). The
 * graph is coarsened by heavy-edge matching of neighbours that share both
 * their current slot and their old one (so every level holds the same
 * mapping and a cluster's migration cost is exact), then, from the coarsest
 * level down, k-way FM passes with hill climbing move vertices (clusters)
 * to their old slot or a neighbour's, best gain first, negative gains
 * allowed, each vertex once per pass, and roll back to the best prefix of
 * the pass. A move may overfill its target by the level's largest vertex
 * work, and moves
 * out of a slot above the bound come first; the prefix kept is the one
 * with the least total overload above (1 + balrat) x average, then the
 * lowest cost: the overload never grows and, when there is none at the
 * start, the combined cost never rises. Deterministic. 0 or BALLAST_ENOMEM.
 */
int map__refine_ml(const rta_graph_t *g, const rta_hw_t *hw,
                   const int64_t *prev, double steps, double balrat, int flat,
                   const map__budget_t *bud, int64_t *slot);

/**
 * Node-level refinement within a migration budget, in place (map_refine.c):
 * the multilevel FM of map__refine_ml() with the nodes as parts (every move
 * priced alike, state / steps x the largest node distance; each node's work
 * within (1 + balrat) x the average, or no further above it; no move
 * taking the tasks away from their old node, plus those
 * \a slot moves inside nodes, above \a bud). Hop-bytes between nodes weigh
 * most and the slot-level passes, one task at a time and a balanced core on
 * each side, rarely move a node boundary. Tasks that stay on their node
 * keep their slot; a task moved to another node takes its old slot when it
 * is there, else the slot of that node with the most bytes to its
 * neighbours: the cores are left to rebalance (map__refine_ml(),
 * map__rebalance_nodes()). Does
 * nothing without \a prev, with fewer than 2 or more than
 * MAP__DIST_TABLE_MAX nodes, or nodes of different sizes. Deterministic.
 * 0 or BALLAST_ENOMEM.
 */
int map__refine_nodes(const rta_graph_t *g, const rta_hw_t *hw,
                      const int64_t *prev, double steps, double balrat,
                      const map__budget_t *bud, int64_t *slot);

/**
 * Rebalances the cores inside each node, in place (map_refine.c): the
 * tasks of every slot above (1 + balrat) x the average move to the other
 * slots of its node that have room for them, in order of the rise of their
 * cost (bytes to their neighbours x distance, plus state / steps x the
 * largest slot distance when away from their old slot), until the slot is
 * within the bound; no move takes the tasks away from their old slot, or
 * their bytes, above \a bud (may be NULL). Slots of nodes with more than
 * 256 slots are left as they are. Deterministic. 0 or BALLAST_ENOMEM.
 */
int map__rebalance_nodes(const rta_graph_t *g, const rta_hw_t *hw,
                         const int64_t *prev, double steps, double balrat,
                         const map__budget_t *bud, int64_t *slot);

/**
 * Diffusion from the old mapping: \a slot starts as \a prev (vertices
 * with -1 join a neighbour's slot); the work each slot must give to or take
 * from its neighbouring slots is the flow of a diffusion on the slots'
 * quotient graph (Laplacian weighted by the bytes between two slots, solved
 * by conjugate gradients, right-hand side = work - average); the flows are
 * then carried out layer by layer by the boundary vertices whose move costs
 * least in map__remap_cost(); flows that get stuck (a slot no longer
 * touching the one it should feed) are recomputed from the loads reached,
 * until the largest work is within (1 + balrat) x average or 8 diffusions.
 * Deterministic. 0 or BALLAST_ENOMEM.
 */
int map__diffuse(const rta_graph_t *g, const rta_hw_t *hw, const int64_t *prev,
                 double steps, double balrat, int64_t *slot);

/**
 * ballast's remap: \a slot holds SCOTCH's graphRemap result on entry. One
 * more candidate, map__diffuse(); both are refined by map__refine() and the
 * one with the lowest map__remap_cost() among those within 1 + balrat is
 * chosen (none within: the best balanced; ties keep SCOTCH's). Then the
 * rule of the default: the lowest hop-bytes within a migration budget, the
 * tasks and bytes SCOTCH's remap moves (the reference remapper at the same
 * migration weight; the chosen one's when larger). The choice is refined
 * within that budget by map__refine_nodes() then map__refine_ml() with
 * every move priced alike (steps x 300; when that leaves a core above the
 * balance bound, from the node level's result again with its cores first
 * rebalanced by map__rebalance_nodes(), steps x 300, then x 1000 and
 * x 3000 while a core is still above), and replaced when its hop-bytes
 * fall, never above the budget, never more overloaded. Deterministic.
 * 0 or BALLAST_ENOMEM.
 */
int map__remap_best(const rta_graph_t *g, const rta_hw_t *hw,
                    const int64_t *prev, double steps, double balrat,
                    int64_t *slot);

#endif
