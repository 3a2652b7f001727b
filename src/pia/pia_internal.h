/* pia's private helpers, shared by its files; never installed. pia reads mon
 * only through the read half of src/mon/mon_internal.h. */
#ifndef BALLAST_PIA_INTERNAL_H
#define BALLAST_PIA_INTERNAL_H

#include <limits.h>
#include <math.h>

#include <ballast/pia.h>

#include "common/common_internal.h"
#include "mon/mon_internal.h"

_Static_assert(sizeof(((mon__regstats_t *)0)->hwc) <= PIA_HWC_MAX * sizeof(long long),
               "pia_regdata_t must hold every counter mon keeps");

/** Region lookup by name through the calling thread's cache (namecache.c):
 * the id, or a negative code from mon. name is non-NULL. */
int pia__region_find(const char *name);
/** The stored name of region id (as mon__region_name), answered without
 * touching mon's region record when id is the calling thread's last lookup. */
const char *pia__region_name(int id);
/** Activity lookup by name through a shared read-only table (namecache.c). */
int pia__act_find(const char *name);

/** 0 when \a id names an existing region, else BALLAST_ENOTFOUND. */
static inline int pia__check_region(pia_regid_t id) {
  if (!ballast__mpi_live())
    return BALLAST_ESTATE;
  if (id < 0 || id >= mon__region_count())
    return BALLAST_ENOTFOUND;
  return 0;
}

/** 0 when \a act names an existing activity or group, else BALLAST_ENOTFOUND. */
static inline int pia__check_act(pia_act_t act) {
  if (!ballast__mpi_live())
    return BALLAST_ESTATE;
  if (act < 0 || act >= mon__act_count())
    return BALLAST_ENOTFOUND;
  return 0;
}

/** An empty activity record, as mon__act_read() expects to add into. */
static inline void pia__act_zero(mon__actstats_t *s) {
  s->ncalls = 0;
  s->nbytes = 0;
  s->tsum = 0.0;
  s->tmin = INFINITY;
  s->tmax = 0.0;
}

/** Clamp a 64-bit count into the seed's int field. */
static inline int pia__count_int(uint64_t c) {
  return c > (uint64_t)INT_MAX ? INT_MAX : (int)c;
}

/** Fill a public region record from mon's statistics. */
static inline void pia__regdata_fill(pia_regdata_t *d, pia_regid_t id,
                                     const mon__regstats_t *s) {
  d->id = id;
  d->name = pia__region_name(id);
  d->count = pia__count_int(s->count);
  d->count64 = (long long)s->count;
  d->wtime = s->wtime;
  d->mtime = s->mtime;
  d->cputime = s->cputime;
  int n = s->nhwc < 0 ? 0 : (s->nhwc > PIA_HWC_MAX ? PIA_HWC_MAX : s->nhwc);
  for (int i = 0; i < PIA_HWC_MAX; i++)
    d->hwc[i] = i < n ? s->hwc[i] : 0;
  d->nhwc = n;
}

#endif
