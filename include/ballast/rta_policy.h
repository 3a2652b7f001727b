/**
 * \file ballast/rta_policy.h
 * \brief When to remap: the explicit, automatic and off policies.
 *
 * The policy is a small deterministic state machine in two parts. Each rank
 * keeps a rta_policy_rank_t that labels its own step times one by one
 * (first, warm-up, outlier, good: the published rules of
 * runtime-variability section 4.5, an online classifier in O(1) per step)
 * and turns each step into a fixed-size rta_policy_step_t; the steps of all
 * ranks are merged by rta_policy_step_merge() (in a program: one reduction)
 * and fed to the rta_policy_t, identical on every rank, which decides. So
 * the same merged steps give the same decision on every rank and no
 * further agreement is needed. rta_policy_observe() does both parts at once
 * for a caller that holds every rank's time (a simulator, a test).
 *
 * The automatic policy, step by step:
 *  1. warm-up at the start: each rank's classifier looks for the end of a
 *     warm-up, the first step w >= 10 where the cumulative minimum of its
 *     step times drops by more than 10% of their median; a rank that finds
 *     none by step \c warmup (default 20) decides it had none. The policy
 *     waits until no rank is warming up. With \c warmup of 10 or less the
 *     first \c warmup steps are skipped instead (a fixed count). After a
 *     remap, min(\c warmup, 5) steps are skipped (caches, the remap itself);
 *  2. it then collects windows of \c window steps, one after the other (not
 *     sliding); each rank takes the median of its good steps in the window
 *     (outliers, steps of \c outlier times its running median or more, are
 *     left out: a page fault, an OS hiccup);
 *  3. imbalance = max / avg over ranks of those medians; the slowest rank is
 *     the one with the max;
 *  4. it tells imbalance from noise: an imbalanced window (imbalance >
 *     \c threshold) remaps only when the window before was imbalanced too
 *     and its slowest rank is still slow in this one (its median above
 *     \c threshold times the average: persistent imbalance, a slower node,
 *     more work; with several slow ranks the slowest may change among
 *     them). One imbalanced window is "unconfirmed"; slowness that leaves
 *     the rank it hit is noise that moves ("noise");
 *     isolated outliers never reach the medians; the whole machine slower
 *     moves every median alike and leaves the imbalance where it was.
 *     rta_decision_t says what it saw (\c slowest, \c persistent, \c noise);
 *  5. predicted gain = (max - avg) * \c horizon seconds: what the coming
 *     \c horizon steps would save if the load were spread evenly; it asks
 *     for a remap when the imbalance is persistent and the predicted gain
 *     exceeds the estimated cost of a remap (below);
 *  6. the caller computes the candidate mapping and hands its figures to
 *     rta_policy_confirm(): a candidate that moves no task, or whose own
 *     predicted gain (from the loads it predicts) does not pay the migration
 *     it needs, is not carried out, and the policy backs off: it judges again
 *     only after \c window steps, then 2, 4, 8, 16 windows after further
 *     skips in a row (a committed remap ends the back-off, unless the
 *     remaps before it did not deliver: step 7);
 *  7. a committed remap is checked against its prediction: the first window
 *     judged after it measures what share of the excess imbalance (above 1)
 *     the remap removed, against the share its candidate predicted. That
 *     ratio, its delivery (0 to 1), scales every predicted gain after it,
 *     trusted less by half every \c horizon steps (towards 1). A remap that
 *     delivered less than half backs the policy off as a dropped candidate
 *     does (1, 2, 4, 8, 16 windows, growing while remaps keep failing to
 *     deliver), and the imbalance must then be confirmed by two windows
 *     again. This is what keeps a rank that is slower by itself (a slower
 *     node, another job on it) from being remapped at every window: the
 *     mapping models equally fast cores, so tasks moved off a slow rank
 *     carry the cost they were measured with there, and a remap may move
 *     tasks without moving the load (the log at BALLAST_VERBOSE=2 says what
 *     each remap delivered).
 *
 * \section rta_policy_traffic What it costs to communicate
 * The merged step is #RTA_POLICY_STEP_DOUBLES doubles whatever the number
 * of ranks. rta's load balancing (rta_lb_perform()) sends, per step, one
 * MPI_Iallreduce of 16 doubles (the policy's step and the call's own
 * figures: error, wall time, the collective's cost) with a user-defined
 * operation, started in one call and completed in
 * the next (an MPI_Wait that normally finds it done: no global
 * synchronisation is added to the program's step), and nothing else. A
 * window costs nothing more: its per-rank figures (each rank's good median,
 * the slowest rank by MAXLOC, the sum, the outliers, the median of the
 * window before's slowest rank) ride in the same reduction at the window's
 * last step. So per step: 1 collective, 128
 * bytes contributed and 128 received per rank (256 in mon's count of a
 * reduction's buffers), at 2, 64 or 100,000 ranks alike (an allreduce
 * moves O(log P) messages of that size per rank); per window: 0 more. The
 * explicit policy, which remaps (collectively) at every call anyway, runs
 * the same reduction blocking; off communicates nothing. The decision at a
 * call is taken on the steps up to the previous call. By count, per step:
 * at 2 ranks 1 collective (one exchange of 128 bytes each way); at 64
 * ranks 1 collective (6 rounds of 128 bytes per rank with recursive
 * doubling); at 100,000 ranks 1 collective (17 rounds of 128 bytes per
 * rank), against the allgather it replaced: 32 bytes x P received by every
 * rank every step (3.2 MB at 100,000 ranks) and a synchronisation. With a
 * load-balancing record (BALLAST_LB_RECORD) the record adds one
 * MPI_Gather of one double per step to rank 0, and every 64 judged steps
 * and at each remap one MPI_Gather of a count and one MPI_Gatherv of the
 * ranks' buffered task costs (the record's cost, not the policy's; all of
 * it in the report's and the profile's library traffic, none in the
 * program's). A remap costs its own collectives.
 *
 * \section rta_policy_units One unit for gain and cost
 * Gain and cost are seconds of the same clock: the one the step times are
 * measured with. rta's load balancing feeds, by default, each rank's task
 * time (wall time inside its tasks minus time inside MPI, capped by the
 * thread's CPU time), and measures a remap's mapping and migration on each
 * rank the same way: wall time capped by the thread's CPU time, max over
 * ranks. So on a loaded machine, where preemption stretches wall time but not
 * CPU time, neither side is inflated against the other. With wall step times
 * (RTA_LB_TIME_WALL) both sides are wall seconds.
 *
 * \section rta_policy_cost The cost of a remap, estimated
 * The policy keeps two estimates, mapping seconds and migration seconds (with
 * the bytes that migration moved), fed by rta_policy_remap_measured() (and
 * the mapping seconds of skipped candidates). A measurement at or below the
 * current estimate replaces it; a higher one counts half (one slow remap on a
 * busy machine is not the rule). Trust decays: between measurements an
 * estimate moves towards \c initial_cost (or stays, when that is higher),
 * halving its distance every \c horizon steps, so no single expensive
 * measurement blocks remapping for the rest of a run. The cost weighed
 * before a remap is mapping + migration; a candidate's migration is scaled
 * by the bytes it would move against the bytes of the measured one.
 * Every decision and its reasons are kept in an rta_decision_t and logged at
 * BALLAST_LOG_INFO (BALLAST_VERBOSE=2).
 */
