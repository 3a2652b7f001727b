/**
 * \file ballast/pia.h
 * \brief The Performance Introspection API (PIA): a process reads its own
 * performance data, as measured by mon, while it runs.
 *
 * PIA gives each process a local view of two kinds of entity, as the CRESTA PIA
 * specification defines them:
 *  - **regions**: the nested, named code regions opened with
 *    mon_region_begin()/mon_region_end() (or MPI_Pcontrol(), and IPM's
 *    ipm_region() of ballast/cresta.h).
 *    Region 0 is the implicit whole-program region "ballast_main". Each
 *    (parent, name) pair is one region: the same name under two different
 *    parents gives two regions with two ids.
 *  - **activities**: per-MPI-call statistics (number of calls, bytes, time),
 *    for the whole run or inside one region, plus groups of calls
 *    (all point-to-point, all collectives, all one-sided, all MPI-IO, all MPI).
 *
 * It adds queries the CRESTA PIA does not have: communication volume per peer
 * rank, interval data (the change since a mark the caller sets), and the
 * distribution of a region's instance times or of an activity's call
 * durations (quantiles within PIA_DIST_REL_ERR, merged over ranks on
 * request).
 *
 * **Common contract of every function below**
 *  - Local: no communication, never collective; except
 *    pia_region_dist_reduce() and pia_activity_dist_reduce(), which merge
 *    the distributions of a communicator's ranks (collective, one
 *    reduction) and say so.
 *  - O(1) in the number of regions and of activity signatures: no query scans a
 *    table. Some are O(number of threads that ran monitored MPI calls), because
 *    mon keeps per-thread counters; the few that are O(n) in an argument say so.
 *  - Thread safe, and safe while other threads are inside MPI calls: mon's
 *    counters are read with relaxed atomics, so a read concurrent with a call
 *    in progress sees that call either wholly or not at all per counter (the
 *    fields of one record may come from instants a few ns apart).
 *  - Return codes: ids (>= 0) or 0 on success, a negative \c BALLAST_E* code
 *    otherwise (ballast_strerror() explains it):
 *     - \c BALLAST_EINVAL: a NULL pointer or an empty name;
 *     - \c BALLAST_ENOTFOUND: an id that does not exist (negative, or not yet
 *       created) or a name that is not known;
 *     - other negative codes passed on from the monitor.
 *  - With monitoring switched off (BALLAST_MONITOR=0) nothing is recorded:
 *    no region exists (region lookups and reads return BALLAST_ENOTFOUND),
 *    activities can be found by name and read as zeros.
 *  - Ids never change and are never reused while the process runs: an id found
 *    once stays valid (and names the same entity) while new regions and
 *    activity signatures appear.
 *  - Times are in seconds.
 *
 * Compatibility with CRESTA: the names of the CRESTA PIA specification
 * (pia_find_region_by_name, pia_get_region_data(data, id), ...) are in
 * ballast/cresta.h, deprecated; its two example listings compile against that
 * header (a test in tests/pia/ builds them). pia_region_find() returns the
 * region id directly, as CRESTA's call does, and signals "not found" with a
 * negative code instead of IPM's -1.
 */
#ifndef BALLAST_PIA_H
#define BALLAST_PIA_H

#include <ballast/common.h>
#include <ballast/mon.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- types ------------------------------------------------------------- */

/** Region id: dense, stable, >= 0; 0 is the whole program ("ballast_main"). */
typedef int pia_regid_t;

/** Activity id: an MPI call or a group of calls; dense, stable, >= 0. */
typedef int pia_act_t;

/** The whole-program region (IPM's "ipm_main"), open from MPI_Init on. */
#define PIA_REGION_MAIN 0
/** Pass as the region of a by-region query to mean "the whole run". */
#define PIA_REGION_ALL (-1)

/** Number of hardware counter slots in a pia_regdata_t. */
#define PIA_HWC_MAX 4

/** \name Activity group names, for pia_activity_find()
 * A group reads as one activity: the sums (and min/max) over its calls. */
