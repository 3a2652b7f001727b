/* Error strings, version and the logging function shared by all modules. */
#include <ballast/common.h>

#include <mpi.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common_internal.h"
#include "common/env.h"

const char *ballast_strerror(int err) {
  if (err == 0)
    return "success";
#define BALLAST_ERR_MSG_(name, val, msg)                                      \
  if (err == (val))                                                           \
    return msg;
  BALLAST_ERRNO_MAP(BALLAST_ERR_MSG_)
#undef BALLAST_ERR_MSG_
  return "unknown error";
}

const char *ballast_err_name(int err) {
  if (err == 0)
    return "BALLAST_OK";
#define BALLAST_ERR_NAME_(name, val, msg)                                     \
  if (err == (val))                                                           \
    return "BALLAST_" #name;
  BALLAST_ERRNO_MAP(BALLAST_ERR_NAME_)
#undef BALLAST_ERR_NAME_
  return "BALLAST_UNKNOWN";
}

const char *ballast_version(void) { return BALLAST_VERSION_STRING; }

int ballast__mpi_state;

void ballast__mpi_state_set(int state) {
  __atomic_store_n(&ballast__mpi_state, state, __ATOMIC_RELEASE);
}

/* Outside the window the wrappers marked (MPI initialised or finalised
 * without them, or a call before MPI_Init): ask MPI. */
static int live_slow(int *fin) {
  int init = 0;
  *fin = 0;
  PMPI_Initialized(&init);
  PMPI_Finalized(fin);
  return init && !*fin;
}

int ballast__mpi_live(void) {
  int fin;
  return ballast__mpi_state == 1 || live_slow(&fin);
}

int ballast__need_mpi_slow(const char *fn) {
  int fin = 0;
  if (ballast__mpi_state != 2 && live_slow(&fin))
    return 0;
  ballast_log(BALLAST_LOG_WARN, "%s: called %s: returns BALLAST_ESTATE", fn,
              fin || ballast__mpi_state == 2 ? "after MPI_Finalize" : "before MPI_Init");
  return BALLAST_ESTATE;
}

static int log_level = -1;

int ballast__log_level(void) {
  int lvl = __atomic_load_n(&log_level, __ATOMIC_RELAXED);
  if (lvl < 0) {
    /* A bad value keeps the default (warnings shown), so it cannot hide
     * the warnings about itself and the other variables. */
    lvl = ballast__env_verbosity();
    __atomic_store_n(&log_level, lvl, __ATOMIC_RELAXED);
  }
  return lvl;
}

int ballast__world_rank(void) {
  int init = 0, fin = 0, rank = -1;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  if (init && !fin)
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

void ballast_log(int level, const char *fmt, ...) {
  if (level > ballast__log_level())
    return;
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  static const char *tag[] = {"error", "warning", "info", "debug"};
  const char *t = tag[level < 0 ? 0 : (level > 3 ? 3 : level)];
  if (level <= BALLAST_LOG_WARN && ballast__log_keep(t, msg))
    return;
  ballast__log_line(ballast__world_rank(), t, msg, "");
}

void ballast__log_line(int rank, const char *tag, const char *msg, const char *note) {
  /* One fprintf per message so lines from threads do not interleave. */
  if (rank >= 0)
    fprintf(stderr, "ballast[%d]: %s: %s%s\n", rank, tag, msg, note);
  else
    fprintf(stderr, "ballast: %s: %s%s\n", tag, msg, note);
}

__thread __attribute__((tls_model("initial-exec"))) int ballast__tl_lib_depth;

void ballast__lib_begin(void) { ballast__tl_lib_depth++; }

int ballast__lib_depth(void) { return ballast__tl_lib_depth; }

/* Nanoseconds, so relaxed atomic adds keep the totals exact. */
static uint64_t own_ns, own_wait_ns;

static uint64_t to_ns(double s) { return s > 0 && s < 1e9 ? (uint64_t)(s * 1e9 + 0.5) : 0; }

void ballast__own_add(double seconds, double wait) {
  __atomic_fetch_add(&own_ns, to_ns(seconds), __ATOMIC_RELAXED);
  __atomic_fetch_add(&own_wait_ns, to_ns(wait < seconds ? wait : seconds), __ATOMIC_RELAXED);
}

void ballast__own_read(double *seconds, double *wait) {
  if (seconds)
    *seconds = 1e-9 * (double)__atomic_load_n(&own_ns, __ATOMIC_RELAXED);
  if (wait)
    *wait = 1e-9 * (double)__atomic_load_n(&own_wait_ns, __ATOMIC_RELAXED);
}

void ballast__lib_end(void) {
  if (ballast__tl_lib_depth > 0)
    ballast__tl_lib_depth--;
  else
    BALLAST_WARN("library traffic end without begin (ignored)");
}
