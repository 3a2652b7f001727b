/* ballast's mapping strategies: the two-phase SCOTCH mapping (tasks ->
 * nodes on the node architecture, then each node's tasks -> its slots on a
 * tree-leaf built from hwloc) and the single-pass tree-leaf, with the entry
 * points (the baselines are in map_basic.c). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/common_internal.h"
#include "map/map_remap.h"
#include "map/map_internal.h"

/* What one mapping call works with. */
typedef struct {
  const rta_graph_t *g;
  const rta_hw_t *hw;
  const int64_t *prev;
  rta_map_options_t o;
  rta_map_quality_t *q;
  SCOTCH_Num *velo; /* normalised vertex weights, whole graph */
  MPI_Comm comm;    /* MPI_COMM_NULL, or phase 2 shared among its ranks */
} mctx_t;

/* ---- shared SCOTCH helpers --------------------------------------------------- */

/* Migration costs: state / steps in the unit of the (scaled) edge weights,
 * capped so their sum fits. */
static SCOTCH_Num *migration_costs(const mctx_t *c, const int64_t *verts,
                                   int64_t n, double escale) {
  SCOTCH_Num *m = ballast__malloc((size_t)(n ? n : 1) * sizeof *m);
  if (!m)
    return NULL;
  double steps = c->o.steps_between_remaps, sum = 0;
  for (int64_t i = 0; i < n; i++)
    sum += c->g->state[verts ? verts[i] : i] / steps * escale;
  double s = sum > MAP__ECAP ? escale * MAP__ECAP / sum : escale;
  for (int64_t i = 0; i < n; i++)
    m[i] = map__scaled(c->g->state[verts ? verts[i] : i] / steps, s);
  return m;
}

/* SCOTCH 7.0.3's graphRemap crashes on a tree-leaf when an old part is -1
 * (a vertex with no previous place there). Such vertices move anyway: give
 * them the old part of a neighbour that has one (else 0) and the smallest
 * migration cost, so the remap treats them as free to go anywhere. */
static void fill_paro(SCOTCH_Num n, const SCOTCH_Num *vert,
                      const SCOTCH_Num *edge, SCOTCH_Num *paro,
                      SCOTCH_Num *vmlo) {
  for (int pass = 0; pass < 2; pass++)
    for (SCOTCH_Num v = 0; v < n; v++) {
      if (paro[v] >= 0)
        continue;
      vmlo[v] = 1;
      for (SCOTCH_Num j = vert[v]; j < vert[v + 1]; j++)
        if (paro[edge[j]] >= 0) {
          paro[v] = paro[edge[j]];
          break;
        }
    }
  for (SCOTCH_Num v = 0; v < n; v++)
    if (paro[v] < 0)
      paro[v] = 0;
}

/* Does every node hold exactly one slot per core (the simulated case and a
 * fully bound job)? 1, 0, or BALLAST_ENOMEM: an answer guessed on one rank
 * would make its mapping differ from the others'. */
static int node_exact(const rta_hw_t *hw, int node) {
  const map__nodetopo_t *t = &hw->topo[hw->node_topo[node]];
  int b = hw->node_xslot[node], e = hw->node_xslot[node + 1];
  if (e - b != t->ncores)
    return 0;
  char *seen = ballast__calloc((size_t)t->ncores, 1);
  if (!seen)
    return BALLAST_ENOMEM;
  int ok = 1;
  for (int i = b; i < e && ok; i++) {
    int core = hw->slot_core[hw->node_slot[i]];
    if (seen[core])
      ok = 0;
    seen[core] = 1;
  }
  free(seen);
  return ok;
}

/* Largest number of slots sharing one core of \a node. */
static int node_mult(const rta_hw_t *hw, int node, int *cnt) {
  const map__nodetopo_t *t = &hw->topo[hw->node_topo[node]];
  memset(cnt, 0, (size_t)t->ncores * sizeof *cnt);
  int m = 1;
  for (int i = hw->node_xslot[node]; i < hw->node_xslot[node + 1]; i++) {
    int k = ++cnt[hw->slot_core[hw->node_slot[i]]];
    if (k > m)
      m = k;
  }
  return m;
}

/* ---- phase 1: tasks -> nodes --------------------------------------------------- */

/* Large first mappings coarsen the graph first (see graph_coarsen.c) when it
 * has more than COARSEN_PER_NODE vertices per node and COARSEN_FLOOR in all.
 * One level only: measured on a 100^3 27-point stencil onto 1,024 x 24
 * cores, one level halves the CPU time for +0.3% hop-bytes; a second level
 * saves another 20% but costs +18% hop-bytes (no refinement on the finest
 * levels). */
#define COARSEN_PER_NODE 256
#define COARSEN_FLOOR 300000
#define COARSEN_LEVELS 1

/* What phase 1 works with, step to step: the graph it maps (the task graph
 * or its last coarsened level), the SCOTCH arrays built from it, the target
 * (the nodes) and, for a remap, every vertex's old node. */
typedef struct {
  mctx_t *c;
  SCOTCH_Num *node_of;            /* out: the node of every task vertex */
  map__csr_t fine;                /* the task graph */
  map__csr_t lev[COARSEN_LEVELS]; /* coarsened levels, finest first */
  int32_t *cmap[COARSEN_LEVELS];  /* per level: finer vertex -> its vertex */
  int nlev;
  const map__csr_t *cur;          /* the graph mapped: fine or lev[nlev-1] */
  SCOTCH_Num n, narc;             /* of cur */
  SCOTCH_Num *vert, *edge, *edlo; /* cur for SCOTCH (edge may alias cur->adj) */
  SCOTCH_Num *part;               /* cur's nodes (node_of when not coarsened) */
  SCOTCH_Num *wt;                 /* slots of each node */
  SCOTCH_Num *paro, *vmlo;        /* remap: old nodes, migration costs */
  SCOTCH_Arch cw;                 /* weighted complete graph of the nodes */
  int has_cw;
  const SCOTCH_Arch *arch;        /* hw's architecture, or &cw */
  double maxdist;                 /* largest node distance in hop units */
  map__sgraph_t sg;
} p1_t;

