/*
 * Neighbourhood communication: the ranks owning blocks adjacent to this
 * rank's blocks, the ghost (halo) exchange before the force loop (in full
 * at a list rebuild, recording the ghost plan; between rebuilds only the
 * ghosts' positions along that plan), and the migration of particles that
 * left their block (at rebuilds). Ranks talk only to their
 * neighbours (one message per neighbour and exchange, sized by probing);
 * blocks on the same rank are served by direct copies.
 */
#include "md.h"

#include <stdlib.h>
#include <string.h>

/* Tags of ballast-md's point-to-point messages (any distinct values). */
enum { TAG_HALO = 601, TAG_MIG, TAG_REFRESH };
/* First capacities of the staging buffers and plan arrays (doubled after). */
#define DBUF_FIRST_CAP 1024
#define PLAN_FIRST_CAP 256

int md_dbuf_reserve(md_dbuf_t *b, size_t cap) {
  if (cap <= b->cap) return 0;
  size_t nc = b->cap ? b->cap : DBUF_FIRST_CAP;
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

void md_hplan_free(md_hplan_t *h) {
  free(h->loc); free(h->sendp); free(h->sendp_off); free(h->recvp); free(h->recvp_off);
  memset(h, 0, sizeof *h);
}

void md_neighbours_free(md_sim_t *s) {
  md_hplan_free(&s->hplan);
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
  /* the ghost plan names neighbour slots and blocks' owners: it is void, and
   * the next step rebuilds the lists (every rank calls this together) */
  s->hplan.valid = 0;
  s->rebuild_due = 1;
  for (int k = 0; k < s->nnbr; k++) md_dbuf_free(&s->sendb[k]);
  free(s->sendb);
  free(s->nbr);
  s->sendb = NULL;
  s->nbr = NULL;
  s->nnbr = 0;
  if (!s->rank_slot && !(s->rank_slot = malloc(sizeof(int) * (size_t)s->size)))
    return BALLAST_ENOMEM;
  for (int r = 0; r < s->size; r++) s->rank_slot[r] = -1;
  int adj[MD_NEIGHBOURS_MAX], n = 0;
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
static int exchange(md_sim_t *s, int tag, int *counts) {
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
    if (counts) counts[k] = cnt;
  }
  if (MPI_Waitall(nn, req, MPI_STATUSES_IGNORE) != MPI_SUCCESS && !rc) rc = BALLAST_EMPI;
  free(req);
  return rc;
}

static int ghost_push(md_block_t *t, double x, double y, double z) {
  if (t->ng == t->gcap && md_ghost_reserve(t, t->ng + 1)) return BALLAST_ENOMEM;
  int g = t->ng++;
  t->gx[g] = x;
  t->gy[g] = y;
  t->gz[g] = z;
  return 0;
}

static int grow(void **p, int *cap, int need, size_t elem) {
  if (need <= *cap) return 0;
  int nc = *cap ? *cap : PLAN_FIRST_CAP;
  while (nc < need) nc *= 2;
  void *q = realloc(*p, elem * (size_t)nc);
  if (!q) return BALLAST_ENOMEM;
  *p = q;
  *cap = nc;
  return 0;
}

/* Records where ghost record rec (of owned particle si of block sb) goes:
 * a local copy (pushed now) or the send list of its owner's slot, kept in
 * the order of the records in sendb (the receiver keeps that order). */
static int ghost_route(md_sim_t *s, int sb, int si, int t, const double rec[MD_GREC],
                       const double sh[MD_DIM]) {
  md_hplan_t *h = &s->hplan;
  md_gsrc_t e = {sb, si, t, 0, {sh[0], sh[1], sh[2]}};
  int dest = s->owner[t];
  if (dest == s->rank) {
    e.tg = s->blocks[t].ng;
    if (ghost_push(&s->blocks[t], rec[1], rec[2], rec[3]) ||
        grow((void **)&h->loc, &h->loccap, h->nloc + 1, sizeof *h->loc))
      return BALLAST_ENOMEM;
    h->loc[h->nloc++] = e;
    return 0;
  }
  int k = s->rank_slot[dest];
  e.tb = k;  /* grouped by slot once every record is routed */
  if (dbuf_append(&s->sendb[k], rec, MD_GREC) ||
      grow((void **)&h->sendp, &h->sendcap, h->nsend + 1, sizeof *h->sendp))
    return BALLAST_ENOMEM;
  h->sendp[h->nsend++] = e;
  return 0;
}

/* Every ghost record of owned particle i of block sb, routed. */
static int ghost_records(md_sim_t *s, int sb, int i) {
  const md_block_t *blk = &s->blocks[sb];
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
        double rec[MD_GREC], shl[MD_DIM];
        for (int d = 0; d < MD_DIM; d++) {
          shl[d] = sh[d] * s->L[d];
          rec[1 + d] = pos[d] + shl[d];
        }
        rec[0] = t;
        int rc = ghost_route(s, sb, i, t, rec, shl);
        if (rc) return rc;
      }
  return 0;
}

