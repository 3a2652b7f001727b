/* The distributed profile of ballast-cube (see cube_server.h): opening on
 * every rank, the owned rows, and the passes that answer queries.
 *
 * Inclusive values of an exclusive metric: the cnodes a rank owns inside
 * the queried subtree fall into fragments (connected pieces; a fragment's
 * root is the queried cnode or a cnode whose parent lives elsewhere). Each
 * rank posts its receives for the children it does not own, computes its
 * own cnodes' values meanwhile, then finishes a fragment as soon as its
 * last remote child's value has come in and sends the fragment's value to
 * the owner of its parent. The fragments form a tree, so this never waits
 * in a cycle; receives and sends are bounded rings handled by one
 * MPI_Waitany loop. */
#define _GNU_SOURCE
#include "cube_server.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ballast/common.h>

#define RING 64
#define TAG_RESULT 7

static int agree(srv_t *s, int rc) {
  int all;
  MPI_Allreduce(&rc, &all, 1, MPI_INT, MPI_MIN, s->comm);
  return all;
}

static int alloc_rows(srv_t *s, char *err, size_t errlen) {
  const cube_t *c = s->c;
  s->rows = calloc((size_t)c->nmetric, sizeof *s->rows);
  if (!s->rows) return BALLAST_ENOMEM;
  for (int m = 0; m < c->nmetric; m++) {
    if (!c->metric[m].has_data) continue;
    size_t n = (size_t)s->nown * (size_t)c->nloc;
    s->rows[m] = malloc((n ? n : 1) * sizeof(double));
    if (!s->rows[m]) {
      snprintf(err, errlen, "out of memory for %zu values of metric '%s'", n,
               c->metric[m].uniq_name);
      return BALLAST_ENOMEM;
    }
    s->row_bytes += n * sizeof(double);
    int rc = cube_read_rows(c, m, s->own, s->nown, s->rows[m], err, errlen);
    if (rc) return rc;
  }
  return 0;
}

static int own_cnodes(srv_t *s) {
  const cube_t *c = s->c;
  s->slot = malloc((size_t)c->ncnode * sizeof *s->slot);
  if (!s->slot) return BALLAST_ENOMEM;
  s->nown = 0;
  for (int64_t i = 0; i < c->ncnode; i++) s->nown += (s->owner[i] == s->rank);
  s->own = malloc((size_t)(s->nown ? s->nown : 1) * sizeof *s->own);
  s->cost = calloc((size_t)(s->nown ? s->nown : 1), sizeof *s->cost);
  if (!s->own || !s->cost) return BALLAST_ENOMEM;
  int64_t k = 0;
  for (int64_t i = 0; i < c->ncnode; i++) {
    s->slot[i] = s->owner[i] == s->rank ? k : -1;
    if (s->owner[i] == s->rank) s->own[k++] = (int32_t)i;
  }
  return 0;
}

int srv_open(const char *path, dist_t d, unsigned seed, MPI_Comm comm, srv_t **out,
             char *err, size_t errlen) {
  *out = NULL;
  srv_t *s = calloc(1, sizeof *s);
  if (!s) return BALLAST_ENOMEM;
  MPI_Comm_dup(comm, &s->comm);
  MPI_Comm_rank(s->comm, &s->rank);
  MPI_Comm_size(s->comm, &s->size);
  err[0] = '\0';
  int rc = agree(s, cube_open(path, &s->c, err, errlen));
  if (!rc) {
    s->owner = malloc((size_t)s->c->ncnode * sizeof *s->owner);
    rc = s->owner ? 0 : BALLAST_ENOMEM;
    /* dist_compute() is collective for "ballast": every rank calls it. */
    int r2 = dist_compute(s->c, d, seed, s->comm, s->owner, err, errlen);
    rc = agree(s, rc ? rc : r2);
  }
  if (!rc) rc = agree(s, own_cnodes(s));
  if (!rc) rc = agree(s, alloc_rows(s, err, errlen));
  if (rc) {
    if (!err[0]) snprintf(err, errlen, "%s: failed on another rank (%s)", path,
                          ballast_strerror(rc));
    srv_close(s);
    return rc;
  }
  *out = s;
  return 0;
}

