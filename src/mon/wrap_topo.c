/*
 * Topology reordering: MPI's own topology constructors get ballast's mapping.
 *
 * MPI_Cart_create, MPI_Graph_create, MPI_Dist_graph_create and
 * MPI_Dist_graph_create_adjacent with reorder = 1 allow MPI to renumber the
 * ranks so that neighbours sit close on the machine; Open MPI without its
 * treematch component and MPICH keep the old order. Here the declared graph
 * is built (Cartesian neighbours with periodicity, or the given edges and
 * weights), a mapper set by a layer above (src/topo: the hardware model and
 * the two-phase mapping) says which vertex each rank hosts, and the old
 * communicator is split in that order. The wrapper then asks MPI for the same
 * topology over the split communicator with reorder = 0, so MPI computes
 * every topology query itself on a communicator whose rank order follows the
 * mapping: rank v of the result hosts vertex v.
 *
 * Vertex v of a graph is rank v of the communicator created, for every
 * constructor: for the distributed graphs, the adjacency that old rank v
 * declared becomes the adjacency of new rank v (the process that ends up
 * with rank v calls MPI with v's lists). That is the reading under which a
 * renumbering can bring neighbours together at all: the program takes its
 * role from its new rank, as with MPI_Cart_coords.
 *
 * Reordering only when the topology covers the whole old communicator
 * (MPI_Cart_create with prod(dims) == size, MPI_Graph_create with nnodes ==
 * size; otherwise some ranks get MPI_COMM_NULL and MPI decides which); never
 * with reorder = 0, with BALLAST_REORDER=off, on intercommunicators or
 * without a mapper. The mapping is ballast's own work: its MPI traffic is
 * library traffic, and the constructor's MPI time is only MPI's own call.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/common_internal.h"
#include "common/env.h"
#include "common/util.h"
#include "mon/mon_hooks.h"
#include "mon/wrap_internal.h"

static mon__topo_mapper_t mapper;

void mon__topo_set_mapper(mon__topo_mapper_t fn) { mapper = fn; }

/* ---- the report: what was reordered ------------------------------------- */

#define TOPO_LOG_MAX 16 /* reorderings described one by one; more are counted */

typedef struct {
  char call[32];
  int n;
  int64_t arcs;
  mon__topo_result_t res;
} topo_entry_t;

/* Written under the lock (threads may build topologies on different
 * communicators at once); read by rank 0's report at MPI_Finalize. */
static pthread_mutex_t topo_lock = PTHREAD_MUTEX_INITIALIZER;
static topo_entry_t topo_log[TOPO_LOG_MAX];
static int topo_nlog, topo_total;

static void report_lines(FILE *f, void *user) {
  (void)user;
  fprintf(f, "# topology reorder: %d call%s reordered by ballast\n", topo_total,
          topo_total == 1 ? "" : "s");
  for (int i = 0; i < topo_nlog; i++) {
    const topo_entry_t *e = &topo_log[i];
    fprintf(f, "#   %s: %d ranks, %lld arcs, %d nodes, hop-bytes %.6g -> %.6g, "
            "%d ranks renumbered, %.3f s\n", e->call, e->n, (long long)e->arcs,
            e->res.nodes, e->res.hop_bytes_before, e->res.hop_bytes_after,
            e->res.moved, e->res.seconds);
  }
}

static char *report_json(void *user) {
  (void)user;
  size_t cap = 128 + (size_t)topo_nlog * 256;
  char *s = malloc(cap);
  if (!s)
    return NULL;
  size_t k = (size_t)snprintf(s, cap, "{\"reordered\": %d, \"calls\": [", topo_total);
  for (int i = 0; i < topo_nlog && k < cap; i++) {
    const topo_entry_t *e = &topo_log[i];
    k += (size_t)snprintf(s + k, cap - k,
                          "%s{\"call\": \"%s\", \"ranks\": %d, \"arcs\": %lld, "
                          "\"nodes\": %d, \"hop_bytes_before\": %.17g, "
                          "\"hop_bytes_after\": %.17g, \"renumbered\": %d, "
                          "\"seconds\": %.9g}", i ? ", " : "", e->call, e->n,
                          (long long)e->arcs, e->res.nodes, e->res.hop_bytes_before,
                          e->res.hop_bytes_after, e->res.moved, e->res.seconds);
  }
  if (k < cap)
    snprintf(s + k, cap - k, "]}");
  return s;
}

