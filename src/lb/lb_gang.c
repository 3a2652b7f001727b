/* Multiprocessor tasks (gangs): nprocs slots of one node, and a
 * communicator for their members. */
#include "lb/lb_internal.h"

#include <stdlib.h>
#include <string.h>

#include "common/common_internal.h"

void lb__gangs_free(lb__gang_t *g, int n) {
  if (!g)
    return;
  int fin = 0;
  MPI_Finalized(&fin);
  for (int i = 0; i < n; i++) {
    free(g[i].key);
    free(g[i].ranks);
    if (!fin && g[i].comm != MPI_COMM_NULL)
      MPI_Comm_free(&g[i].comm);
  }
  free(g);
}

/* nprocs slots of \a node, consecutive (wrapping) from \a first when it is on
 * the node, else from the node's first slot. */
static int node_slots(const rta_hw_t *hw, int node, int first, int nprocs,
                      int *ranks) {
  int ns = rta_hw_nslots(hw), k = 0, n = 0;
  int *all = ballast__malloc((size_t)ns * sizeof *all);
  if (!all)
    return BALLAST_ENOMEM;
  for (int s = 0; s < ns; s++)
    if (rta_hw_slot_node(hw, s) == node) {
      if (s == first)
        k = n;
      all[n++] = s;
    }
  for (int i = 0; i < nprocs; i++)
    ranks[i] = all[(k + i) % n];
  free(all);
  return 0;
}

static int cmp_int(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

int lb__place_gangs(rta_lb_context_t *ctx, const rta_mapping_t *m,
                    int from_owner, lb__gang_t **out, int *nout) {
  *out = NULL;
  *nout = 0;
  int64_t n = rta_mapping_ntasks(m);
  int ng = 0;
  for (int64_t v = 0; v < n; v++)
    ng += rta_mapping_nprocs(m, v) > 1;
  if (ng == 0)
    return 0;
  lb__gang_t *g = ballast__calloc((size_t)ng, sizeof *g);
  if (!g)
    return BALLAST_ENOMEM;
  int nn = rta_hw_nnodes(ctx->hw), k = 0, rc = 0;
  for (int64_t v = 0; v < n && !rc; v++) {
    int np = rta_mapping_nprocs(m, v);
    if (np <= 1)
      continue;
    lb__gang_t *x = &g[k++];
    x->comm = MPI_COMM_NULL;
    x->nprocs = np;
    x->key = ballast__strdup(rta_mapping_key(m, v));
    x->ranks = ballast__malloc((size_t)np * sizeof *x->ranks);
    if (!x->key || !x->ranks) {
      rc = BALLAST_ENOMEM;
      break;
    }
    int first = from_owner ? rta_mapping_owner(m, v) : rta_mapping_slot(m, v);
    int node = rta_hw_slot_node(ctx->hw, first);
    if (rta_hw_node_nslots(ctx->hw, node) < np) {
      node = -1;
      for (int d = 0; d < nn && node < 0; d++)
        if (rta_hw_node_nslots(ctx->hw, d) >= np)
          node = d;
    }
    if (node < 0) {
      int largest = 0;
      for (int d = 0; d < nn; d++)
        if (rta_hw_node_nslots(ctx->hw, d) > largest)
          largest = rta_hw_node_nslots(ctx->hw, d);
      if (ctx->rank == 0)
        BALLAST_WARN("rta: task \"%s\" needs %d processors; the largest node "
                     "has %d slots, so it fits no node", x->key, np, largest);
      rc = BALLAST_ETOOBIG;
      break;
    }
    if ((rc = node_slots(ctx->hw, node, first, np, x->ranks)))
      break;
    qsort(x->ranks, (size_t)np, sizeof *x->ranks, cmp_int);
  }
  if (rc) {
    lb__gangs_free(g, ng);
    return rc;
  }
  *out = g;
  *nout = ng;
  return 0;
}

int lb__gang_comms(rta_lb_context_t *ctx, lb__gang_t *g, int n) {
  if (n == 0)
    return 0;
  MPI_Group world;
  if (MPI_Comm_group(ctx->base, &world) != MPI_SUCCESS)
    return BALLAST_EMPI;
  int rc = 0;
  /* Gangs in key order on every rank; each member creates the gang's
   * communicator collectively with the other members only. */
  for (int i = 0; i < n && !rc; i++) {
    int member = 0;
    for (int k = 0; k < g[i].nprocs; k++)
      member |= g[i].ranks[k] == ctx->rank;
    if (!member)
      continue;
    MPI_Group grp;
    if (MPI_Group_incl(world, g[i].nprocs, g[i].ranks, &grp) != MPI_SUCCESS) {
      rc = BALLAST_EMPI;
      break;
    }
    if (MPI_Comm_create_group(ctx->base, grp, 0x6c62 + i, &g[i].comm) != MPI_SUCCESS)
      rc = BALLAST_EMPI;
    MPI_Group_free(&grp);
  }
  MPI_Group_free(&world);
  return rc;
}
