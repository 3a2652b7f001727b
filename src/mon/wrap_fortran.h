/*
 * Helpers of the generated Fortran wrappers (mon_fwrappers.c, from
 * mpi31.spec by tools/gen_wrappers.py). Never installed.
 *
 * The Fortran wrappers cover Open MPI's bindings (mpif.h, use mpi,
 * use mpi_f08): they convert what the accounting rule of a function reads to
 * C (handles with MPI_*_f2c, statuses with MPI_Status_f2c, 1-based indices,
 * the Fortran sentinels MPI_IN_PLACE, MPI_BOTTOM, MPI_STATUS(ES)_IGNORE) and
 * then account with the C wrappers' helpers (wrap_internal.h), so a Fortran
 * call counts the same calls, bytes and partners as the same call from C.
 * As there, nothing here fails into the application: an allocation that
 * fails drops the figure, never the MPI call.
 */
#ifndef BALLAST_MON_WRAP_FORTRAN_H
#define BALLAST_MON_WRAP_FORTRAN_H

#include <stdint.h>
#include <mpi.h>

#include "mon/wrap_internal.h"

/** INTEGERs in a Fortran status (Open MPI: the C status, word for word). */
#define MON__WF_STATUS_SIZE ((int)(sizeof(MPI_Status) / sizeof(MPI_Fint)))

/** C view of a Fortran buffer argument: the Fortran MPI_IN_PLACE and
 *  MPI_BOTTOM become the C ones, any other address is itself. */
const void *mon__wf_buf(const void *fbuf);
/** Whether \a st is Fortran's MPI_STATUS_IGNORE. */
int mon__wf_status_ignore(const MPI_Fint *st);
/**
 * Address of the Fortran PMPI entry point \a name, cached in *cache: looked
 * up in the process, else in Open MPI's Fortran library (libmpi_mpifh, or
 * libmpi_usempif08 when \a f08), loaded then: a program linked with
 * --as-needed drops the library when ballast defines all it calls. NULL
 * when not found. Thread safe.
 */
void *mon__wf_resolve(void **cache, const char *name, int f08);
/** The Fortran PMPI entry point \a pmpi was not found: warns once and sets
 *  *ierr (when not NULL) to MPI_ERR_OTHER rather than crash. */
void mon__wf_missing(const char *pmpi, MPI_Fint *ierr);
/**
 * Fortran MPI_Pcontrol(level): the binding carries no name, so levels 1 and
 * -1 enter and leave the region named "pcontrol" (regions with other names
 * come from the `ballast` module's mon_region_begin/end); 0 and 2 do nothing,
 * any other level warns once. The caller passes the call on to PMPI.
 */
void mon__wf_pcontrol(int level);

/* Collective volumes whose arguments are arrays of Fortran datatypes. */
uint64_t mon__wf_alltoallw(const void *sbuf, const int *scounts, const MPI_Fint *sts,
                           const int *rcounts, const MPI_Fint *rts, MPI_Comm comm);
uint64_t mon__wf_nbr_alltoallw(const int *scounts, const MPI_Fint *sts,
                               const int *rcounts, const MPI_Fint *rts, MPI_Comm comm);

/** Arms the tracked persistent requests among the Fortran reqs[0..n-1]. */
void mon__wfq_start(const MPI_Fint *reqs, int n);

/**
 * One Fortran Waitall/Waitany/Waitsome/Test* call: the C handles of the
 * requests before the call (mon__wq_t), the Fortran statuses substituted for
 * MPI_STATUSES_IGNORE, and room for the C statuses and 0-based indices.
 */
typedef struct {
  mon__wq_t q;
  MPI_Fint *fst;   /* substituted Fortran statuses, or NULL */
  MPI_Status *cst; /* C statuses converted after the call, or NULL */
  int *idx;        /* 0-based indices (Waitsome/Testsome), or NULL */
  MPI_Fint fst_inline[MON__WQ_INLINE * MON__WF_STATUS_SIZE];
  int idx_inline[MON__WQ_INLINE];
} mon__wfq_t;

/** Before the call: the C handles of the \a n Fortran requests (nothing when
 *  no request is tracked at all). */
void mon__wfq_handles(mon__wfq_t *q, int n, const MPI_Fint *reqs);
/** Before the call: mon__wfq_handles, and the status array to pass to PMPI:
 *  a local one for MPI_STATUSES_IGNORE when something is tracked. */
MPI_Fint *mon__wfq_pre(mon__wfq_t *q, int n, const MPI_Fint *reqs, MPI_Fint *statuses);
/** Waitall/Testall completed (as mon__wq_all). */
void mon__wfq_all(mon__tls_t *t, mon__wfq_t *q, const MPI_Fint *statuses, int in_status);
/** Waitany/Testany: request \a index (1-based, or MPI_UNDEFINED) completed. */
void mon__wfq_one(mon__tls_t *t, mon__wfq_t *q, int index, const MPI_Fint *status);
/** Waitany/Testany failed for request \a index (1-based; as mon__wq_failed_one). */
void mon__wfq_failed_one(mon__tls_t *t, mon__wfq_t *q, int index, const MPI_Fint *reqs);
/** Waitsome/Testsome: \a outcount requests completed, 1-based \a indices. */
void mon__wfq_some(mon__tls_t *t, mon__wfq_t *q, int outcount, const MPI_Fint *indices,
                   const MPI_Fint *statuses, int in_status);
/** Releases what mon__wfq_pre allocated. */
void mon__wfq_fini(mon__wfq_t *q);

#endif /* BALLAST_MON_WRAP_FORTRAN_H */
