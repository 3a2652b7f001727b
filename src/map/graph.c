/* The task graph: vertices with work and state, edges with bytes, kept as a
 * list of pending edges that is merged into a symmetric CSR when needed. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/common_internal.h"
#include "map/map_internal.h"

/* Largest vertex count: SCOTCH_Num is 32-bit and SCOTCH needs vertnbr+1. */
#define GRAPH_MAXVERT ((int64_t)INT32_MAX - 1)
/* Largest arc count (both directions) SCOTCH can index. */
#define GRAPH_MAXARC ((int64_t)INT32_MAX - 1)

int rta_graph_create(int64_t nvert, rta_graph_t **out) {
  if (!out || nvert < 1)
    return BALLAST_EINVAL;
  *out = NULL;
  if (nvert > GRAPH_MAXVERT) {
    BALLAST_WARN("rta_graph_create: %lld vertices do not fit SCOTCH_Num "
                 "(32-bit in this build)", (long long)nvert);
    return BALLAST_ERANGE;
  }
  rta_graph_t *g = ballast__calloc(1, sizeof *g);
  if (!g)
    return BALLAST_ENOMEM;
  g->nvert = nvert;
  g->work = ballast__malloc((size_t)nvert * sizeof *g->work);
  g->state = ballast__calloc((size_t)nvert, sizeof *g->state);
  if (!g->work || !g->state) {
    rta_graph_destroy(g);
    return BALLAST_ENOMEM;
  }
  for (int64_t v = 0; v < nvert; v++)
    g->work[v] = 1.0;
  *out = g;
  return 0;
}

void rta_graph_destroy(rta_graph_t *g) {
  if (!g)
    return;
  free(g->work);
  free(g->state);
  free(g->pu);
  free(g->pv);
  free(g->pw);
  free(g->xadj);
  free(g->adj);
  free(g->adjw);
  free(g);
}

int64_t rta_graph_nvert(const rta_graph_t *g) { return g ? g->nvert : BALLAST_EINVAL; }

int rta_graph_set_vertex(rta_graph_t *g, int64_t v, double work,
                         double state_bytes) {
  if (!g || v < 0 || v >= g->nvert || !isfinite(work) || work < 0 ||
      !isfinite(state_bytes) || state_bytes < 0)
    return BALLAST_EINVAL;
  g->work[v] = work;
  g->state[v] = state_bytes;
  return 0;
}

int rta_graph_add_edge(rta_graph_t *g, int64_t u, int64_t v, double bytes) {
  if (!g || u < 0 || v < 0 || u >= g->nvert || v >= g->nvert ||
      !isfinite(bytes) || bytes < 0)
    return BALLAST_EINVAL;
  if (u == v)
    return 0;
  if (g->npend == g->cappend) {
    int64_t cap = g->cappend ? 2 * g->cappend : 1024;
    if (cap > GRAPH_MAXARC)
      cap = GRAPH_MAXARC;
    if (g->npend >= cap)
      return BALLAST_ERANGE;
    int32_t *pu = ballast__realloc(g->pu, (size_t)cap * sizeof *pu);
    if (!pu)
      return BALLAST_ENOMEM;
    g->pu = pu;
    int32_t *pv = ballast__realloc(g->pv, (size_t)cap * sizeof *pv);
    if (!pv)
      return BALLAST_ENOMEM;
    g->pv = pv;
    double *pw = ballast__realloc(g->pw, (size_t)cap * sizeof *pw);
    if (!pw)
      return BALLAST_ENOMEM;
    g->pw = pw;
    g->cappend = cap;
  }
  g->pu[g->npend] = (int32_t)u;
  g->pv[g->npend] = (int32_t)v;
  g->pw[g->npend] = bytes;
  g->npend++;
  return 0;
}

int map__graph_from_csr(int64_t nvert, int64_t *xadj, int32_t *adj,
                        double *adjw, rta_graph_t **out) {
  rta_graph_t *g = NULL;
  int rc = rta_graph_create(nvert, &g);
  if (rc) {
    free(xadj);
    free(adj);
    free(adjw);
    return rc;
  }
  g->xadj = xadj;
  g->adj = adj;
  g->adjw = adjw;
  g->csr_ok = 1;
  *out = g;
  return 0;
}

/* Sorts the neighbours of one vertex (insertion sort: lists are short, and
 * merging repeats needs them sorted). */
static void sort_row(int32_t *a, double *w, int64_t n) {
  for (int64_t i = 1; i < n; i++) {
    int32_t ka = a[i];
    double kw = w[i];
    int64_t j = i - 1;
    while (j >= 0 && a[j] > ka) {
      a[j + 1] = a[j];
      w[j + 1] = w[j];
      j--;
    }
    a[j + 1] = ka;
    w[j + 1] = kw;
  }
}

