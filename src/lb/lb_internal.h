/*
 * Load-balancing contexts (private). lb.c holds the context, the call and
 * the communicators; lb_move.c adapts tasks to the migration engine;
 * what it needs of the task tree beyond the public API (defining an
 * arriving task with its cost window, adopting an array) is declared by the
 * task runtime in task/task_hooks.h;
 * lb_gang.c places multiprocessor tasks; lb_report.c feeds mon's report.
 */
#ifndef BALLAST_RTA_LB_INTERNAL_H
#define BALLAST_RTA_LB_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <mpi.h>

#include <ballast/rta.h>
#include <ballast/rta_lb.h>
#include <ballast/rta_policy.h>

/* One gang: a multiprocessor leaf and the base ranks it runs on. */
typedef struct {
  char *key;
  int nprocs;
  int *ranks;     /* nprocs base ranks, ascending */
  MPI_Comm comm;  /* the gang's communicator on members, else MPI_COMM_NULL */
} rta__gang_t;

/* Where a remap's move spends its time on this rank, summed over the
 * context's remaps in ctx->move_phase (benchmarks read it): finding and
 * describing the departures, the descriptors' exchange, the engine's five
 * phases (migrate.h: planning, packing, exchange, unpacking, commit), the
 * task tree's and the context's updates after the commit, and the rest of
 * the migration's time (the candidate's check before the move, the old
 * mapping freed after it). */
enum { RTA__LB_PH_DESCRIBE, RTA__LB_PH_DESCRIPTORS, RTA__LB_PH_PLAN,
       RTA__LB_PH_PACK, RTA__LB_PH_XFER, RTA__LB_PH_UNPACK, RTA__LB_PH_COMMIT,
       RTA__LB_PH_TREE, RTA__LB_PH_OTHER, RTA__LB_NPHASES };

typedef struct rta__warm rta__warm_t; /* a warm start's table (lb_warm.c) */

struct rta_lb_context {
  MPI_Comm base;          /* dup of the application's comm; rank order fixed */
  MPI_Comm app;           /* what the application uses (owned) */
  int rank, size;
  char *root_key;
  rta_lb_config_t cfg;
  rta_hw_t *hw;
  rta_policy_t *policy;
  rta_mapping_t *mapping; /* last mapping (owners = slots after a commit) */
  int placement;
  /* placement mode: index[v] = base rank that owned task v at definition */
  int *index;             /* per mapping vertex; NULL in over-decomposition */
  int64_t *where;         /* base rank hosting vertex v now (first member for gangs) */
  rta_task_t **local;     /* this rank's leaves, sorted by key */
  int nlocal;
  rta__gang_t *gangs;
  int ngangs;
  rta_decision_t last;
  rta_lb_stats_t stats;
  double last_exit;       /* MPI_Wtime at the end of the previous call */
  rta__warm_t *warm;      /* a warm start the next call adopts, or NULL */
  long long steps_seen;   /* rta_steps() then: a step closed since is the application's */
  double *stepbuf;        /* 6 x size doubles: the per-step and per-remap allgathers,
                             then the step's times and wall times per rank */
  /* ballast's own time waiting for other ranks (lb.c, step_wait): this
   * rank's seconds in the last per-step collective, the least any rank has
   * spent in it (-1: none known yet), and the waits summed (the
   * definition's included) */
  double coll_last, coll_cost, seconds_waiting;
  double seconds_remapping; /* this rank's wall time in remaps, dropped candidates included */
  int pending_after;      /* a remap happened: record the next judged imbalance */
  struct rta__mig_pool *pool; /* touched memory kept for migrations (lb_move.c) */
  /* kept from remap to remap (lb_move.c): the departures' records, the
   * arrivals' records, the departures' descriptors; their sizes */
  void *move_out, *move_in, *move_desc;
  size_t move_out_bytes, move_in_bytes, move_desc_bytes;
  double move_phase[RTA__LB_NPHASES];   /* seconds of the remaps' moves by phase, RTA__LB_PH_* */
  struct series *series;  /* load balancing over time, for the profile (lb_series.c) */
  struct lb__recw *rec;   /* the load-balancing record being written, or NULL (lb_record.c) */
  struct rta_lb_context *next; /* the registry */
};

/* ---- lb_move.c ---------------------------------------------------------- */

typedef struct {
  int64_t tasks;  /* tasks this rank sent */
  uint64_t bytes; /* bytes this rank sent */
  int failed_rank, failed_code;
} rta__lb_move_result_t;

/* Moves every single-processor leaf v of the mapping whose target slot[v]
 * differs from its owner; collective over ctx->base. Commits or rolls back
 * everywhere. After a commit the mapping's tasks (rta__mapping_task) are
 * this rank's after the move. */
int rta__lb_move(rta_lb_context_t *ctx, rta_mapping_t *m,
                 const int *slot, rta__lb_move_result_t *res);

/* ---- lb_gang.c ---------------------------------------------------------- */