/* Coarsens big first mappings (a remap keeps every vertex's old place). */
static int p1_coarsen(p1_t *p) {
  const rta_graph_t *g = p->c->g;
  const SCOTCH_Num *velo = p->c->velo;
  int64_t target = (int64_t)p->c->hw->nnodes * COARSEN_PER_NODE;
  if (target < COARSEN_FLOOR)
    target = COARSEN_FLOOR;
  if (p->c->prev || g->nvert <= target)
    return 0;
  double tot = 0;
  SCOTCH_Num mx = 1;
  for (int64_t v = 0; v < g->nvert; v++) {
    tot += velo[v];
    if (velo[v] > mx)
      mx = velo[v];
  }
  SCOTCH_Num maxvw = (SCOTCH_Num)(tot / (16.0 * p->c->hw->nnodes));
  if (maxvw < mx)
    maxvw = mx;
  while (p->cur->n > target && p->nlev < COARSEN_LEVELS) {
    int l = p->nlev;
    p->cmap[l] = ballast__malloc((size_t)p->cur->n * sizeof *p->cmap[l]);
    if (!p->cmap[l])
      return BALLAST_ENOMEM;
    int rc = map__coarsen(p->cur, maxvw, &p->lev[l], p->cmap[l]);
    if (rc)
      return rc;
    int64_t before = p->cur->n;
    p->cur = &p->lev[p->nlev++];
    if (p->cur->n > before * 0.85)
      break; /* matching stalls: stop here */
  }
  return 0;
}

/* SCOTCH's integer arrays of the graph mapped. */
static int p1_arrays(p1_t *p) {
  const map__csr_t *cur = p->cur;
  SCOTCH_Num n = p->n = (SCOTCH_Num)cur->n;
  SCOTCH_Num narc = p->narc = (SCOTCH_Num)cur->xadj[cur->n];
  p->vert = ballast__malloc(((size_t)n + 1) * sizeof *p->vert);
  p->edlo = ballast__malloc((size_t)(narc ? narc : 1) * sizeof *p->edlo);
  p->part = p->nlev ? ballast__malloc((size_t)n * sizeof *p->part) : p->node_of;
  if (!p->vert || !p->edlo || !p->part)
    return BALLAST_ENOMEM;
  for (SCOTCH_Num v = 0; v <= n; v++)
    p->vert[v] = (SCOTCH_Num)cur->xadj[v];
  if (sizeof(SCOTCH_Num) == sizeof(int32_t)) {
    p->edge = (SCOTCH_Num *)cur->adj;
    return 0;
  }
  p->edge = ballast__malloc((size_t)(narc ? narc : 1) * sizeof *p->edge);
  if (!p->edge)
    return BALLAST_ENOMEM;
  for (SCOTCH_Num i = 0; i < narc; i++)
    p->edge[i] = cur->adj[i];
  return 0;
}

/* The target: the architecture file when every node has as many slots,
 * else a complete graph of the nodes weighted by their slots. */
static int p1_target(p1_t *p) {
  const rta_hw_t *hw = p->c->hw;
  int equal = 1;
  for (int k = 0; k < hw->nnodes; k++) {
    p->wt[k] = hw->node_xslot[k + 1] - hw->node_xslot[k];
    if (p->wt[k] != p->wt[0])
      equal = 0;
  }
  p->maxdist = 1;
  if (hw->net == MAP__NET_ARCH && equal) {
    p->arch = hw->arch;
    for (int k = 1; k < hw->nnodes; k++) {
      double d = map__hw_node_dist(hw, 0, k) / hw->internode_cost;
      if (d > p->maxdist)
        p->maxdist = d;
    }
    return 0;
  }
  if (hw->net == MAP__NET_ARCH)
    BALLAST_WARN("nodes of unequal size: phase 1 maps onto a weighted "
                 "complete graph, not the architecture file");
  SCOTCH_archInit(&p->cw);
  p->has_cw = 1;
  if (SCOTCH_archCmpltw(&p->cw, hw->nnodes, p->wt) != 0)
    return BALLAST_ESCOTCH;
  p->arch = &p->cw;
  return 0;
}

/* The SCOTCH graph (edge weights scaled to the target's distances) and, for
 * a remap, every vertex's old node and migration cost. */
static int p1_graph(p1_t *p) {
  const mctx_t *c = p->c;
  const rta_hw_t *hw = c->hw;
  double escale;
  int exact, rc;
  map__normalize(p->cur->w, p->narc, MAP__ECAP / p->maxdist, &escale, &exact);
  for (SCOTCH_Num i = 0; i < p->narc; i++)
    p->edlo[i] = map__scaled(p->cur->w[i], escale);
  if ((rc = map__sgraph_build(&p->sg, NULL, c->o.seed, p->n, p->vert,
                              p->cur->vw, p->narc, p->edge, p->edlo)))
    return rc;
  if (!c->prev)
    return 0;
  p->paro = ballast__malloc((size_t)p->n * sizeof *p->paro);
  p->vmlo = migration_costs(c, NULL, p->n, escale);
  if (!p->paro || !p->vmlo)
    return BALLAST_ENOMEM;
  for (SCOTCH_Num v = 0; v < p->n; v++)
    p->paro[v] = c->prev[v] >= 0 && c->prev[v] < hw->nslots
                     ? hw->slot_node[c->prev[v]] : -1;
  fill_paro(p->n, p->vert, p->edge, p->paro, p->vmlo);
  return 0;
}