/* Stable regrouping of the remote sources by neighbour slot (held in tb
 * while routing), into the order each slot's records were sent. */
static int group_sends(md_sim_t *s) {
  md_hplan_t *h = &s->hplan;
  int nn = s->nnbr, rc;
  md_gsrc_t *sorted = malloc(sizeof *sorted * (size_t)(h->nsend ? h->nsend : 1));
  if (!sorted) return BALLAST_ENOMEM;
  memset(h->sendp_off, 0, sizeof(int) * (size_t)(nn + 1));
  for (int e = 0; e < h->nsend; e++) h->sendp_off[h->sendp[e].tb + 1]++;
  for (int k = 0; k < nn; k++) h->sendp_off[k + 1] += h->sendp_off[k];
  int *cur = malloc(sizeof(int) * (size_t)(nn ? nn : 1));
  rc = cur ? 0 : BALLAST_ENOMEM;
  if (!rc) {
    memcpy(cur, h->sendp_off, sizeof(int) * (size_t)nn);
    for (int e = 0; e < h->nsend; e++) sorted[cur[h->sendp[e].tb]++] = h->sendp[e];
    if (h->nsend) memcpy(h->sendp, sorted, sizeof *sorted * (size_t)h->nsend);
  }
  free(cur);
  free(sorted);
  return rc;
}

int md_halo_exchange(md_sim_t *s) {
  md_hplan_t *h = &s->hplan;
  int nn = s->nnbr, rc, one = nn + 1;
  h->valid = 0;
  h->nloc = h->nsend = h->nrecv = 0;
  /* the slot tables are sized to the neighbour count of this plan */
  int *so = realloc(h->sendp_off, sizeof(int) * (size_t)one);
  if (so) h->sendp_off = so;
  int *ro = so ? realloc(h->recvp_off, sizeof(int) * (size_t)one) : NULL;
  if (ro) h->recvp_off = ro;
  if (!so || !ro) return BALLAST_ENOMEM;
  for (int k = 0; k < s->nmine; k++) {
    s->blocks[s->mine[k]].ng = 0;
    s->blocks[s->mine[k]].nl.valid = 0;  /* new ghosts: new lists */
  }
  for (int k = 0; k < nn; k++) s->sendb[k].n = 0;
  for (int k = 0; k < s->nmine; k++)
    for (int i = 0; i < s->blocks[s->mine[k]].n; i++)
      if ((rc = ghost_records(s, s->mine[k], i))) return rc;
  if ((rc = group_sends(s))) return rc;
  if ((rc = exchange(s, TAG_HALO, h->recvp_off + 1))) return rc;
  h->recvp_off[0] = 0;
  for (int k = 0; k < nn; k++) h->recvp_off[k + 1] = h->recvp_off[k] + h->recvp_off[k + 1] / MD_GREC;
  if ((rc = grow((void **)&h->recvp, &h->recvcap, h->recvp_off[nn], sizeof *h->recvp)))
    return rc;
  for (size_t o = 0; o < s->recvb.n; o += MD_GREC) {
    const double *r = s->recvb.v + o;
    int b = (int)r[0];
    if (b < 0 || b >= s->nblocks || s->owner[b] != s->rank) return BALLAST_EINVAL;
    md_block_t *t = &s->blocks[b];
    h->recvp[h->nrecv++] = (md_gslot_t){b, t->ng};
    if (ghost_push(t, r[1], r[2], r[3])) return BALLAST_ENOMEM;
  }
  h->valid = 1;
  return 0;
}

