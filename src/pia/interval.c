/* PIA: interval data. An interval keeps, for each tracked region and
 * activity, the snapshot taken at the last mark; reads subtract it from the
 * current value. Tracked entities live in two uthash tables keyed by id, so
 * a read is one hash lookup plus one O(1) mon read. */
#include <stdlib.h>

#include <uthash.h>

#include "pia/pia_internal.h"

typedef struct {
  int id;
  mon__regstats_t snap;
  UT_hash_handle hh;
} iv_region_t;

typedef struct {
  int id;
  mon__actstats_t snap;
  UT_hash_handle hh;
} iv_act_t;

struct pia_interval {
  iv_region_t *regions; /* uthash head */
  iv_act_t *acts;       /* uthash head */
};

static int snap_region(int id, mon__regstats_t *s) {
  return mon__region_read(id, s);
}

static int snap_act(int act, mon__actstats_t *s) {
  pia__act_zero(s);
  return mon__act_read(act, PIA_REGION_ALL, s);
}

BALLAST_API int pia_interval_create(pia_interval_t **out) {
  if (!out)
    return BALLAST_EINVAL;
  *out = calloc(1, sizeof(**out));
  return *out ? 0 : BALLAST_ENOMEM;
}

BALLAST_API void pia_interval_destroy(pia_interval_t *iv) {
  if (!iv)
    return;
  iv_region_t *r, *rt;
  HASH_ITER(hh, iv->regions, r, rt) {
    HASH_DEL(iv->regions, r);
    free(r);
  }
  iv_act_t *a, *at;
  HASH_ITER(hh, iv->acts, a, at) {
    HASH_DEL(iv->acts, a);
    free(a);
  }
  free(iv);
}

BALLAST_API int pia_interval_track_region(pia_interval_t *iv, pia_regid_t id) {
  if (!iv)
    return BALLAST_EINVAL;
  int rc = pia__check_region(id);
  if (rc < 0)
    return rc;
  iv_region_t *r;
  HASH_FIND_INT(iv->regions, &id, r);
  if (r)
    return 0;
  if (!(r = calloc(1, sizeof(*r))))
    return BALLAST_ENOMEM;
  r->id = id;
  if ((rc = snap_region(id, &r->snap)) < 0) {
    free(r);
    return rc;
  }
  HASH_ADD_INT(iv->regions, id, r);
  return 0;
}

BALLAST_API int pia_interval_track_activity(pia_interval_t *iv, pia_act_t act) {
  if (!iv)
    return BALLAST_EINVAL;
  int rc = pia__check_act(act);
  if (rc < 0)
    return rc;
  iv_act_t *a;
  HASH_FIND_INT(iv->acts, &act, a);
  if (a)
    return 0;
  if (!(a = calloc(1, sizeof(*a))))
    return BALLAST_ENOMEM;
  a->id = act;
  if ((rc = snap_act(act, &a->snap)) < 0) {
    free(a);
    return rc;
  }
  HASH_ADD_INT(iv->acts, id, a);
  return 0;
}

BALLAST_API int pia_interval_mark(pia_interval_t *iv) {
  if (!iv)
    return BALLAST_EINVAL;
  if (!ballast__mpi_live())
    return BALLAST_ESTATE;
  int rc;
  for (iv_region_t *r = iv->regions; r; r = r->hh.next)
    if ((rc = snap_region(r->id, &r->snap)) < 0)
      return rc;
  for (iv_act_t *a = iv->acts; a; a = a->hh.next)
    if ((rc = snap_act(a->id, &a->snap)) < 0)
      return rc;
  return 0;
}

/* Counters only grow, but two reads of a counter another thread is updating
 * may see it a few ns apart: clamp differences at zero rather than return a
 * negative count. */
static uint64_t diff_u64(uint64_t now, uint64_t then) {
  return now > then ? now - then : 0;
}
static double diff_dbl(double now, double then) {
  return now > then ? now - then : 0.0;
}

BALLAST_API int pia_interval_region_data(pia_interval_t *iv, pia_regid_t id,
                                         pia_regdata_t *out) {
  if (!iv || !out)
    return BALLAST_EINVAL;
  iv_region_t *r;
  HASH_FIND_INT(iv->regions, &id, r);
  if (!r)
    return BALLAST_ENOTFOUND;
  mon__regstats_t now;
  int rc = snap_region(id, &now);
  if (rc < 0)
    return rc;
  mon__regstats_t d = now;
  d.count = diff_u64(now.count, r->snap.count);
  d.wtime = diff_dbl(now.wtime, r->snap.wtime);
  d.mtime = diff_dbl(now.mtime, r->snap.mtime);
  d.cputime = diff_dbl(now.cputime, r->snap.cputime);
  for (size_t i = 0; i < sizeof(d.hwc) / sizeof(d.hwc[0]); i++)
    d.hwc[i] = now.hwc[i] - r->snap.hwc[i];
  pia__regdata_fill(out, id, &d);
  return 0;
}

BALLAST_API int pia_interval_activity_data(pia_interval_t *iv, pia_act_t act,
                                           pia_actdata_t *out) {
  if (!iv || !out)
    return BALLAST_EINVAL;
  iv_act_t *a;
  HASH_FIND_INT(iv->acts, &act, a);
  if (!a)
    return BALLAST_ENOTFOUND;
  mon__actstats_t now;
  int rc = snap_act(act, &now);
  if (rc < 0)
    return rc;
  out->ncalls = (long long)diff_u64(now.ncalls, a->snap.ncalls);
  out->nbytes = (long long)diff_u64(now.nbytes, a->snap.nbytes);
  out->tsum = diff_dbl(now.tsum, a->snap.tsum);
  if (out->ncalls > 0) {
    out->tmin = now.tmin; /* whole run: a minimum cannot be differenced */
    out->tmax = now.tmax;
  } else {
    out->tmin = INFINITY;
    out->tmax = 0.0;
  }
  return 0;
}