/* Projects the coarsest parts back through the levels into node_of. */
static int p1_project(p1_t *p) {
  SCOTCH_Num *up = p->part;
  int rc = 0;
  for (int l = p->nlev - 1; l >= 0; l--) {
    int64_t nf = l ? p->lev[l - 1].n : p->c->g->nvert;
    SCOTCH_Num *down = l ? ballast__malloc((size_t)nf * sizeof *down) : p->node_of;
    if (!down) {
      rc = BALLAST_ENOMEM;
      break;
    }
    for (int64_t v = 0; v < nf; v++)
      down[v] = up[p->cmap[l][v]];
    if (up != p->part)
      free(up);
    up = down;
  }
  if (rc && up != p->part && up != p->node_of)
    free(up);
  return rc;
}

static void p1_free(p1_t *p) {
  map__sgraph_exit(&p->sg);
  if (p->has_cw)
    SCOTCH_archExit(&p->cw);
  if (p->edge && p->edge != (SCOTCH_Num *)p->cur->adj)
    free(p->edge);
  for (int l = 0; l < COARSEN_LEVELS; l++) {
    map__csr_free(&p->lev[l]);
    free(p->cmap[l]);
  }
  if (p->part != p->node_of)
    free(p->part);
  free(p->vert);
  free(p->edlo);
  free(p->wt);
  free(p->paro);
  free(p->vmlo);
}

static int phase1(mctx_t *c, SCOTCH_Num *node_of) {
  const rta_graph_t *g = c->g;
  if (g->xadj[g->nvert] > INT32_MAX - 1)
    return BALLAST_EOVERFLOW;
  p1_t p;
  memset(&p, 0, sizeof p);
  p.c = c;
  p.node_of = node_of;
  p.fine = (map__csr_t){g->nvert, g->xadj, g->adj, g->adjw, c->velo};
  p.cur = &p.fine;
  p.wt = ballast__malloc((size_t)c->hw->nnodes * sizeof *p.wt);
  int rc = p.wt ? 0 : BALLAST_ENOMEM;
  if (!rc && !(rc = p1_coarsen(&p)) && !(rc = p1_arrays(&p)) &&
      !(rc = p1_target(&p)) && !(rc = p1_graph(&p)))
    rc = map__sgraph_map(&p.sg, p.arch, c->hw->nnodes, c->o.scotch_flags,
                         c->o.scotch_strategy, c->o.balrat / 2, p.paro,
                         p.vmlo, p.part);
  if (!rc && p.nlev)
    rc = p1_project(&p);
  p1_free(&p);
  return rc;
}

int map__subgraph(const rta_graph_t *g, const int64_t *verts, int64_t k,
                  int32_t *g2l, SCOTCH_Num **vertp, SCOTCH_Num **edgep,
                  double **wp, int64_t *narcp) {
  for (int64_t i = 0; i < k; i++)
    g2l[verts[i]] = (int32_t)i;
  int64_t narc = 0;
  for (int64_t i = 0; i < k; i++)
    for (int64_t j = g->xadj[verts[i]]; j < g->xadj[verts[i] + 1]; j++)
      narc += g2l[g->adj[j]] >= 0;
  SCOTCH_Num *vert = ballast__malloc(((size_t)k + 1) * sizeof *vert);
  SCOTCH_Num *edge = ballast__malloc((size_t)(narc ? narc : 1) * sizeof *edge);
  double *w = ballast__malloc((size_t)(narc ? narc : 1) * sizeof *w);
  int rc = 0;
  if (!vert || !edge || !w) {
    free(vert);
    free(edge);
    free(w);
    vert = edge = NULL;
    w = NULL;
    rc = BALLAST_ENOMEM;
  } else {
    int64_t a = 0;
    for (int64_t i = 0; i < k; i++) {
      int64_t v = verts[i];
      vert[i] = (SCOTCH_Num)a;
      for (int64_t j = g->xadj[v]; j < g->xadj[v + 1]; j++) {
        int32_t l = g2l[g->adj[j]];
        if (l >= 0) {
          edge[a] = l;
          w[a++] = g->adjw[j];
        }
      }
    }
    vert[k] = (SCOTCH_Num)a;
  }
  for (int64_t i = 0; i < k; i++)
    g2l[verts[i]] = -1;
  *vertp = vert;
  *edgep = edge;
  *wp = w;
  *narcp = narc;
  return rc;
}

/* ---- phase 2: one node's tasks -> its slots --------------------------------------- */

typedef struct {
  int32_t *g2l;       /* nvert, -1 outside the current node */
  int *cnt;           /* ncores scratch */
  int *term_of_slot;  /* nslots */
  SCOTCH_Context *ctx; /* shared by the nodes, reseeded for each */
} p2scratch_t;

/* What phase 2 of one node works with: the target (the node's tree-leaf)
 * and its terminals' slots, the node's subgraph for SCOTCH and, for a
 * remap, its vertices' old terminals. */
typedef struct {
  map__tgt_t tgt;
  map__sgraph_t sg;
  int *slot_of_term;     /* terminal -> slot */
  SCOTCH_Num *sel;       /* the leaves of the node's slots, when restricted */
  SCOTCH_Num *vert, *edge, *edlo, *velo, *part, *paro, *vmlo;
  double *w;             /* the subgraph's edge bytes */
  int64_t narc;
} p2node_t;

