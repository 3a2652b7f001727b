/**
 * \file ballast/mon.h
 * \brief Monitoring: every MPI call measured, nested regions, the end-of-run
 * report and the profile file.
 *
 * Every MPI call of the program is measured through PMPI as soon as the
 * program is linked with libballast (or runs with it in LD_PRELOAD); nothing
 * needs to be called for that. This header adds named, nested regions, which
 * split the program's time, MPI time and traffic by phase.
 *
 * Regions form a tree: a region is identified by its name AND its parent, so
 * "solve" entered inside "step" and "solve" entered inside "init" are two
 * regions. Region 0, "ballast_main", is the whole program (MPI_Init to
 * MPI_Finalize; its MPI time leaves MPI_Init's own time out, which the
 * MPI_Init activity keeps). Per region ballast keeps: the number of times it was
 * left, inclusive wall time, inclusive MPI time (MPI calls in the region and
 * in the regions nested in it), CPU time of the threads that ran it, and
 * hardware counters (PAPI_TOT_CYC, PAPI_TOT_INS) where the machine has any.
 * MPI activity statistics per region are those of the calls made while the
 * region was the innermost open one.
 *
 * Each thread has its own stack of open regions; all calls here are thread
 * safe and act on the calling thread's stack. MPI_Finalize closes the
 * regions still open on the thread that calls it (with one warning); regions
 * left open on other threads are not counted. Region calls are valid between
 * MPI_Init and MPI_Finalize. With monitoring switched off (BALLAST_MONITOR=0)
 * every call below checks its arguments and otherwise does nothing and
 * returns 0, so instrumented code needs no change.
 *
 * Bad input never crashes the program nor changes the region stack: the call
 * returns an error code and ballast warns once per distinct problem.
 *
 * The library's own MPI traffic. ballast itself calls MPI: the task runtime
 * and load balancing (agreeing on failure, mapping, moving tasks and their
 * data, measuring the datatypes of registered arrays), the hardware
 * discovery and the mapping engine, and pia's queries (asking the world
 * size on the application's behalf). All of it goes through the MPI_ names,
 * so other PMPI tools see it, and is accounted by one rule: it is the
 * library's traffic, never the application's. It appears in the full
 * report's "library" line and the profile's "library" member of each rank
 * (per MPI function: calls, bytes, time); it is not in the application's
 * activities, regions, partner volumes, MPI time nor in anything pia
 * answers, whichever region is open when ballast makes the call.
 * One exception: the collectives of the report and the profile themselves
 * (mon_report(), mon_profile_write() and the same at MPI_Finalize) call MPI
 * through PMPI_ directly and are counted nowhere, since they run while the
 * figures they gather are being read; so do the calls mon makes inside its
 * own wrappers (e.g. the group of a new communicator).
 *
 * Environment (read at MPI_Init; booleans take 1/0, on/off, yes/no,
 * true/false in any case; a bad value is named once by rank 0 and ignored;
 * the README's table gives every variable and its bounds):
 * - BALLAST_MONITOR=0 switches monitoring off entirely: the wrappers only
 *   call PMPI. Default 1.
 * - BALLAST_REPORT=none|terse|full: the report rank 0 prints to stdout at
 *   MPI_Finalize. Default terse.
 * - BALLAST_REPORT_TOP=n: how many activities and regions the terse report
 *   lists (default 5; full lists every activity and every region), chosen
 *   across ranks by the sum over ranks of their time (README "What the
 *   figures mean"), the HTML page's rule.
 * - BALLAST_REGION_CPU=0: regions do not measure CPU time (cputime stays 0).
 *   Reading a thread's CPU clock is a system call, the largest part of the
 *   cost of entering and leaving a region; switch it off for very
 *   fine-grained regions. Default 1.
 * - BALLAST_CUBE=path: every rank writes the run's profile there at
 *   MPI_Finalize as a Cube4 archive (.cubex: metrics, call paths of regions
 *   and MPI activities, one location per rank; README "Cube4 profiles"),
 *   after the JSON profile; a path that cannot be written costs one
 *   warning on rank 0 and nothing else.
 * - BALLAST_PROFILE=path: rank 0 writes the job's profile (JSON) there at
 *   MPI_Finalize. Format: see mon_profile_write(). A rank that dies first
 *   (MPI_Abort, a fatal signal it can catch, exit without MPI_Finalize)
 *   writes its own part to "path.part<rank>": {"ballast_profile_part":
 *   {"version":1, "command", "rank", "ranks", "clock", "reason" (why it was
 *   written: "MPI_Abort", "SIGTERM", ..., "exit without MPI_Finalize",
 *   "interval", "MPI_Finalize"), "hwc", "data": its entry of ranks_data}}.
 *   The installed command ballast-profile-merge turns the parts into one
 *   profile. A rank that reaches MPI_Finalize writes its part on entering
 *   it (reason "MPI_Finalize", final figures) and removes it only once
 *   every rank has learnt that rank 0 wrote the whole profile, so a job
 *   that ends inside MPI_Finalize (another rank left without it) still
 *   leaves every rank's part; a profile that cannot be written leaves
 *   them all.
 * - BALLAST_PROFILE_INTERVAL=seconds: with BALLAST_PROFILE, each rank also
 *   writes its part at the first MPI call after each interval, so a rank
 *   killed by SIGKILL leaves its figures as of its last interval.
 * - BALLAST_HTML=path: the run's HTML report is written there at the end of
 *   the run. At MPI_Finalize every rank takes part in writing the profile
 *   (BALLAST_PROFILE's file, else a temporary file in $TMPDIR or /tmp);
 *   after PMPI_Finalize rank 0 runs `python3 ballast-report PROFILE -o path`
 *   and waits for it. ballast-report is looked for in the bin/ directory
 *   beside the installed library, else in the source tree the library was
 *   built from. Without python3, or when ballast-report fails, rank 0 warns
 *   and keeps the profile (saying where); the program's exit is unchanged.
 */