static int cmp_pair(const void *x, const void *y) {
  const int32_t *a = x, *b = y;
  return (a[0] > b[0]) - (a[0] < b[0]);
}

int map__graph_finalize(rta_graph_t *g) {
  if (g->csr_ok && g->npend == 0)
    return 0;
  int64_t n = g->nvert;
  int64_t old = g->csr_ok ? g->xadj[n] : 0;
  int64_t tot = old + 2 * g->npend;
  if (tot > GRAPH_MAXARC)
    return BALLAST_ERANGE;
  int64_t *xadj = ballast__calloc((size_t)n + 1, sizeof *xadj);
  int32_t *adj = ballast__malloc((size_t)(tot ? tot : 1) * sizeof *adj);
  double *adjw = ballast__malloc((size_t)(tot ? tot : 1) * sizeof *adjw);
  if (!xadj || !adj || !adjw) {
    free(xadj);
    free(adj);
    free(adjw);
    return BALLAST_ENOMEM;
  }
  /* Count, then fill, the old CSR and both directions of each pending edge. */
  for (int64_t v = 0; v < n; v++)
    xadj[v + 1] = g->csr_ok ? g->xadj[v + 1] - g->xadj[v] : 0;
  for (int64_t e = 0; e < g->npend; e++) {
    xadj[g->pu[e] + 1]++;
    xadj[g->pv[e] + 1]++;
  }
  for (int64_t v = 0; v < n; v++)
    xadj[v + 1] += xadj[v];
  int64_t *fill = ballast__malloc((size_t)n * sizeof *fill);
  if (!fill) {
    free(xadj);
    free(adj);
    free(adjw);
    return BALLAST_ENOMEM;
  }
  for (int64_t v = 0; v < n; v++) {
    fill[v] = xadj[v];
    if (g->csr_ok)
      for (int64_t i = g->xadj[v]; i < g->xadj[v + 1]; i++) {
        adj[fill[v]] = g->adj[i];
        adjw[fill[v]++] = g->adjw[i];
      }
  }
  for (int64_t e = 0; e < g->npend; e++) {
    int32_t u = g->pu[e], v = g->pv[e];
    adj[fill[u]] = v;
    adjw[fill[u]++] = g->pw[e];
    adj[fill[v]] = u;
    adjw[fill[v]++] = g->pw[e];
  }
  free(fill);
  /* Sort each row and merge repeats in place, compacting as we go. */
  int64_t out = 0;
  for (int64_t v = 0; v < n; v++) {
    int64_t b = xadj[v], e = xadj[v + 1];
    if (e - b > 64) {
      /* Long rows: qsort pairs through a scratch buffer. */
      int32_t(*tmp)[4] = ballast__malloc((size_t)(e - b) * sizeof *tmp);
      if (!tmp) {
        free(xadj);
        free(adj);
        free(adjw);
        return BALLAST_ENOMEM;
      }
      for (int64_t i = b; i < e; i++) {
        tmp[i - b][0] = adj[i];
        memcpy(&tmp[i - b][2], &adjw[i], sizeof(double));
      }
      qsort(tmp, (size_t)(e - b), sizeof *tmp, cmp_pair);
      for (int64_t i = b; i < e; i++) {
        adj[i] = tmp[i - b][0];
        memcpy(&adjw[i], &tmp[i - b][2], sizeof(double));
      }
      free(tmp);
    } else {
      sort_row(adj + b, adjw + b, e - b);
    }
    xadj[v] = out;
    for (int64_t i = b; i < e; i++) {
      if (out > xadj[v] && adj[out - 1] == adj[i]) {
        adjw[out - 1] += adjw[i];
      } else {
        adj[out] = adj[i];
        adjw[out++] = adjw[i];
      }
    }
  }
  xadj[n] = out;
  free(g->xadj);
  free(g->adj);
  free(g->adjw);
  free(g->pu);
  free(g->pv);
  free(g->pw);
  g->pu = g->pv = NULL;
  g->pw = NULL;
  g->npend = g->cappend = 0;
  g->xadj = xadj;
  g->adj = adj;
  g->adjw = adjw;
  g->csr_ok = 1;
  return 0;
}

int64_t rta_graph_nedges(rta_graph_t *g) {
  if (!g)
    return BALLAST_EINVAL;
  int rc = map__graph_finalize(g);
  if (rc)
    return rc;
  return g->xadj[g->nvert] / 2;
}