void srv_close(srv_t *s) {
  if (!s) return;
  for (int m = 0; s->rows && s->c && m < s->c->nmetric; m++) free(s->rows[m]);
  free(s->rows);
  free(s->own);
  free(s->cost);
  free(s->slot);
  free(s->owner);
  cube_close(s->c);
  if (s->comm != MPI_COMM_NULL) MPI_Comm_free(&s->comm);
  free(s);
}

/* ------------------------------------------------------------------ */
/* Values of one row                                                   */
/* ------------------------------------------------------------------ */

static double agg2(cube_agg_t a, double x, double y) {
  if (a == CUBE_AGG_MIN) return y < x ? y : x;
  if (a == CUBE_AGG_MAX) return y > x ? y : x;
  return x + y;
}

static double agg_unit(cube_agg_t a) {
  return a == CUBE_AGG_MIN ? INFINITY : a == CUBE_AGG_MAX ? -INFINITY : 0.0;
}

static int64_t width(const srv_t *s, const sel_t *sel, int per_loc) {
  return per_loc ? (sel->n < 0 ? s->c->nloc : sel->n) : 1;
}

/* out[0..w) = the owned cnode's row reduced to the selection. */
static void row_values_(const srv_t *s, int m, int64_t slot, const sel_t *sel, int per_loc,
                        double *out) {
  const double *row = s->rows[m] + slot * s->c->nloc;
  cube_agg_t a = s->c->metric[m].agg;
  if (per_loc) {
    if (sel->n < 0) memcpy(out, row, (size_t)s->c->nloc * sizeof *out);
    else for (int64_t k = 0; k < sel->n; k++) out[k] = row[sel->idx[k]];
    return;
  }
  double v = agg_unit(a);
  if (sel->n < 0) {
    if (a == CUBE_AGG_SUM) {
      /* Four partial sums: the hot loop of the benchmark. */
      double p[4] = {0, 0, 0, 0};
      int64_t l = 0, n = s->c->nloc;
      for (; l + 4 <= n; l += 4) {
        p[0] += row[l]; p[1] += row[l + 1]; p[2] += row[l + 2]; p[3] += row[l + 3];
      }
      for (; l < n; l++) p[0] += row[l];
      v = (p[0] + p[1]) + (p[2] + p[3]);
    } else {
      for (int64_t l = 0; l < s->c->nloc; l++) v = agg2(a, v, row[l]);
    }
  } else {
    for (int64_t k = 0; k < sel->n; k++) v = agg2(a, v, row[sel->idx[k]]);
  }
  out[0] = v;
}

/* row_values_(), its time added to the cnode's query cost (what
 * srv_rebalance() balances). */
static void row_values(srv_t *s, int m, int64_t slot, const sel_t *sel, int per_loc,
                       double *out) {
  double t0 = MPI_Wtime();
  row_values_(s, m, slot, sel, per_loc, out);
  s->cost[slot] += MPI_Wtime() - t0;
}

/* ------------------------------------------------------------------ */
/* Subtree pass                                                        */
/* ------------------------------------------------------------------ */

typedef struct {
  srv_t *s;
  int m, tag;
  int64_t top, w;
  double *acc;        /* nown * w */
  int64_t nfrag;
  int64_t *frag_of;   /* per own slot */
  int64_t *fstart;    /* CSR of the fragments' slots, ascending */
  int64_t *fnodes;
  int64_t *pending;   /* remote children still to come, per fragment */
  int64_t *ready;     /* stack of fragments ready to finish */
  int64_t nready;
  int64_t expect;     /* remote values still to receive */
  /* Rings: RING receives, RING sends. */
  MPI_Request req[2 * RING];
  double *rbuf, *sbuf;
  int nposted;
} pass_t;

static int in_sub(const cube_t *c, int64_t top, int64_t y) {
  return top < 0 || (y >= top && y < top + c->subtree[top]);
}

