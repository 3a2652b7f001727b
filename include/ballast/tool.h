/**
 * \file ballast/tool.h
 * \brief The tools interface: other tools plug into ballast's events
 * (MPI calls, regions, tasks, load-balancing decisions, remaps, task moves,
 * the end of the run). This header is the spec.
 *
 * \section tool_what What a tool is
 * A tool is a shared object (or code linked into the program) that exports
 * one versioned init function,
 * \code
 * int ballast_tool_init_v1(const ballast_tool_api_v1_t *api, ballast_tool_t *tool);
 * \endcode
 * ballast calls it once with the interface's table. Inside it the tool
 * registers one callback per event it wants (\c api->on_mpi_exit(tool, fn,
 * user_data), ...) and returns
 * - 0 to attach: its registrations take effect;
 * - a positive value to decline quietly (e.g. "not on this rank"): nothing
 *   it registered takes effect, no message;
 * - a negative value for an error: nothing it registered takes effect, one
 *   warning names the tool and the value, the run goes on without it.
 *
 * \section tool_load Loading
 * - \c BALLAST_TOOLS=a.so:b.so (colon-separated) loads tools at MPI_Init
 *   (MPI_Init_thread), after monitoring has started, with
 *   <tt>dlopen(RTLD_NOW | RTLD_LOCAL)</tt>, in the order given. An entry with
 *   a '/' is a path; an entry ending in ".so" without '/' is searched as
 *   dlopen searches (LD_LIBRARY_PATH, ...); a bare name such as \c count is a
 *   bundled tool: <tt>\<dir of libballast.so\>/ballast/tools/\<name\>.so</tt>
 *   (installed as <tt>PREFIX/lib/ballast/tools/</tt>, and so in the build
 *   tree too), then the install prefix's <tt>lib/ballast/tools/</tt>.
 * - ballast_tool_attach() attaches a tool linked into the program. Called
 *   before MPI_Init, the tool is queued and its init runs at MPI_Init, after
 *   the \c BALLAST_TOOLS ones, in the order of the calls; called after
 *   MPI_Init, its init runs at once.
 * - At most #BALLAST_TOOL_MAX tools are kept per process (attached,
 *   declined or failed alike); a further one is refused with a warning.
 * - Tools are attached on every rank independently: the same
 *   \c BALLAST_TOOLS on every rank is the usual use, but nothing requires it.
 *
 * \section tool_fail Failures
 * A missing or unloadable .so, a .so without \c ballast_tool_init_v1 (in
 * particular one built for another interface version, e.g. exporting only
 * \c ballast_tool_init_v2), an init returning a negative value, or one tool
 * too many: one warning naming the tool (its path or name) and what was
 * wrong; the run continues without that tool. For the tools started inside
 * MPI_Init (BALLAST_TOOLS, and those attached before it) the warning is
 * printed once per job, by the lowest rank that raised it, with "(on K of N
 * ranks)" when not every rank did. Nothing a tool does can make an MPI call
 * of the application fail.
 *
 * A tool that crashes inside a callback or its init (SIGSEGV, SIGBUS,
 * SIGFPE, SIGILL, SIGABRT on the callback's thread) is named before the
 * process dies: one line on stderr, <tt>ballast[rank]: error: tool "NAME"
 * (FILE) crashed in its EVENT callback: SIGNAL (si_code C, address A)</tt>,
 * where EVENT is the event's name as in the on_* registration (mpi_exit,
 * region_enter, ...). The signal then goes on unchanged to the handler
 * installed before (MPI's, the program's): it sees the kernel's own siginfo.
 * The handlers are installed when the first tool attaches and removed after
 * the finalize event.
 *
 * \section tool_order Order, threads, clock
 * - Several tools at once: each is called for the events it registered, in
 *   the order the tools attached (load order). A registration made after a
 *   tool's init comes after those already made for that event.
 * - Callbacks run on the thread where the event happens, synchronously,
 *   before the event's code goes on. Under MPI_THREAD_MULTIPLE they may run
 *   concurrently on several threads: a tool's callbacks must be thread safe.
 *   Event structs and the strings they point to are valid during the call
 *   only: copy what you keep.
 * - Every \c t_ns is read from one clock, the one api->now_ns() reads:
 *   nanoseconds on the CLOCK_MONOTONIC time base. Where monitoring uses the
 *   invariant TSC, ballast converts TSC ticks with the rate calibrated
 *   against CLOCK_MONOTONIC at MPI_Init (so it stays within a few ppm of
 *   CLOCK_MONOTONIC); otherwise it is CLOCK_MONOTONIC itself. Timestamps of
 *   one process are comparable; timestamps of different nodes are not
 *   synchronised.
 * - Registration may happen in init or later (e.g. from a callback); a
 *   registration made after init takes effect for events that start after
 *   it. Registrations cannot be withdrawn; after the finalize event no
 *   further event is raised.
 *
 * \section tool_safe What a callback may call
 * - api->now_ns, api->world_rank, api->world_size, api->tool_name and the
 *   registration functions: anywhere, any thread.
 * - pia's local read calls (pia_region_*, pia_activity_* reads,
 *   pia_partner_*, pia_region_find*, pia_region_data; everything pia.h does not mark
 *   collective): from every callback. In MPI callbacks the figures of the
 *   call being reported are already counted at \c mpi_exit (not yet at
 *   \c mpi_enter).
 * - Region calls (mon_region_begin/end, MPI_Pcontrol), task calls (rta_*)
 *   and load balancing: never from a callback (they raise events
 *   themselves; the result is undefined).
 * - MPI: from \c mpi_enter / \c mpi_exit / \c mpi_complete callbacks, MPI calls go straight
 *   to MPI, unrecorded and without events. From \c finalize MPI may be used
 *   freely, collectives on MPI_COMM_WORLD included (every rank gets the
 *   finalize event): it is neither recorded nor raised as events. From the
 *   init function (which runs inside MPI_Init when loaded from
 *   BALLAST_TOOLS) MPI may be used too: it counts as ballast's own traffic
 *   (\c lib = 1 for the tools attached before). From other callbacks, do
 *   not call MPI.
 * - Collective pia or mon calls (pia.h / mon.h say which): from
 *   \c finalize only.
 *
 * \section tool_nest Nesting: the order of region, task and MPI events
 * On each thread, the events that open and close something nest: what
 * opens last closes first, so a timeline drawn from them is a tree.
 * - A task's slice encloses its region: rta_task_begin raises task_begin,
 *   then region_enter of the task's region (named by its key); rta_task_end
 *   raises region_exit, then task_end. Regions the application opens inside
 *   a task nest inside the task's region (a task whose region has an
 *   application region still open does not end: rta_task_end fails and
 *   raises nothing).
 * - Calls that fail raise nothing: a mismatched region end, an end of a
 *   task that is not the innermost open one, a begin of an open task.
 * - An MPI call's mpi_enter and mpi_exit enclose everything the call raises
 *   (its mpi_complete events) and nothing else: MPI_Pcontrol(1|-1, name)
 *   enters or leaves the region before its mpi_enter, so MPI_Pcontrol(1,
 *   name) lies inside the region it opens and MPI_Pcontrol(-1, name) after
 *   the region it closes (where pia counts them too).
 * - At MPI_Finalize, the regions still open on the thread that calls it are
 *   left, innermost first, before \c finalize; a task whose region is left
 *   so ends right after it (its task_end follows its region's region_exit,
 *   as with rta_task_end), so the events stay nested. Regions still open on
 *   other threads get no end event: a tool that draws slices closes them
 *   itself at \c finalize (the bundled trace writers do, innermost first, at
 *   the finalize event's time).
 * - Timestamps never decrease along a thread's events, except that an
 *   mpi_exit's \c t_begin_ns lies before the events the call raised (it is
 *   exactly the \c t_ns of its mpi_enter).
 *
 * \section tool_noevent MPI calls that raise no events
 * MPI_Init, MPI_Init_thread and MPI_Finalize (tools load inside MPI_Init;
 * MPI_Finalize raises \c finalize instead); the Fortran MPI_PCONTROL;
 * functions ballast does not wrap (those missing from src/mon/mpi31.spec,
 * e.g. MPI_Wtime, MPI_Wtick, MPI_Initialized, MPI_Finalized,
 * MPI_Query_thread, MPI_Get_version, MPI_Status_set_*, MPI_T_*); calls made
 * while ballast is inside another wrapper or a callback (a tool's own MPI
 * calls, MPI's internal use of MPI); calls before MPI_Init, after the
 * finalize event, and with monitoring off (BALLAST_MONITOR=0). The PMPI_
 * names never raise events.
 *
 * \section tool_twice The same tool loaded twice
 * Each BALLAST_TOOLS entry and each ballast_tool_attach() call is a tool of
 * its own, even when two name the same file or init: dlopen returns the same
 * loaded object (one copy of its globals), and its init runs twice, with two
 * different \c ballast_tool_t. A tool whose init registers again in the
 * second call gets every event twice; a tool that must run once remembers
 * that it attached (a static flag) and declines the second time (returns a
 * positive value), as the bundled trace writers do (one line on stderr).
 * Both count against #BALLAST_TOOL_MAX.
 *
 * \section tool_lib The library's own MPI traffic
 * MPI calls that ballast makes for itself (mapping, agreement, migration,
 * reports) raise \c mpi_enter / \c mpi_exit like the application's, with
 * \c lib = 1; the application's calls have \c lib = 0. ballast's own counts
 * (pia) count only the application's calls, so a tool that wants to match
 * them skips events with \c lib set.
 *
 * \section tool_version Versioning
 * #BALLAST_TOOL_VERSION is the interface's version. A later, incompatible
 * version gets a new init name (\c ballast_tool_init_v2 ...): the loader
 * looks for the names it supports, so an old tool keeps working or is
 * refused with a message that names the versions involved. Within one
 * version, fields may be added at the end of the table and of the event
 * structs, never moved: a tool checks \c api->size before using a field
 * added after the first release.
 *
 * Added in version 1 after the first release (present when \c api->size is
 * at least <tt>offsetof(ballast_tool_api_v1_t, comm_ranks) +
 * sizeof(void *)</tt>, i.e. #BALLAST_TOOL_API_V1_1_SIZE): the fields
 * \c comm_id and \c tag at the end of the mpi_enter and mpi_exit events,
 * the mpi_complete event (api->on_mpi_complete) and api->comm_ranks.
 * With a smaller table, those fields do not exist in the events passed.
 * Added later (#BALLAST_TOOL_API_V1_2_SIZE): api->dist_quantiles; then
 * (#BALLAST_TOOL_API_V1_3_SIZE): the rep_outlier event
 * (api->on_rep_outlier), api->mpit_count and api->mpit_region.
 *
 * \section tool_cost Cost
 * With no tool registered for an event, the event costs one predictable
 * branch. An MPI callback costs one indirect call per registered callback,
 * plus the figures of the event (sizes are cached per communicator).
 */