#ifndef BALLAST_MON_H
#define BALLAST_MON_H

#include <mpi.h>
#include <ballast/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * \brief Enters the region \a name, nested in the calling thread's innermost
 * open region (or in ballast_main when none is open).
 * \param name region name, 1..255 bytes, copied (the caller keeps ownership).
 * \return 0; BALLAST_EINVAL for a NULL or empty name; BALLAST_ENAMETOOLONG
 * for a name over 255 bytes; BALLAST_ESTATE before MPI_Init or after
 * MPI_Finalize; BALLAST_ENOMEM when the region cannot be created;
 * BALLAST_ERANGE when it would be a new region past the limit of 16,777,216
 * regions per process (regions already created can still be entered).
 * On error the stack is unchanged. Not collective; thread safe.
 */
BALLAST_API int mon_region_begin(const char *name);

/**
 * \brief Leaves the region \a name, which must be the calling thread's
 * innermost open region.
 * \return 0; BALLAST_EMISMATCH when no region is open or the innermost one
 * has another name (the stack is then left unchanged: nothing is closed);
 * BALLAST_EINVAL / BALLAST_ENAMETOOLONG for a bad name; BALLAST_ESTATE
 * outside MPI_Init..MPI_Finalize. Not collective; thread safe.
 */
BALLAST_API int mon_region_end(const char *name);

/** \brief A region name resolved once, for code that enters regions very
 *  often (rta's tasks): entering through a handle hashes no string. */
typedef struct mon_region_handle_s *mon_region_handle_t;

/**
 * \brief Creates a handle for regions named \a name.
 * \param name region name (copied), as for mon_region_begin().
 * \param[out] h the handle, to free with mon_region_handle_destroy(); set
 * to NULL on error.
 * \return 0; BALLAST_EINVAL (NULL \a h, NULL or empty name);
 * BALLAST_ENAMETOOLONG; BALLAST_ENOMEM. Valid any time, even before
 * MPI_Init. Thread safe; the handle may be used by several threads at once.
 */
BALLAST_API int mon_region_handle_create(const char *name, mon_region_handle_t *h);

/** \brief Frees a handle (NULL does nothing). Regions it entered stay. */
BALLAST_API void mon_region_handle_destroy(mon_region_handle_t h);

/**
 * \brief Enters the region of handle \a h in the calling thread's innermost
 * open region: the same region mon_region_begin(name) would enter, in O(1)
 * without string hashing once the handle was used under the same parent.
 * \return as mon_region_begin(); BALLAST_EINVAL for a NULL handle.
 */
BALLAST_API int mon_region_enter(mon_region_handle_t h);

/**
 * \brief Leaves the region of handle \a h, which must be the innermost open one.
 * \return as mon_region_end(); BALLAST_EINVAL for a NULL handle.
 */
BALLAST_API int mon_region_leave(mon_region_handle_t h);

