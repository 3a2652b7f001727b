/*
 * Log-bucketed distributions (dist.h): the slow half of an insert, reads,
 * quantiles, merges and the flat form for reductions and files.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <ballast/common.h>

#include "common/dist.h"

#define ICOUNT_MASK ((1ull << BALLAST__DIST_ICOUNT_BITS) - 1)
#define LDACQ(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define STREL(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)

uint64_t ballast__dist_bucket_lo(unsigned b) {
  if (b < BALLAST__DIST_SUB)
    return b;
  unsigned g = b >> BALLAST__DIST_SUB_BITS, s = b & (BALLAST__DIST_SUB - 1);
  unsigned e = g + BALLAST__DIST_SUB_BITS - 1; /* the octave 2^e */
  return (uint64_t)(BALLAST__DIST_SUB + s) << (e - BALLAST__DIST_SUB_BITS);
}

uint64_t ballast__dist_bucket_hi(unsigned b) {
  if (b < BALLAST__DIST_SUB)
    return b;
  unsigned e = (b >> BALLAST__DIST_SUB_BITS) + BALLAST__DIST_SUB_BITS - 1;
  return ballast__dist_bucket_lo(b) + ((1ull << (e - BALLAST__DIST_SUB_BITS)) - 1);
}

void ballast__dist_init(ballast__dist_t *d) { memset(d, 0, sizeof *d); }

void ballast__dist_free(ballast__dist_t *d) {
  if (!d)
    return;
  if (d->table) {
    for (int g = 0; g < BALLAST__DIST_NGROUPS; g++)
      free(d->table[g]);
    free(d->table);
  }
  ballast__dist_init(d);
}

/* The group of bucket b, allocated and published on first use (NULL on OOM). */
static uint64_t *group_get(uint64_t **tab, unsigned b) {
  unsigned g = b >> BALLAST__DIST_SUB_BITS;
  uint64_t *grp = tab[g];
  if (!grp) {
    grp = calloc(BALLAST__DIST_SUB, sizeof *grp);
    if (!grp)
      return NULL;
    STREL(&tab[g], grp);
  }
  return grp;
}

/* Moves the inline entries into a new table, published last (readers use
 * either the frozen inline entries or the table, never half of each). */
static uint64_t **promote(ballast__dist_t *d) {
  uint64_t **tab = calloc(BALLAST__DIST_NGROUPS, sizeof *tab);
  if (!tab)
    return NULL;
  for (int i = 0; i < BALLAST__DIST_INLINE; i++) {
    uint64_t e = d->inl[i];
    if (!e)
      continue;
    unsigned b = (unsigned)(e >> BALLAST__DIST_ICOUNT_BITS) - 1;
    uint64_t *grp = group_get(tab, b);
    if (!grp) {
      for (int g = 0; g < BALLAST__DIST_NGROUPS; g++)
        free(tab[g]);
      free(tab);
      return NULL;
    }
    grp[b & (BALLAST__DIST_SUB - 1)] = e & ICOUNT_MASK;
  }
  STREL(&d->table, tab);
  return tab;
}

/* Adds n to bucket b (n >= 1). 0 or BALLAST_ENOMEM. */
static int bucket_add(ballast__dist_t *d, unsigned b, uint64_t n) {
  uint64_t **tab = d->table;
  if (!tab) {
    for (int i = 0; i < BALLAST__DIST_INLINE; i++) {
      uint64_t e = d->inl[i];
      if (e == 0) {
        if (n > ICOUNT_MASK)
          break;
        BALLAST__DIST_ST(&d->inl[i], ((uint64_t)b + 1) << BALLAST__DIST_ICOUNT_BITS | n);
        return 0;
      }
      if (e >> BALLAST__DIST_ICOUNT_BITS == (uint64_t)b + 1) {
        if (ICOUNT_MASK - (e & ICOUNT_MASK) < n)
          break; /* the 48-bit inline count would overflow */
        BALLAST__DIST_ST(&d->inl[i], e + n);
        return 0;
      }
    }
    if (!(tab = promote(d)))
      return BALLAST_ENOMEM;
  }
  uint64_t *grp = group_get(tab, b);
  if (!grp)
    return BALLAST_ENOMEM;
  uint64_t *c = &grp[b & (BALLAST__DIST_SUB - 1)];
  BALLAST__DIST_ST(c, *c + n);
  return 0;
}