#ifndef BALLAST_TOOL_H
#define BALLAST_TOOL_H

#include <stddef.h>
#include <stdint.h>

#include <ballast/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The version of the tools interface this header describes. */
#define BALLAST_TOOL_VERSION 1

/** At most this many tools attach in one process. */
#define BALLAST_TOOL_MAX 16

/** An attached tool (opaque; owned by ballast, valid until the process ends). */
typedef struct ballast_tool ballast_tool_t;

/* ---- events ------------------------------------------------------------------ */

/**
 * An MPI call starts (before the call reaches MPI). Raised by every wrapped
 * MPI function except MPI_Init / MPI_Init_thread (tools load after it:
 * their \c mpi_exit is not raised either) and MPI_Finalize (see
 * \c finalize).
 */
typedef struct {
  uint64_t t_ns;       /**< when the call started */
  int fn;              /**< activity id of the function (pia's id: stable within a run) */
  const char *name;    /**< its name, e.g. "MPI_Send" (static string) */
  int comm_size;       /**< size of the communicator the call names (remote group of an
                            intercommunicator); 0 when it names none (waits, tests,
                            windows, files, datatypes) */
  int lib;             /**< 1: ballast's own traffic; 0: the application's */
  /* Since BALLAST_TOOL_API_V1_1_SIZE (see \ref tool_version): */
  int comm_id;         /**< the communicator the call names (see api->comm_ranks):
                            0 is MPI_COMM_WORLD; -1 when it names none */
  int tag;             /**< the tag the call names, as passed (a send's tag, a receive's
                            tag, possibly MPI_ANY_TAG; MPI_Sendrecv: its send tag);
                            -1 when it names none */
} ballast_tool_mpi_enter_t;