/**
 * \brief Marks every region named \a name repeated (those that exist and
 * those to come, under any parent): each instance of it is then one
 * repetition, kept and labelled while the program runs.
 *
 * The same as naming it in BALLAST_REPEAT=name[,name...] (read at
 * MPI_Init). For a repeated region ballast keeps, per rank, on the thread
 * that called MPI_Init (instances on other threads count in the region's
 * figures only):
 *  - a series of its last BALLAST_REPEAT_KEEP repetitions (default 4096,
 *    at least 2 x BALLAST_REPEAT_REDUCE): wall, MPI and CPU time, MPI bytes
 *    and calls of the application (all threads' calls while it runs), the
 *    user counters of mon_rep_counter_create(), and its label. Memory per
 *    repeated region: keep x (58 + 8 x user counters) bytes plus
 *    4 x 2 x K x 56 bytes of reduction buffers, allocated at its first
 *    instance; a repetition allocates nothing;
 *  - a label per repetition, given online when it ends, never taken back:
 *    first (repetition 0), warm-up (before the warm-up end: the first
 *    repetition w >= BALLAST_REPEAT_WARMUP_MIN (10) where the minimum so
 *    far drops by more than BALLAST_REPEAT_WARMUP_DROP (0.10) of the
 *    median; while no such drop has come, repetitions up to
 *    BALLAST_REPEAT_SETTLE (20) are labelled warm-up provisionally, and
 *    none after it means there was no warm-up: warm-up end 1, and those
 *    repetitions keep their warm-up label), outlier (at least
 *    BALLAST_REPEAT_OUTLIER (2) times the running median after the
 *    warm-up) or good; and the statistics of the repetitions labelled good
 *    alone (since the warm-up's end; a warm-up found late restarts them).
 *    The rules are those of the published method (runtime-variability,
 *    section 4.5); pia_region_rep_info() answers them;
 *  - across ranks, every BALLAST_REPEAT_REDUCE repetitions (K, default 16;
 *    0: never), per repetition: the slowest rank, the largest, smallest
 *    and mean wall time, and the time the other ranks waited for the
 *    slowest (sum over ranks of max - own). One MPI_Iallreduce of K
 *    records of 56 bytes on ballast's own duplicate of MPI_COMM_WORLD,
 *    started when the K-th repetition ends and completed at later ones:
 *    no rank waits inside a repetition and the data per rank does not grow
 *    with the ranks. Every rank must repeat the same regions the same
 *    number of times for the figures to be found (a batch that mixes
 *    regions is detected and left out, never wrong); MPI_Finalize
 *    completes the last batches (collective). These collectives go
 *    through PMPI and are counted nowhere.
 * \param name region name, as for mon_region_begin().
 * \return 0 (also with monitoring off: then nothing is kept);
 * BALLAST_EINVAL / BALLAST_ENAMETOOLONG for a bad name; BALLAST_ENOMEM.
 * Valid before MPI_Init too. Not collective; thread safe.
 */
BALLAST_API int mon_region_repeat(const char *name);

/** Most MPI_T performance variables ballast reads (mon_mpit_select()). */
#define MON_MPIT_MAX 16

/**
 * \brief Selects MPI's own performance variables (MPI_T pvars) to read at
 * region boundaries, by comma-separated shell patterns on their names
 * (e.g. "pml_ob1_*,coll_monitoring_messages_count"); the same as
 * BALLAST_MPIT=patterns, which it replaces.
 *
 * At MPI_Init ballast starts MPI_T, one session and one handle per selected
 * variable this run offers (at most MON_MPIT_MAX; a variable bound to a
 * communicator is bound to MPI_COMM_WORLD; a variable with one value per
 * peer is summed over the peers; one not continuous is started), and reads
 * them when a region begins and ends on the thread that called MPI_Init.
 * Per region and variable it keeps the sum of the changes over the
 * instances (a counter's meaning) and the largest value read at their
 * boundaries (a level's, e.g. a queue's length); each repetition of a
 * repeated region keeps its change (pia_rep_t). pia_region_mpit() reads
 * them; the profile, the full report and the HTML page show them. Patterns
 * that select nothing valid in this run get one line on rank 0 listing
 * the valid names; with none, nothing else changes. Each read is one
 * MPI_T_pvar_read per variable (bench/mpit_read). MPI_T is finalised
 * inside MPI_Finalize, before MPI's own finalisation.
 * \param patterns the list (copied).
 * \return 0; BALLAST_EINVAL for NULL or empty; BALLAST_ESTATE after
 * MPI_Init (call it before); BALLAST_ENOMEM. Not thread safe.
 */