static void p2node_free(p2node_t *p) {
  map__sgraph_exit(&p->sg);
  map__tgt_exit(&p->tgt);
  free(p->sel);
  free(p->vert);
  free(p->velo);
  free(p->part);
  free(p->edge);
  free(p->edlo);
  free(p->w);
  free(p->paro);
  free(p->vmlo);
  free(p->slot_of_term);
}

/* Target: the node's tree-leaf, restricted to the leaves of its slots
 * unless they are exactly one per core. */
static int p2_target(const mctx_t *c, int node, p2scratch_t *sc, p2node_t *p) {
  const rta_hw_t *hw = c->hw;
  const map__nodetopo_t *t = &hw->topo[hw->node_topo[node]];
  int b = hw->node_xslot[node], m = hw->node_xslot[node + 1] - b;
  int exact = node_exact(hw, node);
  if (exact < 0)
    return exact;
  p->slot_of_term = ballast__malloc((size_t)(exact ? t->ncores : m) * sizeof *p->slot_of_term);
  if (!p->slot_of_term)
    return BALLAST_ENOMEM;
  if (exact) {
    for (int i = 0; i < m; i++) {
      int s = hw->node_slot[b + i];
      p->slot_of_term[hw->slot_core[s]] = s;
      sc->term_of_slot[s] = hw->slot_core[s];
    }
    return map__tgt_tleaf(&p->tgt, t->nlevels, t->arity, t->cost, 1, 0, NULL);
  }
  int mult = node_mult(hw, node, sc->cnt);
  p->sel = ballast__malloc((size_t)m * sizeof *p->sel);
  if (!p->sel)
    return BALLAST_ENOMEM;
  memset(sc->cnt, 0, (size_t)t->ncores * sizeof *sc->cnt);
  for (int i = 0; i < m; i++) {
    int s = hw->node_slot[b + i], core = hw->slot_core[s];
    p->sel[i] = (SCOTCH_Num)core * mult + sc->cnt[core]++;
    p->slot_of_term[i] = s;
    sc->term_of_slot[s] = i;
  }
  return map__tgt_tleaf(&p->tgt, t->nlevels, t->arity, t->cost, mult, m, p->sel);
}

/* The node's subgraph for SCOTCH, rebuilt from scratch (inducing it and
 * mapping onto a tree-leaf crashes SCOTCH 7.0.3), and for a remap every
 * vertex's old terminal on this node (-1 elsewhere). */
static int p2_graph(const mctx_t *c, int node, const int64_t *verts,
                    int64_t k, p2scratch_t *sc, p2node_t *p) {
  const rta_hw_t *hw = c->hw;
  int rc = map__subgraph(c->g, verts, k, sc->g2l, &p->vert, &p->edge, &p->w,
                         &p->narc);
  if (rc)
    return rc;
  p->velo = ballast__malloc((size_t)k * sizeof *p->velo);
  p->part = ballast__malloc((size_t)k * sizeof *p->part);
  p->edlo = ballast__malloc((size_t)(p->narc ? p->narc : 1) * sizeof *p->edlo);
  if (!p->velo || !p->part || !p->edlo)
    return BALLAST_ENOMEM;
  for (int64_t i = 0; i < k; i++)
    p->velo[i] = c->velo[verts[i]];
  double escale;
  int ex;
  map__normalize(p->w, p->narc, MAP__ECAP / p->tgt.maxdist, &escale, &ex);
  for (int64_t i = 0; i < p->narc; i++)
    p->edlo[i] = map__scaled(p->w[i], escale);
  if ((rc = map__sgraph_build(&p->sg, sc->ctx, c->o.seed + (unsigned)node,
                              (SCOTCH_Num)k, p->vert, p->velo,
                              (SCOTCH_Num)p->narc, p->edge, p->edlo)))
    return rc;
  if (!c->prev)
    return 0;
  p->paro = ballast__malloc((size_t)k * sizeof *p->paro);
  p->vmlo = migration_costs(c, verts, k, escale);
  if (!p->paro || !p->vmlo)
    return BALLAST_ENOMEM;
  for (int64_t i = 0; i < k; i++) {
    int64_t s = c->prev[verts[i]];
    p->paro[i] = s >= 0 && s < hw->nslots && hw->slot_node[s] == node
                     ? sc->term_of_slot[s] : -1;
  }
  fill_paro((SCOTCH_Num)k, p->vert, p->edge, p->paro, p->vmlo);
  return 0;
}

static int phase2_node(mctx_t *c, int node, const int64_t *verts, int64_t k,
                       p2scratch_t *sc, int64_t *slot) {
  const rta_hw_t *hw = c->hw;
  int b = hw->node_xslot[node], m = hw->node_xslot[node + 1] - b;
  if (k == 0)
    return 0;
  if (m == 1) {
    for (int64_t i = 0; i < k; i++)
      slot[verts[i]] = hw->node_slot[b];
    return 0;
  }
  p2node_t p;
  memset(&p, 0, sizeof p);
  int rc = p2_target(c, node, sc, &p);
  if (!rc)
    rc = p2_graph(c, node, verts, k, sc, &p);
  if (!rc) {
    char direct[512];
    const char *strat = c->o.scotch_strategy;
    if (!strat && k <= MAP__DIRECT_MAX) {
      map__strategy_string(direct, sizeof direct, c->o.balrat / 2, 1);
      strat = direct;
    }
    rc = map__sgraph_map(&p.sg, map__tgt_arch(&p.tgt), m, c->o.scotch_flags,
                         strat, c->o.balrat / 2, p.paro, p.vmlo, p.part);
  }
  if (!rc)
    for (int64_t i = 0; i < k; i++)
      slot[verts[i]] = p.slot_of_term[p.part[i]];
  p2node_free(&p);
  return rc;
}