/**
 * An MPI call returned. \c bytes is what the call moved or completed: a
 * blocking call gives its bytes; a nonblocking or persistent post gives 0
 * in \c bytes and the size of a posted send in \c posted_bytes; the
 * wait/test call that completes a request gives the bytes of what it
 * completed (a completed receive's size from its status, a completed send's
 * size), each completion also raised as an mpi_complete event.
 *
 * Bytes are credited at the completing call here, at the posting call in
 * pia and the profile. Over a run, the \c bytes of the events with
 * \c lib = 0 add up to pia's byte count of MPI_ALL (and of MPI_P2P, ...
 * per group), but per function they differ for nonblocking and persistent
 * operations: pia counts an MPI_Irecv's received bytes under MPI_Irecv
 * (when the request completes), this event under the MPI_Wait/MPI_Test
 * call that completed it. A tool that wants pia's figure per function sums
 * mpi_complete's \c bytes by its \c fn (the posting function) and
 * mpi_exit's \c bytes of the calls that post nothing.
 */
typedef struct {
  uint64_t t_ns;        /**< when the call returned */
  uint64_t t_begin_ns;  /**< exactly the \c t_ns of its mpi_enter (the same reading of
                             the clock, whether or not mpi_enter is registered) */
  int fn;               /**< activity id, as in mpi_enter */
  const char *name;     /**< "MPI_Send", ... */
  uint64_t bytes;       /**< bytes moved or completed by this call */
  uint64_t posted_bytes;/**< nonblocking/persistent send posted by this call: its size; else 0 */
  int partner;          /**< MPI_COMM_WORLD rank of the call's partner (destination, source,
                             root); for a wait/test, the partner of what it completed when
                             that is one rank; -1 when none or several */
  int comm_size;        /**< as in mpi_enter */
  int lib;              /**< as in mpi_enter */
  int ret;              /**< MPI's return value (MPI_SUCCESS, ...) */
  /* Since BALLAST_TOOL_API_V1_1_SIZE (see \ref tool_version): */
  int comm_id;          /**< as in mpi_enter */
  int tag;              /**< as in mpi_enter, except for a completed blocking receive
                             (MPI_Recv, MPI_Mrecv): the received message's tag */
} ballast_tool_mpi_exit_t;