/**@{*/
#define PIA_GROUP_P2P "MPI_P2P"   /**< all point-to-point calls */
#define PIA_GROUP_COLL "MPI_COLL" /**< all collectives */
#define PIA_GROUP_RMA "MPI_RMA"   /**< all one-sided (RMA) calls */
#define PIA_GROUP_IO "MPI_IO"     /**< all MPI-IO calls */
/** every monitored MPI call of the program but MPI_Init, MPI_Init_thread and
 *  MPI_Finalize: its time is the program's MPI time, the region
 *  PIA_REGION_MAIN's mtime (README "What the figures mean"); ask for
 *  "MPI_Init" by name for its own figures */
#define PIA_GROUP_ALL "MPI_ALL"
/**@}*/

/**
 * Performance data of one region (a read-only result record). Every metric
 * is inclusive (nested regions count in their parents) and accumulated over
 * every instance of the region so far.
 */
typedef struct {
  pia_regid_t id;   /**< the region's id */
  const char *name; /**< its name; owned by ballast, valid until the process
                         exits; do not free */
  int count;        /**< instances completed (entered and left); saturates at
                         INT_MAX, see count64 (CRESTA's listing prints it with %d) */
  long long count64; /**< instances completed, full 64-bit count */
  double wtime;     /**< wall-clock seconds spent inside the region */
  double mtime;     /**< seconds spent in MPI calls inside the region */
  double cputime;   /**< CPU seconds spent inside the region */
  long long hwc[PIA_HWC_MAX]; /**< hardware counters (PAPI), 0 where none */
  int nhwc;         /**< valid entries of hwc; 0 when the machine has none */
} pia_regdata_t;

/**
 * Statistics of one activity (or a sum of several: see
 * pia_activity_data()). Initialise with pia_actdata_init().
 *
 * Counters are 64-bit: a long run can exceed 2^31 bytes in seconds. The
 * CRESTA listing prints ncalls and nbytes with "%d"; print them with "%lld".
 *
 * Which call a nonblocking or persistent operation's bytes count under:
 * the function that posted it (MPI_Irecv, MPI_Isend, MPI_Recv_init, ...),
 * added when the request completes (its receive size from the status);
 * the MPI_Wait/MPI_Test call that completed it counts its call and time, no
 * bytes. The tools interface's mpi_exit event does the opposite (bytes at
 * the completing call, as a trace wants them; ballast/tool.h): the sums
 * over a group (MPI_P2P, MPI_ALL) agree, per function they differ, and the
 * tools' mpi_complete event carries the posting function to match pia.
 */
typedef struct {
  long long ncalls; /**< number of calls */
  long long nbytes; /**< bytes sent or received (exact: receives from the
                         status, nonblocking operations at completion,
                         counted under the posting function) */
  double tsum;      /**< total seconds inside the calls */
  double tmin;      /**< shortest call; +INFINITY while ncalls == 0 */
  double tmax;      /**< longest call; 0 while ncalls == 0 */
} pia_actdata_t;

/**
 * Communication volume with one peer rank, as mon records it: point-to-point
 * and one-sided operations with a partner and a non-zero size, sends and
 * receives apart. MPI_Sendrecv and MPI_Sendrecv_replace count both halves:
 * the message sent in nbytes/nmsgs of the destination, the message received
 * in rbytes/rmsgs of its source.
 */
typedef struct {
  long long nbytes; /**< bytes sent to the peer */
  long long nmsgs;  /**< messages sent to the peer */
  long long rbytes; /**< bytes received from the peer */
  long long rmsgs;  /**< messages received from the peer */
} pia_partnerdata_t;

/** \name Labels of repetitions (repeated regions, mon_region_repeat()) */
/**@{*/
#define PIA_REP_FIRST 0   /**< the first repetition */
#define PIA_REP_WARMUP 1  /**< before the warm-up's end */
#define PIA_REP_OUTLIER 2 /**< at least BALLAST_REPEAT_OUTLIER x the running median */
#define PIA_REP_GOOD 3    /**< the others */
/**@}*/

/**
 * What ballast knows of a repeated region's repetitions on this rank
 * (mon_region_repeat() tells how they are kept and labelled). Times in
 * seconds of wall time.
 */