#ifndef BALLAST_RTA_POLICY_H
#define BALLAST_RTA_POLICY_H

#include <ballast/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The three policies. */
typedef enum {
  RTA_POLICY_OFF = 0,      /**< never remap: the code runs as if without ballast's balancing */
  RTA_POLICY_EXPLICIT = 1, /**< remap every time the application asks */
  RTA_POLICY_AUTO = 2      /**< remap when imbalance and predicted gain justify it */
} rta_policy_mode_t;

/** Configuration of a policy. Fill with rta_policy_config_init(). */
typedef struct {
  rta_policy_mode_t mode; /**< default RTA_POLICY_AUTO */
  int warmup;             /**< start: the longest wait for a warm-up's end; a rank
                               without one by this step had none (default 20);
                               10 or less: a fixed count of steps skipped. After a
                               remap min(warmup, 5) steps are skipped */
  int window;             /**< steps judged together (default 20, at least 3) */
  double threshold;       /**< imbalance above which a remap is considered (default 1.10) */
  double outlier;         /**< a step of outlier x the rank's median or more is ignored (default 2.0) */
  int horizon;            /**< steps over which the gain is predicted (default 100) */
  double initial_cost;    /**< remap cost in seconds assumed before one was measured (default 0) */
} rta_policy_config_t;

