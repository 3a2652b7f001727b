/*
 * Topology constructors with reorder = 1 (MPI-3.1 section 7.5): a
 * reordering renumbers processes, it never hands one process's declared
 * neighbourhood to another. Distributed graphs: every process gets the
 * neighbours (and weights) it declared itself, named by their new ranks;
 * with MPI_Dist_graph_create_adjacent in its declared order (the order of
 * the neighbourhood collectives' buffers), with MPI_Dist_graph_create as a
 * multiset (MPI leaves that order open). Checked on every rank through
 * MPI_Dist_graph_neighbors(_count), translated back to old ranks with
 * MPI_Group_translate_ranks, and through MPI_Neighbor_allgather, for
 * random graphs (dense as MPICH's topo/distgraph1, half full, sparse with
 * processes that have no neighbour): weighted, MPI_UNWEIGHTED,
 * MPI_WEIGHTS_EMPTY, declared adjacent, by each process's outgoing arcs, by
 * its incoming arcs only, all by rank 0, by another process, and none.
 * MPI_Graph_create and MPI_Cart_create: the process with new rank v has
 * vertex v's role, and every query agrees with the neighbourhood
 * collectives. Results are printed keyed by old rank (distributed graphs)
 * or by vertex (graph, Cartesian), so reordered and unwatched runs compare
 * equal. argv: number of graphs (seeds), rounds (the hang of
 * topo/distgraph1 needed many).
 */
#include <stdlib.h>
#include <string.h>

#include "sem_util.h"

#define MAXN 16

static int n, me;
static int layout[MAXN][MAXN]; /* weight of arc i -> j; 0: no arc */
static MPI_Group world;

/* GCC's bounds checks take the weight sentinels for zero-size buffers; passed
 * through functions they do not look into. */
__attribute__((noinline)) static int *unweighted(void) { return MPI_UNWEIGHTED; }
__attribute__((noinline)) static int *wempty(void) { return MPI_WEIGHTS_EMPTY; }

static unsigned rng;
static int rnd(void) {
  rng = rng * 1103515245u + 12345u;
  return (int)((rng >> 16) & 0x7fff);
}

/* Graph \a seed: dense (every arc, weights 0..99 where 0 means none, as
 * distgraph1), about half of the arcs, or about a fifth. */
static void make_layout(int seed) {
  rng = 7919u * (unsigned)seed + 1u;
  int keep = seed % 3 == 0 ? 100 : seed % 3 == 1 ? 50 : 20;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      int w = rnd() % 100;
      layout[i][j] = seed % 3 == 0 ? w : (rnd() % 100 < keep ? 1 + w : 0);
    }
}

/* Old (world) ranks of the ranks r[0..k-1] of \a comm. */
static void to_old(MPI_Comm comm, int k, const int *r, int *out) {
  MPI_Group g;
  MPI_Comm_group(comm, &g);
  if (k > 0)
    CHECK_EQ(MPI_Group_translate_ranks(g, k, r, world, out), MPI_SUCCESS);
  MPI_Group_free(&g);
}

typedef struct {
  int nb, w;
} arc_t;

static int arc_cmp(const void *a, const void *b) {
  const arc_t *x = a, *y = b;
  return x->nb != y->nb ? x->nb - y->nb : x->w - y->w;
}

/* "r:w r:w ..." into buf. */
static void fmt_arcs(char *buf, size_t cap, const arc_t *a, int k, int weighted) {
  size_t at = 0;
  buf[0] = 0;
  for (int i = 0; i < k && at < cap; i++)
    at += (size_t)(weighted ? snprintf(buf + at, cap - at, " %d:%d", a[i].nb, a[i].w)
                            : snprintf(buf + at, cap - at, " %d", a[i].nb));
}

/* Compares what \a dg says this process's neighbours are with what it
 * declared (\a ein / \a eout, old ranks), in order or as multisets. */