typedef struct {
  long long count;       /**< repetitions so far */
  long long kept;        /**< size of the series kept (BALLAST_REPEAT_KEEP) */
  long long oldest;      /**< index of the oldest repetition still kept */
  int warming_up;        /**< 1 while the repetitions still count as warm-up */
  int last_label;        /**< PIA_REP_* of the last repetition; -1 before one */
  long long warmup_end;  /**< the first repetition after the warm-up (1: there
                              was none); 0 while undecided */
  long long outliers;    /**< outliers since the warm-up's end */
  long long good;        /**< good repetitions since the warm-up's end */
  double good_mean;      /**< mean of the good ones (0 without any) */
  double good_min;       /**< shortest good one */
  double good_max;       /**< longest good one */
  double good_sd;        /**< their standard deviation (sample) */
  double good_median;    /**< their median (P-square estimate) */
  double median;         /**< the running median outliers are judged by */
  long long reduce_every; /**< K of the cross-rank figures (0: none) */
  long long skipped;     /**< batches of K not reduced (too many in flight) */
} pia_repinfo_t;

/**
 * One repetition of a repeated region on this rank, and the job's figures
 * for it when its batch was reduced across ranks.
 */
typedef struct {
  long long index;     /**< its number, from 0 */
  int label;           /**< PIA_REP_* */
  double wtime;        /**< wall seconds */
  double mtime;        /**< seconds in the application's MPI calls */
  double cputime;      /**< CPU seconds of the thread (0 with BALLAST_REGION_CPU=0) */
  long long bytes;     /**< application MPI bytes (pia_actdata_t's rule) */
  long long calls;     /**< application MPI calls */
  int nuser;           /**< user counters kept (mon_rep_counter_create()) */
  double user[MON_REP_USER_MAX]; /**< their values in this repetition */
  int nmpit;           /**< MPI_T variables kept (pia_mpit_count() when the
                            region's series was created) */
  double mpit[MON_MPIT_MAX]; /**< their change over this repetition */
  long long vcsw;      /**< voluntary context switches of the thread (getrusage) */
  long long ivcsw;     /**< involuntary ones: the thread was preempted */
  long long minflt;    /**< minor page faults */
  long long majflt;    /**< major page faults (read from disk) */
  int nhwc;            /**< hardware counters kept (PAPI; 0 where the machine
                            has none) */
  long long hwc[PIA_HWC_MAX]; /**< their change over this repetition */
  int reduced;         /**< 1: the fields below hold; 0: not yet; -1: never
                            (batch skipped or ranks repeated differently) */
  int slowest_rank;    /**< rank (in MPI_COMM_WORLD) with the largest wtime */
  double max_wtime;    /**< largest wtime over the ranks */
  double min_wtime;    /**< smallest */
  double mean_wtime;   /**< mean */
  double waited;       /**< sum over ranks of max_wtime - their wtime */
} pia_rep_t;

/**
 * \brief What this rank knows of repeated region \a id's repetitions.
 * O(1), local.
 * \param id the region.
 * \param[out] out filled on success.
 * \return 0; BALLAST_EINVAL for a NULL \a out; BALLAST_ENOTFOUND for an
 * unknown id; BALLAST_ESTATE when the region is not repeated.
 */
BALLAST_API int pia_region_rep_info(pia_regid_t id, pia_repinfo_t *out);

/**
 * \brief Repetition \a index of repeated region \a id, if still kept.
 * O(1), local.
 * \param id the region.
 * \param index the repetition's number, from 0.
 * \param[out] out filled on success.
 * \return 0; BALLAST_EINVAL for a NULL \a out or a negative index;
 * BALLAST_ENOTFOUND for an unknown id; BALLAST_ERANGE for a repetition not
 * (or no longer) kept;
 * BALLAST_ESTATE when the region is not repeated.
 */
BALLAST_API int pia_region_rep_get(pia_regid_t id, long long index, pia_rep_t *out);

/**
 * \brief Whether repeated region \a id still counts its repetitions as
 * warm-up (pia_repinfo_t's warming_up).
 * \return 1 or 0; BALLAST_ENOTFOUND for an unknown id; BALLAST_ESTATE when
 * the region is not repeated.
 */
BALLAST_API int pia_region_warming_up(pia_regid_t id);