/** Why a decision came out as it did. */
typedef enum {
  RTA_REASON_OFF = 0,        /**< policy off */
  RTA_REASON_EXPLICIT,       /**< explicit policy: the application asked */
  RTA_REASON_WARMUP,         /**< still in the warm-up after start or a remap */
  RTA_REASON_FILLING,        /**< window not full yet */
  RTA_REASON_BALANCED,       /**< imbalance at or below the threshold */
  RTA_REASON_NOT_WORTH,      /**< imbalanced, but the predicted gain does not pay the cost */
  RTA_REASON_IMBALANCED,     /**< imbalanced and worth it: remap */
  RTA_REASON_NOTHING_MOVES,  /**< the candidate mapping moves no task: not carried out */
  RTA_REASON_BACKOFF,        /**< waiting after candidates that were not carried out */
  RTA_REASON_WARM_START,     /**< adopting the map of an earlier run (rta_lb_warm_start()) */
  RTA_REASON_UNCONFIRMED,    /**< imbalanced in this window only: the next window
                                  must show the same slowest rank */
  RTA_REASON_NOISE,          /**< imbalanced, but the slowest rank changed since the
                                  window before: noise that moves, not imbalance */
  RTA_REASON_ESTIMATED       /**< balancing from the tasks' estimated work before the
                                  first measurement (rta_lb_config_t.balance_estimates) */
} rta_reason_t;

/** What noise a judged window showed (rta_decision_t::noise, bits). */
enum {
  RTA_NOISE_OUTLIERS = 1, /**< outlier steps left out of the medians */
  RTA_NOISE_MOVING = 2,   /**< the slowest rank changed from the window before */
  RTA_NOISE_MACHINE = 4   /**< every rank slower: the average median grew by more
                               than the threshold since the window before, and the
                               imbalance no more than the threshold (one slower rank
                               grows the max, and so the imbalance, more) */
};

/** One decision and the figures behind it. */
typedef struct {
  int remap;               /**< 1: remap now; 0: do not */
  rta_reason_t reason;     /**< why */
  double imbalance;        /**< max/avg of the per-rank medians (0 when not judged) */
  double max_time;         /**< max over ranks of the median step time, seconds */
  double avg_time;         /**< average over ranks of the median step time, seconds */
  double predicted_gain;   /**< seconds saved over the horizon if balanced */
  double remap_cost;       /**< seconds a remap is expected to cost (after
                                rta_policy_confirm(): the candidate's migration) */
  int ignored_outliers;    /**< step times dropped as outliers in this window */
  long long step;          /**< steps observed so far */
  double predicted_imbalance; /**< after rta_policy_confirm(): the candidate's
                                   predicted max/avg load (0 before) */
  long long tasks_to_move; /**< after rta_policy_confirm(): tasks the candidate moves */
  int slowest;             /**< the rank with the max median in the window judged (-1:
                                none judged) */
  int persistent;          /**< imbalanced windows in a row with that same slowest rank
                                (0: this window is balanced) */
  int noise;               /**< RTA_NOISE_* bits: what noise the window showed */
  long long warmup_end;    /**< the step from which no rank was warming up (0: still
                                warming up) */
} rta_decision_t;

/** The number of doubles of a packed rta_policy_step_t. */
#define RTA_POLICY_STEP_DOUBLES 11

/**
 * One step as the policy sees it: the figures of the ranks merged
 * (rta_policy_step_merge()), a fixed size whatever the number of ranks.
 * Every figure is a double so that a step packs into
 * #RTA_POLICY_STEP_DOUBLES doubles (rta_policy_step_pack()) for one
 * reduction; counts are exact integers in them.
 */
typedef struct {
  double ranks;        /**< ranks merged into it */
  double warming;      /**< ranks still in their warm-up */
  double outliers;     /**< ranks whose step was an outlier */
  double max_time;     /**< max over ranks of the step time, seconds */
  double sum_time;     /**< sum over ranks of the step time */
  double window;       /**< ranks that closed a window with this step (all or none) */
  double win_max;      /**< max over ranks of the median of their good steps in the window */
  double win_slowest;  /**< the rank holding win_max (the lowest on a tie) */
  double win_sum;      /**< sum over ranks of those medians */
  double win_outliers; /**< outlier steps in the window, all ranks */
  double win_prev;     /**< the median of the rank that was the slowest in the window
                            judged before (0: none) */
} rta_policy_step_t;