/**
 * A nonblocking or persistent operation completed, or the receive half of
 * MPI_Sendrecv / MPI_Sendrecv_replace: one message sent or received. The
 * requests of nonblocking collectives, one-sided operations (MPI_Rput, ...)
 * and MPI-IO raise it too when they complete, as ballast counts them
 * (\c fn says which; they have no tag, and I/O no partner). Raised
 * inside the call that completed it, between that call's mpi_enter and
 * mpi_exit (a wait, a test, MPI_Sendrecv), once per message, in the order
 * of the requests; MPI_Request_free of an active send raises it before the
 * call's mpi_enter (the send will complete). A failed or cancelled
 * operation, and a freed receive, raise none. Everything is copied when
 * the operation is posted or taken from the completion's status, so the
 * communicator may be freed by then.
 */
typedef struct {
  uint64_t t_ns;       /**< when the completing call returned from MPI (its mpi_exit's
                            \c t_ns; for MPI_Request_free, when it was called) */
  int fn;              /**< activity id of the call that posted it (MPI_Irecv,
                            MPI_Isend, MPI_Recv_init, MPI_Sendrecv, ...) */
  const char *name;    /**< its name */
  int recv;            /**< 1: its size came from a receive status (a message received,
                            an MPI-IO read); 0: a message sent, or another operation */
  int partner;         /**< MPI_COMM_WORLD rank of the sender (a receive: from the
                            status) or of the destination; -1 when not known */
  int tag;             /**< the message's tag (a receive: from the status); -1 for an
                            operation without one (collectives, one-sided); undefined
                            for MPI-IO */
  uint64_t bytes;      /**< its size in bytes (a receive: from the status) */
  int comm_id;         /**< the communicator it was posted on (as in mpi_enter) */
  int lib;             /**< as in mpi_enter */
} ballast_tool_mpi_complete_t;