void ballast__dist_add_slow(ballast__dist_t *d, unsigned b) {
  (void)bucket_add(d, b, 1); /* out of memory: counted, not in a bucket (lost) */
}

int ballast__dist_add_bucket(ballast__dist_t *d, unsigned b, uint64_t n) {
  if (b >= BALLAST__DIST_NBUCKETS)
    return BALLAST_ERANGE;
  return n ? bucket_add(d, b, n) : 0;
}

uint64_t ballast__dist_count_at(const ballast__dist_t *d, unsigned b) {
  if (b >= BALLAST__DIST_NBUCKETS)
    return 0;
  uint64_t **tab = LDACQ(&((ballast__dist_t *)d)->table);
  if (tab) {
    uint64_t *grp = LDACQ(&tab[b >> BALLAST__DIST_SUB_BITS]);
    return grp ? BALLAST__DIST_LD(&grp[b & (BALLAST__DIST_SUB - 1)]) : 0;
  }
  for (int i = 0; i < BALLAST__DIST_INLINE; i++) {
    uint64_t e = BALLAST__DIST_LD(&d->inl[i]);
    if (e >> BALLAST__DIST_ICOUNT_BITS == (uint64_t)b + 1)
      return e & ICOUNT_MASK;
  }
  return 0;
}

/* 1 when d may hold values in group g. */
static int group_used(const ballast__dist_t *d, unsigned g) {
  uint64_t **tab = LDACQ(&((ballast__dist_t *)d)->table);
  if (tab)
    return LDACQ(&tab[g]) != NULL;
  for (int i = 0; i < BALLAST__DIST_INLINE; i++) {
    uint64_t e = BALLAST__DIST_LD(&d->inl[i]);
    if (e && ((e >> BALLAST__DIST_ICOUNT_BITS) - 1) >> BALLAST__DIST_SUB_BITS == g)
      return 1;
  }
  return 0;
}

int ballast__dist_foreach(const ballast__dist_t *d,
                          int (*cb)(unsigned b, uint64_t n, void *ctx), void *ctx) {
  for (unsigned g = 0; g < BALLAST__DIST_NGROUPS; g++) {
    if (!group_used(d, g))
      continue;
    for (unsigned s = 0; s < BALLAST__DIST_SUB; s++) {
      unsigned b = (g << BALLAST__DIST_SUB_BITS) | s;
      uint64_t n = ballast__dist_count_at(d, b);
      int rc = n ? cb(b, n, ctx) : 0;
      if (rc)
        return rc;
    }
  }
  return 0;
}

/* ---- moments ---------------------------------------------------------------- */

void ballast__dist_moments_init(ballast__dist_moments_t *m) {
  memset(m, 0, sizeof *m);
  m->min = UINT64_MAX;
}

void ballast__dist_moments_merge(ballast__dist_moments_t *a,
                                 const ballast__dist_moments_t *b) {
  if (b->count == 0)
    return;
  if (a->count == 0) {
    *a = *b;
    return;
  }
  double na = (double)a->count, nb = (double)b->count, n = na + nb;
  double delta = b->mean - a->mean;
  a->mean += delta * nb / n;
  a->m2 += b->m2 + delta * delta * na * nb / n;
  a->count += b->count;
  a->lost += b->lost;
  if (b->min < a->min)
    a->min = b->min;
  if (b->max > a->max)
    a->max = b->max;
}

/* Values in d's buckets. */
static uint64_t bucket_total(const ballast__dist_t *d) {
  uint64_t n = 0;
  uint64_t **tab = LDACQ(&((ballast__dist_t *)d)->table);
  if (!tab) {
    for (int i = 0; i < BALLAST__DIST_INLINE; i++)
      n += BALLAST__DIST_LD(&d->inl[i]) & ICOUNT_MASK;
    return n;
  }
  for (unsigned g = 0; g < BALLAST__DIST_NGROUPS; g++) {
    uint64_t *grp = LDACQ(&tab[g]);
    for (unsigned s = 0; grp && s < BALLAST__DIST_SUB; s++)
      n += BALLAST__DIST_LD(&grp[s]);
  }
  return n;
}