static void check_dist(MPI_Comm dg, const char *what, int seed, int reorder, int weighted,
                       int ordered, arc_t *ein, int nin, arc_t *eout, int nout) {
  int indeg = -1, outdeg = -1, w = -1, rank = -1;
  CHECK_EQ(MPI_Dist_graph_neighbors_count(dg, &indeg, &outdeg, &w), MPI_SUCCESS);
  CHECK_EQ(indeg, nin);
  CHECK_EQ(outdeg, nout);
  if (weighted >= 0)
    CHECK_EQ(!!w, weighted);
  MPI_Comm_rank(dg, &rank);
  if (!reorder)
    CHECK_EQ(rank, me);
  int src[MAXN * MAXN + 1], sw[MAXN * MAXN + 1], dst[MAXN * MAXN + 1], dw[MAXN * MAXN + 1];
  int os[MAXN * MAXN + 1], od[MAXN * MAXN + 1];
  CHECK_EQ(MPI_Dist_graph_neighbors(dg, indeg, src, w ? sw : unweighted(), outdeg, dst,
                                    w ? dw : unweighted()), MPI_SUCCESS);
  to_old(dg, indeg, src, os);
  to_old(dg, outdeg, dst, od);
  arc_t gin[MAXN * MAXN + 1], gout[MAXN * MAXN + 1];
  for (int i = 0; i < indeg; i++)
    gin[i] = (arc_t){os[i], w ? sw[i] : 0};
  for (int i = 0; i < outdeg; i++)
    gout[i] = (arc_t){od[i], w ? dw[i] : 0};
  /* The neighbourhood collective's order is the sources' order. */
  int got[MAXN * MAXN + 1];
  CHECK_EQ(MPI_Neighbor_allgather(&me, 1, MPI_INT, got, 1, MPI_INT, dg), MPI_SUCCESS);
  for (int i = 0; i < indeg; i++)
    CHECK_EQ(got[i], os[i]);
  if (!ordered) {
    qsort(gin, (size_t)indeg, sizeof *gin, arc_cmp);
    qsort(gout, (size_t)outdeg, sizeof *gout, arc_cmp);
    qsort(ein, (size_t)nin, sizeof *ein, arc_cmp);
    qsort(eout, (size_t)nout, sizeof *eout, arc_cmp);
  }
  for (int i = 0; i < indeg; i++) {
    CHECK_EQ(gin[i].nb, ein[i].nb);
    if (w && weighted > 0)
      CHECK_EQ(gin[i].w, ein[i].w);
  }
  for (int i = 0; i < outdeg; i++) {
    CHECK_EQ(gout[i].nb, eout[i].nb);
    if (w && weighted > 0)
      CHECK_EQ(gout[i].w, eout[i].w);
  }
  char bi[4096], bo[4096];
  fmt_arcs(bi, sizeof bi, gin, indeg, w);
  fmt_arcs(bo, sizeof bo, gout, outdeg, w);
  sem_out(what, "g%d r%d w%d in%s / out%s", seed, reorder, !!w, bi, bo);
}

/* This process's arcs in the layout, incoming and outgoing, in the order
 * it declares them: starting from a neighbour that depends on the seed,
 * so the declared order is not sorted. */
static void my_arcs(int seed, arc_t *in, int *nin, arc_t *out, int *nout) {
  *nin = *nout = 0;
  for (int k = 0; k < n; k++) {
    int j = (k + seed + me) % n;
    if (layout[j][me])
      in[(*nin)++] = (arc_t){j, layout[j][me]};
    if (layout[me][j])
      out[(*nout)++] = (arc_t){j, layout[me][j]};
  }
}

static void adjacent(int seed, int reorder, int weighted) {
  arc_t in[MAXN], out[MAXN];
  int nin, nout, s[MAXN] = {0}, sw[MAXN] = {0}, d[MAXN] = {0}, dw[MAXN] = {0};
  my_arcs(seed, in, &nin, out, &nout);
  for (int i = 0; i < nin; i++)
    s[i] = in[i].nb, sw[i] = in[i].w;
  for (int i = 0; i < nout; i++)
    d[i] = out[i].nb, dw[i] = out[i].w;
  /* weighted: MPI_WEIGHTS_EMPTY where a list is empty (sparse graphs) */
  const int *psw = !weighted ? unweighted() : nin ? sw : wempty();
  const int *pdw = !weighted ? unweighted() : nout ? dw : wempty();
  MPI_Comm dg;
  CHECK_EQ(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, nin, s, psw, nout, d, pdw,
                                          MPI_INFO_NULL, reorder, &dg), MPI_SUCCESS);
  check_dist(dg, weighted ? "adjacent_w" : "adjacent_unw", seed, reorder,
             weighted && (nin || nout) ? 1 : weighted ? -1 : 0, 1, in, nin, out, nout);
  MPI_Comm_free(&dg);
}

/* MPI_Dist_graph_create; \a how: 0 each its outgoing arcs, 1 each its
 * incoming arcs only, 2 rank 0 all arcs, 3 rank r the outgoing arcs of
 * r + 1 (unweighted), 4 no arc at all. */