static int pass_fragments(pass_t *p) {
  srv_t *s = p->s;
  const cube_t *c = s->c;
  int64_t n = s->nown;
  p->frag_of = malloc((size_t)(n + 1) * sizeof *p->frag_of);
  p->fstart = calloc((size_t)(n + 2), sizeof *p->fstart);
  p->fnodes = malloc((size_t)(n + 1) * sizeof *p->fnodes);
  p->pending = calloc((size_t)(n + 1), sizeof *p->pending);
  p->ready = malloc((size_t)(n + 1) * sizeof *p->ready);
  if (!p->frag_of || !p->fstart || !p->fnodes || !p->pending || !p->ready)
    return BALLAST_ENOMEM;
  for (int64_t k = 0; k < n; k++) {
    int32_t y = s->own[k];
    p->frag_of[k] = -1;
    if (!in_sub(c, p->top, y)) continue;
    int32_t par = c->parent[y];
    if (y == p->top || par < 0 || s->owner[par] != s->rank) p->frag_of[k] = p->nfrag++;
    else p->frag_of[k] = p->frag_of[s->slot[par]];
    for (int64_t j = c->child_start[y]; j < c->child_start[y + 1]; j++)
      if (s->owner[c->child[j]] != s->rank) {
        p->pending[p->frag_of[k]]++;
        p->expect++;
      }
  }
  for (int64_t k = 0; k < n; k++)
    if (p->frag_of[k] >= 0) p->fstart[p->frag_of[k] + 1]++;
  for (int64_t f = 0; f < p->nfrag; f++) p->fstart[f + 1] += p->fstart[f];
  int64_t *cur = p->ready; /* borrowed as fill cursors */
  for (int64_t f = 0; f < p->nfrag; f++) cur[f] = p->fstart[f];
  for (int64_t k = 0; k < n; k++)
    if (p->frag_of[k] >= 0) p->fnodes[cur[p->frag_of[k]]++] = k;
  p->nready = 0;
  for (int64_t f = 0; f < p->nfrag; f++)
    if (p->pending[f] == 0) p->ready[p->nready++] = f;
  return 0;
}

static void post_recv(pass_t *p, int i) {
  if (p->expect - p->nposted <= 0) {
    p->req[i] = MPI_REQUEST_NULL;
    return;
  }
  MPI_Irecv(p->rbuf + (size_t)i * (size_t)(p->w + 1), (int)(p->w + 1), MPI_DOUBLE,
            MPI_ANY_SOURCE, p->tag, p->s->comm, &p->req[i]);
  p->nposted++;
}

static void got_value(pass_t *p, const double *msg) {
  srv_t *s = p->s;
  int64_t y = (int64_t)msg[0];
  int64_t ps = s->slot[s->c->parent[y]];
  cube_agg_t a = s->c->metric[p->m].agg;
  double *dst = p->acc + ps * p->w;
  for (int64_t l = 0; l < p->w; l++) dst[l] = agg2(a, dst[l], msg[1 + l]);
  int64_t f = p->frag_of[ps];
  if (--p->pending[f] == 0) p->ready[p->nready++] = f;
}

/* Folds a finished fragment bottom up; returns its root's slot. */
static int64_t fold(pass_t *p, int64_t f) {
  srv_t *s = p->s;
  cube_agg_t a = s->c->metric[p->m].agg;
  for (int64_t i = p->fstart[f + 1] - 1; i > p->fstart[f]; i--) {
    int64_t k = p->fnodes[i];
    int64_t ps = s->slot[s->c->parent[s->own[k]]];
    double *src = p->acc + k * p->w, *dst = p->acc + ps * p->w;
    for (int64_t l = 0; l < p->w; l++) dst[l] = agg2(a, dst[l], src[l]);
  }
  return p->fnodes[p->fstart[f]];
}