/**
 * \brief The label of repeated region \a id's last repetition.
 * \return PIA_REP_FIRST .. PIA_REP_GOOD; BALLAST_ENOTFOUND for an unknown
 * id or before the first repetition; BALLAST_ESTATE when the region is not
 * repeated.
 */
BALLAST_API int pia_region_rep_last_label(pia_regid_t id);

/**
 * \brief The name of a PIA_REP_* label ("first", "warmup", "outlier",
 * "good"; "unknown" for another value). Never NULL.
 */
BALLAST_API const char *pia_rep_label_name(int label);

/** A region's figures of one MPI_T performance variable (mon_mpit_select()). */
typedef struct {
  double delta; /**< sum of its changes over the region's instances */
  double max;   /**< largest value read at the instances' begins and ends */
} pia_mpitdata_t;

/**
 * \brief The number of MPI_T performance variables ballast reads in this
 * run (BALLAST_MPIT, mon_mpit_select()); their ids are 0 .. count-1.
 * \return the count (0 when none was selected or valid).
 */
BALLAST_API int pia_mpit_count(void);

/**
 * \brief The name of MPI_T variable \a var (its MPI_T name), or NULL for
 * an id out of range. Owned by ballast.
 */
BALLAST_API const char *pia_mpit_name(int var);

/**
 * \brief Finds an MPI_T variable ballast reads by its name.
 * \return its id; BALLAST_EINVAL for a NULL name; BALLAST_ENOTFOUND when
 * it is not read in this run.
 */
BALLAST_API int pia_mpit_find(const char *name);

/**
 * \brief Reads MPI_T variable \a var now (per-peer values summed), on the
 * thread that called MPI_Init (where ballast reads them all).
 * \param var the variable (pia_mpit_find()).
 * \param[out] value its value.
 * \return 0; BALLAST_EINVAL for a NULL \a value; BALLAST_ENOTFOUND for an
 * unknown variable; BALLAST_ESTATE on another thread, or outside
 * MPI_Init..MPI_Finalize.
 */
BALLAST_API int pia_mpit_read(int var, double *value);

/**
 * \brief Region \a id's figures of MPI_T variable \a var, summed over the
 * region's instances on the thread that called MPI_Init. O(1), local.
 * \param id the region.
 * \param var the variable (pia_mpit_find()).
 * \param[out] out filled on success.
 * \return 0; BALLAST_EINVAL for a NULL \a out; BALLAST_ENOTFOUND for an
 * unknown region or variable.
 */
BALLAST_API int pia_region_mpit(pia_regid_t id, int var, pia_mpitdata_t *out);

/* ---- regions ------------------------------------------------------------ */

/**
 * \brief The number of regions created so far (ids are 0 .. count-1).
 * \return the count: >= 1 while monitoring runs, 0 when no region exists
 *         (monitoring off or not started); it cannot fail.
 */
BALLAST_API int pia_region_count(void);

/**
 * \brief Find a region by its name.
 *
 * Region names may repeat at different places in the tree (the same name
 * under different parents names different regions). This returns the
 * **first region created with that name**, whichever its parent. To address
 * one exact region use pia_region_find_by_path() or pia_region_find_child().
 * As in the CRESTA PIA (pia_find_region_by_name, ballast/cresta.h), the id
 * is the return value.
 *
 * \param name the region's name (NUL-terminated).
 * \return the region id (>= 0); BALLAST_EINVAL when name is NULL or empty;
 *         BALLAST_ENOTFOUND when no region has that name (yet).
 * O(1), thread safe. Each thread caches the names it has found (the answer
 * never changes once a region with the name exists), so repeated lookups of
 * a name take no lock; the first lookup of a name on a thread, and lookups
 * of names not found, ask the monitor's registry, which takes a lock.
 */
BALLAST_API pia_regid_t pia_region_find(const char *name);

/**
 * \brief Find the child of \a parent called \a name.
 * \param parent a region id (PIA_REGION_MAIN for top-level regions).
 * \param name the child's name.
 * \return the child's id; BALLAST_EINVAL for a NULL or empty name;
 *         BALLAST_ENOTFOUND when parent does not exist or has no such child.
 * O(1). Thread safe.
 */