/* The buffers of one exchange of phase-2 results. */
typedef struct {
  int rank, size;
  int *cnt, *dsp;     /* per rank: slots it computed, where they go in all */
  int64_t *mine, *all; /* this rank's slots, everyone's */
} share_t;

/* Every rank's phase-2 results to every rank, node by node. */
static int gather_phase2(mctx_t *c, share_t *s, const int64_t *xv,
                         const int64_t *order, int64_t *slot) {
  int nn = c->hw->nnodes;
  for (int k = 0; k < nn; k++)
    s->cnt[k % s->size] += (int)(xv[k + 1] - xv[k]);
  for (int r = 1; r < s->size; r++)
    s->dsp[r] = s->dsp[r - 1] + s->cnt[r - 1];
  int64_t m = 0;
  for (int k = s->rank; k < nn; k += s->size)
    for (int64_t i = xv[k]; i < xv[k + 1]; i++)
      s->mine[m++] = slot[order[i]];
  if (MPI_Allgatherv(s->mine, (int)m, MPI_INT64_T, s->all, s->cnt, s->dsp,
                     MPI_INT64_T, c->comm) != MPI_SUCCESS)
    return BALLAST_EMPI;
  for (int r = 0; r < s->size; r++) {
    int64_t p = s->dsp[r];
    for (int k = r; k < nn; k += s->size)
      for (int64_t i = xv[k]; i < xv[k + 1]; i++)
        slot[order[i]] = s->all[p++];
  }
  return 0;
}

/* Gathers every rank's phase-2 results (nodes k = rank mod size), so all
 * ranks end with the whole mapping; an error anywhere (\a err here) fails
 * everywhere. The buffers are allocated before the agreement, so nothing
 * fails on one rank alone after it. */
static int share_phase2(mctx_t *c, int err, const int64_t *xv,
                        const int64_t *order, int64_t *slot) {
  share_t s = {0, 1, NULL, NULL, NULL, NULL};
  size_t n = (size_t)(c->g->nvert ? c->g->nvert : 1);
  if (MPI_Comm_rank(c->comm, &s.rank) != MPI_SUCCESS ||
      MPI_Comm_size(c->comm, &s.size) != MPI_SUCCESS)
    err = err ? err : BALLAST_EMPI;
  s.cnt = ballast__calloc((size_t)s.size, sizeof *s.cnt);
  s.dsp = ballast__calloc((size_t)s.size, sizeof *s.dsp);
  s.mine = ballast__malloc(n * sizeof *s.mine);
  s.all = ballast__malloc(n * sizeof *s.all);
  if (!err && (!s.cnt || !s.dsp || !s.mine || !s.all))
    err = BALLAST_ENOMEM;
  int rc = ballast__agree(c->comm, err, NULL, NULL);
  if (!rc)
    rc = gather_phase2(c, &s, xv, order, slot);
  free(s.cnt);
  free(s.dsp);
  free(s.mine);
  free(s.all);
  return rc;
}

/* What the two-phase mapping works with: the node of every vertex, the
 * vertices grouped by node (node k's are order[xv[k] .. xv[k+1]), in vertex
 * order) and phase 2's scratch. */
typedef struct {
  SCOTCH_Num *node_of;
  int64_t *xv, *order;
  p2scratch_t sc;
} tp_t;

static int tp_alloc(const mctx_t *c, tp_t *t) {
  const rta_hw_t *hw = c->hw;
  int64_t n = c->g->nvert;
  int maxcores = 1;
  for (int k = 0; k < hw->ntopo; k++)
    if (hw->topo[k].ncores > maxcores)
      maxcores = hw->topo[k].ncores;
  t->node_of = ballast__malloc((size_t)n * sizeof *t->node_of);
  t->xv = ballast__calloc((size_t)hw->nnodes + 1, sizeof *t->xv);
  t->order = ballast__malloc((size_t)n * sizeof *t->order);
  t->sc.g2l = ballast__malloc((size_t)n * sizeof *t->sc.g2l);
  t->sc.cnt = ballast__malloc((size_t)maxcores * sizeof *t->sc.cnt);
  t->sc.term_of_slot = ballast__malloc((size_t)hw->nslots * sizeof *t->sc.term_of_slot);
  if (!t->node_of || !t->xv || !t->order || !t->sc.g2l || !t->sc.cnt ||
      !t->sc.term_of_slot)
    return BALLAST_ENOMEM;
  return 0;
}

static void tp_free(tp_t *t) {
  free(t->node_of);
  free(t->xv);
  free(t->order);
  free(t->sc.g2l);
  free(t->sc.cnt);
  free(t->sc.term_of_slot);
}

/* Groups the vertices by node, in vertex order. */
static void tp_group(const mctx_t *c, tp_t *t) {
  int64_t n = c->g->nvert, *xv = t->xv;
  int nn = c->hw->nnodes;
  for (int64_t v = 0; v < n; v++)
    xv[t->node_of[v] + 1]++;
  for (int k = 0; k < nn; k++)
    xv[k + 1] += xv[k];
  for (int64_t v = 0; v < n; v++)
    t->order[xv[t->node_of[v]]++] = v;
  for (int k = nn; k > 0; k--)
    xv[k] = xv[k - 1];
  xv[0] = 0;
  for (int64_t v = 0; v < n; v++)
    t->sc.g2l[v] = -1;
}