static int pass_loop(pass_t *p) {
  srv_t *s = p->s;
  int64_t done = 0;
  int free_send[RING], nfree = RING;
  for (int i = 0; i < RING; i++) free_send[i] = RING + i;
  while (done < p->nfrag) {
    if (p->nready > 0) {
      int64_t f = p->ready[p->nready - 1];
      int32_t y = s->own[p->fnodes[p->fstart[f]]], par = s->c->parent[y];
      int sends = !(y == p->top || par < 0);
      /* A fragment that must send waits for a free send slot (serving
       * receives meanwhile) before it is folded, so it is folded once. */
      if (!sends || nfree > 0) {
        p->nready--;
        int64_t k = fold(p, f);
        done++;
        if (sends) {
          int i = free_send[--nfree];
          double *b = p->sbuf + (size_t)(i - RING) * (size_t)(p->w + 1);
          b[0] = (double)y;
          memcpy(b + 1, p->acc + k * p->w, (size_t)p->w * sizeof *b);
          MPI_Isend(b, (int)(p->w + 1), MPI_DOUBLE, s->owner[par], p->tag, s->comm, &p->req[i]);
        }
        continue;
      }
    }
    int idx;
    MPI_Status st;
    if (MPI_Waitany(2 * RING, p->req, &idx, &st) != MPI_SUCCESS) return BALLAST_EMPI;
    if (idx == MPI_UNDEFINED) return BALLAST_EMISMATCH; /* nothing left to wait for */
    if (idx < RING) {
      got_value(p, p->rbuf + (size_t)idx * (size_t)(p->w + 1));
      p->expect--;
      p->nposted--;
      post_recv(p, idx);
    } else {
      free_send[nfree++] = idx;
    }
  }
  MPI_Waitall(RING, p->req + RING, MPI_STATUSES_IGNORE);
  return 0;
}

static void pass_free(pass_t *p) {
  free(p->frag_of); free(p->fstart); free(p->fnodes); free(p->pending); free(p->ready);
  free(p->rbuf); free(p->sbuf);
}

/* acc (nown * w, caller-allocated) receives the inclusive values of every
 * owned cnode in the subtree of top (top < 0: the whole forest). */
static int subtree_pass(srv_t *s, int m, int64_t top, const sel_t *sel, int per_loc,
                        double *acc) {
  pass_t p;
  memset(&p, 0, sizeof p);
  p.s = s;
  p.m = m;
  p.top = top;
  p.w = width(s, sel, per_loc);
  p.acc = acc;
  p.tag = 100 + (s->tag++ % 30000);
  int rc = pass_fragments(&p);
  if (!rc) {
    p.rbuf = malloc((size_t)RING * (size_t)(p.w + 1) * sizeof(double));
    p.sbuf = malloc((size_t)RING * (size_t)(p.w + 1) * sizeof(double));
    if (!p.rbuf || !p.sbuf) rc = BALLAST_ENOMEM;
  }
  rc = agree(s, rc);
  /* The receives are posted before the local work, which they overlap. */
  if (!rc) {
    for (int i = 0; i < 2 * RING; i++) p.req[i] = MPI_REQUEST_NULL;
    for (int i = 0; i < RING; i++) post_recv(&p, i);
    for (int64_t k = 0; k < s->nown; k++)
      if (p.frag_of[k] >= 0) row_values(s, m, k, sel, per_loc, acc + k * p.w);
    rc = pass_loop(&p);
  }
  pass_free(&p);
  return rc;
}

/* ------------------------------------------------------------------ */
/* Exclusive values of an inclusive metric                             */
/* ------------------------------------------------------------------ */

/* out (w values, on x's owner) = row(x) - sum of x's children's rows. The
 * owners of children send one partial sum each; x's owner posts its
 * receives before its own work. */