BALLAST_API pia_regid_t pia_region_find_child(pia_regid_t parent,
                                              const char *name);

/**
 * \brief Find one exact region by its path from the whole-program region,
 * e.g. "solve/sweep/octant" (the region "octant" opened inside "sweep",
 * itself opened inside the top-level region "solve").
 *
 * Components are separated by '/'; a leading '/' is allowed and ignored; the
 * empty path ("" or "/") is region 0. A component may be at most 255 bytes.
 * Region names that themselves contain '/' cannot be reached this way: use
 * pia_region_find_child() step by step.
 *
 * \param path the path (NUL-terminated).
 * \return the region id; BALLAST_EINVAL when path is NULL or has an empty
 *         component ("a//b"); BALLAST_ENAMETOOLONG for a component longer
 *         than 255 bytes; BALLAST_ENOTFOUND when a component is not found.
 * O(depth of the path), independent of the number of regions. Thread safe.
 */
BALLAST_API pia_regid_t pia_region_find_by_path(const char *path);

/**
 * \brief Read a region's performance data.
 *
 * Every field of \a data is overwritten. The metrics are those of the
 * completed instances of the region: an instance still open contributes
 * nothing (not its count, times nor counters) until it is left. Region 0
 * (the whole program) is the exception: its figures are live.
 *
 * \param id a region id.
 * \param data where to write (caller-owned).
 * \return 0; BALLAST_EINVAL when data is NULL; BALLAST_ENOTFOUND for a bad id.
 * O(threads). Thread safe.
 */
BALLAST_API int pia_region_data(pia_regid_t id, pia_regdata_t *data);

/**
 * \brief The innermost region open on the calling thread.
 * \return its id; PIA_REGION_MAIN when none is open, and on a thread that
 *         never entered a monitored call or region.
 * O(1). Thread safe (each thread has its own region stack).
 */
BALLAST_API pia_regid_t pia_region_current(void);

/**
 * \brief The parent of a region.
 * \return the parent's id; BALLAST_ENOTFOUND for a bad id and for region 0,
 *         which has no parent.
 */
BALLAST_API pia_regid_t pia_region_parent(pia_regid_t id);

/**
 * \brief The first child of a region. Children are listed newest first: the
 * first child is the one created last (a new child is published at the head
 * of its parent's list, so readers never see a half-linked list).
 * \return the child's id; BALLAST_ENOTFOUND for a bad id or a region without
 *         children.
 */
BALLAST_API pia_regid_t pia_region_child(pia_regid_t id);

/**
 * \brief The next sibling of a region: the next child of the same parent, the
 * one created just before it. Walk all children with pia_region_child() then
 * pia_region_next() until it returns a negative code.
 * \return the sibling's id; BALLAST_ENOTFOUND for a bad id or the last child.
 */
BALLAST_API pia_regid_t pia_region_next(pia_regid_t id);

/* ---- activities -------------------------------------------------------- */

/**
 * \brief The number of activities, groups included (ids are 0 .. count-1).
 * \return the count, fixed by the build (it cannot fail).
 */
BALLAST_API int pia_activity_count(void);

/**
 * \brief The name of an activity ("MPI_Send", "MPI_P2P", ...).
 * \return a static string owned by ballast, or NULL for a bad id.
 */
BALLAST_API const char *pia_activity_name(pia_act_t act);

/**
 * \brief Find an activity (an MPI call such as "MPI_Send", or a group: see
 * PIA_GROUP_P2P and the other PIA_GROUP_* names) by name.
 * \return the activity id (>= 0); BALLAST_EINVAL for a NULL or empty name;
 *         BALLAST_ENOTFOUND for a name that is not a monitored call or group
 *         (never a crash).
 * O(1) (hash lookup). Thread safe.
 */
BALLAST_API pia_act_t pia_activity_find(const char *name);

/**
 * \brief Reset an activity record before pia_activity_data() adds into it:
 * ncalls = nbytes = 0, tsum = tmax = 0, tmin = +INFINITY. NULL does nothing.
 */
BALLAST_API void pia_actdata_init(pia_actdata_t *data);

