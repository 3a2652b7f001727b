/* The distributed phase 1 of the two-phase mapping: the task graph split in
 * vertex blocks over the ranks of a communicator, mapped onto the nodes by
 * PT-Scotch (SCOTCH_dgraphMap onto a weighted complete graph of the nodes,
 * weights = cores per node), the node of every vertex gathered on every rank.
 * Only with BALLAST_HAVE_PTSCOTCH; without it the caller keeps the sequential
 * phase 1 (map__phase1_dist_available() says 0). */
#include <stdlib.h>
#include <string.h>

#include "common/common_internal.h"
#include "map/map_internal.h"

#if BALLAST_HAVE_PTSCOTCH
#include <ptscotch.h>

int map__phase1_dist_available(void) { return 1; }

/* MPI datatype of SCOTCH_Num. */
static MPI_Datatype num_type(void) {
  return sizeof(SCOTCH_Num) == sizeof(int64_t) ? MPI_INT64_T : MPI_INT32_T;
}

/* This rank's block [lo, hi) of the graph as PT-Scotch arrays (global
 * neighbour ids, edge weights scaled with the scale every rank computes from
 * the whole graph) and the target's weights (slots per node). */
typedef struct {
  int64_t nloc, narc;
  SCOTCH_Num *vert, *edge, *edlo, *vel, *wt;
} block_t;

static void block_free(block_t *b) {
  free(b->vert);
  free(b->edge);
  free(b->edlo);
  free(b->vel);
  free(b->wt);
}

static int block_build(const rta_graph_t *g, const rta_hw_t *hw,
                       const SCOTCH_Num *velo, int64_t lo, int64_t hi,
                       block_t *b) {
  int64_t nloc = b->nloc = hi - lo, eb = g->xadj[lo];
  int64_t narc = b->narc = g->xadj[hi] - eb;
  b->vert = ballast__malloc(((size_t)nloc + 1) * sizeof *b->vert);
  b->edge = ballast__malloc((size_t)(narc ? narc : 1) * sizeof *b->edge);
  b->edlo = ballast__malloc((size_t)(narc ? narc : 1) * sizeof *b->edlo);
  b->vel = ballast__malloc((size_t)(nloc ? nloc : 1) * sizeof *b->vel);
  b->wt = ballast__malloc((size_t)hw->nnodes * sizeof *b->wt);
  if (!b->vert || !b->edge || !b->edlo || !b->vel || !b->wt)
    return BALLAST_ENOMEM;
  double escale;
  int exact;
  map__normalize(g->adjw, g->xadj[g->nvert], MAP__ECAP, &escale, &exact);
  for (int64_t v = 0; v <= nloc; v++)
    b->vert[v] = (SCOTCH_Num)(g->xadj[lo + v] - eb);
  for (int64_t i = 0; i < narc; i++) {
    b->edge[i] = g->adj[eb + i];
    b->edlo[i] = map__scaled(g->adjw[eb + i], escale);
  }
  for (int64_t v = 0; v < nloc; v++)
    b->vel[v] = velo[lo + v];
  for (int k = 0; k < hw->nnodes; k++)
    b->wt[k] = hw->node_xslot[k + 1] - hw->node_xslot[k];
  return 0;
}

