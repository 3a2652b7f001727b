/*
 * The mapper behind MPI's topology constructors (mon/wrap_topo.c builds the
 * declared graph; this maps it). The hardware model is discovered over the old
 * communicator as for load balancing (hwloc inside each node, nodes from
 * MPI_COMM_TYPE_SHARED or BALLAST_HW_LAYOUT, a complete graph between nodes
 * at the default inter-node cost); the graph's vertices are the ranks of the
 * communicator to create, weights the declared ones (1 per Cartesian
 * neighbour); rta_map_permutation() gives each vertex a slot, i.e. a rank of
 * the old communicator, and that rank takes the vertex's number.
 *
 * The mapper is installed by a constructor when the library is loaded, so the
 * wrappers (below this layer) can call it without seeing the map engine.
 */
#include <stdlib.h>

#include "common/common_internal.h"
#include "common/util.h"
#include "map/map_internal.h"
#include "mon/mon_hooks.h"

/* The graph of \a g: each arc adds its weight between its two ends. */
static int build_graph(const mon__topo_graph_t *tg, rta_graph_t **out) {
  int rc = rta_graph_create(tg->n, out);
  for (int v = 0; !rc && v < tg->n; v++)
    for (int a = tg->xadj[v]; !rc && a < tg->xadj[v + 1]; a++)
      rc = rta_graph_add_edge(*out, v, tg->adj[a], tg->weight ? tg->weight[a] : 1);
  return rc;
}

static int topo_map(MPI_Comm comm, const mon__topo_graph_t *tg, int *vertex,
                    mon__topo_result_t *res) {
  double t0 = map__now();
  int me = 0;
  MPI_Comm_rank(comm, &me);
  rta_hw_t *hw = NULL;
  rta_graph_t *g = NULL;
  int64_t *slot = NULL, *ident = NULL;
  int rc = rta_hw_discover(comm, &hw); /* collective, agreed */
  if (!rc) {
    rc = build_graph(tg, &g);
    slot = ballast__malloc((size_t)tg->n * sizeof *slot);
    ident = ballast__malloc((size_t)tg->n * sizeof *ident);
    if (!rc && (!slot || !ident))
      rc = BALLAST_ENOMEM;
    rc = ballast__agree(comm, rc, NULL, NULL);
  }
  rta_map_quality_t before, after;
  if (!rc)
    rc = rta_map_permutation(g, hw, NULL, comm, slot, &after); /* collective, agreed */
  if (!rc) {
    for (int v = 0; v < tg->n; v++)
      ident[v] = v;
    /* Local and deterministic: identical on every rank. */
    rc = rta_map_evaluate(g, hw, ident, NULL, &before);
  }
  if (!rc) {
    res->hop_bytes_before = before.hop_bytes;
    res->hop_bytes_after = after.hop_bytes;
    res->nodes = rta_hw_nnodes(hw);
    res->moved = 0;
    for (int v = 0; v < tg->n; v++) {
      res->moved += slot[v] != v;
      if (slot[v] == me)
        *vertex = v;
    }
    res->seconds = map__now() - t0;
  }
  free(slot);
  free(ident);
  rta_graph_destroy(g);
  rta_hw_destroy(hw);
  return rc;
}

__attribute__((constructor)) static void topo_install(void) {
  mon__topo_set_mapper(topo_map);
}