/* Phase 2 of this rank's nodes: node k's share is computed by rank k mod
 * size (every node when mapping alone). Local. */
static int tp_phase2(mctx_t *c, tp_t *t, int64_t *slot) {
  tp_group(c, t);
  SCOTCH_Context ctx;
  int rc = map__ctx_init(&ctx, c->o.seed);
  if (rc)
    return rc;
  t->sc.ctx = &ctx;
  int rank = 0, size = 1;
  if (c->comm != MPI_COMM_NULL) {
    MPI_Comm_rank(c->comm, &rank);
    MPI_Comm_size(c->comm, &size);
  }
  for (int k = rank; k < c->hw->nnodes && !rc; k += size)
    rc = phase2_node(c, k, t->order + t->xv[k], t->xv[k + 1] - t->xv[k],
                     &t->sc, slot);
  SCOTCH_contextExit(&ctx);
  t->sc.ctx = NULL;
  return rc;
}

static int map_twophase(mctx_t *c, int64_t *slot) {
  const rta_hw_t *hw = c->hw;
  tp_t t;
  memset(&t, 0, sizeof t);
  int rc = tp_alloc(c, &t);
  double t0 = map__now();
  if (hw->nnodes > 1 && c->comm != MPI_COMM_NULL && c->o.distributed_phase1 &&
      !c->prev && map__phase1_dist_available()) {
    /* Collective, it fails on every rank together; a local failure so far
     * is agreed first, so every rank enters PT-Scotch or none does. */
    if (!(rc = ballast__agree(c->comm, rc, NULL, NULL)))
      rc = map__phase1_dist(c->g, hw, c->velo, c->comm, c->o.balrat / 2,
                            c->o.seed, t.node_of);
    if (rc) {
      tp_free(&t);
      return rc;
    }
  } else if (!rc && hw->nnodes == 1) {
    memset(t.node_of, 0, (size_t)c->g->nvert * sizeof *t.node_of);
  } else if (!rc) {
    rc = phase1(c, t.node_of);
  }
  double t1 = map__now();
  c->q->seconds_phase1 = t1 - t0;
  if (!rc)
    rc = tp_phase2(c, &t, slot);
  if (c->comm != MPI_COMM_NULL) /* the others wait in the exchange */
    rc = share_phase2(c, rc, t.xv, t.order, slot);
  c->q->seconds_phase2 = map__now() - t1;
  tp_free(&t);
  return rc;
}

/* ---- single pass: the whole machine as one tree-leaf ------------------------------ */

static int same_topo(const map__nodetopo_t *a, const map__nodetopo_t *b) {
  if (a->nlevels != b->nlevels)
    return 0;
  for (int l = 0; l < a->nlevels; l++)
    if (a->arity[l] != b->arity[l] || a->cost[l] != b->cost[l])
      return 0;
  return 1;
}

/* What the single pass works with: the machine as one tree-leaf and its
 * terminals' slots, the whole graph for SCOTCH and, for a remap, every
 * vertex's old terminal. */
typedef struct {
  map__tgt_t tgt;
  map__sgraph_t sg;
  int exact;                  /* one slot per core on every node */
  int *cnt;                   /* ncores scratch */
  int *slot_of_term;          /* terminal -> slot */
  SCOTCH_Num *term_of_slot;   /* slot -> terminal */
  SCOTCH_Num *sel;            /* the leaves of the slots, when restricted */
  SCOTCH_Num *vert, *edlo, *part, *paro, *vmlo;
  SCOTCH_Num narc;
} tl_t;

static void tl_free(tl_t *p) {
  map__sgraph_exit(&p->sg);
  map__tgt_exit(&p->tgt);
  free(p->sel);
  free(p->part);
  free(p->cnt);
  free(p->slot_of_term);
  free(p->term_of_slot);
  free(p->vert);
  free(p->edlo);
  free(p->paro);
  free(p->vmlo);
}

static int tl_alloc(const mctx_t *c, tl_t *p) {
  const rta_graph_t *g = c->g;
  int ns = c->hw->nslots;
  p->narc = (SCOTCH_Num)g->xadj[g->nvert];
  p->part = ballast__malloc((size_t)g->nvert * sizeof *p->part);
  p->cnt = ballast__calloc((size_t)c->hw->topo[0].ncores, sizeof *p->cnt);
  p->slot_of_term = ballast__malloc((size_t)ns * sizeof *p->slot_of_term);
  p->term_of_slot = ballast__malloc((size_t)ns * sizeof *p->term_of_slot);
  p->vert = ballast__malloc(((size_t)g->nvert + 1) * sizeof *p->vert);
  p->edlo = ballast__malloc((size_t)(p->narc ? p->narc : 1) * sizeof *p->edlo);
  if (!p->part || !p->cnt || !p->slot_of_term || !p->term_of_slot ||
      !p->vert || !p->edlo)
    return BALLAST_ENOMEM;
  return 0;
}

/* The target: the nodes on top of the (identical) node's levels, restricted
 * to the leaves of the slots unless they are exactly one per core. */
