/*
 * Helpers of the generated PMPI wrappers (mon_wrappers.c, from mpi31.spec).
 * Never installed; only the wrappers and mon's tests use it.
 *
 *  - wrap_comm.c: world-rank translation through per-communicator and
 *    per-window caches (mon__world_rank in mon_internal.h, mon__w_rank,
 *    mon__w_wrank) and the neighbour degrees of topology communicators.
 *  - wrap_requests.c: the table of tracked requests (nonblocking and
 *    persistent operations, accounted at completion), the message table of
 *    MPI_Mprobe/MPI_Mrecv, and the wait/test-family bookkeeping (mon__wq_*).
 *  - wrap_coll.c: byte volumes of collectives and type sizes;
 *    wrap_status/: received bytes from a status, per MPI library.
 *  - wrap_misc.c: MPI_Pcontrol and the wrappers' finalisation.
 *
 * Nothing here fails into the application: on any internal error (out of
 * memory, an MPI handle the caches cannot resolve) the figure is dropped or the
 * partner becomes MON_NO_PARTNER, and the MPI call's result is unchanged.
 */
#ifndef BALLAST_MON_WRAP_INTERNAL_H
#define BALLAST_MON_WRAP_INTERNAL_H

#include <stdint.h>
#include <string.h>
#include <mpi.h>

#include "mon/mon_internal.h"

/* ---- handles as table keys ------------------------------------------------ */

/** An MPI handle (MPI_Comm, MPI_Win, MPI_Request, MPI_Message: an integer or
 *  a pointer, depending on the MPI library) as the key of a cache table. */
static inline uintptr_t mon__handle_key(const void *h, size_t size) {
  uintptr_t k = 0;
  memcpy(&k, h, size < sizeof k ? size : sizeof k);
  return k;
}
/** The key of the handle lvalue \a h. */
#define MON__HANDLE_KEY(h) mon__handle_key(&(h), sizeof(h))

/* ---- ranks (wrap_comm.c) -------------------------------------------------- */

/** World rank of \a rank in \a comm (remote group of an intercommunicator);
 *  MON_NO_PARTNER for negative ranks (MPI_PROC_NULL, MPI_ANY_SOURCE, MPI_ROOT)
 *  and ranks outside MPI_COMM_WORLD. Lock-free after the first call on comm. */
int mon__w_rank(MPI_Comm comm, int rank);
/** The tools interface's id of \a comm (ballast/tool.h, comm_id): 0 for
 *  MPI_COMM_WORLD, -1 for MPI_COMM_NULL or when the cache cannot hold it;
 *  given on the communicator's first use by a wrapper, never reused. */
int mon__w_comm_id(MPI_Comm comm);
/** mon__w_size and mon__w_comm_id in one lookup (the tools' MPI events). */
int mon__w_size_id(MPI_Comm comm, int *id);
/** api->comm_ranks: the world ranks of the cached communicator \a comm_id. */
int mon__w_comm_ranks(int comm_id, int *world_ranks, int max);
/**
 * A communicator's rank translation held for later: a pending receive takes
 * it when posted (mon__w_src_hold: a lookup and one atomic increment, no
 * lock, no allocation once the communicator is cached) and names the
 * status's MPI_SOURCE through it at completion (mon__w_src_rank), even when
 * the program has freed the communicator meanwhile (MPI allows it) or the
 * handle names another communicator by then. NULL when comm cannot be
 * resolved (then no partner); every hold is released exactly once.
 */
typedef struct mon__wsrc mon__wsrc_t;
mon__wsrc_t *mon__w_src_hold(MPI_Comm comm);
/** World rank of \a rank through \a src (MON_NO_PARTNER as mon__w_rank). */
int mon__w_src_rank(const mon__wsrc_t *src, int rank);
/** Releases a hold of mon__w_src_hold (NULL does nothing). */
void mon__w_src_release(mon__wsrc_t *src);
/** World rank of \a rank in the group of window \a win (cached per window). */
int mon__w_wrank(MPI_Win win, int rank);
/** Frees the communicator and window caches (MPI_Finalize). */
void mon__wrap_comm_finalize(void);
/** Forget the cached group of a window about to be freed. */
void mon__win_forget(MPI_Win win);
/** Size of \a comm, or of its remote group for an intercommunicator. */
int mon__w_size(MPI_Comm comm);
/** Size of the local group of \a comm (= mon__w_size for intracommunicators). */
int mon__w_lsize(MPI_Comm comm);
/** Rank of the caller in \a comm. */
int mon__w_myrank(MPI_Comm comm);
/** The caller's part in a collective rooted at \a root: 1 the root (MPI_ROOT
 *  of an intercommunicator), 0 another participant, -1 none (MPI_PROC_NULL). */
