/* PIA: distributions of region instance times and activity call durations
 * (mon's histograms, common/dist.h), read locally or merged over the ranks
 * of a communicator in one reduction. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pia/pia_internal.h"

static const double q3[3] = {0.5, 0.9, 0.99};

/* Fills out from mon's summary and the three quantiles. */
static void fill(pia_distdata_t *out, const mon__diststats_t *st, const double *p) {
  memset(out, 0, sizeof *out);
  out->count = (long long)st->count;
  out->lost = (long long)st->lost;
  out->min = st->min;
  out->max = st->max;
  out->mean = st->mean;
  out->var = st->var;
  if (p) {
    out->p50 = p[0];
    out->p90 = p[1];
    out->p99 = p[2];
  }
}

static int dist_read(int region, int act, pia_distdata_t *out) {
  if (!out)
    return BALLAST_EINVAL;
  int rc = region >= 0 ? pia__check_region(region) : pia__check_act(act);
  if (rc < 0)
    return rc;
  mon__diststats_t st;
  double p[3];
  rc = region >= 0 ? mon__region_quantiles(region, q3, 3, p, &st)
                   : mon__act_quantiles(act, q3, 3, p, &st);
  if (rc == BALLAST_ENODATA)
    memset(out, 0, sizeof *out);
  else if (rc == 0)
    fill(out, &st, p);
  return rc;
}

BALLAST_API int pia_region_dist(pia_regid_t id, pia_distdata_t *out) {
  return dist_read(id, -1, out);
}

BALLAST_API int pia_activity_dist(pia_act_t act, pia_distdata_t *out) {
  return dist_read(-1, act, out);
}

BALLAST_API int pia_region_quantiles(pia_regid_t id, int nq, const double *q,
                                     double *out) {
  int rc = pia__check_region(id);
  return rc < 0 ? rc : mon__region_quantiles(id, q, nq, out, NULL);
}

BALLAST_API int pia_activity_quantiles(pia_act_t act, int nq, const double *q,
                                       double *out) {
  int rc = pia__check_act(act);
  return rc < 0 ? rc : mon__act_quantiles(act, q, nq, out, NULL);
}

/* ---- merged over ranks ------------------------------------------------------ */

/* What each rank contributes: its error (0, or a negative code: the lowest
 * wins), what it asked about (a hash of the path or activity, min and max
 * over ranks: different ones are a mismatch; a rank with an error
 * contributes the neutral UINT64_MAX, 0) and its histogram. */
typedef struct {
  int64_t err;
  uint64_t key_min, key_max;
  ballast__dist_flat_t flat;
} contrib_t;

static void merge_op(void *in, void *inout, int *len, MPI_Datatype *type) {
  (void)type;
  contrib_t *a = in, *b = inout;
  for (int i = 0; i < *len; i++) {
    if (a[i].err < b[i].err)
      b[i].err = a[i].err;
    if (a[i].key_min < b[i].key_min)
      b[i].key_min = a[i].key_min;
    if (a[i].key_max > b[i].key_max)
      b[i].key_max = a[i].key_max;
    ballast__dist_flat_merge(&b[i].flat, &a[i].flat);
  }
}

static int args_check(int nq, const double *q, const double *qout) {
  if (nq < 0 || (nq > 0 && (!q || !qout)))
    return BALLAST_EINVAL;
  for (int i = 0; i < nq; i++)
    if (!(q[i] >= 0.0 && q[i] <= 1.0))
      return BALLAST_EINVAL;
  return 0;
}

/* The two records of a reduction (about 30 KB each): static, so that no
 * rank can fail to take part for want of memory. One reduction at a time
 * per process (the header asks callers for one thread at a time). */
static contrib_t red_in, red_out;

/* The one reduction: MPI_Allreduce with a user operation on one contiguous
 * record per rank. Library traffic. */
static int allreduce(MPI_Comm comm, contrib_t *c) {
  contrib_t *res = &red_out;
  ballast__lib_begin();
  MPI_Datatype type = MPI_DATATYPE_NULL;
  MPI_Op op = MPI_OP_NULL;
  int ok = MPI_Type_contiguous((int)sizeof *c, MPI_BYTE, &type) == MPI_SUCCESS &&
           MPI_Type_commit(&type) == MPI_SUCCESS &&
           MPI_Op_create(merge_op, 1, &op) == MPI_SUCCESS &&
           MPI_Allreduce(c, res, 1, type, op, comm) == MPI_SUCCESS;
  if (op != MPI_OP_NULL)
    MPI_Op_free(&op);
  if (type != MPI_DATATYPE_NULL)
    MPI_Type_free(&type);
  ballast__lib_end();
  if (ok)
    memcpy(c, res, sizeof *c);
  return ok ? 0 : BALLAST_EMPI;
}