/** One rank's part of the policy: its step-time classifier and window. */
typedef struct rta_policy_rank rta_policy_rank_t;

/** A candidate mapping computed for a remap, for rta_policy_confirm(). The
 * loads are those of the cost model (any unit, the same for both). */
typedef struct {
  double imbalance_now;   /**< max/avg over ranks of the loads as the tasks are placed now */
  double imbalance_after; /**< max/avg over ranks of the loads under the candidate */
  long long tasks;        /**< tasks the candidate moves */
  double bytes;           /**< state bytes it moves */
  double mapping_seconds; /**< what computing it cost, in the policy's unit */
} rta_remap_candidate_t;

/** A remap as carried out, for rta_policy_remap_measured(). Seconds in the
 * policy's unit (see "One unit for gain and cost"). */
typedef struct {
  double mapping;   /**< seconds computing the mapping */
  double migration; /**< seconds moving state and rebuilding communicators */
  double bytes;     /**< state bytes moved (all ranks) */
  int committed;    /**< 1 committed; 0 rolled back (its seconds still count) */
} rta_remap_measure_t;

/** Opaque policy state. */
typedef struct rta_policy rta_policy_t;

/**
 * \brief Fills \a cfg with the defaults listed in rta_policy_config_t.
 * NULL does nothing. Thread safe.
 */
BALLAST_API void rta_policy_config_init(rta_policy_config_t *cfg);

/**
 * \brief Overrides fields of \a cfg from the environment:
 * BALLAST_LB (off|explicit|auto), BALLAST_LB_THRESHOLD, BALLAST_LB_WINDOW,
 * BALLAST_LB_WARMUP, BALLAST_LB_HORIZON, BALLAST_LB_OUTLIER.
 * \return 0; BALLAST_EINVAL when cfg is NULL or a variable holds a value
 * that cannot be used (the field keeps its old value and a warning names the
 * variable and the value). Not thread safe with respect to setenv().
 */
BALLAST_API int rta_policy_config_from_env(rta_policy_config_t *cfg);

/** \brief The name of a reason ("balanced", "warmup", ...), static string;
 * "unknown" for a value outside the list. */
BALLAST_API const char *rta_reason_name(rta_reason_t reason);

/**
 * \brief Creates a policy for \a nranks ranks.
 * \param cfg configuration (copied); NULL means the defaults.
 * \param nranks ranks whose times every step carries (>= 1).
 * \param out receives the policy; the caller destroys it.
 * \return 0; BALLAST_EINVAL for a bad argument or configuration (window < 3,
 * threshold < 1, outlier <= 1, warmup < 0, horizon < 1, negative cost);
 * BALLAST_ENOMEM.
 */
BALLAST_API int rta_policy_create(const rta_policy_config_t *cfg, int nranks,
                                  rta_policy_t **out);

/** \brief Destroys a policy; NULL does nothing. */
BALLAST_API void rta_policy_destroy(rta_policy_t *p);

/**
 * \brief Feeds one step: \a times[r] is the seconds rank r spent on it.
 * Runs every rank's part (rta_policy_rank_observe(), ranks kept inside the
 * policy: nranks of them, allocated at the first call), merges them in rank
 * order and feeds the result (rta_policy_observe_step()). For a caller that
 * holds every rank's time; a parallel program runs the two parts apart.
 * \return 0; BALLAST_EINVAL for NULL, a count other than the policy's
 * nranks, or a negative or non-finite time (the step is then not recorded);
 * BALLAST_ENOMEM.
 */
BALLAST_API int rta_policy_observe(rta_policy_t *p, const double *times, int nranks);

/**
 * \brief Creates one rank's part of a policy configured as \a cfg (NULL:
 * the defaults). O(window) memory, whatever the number of ranks.
 * \return 0 and \a *out (destroy with rta_policy_rank_destroy());
 * BALLAST_EINVAL for a bad configuration or NULL \a out; BALLAST_ENOMEM.
 */
BALLAST_API int rta_policy_rank_create(const rta_policy_config_t *cfg,
                                       rta_policy_rank_t **out);

/** \brief Destroys a rank's part; NULL does nothing. */
BALLAST_API void rta_policy_rank_destroy(rta_policy_rank_t *k);