int mon__w_role(MPI_Comm comm, int root);
/**
 * Neighbours of a topology communicator (Cartesian, graph, distributed
 * graph), in MPI's neighbour order. \a in_ok / \a out_ok (may be NULL) get
 * an array of flags, one per neighbour, 0 for an MPI_PROC_NULL neighbour;
 * the arrays belong to the cache. Returns 0, or -1 when comm has no topology.
 */
int mon__w_neighbours(MPI_Comm comm, int *indeg, int *outdeg,
                      const unsigned char **in_ok, const unsigned char **out_ok);

/* ---- byte counts (wrap_coll.c) ------------------------------------------- */

/** Size in bytes of \a dt; 0 for MPI_DATATYPE_NULL or an invalid type. */
uint64_t mon__w_type(MPI_Datatype dt);
/** Bytes described by a receive status (0 for an empty status). */
uint64_t mon__w_rbytes(const MPI_Status *st);

/* Collective volumes; the rules are documented in mpi31.spec. */
uint64_t mon__w_bcast(int count, MPI_Datatype dt, int root, MPI_Comm comm);
uint64_t mon__w_gather(const void *sbuf, int scount, MPI_Datatype st, int rcount,
                       MPI_Datatype rt, int root, MPI_Comm comm);
uint64_t mon__w_gatherv(const void *sbuf, int scount, MPI_Datatype st,
                        const int *rcounts, MPI_Datatype rt, int root, MPI_Comm comm);
uint64_t mon__w_scatter(int scount, MPI_Datatype st, const void *rbuf, int rcount,
                        MPI_Datatype rt, int root, MPI_Comm comm);
uint64_t mon__w_scatterv(const int *scounts, MPI_Datatype st, const void *rbuf,
                         int rcount, MPI_Datatype rt, int root, MPI_Comm comm);
uint64_t mon__w_allgather(const void *sbuf, int scount, MPI_Datatype st, int rcount,
                          MPI_Datatype rt, MPI_Comm comm);
uint64_t mon__w_allgatherv(const void *sbuf, int scount, MPI_Datatype st,
                           const int *rcounts, MPI_Datatype rt, MPI_Comm comm);
uint64_t mon__w_alltoall(const void *sbuf, int scount, MPI_Datatype st, int rcount,
                         MPI_Datatype rt, MPI_Comm comm);
uint64_t mon__w_alltoallv(const void *sbuf, const int *scounts, MPI_Datatype st,
                          const int *rcounts, MPI_Datatype rt, MPI_Comm comm);
uint64_t mon__w_alltoallw(const void *sbuf, const int *scounts, const MPI_Datatype *sts,
                          const int *rcounts, const MPI_Datatype *rts, MPI_Comm comm);
uint64_t mon__w_reduce(const void *sbuf, int count, MPI_Datatype dt, int root,
                       MPI_Comm comm);
uint64_t mon__w_allreduce(int count, MPI_Datatype dt, MPI_Comm comm);
uint64_t mon__w_exscan(int count, MPI_Datatype dt, MPI_Comm comm);
uint64_t mon__w_reduce_scatter(const int *rcounts, MPI_Datatype dt, MPI_Comm comm);
uint64_t mon__w_reduce_scatter_block(int rcount, MPI_Datatype dt, MPI_Comm comm);
uint64_t mon__w_nbr_allgather(int scount, MPI_Datatype st, int rcount, MPI_Datatype rt,
                              MPI_Comm comm);
uint64_t mon__w_nbr_allgatherv(int scount, MPI_Datatype st, const int *rcounts,
                               MPI_Datatype rt, MPI_Comm comm);
uint64_t mon__w_nbr_alltoall(int scount, MPI_Datatype st, int rcount, MPI_Datatype rt,
                             MPI_Comm comm);
uint64_t mon__w_nbr_alltoallv(const int *scounts, MPI_Datatype st, const int *rcounts,
                              MPI_Datatype rt, MPI_Comm comm);
uint64_t mon__w_nbr_alltoallw(const int *scounts, const MPI_Datatype *sts,
                              const int *rcounts, const MPI_Datatype *rts, MPI_Comm comm);

/* ---- requests (wrap_requests.c) ------------------------------------------ */

/** Flags of a tracked request. */
enum {
  MON__WREQ_RECV = 1u,        /**< bytes and partner come from the status */
  MON__WREQ_PERSISTENT = 2u,  /**< survives completion; armed by MPI_Start */
  MON__WREQ_P2P = 4u,         /**< point to point: MPI_Cancel applies, and its
                                   status is MPI's own in full (a file's or a
                                   collective's status may leave the cancelled
                                   flag unset, so it is not read) */
};

