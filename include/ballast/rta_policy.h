/**
 * \file ballast/rta_policy.h
 * \brief When to remap: the explicit, automatic and off policies.
 *
 * The policy is a small deterministic state machine fed once per step with the
 * time every rank of the context spent on that step. Given the same inputs on
 * every rank (the step times are allgathered) it takes the same decision on
 * every rank, so no further agreement is needed.
 *
 * The automatic policy, step by step:
 *  1. the first \c warmup steps (and the first \c warmup steps after every
 *     remap) are skipped: caches, page faults and the remap itself make them
 *     unrepresentative;
 *  2. it then collects \c window steps; for each rank it takes the median of
 *     its step times over the window, ignoring single steps of \c outlier
 *     times that rank's median or more (a page fault, an OS hiccup);
 *  3. imbalance = max / avg over ranks of those medians;
 *  4. predicted gain = (max - avg) * \c horizon seconds: what the coming
 *     \c horizon steps would save if the load were spread evenly;
 *  5. it asks for a remap when imbalance > \c threshold and predicted gain >
 *     the estimated cost of a remap (below);
 *  6. the caller computes the candidate mapping and hands its figures to
 *     rta_policy_confirm(): a candidate that moves no task, or whose own
 *     predicted gain (from the loads it predicts) does not pay the migration
 *     it needs, is not carried out, and the policy backs off: it judges again
 *     only after \c window steps, then 2, 4, 8, 16 windows after further
 *     skips in a row (a committed remap ends the back-off).
 * After a judgement that does not remap, the window slides by one step.
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
  int warmup;             /**< steps skipped at start and after a remap (default 5) */
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
  RTA_REASON_WARM_START      /**< adopting the map of an earlier run (rta_lb_warm_start()) */
} rta_reason_t;

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
} rta_decision_t;

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
 * \return 0; BALLAST_EINVAL for NULL, a count other than the policy's
 * nranks, or a negative or non-finite time (the step is then not recorded).
 */
BALLAST_API int rta_policy_observe(rta_policy_t *p, const double *times, int nranks);

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
 * and what it cost. The window is cleared and a new warm-up starts; the
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
