/**
 * \file ballast/rta_lb.h
 * \brief Load-balancing contexts: when and how rta remaps a task subtree onto
 * the processes of a communicator, moves task state and rebuilds the
 * communicator the application uses.
 *
 * \section rta_lb_ctx Contexts and communicators
 * rta_lb_create() binds the group of a communicator to the subtree of
 * tasks under a root task defined on every process of it. It duplicates the
 * communicator twice: a \e base communicator kept by ballast (its rank order
 * never changes; the hardware model and the mappings refer to it) and the
 * \e application communicator it returns. The application must use the
 * returned communicator for everything that refers to tasks by rank. ballast
 * owns it: it is freed by the remap that replaces it (the application then
 * receives the new one through rta_lb_perform()) or by
 * rta_lb_destroy(). The communicator the application passed in is
 * never freed.
 *
 * \section rta_lb_modes Placement and over-decomposition
 * - \e Placement mode (every process owns exactly one leaf task under the
 *   root): a remap is a permutation of tasks over processes. Task \e i is the
 *   task that rank \e i owned when the context was defined; after every remap
 *   the process that hosts task \e i has rank \e i in the returned
 *   communicator (MPI_Comm_split with key \e i), so every partner rank the
 *   application stored stays valid. The returned communicator changes at each
 *   remap that moves a task.
 * - \e Over-decomposition (any other distribution): tasks move between
 *   processes, the returned communicator keeps the base rank order and does
 *   not change; rta_lb_task_owner() says which rank owns a task now and
 *   rta_lb_local_task() lists this process's tasks.
 *
 * \section rta_lb_move Moving a task
 * A leaf task (nprocs 1) that changes process travels with its key, its
 * parameters (nprocs, est_work, state_size, declared partners) and its cost
 * window. The destination defines it under its parent, in the stage it had
 * at the source when the parent has that stage there (else in a new stage);
 * a parent the destination does not have is defined there with default
 * parameters (and removed again if the remap rolls back).
 * Its state travels in two parts:
 * - the bytes of the serialisation callbacks (rta_serial_t of rta_task.h): size()
 *   and pack() run on the source, unpack() on the destination with the
 *   callbacks found there (the task's nearest ancestor that has them);
 * - the registered arrays, with no callback at all: on the destination rta
 *   allocates them, registers them on the arrived task and holds their
 *   pointers itself; read them with rta_task_array() and their dims with
 *   rta_task_array_dims(). Arrays of MPI datatypes are the exception (only
 *   the application can rebuild the datatype): for them, or to receive into
 *   its own pointers, the destination's unpack() callback registers, in the
 *   same order and with the same types, the pointers that will receive all
 *   the arrays (each NULL or memory the application hands over to rta, which
 *   frees it); rta then stores the arrived arrays, with their dims, through
 *   those pointers. A task with callback state bytes needs an unpack()
 *   callback on the destination; a task without them needs no callback.
 *   When an array leaves, rta frees it (or keeps its memory, below) and sets
 *   the pointer it was registered with to NULL, so a pointer the application
 *   reuses for a later arrival never holds the address of an array that
 *   left (nothing is freed twice).
 * A task whose whole state is one registered array of a ballast element type
 * (no callback bytes) is sent straight from the application's array and
 * received into the memory that becomes the destination's array: no copy on
 * either side. In other states the largest array of a ballast element type
 * travels the same way, and the rest is packed once and unpacked once.
 * Memory stays bounded: at most \c mem_limit bytes are packed and received
 * per round on each rank (rta_lb_config_t); by default (0) 64 MiB, arrays
 * below 128 KiB received straight into the memory that becomes the new
 * array not counted (a rank holds them after the commit whatever the
 * rounds, and each round is one more wait for the slowest rank). Between
 * remaps a context keeps memory that departed arrays occupied (blocks of 4
 * KiB and more) to receive the next arrivals into, since fresh memory is
 * slow to touch: up to \c mem_limit bytes per rank when it is set, and by
 * default (0) a quarter more than the most that arrived at any of the last
 * 8 remaps (at least 64 MiB), so that a remap moving more than 64 MiB per
 * rank is not received into fresh memory (the rank held that much during
 * the remap, departures and arrivals both alive); rta_lb_destroy() frees
 * it.
 * Arrivals of 1 MiB and more are received into memory aligned to 2 MiB and
 * offered transparent huge pages (Linux; one 2 MiB page holds an arrival of
 * 1-2 MiB and counts 2 MiB against \c mem_limit), and of departed arrays of
 * 1 MiB and more only such memory is kept for the next arrivals: one the
 * application allocated itself with malloc() is freed (smaller ones are
 * kept). Open MPI's
 * single-copy path pins the sender's pages one by one, so a state sent from
 * huge pages moves faster (15-19 against 9-11 GB/s on a 2-core VM).
 * rta_array_alloc() gives the application such memory from the start.
 *
 * \section rta_lb_rollback All or nothing
 * The remap is committed only when every rank has unpacked everything it
 * received; only then are the sources' arrays freed (free(), or kept for the
 * next arrivals as above, their pointers set to NULL) and their
 * release() callbacks called, and the moved tasks removed from the sources'
 * trees. If anything fails anywhere (a callback, an allocation, a size
 * mismatch), every rank drops what it received (release()
 * on the destination for each successful unpack()), keeps its tasks, its
 * state and the previous mapping, and returns an error: the failing rank's
 * own code there, BALLAST_EREMOTE elsewhere; every rank logs the failing
 * rank and code and rta_lb_last_error() returns them.
 *
 * \section rta_lb_gangs Multiprocessor tasks
 * A leaf task with nprocs > 1 is a gang: at each remap it gets nprocs
 * consecutive slots (base ranks) of one node, the node of the slot the
 * mapping chose when it fits there, else the first node large enough; a gang
 * larger than every node fails with BALLAST_ETOOBIG. rta_lb_task_comm() gives
 * each member the gang's sub-communicator. A gang's own state is not moved by
 * rta (its members share it through that communicator).
 *
 * \section rta_lb_life Lifetime
 * Destroy contexts before rta_reset() or removing the context's root: a
 * context keeps handles of this process's tasks. Tasks the application
 * defines or removes under the root between remaps are taken into account by
 * the next remap (owners and the local list refresh then).
 *
 * \section rta_lb_profile In the profile
 * The job's profile (mon_profile_write(), BALLAST_PROFILE, BALLAST_HTML)
 * carries two members from load balancing: "load_balancing", the totals of
 * every context (rta_lb_stats_t's figures, and "windows": the windows the
 * automatic policy judged and what it saw in them: "judged", "balanced",
 * "unconfirmed", "noise" (the slowest rank moved), "persistent" (the same
 * slowest rank in two imbalanced windows or more), "outliers" and
 * "machine" (windows where outliers were left out, where every rank was
 * slower), "warmup_end" (the step the start's warm-up ended, 0: not yet);
 * the text report's "windows" line says the same), and "lb_series", each context's
 * history, kept from its definition to the end of the program (also after
 * rta_lb_destroy(); of the destroyed contexts the last 16 are kept and
 * "contexts_dropped" counts the others), the same on every rank, bounded in
 * size:
 * \code
 * "lb_series": {"contexts": [{
 *   "root": "md", "ranks": 2, "mode": "over-decomposition"|"placement",
 *   "strategy": "twophase", "step_time": "tasks"|"wall", "incomplete": false,
 *   "policy": {"mode": "auto", "warmup": 20, "window": 20, "threshold": 1.1,
 *              "outlier": 2, "horizon": 100},
 *   "steps": {"total": 80, "stride": 1, "first": [1, 2, ...], "n": [1, 1, ...],
 *             "tmax": [s, ...], "tavg": [s, ...], "imbalance": [...],
 *             "judged": [...], "wmax": [s, ...], "wavg": [s, ...]},
 *   "remaps": [{"step": 25, "committed": true, "reason": "imbalanced",
 *               "tasks": 32, "bytes": 14368, "seconds_mapping": s,
 *               "seconds_migrating": s, "imbalance_before": 1.85,
 *               "imbalance_predicted": 1.01, "imbalance_after": 1.08,
 *               "gain_predicted": s, "tmax_before": s, "tavg_before": s,
 *               "tmax_after": s, "tavg_after": s}, ...],
 *   "remaps_dropped": 0,
 *   "node_of_rank": [0, 0, ...], "world_rank": [...],
 *   "task_map": {"detail_limit": 4096, "bins": 1024, "snapshots_dropped": 0,
 *     "snapshots": [{"step": 0, "ntasks": 64, "detail": true,
 *                    "per_rank": [32, 32], "keys": ["md/block_0", ...],
 *                    "owner": [0, 0, ...]}, ...]}}],
 *   "contexts_dropped": 0}
 * \endcode
 * - "steps": one point per judged step (a call with the policy not off that
 *   fed the policy a merged step: under the automatic policy the previous
 *   call's, its reduction completing a call later), as columns: the point's first step and number of steps, the means over them
 *   of the slowest and the average rank's time per step (the times the
 *   policy was fed), of the step's max/avg, and the policy's judged imbalance
 *   at the point's last judgement (0: none); "wmax" and "wavg" the means of
 *   the slowest and the average rank's program step: wall time between the
 *   end of one load-balancing call and the start of the next (what
 *   RTA_LB_TIME_WALL judges; beside the task time of "tmax"/"tavg" it says
 *   how much of the step the tasks are). At most 2,048 points: when full,
 *   neighbouring points merge in pairs and "stride" (steps per point) doubles.
 * - "remaps": one entry per remap tried (at most 256; "remaps_dropped" counts
 *   later ones). "step" is the judged step after which it ran; "tasks" and
 *   "bytes" what it moved (all ranks), the seconds are max over ranks;
 *   "imbalance_before", "tmax_before" and "tavg_before" are the judgement that
 *   triggered it (0 under the explicit policy when nothing was judged),
 *   "gain_predicted" the policy's predicted gain over its horizon,
 *   "imbalance_predicted" the new mapping's max/avg core load; the "after"
 *   figures are the first judgement after the remap (0 until there is one).
 *   A rolled-back remap has "committed": false and moved nothing.
 * - "node_of_rank": each rank's node in the context's hardware model (ranks of
 *   the context's communicator); "world_rank" their MPI_COMM_WORLD ranks,
 *   present only when they differ.
 * - "task_map": where the tasks ran at definition (step 0) and after each
 *   committed remap: the first map and the last 15 are kept
 *   ("snapshots_dropped" counts the others). "per_rank" counts the tasks per
 *   rank; "owner" is each task's rank (the first member of a gang), in the
 *   order of "keys", which a map carries only when its keys differ from the
 *   previous map's. Maps of more than 4,096 tasks are aggregated
 *   ("detail": false, no keys): the tasks in key order are cut into 1,024 bins
 *   of consecutive tasks, "owner" is each bin's most frequent rank and
 *   "share" that rank's share of the bin.
 * - "incomplete": true when memory ran out and some of the above is missing.
 * Each rank's part of the profile carries "lb_series": {"seconds": s,
 * "seconds_define": s, "seconds_deciding": s, "seconds_remapping": s,
 * "seconds_waiting": s}: the wall time that rank spent in load balancing
 * (defining contexts, the per-step decisions, remaps and the candidates the
 * policy dropped; its MPI traffic included), over all contexts, and of that
 * the time it waited for other ranks in the per-step collective and the
 * definition's first collective
 * (README "What the figures mean": ballast's own time is work plus this
 * waiting; the rank's "ballast_work" and "ballast_wait" hold it with the
 * topology mapping added).
 *
 * \section rta_lb_threads Threads
 * Contexts are not thread safe: call everything here from the thread that
 * calls MPI, like the rest of rta.
 */