/**
 * \brief Add an activity's whole-run statistics into \a data.
 *
 * Accumulates, as IPM's PIA does: ncalls, nbytes and tsum are added, tmin and
 * tmax become the min and max of both. Call pia_actdata_init() first;
 * call this several times to sum several activities. \a data is left
 * unchanged on error.
 *
 * \param act an activity or group id.
 * \param data the record to add into (caller-owned).
 * \return 0; BALLAST_EINVAL when data is NULL; BALLAST_ENOTFOUND for a bad id.
 * O(threads) for one call; a group sums its member calls, O(calls in the
 * MPI API x threads). Independent of the number of signatures. Thread safe.
 */
BALLAST_API int pia_activity_data(pia_act_t act, pia_actdata_t *data);

/**
 * \brief Add the statistics of activity \a act inside \a region into \a data.
 *
 * Like pia_activity_data(), restricted to the calls made while \a region
 * was the innermost open region (exclusive: calls in its child regions count
 * in the children). PIA_REGION_ALL means the whole run.
 *
 * \return 0; BALLAST_EINVAL when data is NULL; BALLAST_ENOTFOUND for a bad
 *         activity or region id.
 * Cost as pia_activity_data(). Thread safe.
 */
BALLAST_API int pia_region_activity_data(pia_regid_t region, pia_act_t act,
                                         pia_actdata_t *data);

/* ---- partners ---------------------------------------------------------- */

/**
 * \brief Communication volume exchanged with one peer (a rank of MPI_COMM_WORLD),
 * over the whole run or inside one region.
 *
 * \param peer world rank of the peer, 0 <= peer < world size.
 * \param region a region id (calls made while it was the innermost region),
 *        or PIA_REGION_ALL for the whole run.
 * \param out overwritten with the volume (zeros when nothing was sent).
 * \return 0; BALLAST_EINVAL when out is NULL; BALLAST_ENOTFOUND for a bad
 *         region; BALLAST_ERANGE for a peer outside the world; BALLAST_ESTATE
 *         outside MPI_Init .. MPI_Finalize.
 * O(threads). Thread safe.
 */
BALLAST_API int pia_partner_data(int peer, pia_regid_t region,
                                 pia_partnerdata_t *out);

/**
 * \brief Communication volume to every peer 0 .. n-1 at once.
 * \param n number of peers to read (at most the world size).
 * \param region as in pia_partner_data().
 * \param out array of n records (caller-owned), overwritten.
 * \return 0; BALLAST_EINVAL when out is NULL or n < 0; BALLAST_ERANGE when n
 *         exceeds the world size; BALLAST_ENOTFOUND for a bad region;
 *         BALLAST_ESTATE outside MPI_Init .. MPI_Finalize.
 * O(n x threads): one O(1) read per peer. Thread safe.
 */
BALLAST_API int pia_partner_volumes(int n, pia_regid_t region,
                                    pia_partnerdata_t *out);

/* ---- distributions ------------------------------------------------------ */

/**
 * Relative error of every quantile below: the answer lies within this
 * fraction (1/128, 0.78%) of the exact quantile. Durations are kept in
 * nanoseconds in a log-bucketed histogram (64 buckets per power of two,
 * exact below 64 ns); q = 0 and q = 1 answer the exact min and max.
 */
#define PIA_DIST_REL_ERR (1.0 / 128.0)

/**
 * Distribution of a region's instance wall times (each completed instance
 * one value, inclusive of nested regions) or of an activity's call durations
 * (whole run), in seconds: a read-only result record. The exact quantile q
 * of n values is the k-th smallest, k = max(1, ceil(q n)); p50, p90 and p99
 * are within PIA_DIST_REL_ERR of it.
 */
typedef struct {
  long long count; /**< values: instances completed, or calls */
  double min;      /**< shortest, exact; 0 while count == 0 */
  double max;      /**< longest, exact; 0 while count == 0 */
  double mean;     /**< mean; 0 while count == 0 */
  double var;      /**< sample variance (n - 1), in s^2; 0 below two values */
  double p50;      /**< median */
  double p90;      /**< 90th percentile */
  double p99;      /**< 99th percentile */
  long long lost;  /**< values left out of the histogram when memory ran out
                        (counted in count and the moments, not in quantiles) */
} pia_distdata_t;