static void topo_note(const mon__topo_graph_t *g, const mon__topo_result_t *res) {
  pthread_mutex_lock(&topo_lock);
  if (topo_total++ == 0) {
    mon__section_t s = {"topology_reorder", report_lines, report_json, NULL, NULL};
    (void)mon__report_add_section(&s);
  }
  if (topo_nlog < TOPO_LOG_MAX) {
    topo_entry_t *e = &topo_log[topo_nlog++];
    snprintf(e->call, sizeof e->call, "%s", g->call);
    e->n = g->n;
    e->arcs = g->xadj[g->n];
    e->res = *res;
  }
  pthread_mutex_unlock(&topo_lock);
}

/* ---- when to reorder ------------------------------------------------------- */

/* BALLAST_REORDER: on (default: honour reorder = 1) or off. Read once (a
 * bad value is named by the parser and keeps the default). */
static int reorder_enabled(void) {
  static int state = -1;
  if (state < 0) {
    int v = 1;
    (void)ballast__env_bool("BALLAST_REORDER", &v);
    state = v != 0;
  }
  return state;
}

/* Size of \a comm when a reordering may apply to it, else 0. */
static int reorder_size(MPI_Comm comm, int reorder) {
  int inter = 0, n = 0;
  if (!reorder || !mapper || !reorder_enabled() || comm == MPI_COMM_NULL)
    return 0;
  if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter ||
      PMPI_Comm_size(comm, &n) != MPI_SUCCESS)
    return 0;
  return n;
}

/* Maps \a g over \a comm and splits \a comm in the mapping's order into *out.
 * Collective; 1 when *out holds the split communicator, 0 when the caller
 * must fall back to MPI's own constructor (the same on every rank). */
static int reorder_split(MPI_Comm comm, const mon__topo_graph_t *g, MPI_Comm *out) {
  int vertex = -1;
  mon__topo_result_t res = {0};
  int rc = mapper(comm, g, &vertex, &res);
  ballast__own_add(res.seconds, 0); /* the mapping is ballast's own work */
  if (rc) {
    BALLAST_WARN("mon: %s: reordering failed (%s); MPI's own order is kept",
                 g->call, ballast_strerror(rc));
    return 0;
  }
  if (MPI_Comm_split(comm, 0, vertex, out) != MPI_SUCCESS) {
    BALLAST_WARN("mon: %s: MPI_Comm_split failed; MPI's own order is kept", g->call);
    return 0;
  }
  topo_note(g, &res);
  return 1;
}

/* A CSR under construction (arcs appended vertex by vertex, in order). */
typedef struct {
  int n, na, cap;
  int *xadj, *adj, *w;
} csr_t;

static void csr_free(csr_t *c) {
  free(c->xadj);
  free(c->adj);
  free(c->w);
}

static int csr_init(csr_t *c, int n, int cap) {
  memset(c, 0, sizeof *c);
  c->n = n;
  c->cap = cap > 0 ? cap : 1;
  c->xadj = ballast__calloc((size_t)n + 1, sizeof *c->xadj);
  c->adj = ballast__malloc((size_t)c->cap * sizeof *c->adj);
  c->w = ballast__malloc((size_t)c->cap * sizeof *c->w);
  if (c->xadj && c->adj && c->w)
    return 0;
  csr_free(c);
  return BALLAST_ENOMEM;
}

/* The one ending of every constructor's preparation: agrees on whether each
 * rank built its CSR (\a rc), maps the graph and splits \a comm in the
 * mapping's order into *out; frees \a c. Collective; 1 when *out is split. */
static int csr_reorder(MPI_Comm comm, const char *call, int rc, csr_t *c, MPI_Comm *out) {
  int ok = 0;
  if (!ballast__agree(comm, rc, NULL, NULL)) {
    mon__topo_graph_t g = {call, c->n, c->xadj, c->adj, c->w};
    ok = reorder_split(comm, &g, out);
  }
  if (!rc)
    csr_free(c);
  return ok;
}

/* Nothing prepared: the wrapper calls MPI's own constructor. */
static void prep_reset(mon__topo_prep_t *tp) {
  memset(tp, 0, sizeof *tp);
  tp->split = MPI_COMM_NULL;
}

/* ---- the four constructors ----------------------------------------------- */

/* Cartesian neighbours of every vertex (row-major coordinates, the last
 * dimension fastest, as MPI_Cart_rank), one arc per direction and dimension. */
