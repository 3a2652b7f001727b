/*
 * Helpers of the generated Fortran wrappers (wrap_fortran.h), for Open MPI.
 *
 * Open MPI's Fortran sentinels are common blocks (mpi_fortran_in_place_, ...)
 * whose address is the constant: a Fortran MPI_IN_PLACE arrives in C as
 * &mpi_fortran_in_place_, not as C's MPI_IN_PLACE. mpif.h, use mpi and
 * use mpi_f08 share them. CMake compiles this file only when libmpi defines
 * them (wrappers.cmake).
 */
#include <dlfcn.h>
#include <stdlib.h>

#include "ballast/mon.h"
#include "common/common_internal.h"
#include "mon/wrap_fortran.h"

extern int mpi_fortran_in_place_;
extern int mpi_fortran_bottom_;
extern int mpi_fortran_status_ignore_;
extern int mpi_fortran_statuses_ignore_;

const void *mon__wf_buf(const void *fbuf) {
  if (fbuf == (const void *)&mpi_fortran_in_place_)
    return MPI_IN_PLACE;
  if (fbuf == (const void *)&mpi_fortran_bottom_)
    return MPI_BOTTOM;
  return fbuf;
}

int mon__wf_status_ignore(const MPI_Fint *st) {
  return st == MPI_F_STATUS_IGNORE || st == (const MPI_Fint *)&mpi_fortran_status_ignore_;
}

/* Fortran's MPI_STATUSES_IGNORE (mpif.h, use mpi and use mpi_f08 alike). */
static int statuses_ignore(const MPI_Fint *st) {
  return st == MPI_F_STATUSES_IGNORE || st == (const MPI_Fint *)&mpi_fortran_statuses_ignore_;
}

static int warned_missing, warned_level;

void *mon__wf_resolve(void **cache, const char *name, int f08) {
  void *p = __atomic_load_n(cache, __ATOMIC_ACQUIRE);
  if (p != NULL)
    return p;
  p = dlsym(RTLD_DEFAULT, name);
  const char *lib = f08 ? BALLAST_OMPI_F08_LIB : BALLAST_OMPI_MPIFH_LIB;
  if (p == NULL && lib[0]) {
    /* Never closed: the wrappers keep using it until the process ends. */
    void *h = dlopen(lib, RTLD_NOW | RTLD_GLOBAL);
    if (h != NULL)
      p = dlsym(h, name);
  }
  if (p != NULL)
    __atomic_store_n(cache, p, __ATOMIC_RELEASE);
  return p;
}

void mon__wf_missing(const char *pmpi, MPI_Fint *ierr) {
  if (!__atomic_exchange_n(&warned_missing, 1, __ATOMIC_RELAXED))
    BALLAST_WARN("mon: a Fortran MPI call reached ballast but %s was not found "
                 "(Open MPI's Fortran library missing?): MPI_ERR_OTHER (warned once)",
                 pmpi);
  if (ierr)
    *ierr = MPI_ERR_OTHER;
}

void mon__wf_pcontrol(int level) {
  if (level == 1)
    mon_region_begin("pcontrol");
  else if (level == -1)
    mon_region_end("pcontrol");
  else if (level != 0 && level != 2 &&
           !__atomic_exchange_n(&warned_level, 1, __ATOMIC_RELAXED))
    BALLAST_WARN("mon: Fortran MPI_Pcontrol level %d is not one of 1 (region "
                 "\"pcontrol\" begin), -1 (end), 0, 2: ignored (warned once)", level);
}

/* ---- collectives with arrays of datatypes --------------------------------- */

/* The C datatypes of n Fortran ones: in buf when they fit, else allocated
 * (freed by the caller when not buf); NULL when out of memory. */
static MPI_Datatype *types_of(const MPI_Fint *f, int n, MPI_Datatype *buf, int nbuf) {
  if (f == NULL || n < 0)
    return NULL;
  MPI_Datatype *t = n <= nbuf ? buf : malloc((size_t)n * sizeof *t);
  if (t == NULL)
    return NULL;
  for (int i = 0; i < n; i++)
    t[i] = PMPI_Type_f2c(f[i]);
  return t;
}

#define WF_TYPES_INLINE 64

/* Volume of a w-collective whose send and receive type arrays have ns and nr
 * entries: the C helper on the converted arrays. */
static uint64_t w_volume(const void *sbuf, const int *scounts, const MPI_Fint *sts, int ns,
                         const int *rcounts, const MPI_Fint *rts, int nr, MPI_Comm comm,
                         int nbr) {
  MPI_Datatype sbuf_t[WF_TYPES_INLINE], rbuf_t[WF_TYPES_INLINE];
  const MPI_Datatype *st = NULL;
  uint64_t bytes = 0;
  /* An in-place alltoallw reads no send types (they may be anything). */
  int need_s = nbr || sbuf != MPI_IN_PLACE;
  if (need_s)
    st = types_of(sts, ns, sbuf_t, WF_TYPES_INLINE);
  MPI_Datatype *rt = types_of(rts, nr, rbuf_t, WF_TYPES_INLINE);
  if ((!need_s || st != NULL) && rt != NULL)
    bytes = nbr ? mon__w_nbr_alltoallw(scounts, st, rcounts, rt, comm)
                : mon__w_alltoallw(sbuf, scounts, st, rcounts, rt, comm);
  if (st != NULL && st != sbuf_t)
    free((void *)st);
  if (rt != NULL && rt != rbuf_t)
    free(rt);
  return bytes;
}