/* Maps the block with PT-Scotch; fills partloc (nloc). */
static int block_map(const block_t *b, const rta_hw_t *hw, MPI_Comm comm,
                     double bal, unsigned seed, SCOTCH_Num *partloc) {
  int rc = 0, has_dg = 0, has_bound = 0, has_arch = 0, has_strat = 0;
  SCOTCH_Dgraph dg, bound;
  SCOTCH_Context ctx;
  SCOTCH_Arch arch;
  SCOTCH_Strat strat;
  /* One thread per process (PT-Scotch's own threads would call MPI under
   * MPI_THREAD_SINGLE: Open MPI then crashed in MPI_Finalize now and then),
   * deterministic options and a seeded private random generator. */
  if ((rc = map__ctx_init(&ctx, seed)))
    return rc;
  if (SCOTCH_dgraphInit(&dg, comm) != 0) {
    rc = BALLAST_ESCOTCH;
    goto done;
  }
  has_dg = 1;
  if (SCOTCH_dgraphBuild(&dg, 0, (SCOTCH_Num)b->nloc, (SCOTCH_Num)b->nloc,
                         b->vert, b->vert + 1, b->vel, NULL,
                         (SCOTCH_Num)b->narc, (SCOTCH_Num)b->narc, b->edge,
                         NULL, b->edlo) != 0 ||
      SCOTCH_dgraphInit(&bound, comm) != 0) {
    rc = BALLAST_ESCOTCH;
    goto done;
  }
  has_bound = 1;
  if (SCOTCH_contextBindDgraph(&ctx, &dg, &bound) != 0) {
    rc = BALLAST_ESCOTCH;
    goto done;
  }
  SCOTCH_archInit(&arch);
  has_arch = 1;
  if (SCOTCH_archCmpltw(&arch, hw->nnodes, b->wt) != 0) {
    rc = BALLAST_ESCOTCH;
    goto done;
  }
  int size;
  MPI_Comm_size(comm, &size);
  SCOTCH_stratInit(&strat);
  has_strat = 1;
  if (SCOTCH_stratDgraphMapBuild(&strat, SCOTCH_STRATSPEED, size,
                                 hw->nnodes, bal) != 0 ||
      SCOTCH_dgraphMap(&bound, &arch, &strat, partloc) != 0)
    rc = BALLAST_ESCOTCH;
done:
  if (has_strat)
    SCOTCH_stratExit(&strat);
  if (has_arch)
    SCOTCH_archExit(&arch);
  if (has_bound)
    SCOTCH_dgraphExit(&bound);
  if (has_dg)
    SCOTCH_dgraphExit(&dg);
  SCOTCH_contextExit(&ctx);
  return rc;
}

/* Builds this rank's block [lo, hi) and maps it; fills partloc (hi - lo). */
static int map_block(const rta_graph_t *g, const rta_hw_t *hw,
                     const SCOTCH_Num *velo, MPI_Comm comm, double bal,
                     unsigned seed, int64_t lo, int64_t hi,
                     SCOTCH_Num *partloc) {
  block_t b;
  memset(&b, 0, sizeof b);
  int rc = block_build(g, hw, velo, lo, hi, &b);
  if (!rc)
    rc = block_map(&b, hw, comm, bal, seed, partloc);
  block_free(&b);
  return rc;
}

int map__phase1_dist(const rta_graph_t *g, const rta_hw_t *hw,
                     const SCOTCH_Num *velo, MPI_Comm comm, double bal,
                     unsigned seed, SCOTCH_Num *node_of) {
  int rank, size, rc = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  if (g->xadj[g->nvert] > INT32_MAX - 1 || g->nvert > INT32_MAX)
    rc = BALLAST_EOVERFLOW;
  int *cnt = ballast__malloc((size_t)size * sizeof *cnt);
  int *dsp = ballast__malloc((size_t)size * sizeof *dsp);
  if (!rc && (!cnt || !dsp))
    rc = BALLAST_ENOMEM;
  if (!rc) {
    for (int r = 0; r < size; r++) {
      int64_t a = g->nvert * r / size, b = g->nvert * (r + 1) / size;
      dsp[r] = (int)a;
      cnt[r] = (int)(b - a);
    }
  }
  /* Everyone enters PT-Scotch or nobody does, and leaves it together. */
  if (!(rc = ballast__agree(comm, rc, NULL, NULL))) {
    int64_t lo = dsp[rank], hi = lo + cnt[rank];
    rc = map_block(g, hw, velo, comm, bal, seed, lo, hi, node_of + lo);
    rc = ballast__agree(comm, rc, NULL, NULL);
  }
  if (!rc && MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, node_of, cnt,
                            dsp, num_type(), comm) != MPI_SUCCESS)
    rc = BALLAST_EMPI;
  if (!rc)
    for (int64_t v = 0; v < g->nvert; v++)
      if (node_of[v] < 0 || node_of[v] >= hw->nnodes) {
        rc = BALLAST_ESCOTCH; /* same data everywhere: same verdict */
        break;
      }
  free(cnt);
  free(dsp);
  return rc;
}

#else /* !BALLAST_HAVE_PTSCOTCH */

int map__phase1_dist_available(void) { return 0; }

int map__phase1_dist(const rta_graph_t *g, const rta_hw_t *hw,
                     const SCOTCH_Num *velo, MPI_Comm comm, double bal,
                     unsigned seed, SCOTCH_Num *node_of) {
  (void)g;
  (void)hw;
  (void)velo;
  (void)comm;
  (void)bal;
  (void)seed;
  (void)node_of;
  return BALLAST_ENOTSUP;
}

#endif