static int cart_graph(int n, int ndims, const int dims[], const int periods[], csr_t *c) {
  if (csr_init(c, n, 2 * ndims * n))
    return BALLAST_ENOMEM;
  for (int v = 0; v < n; v++) {
    int stride = 1;
    for (int d = ndims - 1; d >= 0; stride *= dims[d], d--) {
      int x = (v / stride) % dims[d];
      for (int step = -1; step <= 1; step += 2) {
        int y = x + step;
        if (y < 0 || y >= dims[d]) {
          if (!periods[d])
            continue;
          y = (y + dims[d]) % dims[d];
        }
        if (y == x)
          continue;
        c->adj[c->na] = v + (y - x) * stride;
        c->w[c->na++] = 1;
      }
    }
    c->xadj[v + 1] = c->na;
  }
  return 0;
}

int mon__w_topo_prep_cart(MPI_Comm comm, int ndims, const int dims[], const int periods[],
                          int reorder, MPI_Comm *newcomm, mon__topo_prep_t *tp) {
  (void)newcomm;
  prep_reset(tp);
  int size = reorder_size(comm, reorder);
  if (!size || ndims < 1 || !dims || !periods)
    return 0;
  int64_t n = 1;
  for (int d = 0; d < ndims; d++) {
    if (dims[d] < 1)
      return 0; /* MPI reports the error */
    n *= dims[d];
    if (n > size)
      return 0;
  }
  if (n != size)
    return 0;
  ballast__lib_begin();
  csr_t c;
  int rc = cart_graph(size, ndims, dims, periods, &c);
  int ok = csr_reorder(comm, "MPI_Cart_create", rc, &c, &tp->split);
  if (ok) {
    tp->kind = 1;
    tp->ndims = ndims;
    tp->dims = dims;
    tp->periods = periods;
  }
  ballast__lib_end();
  return ok;
}

int mon__w_topo_prep_graph(MPI_Comm comm, int nnodes, const int index[], const int edges[],
                           int reorder, MPI_Comm *newcomm, mon__topo_prep_t *tp) {
  (void)newcomm;
  prep_reset(tp);
  int size = reorder_size(comm, reorder);
  if (!size || nnodes != size || !index)
    return 0;
  for (int v = 0; v < nnodes; v++)
    if (index[v] < (v ? index[v - 1] : 0))
      return 0;
  int na = index[nnodes - 1];
  for (int a = 0; a < na; a++)
    if (!edges || edges[a] < 0 || edges[a] >= nnodes)
      return 0; /* MPI reports the error */
  ballast__lib_begin();
  csr_t c;
  int rc = csr_init(&c, size, na);
  if (!rc) {
    for (int v = 0; v < size; v++)
      c.xadj[v + 1] = index[v];
    memcpy(c.adj, edges, (size_t)na * sizeof *edges);
    for (int a = 0; a < na; a++)
      c.w[a] = 1;
  }
  int ok = csr_reorder(comm, "MPI_Graph_create", rc, &c, &tp->split);
  if (ok) {
    tp->kind = 2;
    tp->nnodes = nnodes;
    tp->index = index;
    tp->edges = edges;
  }
  ballast__lib_end();
  return ok;
}

/*
 * The distributed constructors: every rank contributes a block of ints (its
 * arcs, or its verbatim lists); all blocks are gathered, so that every rank
 * holds the whole graph (vertices = old ranks) to map, and can hand MPI the
 * lists of the vertex it will host.
 */
typedef struct {
  int n;         /* ranks = vertices */
  int *all;      /* the blocks, one after the other */
  int *off;      /* n + 1 offsets of the blocks in all */
} blocks_t;

static void blocks_free(blocks_t *b) {
  free(b->all);
  free(b->off);
}

/* Gathers every rank's block (\a len ints; len < 0: this rank failed to build
 * it, out of memory). Collective; the same code on every rank. */