static int children_pass(srv_t *s, int m, int64_t x, const sel_t *sel, int per_loc,
                         double *out) {
  const cube_t *c = s->c;
  int64_t w = width(s, sel, per_loc);
  int tag = 100 + (s->tag++ % 30000);
  int o = s->owner[x];
  char *from = calloc((size_t)s->size, 1);
  double *part = calloc((size_t)(w ? w : 1) * 2, sizeof *part), *tmp = part + w;
  double *rbuf = NULL;
  MPI_Request *req = NULL;
  int nsrc = 0, mine = 0, rc = (from && part) ? 0 : BALLAST_ENOMEM;
  for (int64_t k = c->child_start[x]; !rc && k < c->child_start[x + 1]; k++) {
    int r = s->owner[c->child[k]];
    if (r != o && !from[r]) { from[r] = 1; nsrc++; }
    if (r == s->rank) mine = 1;
  }
  if (!rc && s->rank == o) {
    rbuf = malloc((size_t)(nsrc ? nsrc : 1) * (size_t)(w ? w : 1) * sizeof *rbuf);
    req = malloc((size_t)(nsrc ? nsrc : 1) * sizeof *req);
    if (!rbuf || !req) rc = BALLAST_ENOMEM;
  }
  rc = agree(s, rc);
  if (!rc && s->rank == o) {
    for (int i = 0, r = 0; r < s->size; r++)
      if (from[r]) { MPI_Irecv(rbuf + (size_t)i * (size_t)w, (int)w, MPI_DOUBLE, r, tag,
                               s->comm, &req[i]); i++; }
  }
  if (!rc && mine) {
    for (int64_t k = c->child_start[x]; k < c->child_start[x + 1]; k++) {
      int32_t y = c->child[k];
      if (s->owner[y] != s->rank) continue;
      row_values(s, m, s->slot[y], sel, per_loc, tmp);
      for (int64_t l = 0; l < w; l++) part[l] += tmp[l];
    }
    if (s->rank != o) MPI_Send(part, (int)w, MPI_DOUBLE, o, tag, s->comm);
  }
  if (!rc && s->rank == o) {
    row_values(s, m, s->slot[x], sel, per_loc, out);
    for (int64_t l = 0; l < w; l++) out[l] -= part[l];
    MPI_Waitall(nsrc, req, MPI_STATUSES_IGNORE);
    for (int i = 0; i < nsrc; i++)
      for (int64_t l = 0; l < w; l++) out[l] -= rbuf[(size_t)i * (size_t)w + (size_t)l];
  }
  free(from); free(part); free(rbuf); free(req);
  return rc;
}

/* ------------------------------------------------------------------ */
/* Queries                                                             */
/* ------------------------------------------------------------------ */

static int check_metric(const srv_t *s, int m, int inclusive, char *err, size_t errlen) {
  const cube_metric_t *mt = &s->c->metric[m];
  if (!mt->has_data) {
    snprintf(err, errlen, "metric '%s' has no values in the archive%s", mt->uniq_name,
             mt->kind == CUBE_DERIVED ? " (derived metrics are not evaluated)" : "");
    return BALLAST_ENOTSUP;
  }
  if (!inclusive && mt->kind == CUBE_INCLUSIVE && mt->agg != CUBE_AGG_SUM) {
    snprintf(err, errlen, "metric '%s' is an inclusive %s: its exclusive value is undefined",
             mt->uniq_name, mt->dtype_name);
    return BALLAST_ENOTSUP;
  }
  return 0;
}

