/*
 * Reads of the distributions mon keeps (mon_internal.h): a region's
 * instance wall times (t->regdist) and an activity's call durations
 * (t->actdist), one distribution per thread, combined on read. A query
 * gathers the threads' distributions (and, for a group, its member
 * activities') and asks common/dist.c for the quantiles: O(threads x
 * groups of buckets), independent of the number of regions, signatures and
 * values.
 */
#include <stdlib.h>
#include <string.h>

#include "common/common_internal.h"
#include "mon/mon_core.h"
#include "tool/tool_internal.h"

enum { STACK_DISTS = 32 };

/* The distributions of one region or activity: d[0..n), malloc'ed when the
 * stack's are too few (free with gather_done). */
typedef struct {
  const ballast__dist_t *stack[STACK_DISTS];
  const ballast__dist_t **d;
  int n;
} gather_t;

static void gather_done(gather_t *g) {
  if (g->d != g->stack)
    free(g->d);
}

static int gather(gather_t *g, int region, int act) {
  int nt = mon__tls_count(), per = 1;
  int lo = act, hi = act + 1;
  unsigned mask = 0;
  if (region < 0 && act >= MON__NACT) {
    lo = 0;
    hi = MON__NACT;
    mask = 1u << (act - MON__NACT);
    per = MON__NACT;
  }
  size_t cap = (size_t)nt * (size_t)per;
  g->d = g->stack;
  g->n = 0;
  if (cap > STACK_DISTS && !(g->d = malloc(cap * sizeof *g->d)))
    return BALLAST_ENOMEM;
  /* threads registered after the count are left out (they are new) */
  int seen = 0;
  for (const mon__tls_t *t = mon__tls_first(); t && seen < nt; t = t->next, seen++) {
    if (region >= 0) {
      const ballast__dist_t *d = mon__regdist_peek(t, region);
      if (d)
        g->d[g->n++] = d;
      continue;
    }
    for (int a = lo; a < hi; a++)
      if (!mask || (mon__act_groups[a] & mask))
        g->d[g->n++] = &t->actdist[a];
  }
  return 0;
}

static int check_region(int id) {
  if (id < 0 || id >= mon__region_count())
    return BALLAST_ENOTFOUND;
  return 0;
}

static int check_act(int act) {
  return act >= 0 && act < MON__NACT + MON__NGROUPS ? 0 : BALLAST_ENOTFOUND;
}

/* The quantiles first, the summary after: values recorded meanwhile only
 * widen [min, max], so a reader always sees min <= every quantile <= max. */
static int query(gather_t *g, const double *q, int nq, double *out, mon__diststats_t *st) {
  int rc = nq > 0 ? ballast__dist_quantiles(g->d, g->n, q, nq, out) : 0;
  ballast__dist_moments_t m;
  ballast__dist_moments(g->d, g->n, &m);
  if (st) {
    memset(st, 0, sizeof *st);
    if (m.count) {
      st->count = m.count;
      st->lost = m.lost;
      st->min = (double)m.min * 1e-9;
      st->max = (double)m.max * 1e-9;
      st->mean = m.mean * 1e-9;
      st->var = ballast__dist_variance(&m) * 1e-18;
    }
  }
  if (rc == 0 && !m.count)
    rc = BALLAST_ENODATA;
  for (int i = 0; rc == 0 && i < nq; i++)
    out[i] *= 1e-9;
  return rc;
}

static int args_ok(const double *q, int nq, double *out) {
  if (nq < 0 || (nq > 0 && (!q || !out)))
    return BALLAST_EINVAL;
  for (int i = 0; i < nq; i++)
    if (!(q[i] >= 0.0 && q[i] <= 1.0))
      return BALLAST_EINVAL;
  return 0;
}

int mon__region_quantiles(int id, const double *q, int nq, double *out,
                          mon__diststats_t *st) {
  int rc = args_ok(q, nq, out);
  if (rc || (rc = check_region(id)))
    return rc;
  if (st)
    memset(st, 0, sizeof *st);
  if (id == 0)
    return BALLAST_ENODATA;
  gather_t g;
  if ((rc = gather(&g, id, 0)) == 0)
    rc = query(&g, q, nq, out, st);
  gather_done(&g);
  return rc;
}

int mon__act_quantiles(int act, const double *q, int nq, double *out,
                       mon__diststats_t *st) {
  int rc = args_ok(q, nq, out);
  if (rc || (rc = check_act(act)))
    return rc;
  gather_t g;
  if ((rc = gather(&g, -1, act)) == 0)
    rc = query(&g, q, nq, out, st);
  gather_done(&g);
  return rc;
}

static int flat_of(int region, int act, ballast__dist_flat_t *f) {
  gather_t g;
  int rc = gather(&g, region, act);
  for (int i = 0; rc == 0 && i < g.n; i++)
    ballast__dist_flat_add(f, g.d[i]);
  gather_done(&g);
  return rc;
}

int mon__region_dist_flat(int id, ballast__dist_flat_t *f) {
  int rc = f ? check_region(id) : BALLAST_EINVAL;
  return rc || id == 0 ? rc : flat_of(id, 0, f);
}

int mon__act_dist_flat(int act, ballast__dist_flat_t *f) {
  int rc = f ? check_act(act) : BALLAST_EINVAL;
  return rc ? rc : flat_of(-1, act, f);
}

/* Buckets summed over the gathered distributions, in increasing order. */
static int foreach_of(int region, int act, int (*cb)(unsigned b, uint64_t n, void *ctx),
                      void *ctx) {
  gather_t g;
  int rc = gather(&g, region, act);
  if (rc)
    return rc;
  if (g.n == 1) {
    rc = ballast__dist_foreach(g.d[0], cb, ctx);
  } else {
    for (unsigned b = 0; rc == 0 && b < BALLAST__DIST_NBUCKETS; b++) {
      uint64_t n = 0;
      for (int i = 0; i < g.n; i++)
        n += ballast__dist_count_at(g.d[i], b);
      if (n)
        rc = cb(b, n, ctx);
    }
  }
  gather_done(&g);
  return rc;
}

int mon__region_dist_foreach(int id, int (*cb)(unsigned b, uint64_t n, void *ctx),
                             void *ctx) {
  int rc = cb ? check_region(id) : BALLAST_EINVAL;
  return rc || id == 0 ? rc : foreach_of(id, 0, cb, ctx);
}

int mon__act_dist_foreach(int act, int (*cb)(unsigned b, uint64_t n, void *ctx),
                          void *ctx) {
  int rc = cb ? check_act(act) : BALLAST_EINVAL;
  return rc ? rc : foreach_of(-1, act, cb, ctx);
}

/* The tools interface's api->dist_quantiles (installed at MPI_Init): the
 * same reads in nanoseconds. */
int mon__tool_dist(int kind, int id, int nq, const double *q, double *out_ns,
                   uint64_t *count) {
  if (MON__LD(&mon__state) != MON__ON)
    return BALLAST_ESTATE;
  mon__diststats_t st;
  int rc = kind == BALLAST_TOOL_DIST_REGION
               ? mon__region_quantiles(id, q, nq, out_ns, &st)
               : (id >= 0 && id < MON__NACT ? mon__act_quantiles(id, q, nq, out_ns, &st)
                                            : BALLAST_ENOTFOUND);
  if (count)
    *count = rc == 0 ? st.count : 0;
  for (int i = 0; rc == 0 && i < nq; i++)
    out_ns[i] *= 1e9;
  return rc;
}
