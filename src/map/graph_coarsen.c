/* Heavy-edge matching coarsening of a task graph, used before phase 1 on
 * large graphs: SCOTCH's recursive bipartitioning re-coarsens the whole graph
 * for every level of the recursion (10 levels for 1,024 nodes), so halving
 * the graph once or twice up front divides phase 1's time by about as much.
 * Deterministic: vertices are visited in order, ties go to the lowest id. */
#include <stdlib.h>
#include <string.h>

#include "common/common_internal.h"
#include "map/map_internal.h"

void map__csr_free(map__csr_t *c) {
  free(c->xadj);
  free(c->adj);
  free(c->w);
  free(c->vw);
  memset(c, 0, sizeof *c);
}

int map__coarsen(const map__csr_t *in, SCOTCH_Num maxvw, map__csr_t *out,
                 int32_t *cmap) {
  int64_t n = in->n;
  memset(out, 0, sizeof *out);
  int32_t *match = ballast__malloc((size_t)n * sizeof *match);
  if (!match)
    return BALLAST_ENOMEM;
  for (int64_t v = 0; v < n; v++)
    match[v] = -1;
  for (int64_t v = 0; v < n; v++) {
    if (match[v] >= 0)
      continue;
    int64_t best = -1;
    double bw = -1;
    for (int64_t j = in->xadj[v]; j < in->xadj[v + 1]; j++) {
      int32_t u = in->adj[j];
      if (match[u] < 0 && u != v && in->vw[v] + in->vw[u] <= maxvw &&
          (in->w[j] > bw || (in->w[j] == bw && u < best))) {
        best = u;
        bw = in->w[j];
      }
    }
    if (best >= 0) {
      match[v] = (int32_t)best;
      match[best] = (int32_t)v;
    } else {
      match[v] = (int32_t)v;
    }
  }
  int64_t cn = 0;
  for (int64_t v = 0; v < n; v++)
    if (v <= match[v]) {
      cmap[v] = (int32_t)cn;
      cmap[match[v]] = (int32_t)cn++;
    }
  int64_t narc = in->xadj[n];
  out->n = cn;
  out->xadj = ballast__malloc(((size_t)cn + 1) * sizeof *out->xadj);
  out->adj = ballast__malloc((size_t)(narc ? narc : 1) * sizeof *out->adj);
  out->w = ballast__malloc((size_t)(narc ? narc : 1) * sizeof *out->w);
  out->vw = ballast__malloc((size_t)cn * sizeof *out->vw);
  int64_t *pos = ballast__malloc((size_t)cn * sizeof *pos);
  if (!out->xadj || !out->adj || !out->w || !out->vw || !pos) {
    free(match);
    free(pos);
    map__csr_free(out);
    return BALLAST_ENOMEM;
  }
  for (int64_t c = 0; c < cn; c++)
    pos[c] = -1;
  int64_t a = 0;
  for (int64_t v = 0; v < n; v++) {
    if (v > match[v])
      continue;
    int32_t cv = cmap[v];
    int64_t start = a;
    out->xadj[cv] = a;
    out->vw[cv] = in->vw[v] + (match[v] != v ? in->vw[match[v]] : 0);
    for (int m = 0; m < 2; m++) {
      int64_t x = m ? match[v] : v;
      if (m && x == v)
        break;
      for (int64_t j = in->xadj[x]; j < in->xadj[x + 1]; j++) {
        int32_t cu = cmap[in->adj[j]];
        if (cu == cv)
          continue;
        if (pos[cu] >= start) {
          out->w[pos[cu]] += in->w[j];
        } else {
          pos[cu] = a;
          out->adj[a] = cu;
          out->w[a++] = in->w[j];
        }
      }
    }
  }
  out->xadj[cn] = a;
  free(match);
  free(pos);
  return 0;
}