/**
 * A region was entered or left: mon_region_begin/end, region handles,
 * MPI_Pcontrol(1|-1, name) all raise it, and so do the task
 * runtime's regions (a task's region is named by its key). Regions still
 * open at MPI_Finalize are left (innermost first) before \c finalize.
 */
typedef struct {
  uint64_t t_ns;       /**< when */
  const char *name;    /**< the region's name as given */
  int id;              /**< region id (pia's id; 0 is the whole program, never raised) */
  int depth;           /**< open regions on this thread including this one (1 = outermost) */
} ballast_tool_region_t;

/**
 * A repetition of a repeated region (mon_region_repeat(), BALLAST_REPEAT)
 * was labelled an outlier: at least BALLAST_REPEAT_OUTLIER times the running
 * median. Raised when the repetition ends, before the region's region_exit
 * event, on the thread that called MPI_Init (the one that keeps
 * repetitions). Since #BALLAST_TOOL_API_V1_3_SIZE.
 */
typedef struct {
  uint64_t t_ns;       /**< when the repetition ended */
  uint64_t t_begin_ns; /**< when it began */
  const char *name;    /**< the region's name */
  int id;              /**< region id */
  long long index;     /**< the repetition's number, from 0 */
  double wtime;        /**< its wall time, seconds */
  double median;       /**< the running median it was judged against, seconds */
} ballast_tool_rep_t;

/** A task starts or ends its step (rta_task_begin / rta_task_end). */
typedef struct {
  uint64_t t_ns;       /**< when */
  const char *key;     /**< the task's path key, e.g. "md/block_17" */
} ballast_tool_task_t;

/** Verdict of a load-balancing decision. */
typedef enum {
  BALLAST_TOOL_KEEP = 0,   /**< no remap at this step */
  BALLAST_TOOL_REMAP = 1   /**< remap now (a remap_begin follows) */
} ballast_tool_verdict_t;

/**
 * A load-balancing step was judged (every rta_lb_perform call that fed
 * the policy: the policy is not off). Collective: every rank of the context gets the same figures.
 */
typedef struct {
  uint64_t t_ns;             /**< when the decision was made */
  const char *context;       /**< key of the context's root task */
  long step;                 /**< steps the policy has observed */
  double imbalance;          /**< max/avg of the per-rank medians; 0 when not judged */
  double predicted_gain_s;   /**< seconds a remap would save over the horizon */
  double remap_cost_s;       /**< seconds a remap is expected to cost (measured once one ran) */
  int verdict;               /**< ballast_tool_verdict_t */
  const char *reason;        /**< rta_reason_name(): "balanced", "warmup", "explicit", ... */
  int slowest;               /**< the rank with the max median in the window judged
                                  (-1: none judged at this step) */
  int persistent;            /**< imbalanced windows in a row with that same slowest
                                  rank (0: balanced or not judged) */
  int noise;                 /**< RTA_NOISE_* bits (ballast/rta_policy.h): outliers
                                  left out, the slowest rank moved, every rank slower */
} ballast_tool_lb_decision_t;

/** A remap starts (after a REMAP verdict). Collective. */
typedef struct {
  uint64_t t_ns;             /**< when it happened (the clock of now_ns()) */
  const char *context;       /**< key of the context's root task */
  long step;                 /**< as in the decision */
  const char *strategy;      /**< mapping strategy, e.g. "twophase" */
} ballast_tool_remap_begin_t;

/** A remap ended, committed or rolled back. Collective. */
typedef struct {
  uint64_t t_ns;             /**< when it happened (the clock of now_ns()) */
  const char *context;       /**< key of the context's root task */
  long step;                 /**< as in the decision */
  const char *strategy;      /**< mapping strategy, e.g. "twophase" */
  long tasks_moved;          /**< tasks moved, all ranks (0 when rolled back) */
  uint64_t bytes_moved;      /**< state bytes moved, all ranks (0 when rolled back) */
  double mapping_s;          /**< seconds computing the mapping (max over ranks) */
  double migration_s;        /**< seconds moving state (max over ranks) */
  int committed;             /**< 1: committed; 0: rolled back (an error on some rank) */
} ballast_tool_remap_end_t;

/**
 * One task moved by a remap, raised on the rank it leaves and on the rank it
 * arrives at (before remap_end; a rolled-back remap raises none).
 */
