/* ballast-cube as a ballast application: the call paths are tasks whose
 * work is the measured time queries spent on their rows; `rebalance` remaps
 * them with ballast's mapping engine (a migration-aware remap from the
 * current owners) and moves the rows, so a skewed query load is spread over
 * the ranks (see srv_rebalance() in cube_server.h). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ballast/rta_map.h>

#include "cube_server.h"

static int agree(MPI_Comm comm, int rc) {
  int all;
  MPI_Allreduce(&rc, &all, 1, MPI_INT, MPI_MIN, comm);
  return all;
}

static int ndata(const cube_t *c) {
  int k = 0;
  for (int m = 0; m < c->nmetric; m++) k += c->metric[m].has_data;
  return k;
}

/* next[] from the measured costs gc[] and the current owners. */
static int remap(srv_t *s, const double *gc, unsigned seed, int64_t *next) {
  const cube_t *c = s->c;
  int64_t n = c->ncnode;
  double mean = 0;
  for (int64_t i = 0; i < n; i++) mean += gc[i];
  mean = mean > 0 ? mean / (double)n : 1.0;
  double state = (double)ndata(c) * (double)c->nloc * 8.0;
  rta_graph_t *g = NULL;
  rta_hw_t *hw = NULL;
  int64_t *prev = malloc((size_t)n * sizeof *prev);
  int rc = prev ? rta_graph_create(n, &g) : BALLAST_ENOMEM;
  for (int64_t i = 0; !rc && i < n; i++) {
    prev[i] = s->owner[i];
    rc = rta_graph_set_vertex(g, i, gc[i] + 0.01 * mean, state);
    if (!rc && c->parent[i] >= 0) rc = rta_graph_add_edge(g, c->parent[i], i, 8.0);
  }
  int rc2 = rta_hw_discover(s->comm, &hw); /* collective: every rank */
  if (!rc) rc = rc2;
  if (!rc) rc = rta_map_graph(g, hw, RTA_MAP_TWOPHASE, prev, seed, next, NULL);
  rta_hw_destroy(hw);
  rta_graph_destroy(g);
  free(prev);
  return agree(s->comm, rc);
}

typedef struct {
  int *scnt, *sdis, *rcnt, *rdis, *cur;
  double *sbuf, *rbuf;
  int32_t *own;
  int64_t *slot, nown;
  double **rows, *cost;
} mig_t;

static void mig_free(mig_t *g, int nmetric) {
  free(g->scnt); free(g->sbuf); free(g->rbuf); free(g->own); free(g->slot); free(g->cost);
  for (int m = 0; g->rows && m < nmetric; m++) free(g->rows[m]);
  free(g->rows);
}

/* Counts, buffers and the new arrays; 0 or BALLAST_ENOMEM / ERANGE. */
static int mig_alloc(srv_t *s, const int64_t *next, mig_t *g) {
  const cube_t *c = s->c;
  int P = s->size, nd = ndata(c);
  g->scnt = calloc((size_t)P * 5, sizeof(int));
  g->rows = calloc((size_t)c->nmetric, sizeof *g->rows);
  g->slot = malloc((size_t)c->ncnode * sizeof *g->slot);
  if (!g->scnt || !g->rows || !g->slot) return BALLAST_ENOMEM;
  g->sdis = g->scnt + P; g->rcnt = g->sdis + P; g->rdis = g->rcnt + P; g->cur = g->rdis + P;
  long long st = 0, rt = 0;
  for (int64_t i = 0; i < c->ncnode; i++) {
    int o = s->owner[i], nw = (int)next[i];
    if (o == s->rank && nw != s->rank) { g->scnt[nw] += nd; st += nd; }
    if (o != s->rank && nw == s->rank) { g->rcnt[o] += nd; rt += nd; }
    g->slot[i] = nw == s->rank ? g->nown++ : -1;
  }
  if (st > INT_MAX || rt > INT_MAX) return BALLAST_ERANGE;
  for (int r = 1; r < P; r++) {
    g->sdis[r] = g->sdis[r - 1] + g->scnt[r - 1];
    g->rdis[r] = g->rdis[r - 1] + g->rcnt[r - 1];
  }
  size_t row = (size_t)c->nloc * sizeof(double);
  g->sbuf = malloc((size_t)(st ? st : 1) * row);
  g->rbuf = malloc((size_t)(rt ? rt : 1) * row);
  g->own = malloc((size_t)(g->nown ? g->nown : 1) * sizeof *g->own);
  g->cost = calloc((size_t)(g->nown ? g->nown : 1), sizeof *g->cost);
  if (!g->sbuf || !g->rbuf || !g->own || !g->cost) return BALLAST_ENOMEM;
  for (int m = 0; m < c->nmetric; m++)
    if (c->metric[m].has_data &&
        !(g->rows[m] = malloc((size_t)(g->nown ? g->nown : 1) * row)))
      return BALLAST_ENOMEM;
  return 0;
}