#ifndef BALLAST_RTA_LB_H
#define BALLAST_RTA_LB_H

#include <stddef.h>
#include <stdint.h>

#include <mpi.h>

#include <ballast/common.h>
#include <ballast/rta_map.h>
#include <ballast/rta_policy.h>
#include <ballast/rta_task.h>

#ifdef __cplusplus
extern "C" {
#endif

/** A load-balancing context (opaque). */
typedef struct rta_lb_context rta_lb_context_t;

/** What a rank's time per step, fed to the policy, is made of. */
typedef enum {
  /** The time this rank's tasks spent in the step, as the cost model measured
   * it (rta_step(): wall time inside the tasks minus time inside MPI, capped by
   * their CPU time), summed
   * over the rank's tasks; wall time (below) when no task was clocked. */
  RTA_LB_TIME_TASKS = 0,
  /** Wall time between the end of the previous load-balancing call and the
   * start of this one (includes waiting for partners). */
  RTA_LB_TIME_WALL = 1
} rta_lb_time_t;

/** Configuration of a context. Fill with rta_lb_config_init(). */
typedef struct {
  rta_policy_config_t policy;  /**< when to remap (rta_policy.h) */
  rta_strategy_t strategy;     /**< default RTA_MAP_TWOPHASE */
  unsigned seed;               /**< seed of the mapping engine (and of RANDOM); remap k uses seed + k */
  double balrat;               /**< load imbalance allowed to SCOTCH (0: engine default) */
  size_t mem_limit;            /**< bytes packed+received per migration round per rank (0: 64 MiB, arrays below 128 KiB received in place not counted), and the bound of the pool of departed memory (0: it follows the remaps' arrivals, at least 64 MiB; see above) */
  rta_lb_time_t step_time;     /**< source of the per-rank step times */
  int use_env;                 /**< 1 (default): the BALLAST_LB* variables override \c policy */
  int measure_links;           /**< 1: measure latency and bandwidth between node leaders when
                                    the context is defined and map with those inter-node costs
                                    (rta_hw_options_t.measure_links); 0 (default): every
                                    inter-node hop costs the same */
  int balance_estimates;       /**< 1: under the automatic policy, the first load-balancing
                                    call remaps from the tasks' estimated work (est_work: the
                                    cost model's figure until min_steps steps are measured),
                                    as a code balancing its particle counts before step 1;
                                    reason RTA_REASON_ESTIMATED; measurement then takes over.
                                    A code that wants its tasks placed before its first step
                                    calls rta_lb_perform() once right after rta_lb_create(),
                                    before its loop (ballast-md does). 0 (default): wait for
                                    measurements */
} rta_lb_config_t;

/** Counters and figures of a context (same on every rank unless noted). */
typedef struct {
  long long calls;            /**< load-balancing calls */
  long long steps;            /**< calls that fed the policy (mode not off) */
  long long remaps;           /**< committed remaps */
  long long failed_remaps;    /**< remaps rolled back */
  long long tasks_moved;      /**< tasks moved by committed remaps, all ranks */
  double bytes_moved;         /**< state bytes moved by committed remaps, all ranks */
  double seconds_mapping;     /**< time in rta_task_map (max over ranks, summed over remaps
                                   and over candidates the policy dropped) */
  double seconds_migrating;   /**< time moving state and rebuilding communicators (max over ranks) */
  double seconds_deciding;    /**< time closing steps and deciding (this rank), its waiting for
                                   the other ranks in the per-step collective included (the
                                   profile's lb_series.seconds_waiting says how much, with the
                                   waiting at the context's definition) */
  double last_cost;           /**< cost in seconds of the last remap (mapping + migration) */
  double imbalance_before;    /**< imbalance that triggered the last remap (0: none judged) */
  double imbalance_predicted; /**< the mapping's max/avg core load after the last remap */
  double imbalance_after;     /**< first imbalance judged after the last remap (0: not yet) */
  double imbalance_first;     /**< first imbalance ever judged (0: not yet) */
  double imbalance_last;      /**< latest imbalance judged (0: not yet) */
  int last_error_rank;        /**< rank that failed the last failed remap, -1 when none */
  int last_error_code;        /**< its BALLAST_E* code, 0 when none */
} rta_lb_stats_t;

/**
 * \brief Fills \a cfg with the defaults: rta_policy_config_init(),
 * two-phase strategy, seed 0, engine balance, 64 MiB rounds, task times,
 * environment overrides on. NULL does nothing. Thread safe.
 */
BALLAST_API void rta_lb_config_init(rta_lb_config_t *cfg);

/**
 * \brief Defines a load-balancing context over \a comm for the subtree under
 * \a root.
 *
 * Collective over \a comm. Discovers the hardware (rta_hw_discover_ex(),
 * with measured inter-node links when cfg->measure_links),
 * gathers the task tree (the root must be defined on every process, with the
 * same key), creates the policy (\a cfg, then the environment when
 * cfg->use_env) and places the gangs.
 * \param comm the application's communicator (not freed, not kept: ballast
 *        works on duplicates).
 * \param root this process's handle of the shared root.
 * \param cfg NULL for rta_lb_config_init().
 * \param ctx receives the context (destroy with rta_lb_destroy()).
 * \param out_comm receives the communicator the application must use from
 *        now on (owned by ballast: see the file's description). May be NULL.
 * \return 0; BALLAST_EINVAL for NULL arguments, MPI_COMM_NULL, an
 * intercommunicator or a bad configuration; BALLAST_EMISMATCH when the ranks
 * pass different roots or define a task with different parameters (the
 * warning names the parameter); BALLAST_ENOTFOUND when the root has no leaf
 * task on any rank; BALLAST_ETOOBIG when a gang fits no node;
 * rta_task_map() codes (BALLAST_EEXIST, BALLAST_ENOTFOUND, ...);
 * BALLAST_EREMOTE when another rank failed; BALLAST_EMPI; BALLAST_ENOMEM.
 * Every rank returns an error together (the codes may differ as said) and
 * then creates nothing.
 */
BALLAST_API int rta_lb_create(MPI_Comm comm, rta_task_t *root,
                                      const rta_lb_config_t *cfg,
                                      rta_lb_context_t **ctx,
                                      MPI_Comm *out_comm);

/**
 * \brief Destroys a context: frees its communicators (the application's
 * communicator from the context becomes invalid), mapping, hardware model
 * and policy. The tasks stay. Collective over the context's processes; NULL
 * does nothing. \return 0; BALLAST_EMPI when freeing a communicator failed.
 */
BALLAST_API int rta_lb_destroy(rta_lb_context_t *ctx);

/**
 * \brief One load-balancing step of \a ctx. Collective over its processes.
 *
 * Policy off: counts the call and returns 0 at once (no step is closed,
 * nothing is exchanged, the communicator is unchanged).
 * Otherwise: closes a step of the cost model (rta_step(); not again when
 * the application has just closed it, see rta_step()), labels this rank's
 * time per step (rta_lb_config_t::step_time) and reduces it with the
 * other ranks' (one MPI_Iallreduce of a fixed size, completed at the next
 * call: rta_policy.h, "What it costs to communicate"), feeds the policy the
 * previous call's merged step and asks it (explicit: the reduction is
 * completed at once and it always remaps; the first call after
 * rta_lb_warm_start(): remap to the warm map; the first call with
 * balance_estimates: remap from the estimates). On a remap: rta_task_map()
 * from the current owners (migration cost included), gang placement; under
 * the automatic policy the candidate is then judged (rta_policy_confirm():
 * one MPI_Allreduce) and dropped, unmoved, when it moves nothing or gains
 * less than its migration costs; otherwise migration (all or nothing),
 * rebuilt communicators, and the remap's mapping and migration seconds (max
 * over ranks, in the policy's unit: wall time capped by CPU time for task
 * step times) are given to the policy (rta_policy_remap_measured()).
 * \param ctx the context.
 * \param comm NULL, or receives the application communicator (a new one
 *        after a placement remap; the old one is then freed).
 * \return 0 (remapped or not: see rta_lb_last_decision());
 * BALLAST_EINVAL for NULL ctx; BALLAST_ESTATE when a task is open on some
 * rank (the rank itself names the task; nothing is done): under the
 * explicit policy on every rank, each warning naming that rank; under the
 * automatic one on that rank, and on every rank when the call would have
 * remapped (the remap is called off), else the others warn at their next
 * call and that step is not counted; and outside MPI_Init..MPI_Finalize; a failed remap's code (the failing rank's own code there,
 * BALLAST_EREMOTE elsewhere; the old mapping and state are intact);
 * rta_task_map() codes; BALLAST_EMPI.
 */
BALLAST_API int rta_lb_perform(rta_lb_context_t *ctx, MPI_Comm *comm);

/**
 * \brief Warm start: seeds \a ctx from an earlier run of the same task tree,
 * read from \a path: a load-balancing record (BALLAST_LB_RECORD) or a job
 * profile (BALLAST_PROFILE; its "lb_series" member, see above).
 *
 * Collective over the context's processes; every process reads \a path
 * itself (it must be readable everywhere). The file must hold a context over
 * the same root key and number of ranks whose task map holds at least half
 * of this context's single-processor tasks; then
 * - the cost model of this process's tasks that have measured nothing yet is
 *   seeded with the earlier run's time per step (wall minus MPI time, capped
 *   by CPU time), so they count as measured at once;
 * - the next rta_lb_perform() remaps (reason RTA_REASON_WARM_START) to the
 *   earlier run's last map: every task found goes to the rank it ran on at
 *   the end; tasks new or renamed since stay where they are, with their
 *   estimates. In placement mode the map is used only when it is a
 *   permutation of the ranks. The remap moves state as any other (all or
 *   nothing) and is tried once; a warm map that moves no task (every task
 *   already where it ended) is not carried out.
 * A profile keeps per-task maps only up to 4,096 tasks; larger trees need a
 * record. BALLAST_LB_WARMSTART=path calls this from rta_lb_create()
 * (when cfg->use_env) and, on failure, warns and goes on.
 * \return 0; BALLAST_EINVAL for NULL; BALLAST_EDISABLED when the policy is
 * off (nothing done); BALLAST_EIO when the file cannot be read;
 * BALLAST_EPARSE when it is neither a record nor a profile, or malformed;
 * BALLAST_EMISMATCH when it holds another task tree (another root, number of
 * ranks, or fewer than half of the tasks; the warning names which);
 * BALLAST_ENOTSUP for a profile whose map is binned; BALLAST_EREMOTE when
 * another rank failed; BALLAST_ENOMEM. On error nothing is seeded or moved
 * on any rank: the context balances from its own measurements, and no task
 * or state is touched.
 */
BALLAST_API int rta_lb_warm_start(rta_lb_context_t *ctx, const char *path);

/** \brief The context whose application communicator is \a comm.
 * \return 0; BALLAST_EINVAL for NULL; BALLAST_ENOTFOUND. */
BALLAST_API int rta_lb_find(MPI_Comm comm, rta_lb_context_t **ctx);

/** \brief The context's current application communicator (MPI_COMM_NULL for NULL). */
BALLAST_API MPI_Comm rta_lb_comm(const rta_lb_context_t *ctx);

/** \brief The context's mode.
 * \return 1 in placement mode, 0 in over-decomposition; BALLAST_EINVAL for
 *         NULL. */
BALLAST_API int rta_lb_placement(const rta_lb_context_t *ctx);

/**
 * \brief The rank, in the application communicator, that owns the leaf task
 * \a key now (for a gang: its first member).
 * \return 0 and \a *rank; BALLAST_EINVAL for NULL; BALLAST_ENOTFOUND when
 * \a key is not a leaf of the context (as of its last mapping).
 */
BALLAST_API int rta_lb_task_owner(const rta_lb_context_t *ctx, const char *key,
                               int *rank);

/** \brief The context's leaf tasks.
 * \return the number of leaf tasks of the context (all ranks), as of its last
 *         mapping; BALLAST_EINVAL for NULL. */
BALLAST_API int64_t rta_lb_ntasks(const rta_lb_context_t *ctx);

/** \brief The leaf tasks this process owns.
 * \return the number of leaf tasks this process owns (gangs it is a member
 *         of included); BALLAST_EINVAL for NULL. */
BALLAST_API int rta_lb_nlocal(const rta_lb_context_t *ctx);

/**
 * \brief Iterator over this process's tasks: the i-th of them, sorted by key
 * (0 <= i < rta_lb_nlocal()), or NULL. Valid until the next remap.
 */
BALLAST_API rta_task_t *rta_lb_local_task(const rta_lb_context_t *ctx, int i);

/**
 * \brief The gang sub-communicator of a multiprocessor task (members ordered
 * by their base rank).
 * \return 0 and \a *comm (MPI_COMM_NULL when this process is not a member);
 * BALLAST_EINVAL for NULL; BALLAST_ENOTFOUND when \a key is not a gang of the
 * context. The communicator is owned by ballast and valid until the next
 * committed remap or the context's destruction.
 */
BALLAST_API int rta_lb_task_comm(const rta_lb_context_t *ctx, const char *key,
                              MPI_Comm *comm);

/**
 * \brief The base ranks of a gang's members.
 * \param ctx the context.
 * \param key the gang's task key.
 * \param n room in \a ranks (at least the gang's nprocs).
 * \param ranks receives the members' base ranks (the first nprocs entries).
 * \return 0; BALLAST_EINVAL for NULL; BALLAST_ENOTFOUND when \a key is not a
 * gang of the context; BALLAST_ESIZE when \a n is smaller than the gang.
 */
BALLAST_API int rta_lb_gang_ranks(const rta_lb_context_t *ctx, const char *key,
                                  int n, int *ranks);

/** \brief The last decision taken (zeroed before the first). \return 0; BALLAST_EINVAL. */
BALLAST_API int rta_lb_last_decision(const rta_lb_context_t *ctx,
                                     rta_decision_t *d);

/** \brief The context's counters. \return 0; BALLAST_EINVAL. */
BALLAST_API int rta_lb_stats(const rta_lb_context_t *ctx,
                                 rta_lb_stats_t *s);

/**
 * \brief What failed in the last failed remap: the rank (in the base
 * communicator, which is the application's rank order at definition) and its
 * code. \return 0 (rank -1, code 0 when no remap failed yet); BALLAST_EINVAL.
 */
BALLAST_API int rta_lb_last_error(const rta_lb_context_t *ctx, int *rank,
                                  int *code);

/**
 * \brief Records the context's load balancing into the file \a path (the
 * load-balancing record that ballast-lbsim replays; BALLAST_LB_RECORD=path
 * does the same from the context's definition on): the context, the policy's
 * settings, the hardware model, every judged step (each rank's time, rank
 * 0's wall time, the decision and its figures), the measured cost of every
 * task (sampled on long runs), bytes between ranks, every remap attempt
 * (the task graph mapped, slots before and after, the candidate's figures
 * and the policy's judgement of it, dropped candidates included, tasks and
 * bytes moved, mapping and migration seconds as given to the policy,
 * committed or rolled back, a warm start's map) and the seeds. The format is
 * documented in the README ("Load-balancing record"). Rank 0 writes it;
 * costs are gathered at remaps and every 64 steps, the file is written
 * through a buffer and completed by rta_lb_destroy() or a further call.
 * Started with this call (rather than the variable) the record holds no
 * task graph of the definition, only those of the remaps.
 * Collective over the context's processes.
 * \param ctx the context.
 * \param path the file (created or truncated), or NULL to end a running
 *        record.
 * \return 0; BALLAST_EINVAL for a NULL context; BALLAST_EIO on every rank when
 * rank 0 cannot open the file (a warning names it; nothing is recorded, the
 * context works on); BALLAST_EREMOTE, BALLAST_ENOMEM; BALLAST_ESTATE outside
 * MPI_Init..MPI_Finalize. A write that fails later is a warning and ends
 * the record; the run goes on.
 */
BALLAST_API int rta_lb_record(rta_lb_context_t *ctx, const char *path);

/** \brief The policy's configuration after code and environment (read-only), or NULL. */
BALLAST_API const rta_policy_config_t *rta_lb_policy(const rta_lb_context_t *ctx);

#ifdef __cplusplus
}
#endif
#endif /* BALLAST_RTA_LB_H */