BALLAST_API int mon_mpit_select(const char *patterns);

/** Most user counters of repetitions (mon_rep_counter_create()). */
#define MON_REP_USER_MAX 8

/**
 * \brief Creates (or finds) a user counter of repetitions named \a name: a
 * value the program adds to inside a repetition (mon_rep_counter_add(),
 * or a timer with mon_rep_timer_start()/mon_rep_timer_stop()), kept per
 * repetition beside the times. Counters created after a repeated region's
 * first instance are not kept for that region.
 * \return the counter's id (0 .. MON_REP_USER_MAX - 1); BALLAST_EINVAL for
 * a NULL or empty name; BALLAST_ENAMETOOLONG over 63 bytes; BALLAST_ERANGE
 * past MON_REP_USER_MAX counters. Call it from one thread at a time.
 */
BALLAST_API int mon_rep_counter_create(const char *name);

/**
 * \brief Adds \a value to counter \a id of the current repetition of the
 * calling thread's innermost open repeated region (nothing when none is
 * open). O(depth of the region stack), no allocation.
 * \return 0; BALLAST_ENOTFOUND for an unknown id; BALLAST_EINVAL for a
 * value that is not finite.
 */
BALLAST_API int mon_rep_counter_add(int id, double value);

/**
 * \brief Starts timer \a id: mon_rep_timer_stop() adds the seconds since to
 * counter \a id of the current repetition, as mon_rep_counter_add().
 * \return 0; BALLAST_ENOTFOUND for an unknown id.
 */
BALLAST_API int mon_rep_timer_start(int id);

/**
 * \brief Stops timer \a id (see mon_rep_timer_start(); a timer not started
 * adds nothing).
 * \return 0; BALLAST_ENOTFOUND for an unknown id.
 */
BALLAST_API int mon_rep_timer_stop(int id);

/**
 * \brief Prints the end-of-run report now, as MPI_Finalize would (level
 * MON_REPORT_TERSE or MON_REPORT_FULL). Collective over MPI_COMM_WORLD: every
 * rank must call it; rank 0 prints to stdout. Its own collectives are
 * counted nowhere (see "The library's own MPI traffic" above). Its figures
 * (wall time, MPI time and %mpi without MPI_Init, the groups, ballast's own
 * work and waiting, the choice and order of the listed regions and
 * activities) are defined in the README, "What the figures mean".
 * \return 0; BALLAST_EINVAL for a bad level; BALLAST_ESTATE outside
 * MPI_Init..MPI_Finalize; BALLAST_EDISABLED when monitoring is off;
 * BALLAST_ENOMEM on every rank when some rank has no memory for its part
 * (then nothing is printed).
 */
BALLAST_API int mon_report(int level);

/** Report levels of mon_report() (BALLAST_REPORT=terse|full). */
enum { MON_REPORT_TERSE = 1, MON_REPORT_FULL = 2 };