/**
 * Tracks request \a req posted by activity \a act: \a bytes and \a partner
 * for sends, or, with MON__WREQ_RECV, the communicator whose ranks the
 * status's MPI_SOURCE names (its translation is held now, mon__w_src_hold,
 * so the program may free comm before the request completes), or
 * MPI_COMM_NULL when \a partner is already known (a matched message) or
 * there is none (a file); \a tag and \a comm_id (the tools' id, -1 when
 * no tool listens) are kept for the mpi_complete event. A persistent
 * request starts inactive. Thread safe (sharded table, one short spinlock
 * per shard).
 */
void mon__wreq_post(MPI_Request req, int act, int partner, uint64_t bytes,
                    unsigned flags, MPI_Comm comm, int tag, int comm_id);
/** Arms the tracked persistent requests among reqs[0..n-1]. */
void mon__wreq_start(const MPI_Request *reqs, int n);
/**
 * A request completed in a wait/test call: \a before is its handle as it was
 * before the call, \a st its status. Credits its bytes to the posting
 * activity (mon__account) when it is tracked and active; a completed
 * non-persistent request stops being tracked.
 */
void mon__wreq_done(mon__tls_t *t, MPI_Request before, const MPI_Status *st);
/**
 * MPI_Wait/MPI_Test returned an error: when MPI freed the request (\a after,
 * the handle after the call, is MPI_REQUEST_NULL) it stops being tracked,
 * credited nothing (what a failed operation moved is not known).
 */
void mon__wreq_failed(mon__tls_t *t, MPI_Request before, MPI_Request after);
/** MPI_Request_free: stops tracking; an active send is credited now. */
void mon__wreq_free(mon__tls_t *t, MPI_Request req);

/** Remembers the sender (world rank) of a matched message (MPI_Mprobe),
 *  known from the probe's status: its communicator may be freed before
 *  MPI_Mrecv/MPI_Imrecv receives it. */
void mon__wmsg_put(MPI_Message msg, int partner);
/** Takes back the sender of \a msg (MON_NO_PARTNER when unknown). */
int mon__wmsg_take(MPI_Message msg);

/**
 * State of one Waitall/Waitany/Waitsome/Test* call: the request handles as
 * they were before the call, and statuses substituted for
 * MPI_STATUSES_IGNORE. Small calls use the inline buffers; larger ones
 * allocate. When no request is tracked at all the copy is skipped.
 */
#define MON__WQ_INLINE 16
typedef struct {
  int n;                 /* number of handles copied; 0 = nothing tracked */
  MPI_Request *h;        /* handles before the call */
  MPI_Status *st;        /* substituted statuses, or NULL */
  MPI_Request h_inline[MON__WQ_INLINE];
  MPI_Status st_inline[MON__WQ_INLINE];
} mon__wq_t;

/** Before the call: copies the \a n handles (skipped when nothing is tracked). */
void mon__wq_handles(mon__wq_t *q, int n, const MPI_Request *reqs);
/**
 * Before the call: mon__wq_handles, and returns the status array to pass to
 * PMPI: a local one when \a statuses is MPI_STATUSES_IGNORE and something is
 * tracked, \a statuses otherwise.
 */
MPI_Status *mon__wq_pre(mon__wq_t *q, int n, const MPI_Request *reqs,
                        MPI_Status *statuses);
/** Waitall/Testall succeeded: every request completed, statuses by index.
 *  With \a in_status (the call returned MPI_ERR_IN_STATUS) the requests
 *  whose status says MPI_ERR_PENDING did not complete and are skipped, and
 *  those whose status carries another error stop being tracked without
 *  being credited (what a failed operation moved is not known). */
void mon__wq_all(mon__tls_t *t, mon__wq_t *q, const MPI_Status *statuses,
                 int in_status);
/** Waitany/Testany: request \a index (or MPI_UNDEFINED) completed. */
void mon__wq_one(mon__tls_t *t, mon__wq_t *q, int index, const MPI_Status *status);
/** Waitany/Testany returned an error for request \a index: as
 *  mon__wreq_failed, when MPI freed it (reqs[index] is MPI_REQUEST_NULL). */
void mon__wq_failed_one(mon__tls_t *t, mon__wq_t *q, int index,
                        const MPI_Request *reqs);
/** Waitsome/Testsome: \a outcount requests (or MPI_UNDEFINED) completed;
 *  statuses[k] belongs to request indices[k]. With \a in_status (the call
 *  returned MPI_ERR_IN_STATUS) a listed request whose status carries an
 *  error stops being tracked without being credited. */
void mon__wq_some(mon__tls_t *t, mon__wq_t *q, int outcount, const int *indices,
                  const MPI_Status *statuses, int in_status);
/** Releases what mon__wq_pre allocated. */
void mon__wq_fini(mon__wq_t *q);
/** Frees the request and message tables (MPI_Finalize). */
void mon__wrap_requests_finalize(void);

