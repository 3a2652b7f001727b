/**
 * \file ballast/common.h
 * \brief Version, export macro and error codes shared by every ballast module.
 *
 * Every fallible ballast call returns an \c int: 0 on success, a negative
 * \c BALLAST_E* code otherwise. ballast_strerror() turns a code into a
 * sentence and ballast_err_name() into its symbolic name. Both are thread safe
 * and return static strings that the caller must not free.
 *
 * Outside MPI_Init .. MPI_Finalize. Every entry point that calls MPI or
 * measures (mon's regions, report and profile; pia's queries and interval
 * marks; rta_task_begin/end, rta_step, rta_task_map, rta_map_graph_par,
 * rta_hw_discover(_ex), rta_hw_refresh_links, rta_lb_create,
 * rta_lb_perform) returns BALLAST_ESTATE before
 * MPI_Init and after MPI_Finalize, with one warning naming the call, and
 * does nothing else. What needs neither (task trees and registered arrays
 * of ballast element types, graphs, simulated machines, policies, mappings,
 * accessors of objects that exist, handles, pia_actdata_init,
 * pia_interval_create/destroy) works at any time; rta_lb_destroy() after
 * MPI_Finalize frees ballast's memory (the communicators died with MPI) and
 * returns 0.
 */
#ifndef BALLAST_COMMON_H
#define BALLAST_COMMON_H

#include <ballast/version.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Marks a public symbol: exported from the shared library, which hides
 *  everything else (empty outside the library's own build). */
#if defined(BALLAST_BUILDING)
#define BALLAST_API __attribute__((visibility("default")))
#else
#define BALLAST_API
#endif

/**
 * The one list of error codes. Each entry: name, value, message.
 * New codes are added at the end with the next free value.
 */
#define BALLAST_ERRNO_MAP(X)                                                  \
  X(EINVAL,     -1, "invalid argument")                                       \
  X(ENOMEM,     -2, "out of memory")                                          \
  X(ENOTFOUND,  -3, "no such entity (key, name or id not found)")             \
  X(EEXIST,     -4, "entity already exists (duplicate key or name)")          \
  X(ESTATE,     -5, "call not valid in the current state (e.g. outside MPI_Init..MPI_Finalize)") \
  X(EMISMATCH,  -6, "mismatch: begin/end of a region or task, or ranks that disagree (root, task parameters)") \
  X(ENAMETOOLONG, -7, "name too long")                                        \
  X(EMPI,       -8, "an MPI call failed")                                     \
  X(ESCOTCH,    -9, "SCOTCH failed")                                          \
  X(EHWLOC,    -10, "hwloc failed")                                           \
  X(EPARSE,    -11, "malformed input file")                                   \
  X(EIO,       -12, "input/output error")                                     \
  X(ECALLBACK, -13, "an application callback returned an error")             \
  X(ESIZE,     -14, "size mismatch")                                          \
  X(ERANGE,    -15, "value out of range")                                     \
  X(ENOTSUP,   -16, "not supported in this build or on this machine")        \
  X(ETOOBIG,   -17, "too large (task does not fit any node)")                 \
  X(EDISABLED, -18, "monitoring or balancing is switched off")               \
  X(EREMOTE,   -19, "the operation failed on another rank")                   \
  X(EOVERFLOW, -20, "arithmetic overflow")                                   \
  X(ENODATA,   -21, "no data yet (an empty distribution)")

/** Error codes: BALLAST_EINVAL, BALLAST_ENOMEM, ... (all negative). */
typedef enum {
  BALLAST_OK = 0,
/** \cond */
#define BALLAST_ERR_ENUM_(name, val, msg) BALLAST_##name = (val),
  BALLAST_ERRNO_MAP(BALLAST_ERR_ENUM_)
#undef BALLAST_ERR_ENUM_
/** \endcond */
  BALLAST_ERRNO_MIN_ = -21
} ballast_errno_t;

/**
 * \brief The message of an error code.
 * \param err 0 or a negative BALLAST_E* code.
 * \return a static string; "unknown error" for a value outside the list.
 */
BALLAST_API const char *ballast_strerror(int err);

/**
 * \brief The symbolic name of an error code, e.g. "BALLAST_EINVAL".
 * \return a static string; "BALLAST_UNKNOWN" for a value outside the list.
 */
BALLAST_API const char *ballast_err_name(int err);

/** \brief The library's version as "MAJOR.MINOR.PATCH" (static string). */
BALLAST_API const char *ballast_version(void);

/** Verbosity levels of ballast's log (environment: BALLAST_VERBOSE=0..3). */
enum {
  BALLAST_LOG_ERROR = 0, /**< errors that change what the library does */
  BALLAST_LOG_WARN = 1,  /**< bad input and degraded modes (default) */
  BALLAST_LOG_INFO = 2,  /**< decisions: remaps, detected hardware */
  BALLAST_LOG_DEBUG = 3  /**< everything */
};

/**
 * \brief ballast's one logging function. Messages go to stderr prefixed
 * "ballast[rank]: " and are dropped above the verbosity set by
 * BALLAST_VERBOSE (default 1, warnings). Thread safe.
 */
BALLAST_API void ballast_log(int level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#ifdef __cplusplus
}
#endif
#endif /* BALLAST_COMMON_H */