uint64_t mon__wf_alltoallw(const void *sbuf, const int *scounts, const MPI_Fint *sts,
                           const int *rcounts, const MPI_Fint *rts, MPI_Comm comm) {
  int n = mon__w_size(comm);
  return n > 0 ? w_volume(sbuf, scounts, sts, n, rcounts, rts, n, comm, 0) : 0;
}

uint64_t mon__wf_nbr_alltoallw(const int *scounts, const MPI_Fint *sts,
                               const int *rcounts, const MPI_Fint *rts, MPI_Comm comm) {
  int indeg = 0, outdeg = 0;
  if (mon__w_neighbours(comm, &indeg, &outdeg, NULL, NULL) != 0)
    return 0;
  return w_volume(NULL, scounts, sts, outdeg, rcounts, rts, indeg, comm, 1);
}

/* ---- requests ------------------------------------------------------------- */

void mon__wfq_start(const MPI_Fint *reqs, int n) {
  if (n <= 0 || reqs == NULL || mon__wreq_tracked() == 0)
    return;
  for (int i = 0; i < n; i++) {
    MPI_Request r = PMPI_Request_f2c(reqs[i]);
    mon__wreq_start(&r, 1);
  }
}

void mon__wfq_handles(mon__wfq_t *q, int n, const MPI_Fint *reqs) {
  q->fst = NULL;
  q->cst = NULL;
  q->idx = NULL;
  q->q.n = 0;
  q->q.h = NULL;
  q->q.st = NULL;
  if (n <= 0 || reqs == NULL || mon__wreq_tracked() == 0)
    return;
  q->q.h = n <= MON__WQ_INLINE ? q->q.h_inline : malloc((size_t)n * sizeof *q->q.h);
  if (q->q.h == NULL)
    return; /* out of memory: these completions go unaccounted */
  for (int i = 0; i < n; i++)
    q->q.h[i] = PMPI_Request_f2c(reqs[i]);
  q->q.n = n;
}

MPI_Fint *mon__wfq_pre(mon__wfq_t *q, int n, const MPI_Fint *reqs, MPI_Fint *statuses) {
  mon__wfq_handles(q, n, reqs);
  if (q->q.n == 0)
    return statuses;
  int inl = n <= MON__WQ_INLINE;
  q->cst = inl ? q->q.st_inline : malloc((size_t)n * sizeof *q->cst);
  int ignore = statuses_ignore(statuses);
  if (ignore)
    q->fst = inl ? q->fst_inline
                 : malloc((size_t)n * MON__WF_STATUS_SIZE * sizeof *q->fst);
  q->idx = inl ? q->idx_inline : malloc((size_t)n * sizeof *q->idx);
  if (q->cst == NULL || q->idx == NULL || (ignore && q->fst == NULL)) {
    mon__wfq_fini(q);
    return statuses;
  }
  return q->fst ? q->fst : statuses;
}

/* C status k of the Fortran array (in q->cst[k]). */
static const MPI_Status *cstatus(mon__wfq_t *q, const MPI_Fint *statuses, int k) {
  PMPI_Status_f2c(statuses + (size_t)k * MON__WF_STATUS_SIZE, &q->cst[k]);
  return &q->cst[k];
}

void mon__wfq_all(mon__tls_t *t, mon__wfq_t *q, const MPI_Fint *statuses, int in_status) {
  if (q->q.n == 0 || q->cst == NULL)
    return;
  for (int i = 0; i < q->q.n; i++)
    cstatus(q, statuses, i);
  mon__wq_all(t, &q->q, q->cst, in_status);
}

void mon__wfq_one(mon__tls_t *t, mon__wfq_t *q, int index, const MPI_Fint *status) {
  if (q->q.n == 0 || index == MPI_UNDEFINED)
    return;
  MPI_Status st;
  PMPI_Status_f2c(status, &st);
  mon__wq_one(t, &q->q, index - 1, &st);
}

void mon__wfq_failed_one(mon__tls_t *t, mon__wfq_t *q, int index, const MPI_Fint *reqs) {
  if (q->q.n == 0 || index == MPI_UNDEFINED || index < 1 || index > q->q.n)
    return;
  /* mon__wq_failed_one reads reqs[index - 1] only: convert that one. */
  MPI_Request after[1] = {PMPI_Request_f2c(reqs[index - 1])};
  if (after[0] == MPI_REQUEST_NULL && q->q.h[index - 1] != MPI_REQUEST_NULL)
    mon__wreq_failed(t, q->q.h[index - 1], after[0]);
}

void mon__wfq_some(mon__tls_t *t, mon__wfq_t *q, int outcount, const MPI_Fint *indices,
                   const MPI_Fint *statuses, int in_status) {
  if (q->q.n == 0 || q->cst == NULL || outcount == MPI_UNDEFINED || indices == NULL)
    return;
  if (outcount > q->q.n)
    outcount = q->q.n;
  for (int k = 0; k < outcount; k++) {
    q->idx[k] = indices[k] - 1;
    cstatus(q, statuses, k);
  }
  mon__wq_some(t, &q->q, outcount, q->idx, q->cst, in_status);
}

void mon__wfq_fini(mon__wfq_t *q) {
  if (q->fst != q->fst_inline)
    free(q->fst);
  if (q->cst != q->q.st_inline)
    free(q->cst);
  if (q->idx != q->idx_inline)
    free(q->idx);
  q->fst = NULL;
  q->cst = NULL;
  q->idx = NULL;
  q->q.st = NULL;
  mon__wq_fini(&q->q);
}
