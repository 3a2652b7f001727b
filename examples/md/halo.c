/*
 * Neighbourhood communication: the ranks owning blocks adjacent to this
 * rank's blocks, the ghost (halo) exchange before the force loop, and the
 * migration of particles that left their block. Ranks talk only to their
 * neighbours (one message per neighbour and exchange, sized by probing);
 * blocks on the same rank are served by direct copies.
 */
#include "md.h"

#include <ballast/common.h>
#include <stdlib.h>
#include <string.h>

enum { TAG_HALO = 601, TAG_MIG };

int md_dbuf_reserve(md_dbuf_t *b, size_t cap) {
  if (cap <= b->cap) return 0;
  size_t nc = b->cap ? b->cap : 1024;
  while (nc < cap) nc *= 2;
  double *v = realloc(b->v, nc * sizeof(double));
  if (!v) return BALLAST_ENOMEM;
  b->v = v;
  b->cap = nc;
  return 0;
}

void md_dbuf_free(md_dbuf_t *b) {
  free(b->v);
  memset(b, 0, sizeof *b);
}

static int dbuf_append(md_dbuf_t *b, const double *rec, int len) {
  if (b->n + (size_t)len > b->cap && md_dbuf_reserve(b, b->n + (size_t)len))
    return BALLAST_ENOMEM;
  memcpy(b->v + b->n, rec, sizeof(double) * (size_t)len);
  b->n += (size_t)len;
  return 0;
}

void md_neighbours_free(md_sim_t *s) {
  for (int k = 0; k < s->nnbr; k++) md_dbuf_free(&s->sendb[k]);
  free(s->sendb);
  free(s->nbr);
  free(s->rank_slot);
  md_dbuf_free(&s->recvb);
  md_dbuf_free(&s->localq);
  s->sendb = NULL;
  s->nbr = NULL;
  s->rank_slot = NULL;
  s->nnbr = 0;
}

int md_neighbours_update(md_sim_t *s) {
  for (int k = 0; k < s->nnbr; k++) md_dbuf_free(&s->sendb[k]);
  free(s->sendb);
  free(s->nbr);
  s->sendb = NULL;
  s->nbr = NULL;
  s->nnbr = 0;
  if (!s->rank_slot && !(s->rank_slot = malloc(sizeof(int) * (size_t)s->size)))
    return BALLAST_ENOMEM;
  for (int r = 0; r < s->size; r++) s->rank_slot[r] = -1;
  int adj[26], n = 0;
  for (int k = 0; k < s->nmine; k++) {
    int na = md_block_neighbours(s, s->mine[k], adj);
    for (int j = 0; j < na; j++) {
      int r = s->owner[adj[j]];
      if (r != s->rank && s->rank_slot[r] < 0) {
        s->rank_slot[r] = 0;
        n++;
      }
    }
  }
  s->nbr = malloc(sizeof(int) * (size_t)(n ? n : 1));
  s->sendb = calloc((size_t)(n ? n : 1), sizeof(md_dbuf_t));
  if (!s->nbr || !s->sendb) return BALLAST_ENOMEM;
  for (int r = 0; r < s->size; r++)
    if (s->rank_slot[r] == 0) {
      s->rank_slot[r] = s->nnbr;
      s->nbr[s->nnbr++] = r;
    }
  return 0;
}

/* Sends sendb[k] to nbr[k] for every neighbour and receives theirs, all
 * concatenated into recvb. The relation is symmetric, so each pair of
 * neighbours exchanges exactly one message per call (possibly empty); the
 * receiver learns its size by probing, which saves a round of counts. */
static int exchange(md_sim_t *s, int tag) {
  int nn = s->nnbr, rc = 0;
  s->recvb.n = 0;
  if (nn == 0) return 0;
  MPI_Request *req = malloc(sizeof(MPI_Request) * (size_t)nn);
  if (!req) return BALLAST_ENOMEM;
  for (int k = 0; k < nn; k++)
    /* counts stay below 2^31 doubles per neighbour for any size we run */
    MPI_Isend(s->sendb[k].v, (int)s->sendb[k].n, MPI_DOUBLE, s->nbr[k], tag, s->comm,
              &req[k]);
  for (int k = 0; k < nn && !rc; k++) {
    MPI_Status st;
    int cnt;
    if (MPI_Probe(s->nbr[k], tag, s->comm, &st) != MPI_SUCCESS ||
        MPI_Get_count(&st, MPI_DOUBLE, &cnt) != MPI_SUCCESS) {
      rc = BALLAST_EMPI;
      break;
    }
    if (md_dbuf_reserve(&s->recvb, s->recvb.n + (size_t)cnt + 1)) {
      rc = BALLAST_ENOMEM;
      break;
    }
    if (MPI_Recv(s->recvb.v + s->recvb.n, cnt, MPI_DOUBLE, s->nbr[k], tag, s->comm,
                 MPI_STATUS_IGNORE) != MPI_SUCCESS)
      rc = BALLAST_EMPI;
    s->recvb.n += (size_t)cnt;
  }
  if (MPI_Waitall(nn, req, MPI_STATUSES_IGNORE) != MPI_SUCCESS && !rc) rc = BALLAST_EMPI;
  free(req);
  return rc;
}