typedef struct {
  uint64_t t_ns;             /**< when it happened (the clock of now_ns()) */
  const char *key;           /**< the task's key */
  int from;                  /**< MPI_COMM_WORLD rank it left */
  int to;                    /**< MPI_COMM_WORLD rank it went to */
  uint64_t bytes;            /**< its state's size in bytes (0 when not known on this rank) */
} ballast_tool_task_move_t;

/**
 * The run ends: raised inside MPI_Finalize, after regions still open were
 * left and ballast stopped recording, before the end-of-run report; MPI is
 * still usable (see \ref tool_safe). No event follows.
 */
typedef struct {
  uint64_t t_ns;             /**< when it happened (the clock of now_ns()) */
} ballast_tool_finalize_t;

/* ---- callbacks ------------------------------------------------------------------- */

/** Callback of the event raised when an MPI call starts (ballast_tool_mpi_enter_t); \a user_data is the pointer given at registration. */
typedef void (*ballast_tool_mpi_enter_fn)(const ballast_tool_mpi_enter_t *ev, void *user_data);
/** Callback of the event raised when an MPI call returns (ballast_tool_mpi_exit_t); \a user_data is the pointer given at registration. */
typedef void (*ballast_tool_mpi_exit_fn)(const ballast_tool_mpi_exit_t *ev, void *user_data);
/** Callback of the event raised when a region is entered or left (ballast_tool_region_t); \a user_data is the pointer given at registration. */
typedef void (*ballast_tool_region_fn)(const ballast_tool_region_t *ev, void *user_data);
/** Callback of the rep_outlier event. */
typedef void (*ballast_tool_rep_fn)(const ballast_tool_rep_t *ev, void *user_data);
/** Callback of the event raised when a task begins or ends (ballast_tool_task_t); \a user_data is the pointer given at registration. */
typedef void (*ballast_tool_task_fn)(const ballast_tool_task_t *ev, void *user_data);
/** Callback of the event raised when the load-balancing policy's decision (ballast_tool_lb_decision_t); \a user_data is the pointer given at registration. */
typedef void (*ballast_tool_lb_decision_fn)(const ballast_tool_lb_decision_t *ev,
                                            void *user_data);
/** Callback of the event raised when a remap starts (ballast_tool_remap_begin_t); \a user_data is the pointer given at registration. */
typedef void (*ballast_tool_remap_begin_fn)(const ballast_tool_remap_begin_t *ev,
                                            void *user_data);
/** Callback of the event raised when a remap ends (ballast_tool_remap_end_t); \a user_data is the pointer given at registration. */
typedef void (*ballast_tool_remap_end_fn)(const ballast_tool_remap_end_t *ev, void *user_data);
/** Callback of the event raised when a task moved (ballast_tool_task_move_t); \a user_data is the pointer given at registration. */
typedef void (*ballast_tool_task_move_fn)(const ballast_tool_task_move_t *ev, void *user_data);
/** Callback of the event raised when the run ends (ballast_tool_finalize_t); \a user_data is the pointer given at registration. */
typedef void (*ballast_tool_finalize_fn)(const ballast_tool_finalize_t *ev, void *user_data);
/** Callback of the event raised when a nonblocking MPI operation completes (ballast_tool_mpi_complete_t); \a user_data is the pointer given at registration. */
typedef void (*ballast_tool_mpi_complete_fn)(const ballast_tool_mpi_complete_t *ev,
                                             void *user_data);

/* ---- the table ------------------------------------------------------------------- */

/**
 * The interface's table, given to a tool's init. Owned by ballast, valid
 * until the process ends.
 *
 * Every \c on_* function registers \a fn, called with \a user_data, for one
 * event of \a tool. Returns 0; BALLAST_EINVAL for a NULL tool or fn;
 * BALLAST_EEXIST when the tool already registered that event;
 * BALLAST_ESTATE after the finalize event. Thread safe.
 */
