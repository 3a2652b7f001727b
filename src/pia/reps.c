/* PIA: repeated regions' repetitions (mon's reps.c keeps them). */
#include <string.h>

#include "pia/pia_internal.h"

BALLAST_API int pia_region_rep_info(pia_regid_t id, pia_repinfo_t *out) {
  if (!out)
    return BALLAST_EINVAL;
  int rc = pia__check_region(id);
  if (rc < 0)
    return rc;
  mon__repinfo_t i;
  if ((rc = mon__rep_info(id, &i)) != 0)
    return rc;
  memset(out, 0, sizeof *out);
  out->count = (long long)i.count;
  out->kept = (long long)i.keep;
  out->oldest = (long long)i.oldest;
  out->warming_up = i.warming;
  out->last_label = i.last;
  out->warmup_end = (long long)i.warm_end;
  out->outliers = (long long)i.outliers;
  out->good = (long long)i.good;
  out->good_mean = i.good_mean;
  out->good_min = i.good_min;
  out->good_max = i.good_max;
  out->good_sd = i.good_sd;
  out->good_median = i.good_median;
  out->median = i.median;
  out->reduce_every = (long long)i.reduce_every;
  out->skipped = (long long)i.skipped;
  return 0;
}

BALLAST_API int pia_region_rep_get(pia_regid_t id, long long index, pia_rep_t *out) {
  if (!out || index < 0)
    return BALLAST_EINVAL;
  int rc = pia__check_region(id);
  if (rc < 0)
    return rc;
  mon__rep_rec_t r;
  if ((rc = mon__rep_get(id, (uint64_t)index, &r)) != 0)
    return rc;
  memset(out, 0, sizeof *out);
  out->index = (long long)r.index;
  out->label = r.label;
  out->wtime = r.wtime;
  out->mtime = r.mtime;
  out->cputime = r.cputime;
  out->bytes = (long long)r.bytes;
  out->calls = (long long)r.calls;
  out->nuser = r.nuser;
  memcpy(out->user, r.user, sizeof out->user);
  out->nmpit = r.nmpit;
  memcpy(out->mpit, r.mpit, sizeof out->mpit);
  out->vcsw = r.ru[0];
  out->ivcsw = r.ru[1];
  out->minflt = r.ru[2];
  out->majflt = r.ru[3];
  out->nhwc = r.nhw;
  for (int k = 0; k < r.nhw && k < PIA_HWC_MAX; k++)
    out->hwc[k] = r.hw[k];
  out->reduced = r.reduced;
  out->slowest_rank = r.xslow;
  out->max_wtime = r.xmax;
  out->min_wtime = r.xmin;
  out->mean_wtime = r.xmean;
  out->waited = r.xwait;
  return 0;
}

BALLAST_API int pia_region_warming_up(pia_regid_t id) {
  pia_repinfo_t i;
  int rc = pia_region_rep_info(id, &i);
  return rc < 0 ? rc : i.warming_up;
}

BALLAST_API int pia_region_rep_last_label(pia_regid_t id) {
  pia_repinfo_t i;
  int rc = pia_region_rep_info(id, &i);
  if (rc < 0)
    return rc;
  return i.last_label < 0 ? BALLAST_ENOTFOUND : i.last_label;
}

BALLAST_API const char *pia_rep_label_name(int label) {
  static const char *const names[] = {"first", "warmup", "outlier", "good"};
  return label >= 0 && label < 4 ? names[label] : "unknown";
}

BALLAST_API int pia_mpit_count(void) { return mon__mpit_count(); }

BALLAST_API const char *pia_mpit_name(int var) { return mon__mpit_name(var); }

BALLAST_API int pia_mpit_find(const char *name) {
  if (!name)
    return BALLAST_EINVAL;
  for (int i = 0; i < mon__mpit_count(); i++)
    if (!strcmp(mon__mpit_name(i), name))
      return i;
  return BALLAST_ENOTFOUND;
}

BALLAST_API int pia_region_mpit(pia_regid_t id, int var, pia_mpitdata_t *out) {
  if (!out)
    return BALLAST_EINVAL;
  int rc = pia__check_region(id);
  if (rc < 0)
    return rc;
  return mon__mpit_region(id, var, &out->delta, &out->max);
}

BALLAST_API int pia_mpit_read(int var, double *value) {
  if (!value)
    return BALLAST_EINVAL;
  return mon__mpit_read_one(var, value);
}