static void general(int seed, int reorder, int how) {
  static const char *names[] = {"general_out", "general_in", "general_root",
                                "general_other", "general_none"};
  int nodes[MAXN * MAXN], deg[MAXN * MAXN], tgt[MAXN * MAXN], wt[MAXN * MAXN], nn = 0, na = 0;
  int weighted = how != 3 && how != 4;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      if (!layout[i][j])
        continue;
      int mine = how == 0 ? i == me : how == 1 ? j == me : how == 2 ? me == 0
               : how == 3 ? i == (me + 1) % n : 0;
      if (!mine)
        continue;
      if (how == 0 || how == 3) { /* one node, its arcs */
        if (nn == 0) {
          nodes[0] = i;
          deg[0] = 0;
          nn = 1;
        }
        deg[0]++;
      } else { /* one node per arc */
        nodes[nn] = i;
        deg[nn++] = 1;
      }
      tgt[na] = j;
      wt[na++] = layout[i][j];
    }
  const int *pw = weighted ? wt : how == 4 && seed % 2 ? wempty() : unweighted();
  MPI_Comm dg;
  CHECK_EQ(MPI_Dist_graph_create(MPI_COMM_WORLD, nn, nodes, deg, tgt, pw, MPI_INFO_NULL,
                                 reorder, &dg), MPI_SUCCESS);
  arc_t in[MAXN], out[MAXN];
  int nin, nout;
  my_arcs(seed, in, &nin, out, &nout);
  if (how == 4)
    nin = nout = 0;
  check_dist(dg, names[how], seed, reorder, how == 4 ? -1 : weighted, 0, in, nin, out, nout);
  MPI_Comm_free(&dg);
}

/* MPI_Graph_create over the symmetric closure of the layout: the process
 * with new rank v is vertex v. */
static void graph(int seed, int reorder) {
  int index[MAXN], edges[MAXN * MAXN], na = 0;
  for (int i = 0; i < n; i++) {
    for (int j = 0; j < n; j++)
      if (i != j && (layout[i][j] || layout[j][i]))
        edges[na++] = j;
    index[i] = na;
  }
  MPI_Comm gc;
  CHECK_EQ(MPI_Graph_create(MPI_COMM_WORLD, n, index, edges, reorder, &gc), MPI_SUCCESS);
  int v, k = -1, nb[MAXN], got[MAXN];
  MPI_Comm_rank(gc, &v);
  MPI_Graph_neighbors_count(gc, v, &k);
  int first = v ? index[v - 1] : 0;
  CHECK_EQ(k, index[v] - first);
  MPI_Graph_neighbors(gc, v, MAXN, nb);
  for (int i = 0; i < k; i++)
    CHECK_EQ(nb[i], edges[first + i]);
  MPI_Neighbor_allgather(&v, 1, MPI_INT, got, 1, MPI_INT, gc);
  char buf[512];
  size_t at = 0;
  buf[0] = 0;
  for (int i = 0; i < k; i++) {
    CHECK_EQ(got[i], nb[i]);
    at += (size_t)snprintf(buf + at, sizeof buf - at, " %d", got[i]);
  }
  sem_out_as(v, "graph", "g%d r%d%s", seed, reorder, buf);
  MPI_Comm_free(&gc);
}

static void cart(int seed, int reorder) {
  int dims[2] = {0, 0}, periods[2] = {seed % 2, 1};
  MPI_Dims_create(n, 2, dims);
  MPI_Comm cc;
  CHECK_EQ(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, reorder, &cc), MPI_SUCCESS);
  int v, c[2], back = -1, nb[4], got[4];
  MPI_Comm_rank(cc, &v);
  MPI_Cart_coords(cc, v, 2, c);
  MPI_Cart_rank(cc, c, &back);
  CHECK_EQ(back, v);
  CHECK_EQ(c[0] * dims[1] + c[1], v); /* row-major, MPI's numbering */
  MPI_Cart_shift(cc, 0, 1, &nb[0], &nb[1]);
  MPI_Cart_shift(cc, 1, 1, &nb[2], &nb[3]);
  for (int i = 0; i < 4; i++)
    got[i] = -7;
  MPI_Neighbor_allgather(&v, 1, MPI_INT, got, 1, MPI_INT, cc);
  for (int i = 0; i < 4; i++)
    CHECK_EQ(got[i], nb[i] == MPI_PROC_NULL ? -7 : nb[i]);
  sem_out_as(v, "cart", "g%d r%d (%d,%d) %d %d %d %d", seed, reorder, c[0], c[1], nb[0], nb[1],
             nb[2], nb[3]);
  MPI_Comm_free(&cc);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  CHECK_LE(n, MAXN);
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  int seeds = argc > 1 ? atoi(argv[1]) : 10, rounds = argc > 2 ? atoi(argv[2]) : 1;
  for (int round = 0; round < rounds; round++)
    for (int seed = 0; seed < seeds; seed++) {
      make_layout(seed);
      for (int reorder = 0; reorder <= 1; reorder++) {
        adjacent(seed, reorder, 1);
        adjacent(seed, reorder, 0);
        for (int how = 0; how < 5; how++)
          general(seed, reorder, how);
        graph(seed, reorder);
        cart(seed, reorder);
      }
    }
  MPI_Group_free(&world);
  TEST_PASS("sem_distgraph");
  MPI_Finalize();
  return 0;
}
