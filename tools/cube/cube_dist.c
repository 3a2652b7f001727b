/* Distributions of the call tree over the ranks (see cube_server.h). Each
 * is a pure function of the metadata (and the seed), so every rank computes
 * the same owners without communication; "ballast" maps the call tree as a
 * task graph with ballast's mapping engine (include/ballast/rta_map.h). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ballast/rta_map.h>

#include "cube_server.h"

static const char *const names[DIST_N] = {"plain", "roundrobin", "random", "chain",
                                          "ballast"};

const char *dist_name(dist_t d) {
  return (unsigned)d < DIST_N ? names[d] : "?";
}

int dist_parse(const char *s, dist_t *d) {
  for (int i = 0; i < DIST_N; i++)
    if (strcmp(s, names[i]) == 0) {
      *d = (dist_t)i;
      return 0;
    }
  if (strcmp(s, "deepest-chain") == 0) {
    *d = DIST_CHAIN;
    return 0;
  }
  return BALLAST_EINVAL;
}

/* Breadth-first order of the whole forest, roots in document order. */
static void bfs_order(const cube_t *c, int32_t *order) {
  int64_t head = 0, tail = 0;
  for (int64_t i = 0; i < c->ncnode; i++)
    if (c->parent[i] < 0) order[tail++] = (int32_t)i;
  while (head < tail) {
    int32_t x = order[head++];
    for (int64_t k = c->child_start[x]; k < c->child_start[x + 1]; k++)
      order[tail++] = c->child[k];
  }
}

static uint64_t splitmix(uint64_t *s) {
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static void blocks(const int32_t *order, int64_t n, int size, int32_t *owner) {
  for (int64_t i = 0; i < n; i++) owner[order[i]] = (int32_t)((i * size) / n);
}

typedef struct {
  int64_t len;
  int32_t head;
} chain_t;

static int cmp_chain(const void *a, const void *b) {
  const chain_t *x = a, *y = b;
  if (x->len != y->len) return x->len < y->len ? 1 : -1;
  return (x->head > y->head) - (x->head < y->head);
}

/* Deepest chains: each chain starts at a root or at a child left behind and
 * follows the child with the tallest subtree, so parent-child chains stay
 * on one rank; chains go longest first to the least loaded rank. */
static int chains(const cube_t *c, int size, int32_t *owner) {
  int64_t n = c->ncnode;
  int64_t *height = calloc((size_t)n, sizeof *height);
  int32_t *deep = malloc((size_t)n * sizeof *deep);
  chain_t *ch = malloc((size_t)n * sizeof *ch);
  int64_t *load = calloc((size_t)size, sizeof *load);
  if (!height || !deep || !ch || !load) {
    free(height); free(deep); free(ch); free(load);
    return BALLAST_ENOMEM;
  }
  for (int64_t i = n - 1; i >= 0; i--) { /* children come after parents */
    deep[i] = -1;
    for (int64_t k = c->child_start[i]; k < c->child_start[i + 1]; k++) {
      int32_t y = c->child[k];
      if (deep[i] < 0 || height[y] > height[deep[i]]) deep[i] = y;
    }
    height[i] = 1 + (deep[i] >= 0 ? height[deep[i]] : 0);
  }
  int64_t nch = 0;
  for (int64_t i = 0; i < n; i++)
    if (c->parent[i] < 0 || deep[c->parent[i]] != i) {
      ch[nch].head = (int32_t)i;
      ch[nch].len = height[i];
      nch++;
    }
  qsort(ch, (size_t)nch, sizeof *ch, cmp_chain);
  for (int64_t k = 0; k < nch; k++) {
    int best = 0;
    for (int r = 1; r < size; r++)
      if (load[r] < load[best]) best = r;
    for (int32_t x = ch[k].head; x >= 0; x = deep[x]) owner[x] = best;
    load[best] += ch[k].len;
  }
  free(height); free(deep); free(ch); free(load);
  return 0;
}

/* The call tree as a task graph: a vertex per cnode, its work the values it
 * holds (rows x locations), an edge per call weighted by the bytes a
 * per-location inclusive value sends across it; ballast's two-phase SCOTCH
 * mapping onto the ranks keeps subtrees together within the balance bound. */
static int ballast_map(const cube_t *c, MPI_Comm comm, unsigned seed, int32_t *owner,
                       char *err, size_t errlen) {
  int64_t n = c->ncnode;
  rta_graph_t *g = NULL;
  rta_hw_t *hw = NULL;
  int64_t *slot = malloc((size_t)n * sizeof *slot);
  int rc = (slot && owner) ? rta_graph_create(n, &g) : BALLAST_ENOMEM;
  for (int64_t i = 0; !rc && i < n; i++) {
    double rows = 0;
    for (int m = 0; m < c->nmetric; m++)
      if (c->metric[m].has_data && c->metric[m].row_of[i] >= 0) rows++;
    double work = (rows > 0 ? rows : 1) * (double)c->nloc;
    rc = rta_graph_set_vertex(g, i, work, work * 8);
    if (!rc && c->parent[i] >= 0)
      rc = rta_graph_add_edge(g, c->parent[i], i, 8.0 * (double)c->nloc);
  }
  /* Discovery is collective: every rank reaches it, even after a local
   * failure above, and the codes are agreed below. */
  int rc2 = rta_hw_discover(comm, &hw);
  if (!rc) rc = rc2;
  if (!rc) rc = rta_map_graph(g, hw, RTA_MAP_TWOPHASE, NULL, seed, slot, NULL);
  int all;
  MPI_Allreduce(&rc, &all, 1, MPI_INT, MPI_MIN, comm);
  if (all)
    snprintf(err, errlen, "ballast distribution: the mapping failed: %s",
             ballast_strerror(all));
  for (int64_t i = 0; !all && i < n; i++) owner[i] = (int32_t)slot[i];
  rta_hw_destroy(hw);
  rta_graph_destroy(g);
  free(slot);
  return all;
}

int dist_compute(const cube_t *c, dist_t d, unsigned seed, MPI_Comm comm, int32_t *owner,
                 char *err, size_t errlen) {
  int size;
  MPI_Comm_size(comm, &size);
  int64_t n = c->ncnode;
  if (d == DIST_BALLAST) return ballast_map(c, comm, seed, owner, err, errlen);
  if (!owner) {
    snprintf(err, errlen, "out of memory");
    return BALLAST_ENOMEM;
  }
  if (d == DIST_CHAIN) {
    int rc = chains(c, size, owner);
    if (rc) snprintf(err, errlen, "out of memory");
    return rc;
  }
  int32_t *order = malloc((size_t)n * sizeof *order);
  if (!order) {
    snprintf(err, errlen, "out of memory");
    return BALLAST_ENOMEM;
  }
  bfs_order(c, order);
  if (d == DIST_ROUNDROBIN) {
    for (int64_t i = 0; i < n; i++) owner[order[i]] = (int32_t)(i % size);
  } else {
    if (d == DIST_RANDOM) {
      uint64_t st = 0x5eed0000ull ^ seed;
      for (int64_t i = n - 1; i > 0; i--) { /* Fisher-Yates */
        int64_t j = (int64_t)(splitmix(&st) % (uint64_t)(i + 1));
        int32_t t = order[i];
        order[i] = order[j];
        order[j] = t;
      }
    }
    blocks(order, n, size, owner);
  }
  free(order);
  return 0;
}