typedef struct ballast_tool_api_v1 {
  int version;   /**< BALLAST_TOOL_VERSION of the library (1) */
  int size;      /**< sizeof the table in the library: fields beyond it do not exist */

  /** Registers \a fn for MPI call entries (codes as above). */

  int (*on_mpi_enter)(ballast_tool_t *tool, ballast_tool_mpi_enter_fn fn, void *user_data);
  /** Registers \a fn for MPI call exits (codes as above). */
  int (*on_mpi_exit)(ballast_tool_t *tool, ballast_tool_mpi_exit_fn fn, void *user_data);
  /** Registers \a fn for region entries (codes as above). */
  int (*on_region_enter)(ballast_tool_t *tool, ballast_tool_region_fn fn, void *user_data);
  /** Registers \a fn for region exits (codes as above). */
  int (*on_region_exit)(ballast_tool_t *tool, ballast_tool_region_fn fn, void *user_data);
  /** Registers \a fn for task begins (codes as above). */
  int (*on_task_begin)(ballast_tool_t *tool, ballast_tool_task_fn fn, void *user_data);
  /** Registers \a fn for task ends (codes as above). */
  int (*on_task_end)(ballast_tool_t *tool, ballast_tool_task_fn fn, void *user_data);
  /** Registers \a fn for load-balancing decisions (codes as above). */
  int (*on_lb_decision)(ballast_tool_t *tool, ballast_tool_lb_decision_fn fn, void *user_data);
  /** Registers \a fn for remap starts (codes as above). */
  int (*on_remap_begin)(ballast_tool_t *tool, ballast_tool_remap_begin_fn fn, void *user_data);
  /** Registers \a fn for remap ends (codes as above). */
  int (*on_remap_end)(ballast_tool_t *tool, ballast_tool_remap_end_fn fn, void *user_data);
  /** Registers \a fn for task moves (codes as above). */
  int (*on_task_move)(ballast_tool_t *tool, ballast_tool_task_move_fn fn, void *user_data);
  /** Registers \a fn for the end of the run (codes as above). */
  int (*on_finalize)(ballast_tool_t *tool, ballast_tool_finalize_fn fn, void *user_data);

  /** The clock of every event's \c t_ns (see \ref tool_order). */
  uint64_t (*now_ns)(void);
  /** This process's rank in MPI_COMM_WORLD (-1 outside MPI_Init..MPI_Finalize). */
  int (*world_rank)(void);
  /** Size of MPI_COMM_WORLD (-1 outside MPI_Init..MPI_Finalize). */
  int (*world_size)(void);
  /** The tool's name: the BALLAST_TOOLS entry, or the name given to
   *  ballast_tool_attach() (owned by ballast). */
  const char *(*tool_name)(ballast_tool_t *tool);

  /* Since BALLAST_TOOL_API_V1_1_SIZE (see \ref tool_version): */
  /** Registers \a fn for completions of nonblocking MPI operations (codes as above). */
  int (*on_mpi_complete)(ballast_tool_t *tool, ballast_tool_mpi_complete_fn fn,
                         void *user_data);
  /**
   * The members of communicator \a comm_id (an id from an event): fills
   * world_ranks[0..max-1] with the MPI_COMM_WORLD rank of each of its ranks
   * in rank order (of the remote group for an intercommunicator, -1 for a
   * process outside MPI_COMM_WORLD) and returns its size (which may exceed
   * \a max). Ids are local to the process, never reused within a run,
   * and 0 is MPI_COMM_WORLD; the same communicator has different ids on
   * different processes. Known from the first event that names the
   * communicator until it is freed: BALLAST_ENOTFOUND for an id not known
   * (or no longer), BALLAST_EINVAL for a negative \a max or a NULL array
   * with \a max > 0. Thread safe; may be called from any callback.
   */
  int (*comm_ranks)(int comm_id, int *world_ranks, int max);

  /* Since BALLAST_TOOL_API_V1_2_SIZE (see \ref tool_version): */
  /**
   * Quantiles of a distribution monitoring keeps, read while the program
   * runs (the figures of ballast/pia.h's pia_region_quantiles() and
   * pia_activity_quantiles()): \a kind #BALLAST_TOOL_DIST_REGION with \a id
   * a region id (a region event's \c id): its instances' wall times; or
   * #BALLAST_TOOL_DIST_MPI with \a id an MPI function (an mpi event's
   * \c fn): its calls' durations over the whole run, the application's
   * calls only. Fills out_ns[i] with quantile q[i] (q in [0, 1]) in
   * nanoseconds, within 1/128 of the exact one (q = 0, 1: the exact min and
   * max), and *count (when not NULL) with the number of values. Returns 0;
   * BALLAST_EINVAL for an unknown kind, nq < 0, NULL arrays with nq > 0 or
   * a q outside [0, 1]; BALLAST_ENOTFOUND for an id that does not exist;
   * BALLAST_ENODATA while it has no value (out_ns unchanged, *count 0);
   * BALLAST_ESTATE outside MPI_Init .. MPI_Finalize. Thread safe; may be
   * called from any callback (it reads, never locks nor calls MPI).
   */
  int (*dist_quantiles)(int kind, int id, int nq, const double *q, double *out_ns,
                        uint64_t *count);

  /* Since BALLAST_TOOL_API_V1_3_SIZE (see \ref tool_version): */
  /** Registers \a fn for the rep_outlier event (a repeated region's
   *  repetition labelled an outlier). As the other on_ calls. */
  int (*on_rep_outlier)(ballast_tool_t *tool, ballast_tool_rep_fn fn, void *user_data);
  /**
   * The number of MPI_T performance variables ballast reads in this run
   * (BALLAST_MPIT; ballast/pia.h's pia_mpit_count()). Thread safe.
   */
  int (*mpit_count)(void);
  /**
   * MPI_T variable \a var's name (NULL for an id out of range) and region
   * \a region's figures of it: the sum of its changes over the region's
   * instances (*delta) and the largest value read at their boundaries (*max)
   * (pia_region_mpit()). Returns 0; BALLAST_ENOTFOUND for an unknown region
   * or variable; BALLAST_EINVAL for NULL outputs. Thread safe; may be called
   * from any callback.
   */
  int (*mpit_region)(int region, int var, const char **name, double *delta, double *max);
} ballast_tool_api_v1_t;

