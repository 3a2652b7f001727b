/* Quality figures of a mapping, computed by ballast itself (SCOTCH's
 * graphRemapView misreports migration and deco distances are wrong in
 * 7.0.3): loads per slot and node, edge cut, hop-bytes, inter-node volume,
 * migration. Each undirected edge counts once. */
#include <stdlib.h>
#include <string.h>

#include "common/common_internal.h"
#include "map/map_internal.h"

int map__quality(const rta_graph_t *g, const rta_hw_t *hw, const int64_t *slot,
                 const int64_t *prev, rta_map_quality_t *q) {
  int64_t n = g->nvert;
  int ns = hw->nslots, nn = hw->nnodes;
  double *sl = ballast__calloc((size_t)ns, sizeof *sl);
  double *nl = ballast__calloc((size_t)nn, sizeof *nl);
  if (!sl || !nl) {
    free(sl);
    free(nl);
    return BALLAST_ENOMEM;
  }
  double total = 0;
  for (int64_t v = 0; v < n; v++) {
    if (slot[v] < 0 || slot[v] >= ns) {
      free(sl);
      free(nl);
      BALLAST_WARN("mapping: vertex %lld is on slot %lld, not in 0..%d",
                   (long long)v, (long long)slot[v], ns - 1);
      return BALLAST_EINVAL;
    }
    sl[slot[v]] += g->work[v];
    total += g->work[v];
  }
  double avg = total / ns, mx = 0, mxn = 0;
  for (int s = 0; s < ns; s++) {
    if (sl[s] > mx)
      mx = sl[s];
    nl[hw->slot_node[s]] += sl[s];
  }
  for (int k = 0; k < nn; k++) {
    double per = nl[k] / (hw->node_xslot[k + 1] - hw->node_xslot[k]);
    if (per > mxn)
      mxn = per;
  }
  q->max_avg_load_core = avg > 0 ? mx / avg : 1.0;
  q->max_avg_load_node = avg > 0 ? mxn / avg : 1.0;
  free(sl);
  free(nl);
  double cut = 0, hop = 0, inter = 0;
  for (int64_t v = 0; v < n; v++) {
    int sv = (int)slot[v], nv = hw->slot_node[sv];
    for (int64_t i = g->xadj[v]; i < g->xadj[v + 1]; i++) {
      int64_t u = g->adj[i];
      if (u <= v)
        continue;
      int su = (int)slot[u];
      if (su == sv)
        continue;
      double w = g->adjw[i];
      cut += w;
      if (hw->slot_node[su] != nv)
        inter += w;
      hop += w * map__hw_dist(hw, sv, su);
    }
  }
  q->edge_cut = cut;
  q->hop_bytes = hop;
  q->internode_volume = inter;
  q->tasks_migrated = 0;
  q->bytes_migrated = 0;
  if (prev)
    for (int64_t v = 0; v < n; v++)
      if (prev[v] >= 0 && prev[v] != slot[v]) {
        q->tasks_migrated++;
        q->bytes_migrated += g->state[v];
      }
  return 0;
}

int rta_map_evaluate(const rta_graph_t *cg, const rta_hw_t *hw,
                     const int64_t *slot_of_vertex, const int64_t *prev,
                     rta_map_quality_t *q) {
  if (!cg || !hw || !slot_of_vertex || !q)
    return BALLAST_EINVAL;
  /* Logically const: merging pending edges does not change the graph. */
  rta_graph_t *g = (rta_graph_t *)cg;
  int rc = map__graph_finalize(g);
  if (rc)
    return rc;
  double t0 = map__now();
  memset(q, 0, sizeof *q);
  rc = map__quality(g, hw, slot_of_vertex, prev, q);
  q->seconds_metrics = map__now() - t0;
  return rc;
}