static int tl_target(const mctx_t *c, tl_t *p) {
  const rta_hw_t *hw = c->hw;
  const map__nodetopo_t *t0 = &hw->topo[0];
  int nl = t0->nlevels + 1, arity[MAP__MAXLEV + 1];
  int mult = 1, nc = t0->ncores, ns = hw->nslots;
  double cost[MAP__MAXLEV + 1];
  arity[0] = hw->nnodes;
  cost[0] = hw->internode_cost;
  for (int l = 0; l < t0->nlevels; l++) {
    arity[l + 1] = t0->arity[l];
    cost[l + 1] = t0->cost[l];
  }
  if (p->exact) {
    for (int s = 0; s < ns; s++) {
      p->term_of_slot[s] = hw->slot_node[s] * nc + hw->slot_core[s];
      p->slot_of_term[p->term_of_slot[s]] = s;
    }
    return map__tgt_tleaf(&p->tgt, nl, arity, cost, 1, 0, NULL);
  }
  for (int k = 0; k < hw->nnodes; k++) {
    int mk = node_mult(hw, k, p->cnt);
    if (mk > mult)
      mult = mk;
  }
  p->sel = ballast__malloc((size_t)ns * sizeof *p->sel);
  if (!p->sel)
    return BALLAST_ENOMEM;
  for (int k = 0; k < hw->nnodes; k++) {
    memset(p->cnt, 0, (size_t)nc * sizeof *p->cnt);
    for (int i = hw->node_xslot[k]; i < hw->node_xslot[k + 1]; i++) {
      int s = hw->node_slot[i], core = hw->slot_core[s];
      p->sel[s] = ((SCOTCH_Num)k * nc + core) * mult + p->cnt[core]++;
    }
  }
  for (int s = 0; s < ns; s++)
    p->slot_of_term[s] = p->term_of_slot[s] = s;
  return map__tgt_tleaf(&p->tgt, nl, arity, cost, mult, ns, p->sel);
}

/* The whole graph for SCOTCH (edge weights scaled to the target's
 * distances) and, for a remap, every vertex's old terminal. */
static int tl_graph(const mctx_t *c, tl_t *p) {
  const rta_graph_t *g = c->g;
  int rc;
  for (int64_t v = 0; v <= g->nvert; v++)
    p->vert[v] = (SCOTCH_Num)g->xadj[v];
  double escale;
  int ex;
  map__normalize(g->adjw, p->narc, MAP__ECAP / p->tgt.maxdist, &escale, &ex);
  for (SCOTCH_Num i = 0; i < p->narc; i++)
    p->edlo[i] = map__scaled(g->adjw[i], escale);
  if ((rc = map__sgraph_build(&p->sg, NULL, c->o.seed, (SCOTCH_Num)g->nvert,
                              p->vert, c->velo, p->narc, (SCOTCH_Num *)g->adj,
                              p->edlo)))
    return rc;
  if (!c->prev)
    return 0;
  p->paro = ballast__malloc((size_t)g->nvert * sizeof *p->paro);
  p->vmlo = migration_costs(c, NULL, g->nvert, escale);
  if (!p->paro || !p->vmlo)
    return BALLAST_ENOMEM;
  for (int64_t v = 0; v < g->nvert; v++)
    p->paro[v] = c->prev[v] >= 0 && c->prev[v] < c->hw->nslots
                     ? p->term_of_slot[c->prev[v]] : -1;
  fill_paro((SCOTCH_Num)g->nvert, p->vert, (SCOTCH_Num *)g->adj, p->paro,
            p->vmlo);
  return 0;
}

static int map_tleaf(mctx_t *c, int64_t *slot) {
  const rta_graph_t *g = c->g;
  const rta_hw_t *hw = c->hw;
  for (int k = 1; k < hw->ntopo; k++)
    if (!same_topo(&hw->topo[0], &hw->topo[k])) {
      BALLAST_WARN("single-pass tree-leaf needs identical nodes");
      return BALLAST_ENOTSUP;
    }
  tl_t p;
  memset(&p, 0, sizeof p);
  p.exact = 1;
  for (int k = 0; k < hw->nnodes && p.exact > 0; k++)
    p.exact = node_exact(hw, k);
  int rc = p.exact < 0 ? p.exact : tl_alloc(c, &p);
  double tb = map__now();
  if (!rc && !(rc = tl_target(c, &p)) && !(rc = tl_graph(c, &p))) {
    c->q->seconds_build += map__now() - tb;
    double t1 = map__now();
    rc = map__sgraph_map(&p.sg, map__tgt_arch(&p.tgt), hw->nslots,
                         c->o.scotch_flags, c->o.scotch_strategy, c->o.balrat,
                         p.paro, p.vmlo, p.part);
    c->q->seconds_phase1 = map__now() - t1;
  }
  if (!rc)
    for (int64_t v = 0; v < g->nvert; v++)
      slot[v] = p.slot_of_term[p.part[v]];
  tl_free(&p);
  return rc;
}

/* ---- remap candidates --------------------------------------------------------------- */

/* ---- entry points ------------------------------------------------------------------- */

int rta_map_graph(const rta_graph_t *g, const rta_hw_t *hw, rta_strategy_t s,
                  const int64_t *prev, unsigned seed, int64_t *slot_of_vertex,
                  rta_map_quality_t *q) {
  rta_map_options_t o;
  rta_map_options_init(&o);
  o.seed = seed;
  return rta_map_graph_ex(g, hw, s, prev, &o, slot_of_vertex, q);
}

static int map_graph(const rta_graph_t *cg, const rta_hw_t *hw,
                     rta_strategy_t s, const int64_t *prev,
                     const rta_map_options_t *opt, MPI_Comm comm,
                     int64_t *slot_of_vertex, rta_map_quality_t *q);

int rta_map_graph_ex(const rta_graph_t *cg, const rta_hw_t *hw,
                     rta_strategy_t s, const int64_t *prev,
                     const rta_map_options_t *opt, int64_t *slot_of_vertex,
                     rta_map_quality_t *q) {
  return map_graph(cg, hw, s, prev, opt, MPI_COMM_NULL, slot_of_vertex, q);
}