/**
 * \brief Distribution of region \a id's instance wall times: count, exact
 * min and max, mean, variance, p50, p90 and p99.
 *
 * \param id a region id (PIA_REGION_MAIN has no instances: BALLAST_ENODATA).
 * \param out overwritten (zeros on BALLAST_ENODATA).
 * \return 0; BALLAST_EINVAL when out is NULL; BALLAST_ENOTFOUND for a bad
 *         id; BALLAST_ENODATA while no instance has completed; BALLAST_ESTATE
 *         outside MPI_Init .. MPI_Finalize; BALLAST_ENOMEM.
 * O(threads x octaves the durations span), independent of the number of
 * regions and of instances. Thread safe.
 */
BALLAST_API int pia_region_dist(pia_regid_t id, pia_distdata_t *out);

/**
 * \brief Any quantiles of region \a id's instance wall times.
 *
 * \param id a region id.
 * \param nq number of quantiles asked (0 checks the region only).
 * \param q nq fractions in [0, 1], any order (0.5: the median).
 * \param out nq seconds (caller-owned), each within PIA_DIST_REL_ERR of the
 *        exact quantile; unchanged on error.
 * \return 0; BALLAST_EINVAL for NULL arrays, nq < 0 or a q outside [0, 1];
 *         BALLAST_ENOTFOUND; BALLAST_ENODATA while no instance has completed;
 *         BALLAST_ESTATE; BALLAST_ENOMEM.
 * O(threads x octaves x nq). Thread safe.
 */
BALLAST_API int pia_region_quantiles(pia_regid_t id, int nq, const double *q,
                                     double *out);

/**
 * \brief Distribution of activity \a act's call durations over the whole run
 * (a group: of all its member calls), as pia_region_dist() for a region.
 * \return 0; BALLAST_EINVAL when out is NULL; BALLAST_ENOTFOUND for a bad
 *         id; BALLAST_ENODATA before the first call; BALLAST_ESTATE;
 *         BALLAST_ENOMEM.
 * O(threads x octaves); a group O(calls in the MPI API x threads x octaves).
 * Thread safe.
 */
BALLAST_API int pia_activity_dist(pia_act_t act, pia_distdata_t *out);

/**
 * \brief Any quantiles of activity \a act's call durations (whole run), as
 * pia_region_quantiles() for a region.
 * \return as pia_region_quantiles(). Thread safe.
 */
BALLAST_API int pia_activity_quantiles(pia_act_t act, int nq, const double *q,
                                       double *out);

/**
 * \brief The distribution of a region's instance wall times merged over the
 * ranks of \a comm: every rank receives the quantiles of all instances on
 * all ranks.
 *
 * Collective over \a comm (every rank calls it with the same path): one
 * MPI_Allreduce of about 30 KB per rank merges the histograms (counts
 * added, moments combined), counted as ballast's own traffic, not the
 * program's. Region ids differ between ranks, so the region is named by its
 * path (as pia_region_find_by_path()); a rank where it does not exist adds
 * nothing.
 *
 * \param comm the communicator.
 * \param path the region's path ("step/forces").
 * \param nq number of extra quantiles asked (may be 0).
 * \param q nq fractions in [0, 1] (NULL when nq is 0).
 * \param qout nq seconds, within PIA_DIST_REL_ERR (NULL when nq is 0).
 * \param out the merged summary (may be NULL).
 * \return 0 on every rank; BALLAST_ENODATA on every rank when no rank has
 *         an instance; this rank's own error (BALLAST_EINVAL for a bad
 *         argument or path, BALLAST_ENOMEM) or BALLAST_EREMOTE when only
 *         another rank failed, on every rank alike; BALLAST_EMPI when the
 *         reduction failed; BALLAST_EMISMATCH on every rank (with a
 *         warning) when the ranks named different paths (checked in the same
 *         reduction, by a 64-bit hash of the path); BALLAST_EINVAL without
 *         communicating for MPI_COMM_NULL; BALLAST_ESTATE outside MPI_Init ..
 *         MPI_Finalize.
 * Call it from one thread per process at a time (it reduces through two
 * static 30 KB records, so no rank can fail to take part for want of memory).
 */