/* FNV-1a of \a s after the tag byte \a tag: what a rank asked about. */
static uint64_t key_of(char tag, const char *s) {
  return ballast__fnv1a(ballast__fnv1a(BALLAST__FNV_OFFSET, &tag, 1), s, strlen(s));
}

/* Contributes this rank's histogram (or its error) and answers from the
 * merged one. \a key: what this rank asked about (key_of). */
static int reduce(MPI_Comm comm, uint64_t key, int region, int act, int err, int nq,
                  const double *q, double *qout, pia_distdata_t *out) {
  if (comm == MPI_COMM_NULL)
    return BALLAST_EINVAL;
  if (!ballast__mpi_live())
    return BALLAST_ESTATE;
  contrib_t *c = &red_in;
  ballast__dist_flat_init(&c->flat);
  if (!err)
    err = args_check(nq, q, qout);
  if (!err && region > 0)
    err = mon__region_dist_flat(region, &c->flat);
  else if (!err && act >= 0)
    err = mon__act_dist_flat(act, &c->flat);
  if (err)
    ballast__dist_flat_init(&c->flat);
  c->err = err;
  c->key_min = err ? UINT64_MAX : key;
  c->key_max = err ? 0 : key;
  int rc = allreduce(comm, c);
  if (rc == 0 && c->err)
    rc = err ? err : BALLAST_EREMOTE;
  if (rc == 0 && c->key_min != c->key_max) {
    rc = BALLAST_EMISMATCH;
    BALLAST_WARN("pia: a merged distribution was asked of different %s on the ranks "
                 "(this rank: %s); every rank must name the same one",
                 act >= 0 || region < 0 ? "activities" : "regions",
                 act >= 0 || region < 0 ? "an activity" : "a region path");
  }
  if (rc == 0 && c->flat.m.count == 0)
    rc = BALLAST_ENODATA;
  double p[3];
  if (rc == 0)
    rc = ballast__dist_flat_quantiles(&c->flat, q3, 3, p);
  if (rc == 0 && nq > 0)
    rc = ballast__dist_flat_quantiles(&c->flat, q, nq, qout);
  for (int i = 0; rc == 0 && i < nq; i++)
    qout[i] *= 1e-9;
  if (out && (rc == 0 || rc == BALLAST_ENODATA)) {
    const ballast__dist_moments_t *m = &c->flat.m;
    mon__diststats_t st = {0};
    if (rc == 0) {
      st.count = m->count;
      st.lost = m->lost;
      st.min = (double)m->min * 1e-9;
      st.max = (double)m->max * 1e-9;
      st.mean = m->mean * 1e-9;
      st.var = ballast__dist_variance(m) * 1e-18;
      for (int i = 0; i < 3; i++)
        p[i] *= 1e-9;
    }
    fill(out, &st, rc == 0 ? p : NULL);
  }
  return rc;
}

BALLAST_API int pia_region_dist_reduce(MPI_Comm comm, const char *path, int nq,
                                       const double *q, double *qout,
                                       pia_distdata_t *out) {
  int err = 0, id = 0;
  if (!path || !*path) {
    err = BALLAST_EINVAL;
  } else if (ballast__mpi_live()) {
    id = pia_region_find_by_path(path);
    /* a region this rank never entered adds nothing; a malformed path is an error */
    if (id == BALLAST_ENOTFOUND)
      id = 0;
    else if (id < 0)
      err = id;
  }
  /* "/a/b" and "a/b" name the same region (pia_region_find_by_path) */
  return reduce(comm, err ? 0 : key_of('r', path + (*path == '/')), id, -1, err, nq, q,
                qout, out);
}

BALLAST_API int pia_activity_dist_reduce(MPI_Comm comm, pia_act_t act, int nq,
                                         const double *q, double *qout,
                                         pia_distdata_t *out) {
  int err = act < 0 || act >= mon__act_count() ? BALLAST_ENOTFOUND : 0;
  char id[24];
  snprintf(id, sizeof id, "%d", (int)act);
  return reduce(comm, key_of('a', id), -1, err ? 0 : act, err, nq, q, qout, out);
}