int md_halo_refresh(md_sim_t *s) {
  md_hplan_t *h = &s->hplan;
  int nn = s->nnbr, rc = 0;
  if (!h->valid) return BALLAST_ESTATE;
  if (md_dbuf_reserve(&s->recvb, MD_RREC * (size_t)h->nrecv + 1)) return BALLAST_ENOMEM;
  MPI_Request *req = malloc(sizeof(MPI_Request) * (size_t)(2 * nn + 1));
  if (!req) return BALLAST_ENOMEM;
  int nreq = 0;
  /* both ends know every count from the rebuild: receives first, no probe */
  for (int k = 0; k < nn && !rc; k++) {
    int off = h->recvp_off[k], cnt = h->recvp_off[k + 1] - off;
    if (MPI_Irecv(s->recvb.v + MD_RREC * (size_t)off, MD_RREC * cnt, MPI_DOUBLE, s->nbr[k],
                  TAG_REFRESH, s->comm, &req[nreq++]) != MPI_SUCCESS)
      rc = BALLAST_EMPI;
  }
  for (int k = 0; k < nn && !rc; k++) {
    int off = h->sendp_off[k], cnt = h->sendp_off[k + 1] - off;
    md_dbuf_t *sb = &s->sendb[k];
    if (md_dbuf_reserve(sb, MD_RREC * (size_t)cnt + 1)) { rc = BALLAST_ENOMEM; break; }
    for (int e = 0; e < cnt; e++) {
      const md_gsrc_t *g = &h->sendp[off + e];
      const md_block_t *b = &s->blocks[g->sb];
      sb->v[MD_RREC * e] = b->x[g->si] + g->sh[0];
      sb->v[MD_RREC * e + 1] = b->y[g->si] + g->sh[1];
      sb->v[MD_RREC * e + 2] = b->z[g->si] + g->sh[2];
    }
    if (MPI_Isend(sb->v, MD_RREC * cnt, MPI_DOUBLE, s->nbr[k], TAG_REFRESH, s->comm,
                  &req[nreq++]) != MPI_SUCCESS)
      rc = BALLAST_EMPI;
  }
  /* local copies while the messages travel */
  for (int e = 0; e < h->nloc; e++) {
    const md_gsrc_t *g = &h->loc[e];
    const md_block_t *b = &s->blocks[g->sb];
    md_block_t *t = &s->blocks[g->tb];
    t->gx[g->tg] = b->x[g->si] + g->sh[0];
    t->gy[g->tg] = b->y[g->si] + g->sh[1];
    t->gz[g->tg] = b->z[g->si] + g->sh[2];
  }
  if (MPI_Waitall(nreq, req, MPI_STATUSES_IGNORE) != MPI_SUCCESS && !rc) rc = BALLAST_EMPI;
  free(req);
  if (rc) return rc;
  for (int e = 0; e < h->nrecv; e++) {
    md_block_t *t = &s->blocks[h->recvp[e].tb];
    const double *v = s->recvb.v + MD_RREC * (size_t)e;
    t->gx[h->recvp[e].tg] = v[0];
    t->gy[h->recvp[e].tg] = v[1];
    t->gz[h->recvp[e].tg] = v[2];
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
  int rc = exchange(s, TAG_MIG, NULL);
  if (rc) return rc;
  for (size_t o = 0; o < s->recvb.n; o += MD_MREC)
    if ((rc = adopt(s, s->recvb.v + o))) return rc;
  return 0;
}