static int ghost_push(md_block_t *t, int lcell, double x, double y, double z) {
  if (t->ng == t->gcap && md_ghost_reserve(t, t->ng + 1)) return BALLAST_ENOMEM;
  int g = t->ng++;
  t->gx[g] = x;
  t->gy[g] = y;
  t->gz[g] = z;
  t->gcell[g] = lcell;
  return 0;
}

int md_halo_exchange(md_sim_t *s) {
  for (int k = 0; k < s->nmine; k++) s->blocks[s->mine[k]].ng = 0;
  for (int k = 0; k < s->nnbr; k++) s->sendb[k].n = 0;
  for (int k = 0; k < s->nmine; k++) {
    int sb = s->mine[k];
    const md_block_t *blk = &s->blocks[sb];
    for (int i = 0; i < blk->n; i++) {
      double pos[MD_DIM] = {blk->x[i], blk->y[i], blk->z[i]};
      const md_ghostmap_t *g[MD_DIM];
      int c[MD_DIM];
      for (int d = 0; d < MD_DIM; d++) {
        c[d] = md_cell_coord(s, d, pos[d]);
        g[d] = &s->gmap[d][c[d]];
      }
      for (int a = 0; a < g[0]->n; a++)
        for (int b = 0; b < g[1]->n; b++)
          for (int e = 0; e < g[2]->n; e++) {
            int tb[MD_DIM] = {g[0]->blk[a], g[1]->blk[b], g[2]->blk[e]};
            int sh[MD_DIM] = {g[0]->shift[a], g[1]->shift[b], g[2]->shift[e]};
            int t = md_block_index(s, tb[0], tb[1], tb[2]);
            if (t == sb && !sh[0] && !sh[1] && !sh[2]) continue;  /* own cell */
            int lc = 0;
            double rec[MD_GREC];
            for (int d = 0; d < MD_DIM; d++) {
              int w = s->blo[d][tb[d] + 1] - s->blo[d][tb[d]] + 2;
              lc = lc * w + (c[d] + sh[d] * s->nc[d] - s->blo[d][tb[d]] + 1);
              rec[2 + d] = pos[d] + sh[d] * s->L[d];
            }
            int dest = s->owner[t];
            if (dest == s->rank) {
              if (ghost_push(&s->blocks[t], lc, rec[2], rec[3], rec[4])) return BALLAST_ENOMEM;
            } else {
              rec[0] = t;
              rec[1] = lc;
              if (dbuf_append(&s->sendb[s->rank_slot[dest]], rec, MD_GREC))
                return BALLAST_ENOMEM;
            }
          }
    }
  }
  int rc = exchange(s, TAG_HALO);
  if (rc) return rc;
  for (size_t o = 0; o < s->recvb.n; o += MD_GREC) {
    const double *r = s->recvb.v + o;
    md_block_t *t = &s->blocks[(int)r[0]];
    if (ghost_push(t, (int)r[1], r[2], r[3], r[4])) return BALLAST_ENOMEM;
  }
  return 0;
}

static int adopt(md_sim_t *s, const double *r) {
  int b = (int)r[0];
  if (b < 0 || b >= s->nblocks || s->owner[b] != s->rank) return BALLAST_EINVAL;
  return md_block_push(&s->blocks[b], r + 1, (int64_t)r[10]);
}

int md_migrate(md_sim_t *s) {
  for (int k = 0; k < s->nnbr; k++) s->sendb[k].n = 0;
  s->localq.n = 0;
  for (int k = 0; k < s->nmine; k++) {
    int b = s->mine[k];
    md_block_t *blk = &s->blocks[b];
    for (int i = 0; i < blk->n;) {
      int nb = md_block_of_pos(s, blk->x[i], blk->y[i], blk->z[i]);
      if (nb == b) {
        i++;
        continue;
      }
      double rec[MD_MREC] = {nb, blk->x[i], blk->y[i], blk->z[i], blk->vx[i], blk->vy[i],
                             blk->vz[i], blk->fx[i], blk->fy[i], blk->fz[i],
                             (double)blk->id[i]};
      int dest = s->owner[nb];
      md_dbuf_t *q;
      if (dest == s->rank) {
        q = &s->localq;
      } else if (s->rank_slot[dest] >= 0) {
        q = &s->sendb[s->rank_slot[dest]];
      } else {
        fprintf(stderr, "ballast-md: rank %d: particle %lld jumped from block %d to "
                "non-adjacent block %d in one step (time step too large?)\n", s->rank,
                (long long)blk->id[i], b, nb);
        return BALLAST_ERANGE;
      }
      if (dbuf_append(q, rec, MD_MREC)) return BALLAST_ENOMEM;
      md_block_remove(blk, i);
    }
  }
  for (size_t o = 0; o < s->localq.n; o += MD_MREC) {
    int rc = adopt(s, s->localq.v + o);
    if (rc) return rc;
  }
  int rc = exchange(s, TAG_MIG);
  if (rc) return rc;
  for (size_t o = 0; o < s->recvb.n; o += MD_MREC)
    if ((rc = adopt(s, s->recvb.v + o))) return rc;
  return 0;
}