BALLAST_API int pia_region_dist_reduce(MPI_Comm comm, const char *path, int nq,
                                       const double *q, double *qout,
                                       pia_distdata_t *out);

/**
 * \brief Activity \a act's call durations merged over the ranks of \a comm,
 * as pia_region_dist_reduce() for a region (activity ids are the same on
 * every rank). Collective over \a comm.
 * \return as pia_region_dist_reduce(); BALLAST_ENOTFOUND (agreed) for a bad id;
 *         BALLAST_EMISMATCH when the ranks named different activities.
 */
BALLAST_API int pia_activity_dist_reduce(MPI_Comm comm, pia_act_t act, int nq,
                                         const double *q, double *qout,
                                         pia_distdata_t *out);

/* ---- interval data ------------------------------------------------------ */

/**
 * An interval: a set of tracked regions and activities and, for each, a
 * snapshot taken at the last mark. Reads return the change since that mark,
 * so the caller (rta's moving averages, a time-step loop) keeps no copies.
 * Opaque; create with pia_interval_create(), free with pia_interval_destroy().
 *
 * Thread safety: reads of one interval may run concurrently with each other;
 * track, mark and destroy of one interval must not run concurrently with any
 * other call on the same interval. Different intervals are independent.
 */
typedef struct pia_interval pia_interval_t;

/**
 * \brief Create an empty interval.
 * \param out receives the new interval; the caller owns it.
 * \return 0; BALLAST_EINVAL when out is NULL; BALLAST_ENOMEM.
 */
BALLAST_API int pia_interval_create(pia_interval_t **out);

/** \brief Free an interval and its snapshots. NULL does nothing. */
BALLAST_API void pia_interval_destroy(pia_interval_t *iv);

/**
 * \brief Track a region. Its snapshot is taken now, so reads are defined
 * before the first mark. Tracking a region already tracked does nothing.
 * \return 0; BALLAST_EINVAL when iv is NULL; BALLAST_ENOTFOUND for a bad id;
 *         BALLAST_ENOMEM.
 */
BALLAST_API int pia_interval_track_region(pia_interval_t *iv, pia_regid_t id);

/**
 * \brief Track an activity or group (whole-run statistics). Snapshot now;
 * tracking it again does nothing.
 * \return 0; BALLAST_EINVAL when iv is NULL; BALLAST_ENOTFOUND for a bad id;
 *         BALLAST_ENOMEM.
 */
BALLAST_API int pia_interval_track_activity(pia_interval_t *iv, pia_act_t act);

/**
 * \brief Set the mark: snapshot every tracked entity now.
 * \return 0; BALLAST_EINVAL when iv is NULL; a negative code from the monitor
 *         (the snapshots taken before the failure are kept).
 * O(number of tracked entities x threads).
 */
BALLAST_API int pia_interval_mark(pia_interval_t *iv);

/**
 * \brief The change of a tracked region since the last mark (or since it was
 * tracked): count, count64, wtime, mtime, cputime and the hardware counters
 * are differences; id and name are the region's.
 * \param iv the interval that tracks the region.
 * \param id the region.
 * \param out overwritten (caller-owned).
 * \return 0; BALLAST_EINVAL when iv or out is NULL; BALLAST_ENOTFOUND when the
 *         region is not tracked by iv.
 * O(threads): one hash lookup and one region read.
 */
BALLAST_API int pia_interval_region_data(pia_interval_t *iv, pia_regid_t id,
                                         pia_regdata_t *out);

/**
 * \brief The change of a tracked activity since the last mark: ncalls,
 * nbytes and tsum are differences. A minimum or maximum cannot be
 * differenced, so tmin and tmax are the **whole-run** values so far (the
 * same as pia_activity_data() gives), or +INFINITY / 0 when the interval
 * has no call. Overwrites \a out (it does not accumulate).
 * \return 0; BALLAST_EINVAL when iv or out is NULL; BALLAST_ENOTFOUND when the
 *         activity is not tracked by iv.
 * O(threads).
 */
BALLAST_API int pia_interval_activity_data(pia_interval_t *iv, pia_act_t act,
                                           pia_actdata_t *out);

#ifdef __cplusplus
}
#endif
#endif /* BALLAST_PIA_H */