static int blocks_gather(MPI_Comm comm, const int *mine, int len, blocks_t *b) {
  memset(b, 0, sizeof *b);
  MPI_Comm_size(comm, &b->n);
  int *cnt = ballast__malloc((size_t)b->n * sizeof *cnt);
  b->off = ballast__malloc(((size_t)b->n + 1) * sizeof *b->off);
  int rc = (!cnt || !b->off || len < 0) ? BALLAST_ENOMEM : 0;
  rc = ballast__agree(comm, rc, NULL, NULL);
  if (!rc && MPI_Allgather(&len, 1, MPI_INT, cnt, 1, MPI_INT, comm) != MPI_SUCCESS)
    rc = BALLAST_EMPI;
  int64_t total = 0;
  for (int r = 0; !rc && r < b->n; r++) {
    b->off[r] = (int)total;
    total += cnt[r];
    if (total > INT32_MAX)
      rc = BALLAST_EOVERFLOW; /* identical everywhere */
  }
  if (!rc) {
    b->off[b->n] = (int)total;
    if (!(b->all = ballast__malloc((size_t)(total ? total : 1) * sizeof *b->all)))
      rc = BALLAST_ENOMEM;
    rc = ballast__agree(comm, rc, NULL, NULL);
  }
  if (!rc && MPI_Allgatherv(mine, len, MPI_INT, b->all, cnt, b->off, MPI_INT,
                            comm) != MPI_SUCCESS)
    rc = BALLAST_EMPI;
  free(cnt);
  if (rc)
    blocks_free(b);
  return rc;
}

/* Arcs (source, target, weight) collected from the blocks by \a each. */
typedef struct {
  int64_t na;
  int *arc; /* 3 ints per arc */
} arcs_t;

/* The symmetric mapping graph of \a a (each arc added from its source; the
 * mapper adds it both ways), mapped; 1 with *out split in the mapping's order. */
static int arcs_reorder(MPI_Comm comm, const char *call, int n, const arcs_t *a,
                        MPI_Comm *out) {
  csr_t c;
  int rc = a->na > INT32_MAX ? BALLAST_EOVERFLOW : csr_init(&c, n, (int)a->na);
  int *fill = rc ? NULL : ballast__calloc((size_t)n, sizeof *fill);
  if (!rc && !fill) {
    csr_free(&c);
    rc = BALLAST_ENOMEM;
  }
  if (!rc) {
    for (int64_t k = 0; k < a->na; k++)
      c.xadj[a->arc[3 * k] + 1]++;
    for (int v = 0; v < n; v++)
      c.xadj[v + 1] += c.xadj[v];
    for (int64_t k = 0; k < a->na; k++) {
      int s = a->arc[3 * k], at = c.xadj[s] + fill[s]++;
      c.adj[at] = a->arc[3 * k + 1];
      c.w[at] = a->arc[3 * k + 2] > 0 ? a->arc[3 * k + 2] : 1;
    }
    c.na = (int)a->na;
  }
  free(fill);
  return csr_reorder(comm, call, rc, &c, out);
}

/* Weights as passed: given, MPI_UNWEIGHTED or MPI_WEIGHTS_EMPTY. */
enum { W_GIVEN = 0, W_NONE = 1, W_EMPTY = 2 };

static int wkind(const int *w) {
  return w == MPI_UNWEIGHTED ? W_NONE : w == MPI_WEIGHTS_EMPTY ? W_EMPTY : W_GIVEN;
}

static const int *wptr(int kind, const int *given) {
  return kind == W_NONE ? MPI_UNWEIGHTED : kind == W_EMPTY ? MPI_WEIGHTS_EMPTY : given;
}

/*
 * Adjacent: rank r's block is its call verbatim: {indeg, outdeg, in-kind,
 * out-kind, sources, sourceweights, destinations, destweights}. The mapping
 * graph is made of the out-arcs (a consistent call declares every arc at both
 * ends). The rank that gets number v passes v's lists, in v's order (the order
 * of the neighbourhood collectives' buffers).
 */
static int *adjacent_block(int indeg, const int *src, const int *srcw, int outdeg,
                           const int *dst, const int *dstw, int *len) {
  *len = 4 + 2 * indeg + 2 * outdeg;
  int *b = ballast__malloc((size_t)*len * sizeof *b);
  if (!b)
    return NULL;
  b[0] = indeg;
  b[1] = outdeg;
  b[2] = wkind(srcw);
  b[3] = wkind(dstw);
  for (int i = 0; i < indeg; i++) {
    b[4 + i] = src[i];
    b[4 + indeg + i] = b[2] == W_GIVEN ? srcw[i] : 1;
  }
  for (int i = 0; i < outdeg; i++) {
    b[4 + 2 * indeg + i] = dst[i];
    b[4 + 2 * indeg + outdeg + i] = b[3] == W_GIVEN ? dstw[i] : 1;
  }
  return b;
}