/* One distribution's moments, read with the count first (acquire). */
static void moments_of(const ballast__dist_t *d, ballast__dist_moments_t *m) {
  ballast__dist_moments_init(m);
  uint64_t n = LDACQ(&((ballast__dist_t *)d)->count);
  if (n == 0)
    return;
  double sumd = (double)BALLAST__DIST_LD(&d->sumd), nd = (double)n;
  m->count = n;
  m->min = BALLAST__DIST_LD(&d->min);
  m->max = BALLAST__DIST_LD(&d->max);
  uint64_t kept = bucket_total(d);
  m->lost = kept < n ? n - kept : 0;
  m->mean = (double)BALLAST__DIST_LD(&d->shift) + sumd / nd;
  m->m2 = ballast__dist_ldd(&d->sumd2) - sumd * sumd / nd;
  if (m->m2 < 0)
    m->m2 = 0; /* rounding on equal values */
}

void ballast__dist_moments(const ballast__dist_t *const *d, int nd,
                           ballast__dist_moments_t *out) {
  ballast__dist_moments_init(out);
  for (int i = 0; i < nd; i++) {
    if (!d[i])
      continue;
    ballast__dist_moments_t m;
    moments_of(d[i], &m);
    ballast__dist_moments_merge(out, &m);
  }
}

double ballast__dist_variance(const ballast__dist_moments_t *m) {
  return m->count < 2 ? 0.0 : m->m2 / (double)(m->count - 1);
}

/* ---- quantiles ------------------------------------------------------------------ */

/* Shared by both forms: a bucket source and the q's targets. */
typedef struct {
  const double *q;
  int nq;
  double *out;
  uint64_t n, min, max, cum;
  uint64_t *rank; /* per q: the order statistic sought */
  int left;       /* q's not answered yet */
} qwalk_t;

static int qwalk_start(qwalk_t *w, const double *q, int nq, double *out,
                       uint64_t *rank) {
  for (int i = 0; i < nq; i++)
    if (!(q[i] >= 0.0 && q[i] <= 1.0))
      return BALLAST_EINVAL;
  w->q = q;
  w->nq = nq;
  w->out = out;
  w->rank = rank;
  w->cum = 0;
  w->left = nq;
  for (int i = 0; i < nq; i++) {
    double k = ceil(q[i] * (double)w->n);
    rank[i] = k < 1.0 ? 1 : k > (double)w->n ? w->n : (uint64_t)k;
    if (q[i] == 0.0 || q[i] == 1.0) {
      out[i] = q[i] == 0.0 ? (double)w->min : (double)w->max;
      rank[i] = 0; /* answered */
      w->left--;
    }
  }
  return 0;
}

/* The midpoint of bucket b clamped into [min, max]. */
static double rep(const qwalk_t *w, unsigned b) {
  uint64_t lo = ballast__dist_bucket_lo(b), hi = ballast__dist_bucket_hi(b);
  double v = (double)lo + (double)(hi - lo) / 2.0;
  if (v < (double)w->min)
    v = (double)w->min;
  if (v > (double)w->max)
    v = (double)w->max;
  return v;
}

static void qwalk_bucket(qwalk_t *w, unsigned b, uint64_t c) {
  w->cum += c;
  for (int i = 0; i < w->nq; i++)
    if (w->rank[i] && w->rank[i] <= w->cum) {
      w->out[i] = rep(w, b);
      w->rank[i] = 0;
      w->left--;
    }
}

/* Answers the q's a concurrent writer left short (buckets read after the
 * count): the largest value seen. */
static void qwalk_end(qwalk_t *w) {
  for (int i = 0; w->left && i < w->nq; i++)
    if (w->rank[i])
      w->out[i] = (double)w->max;
}

enum { QMAX_STACK = 16 };

int ballast__dist_quantiles(const ballast__dist_t *const *d, int nd,
                            const double *q, int nq, double *out) {
  if (!d || nd < 0 || nq < 0 || (nq && (!q || !out)))
    return BALLAST_EINVAL;
  ballast__dist_moments_t m;
  ballast__dist_moments(d, nd, &m);
  uint64_t n = m.count - m.lost; /* the values in buckets */
  if (m.count == 0 || n == 0)
    return BALLAST_ENODATA;
  uint64_t rank_stack[QMAX_STACK], *rank = rank_stack;
  if (nq > QMAX_STACK && !(rank = malloc((size_t)nq * sizeof *rank)))
    return BALLAST_ENOMEM;
  qwalk_t w = {.n = n, .min = m.min, .max = m.max};
  int rc = qwalk_start(&w, q, nq, out, rank);
  for (unsigned g = 0; rc == 0 && w.left && g < BALLAST__DIST_NGROUPS; g++) {
    int used = 0;
    for (int i = 0; i < nd && !used; i++)
      used = d[i] && group_used(d[i], g);
    if (!used)
      continue;
    for (unsigned s = 0; w.left && s < BALLAST__DIST_SUB; s++) {
      unsigned b = (g << BALLAST__DIST_SUB_BITS) | s;
      uint64_t c = 0;
      for (int i = 0; i < nd; i++)
        if (d[i])
          c += ballast__dist_count_at(d[i], b);
      if (c)
        qwalk_bucket(&w, b, c);
    }
  }
  if (rc == 0)
    qwalk_end(&w);
  if (rank != rank_stack)
    free(rank);
  return rc;
}