int rta_map_graph_par(const rta_graph_t *cg, const rta_hw_t *hw,
                      rta_strategy_t s, const int64_t *prev,
                      const rta_map_options_t *opt, MPI_Comm comm,
                      int64_t *slot_of_vertex, rta_map_quality_t *q) {
  if (comm == MPI_COMM_NULL)
    return BALLAST_EINVAL;
  int rc0 = ballast__need_mpi("rta_map_graph_par");
  if (rc0)
    return rc0;
  ballast__lib_begin();
  int rc = map_graph(cg, hw, s, prev, opt, comm, slot_of_vertex, q);
  ballast__lib_end();
  return rc;
}

/* Does strategy \a s run SCOTCH (the others are the baselines)? */
static int uses_scotch(rta_strategy_t s) {
  return s == RTA_MAP_TWOPHASE || s == RTA_MAP_TLEAF;
}

/* Everything a mapping needs before it starts, all local: the graph's CSR,
 * the checks of prev and SCOTCH, the normalised vertex weights. Allocated
 * here so that no rank fails alone once the mapping's collective steps
 * began. */
static int map_prepare(mctx_t *c, rta_strategy_t s) {
  /* Logically const: merging pending edges does not change the graph. */
  rta_graph_t *g = (rta_graph_t *)c->g;
  const int64_t *prev = c->prev;
  int rc = map__graph_finalize(g);
  if (rc)
    return rc;
  if (prev)
    for (int64_t v = 0; v < g->nvert; v++)
      if (prev[v] < -1 || prev[v] >= c->hw->nslots)
        return BALLAST_EINVAL;
  if (!uses_scotch(s))
    return 0;
  if ((rc = map__scotch_check()))
    return rc;
  double tb = map__now(), vscale;
  int exact;
  c->velo = ballast__malloc((size_t)g->nvert * sizeof *c->velo);
  if (!c->velo)
    return BALLAST_ENOMEM;
  map__normalize(g->work, g->nvert, MAP__VCAP, &vscale, &exact);
  for (int64_t v = 0; v < g->nvert; v++)
    c->velo[v] = map__scaled(g->work[v], vscale);
  c->q->seconds_build = map__now() - tb;
  return 0;
}

/* Runs strategy \a s into \a slot. */
static int map_run(mctx_t *c, rta_strategy_t s, int64_t *slot) {
  if (s == RTA_MAP_BLOCK) {
    map__block(c->g, c->hw, slot);
    return 0;
  }
  if (s == RTA_MAP_ROUNDROBIN) {
    map__roundrobin(c->g, c->hw, slot);
    return 0;
  }
  if (!uses_scotch(s)) {
    map__random(c->g, c->hw, c->o.seed, slot);
    return 0;
  }
  int rc = s == RTA_MAP_TWOPHASE ? map_twophase(c, slot) : map_tleaf(c, slot);
  if (rc || !c->prev || c->o.remap_scotch_only)
    return rc;
  /* SCOTCH's remap is one candidate of two, then refined within its
   * migration (map_remap.c); all local */
  return map__remap_best(c->g, c->hw, c->prev, c->o.steps_between_remaps,
                         c->o.balrat, slot);
}

static int map_graph(const rta_graph_t *cg, const rta_hw_t *hw,
                     rta_strategy_t s, const int64_t *prev,
                     const rta_map_options_t *opt, MPI_Comm comm,
                     int64_t *slot_of_vertex, rta_map_quality_t *q) {
  if (!cg || !hw || !slot_of_vertex || (unsigned)s >= RTA_MAP_NSTRATEGIES)
    return BALLAST_EINVAL;
  double t0 = map__now();
  rta_map_quality_t qq;
  memset(&qq, 0, sizeof qq);
  mctx_t c = {.g = cg, .hw = hw, .prev = prev, .q = &qq, .comm = comm};
  rta_map_options_init(&c.o);
  int bad_opt = 0;
  if (opt) {
    c.o = *opt;
    /* Checked here: reaching SCOTCH's strategy parser, "bal=inf" fails with
     * SCOTCH's raw message, and a negative or NaN value must not pass for
     * the default without a word. */
    if (!isfinite(c.o.balrat) || c.o.balrat < 0 ||
        !isfinite(c.o.steps_between_remaps) || c.o.steps_between_remaps < 0) {
      BALLAST_WARN("mapping options: balrat %g and steps_between_remaps %g "
                   "must be finite and >= 0 (0: the default)", c.o.balrat,
                   c.o.steps_between_remaps);
      bad_opt = BALLAST_EINVAL;
    }
    if (!(c.o.balrat > 0))
      c.o.balrat = 0.03;
    if (!(c.o.steps_between_remaps > 0))
      c.o.steps_between_remaps = 10;
  }
  int rc = bad_opt ? bad_opt : map_prepare(&c, s);
  /* Shared: every rank starts the mapping or none does. */
  if (comm != MPI_COMM_NULL)
    rc = ballast__agree(comm, rc, NULL, NULL);
  if (!rc)
    rc = map_run(&c, s, slot_of_vertex);
  free(c.velo);
  if (!rc && q) {
    double tm = map__now();
    rc = map__quality(cg, hw, slot_of_vertex, prev, &qq);
    qq.seconds_metrics = map__now() - tm;
    qq.seconds = map__now() - t0;
  }
  /* Shared: the steps since the last collective one were local; every
   * rank leaves with the same verdict. */
  if (comm != MPI_COMM_NULL)
    rc = ballast__agree(comm, rc, NULL, NULL);
  if (!rc && q)
    *q = qq;
  return rc;
}