/**
 * \brief Labels this rank's time for the next step and fills \a out with
 * its contribution to the merged step. \a p, the policy as it stands (the
 * same on every rank), says whether the step belongs to a window and
 * whether it is the window's last. Local, O(1) (O(window) at a window's
 * last step), no allocation.
 * \param k this rank's part
 * \param p the policy
 * \param rank this rank's number (0 .. nranks-1)
 * \param seconds its time for the step
 * \param out receives its contribution to the merged step
 * \return the step's label: 0 first, 1 warm-up, 2 outlier, 3 good;
 * BALLAST_EINVAL for NULL, a rank out of range or a negative or non-finite
 * time (\a out is then a neutral contribution: merged, it changes nothing
 * but the rank count).
 */
BALLAST_API int rta_policy_rank_observe(rta_policy_rank_t *k, const rta_policy_t *p,
                                        int rank, double seconds, rta_policy_step_t *out);

/**
 * \brief Tells a rank's part that a remap happened: its outlier median and
 * statistics restart at the new level (its warm-up is not repeated).
 * NULL does nothing.
 */
BALLAST_API void rta_policy_rank_remapped(rta_policy_rank_t *k);

/**
 * \brief Merges \a b into \a a: counts and sums added, maxima kept, the
 * slowest rank by MAXLOC (the lower rank on a tie). Commutative and
 * associative up to the rounding of the sums: a reduction's operation.
 * NULL does nothing. Thread safe.
 */
BALLAST_API void rta_policy_step_merge(rta_policy_step_t *a, const rta_policy_step_t *b);

/** \brief Packs \a s into \a v (#RTA_POLICY_STEP_DOUBLES doubles). */
BALLAST_API void rta_policy_step_pack(const rta_policy_step_t *s, double *v);

/** \brief Unpacks #RTA_POLICY_STEP_DOUBLES doubles \a v into \a s. */
BALLAST_API void rta_policy_step_unpack(const double *v, rta_policy_step_t *s);

/**
 * \brief Feeds one merged step (every rank's contribution merged).
 * \return 0; BALLAST_EINVAL for NULL, a step merged from another number of
 * ranks than the policy's, or a negative or non-finite figure (the step is
 * then not recorded).
 */
BALLAST_API int rta_policy_observe_step(rta_policy_t *p, const rta_policy_step_t *s);

/**
 * \brief Decides whether to remap now, from the steps observed so far.
 * Deterministic: the same observations give the same decision on every rank.
 * \return 0 and fills \a d; BALLAST_EINVAL for NULL arguments.
 */
BALLAST_API int rta_policy_decide(rta_policy_t *p, rta_decision_t *d);

/**
 * \brief Judges the candidate mapping computed after a decision to remap.
 * Only a decision of the automatic policy with reason RTA_REASON_IMBALANCED
 * is judged (explicit remaps and other requests go ahead: \a d is left
 * alone). The candidate is dropped (d->remap = 0) with reason
 * RTA_REASON_NOTHING_MOVES when it moves no task, or RTA_REASON_NOT_WORTH
 * when its predicted gain, horizon x avg_time x (imbalance_now -
 * imbalance_after), does not exceed the estimated cost of its migration;
 * d->predicted_gain, d->remap_cost, d->predicted_imbalance and
 * d->tasks_to_move then hold the candidate's figures. A dropped candidate's
 * mapping seconds feed the cost estimate and start a back-off (file
 * description). Deterministic.
 * \return 0; BALLAST_EINVAL for NULL or a negative or non-finite figure.
 */
BALLAST_API int rta_policy_confirm(rta_policy_t *p, const rta_remap_candidate_t *c,
                                   rta_decision_t *d);

/**
 * \brief Tells the policy a remap was carried out (committed or rolled back)
 * and what it cost. The window is cleared, min(warmup, 5) steps are skipped
 * and two imbalanced windows are needed again; the
 * seconds feed the cost estimate; a committed remap ends any back-off.
 * \return 0; BALLAST_EINVAL for NULL or a negative or non-finite figure.
 */
BALLAST_API int rta_policy_remap_measured(rta_policy_t *p, const rta_remap_measure_t *m);

/** \brief The policy's configuration after validation (read-only), or NULL
 * for NULL. */
BALLAST_API const rta_policy_config_t *rta_policy_config(const rta_policy_t *p);

#ifdef __cplusplus
}
#endif
#endif /* BALLAST_RTA_POLICY_H */