/** Number of requests currently tracked (tests and diagnostics). */
long mon__wreq_tracked(void);

/* ---- the tools interface (wrap_tool.c) ------------------------------------- */

/* What mon__account credited during the current wrapped call, for the tools'
 * mpi_exit: bytes, how many credits, and their one partner (-1 for
 * several). The wrappers zero the first two when a tool listens. */
extern __thread __attribute__((tls_model("initial-exec"))) uint64_t mon__tl_credit_bytes;
extern __thread __attribute__((tls_model("initial-exec"))) unsigned mon__tl_credit_n;
extern __thread __attribute__((tls_model("initial-exec"))) int mon__tl_credit_partner;

/* The ticks at which the current wait/test call returned from MPI, for the
 * mpi_complete events its completions raise (set by the wrappers before
 * they account completions, when a tool listens). */
extern __thread __attribute__((tls_model("initial-exec"))) uint64_t mon__tl_done_ticks;

/**
 * Raises mpi_enter for activity \a act (\a comm: the communicator the call
 * names, MPI_COMM_NULL for none; \a tag the tag it names, -1 for none) at
 * ticks \a t0, and returns the ticks at which the call starts: a fresh
 * reading after the callbacks, so their time is not counted as MPI time.
 * The wrapper keeps \a t0 for mpi_exit's t_begin_ns.
 */
uint64_t mon__tool_mpi_enter(int act, MPI_Comm comm, uint64_t t0, int tag);
/** Raises mpi_exit: \a bytes recorded plus those credited during the call,
 *  \a posted the size of a posted nonblocking send, \a t0 the ticks given
 *  to mpi_enter (so t_begin_ns is its t_ns), \a t1 when the call returned. */
void mon__tool_mpi_exit(int act, MPI_Comm comm, int ret, int partner, uint64_t bytes,
                        uint64_t posted, uint64_t t0, uint64_t t1, int tag);
/** Raises mpi_complete (ballast/tool.h): one message of activity \a act
 *  completed at ticks \a ticks; \a partner a world rank or MON_NO_PARTNER. */
void mon__tool_mpi_complete(int act, int recv, int partner, int tag, uint64_t bytes,
                            int comm_id, uint64_t ticks);

/* ---- misc (wrap_misc.c) ----------------------------------------------------- */

/**
 * MPI_Pcontrol: level 1 enters region \a name, -1 leaves it, 0 and 2 (MPI's
 * "profiling off" / "flush") are accepted and do nothing; any other level
 * draws one warning per process. Always returns MPI_SUCCESS, as MPI requires
 * MPI_Pcontrol to be harmless; a bad region name gets mon_region_*'s warning.
 */
/* MPI_Pcontrol's work; *ticks (when not NULL) receives the duration of the
 * PMPI_Pcontrol call alone. */
int mon__w_pcontrol(int level, const char *name, uint64_t *ticks);
/* Its two halves, for the wrapper that raises the tools' events around the
 * PMPI call alone: the region change (and the warning of a bad level), and
 * the PMPI_Pcontrol call passed on. */
void mon__w_pcontrol_region(int level, const char *name);
void mon__w_pcontrol_pass(int level, const char *name);
/*
 * Cartesian and graph constructors with reorder = 1 (wrap_topo.c; the
 * distributed graphs keep MPI's own order). mon__w_topo_prep_*()
 * maps the declared graph and splits the old communicator in the mapping's
 * order (library traffic, outside the wrapper's guard): 1 when *tp is ready,
 * 0 (the same on every rank) when the wrapper must call MPI's own
 * constructor instead. mon__w_topo_create() then makes the topology over the
 * split communicator with reorder = 0 (the call that is timed), and
 * mon__w_topo_done() frees what prep kept (always called).
 */
typedef struct {
  int kind;           /* 0 none, 1 cart, 2 graph */
  MPI_Comm split;     /* the old communicator in the mapping's order */
  int ndims;          /* cart */
  const int *dims, *periods;
  int nnodes;         /* graph */
  const int *index, *edges;
} mon__topo_prep_t;
int mon__w_topo_prep_cart(MPI_Comm comm, int ndims, const int dims[], const int periods[],
                          int reorder, MPI_Comm *newcomm, mon__topo_prep_t *tp);
int mon__w_topo_prep_graph(MPI_Comm comm, int nnodes, const int index[], const int edges[],
                           int reorder, MPI_Comm *newcomm, mon__topo_prep_t *tp);
int mon__w_topo_create(const mon__topo_prep_t *tp, MPI_Comm *newcomm);
void mon__w_topo_done(mon__topo_prep_t *tp);
/** Frees the wrappers' caches; called by MPI_Finalize after mon__finalize. */
void mon__wrap_finalize(void);

#endif /* BALLAST_MON_WRAP_INTERNAL_H */
