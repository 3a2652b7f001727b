/*
 * Topology reordering: MPI's own topology constructors get ballast's mapping.
 *
 * MPI_Cart_create and MPI_Graph_create with reorder = 1 allow MPI to renumber
 * the ranks so that neighbours sit close on the machine; Open MPI without
 * its treematch component and MPICH keep the old order. Both describe one
 * global graph whose vertex v is the process with new rank v: the process
 * takes its role (its coordinates, its neighbours) from its new rank. Here
 * that graph is built (Cartesian neighbours with periodicity, or the given
 * edges), a mapper set by a layer above (src/topo: the hardware model and
 * the two-phase mapping) says which vertex each rank hosts, and the old
 * communicator is split in that order. The wrapper then asks MPI for the same
 * topology over the split communicator with reorder = 0, so MPI computes
 * every topology query itself on a communicator whose rank order follows the
 * mapping: rank v of the result hosts vertex v.
 *
 * The distributed graphs (MPI_Dist_graph_create, _adjacent) are left to MPI
 * (src/mon/mpi31.spec has no topo rule for them): there each process
 * declares its own neighbourhood, and a reordering may only renumber the
 * processes, never hand one process's neighbourhood to another, so no
 * renumbering can bring any process nearer to its neighbours; and MPI test
 * suites (MPICH's topo/distgraph1, dgraph_unwgt) expect MPI's own numbering.
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
  /* The mapper agrees on failure, so every rank would warn alike: held, and
   * printed once per job by the release (collective over comm). */
  ballast__log_hold();
  int rc = mapper(comm, g, &vertex, &res);
  ballast__own_add(res.seconds, 0); /* the mapping is ballast's own work */
  if (rc)
    BALLAST_WARN("mon: %s: reordering failed (%s); MPI's own order is kept",
                 g->call, ballast_strerror(rc));
  ballast__log_release(comm);
  if (rc)
    return 0;
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
 * rank built its CSR (\a rc), maps the graph and splits (a duplicate of)
 * \a comm in the mapping's order into *out; frees \a c. Collective; 1 when
 * *out is split. */
static int csr_reorder(MPI_Comm comm, const char *call, int rc, csr_t *c, MPI_Comm *out) {
  /* The mapping's own communicators (the hardware discovery's shared-memory
   * split, the split in the mapping's order) are made from a duplicate, so
   * the program's communicator sees one communicator made, as MPI's own
   * constructor would make it. Open MPI names the messages of nonblocking
   * collectives (its communicator-id agreement among them) by a counter per
   * communicator, and its distributed-graph constructor clashes with that
   * counter at one value: extra communicators made on the program's
   * communicator move the clash onto other calls (README, topologies). */
  MPI_Comm lib = MPI_COMM_NULL;
  int drc = MPI_Comm_dup(comm, &lib) == MPI_SUCCESS ? 0 : BALLAST_EMPI;
  int ok = 0;
  if (!ballast__agree(comm, rc ? rc : drc, NULL, NULL)) {
    mon__topo_graph_t g = {call, c->n, c->xadj, c->adj, c->w};
    ok = reorder_split(lib, &g, out);
  }
  if (lib != MPI_COMM_NULL)
    MPI_Comm_free(&lib);
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

int mon__w_topo_create(const mon__topo_prep_t *tp, MPI_Comm *newcomm) {
  switch (tp->kind) {
  case 1:
    return PMPI_Cart_create(tp->split, tp->ndims, tp->dims, tp->periods, 0, newcomm);
  case 2:
    return PMPI_Graph_create(tp->split, tp->nnodes, tp->index, tp->edges, 0, newcomm);
  default:
    return MPI_ERR_NO_MEM;
  }
}

void mon__w_topo_done(mon__topo_prep_t *tp) {
  if (tp->split != MPI_COMM_NULL)
    PMPI_Comm_free(&tp->split);
  tp->kind = 0;
}
