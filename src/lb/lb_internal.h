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
} lb__gang_t;

/* Where a remap's move spends its time on this rank, summed over the
 * context's remaps in ctx->move_phase (benchmarks read it): finding and
 * describing the departures, the descriptors' exchange, the engine's five
 * phases (migrate.h: planning, packing, exchange, unpacking, commit), the
 * task tree's and the context's updates after the commit, and the rest of
 * the migration's time (the candidate's check before the move, the old
 * mapping freed after it). */
enum { LB__PH_DESCRIBE, LB__PH_DESCRIPTORS, LB__PH_PLAN,
       LB__PH_PACK, LB__PH_XFER, LB__PH_UNPACK, LB__PH_COMMIT,
       LB__PH_TREE, LB__PH_OTHER, LB__NPHASES };

struct policy__warm; /* a warm start's table (policy.h) */

/* The per-step vector: the policy's merged step, then the call's own
 * figures (lb.c: STEP_WHO ...). */
#define LB__STEP_DOUBLES (RTA_POLICY_STEP_DOUBLES + 5)

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
  lb__gang_t *gangs;
  int ngangs;
  rta_decision_t last;
  rta_lb_stats_t stats;
  double last_exit;       /* MPI_Wtime at the end of the previous call */
  struct policy__warm *warm; /* a warm start the next call adopts, or NULL */
  long long steps_seen;   /* rta_steps() then: a step closed since is the application's */
  double *stepbuf;        /* 4 x size doubles: the remap's allgather and the
                             candidate's loads per rank (not used per step) */
  /* The per-step reduction (lb.c, rta_policy.h "What it costs to
   * communicate"): this rank's part of the policy, the fixed-size vector it
   * sends and the one it receives, the request (live between the call that
   * starts it and the one that completes it), the operation and datatype. */
  rta_policy_rank_t *prank;
  double step_send[LB__STEP_DOUBLES], step_recv[LB__STEP_DOUBLES];
  MPI_Request step_req;
  int step_live;          /* step_req is started and not completed */
  int step_ready;         /* step_recv holds a completed step not yet fed */
  int remap_tried;        /* a remap was attempted (balance_estimates: no longer) */
  double step_post;       /* seconds starting it (MPI_Iallreduce) */
  double step_full;       /* the last completed one's: starting + completing */
  double fed_wall_max, fed_wall_sum; /* the program's step of the step fed last
                             (step_recv belongs to MPI while a reduction runs) */
  MPI_Op step_op;
  MPI_Datatype step_type;
  /* ballast's own time waiting for other ranks (lb.c, step_wait): this
   * rank's seconds in the last per-step collective, the least any rank has
   * spent in it (-1: none known yet), and the waits summed (the
   * definition's included) */
  double coll_last, coll_cost, seconds_waiting;
  double seconds_remapping; /* this rank's wall time in remaps, dropped candidates included */
  double seconds_define;    /* this rank's wall time in its definition, listeners included */
  int pending_after;      /* a remap happened: record the next judged imbalance */
  struct mig__pool *pool; /* touched memory kept for migrations (lb_move.c) */
  /* kept from remap to remap (lb_move.c): the departures' records, the
   * arrivals' records, the departures' descriptors; their sizes */
  void *move_out, *move_in, *move_desc;
  size_t move_out_bytes, move_in_bytes, move_desc_bytes;
  double move_phase[LB__NPHASES];   /* seconds of the remaps' moves by phase, LB__PH_* */
  struct series *series;  /* load balancing over time, for the profile (lb_series.c) */
  struct lb__recw *rec;   /* the load-balancing record being written, or NULL (lb_record.c) */
  struct rta_lb_context *next; /* the registry */
};

/* ---- lb_move.c ---------------------------------------------------------- */

typedef struct {
  int64_t tasks;  /* tasks this rank sent */
  uint64_t bytes; /* bytes this rank sent */
  int failed_rank, failed_code;
} lb__move_result_t;

/* Moves every single-processor leaf v of the mapping whose target slot[v]
 * differs from its owner; collective over ctx->base. Commits or rolls back
 * everywhere. After a commit the mapping's tasks (task__mapping_task) are
 * this rank's after the move. */
int lb__move(rta_lb_context_t *ctx, rta_mapping_t *m,
             const int *slot, lb__move_result_t *res);

/* ---- lb_gang.c ---------------------------------------------------------- */

/* Places every gang of \a m (nprocs > 1) on one node, from the mapped slot
 * (or the current owner when \a from_owner). Fills ctx->gangs (old ones are
 * freed by the caller). BALLAST_ETOOBIG when a gang fits no node. Local,
 * deterministic: same result on every rank. */
int lb__place_gangs(rta_lb_context_t *ctx, const rta_mapping_t *m,
                    int from_owner, lb__gang_t **out, int *nout);
/* Creates the members' communicators (collective over ctx->base). */
int lb__gang_comms(rta_lb_context_t *ctx, lb__gang_t *g, int n);
void lb__gangs_free(lb__gang_t *g, int n);

/* ---- lb_warm.c ---------------------------------------------------------- */

/* Sets \a slot (the target of every vertex of \a m) from the warm start's
 * map: known single-processor tasks to their earlier slot, unknown ones stay
 * with their owner. Placement mode: only when that is a permutation (else
 * \a slot is left and BALLAST_EMISMATCH). Local, deterministic. */
int lb__warm_slots(const rta_lb_context_t *ctx, const rta_mapping_t *m, int *slot);