int srv_value(srv_t *s, int m, int64_t x, int inclusive, const sel_t *sel, int per_loc,
              double *out, char *err, size_t errlen) {
  int rc = check_metric(s, m, inclusive, err, errlen);
  if (rc) return rc;
  const cube_metric_t *mt = &s->c->metric[m];
  int64_t w = width(s, sel, per_loc);
  int o = s->owner[x];
  double *res = malloc((size_t)(w ? w : 1) * sizeof *res);
  double *acc = NULL;
  if (mt->kind == CUBE_EXCLUSIVE && inclusive)
    acc = malloc((size_t)(s->nown ? s->nown : 1) * (size_t)(w ? w : 1) * sizeof *acc);
  rc = agree(s, (res && (acc || !(mt->kind == CUBE_EXCLUSIVE && inclusive))) ? 0
                                                                              : BALLAST_ENOMEM);
  if (!rc) {
    if (mt->kind == CUBE_EXCLUSIVE && inclusive) {
      rc = subtree_pass(s, m, x, sel, per_loc, acc);
      if (s->rank == o) memcpy(res, acc + s->slot[x] * w, (size_t)w * sizeof *res);
    } else if (mt->kind == CUBE_INCLUSIVE && !inclusive) {
      rc = children_pass(s, m, x, sel, per_loc, res);
    } else if (s->rank == o) {
      row_values(s, m, s->slot[x], sel, per_loc, res);
    }
    rc = agree(s, rc);
  }
  if (!rc) {
    if (s->rank == o && o != 0)
      MPI_Send(res, (int)w, MPI_DOUBLE, 0, TAG_RESULT, s->comm);
    if (s->rank == 0) {
      if (o == 0) memcpy(out, res, (size_t)w * sizeof *out);
      else MPI_Recv(out, (int)w, MPI_DOUBLE, o, TAG_RESULT, s->comm, MPI_STATUS_IGNORE);
    }
  } else if (!err[0]) {
    snprintf(err, errlen, "query failed: %s", ballast_strerror(rc));
  }
  free(res);
  free(acc);
  return rc;
}

typedef struct {
  double v;
  int64_t cnode;
} top_t;

static int cmp_top(const void *a, const void *b) {
  const top_t *x = a, *y = b;
  int xn = isnan(x->v), yn = isnan(y->v);
  if (xn != yn) return xn - yn; /* NaN last */
  if (!xn && x->v != y->v) return x->v < y->v ? 1 : -1;
  return (x->cnode > y->cnode) - (x->cnode < y->cnode);
}

/* Exclusive values of an inclusive metric for every owned cnode: the rows
 * minus the children's, those of remote children exchanged in one
 * all-to-all of (parent, value) pairs. */
static int all_children(srv_t *s, int m, const sel_t *sel, double *val) {
  const cube_t *c = s->c;
  int *cnt = calloc((size_t)s->size * 4, sizeof *cnt);
  double *sendb = malloc((size_t)(s->nown ? s->nown : 1) * 2 * sizeof *sendb);
  int rc = (cnt && sendb) ? 0 : BALLAST_ENOMEM;
  rc = agree(s, rc);
  if (rc) { free(cnt); free(sendb); return rc; }
  int *rcnt = cnt + s->size, *sdis = rcnt + s->size, *rdis = sdis + s->size;
  for (int64_t k = 0; k < s->nown; k++) {
    int32_t par = c->parent[s->own[k]];
    if (par >= 0 && s->owner[par] != s->rank) cnt[s->owner[par]] += 2;
  }
  for (int r = 1; r < s->size; r++) sdis[r] = sdis[r - 1] + cnt[r - 1];
  MPI_Alltoall(cnt, 1, MPI_INT, rcnt, 1, MPI_INT, s->comm);
  int total = 0;
  for (int r = 0; r < s->size; r++) { rdis[r] = total; total += rcnt[r]; }
  double *recvb = malloc((size_t)(total ? total : 1) * sizeof *recvb);
  int *fill = malloc((size_t)s->size * sizeof *fill);
  rc = agree(s, (recvb && fill) ? 0 : BALLAST_ENOMEM);
  if (!rc) {
    memcpy(fill, sdis, (size_t)s->size * sizeof *fill);
    for (int64_t k = 0; k < s->nown; k++) {
      int32_t y = s->own[k], par = c->parent[y];
      double v;
      row_values(s, m, k, sel, 0, &v);
      if (par >= 0 && s->owner[par] != s->rank) {
        sendb[fill[s->owner[par]]++] = (double)par;
        sendb[fill[s->owner[par]]++] = v;
      } else if (par >= 0) {
        val[s->slot[par]] -= v;
      }
    }
    MPI_Alltoallv(sendb, cnt, sdis, MPI_DOUBLE, recvb, rcnt, rdis, MPI_DOUBLE, s->comm);
    for (int i = 0; i + 1 < total; i += 2) val[s->slot[(int64_t)recvb[i]]] -= recvb[i + 1];
  }
  free(cnt); free(sendb); free(recvb); free(fill);
  return rc;
}

