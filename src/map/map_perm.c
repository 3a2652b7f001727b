/*
 * One vertex per slot: the mapping of a graph whose vertices are the ranks
 * themselves (topology reordering, placement). SCOTCH balances within a
 * tolerance, so a slot may receive two vertices and another none; the extra
 * vertices then go to the free slots nearest to where SCOTCH wanted them.
 */
#include <stdlib.h>

#include "common/common_internal.h"
#include "common/util.h"
#include "map/map_internal.h"

/* The free slot for a vertex that wanted \a want. Nearest: the free slot
 * nearest to it (rta_hw_slot_distance(), lowest number among equals). By
 * node (load balancing's rule): a free slot of its node, else the lowest. */
static int64_t pick_free(const rta_hw_t *hw, int64_t ns, const unsigned char *used,
                         int64_t want, int by_node) {
  int64_t pick = -1;
  int in = want >= 0 && want < ns;
  if (by_node) {
    int node = in ? rta_hw_slot_node(hw, (int)want) : -1;
    for (int64_t s = 0; s < ns && pick < 0; s++)
      if (!used[s] && rta_hw_slot_node(hw, (int)s) == node)
        pick = s;
    for (int64_t s = 0; s < ns && pick < 0; s++)
      if (!used[s])
        pick = s;
    return pick;
  }
  double best = 0;
  for (int64_t s = 0; s < ns; s++) {
    if (used[s])
      continue;
    double d = in ? map__hw_dist(hw, (int)want, (int)s) : 0;
    if (pick < 0 || d < best) {
      pick = s;
      best = d;
    }
  }
  return pick;
}

/* Makes \a slot (n <= nslots vertices) use each slot at most once: the first
 * vertex of each slot stays, each later one takes pick_free()'s slot.
 * Deterministic. */
static int repair(const rta_hw_t *hw, int64_t n, int64_t *slot, int by_node) {
  int64_t ns = rta_hw_nslots(hw);
  unsigned char *used = ballast__calloc((size_t)(ns > 0 ? ns : 1), 1);
  int64_t *pending = ballast__malloc((size_t)(n ? n : 1) * sizeof *pending);
  int64_t np = 0;
  if (!used || !pending) {
    free(used);
    free(pending);
    return BALLAST_ENOMEM;
  }
  for (int64_t v = 0; v < n; v++) {
    if (slot[v] >= 0 && slot[v] < ns && !used[slot[v]])
      used[slot[v]] = 1;
    else
      pending[np++] = v;
  }
  for (int64_t i = 0; i < np; i++) {
    int64_t pick = pick_free(hw, ns, used, slot[pending[i]], by_node);
    used[pick] = 1;
    slot[pending[i]] = pick;
  }
  free(used);
  free(pending);
  return 0;
}

int map__repair_by_node(const rta_hw_t *hw, int64_t n, int *slot) {
  int64_t *s = ballast__malloc((size_t)(n ? n : 1) * sizeof *s);
  if (!s)
    return BALLAST_ENOMEM;
  for (int64_t v = 0; v < n; v++)
    s[v] = slot[v];
  int rc = repair(hw, n, s, 1);
  for (int64_t v = 0; !rc && v < n; v++)
    slot[v] = (int)s[v];
  free(s);
  return rc;
}

int rta_map_permutation(const rta_graph_t *g, const rta_hw_t *hw,
                        const rta_map_options_t *opt, MPI_Comm comm,
                        int64_t *slot_of_vertex, rta_map_quality_t *q) {
  if (!g || !hw || !slot_of_vertex)
    return BALLAST_EINVAL;
  int64_t n = rta_graph_nvert(g);
  if (n != rta_hw_nslots(hw)) {
    BALLAST_WARN("rta: map_permutation: %lld vertices onto %d slots; a "
                 "permutation needs as many of each", (long long)n, rta_hw_nslots(hw));
    return BALLAST_EINVAL;
  }
  double t0 = map__now();
  int rc = comm != MPI_COMM_NULL
               ? rta_map_graph_par(g, hw, RTA_MAP_TWOPHASE, NULL, opt, comm,
                                   slot_of_vertex, NULL)
               : rta_map_graph_ex(g, hw, RTA_MAP_TWOPHASE, NULL, opt,
                                  slot_of_vertex, NULL);
  if (!rc)
    rc = repair(hw, n, slot_of_vertex, 0);
  if (comm != MPI_COMM_NULL)
    rc = ballast__agree(comm, rc, NULL, NULL);
  if (!rc && q) {
    rc = rta_map_evaluate(g, hw, slot_of_vertex, NULL, q);
    q->seconds = map__now() - t0;
  }
  return rc;
}
