/* Internal helpers shared by the modules; never installed. */
#ifndef BALLAST_COMMON_INTERNAL_H
#define BALLAST_COMMON_INTERNAL_H

#include <mpi.h>

#include <ballast/common.h>

#include "common/util.h"

/** Current verbosity (BALLAST_VERBOSE, read once). */
int ballast__log_level(void);
/** MPI_COMM_WORLD rank through PMPI, or -1 outside MPI_Init/Finalize. */
int ballast__world_rank(void);

/**
 * Where the run is: 1 between ballast's MPI_Init and MPI_Finalize wrappers
 * (set by mon at MPI_Init, set to 2 right before PMPI_Finalize), 0 before.
 */
extern int ballast__mpi_state;
void ballast__mpi_state_set(int state);
int ballast__need_mpi_slow(const char *fn);

/**
 * The guard of every entry point that calls MPI or measures (common.h):
 * 0 between MPI_Init and MPI_Finalize; otherwise one warning naming \a fn
 * and what is wrong, and BALLAST_ESTATE. Inside the window the wrappers
 * marked it costs one load (pia's O(1) queries go through it); outside it,
 * PMPI_Initialized and PMPI_Finalized decide (MPI initialised without the
 * wrappers still works). Thread safe.
 */
static inline int ballast__need_mpi(const char *fn) {
  if (__builtin_expect(__atomic_load_n(&ballast__mpi_state, __ATOMIC_ACQUIRE) == 1, 1))
    return 0;
  return ballast__need_mpi_slow(fn);
}
/** The same test without the warning: 1 between MPI_Init and MPI_Finalize. */
int ballast__mpi_live(void);

/* ---- the library's own MPI traffic ----------------------------------------
 * Every MPI call ballast makes for itself (mapping, hardware discovery,
 * agreement, migration, reports) goes through the MPI_ names between
 * ballast__lib_begin() and ballast__lib_end(). With monitoring linked in, the
 * wrappers see the depth and account the call as the library's own traffic
 * (the report's "library" section), never as the application's; without it
 * (ballast-map links the mapping engine alone) the calls go straight to MPI.
 * Nesting is allowed; the depth is per thread. Initial-exec TLS, as mon's
 * (every wrapped call reads it: no __tls_get_addr call). */
extern __thread __attribute__((tls_model("initial-exec"))) int ballast__tl_lib_depth;
void ballast__lib_begin(void);
void ballast__lib_end(void);
int ballast__lib_depth(void);

/* ---- ballast's own time ------------------------------------------------------
 * The one account of the wall time this process spends in ballast's own work
 * for the program (README "What the figures mean"): defining load-balancing
 * contexts, each load-balancing call, remaps, the mapping behind MPI's
 * topology constructors.  wait is the part of it spent waiting for other
 * ranks inside ballast's collectives (the load imbalance of the program made
 * visible there, not ballast's cost); work is the rest. The layers that do
 * that work add to it; the report, the profile and the page read it. Thread
 * safe (relaxed atomics; callers are the MPI thread). */
void ballast__own_add(double seconds, double wait);
/** This process's totals so far: all of its own time and the waiting in it. */
void ballast__own_read(double *seconds, double *wait);

/**
 * The one way a collective step agrees on failure: every rank of \a comm
 * passes its own error code (0 for success) and all learn the lowest failing
 * rank (\a who, -1 when none failed) and its code (\a code). Returns 0 when
 * every rank succeeded, this rank's own error when it failed, and
 * BALLAST_EREMOTE when only another rank failed (BALLAST_EMPI when the
 * agreement itself failed). Collective over \a comm; library traffic.
 */
int ballast__agree(MPI_Comm comm, int err, int *who, int *code);

/**
 * Warnings every rank raises alike (the same environment, the same files),
 * printed once per job. After ballast__log_hold() the calling thread's
 * warnings and errors are kept, not printed, until ballast__log_release(),
 * which is collective over \a comm: when the ranks that kept lines kept the
 * same ones, the lowest of them prints them (with "(on K of N ranks)" when
 * not every rank did); ranks that kept different lines print their own.
 * Holds nest (the outermost release prints). Info and debug lines are never
 * held. Not for a step that may not reach the release on every rank.
 */
void ballast__log_hold(void);
/** ballast_log's one line: "ballast[rank]: tag: msg" plus \a note ("ballast:
 *  tag: ..." for a negative rank), one fprintf on stderr. */
void ballast__log_line(int rank, const char *tag, const char *msg, const char *note);
void ballast__log_release(MPI_Comm comm);
/** ballast_log's side: 1 when the line (\a tag "warning" or "error") was
 *  kept by a hold of this thread. */
int ballast__log_keep(const char *tag, const char *msg);

#define BALLAST_ERROR(...) ballast_log(BALLAST_LOG_ERROR, __VA_ARGS__)
#define BALLAST_WARN(...) ballast_log(BALLAST_LOG_WARN, __VA_ARGS__)
#define BALLAST_INFO(...) ballast_log(BALLAST_LOG_INFO, __VA_ARGS__)
#define BALLAST_DEBUG(...) ballast_log(BALLAST_LOG_DEBUG, __VA_ARGS__)

#endif