/* ---- merges and the flat form --------------------------------------------------- */

typedef struct {
  ballast__dist_t *dst;
  int failed;
} merge_ctx_t;

static int merge_cb(unsigned b, uint64_t n, void *ctx) {
  merge_ctx_t *m = ctx;
  if (bucket_add(m->dst, b, n) != 0)
    m->failed = 1;
  return 0;
}

int ballast__dist_merge(ballast__dist_t *dst, const ballast__dist_t *src) {
  ballast__dist_moments_t a, b;
  moments_of(src, &b);
  if (b.count == 0)
    return 0;
  moments_of(dst, &a);
  merge_ctx_t ctx = {dst, 0};
  ballast__dist_foreach(src, merge_cb, &ctx);
  ballast__dist_moments_merge(&a, &b);
  /* Back to shifted sums around the merged mean's integer part. */
  uint64_t shift = (uint64_t)floor(a.mean);
  double rest = a.mean - (double)shift;
  dst->shift = shift;
  dst->sumd = (int64_t)llround(rest * (double)a.count);
  dst->sumd2 = a.m2 + (double)dst->sumd * (double)dst->sumd / (double)a.count;
  dst->min = a.min;
  dst->max = a.max;
  __atomic_store_n(&dst->count, a.count, __ATOMIC_RELEASE);
  return ctx.failed ? BALLAST_ENOMEM : 0;
}

void ballast__dist_flat_init(ballast__dist_flat_t *f) {
  memset(f->bucket, 0, sizeof f->bucket);
  ballast__dist_moments_init(&f->m);
}

static int flat_cb(unsigned b, uint64_t n, void *ctx) {
  ((ballast__dist_flat_t *)ctx)->bucket[b] += n;
  return 0;
}

void ballast__dist_flat_add(ballast__dist_flat_t *f, const ballast__dist_t *d) {
  ballast__dist_moments_t m;
  moments_of(d, &m);
  if (m.count == 0)
    return;
  ballast__dist_foreach(d, flat_cb, f);
  ballast__dist_moments_merge(&f->m, &m);
}

void ballast__dist_flat_merge(ballast__dist_flat_t *dst,
                              const ballast__dist_flat_t *src) {
  for (int b = 0; b < BALLAST__DIST_NBUCKETS; b++)
    dst->bucket[b] += src->bucket[b];
  ballast__dist_moments_merge(&dst->m, &src->m);
}

int ballast__dist_flat_quantiles(const ballast__dist_flat_t *f, const double *q,
                                 int nq, double *out) {
  if (!f || nq < 0 || (nq && (!q || !out)))
    return BALLAST_EINVAL;
  uint64_t n = 0;
  for (int b = 0; b < BALLAST__DIST_NBUCKETS; b++)
    n += f->bucket[b];
  if (f->m.count == 0 || n == 0)
    return BALLAST_ENODATA;
  uint64_t rank_stack[QMAX_STACK], *rank = rank_stack;
  if (nq > QMAX_STACK && !(rank = malloc((size_t)nq * sizeof *rank)))
    return BALLAST_ENOMEM;
  qwalk_t w = {.n = n, .min = f->m.min, .max = f->m.max};
  int rc = qwalk_start(&w, q, nq, out, rank);
  for (unsigned b = 0; rc == 0 && w.left && b < BALLAST__DIST_NBUCKETS; b++)
    if (f->bucket[b])
      qwalk_bucket(&w, b, f->bucket[b]);
  if (rc == 0)
    qwalk_end(&w);
  if (rank != rank_stack)
    free(rank);
  return rc;
}
