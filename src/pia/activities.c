/* PIA: activity queries (per MPI call and per group) and partner volumes.
 * mon keeps running aggregates per activity and per (activity, region), so
 * each read is O(threads) and never scans the signature table. */
#include <mpi.h>

#include "common/common_internal.h"
#include "pia/pia_internal.h"

BALLAST_API int pia_activity_count(void) { return mon__act_count(); }

BALLAST_API const char *pia_activity_name(pia_act_t act) {
  if (pia__check_act(act) < 0)
    return NULL;
  return mon__act_name(act);
}

BALLAST_API pia_act_t pia_activity_find(const char *name) {
  if (!name || !name[0])
    return BALLAST_EINVAL;
  int act = pia__act_find(name);
  return act >= 0 ? act : BALLAST_ENOTFOUND;
}

BALLAST_API void pia_actdata_init(pia_actdata_t *data) {
  if (!data)
    return;
  data->ncalls = 0;
  data->nbytes = 0;
  data->tsum = 0.0;
  data->tmin = INFINITY;
  data->tmax = 0.0;
}

/* Read into a fresh record first and add only on success, so that a failed
 * read leaves the caller's running sum untouched. */
static int act_add(pia_actdata_t *data, pia_act_t act, int region) {
  if (!data)
    return BALLAST_EINVAL;
  int rc = pia__check_act(act);
  if (rc < 0)
    return rc;
  if (region != PIA_REGION_ALL && (rc = pia__check_region(region)) < 0)
    return rc;
  mon__actstats_t s;
  pia__act_zero(&s);
  rc = mon__act_read(act, region, &s);
  if (rc < 0)
    return rc;
  data->ncalls += (long long)s.ncalls;
  data->nbytes += (long long)s.nbytes;
  data->tsum += s.tsum;
  if (s.ncalls > 0) {
    if (s.tmin < data->tmin)
      data->tmin = s.tmin;
    if (s.tmax > data->tmax)
      data->tmax = s.tmax;
  }
  return 0;
}

BALLAST_API int pia_activity_data(pia_act_t act, pia_actdata_t *data) {
  return act_add(data, act, PIA_REGION_ALL);
}

BALLAST_API int pia_region_activity_data(pia_regid_t region, pia_act_t act,
                                         pia_actdata_t *data) {
  return act_add(data, act, region);
}

/* The world size never changes once MPI runs; read it once. -1 outside
 * MPI_Init .. MPI_Finalize: MPI_Finalized is asked every time, since a size
 * cached during the run must not make a query after MPI_Finalize succeed. */
static int world_size(void) {
  static int size; /* 0 until known; a benign race writes the same value */
  int init = 0, fin = 0;
  ballast__lib_begin();
  MPI_Finalized(&fin);
  int s = fin ? -1 : MON__LD(&size);
  if (s == 0) {
    MPI_Initialized(&init);
    s = -1;
    if (init) {
      MPI_Comm_size(MPI_COMM_WORLD, &s);
      MON__ST(&size, s);
    }
  }
  ballast__lib_end();
  return s;
}

static int partner_read(pia_partnerdata_t *out, int peer, int region) {
  mon__partner_t p = {0};
  int rc = mon__partner_read(region, peer, &p);
  if (rc < 0)
    return rc;
  out->nbytes = (long long)p.bytes;
  out->nmsgs = (long long)p.msgs;
  out->rbytes = (long long)p.rbytes;
  out->rmsgs = (long long)p.rmsgs;
  return 0;
}

static int partner_check(const void *out, int region) {
  if (!out)
    return BALLAST_EINVAL;
  if (region != PIA_REGION_ALL)
    return pia__check_region(region);
  return 0;
}

BALLAST_API int pia_partner_data(int peer, pia_regid_t region,
                                 pia_partnerdata_t *out) {
  int rc = partner_check(out, region);
  if (rc < 0)
    return rc;
  int ws = world_size();
  if (ws < 0)
    return BALLAST_ESTATE;
  if (peer < 0 || peer >= ws)
    return BALLAST_ERANGE;
  return partner_read(out, peer, region);
}

BALLAST_API int pia_partner_volumes(int n, pia_regid_t region,
                                    pia_partnerdata_t *out) {
  int rc = partner_check(out, region);
  if (rc < 0)
    return rc;
  if (n < 0)
    return BALLAST_EINVAL;
  int ws = world_size();
  if (ws < 0)
    return BALLAST_ESTATE;
  if (n > ws)
    return BALLAST_ERANGE;
  for (int peer = 0; peer < n; peer++)
    if ((rc = partner_read(&out[peer], peer, region)) < 0)
      return rc;
  return 0;
}