/* ---- lb_events.c: the registry's listeners ------------------------------
 * lb keeps one registry of contexts (lb.c: lb__contexts) and one table
 * of listeners, called in a loop at each event of a context's life, in the
 * order they attached; the record writer, the series and the report attach
 * to it as tools attach to the tools interface, and the core never calls
 * them by name. A listener fills the events it wants (NULL: not called).
 * Events marked collective are raised by every rank of the context at the
 * same point (a listener may communicate over ctx->base there); the others
 * are local. No listener can fail into load balancing. */

typedef struct {
  double t0;                /* MPI_Wtime() when the definition began (its
                             * seconds, listeners included, are in
                             * ctx->seconds_define once they all ran) */
  rta_graph_t *graph;       /* the definition's task graph, when a listener
                             * wanted it (wants_graph), else NULL; a
                             * listener may finalize it, not free it */
} lb__defined_t;

typedef struct {
  double wall;              /* this rank's wall time of the program's step */
  double mine;              /* this rank's step time for the policy */
  /* the merged step fed to the policy at this call (the previous call's
   * step under the automatic policy, this call's under the explicit one),
   * NULL when none was (the first call, after a remap or an error) */
  const rta_policy_step_t *merged;
  double max_wall, sum_wall; /* the program's step over ranks, of the same step */
  const rta_decision_t *d;  /* the policy's decision */
  int forced;               /* 1: a failed assertion asked for the remap,
                             * 2: a pending warm start did */
  int closed;               /* the cost model closed a step for this call */
} lb__step_t;

typedef struct {
  rta_graph_t *graph;       /* the graph the engine mapped, or NULL (as
                             * the defined event's) */
  const rta_mapping_t *m;   /* the candidate mapping, NULL on failure */
  const int *slot;          /* its target slots, NULL on failure */
} lb__mapped_t;

typedef struct {
  const rta_remap_candidate_t *c; /* the candidate's figures */
  int judged;               /* rta_policy_confirm() judged it (0: a warm
                             * map that moves nothing, dropped without it) */
  const rta_decision_t *d;  /* the decision after the judgement */
} lb__judged_t;

typedef struct {
  int rc;                   /* the remap's code */
  int dropped;              /* the candidate was not carried out */
  long tasks;               /* tasks it moved over all ranks (0 unless
                             * committed) */
  const rta_remap_measure_t *cost; /* what the policy is given (not dropped) */
  const rta_decision_t *d;  /* the step's decision */
} lb__remap_end_t;

typedef struct lb__listener {
  const char *name;
  /* Whether the task graphs mapped for \a ctx should be kept for the
   * defined and mapped events (during the definition ctx->mapping is NULL). */
  int (*wants_graph)(const rta_lb_context_t *ctx);
  /* Collective: the context joined the registry. */
  void (*defined)(rta_lb_context_t *ctx, const lb__defined_t *ev);
  /* Collective: a judged step, before a remap it decides. */
  void (*step)(rta_lb_context_t *ctx, const lb__step_t *ev);
  /* Collective: a remap attempt begins. */
  void (*remap_begun)(rta_lb_context_t *ctx);
  /* Local: the candidate mapping exists (or failed). */
  void (*mapped)(rta_lb_context_t *ctx, const lb__mapped_t *ev);
  /* Local: the policy judged the candidate. */
  void (*judged)(rta_lb_context_t *ctx, const lb__judged_t *ev);
  /* Local: the remap attempt ended (committed, rolled back or dropped). */
  void (*remap_ended)(rta_lb_context_t *ctx, const lb__remap_end_t *ev);
  /* Collective: the context leaves the registry, before it is freed. */
  void (*destroyed)(rta_lb_context_t *ctx);
} lb__listener_t;

/* Attaches \a l (not copied; it must outlive the program's contexts) after
 * the others; the built-in listeners attach before the first context.
 * 0; BALLAST_EEXIST when attached already; BALLAST_ENOMEM. */
int lb__listen(const lb__listener_t *l);
/* The built-in listeners (lb_record.c, lb_report.c, lb_series.c,
 * lb_tool.c). */
extern const lb__listener_t lb__record_listener;
extern const lb__listener_t lb__report_listener;
extern const lb__listener_t lb__series_listener;
extern const lb__listener_t lb__tool_listener;

/* Raise one event to every listener, in order. */
int lb__wants_graph(const rta_lb_context_t *ctx);
void lb__emit_defined(rta_lb_context_t *ctx, const lb__defined_t *ev);
void lb__emit_step(rta_lb_context_t *ctx, const lb__step_t *ev);
void lb__emit_remap_begun(rta_lb_context_t *ctx);
void lb__emit_mapped(rta_lb_context_t *ctx, const lb__mapped_t *ev);
void lb__emit_judged(rta_lb_context_t *ctx, const lb__judged_t *ev);
void lb__emit_remap_ended(rta_lb_context_t *ctx, const lb__remap_end_t *ev);
void lb__emit_destroyed(rta_lb_context_t *ctx);

/* The registry (lb.c): the live contexts, newest first, linked by ctx->next. */
rta_lb_context_t *lb__contexts(void);

/* ---- lb_record.c --------------------------------------------------------- */

/* The load-balancing record (format in policy/policy.h), written by a listener;
 * BALLAST_LB_RECORD starts one at each definition (the first context gets
 * the path itself, the k-th path.k), rta_lb_record() at any time. */
/* Starts a record of \a ctx at \a path (collective): context, policy,
 * hardware model and, when not NULL, the graph \a g0 of the definition.
 * 0; BALLAST_EIO on every rank when rank 0 cannot open the path (warned);
 * BALLAST_ENOMEM. */
int lb__record_start(rta_lb_context_t *ctx, const char *path,
                     rta_graph_t *g0);
/* Ends the record (collective): last costs, the Z line, close. */
void lb__record_stop(rta_lb_context_t *ctx);

#endif /* BALLAST_RTA_LB_INTERNAL_H */