static int adjacent_arcs(const blocks_t *b, arcs_t *a) {
  a->na = 0;
  for (int r = 0; r < b->n; r++)
    a->na += b->all[b->off[r] + 1];
  a->arc = ballast__malloc((size_t)(3 * a->na + 1) * sizeof *a->arc);
  if (!a->arc)
    return BALLAST_ENOMEM;
  int64_t k = 0;
  for (int r = 0; r < b->n; r++) {
    const int *x = b->all + b->off[r];
    const int *dst = x + 4 + 2 * x[0], *dstw = dst + x[1];
    for (int i = 0; i < x[1]; i++, k++) {
      a->arc[3 * k] = r;
      a->arc[3 * k + 1] = dst[i];
      a->arc[3 * k + 2] = dstw[i];
    }
  }
  return 0;
}

int mon__w_topo_prep_dist_adjacent(MPI_Comm comm, int indegree, const int sources[],
                                   const int sourceweights[], int outdegree,
                                   const int destinations[], const int destweights[],
                                   MPI_Info info, int reorder, MPI_Comm *newcomm,
                                   mon__topo_prep_t *tp) {
  (void)newcomm;
  prep_reset(tp);
  int size = reorder_size(comm, reorder);
  if (!size)
    return 0;
  /* Each rank can check only its own lists: all agree before going on, and
   * on a bad list MPI's own constructor reports the error everywhere. */
  int bad = indegree < 0 || outdegree < 0 || (indegree && !sources) ||
            (outdegree && !destinations);
  for (int i = 0; !bad && i < outdegree; i++)
    bad = destinations[i] < 0 || destinations[i] >= size;
  for (int i = 0; !bad && i < indegree; i++)
    bad = sources[i] < 0 || sources[i] >= size;
  ballast__lib_begin();
  if (ballast__agree(comm, bad ? BALLAST_EINVAL : 0, NULL, NULL)) {
    ballast__lib_end();
    return 0;
  }
  int len = 0, ok = 0;
  int *mine = adjacent_block(indegree, sources, sourceweights, outdegree,
                             destinations, destweights, &len);
  blocks_t b;
  arcs_t a = {0, NULL};
  MPI_Comm split = MPI_COMM_NULL;
  if (!blocks_gather(comm, mine, mine ? len : -1, &b)) {
    int rc = ballast__agree(comm, adjacent_arcs(&b, &a), NULL, NULL);
    if (!rc && arcs_reorder(comm, "MPI_Dist_graph_create_adjacent", b.n, &a, &split)) {
      int v = 0;
      PMPI_Comm_rank(split, &v);
      /* Vertex v's call, verbatim: v's block, kept until the call is made. */
      const int *x = b.all + b.off[v];
      tp->kind = 3;
      tp->split = split;
      tp->info = info;
      tp->indeg = x[0];
      tp->outdeg = x[1];
      tp->lists = b.all;
      b.all = NULL;
      const int *src = x + 4, *srcw = src + x[0], *dst = srcw + x[0], *dstw = dst + x[1];
      tp->src = src;
      tp->dst = dst;
      tp->srcw = wptr(x[2], srcw);
      tp->dstw = wptr(x[3], dstw);
      ok = 1;
    }
    blocks_free(&b);
  }
  free(a.arc);
  free(mine);
  ballast__lib_end();
  return ok;
}

/*
 * General: any rank may declare any arc. The blocks are arc triplets; the
 * rank that gets number v passes, with the adjacent constructor, the arcs
 * that end at v and those that start at v, in the order they were declared
 * (MPI leaves the order of a general distributed graph's neighbours to the
 * implementation).
 */
