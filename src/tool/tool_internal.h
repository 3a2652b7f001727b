/*
 * The tools interface's dispatch, for the layers that raise events (mon, the
 * task runtime, load balancing). Never installed.
 *
 * An emit point reads the global mask once and raises the event only when
 * some tool registered it, so with no tool an event costs one predictable
 * branch:
 *
 *   if (TOOL__ON(TOOL__EV_REGION_ENTER)) {
 *     ballast_tool_region_t ev = {...};
 *     tool__emit_region_enter(&ev);
 *   }
 *
 * Registered callbacks live in per-event arrays that only grow (a slot is
 * written before the count that publishes it, with release/acquire), so
 * emitting takes no lock and may run on any thread while a tool registers.
 */
#ifndef BALLAST_TOOL_INTERNAL_H
#define BALLAST_TOOL_INTERNAL_H

#include <stdint.h>

#include <ballast/tool.h>

/* X(name, NAME, callback type, event type): every event, in mask-bit order. */
#define TOOL__EVENTS(X)                                                          \
  X(mpi_enter, MPI_ENTER, ballast_tool_mpi_enter_fn, ballast_tool_mpi_enter_t)           \
  X(mpi_exit, MPI_EXIT, ballast_tool_mpi_exit_fn, ballast_tool_mpi_exit_t)               \
  X(region_enter, REGION_ENTER, ballast_tool_region_fn, ballast_tool_region_t)           \
  X(region_exit, REGION_EXIT, ballast_tool_region_fn, ballast_tool_region_t)             \
  X(task_begin, TASK_BEGIN, ballast_tool_task_fn, ballast_tool_task_t)                   \
  X(task_end, TASK_END, ballast_tool_task_fn, ballast_tool_task_t)                       \
  X(lb_decision, LB_DECISION, ballast_tool_lb_decision_fn, ballast_tool_lb_decision_t)   \
  X(remap_begin, REMAP_BEGIN, ballast_tool_remap_begin_fn, ballast_tool_remap_begin_t)   \
  X(remap_end, REMAP_END, ballast_tool_remap_end_fn, ballast_tool_remap_end_t)           \
  X(task_move, TASK_MOVE, ballast_tool_task_move_fn, ballast_tool_task_move_t)           \
  X(finalize, FINALIZE, ballast_tool_finalize_fn, ballast_tool_finalize_t)               \
  X(mpi_complete, MPI_COMPLETE, ballast_tool_mpi_complete_fn, ballast_tool_mpi_complete_t) \
  X(rep_outlier, REP_OUTLIER, ballast_tool_rep_fn, ballast_tool_rep_t)

enum {
#define TOOL__EVI_(n, N, f, e) TOOL__EVI_##N,
  TOOL__EVENTS(TOOL__EVI_)
#undef TOOL__EVI_
  TOOL__NEV
};
enum {
#define TOOL__EVB_(n, N, f, e) TOOL__EV_##N = 1u << TOOL__EVI_##N,
  TOOL__EVENTS(TOOL__EVB_)
#undef TOOL__EVB_
};

/** Bit TOOL__EV_x set when some tool registered event x (atomic). */
extern unsigned tool__mask;

/** The one branch of an emit point: non-zero when one of \a bits is registered. */
#define TOOL__ON(bits) \
  __builtin_expect((__atomic_load_n(&tool__mask, __ATOMIC_RELAXED) & (bits)) != 0, 0)

/* tool__emit_<event>(const <event type> *ev): calls every callback
 * registered for the event, in registration order, on the calling thread. */
#define TOOL__EMIT_DECL_(n, N, f, e) void tool__emit_##n(const e *ev);
TOOL__EVENTS(TOOL__EMIT_DECL_)
#undef TOOL__EMIT_DECL_

/** The events' clock (api->now_ns): the function mon installed, else
 *  CLOCK_MONOTONIC in nanoseconds. */
uint64_t tool__now(void);
/** mon installs its clock (ticks converted to ns) at MPI_Init. */
void tool__set_clock(uint64_t (*now_ns)(void));
/** mon installs api->mpit_count and api->mpit_region at MPI_Init; until
 *  then they answer 0 and BALLAST_ENOTFOUND. */
void tool__set_mpit(int (*count)(void),
                    int (*region)(int region, int var, const char **name,
                                  double *delta, double *max));
/** mon installs api->comm_ranks (its communicator cache) at MPI_Init; until
 *  then api->comm_ranks answers BALLAST_ENOTFOUND. */
void tool__set_comm_ranks(int (*fn)(int comm_id, int *world_ranks, int max));
/** mon installs api->dist_quantiles (its distributions) at MPI_Init; before
 *  and once monitoring ended it answers BALLAST_ESTATE. The tool layer has
 *  checked kind, nq and the arrays. */
void tool__set_dist(int (*fn)(int kind, int id, int nq, const double *q,
                              double *out_ns, uint64_t *count));

/** At MPI_Init (mon's wrapper, after monitoring started): loads the tools of
 *  BALLAST_TOOLS, then runs the init of the tools ballast_tool_attach()
 *  queued. Idempotent. */
void tool__start(void);
/** Inside MPI_Finalize, before the report: raises the finalize event once,
 *  then no event is raised any more. Idempotent. */
void tool__finalize(void);

/* ---- between tool.c and load.c -------------------------------------------- */

/** A new tool record (name copied); NULL with a warning when BALLAST_TOOL_MAX
 *  tools exist or memory is short (*err gets the code). *queued is 1 when it
 *  was added before MPI_Init (tool__start will run its init). */
ballast_tool_t *tool__new(const char *name, ballast_tool_init_v1_fn init,
                          void *dl, int *queued, int *err);
/** Runs the tool's init and commits its registrations when it returns 0.
 *  Returns 0, 1 (declined) or BALLAST_ECALLBACK (warned). */
int tool__run_init(ballast_tool_t *tool);
/** Loads one BALLAST_TOOLS entry (warns and returns on any failure). */
void tool__load(const char *entry);

/* ---- a tool that crashes (crash.c) ---------------------------------------- */

/** 1 when the calling thread is inside a tool's callback or init, with the
 *  tool's name, the file it was loaded from (NULL when unknown) and the
 *  event ("mpi_exit", ..., "init"); 0 otherwise. Async-signal-safe. */
int tool__current(const char **name, const char **file, const char **event);
/** Once a tool attached: handlers for SIGSEGV, SIGBUS, SIGFPE, SIGILL and
 *  SIGABRT that name the tool and event a crash happened in (one write(2)
 *  to stderr), then hand the signal on unchanged (common/sigchain.h).
 *  Idempotent. */
void tool__crash_arm(void);
/** After the finalize event: the previous handlers back (where ours are
 *  still installed). */
void tool__crash_disarm(void);

#endif /* BALLAST_TOOL_INTERNAL_H */