static int gather_top(srv_t *s, top_t *loc, int nloc_top, int k, int64_t *cnode, double *val,
                      int *nout) {
  int *counts = NULL, *disp = NULL;
  top_t *all = NULL;
  int n2 = 2 * nloc_top, total = 0;
  double *pk = malloc((size_t)(n2 ? n2 : 1) * sizeof *pk), *allpk = NULL;
  if (!pk) return BALLAST_ENOMEM;
  for (int i = 0; i < nloc_top; i++) { pk[2 * i] = (double)loc[i].cnode; pk[2 * i + 1] = loc[i].v; }
  if (s->rank == 0) {
    counts = malloc((size_t)s->size * sizeof *counts);
    disp = malloc((size_t)s->size * sizeof *disp);
  }
  MPI_Gather(&n2, 1, MPI_INT, counts, 1, MPI_INT, 0, s->comm);
  if (s->rank == 0) {
    for (int r = 0; r < s->size; r++) { disp[r] = total; total += counts[r]; }
    allpk = malloc((size_t)(total ? total : 1) * sizeof *allpk);
    all = malloc((size_t)(total / 2 + 1) * sizeof *all);
  }
  MPI_Gatherv(pk, n2, MPI_DOUBLE, allpk, counts, disp, MPI_DOUBLE, 0, s->comm);
  if (s->rank == 0) {
    for (int i = 0; i < total / 2; i++) { all[i].cnode = (int64_t)allpk[2 * i]; all[i].v = allpk[2 * i + 1]; }
    qsort(all, (size_t)(total / 2), sizeof *all, cmp_top);
    *nout = total / 2 < k ? total / 2 : k;
    for (int i = 0; i < *nout; i++) { cnode[i] = all[i].cnode; val[i] = all[i].v; }
  }
  free(pk); free(counts); free(disp); free(allpk); free(all);
  return 0;
}

int srv_top(srv_t *s, int m, int inclusive, int k, int64_t *cnode, double *val, int *nout,
            char *err, size_t errlen) {
  int rc = check_metric(s, m, inclusive, err, errlen);
  if (rc) return rc;
  const cube_metric_t *mt = &s->c->metric[m];
  sel_t all = {-1, NULL};
  double *v = malloc((size_t)(s->nown ? s->nown : 1) * sizeof *v);
  top_t *t = malloc((size_t)(s->nown ? s->nown : 1) * sizeof *t);
  rc = agree(s, (v && t) ? 0 : BALLAST_ENOMEM);
  if (!rc && mt->kind == CUBE_EXCLUSIVE && inclusive) {
    rc = subtree_pass(s, m, -1, &all, 0, v);
  } else if (!rc) {
    for (int64_t i = 0; i < s->nown; i++) row_values(s, m, i, &all, 0, &v[i]);
    if (mt->kind == CUBE_INCLUSIVE && !inclusive) rc = all_children(s, m, &all, v);
  }
  rc = agree(s, rc);
  if (!rc) {
    /* call paths without a value (a MIN/MAX metric's identity) rank nowhere */
    int64_t nv = 0;
    for (int64_t i = 0; i < s->nown; i++)
      if (!cube_no_value(mt, v[i])) {
        t[nv].v = v[i];
        t[nv++].cnode = s->own[i];
      }
    qsort(t, (size_t)nv, sizeof *t, cmp_top);
    int nl = nv < k ? (int)nv : k;
    rc = agree(s, gather_top(s, t, nl, k, cnode, val, nout));
  }
  if (rc && !err[0]) snprintf(err, errlen, "query failed: %s", ballast_strerror(rc));
  free(v);
  free(t);
  return rc;
}

long srv_vmhwm_kib(void) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long v = -1;
  while (f && fgets(line, sizeof line, f))
    if (strncmp(line, "VmHWM:", 6) == 0) v = strtol(line + 6, NULL, 10);
  if (f) fclose(f);
  return v;
}