static int dist_lists(MPI_Comm split, const arcs_t *a, int weighted, MPI_Info info,
                      mon__topo_prep_t *tp) {
  int v = 0, indeg = 0, outdeg = 0;
  PMPI_Comm_rank(split, &v);
  for (int64_t k = 0; k < a->na; k++) {
    indeg += a->arc[3 * k + 1] == v;
    outdeg += a->arc[3 * k] == v;
  }
  int *l = ballast__malloc((size_t)(2 * indeg + 2 * outdeg + 1) * sizeof *l);
  if (!l)
    return BALLAST_ENOMEM;
  int *src = l, *srcw = src + indeg, *dst = srcw + indeg, *dstw = dst + outdeg;
  int i = 0, o = 0;
  for (int64_t k = 0; k < a->na; k++) {
    if (a->arc[3 * k + 1] == v) {
      src[i] = a->arc[3 * k];
      srcw[i++] = a->arc[3 * k + 2];
    }
    if (a->arc[3 * k] == v) {
      dst[o] = a->arc[3 * k + 1];
      dstw[o++] = a->arc[3 * k + 2];
    }
  }
  tp->kind = 3;
  tp->split = split;
  tp->info = info;
  tp->indeg = indeg;
  tp->outdeg = outdeg;
  tp->lists = l;
  tp->src = src;
  tp->dst = dst;
  tp->srcw = weighted ? srcw : MPI_UNWEIGHTED;
  tp->dstw = weighted ? dstw : MPI_UNWEIGHTED;
  return 0;
}

int mon__w_topo_prep_dist(MPI_Comm comm, int n, const int nodes[], const int degrees[],
                          const int targets[], const int weights[], MPI_Info info,
                          int reorder, MPI_Comm *newcomm, mon__topo_prep_t *tp) {
  (void)newcomm;
  prep_reset(tp);
  int size = reorder_size(comm, reorder);
  if (!size)
    return 0;
  int bad = n < 0 || (n && (!nodes || !degrees));
  int64_t na = 0;
  for (int i = 0; !bad && i < n; i++) {
    bad = nodes[i] < 0 || nodes[i] >= size || degrees[i] < 0;
    na += bad ? 0 : degrees[i];
  }
  bad = bad || na > INT32_MAX / 4 || (na && !targets);
  for (int64_t k = 0; !bad && k < na; k++)
    bad = targets[k] < 0 || targets[k] >= size;
  int weighted = wkind(weights) == W_GIVEN, anyw = 0;
  ballast__lib_begin();
  if (ballast__agree(comm, bad ? BALLAST_EINVAL : 0, NULL, NULL)) {
    ballast__lib_end();
    return 0;
  }
  int *mine = ballast__malloc((size_t)(3 * na + 1) * sizeof *mine);
  for (int i = 0, k = 0; mine && i < n; i++)
    for (int j = 0; j < degrees[i]; j++, k++) {
      mine[3 * k] = nodes[i];
      mine[3 * k + 1] = targets[k];
      mine[3 * k + 2] = weighted ? weights[k] : 1;
    }
  blocks_t b;
  int ok = 0;
  MPI_Comm split = MPI_COMM_NULL;
  /* Weighted when any rank passed weights (MPI requires all or none). */
  if (MPI_Allreduce(&weighted, &anyw, 1, MPI_INT, MPI_MAX, comm) == MPI_SUCCESS &&
      !blocks_gather(comm, mine, mine ? (int)(3 * na) : -1, &b)) {
    arcs_t a = {b.off[b.n] / 3, b.all};
    if (arcs_reorder(comm, "MPI_Dist_graph_create", b.n, &a, &split)) {
      if (!ballast__agree(comm, dist_lists(split, &a, anyw, info, tp), NULL, NULL)) {
        ok = 1;
      } else { /* out of memory somewhere: MPI's own constructor, everywhere */
        if (tp->split == MPI_COMM_NULL)
          MPI_Comm_free(&split);
        mon__w_topo_done(tp);
      }
    }
    blocks_free(&b);
  }
  free(mine);
  ballast__lib_end();
  return ok;
}

int mon__w_topo_create(const mon__topo_prep_t *tp, MPI_Comm *newcomm) {
  switch (tp->kind) {
  case 1:
    return PMPI_Cart_create(tp->split, tp->ndims, tp->dims, tp->periods, 0, newcomm);
  case 2:
    return PMPI_Graph_create(tp->split, tp->nnodes, tp->index, tp->edges, 0, newcomm);
  case 3:
    return PMPI_Dist_graph_create_adjacent(tp->split, tp->indeg, tp->src, tp->srcw,
                                           tp->outdeg, tp->dst, tp->dstw, tp->info, 0,
                                           newcomm);
  default:
    return MPI_ERR_NO_MEM;
  }
}

void mon__w_topo_done(mon__topo_prep_t *tp) {
  if (tp->split != MPI_COMM_NULL)
    PMPI_Comm_free(&tp->split);
  free(tp->lists);
  tp->lists = NULL;
  tp->kind = 0;
}