/* Sends the rows of the cnodes that change owner, then builds the new
 * owned arrays: kept rows copied, received ones in the senders' order
 * (ascending cnode, metrics in order). */
static int migrate(srv_t *s, const int64_t *next, int64_t *moved) {
  const cube_t *c = s->c;
  mig_t g;
  memset(&g, 0, sizeof g);
  int rc = agree(s->comm, mig_alloc(s, next, &g));
  if (rc) { mig_free(&g, c->nmetric); return rc; }
  size_t row = (size_t)c->nloc;
  memcpy(g.cur, g.sdis, (size_t)s->size * sizeof(int));
  for (int64_t i = 0; i < c->ncnode; i++)
    if (s->owner[i] == s->rank && next[i] != s->rank)
      for (int m = 0; m < c->nmetric; m++)
        if (c->metric[m].has_data)
          memcpy(g.sbuf + (size_t)g.cur[next[i]]++ * row, s->rows[m] + s->slot[i] * (int64_t)row,
                 row * sizeof(double));
  MPI_Datatype rowt;
  MPI_Type_contiguous((int)c->nloc, MPI_DOUBLE, &rowt);
  MPI_Type_commit(&rowt);
  rc = MPI_Alltoallv(g.sbuf, g.scnt, g.sdis, rowt, g.rbuf, g.rcnt, g.rdis, rowt, s->comm);
  MPI_Type_free(&rowt);
  if (agree(s->comm, rc == MPI_SUCCESS ? 0 : BALLAST_EMPI)) {
    mig_free(&g, c->nmetric);
    return BALLAST_EMPI;
  }
  memcpy(g.cur, g.rdis, (size_t)s->size * sizeof(int));
  *moved = 0;
  for (int64_t i = 0; i < c->ncnode; i++) {
    *moved += next[i] != s->owner[i];
    if (next[i] != s->rank) continue;
    int64_t k = g.slot[i];
    g.own[k] = (int32_t)i;
    for (int m = 0; m < c->nmetric; m++) {
      if (!c->metric[m].has_data) continue;
      const double *src = s->owner[i] == s->rank
                              ? s->rows[m] + s->slot[i] * (int64_t)row
                              : g.rbuf + (size_t)g.cur[s->owner[i]]++ * row;
      memcpy(g.rows[m] + k * (int64_t)row, src, row * sizeof(double));
    }
  }
  /* Swap the new arrays in; the old ones go with g. */
  for (int64_t i = 0; i < c->ncnode; i++) s->owner[i] = (int32_t)next[i];
  int32_t *o1 = s->own; s->own = g.own; g.own = o1;
  int64_t *s1 = s->slot; s->slot = g.slot; g.slot = s1;
  double **r1 = s->rows; s->rows = g.rows; g.rows = r1;
  double *c1 = s->cost; s->cost = g.cost; g.cost = c1;
  s->nown = g.nown;
  s->row_bytes = (size_t)g.nown * row * sizeof(double) * (size_t)ndata(c);
  mig_free(&g, c->nmetric);
  return 0;
}

static double imbalance(const srv_t *s, const double *gc, const int64_t *own_of) {
  double *load = calloc((size_t)s->size, sizeof *load), tot = 0, mx = 0;
  if (!load) return -1;
  for (int64_t i = 0; i < s->c->ncnode; i++) { load[own_of[i]] += gc[i]; tot += gc[i]; }
  for (int r = 0; r < s->size; r++) if (load[r] > mx) mx = load[r];
  free(load);
  return tot > 0 ? mx / (tot / s->size) : 1.0;
}

int srv_rebalance(srv_t *s, unsigned seed, int64_t *moved, double *imb_before,
                  double *imb_after, char *err, size_t errlen) {
  int64_t n = s->c->ncnode;
  double *gc = calloc((size_t)n, sizeof *gc);
  int64_t *next = malloc((size_t)n * sizeof *next), *cur = malloc((size_t)n * sizeof *cur);
  int rc = agree(s->comm, (gc && next && cur) ? 0 : BALLAST_ENOMEM);
  if (!rc) {
    for (int64_t k = 0; k < s->nown; k++) gc[s->own[k]] = s->cost[k];
    MPI_Allreduce(MPI_IN_PLACE, gc, (int)n, MPI_DOUBLE, MPI_SUM, s->comm);
  }
  if (!rc) {
    for (int64_t i = 0; i < n; i++) cur[i] = s->owner[i];
    *imb_before = imbalance(s, gc, cur);
    *imb_after = *imb_before;
    *moved = 0;
  }
  /* Balanced within 5% already (every rank computes the same figure):
   * nothing moves and the costs keep accumulating. */
  if (!rc && *imb_before > 1.05) {
    rc = remap(s, gc, seed, next);
    if (!rc) {
      *imb_after = imbalance(s, gc, next);
      rc = migrate(s, next, moved);
    }
  }
  if (rc) snprintf(err, errlen, "rebalance failed: %s", ballast_strerror(rc));
  free(gc); free(next); free(cur);
  return rc;
}