/** api->dist_quantiles: a region's instance wall times. */
#define BALLAST_TOOL_DIST_REGION 1
/** api->dist_quantiles: an MPI function's call durations. */
#define BALLAST_TOOL_DIST_MPI 2

/** The smallest api->size whose table has on_rep_outlier, mpit_count and
 *  mpit_region. */
#define BALLAST_TOOL_API_V1_3_SIZE \
  ((int)(offsetof(ballast_tool_api_v1_t, mpit_region) + sizeof(void *)))

/** The smallest api->size whose table has dist_quantiles. */
#define BALLAST_TOOL_API_V1_2_SIZE \
  ((int)(offsetof(ballast_tool_api_v1_t, dist_quantiles) + sizeof(void *)))

/** The smallest api->size whose table has on_mpi_complete and comm_ranks and
 *  whose mpi_enter / mpi_exit events have comm_id and tag. */
#define BALLAST_TOOL_API_V1_1_SIZE \
  ((int)(offsetof(ballast_tool_api_v1_t, comm_ranks) + sizeof(void *)))

/** The init function of version 1 (exported as \c ballast_tool_init_v1). */
typedef int (*ballast_tool_init_v1_fn)(const ballast_tool_api_v1_t *api, ballast_tool_t *tool);

/**
 * \brief Attaches a tool linked into the program.
 *
 * Before MPI_Init the tool is queued: its \a init runs at MPI_Init, after
 * the \c BALLAST_TOOLS tools, in call order, and its outcome (declined,
 * error) is reported there as for a loaded tool. After MPI_Init (and before
 * MPI_Finalize) \a init runs at once, on the calling thread.
 *
 * \param name  the tool's name for messages and api->tool_name (copied)
 * \param init  its init function
 * \return 0 attached (or queued); 1 when \a init declined (returned > 0);
 *   BALLAST_EINVAL for a NULL or empty name or a NULL init;
 *   BALLAST_ECALLBACK when \a init returned a negative value (warned);
 *   BALLAST_ERANGE when #BALLAST_TOOL_MAX tools are attached already;
 *   BALLAST_ESTATE after MPI_Finalize started; BALLAST_ENOMEM.
 *   Thread safe; not collective.
 */
BALLAST_API int ballast_tool_attach(const char *name, ballast_tool_init_v1_fn init);

/** \brief The clock of the events' timestamps (api->now_ns, for code linked in). */
BALLAST_API uint64_t ballast_tool_now_ns(void);

#ifdef __cplusplus
}
#endif
#endif /* BALLAST_TOOL_H */