/* Places every gang of \a m (nprocs > 1) on one node, from the mapped slot
 * (or the current owner when \a from_owner). Fills ctx->gangs (old ones are
 * freed by the caller). BALLAST_ETOOBIG when a gang fits no node. Local,
 * deterministic: same result on every rank. */
int rta__lb_place_gangs(rta_lb_context_t *ctx, const rta_mapping_t *m,
                        int from_owner, rta__gang_t **out, int *nout);
/* Creates the members' communicators (collective over ctx->base). */
int rta__lb_gang_comms(rta_lb_context_t *ctx, rta__gang_t *g, int n);
void rta__lb_gangs_free(rta__gang_t *g, int n);

/* ---- lb_report.c -------------------------------------------------------- */

/* Registers the context for the end-of-run report and the profile. */
void rta__lb_report_add(rta_lb_context_t *ctx);
void rta__lb_report_remove(rta_lb_context_t *ctx);

/* ---- lb_warm.c ---------------------------------------------------------- */

/* Sets \a slot (the target of every vertex of \a m) from the warm start's
 * map: known single-processor tasks to their earlier slot, unknown ones stay
 * with their owner. Placement mode: only when that is a permutation (else
 * \a slot is left and BALLAST_EMISMATCH). Local, deterministic. */
int rta__lb_warm_slots(const rta_lb_context_t *ctx, const rta_mapping_t *m, int *slot);
void rta__lb_warm_free(rta__warm_t *w);

/* ---- lb_series.c -------------------------------------------------------- */

/* The context's series for the profile ("lb_series"): opened when the context
 * is defined (with the seconds its definition took on this rank), fed at
 * every judged step (before a remap) and after every remap (committed or
 * not, \a rc its code), detached when the context is destroyed. Local, no
 * communication; without memory a series stops growing, nothing fails. */
void rta__lb_series_open(rta_lb_context_t *ctx, double define_seconds);
void rta__lb_series_step(rta_lb_context_t *ctx, const double *times,
                         const double *walls, const rta_decision_t *d);
void rta__lb_series_remap(rta_lb_context_t *ctx, const rta_decision_t *d, int rc);
void rta__lb_series_close(rta_lb_context_t *ctx);

/* ---- lb_record.c --------------------------------------------------------- */

/* The load-balancing record (format in lb_record.h). Every hook does
 * nothing when ctx->rec is NULL. Those marked collective are called by every
 * rank of the context at the same point; the others are local (rank 0
 * writes). A failure to write is one warning, after which the record stops
 * and the run goes on. */

/* The path BALLAST_LB_RECORD asks for this process's next context (the first
 * context gets the path itself, the k-th path.k), in \a buf; NULL when
 * the variable is not set. */
const char *rta__lb_record_env_path(char *buf, size_t n);
/* Starts a record of \a ctx at \a path (collective): context, policy,
 * hardware model and, when not NULL, the graph \a g0 of the definition.
 * 0; BALLAST_EIO on every rank when rank 0 cannot open the path (warned);
 * BALLAST_ENOMEM. */
int rta__lb_record_start(rta_lb_context_t *ctx, const char *path,
                         rta_graph_t *g0);
/* This rank's measured task costs of the step just closed: the local tasks
 * the cost model sampled in it (rta__cost_sample_step, as step_time takes
 * them) (local). */
void rta__lb_record_costs(rta_lb_context_t *ctx);
/* A judged step: rank 0's \a wall seconds, the times fed to the policy and
 * the decision (\a forced: 1 a performance assertion asked for the remap,
 * 2 a pending warm start did).
 * Collective: every 64 steps the buffered costs are gathered. */
void rta__lb_record_step(rta_lb_context_t *ctx, double wall, const double *times,
                         const rta_decision_t *d, int forced);
/* Before a remap attempt (collective): gathers costs and partner bytes,
 * numbers the attempt, notes its seed, whether a warm map is pending and the
 * statistics the remap's figures are taken from. */
void rta__lb_record_remap_begin(rta_lb_context_t *ctx);
/* Inside the remap, once the new mapping exists or failed (local): the
 * graph the engine mapped (taken over and freed, *g set to NULL), the new
 * mapping \a m and the target slots (either may be NULL on failure). */
void rta__lb_record_mapped(rta_lb_context_t *ctx, rta_graph_t **g,
                           const rta_mapping_t *m, const int *target);
/* The candidate mapping's figures \a c and the decision \a d after the
 * policy judged it (\a judged 1: rta_policy_confirm() was called; 0: a warm
 * map that moves nothing, dropped without it) (local). */
void rta__lb_record_candidate(rta_lb_context_t *ctx, const rta_remap_candidate_t *c,
                              int judged, const rta_decision_t *d);
/* After the remap attempt (local): its outcome from the statistics (\a
 * dropped: the candidate was not carried out) and, unless dropped, what
 * rta_policy_remap_measured() was given. */
void rta__lb_record_remap_end(rta_lb_context_t *ctx, int rc, int dropped,
                              const rta_remap_measure_t *m);
/* Ends the record (collective): last costs, the Z line, close. */
void rta__lb_record_stop(rta_lb_context_t *ctx);

#endif /* BALLAST_RTA_LB_INTERNAL_H */