/**
 * \brief Writes the job's profile file now, as MPI_Finalize does with
 * BALLAST_PROFILE=path. Collective over MPI_COMM_WORLD; rank 0 writes \a path.
 *
 * Format (JSON, one object, times in seconds):
 * \code
 * {"ballast_profile": {
 *   "version": 1, "command": "...", "argv": ["prog", "arg", ...],
 *   "argv_cut": false, "bytes_note": "...",
 *   "dist_format": {"unit": "ns", "sub_bits": 6, "buckets": 3776,
 *                   "rel_err": 0.0078125},
 *   "ranks": 2, "wall": <max over ranks>,
 *   "clock": "tsc"|"monotonic", "hwc": ["PAPI_TOT_CYC", ...],
 *   "ranks_data": [
 *     {"rank": 0, "wall": s, "mpi_time": s, "mpi_init": s, "cputime": s,
 *      "threads": n, "ballast_work": s, "ballast_wait": s,
 *      "activities": {"MPI_Send": {"ncalls": n, "nbytes": n, "tsum": s,
 *                                  "tmin": s, "tmax": s, "dist": D}, ...},
 *      "library": {<same shape: the library's own MPI traffic>},
 *      "regions": [{"id": 0, "name": "ballast_main", "parent": -1,
 *                   "count": n, "wtime": s, "mtime": s, "cputime": s,
 *                   "hwc": [..], "dist": D,
 *                   "activities": {<as above: the calls made in the region>},
 *                   "sent": {"bytes": n, "msgs": n},
 *                   "received": {"bytes": n, "msgs": n}}, ...],
 *      "partners": {"1": {"bytes": n, "msgs": n, "rbytes": n, "rmsgs": n}},
 *      "sent": {"bytes": n, "msgs": n}, "received": {"bytes": n, "msgs": n},
 *      "run": {"host": "node0", "pid": n},
 *      "lb_series": {<this rank's load-balancing seconds: see rta_lb.h>}},
 *     ...],
 *   "run": {"ballast": "0.1.0", "mpi": "Open MPI v4.1.4",
 *           "date": "2026-11-24T19:00:00Z", "settings": {"BALLAST_LB": "auto", ...}},
 *   "load_balancing": {...}, "lb_series": {...}}}
 * \endcode
 * "command" is the whole command line as one line, each argument escaped
 * (spaces, quotes, control characters); "argv" holds the exact arguments
 * (read from /proc/self/cmdline, else MPI_Init's argv; "argv_cut" is true
 * when arguments past 8 KiB were left out). "wall" starts where MPI_Init
 * starts; "mpi_time" is the program's MPI time without MPI_Init, whose time
 * is "mpi_init" (MPI_Finalize counts no time). "ballast_work" and
 * "ballast_wait" are ballast's own time on that rank: its work for the
 * program (load balancing, topology mapping, its MPI traffic included) and
 * its waiting for other ranks inside the collectives where its callers meet
 * (README "What the figures mean" defines both; members added in version 1, absent from
 * earlier profiles). An activity's "nbytes" is what the rank's calls moved, sent
 * plus received (collectives: send plus receive buffers), as "bytes_note"
 * says; "sent"/"received" count the point-to-point and one-sided messages
 * only, empty ones included, as do the partners' msgs/rmsgs. Strings are
 * valid UTF-8: a byte of a region name that is not becomes U+FFFD.
 * D, present where there is at least one instance or call: the distribution
 * of a region's instance wall times or an activity's call durations,
 * {"count": n, "min": s, "max": s, "mean": s, "var": s2, "p50": s,
 * "p90": s, "p99": s, "lost": n, "buckets": [[b, n], ...]}: quantiles
 * within "rel_err" of the exact ones; the non-empty buckets of nanoseconds
 * (bucket b < 64 holds b ns; above, e = b / 64 + 5 and the bucket holds
 * (64 + b % 64) * 2^(e-6) .. that + 2^(e-6) - 1 ns). Ranks merge by adding
 * the counts of equal b (ballast-report does, ballast/pia.h's
 * pia_region_dist_reduce() does it live).
 * "run" names the host and process of each rank (ranks on one host are a
 * node) and, at the top, the versions, the time of writing (UTC) and rank 0's
 * BALLAST_* environment. Members after "ranks_data" (and the last members of
 * each rank's part) come from the layers above mon and are present only when
 * those ran: "load_balancing" (totals) and "lb_series" (load balancing over
 * time, task maps) when a load-balancing context was defined; their format
 * is documented with rta_lb_create() in ballast/rta_lb.h.
 * A region's "activities", "sent" and "received" are its own MPI figures:
 * the calls made (and messages moved) while it was the innermost open
 * region of the calling thread, children not included (the call paths of
 * a Cube profile, BALLAST_CUBE; members added in version 1, absent from
 * earlier profiles).
 * Activities with no call and no byte are left out; a region's "hwc" is
 * present only where the machine has counters; "partners" is keyed by
 * world rank; bytes/msgs were sent to that rank, rbytes/rmsgs received from it.
 * A rank that ran out of memory rendering its part appears as
 * {"rank": r, "error": "out of memory"}; parts that would end past 2 GiB of
 * the gathered text (MPI's int counts and displacements) are left out the
 * same way, with the error "part left out: the profile would exceed 2 GiB"
 * (and a warning on rank 0). The file is written as "path.tmp" and renamed
 * to \a path once complete: \a path is never a partial profile.
 * \return 0; BALLAST_EIO when rank 0 cannot write the file (returned on
 * rank 0 only); BALLAST_ENOMEM when rank 0 has no memory for the gathered
 * texts (rank 0 only; nothing is written); BALLAST_EINVAL for a NULL path;
 * BALLAST_ESTATE, BALLAST_EDISABLED as mon_report().
 */
BALLAST_API int mon_profile_write(const char *path);

#ifdef __cplusplus
}
#endif
#endif
