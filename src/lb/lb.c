/* Load-balancing contexts: definition, the load-balancing call, the
 * communicators the application uses, lookups. Moving state is lb_move.c,
 * gangs lb_gang.c, the report lb_report.c. */
#include "lb/lb_internal.h"
#include "mig/migrate.h"
#include "policy/policy.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "assert/assert_hooks.h"
#include "common/common_internal.h"
#include "common/env.h"
#include "map/map_internal.h"
#include "mon/mon_hooks.h"
#include "task/task_hooks.h"

/* The registry of contexts, keyed by application communicator (a list: a
 * program has a handful of contexts). The only one: the report and the
 * series read it (lb__contexts) or follow it through the listeners. */
static rta_lb_context_t *contexts;

rta_lb_context_t *lb__contexts(void) { return contexts; }

/* The per-step reduction (below). */
static int step_op_create(rta_lb_context_t *ctx);
static int step_complete(rta_lb_context_t *ctx);

void rta_lb_config_init(rta_lb_config_t *cfg) {
  if (!cfg)
    return;
  memset(cfg, 0, sizeof *cfg);
  rta_policy_config_init(&cfg->policy);
  cfg->strategy = RTA_MAP_TWOPHASE;
  cfg->step_time = RTA_LB_TIME_TASKS;
  cfg->use_env = 1;
}


/* The gang whose key is \a key, or NULL. */
static const lb__gang_t *gang_of(const lb__gang_t *gangs, int ngangs,
                                 const char *key) {
  for (int g = 0; g < ngangs; g++)
    if (!strcmp(gangs[g].key, key))
      return &gangs[g];
  return NULL;
}

/* Where every vertex of \a m lives: its slot (NULL: its owner), a gang's
 * first member. Local, no allocation. */
static void locate(const rta_mapping_t *m, const int *slot,
                   const lb__gang_t *gangs, int ngangs, int64_t *where) {
  int64_t n = rta_mapping_ntasks(m);
  for (int64_t v = 0; v < n; v++) {
    where[v] = slot ? slot[v] : rta_mapping_owner(m, v);
    const lb__gang_t *g = rta_mapping_nprocs(m, v) > 1
                               ? gang_of(gangs, ngangs, rta_mapping_key(m, v))
                               : NULL;
    if (g)
      where[v] = g->ranks[0];
  }
}

/* This rank's leaves of \a m (a gang's on each member) into \a local, room
 * for every vertex, in key order as the mapping's vertices are; their
 * number. No allocation, cannot fail: the commit of a remap calls it. */
static int list_local(const rta_lb_context_t *ctx, const rta_mapping_t *m,
                      const int64_t *where, const lb__gang_t *gangs,
                      int ngangs, rta_task_t **local) {
  int64_t n = rta_mapping_ntasks(m);
  int nl = 0;
  for (int64_t v = 0; v < n; v++) {
    int mine = where[v] == ctx->rank;
    const lb__gang_t *g = rta_mapping_nprocs(m, v) > 1
                               ? gang_of(gangs, ngangs, rta_mapping_key(m, v))
                               : NULL;
    if (g) {
      mine = 0;
      for (int k = 0; k < g->nprocs; k++)
        mine |= g->ranks[k] == ctx->rank;
    }
    rta_task_t *t = mine ? task__mapping_task(m, v) : NULL;
    if (t || (mine && rta_task_find(rta_mapping_key(m, v), &t) == 0))
      local[nl++] = t;
  }
  return nl;
}

/* Room for where and the local list of \a n vertices. */
static int alloc_lists(int64_t n, int64_t **where, rta_task_t ***local) {
  *where = ballast__malloc((size_t)(n ? n : 1) * sizeof **where);
  *local = ballast__malloc((size_t)(n ? n : 1) * sizeof **local);
  if (*where && *local)
    return 0;
  free(*where);
  free(*local);
  *where = NULL;
  *local = NULL;
  return BALLAST_ENOMEM;
}

/* The application communicator for a placement (\a where, \a index of the
 * mapping's n vertices): in placement mode the host of task i gets rank i. */
static int build_app_comm(const rta_lb_context_t *ctx, int64_t n,
                          const int64_t *where, const int *index, MPI_Comm *out) {
  int key = ctx->rank;
  if (ctx->placement) {
    for (int64_t v = 0; v < n; v++)
      if (where[v] == ctx->rank)
        key = index[v];
    return MPI_Comm_split(ctx->base, 0, key, out) == MPI_SUCCESS ? 0 : BALLAST_EMPI;
  }
  return MPI_Comm_dup(ctx->base, out) == MPI_SUCCESS ? 0 : BALLAST_EMPI;
}

/* Local: the context's state from its first mapping (current owners):
 * placement indices, gangs, where every task lives, this rank's list. */
static int adopt_first_mapping(rta_lb_context_t *ctx, const rta_task_t *root) {
  int rc = 0;
  ctx->placement = rta_mapping_placement(ctx->mapping);
  int64_t n = rta_mapping_ntasks(ctx->mapping);
  if (ctx->placement) {
    ctx->index = ballast__malloc((size_t)n * sizeof *ctx->index);
    if (!ctx->index)
      rc = BALLAST_ENOMEM;
    for (int64_t v = 0; !rc && v < n; v++)
      ctx->index[v] = rta_mapping_owner(ctx->mapping, v);
  }
  if (!rc)
    rc = lb__place_gangs(ctx, ctx->mapping, 1, &ctx->gangs, &ctx->ngangs);
  if (!rc && !(ctx->root_key = ballast__strdup(rta_task_key(root))))
    rc = BALLAST_ENOMEM;
  if (!rc)
    rc = alloc_lists(n, &ctx->where, &ctx->local);
  if (!rc) {
    locate(ctx->mapping, NULL, ctx->gangs, ctx->ngangs, ctx->where);
    ctx->nlocal = list_local(ctx, ctx->mapping, ctx->where, ctx->gangs,
                             ctx->ngangs, ctx->local);
  }
  return rc;
}

static void context_free(rta_lb_context_t *ctx) {
  if (!ctx)
    return;
  int fin = 0;
  MPI_Finalized(&fin);
  lb__gangs_free(ctx->gangs, ctx->ngangs);
  if (!fin) {
    if (ctx->step_op != MPI_OP_NULL)
      MPI_Op_free(&ctx->step_op);
    if (ctx->step_type != MPI_DATATYPE_NULL)
      MPI_Type_free(&ctx->step_type);
    if (ctx->app != MPI_COMM_NULL)
      MPI_Comm_free(&ctx->app);
    if (ctx->base != MPI_COMM_NULL)
      MPI_Comm_free(&ctx->base);
  }
  rta_mapping_destroy(ctx->mapping);
  rta_hw_destroy(ctx->hw);
  rta_policy_destroy(ctx->policy);
  rta_policy_rank_destroy(ctx->prank);
  policy__warm_free(ctx->warm);
  mig__pool_destroy(ctx->pool);
  free(ctx->move_out);
  free(ctx->move_in);
  free(ctx->move_desc);
  free(ctx->root_key);
  free(ctx->index);
  free(ctx->where);
  free(ctx->local);
  free(ctx->stepbuf);
  free(ctx);
}

/* A context just defined (collectively, without error) joins the registry,
 * its listeners hear of it (the record, the report, the profile's series),
 * and it adopts a warm start named by the environment (collective:
 * rta_lb_warm_start). \a g0: the definition's graph, when kept. */
static void context_open(rta_lb_context_t *ctx, double t0, double wait,
                         rta_graph_t *g0) {
  ctx->next = contexts;
  contexts = ctx;
  const lb__defined_t ev = {t0, g0};
  lb__emit_defined(ctx, &ev);
  ctx->seconds_define = MPI_Wtime() - t0;
  ballast__own_add(ctx->seconds_define, wait);
  ctx->seconds_waiting += wait;
  ctx->last_exit = MPI_Wtime();
  ctx->steps_seen = rta_steps();
  const char *warm = ctx->cfg.use_env ? ballast__env_string("BALLAST_LB_WARMSTART") : NULL;
  if (warm && *warm) /* a refusal is a warning: the context balances unseeded */
    (void)rta_lb_warm_start(ctx, warm);
  BALLAST_INFO("rta: load-balancing context over %d ranks, root \"%s\", %lld "
               "tasks, %s mode, policy %s", ctx->size, ctx->root_key,
               (long long)rta_mapping_ntasks(ctx->mapping),
               ctx->placement ? "placement" : "over-decomposition",
               ctx->cfg.policy.mode == RTA_POLICY_OFF ? "off"
               : ctx->cfg.policy.mode == RTA_POLICY_EXPLICIT ? "explicit" : "auto");
}

int rta_lb_create(MPI_Comm comm, rta_task_t *root,
                          const rta_lb_config_t *cfg, rta_lb_context_t **out,
                          MPI_Comm *out_comm) {
  if (out)
    *out = NULL;
  if (out_comm)
    *out_comm = MPI_COMM_NULL;
  int rc0 = ballast__need_mpi("rta_lb_create");
  if (rc0)
    return rc0;
  double t_define = MPI_Wtime();
  rta_graph_t *g0 = NULL; /* the first graph, for listeners that want it */
  int inter = 0;
  if (comm == MPI_COMM_NULL || MPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS ||
      inter) {
    BALLAST_WARN("rta: lb_create: %s communicator",
                 comm == MPI_COMM_NULL ? "a null" : "an inter");
    return BALLAST_EINVAL;
  }
  rta_lb_context_t *ctx = ballast__calloc(1, sizeof *ctx);
  int err = 0;
  if (!ctx)
    err = BALLAST_ENOMEM;
  else {
    ctx->base = ctx->app = MPI_COMM_NULL;
    ctx->stats.last_error_rank = -1;
    ctx->coll_cost = -1;
    ctx->step_op = MPI_OP_NULL;
    ctx->step_type = MPI_DATATYPE_NULL;
    if (cfg)
      ctx->cfg = *cfg;
    else
      rta_lb_config_init(&ctx->cfg);
  }
  if (!err && (!root || !out))
    err = BALLAST_EINVAL;
  /* A variable with a value that cannot be used is ignored with a warning
   * (the code's value stays): the environment never stops a run. */
  if (!err && ctx->cfg.use_env)
    (void)rta_policy_config_from_env(&ctx->cfg.policy);
  if (!err && (ctx->cfg.strategy < 0 || ctx->cfg.strategy >= RTA_MAP_NSTRATEGIES ||
               ctx->cfg.step_time < RTA_LB_TIME_TASKS ||
               ctx->cfg.step_time > RTA_LB_TIME_WALL)) {
    BALLAST_WARN("rta: lb_create: strategy %d or step-time source %d "
                 "out of range", ctx->cfg.strategy, (int)ctx->cfg.step_time);
    err = BALLAST_EINVAL;
  }
  /* Everything below is collective: every rank goes through it. */
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  if (ctx) {
    ctx->rank = rank;
    ctx->size = size;
  }
  ballast__lib_begin();
  MPI_Comm base = MPI_COMM_NULL;
  /* The definition's first collective is where the ranks meet: a rank's
   * time in it less the least any rank spent there is its waiting for the
   * others (README "What the figures mean"), one more reduction, once. */
  double t_dup = MPI_Wtime();
  if (MPI_Comm_dup(comm, &base) != MPI_SUCCESS)
    err = err ? err : BALLAST_EMPI;
  t_dup = MPI_Wtime() - t_dup;
  double t_dup_min = t_dup;
  if (MPI_Allreduce(&t_dup, &t_dup_min, 1, MPI_DOUBLE, MPI_MIN, comm) != MPI_SUCCESS)
    t_dup_min = t_dup;
  if (ctx)
    ctx->base = base;
  if (!err)
    err = rta_policy_create(&ctx->cfg.policy, size, &ctx->policy);
  if (!err && !(ctx->stepbuf = ballast__malloc(4 * (size_t)size * sizeof *ctx->stepbuf)))
    err = BALLAST_ENOMEM;
  if (!err)
    err = rta_policy_rank_create(&ctx->cfg.policy, &ctx->prank);
  if (!err)
    err = step_op_create(ctx);
  int rc = ballast__agree(base != MPI_COMM_NULL ? base : comm, err, NULL, NULL);
  if (!rc) {
    rta_hw_options_t ho;
    rta_hw_options_init(&ho);
    ho.measure_links = ctx->cfg.measure_links;
    rc = rta_hw_discover_ex(base, &ho, &ctx->hw);
    rc = ballast__agree(base, rc, NULL, NULL);
  }
  if (!rc) {
    /* Gather the tree once: owners, placement mode, validation. */
    rta_task_map_options_t mo;
    rta_task_map_options_init(&mo);
    mo.strategy = RTA_MAP_ROUNDROBIN;
    mo.fresh = 1;
    rc = task__map_keep(base, root, ctx->hw, &mo, &ctx->mapping,
                        lb__wants_graph(ctx) ? &g0 : NULL);
  }
  if (!rc)
    rc = ballast__agree(base, adopt_first_mapping(ctx, root), NULL, NULL);
  if (!rc)
    rc = ballast__agree(base, lb__gang_comms(ctx, ctx->gangs, ctx->ngangs), NULL,
                    NULL);
  if (!rc)
    rc = ballast__agree(base, build_app_comm(ctx, rta_mapping_ntasks(ctx->mapping),
                                             ctx->where, ctx->index, &ctx->app),
                        NULL, NULL);
  ballast__lib_end();
  if (rc) {
    rta_graph_destroy(g0);
    if (ctx)
      context_free(ctx);
    else if (base != MPI_COMM_NULL)
      MPI_Comm_free(&base);
    return rc;
  }
  context_open(ctx, t_define, t_dup - t_dup_min, g0);
  rta_graph_destroy(g0);
  *out = ctx;
  if (out_comm)
    *out_comm = ctx->app;
  return 0;
}

int rta_lb_destroy(rta_lb_context_t *ctx) {
  if (!ctx)
    return 0;
  for (rta_lb_context_t **p = &contexts; *p; p = &(*p)->next)
    if (*p == ctx) {
      *p = ctx->next;
      break;
    }
  /* collective: every rank has the same step's reduction running */
  int fin = 0;
  MPI_Finalized(&fin);
  if (!fin)
    (void)step_complete(ctx);
  lb__emit_destroyed(ctx);
  context_free(ctx);
  return 0;
}

int rta_lb_find(MPI_Comm comm, rta_lb_context_t **out) {
  if (!out)
    return BALLAST_EINVAL;
  *out = NULL;
  if (comm == MPI_COMM_NULL)
    return BALLAST_ENOTFOUND;
  for (rta_lb_context_t *c = contexts; c; c = c->next)
    if (c->app == comm) {
      *out = c;
      return 0;
    }
  return BALLAST_ENOTFOUND;
}

/* This rank's time for the step that just closed: its tasks measured in
 * that step (whoever closed it), else the wall time. */
static double step_time(rta_lb_context_t *ctx, double wall, int closed) {
  if (ctx->cfg.step_time == RTA_LB_TIME_TASKS && closed) {
    double sum = 0;
    int any = 0;
    long long now = rta_steps();
    for (int i = 0; i < ctx->nlocal; i++) {
      rta_task_cost_t c;
      if (task__cost_sample_step(ctx->local[i]) == now &&
          rta_task_cost(ctx->local[i], &c) == 0) {
        sum += c.last_time;
        any = 1;
      }
    }
    if (any)
      return sum;
  }
  return wall;
}

/* ---- the per-step reduction ------------------------------------------------
 * One vector of LB__STEP_DOUBLES doubles per step (rta_policy.h, "What
 * it costs to communicate"): the policy's merged step, then who had an
 * error (rank + 1, max), its code (min: codes are negative), the program's
 * wall step (max and sum) and the least time a rank spent completing the
 * previous reduction (min; +inf for none). One user-defined operation
 * merges it, so one collective carries all of it. */
enum { STEP_WHO = RTA_POLICY_STEP_DOUBLES, STEP_CODE, STEP_WALL_MAX, STEP_WALL_SUM,
       STEP_COLL_MIN };

static void step_op_fn(void *in, void *inout, int *len, MPI_Datatype *type) {
  (void)type;
  const double *a = in;
  double *b = inout;
  for (int i = 0; i < *len; i++, a += LB__STEP_DOUBLES, b += LB__STEP_DOUBLES) {
    rta_policy_step_t x, y;
    rta_policy_step_unpack(a, &x);
    rta_policy_step_unpack(b, &y);
    rta_policy_step_merge(&y, &x);
    rta_policy_step_pack(&y, b);
    b[STEP_WHO] = fmax(a[STEP_WHO], b[STEP_WHO]);
    b[STEP_CODE] = fmin(a[STEP_CODE], b[STEP_CODE]);
    b[STEP_WALL_MAX] = fmax(a[STEP_WALL_MAX], b[STEP_WALL_MAX]);
    b[STEP_WALL_SUM] += a[STEP_WALL_SUM];
    b[STEP_COLL_MIN] = fmin(a[STEP_COLL_MIN], b[STEP_COLL_MIN]);
  }
}

/* The operation and datatype of a context's reduction (at definition). */
static int step_op_create(rta_lb_context_t *ctx) {
  if (MPI_Type_contiguous(LB__STEP_DOUBLES, MPI_DOUBLE, &ctx->step_type) != MPI_SUCCESS)
    return BALLAST_EMPI;
  if (MPI_Type_commit(&ctx->step_type) != MPI_SUCCESS ||
      MPI_Op_create(step_op_fn, 1, &ctx->step_op) != MPI_SUCCESS) {
    MPI_Type_free(&ctx->step_type);
    ctx->step_type = MPI_DATATYPE_NULL;
    return BALLAST_EMPI;
  }
  return 0;
}

/* This rank's wait for the other ranks in the step's reduction: its time
 * completing it less the reduction's own cost, estimated as the least time
 * any rank has spent completing one so far (the last rank to arrive waits
 * for nobody; each rank sends its previous time with the next step's
 * figures, so the estimate costs no message). Until one is known (the
 * first step), the whole time counts as waiting. */
static double step_wait(const rta_lb_context_t *ctx) {
  double w = ctx->coll_last - (ctx->coll_cost > 0 ? ctx->coll_cost : 0);
  return w > 0 ? w : 0;
}

/* Completes the live reduction (MPI_Wait) into ctx->step_recv. 0, or
 * BALLAST_EMPI. */
static int step_complete(rta_lb_context_t *ctx) {
  if (!ctx->step_live)
    return 0;
  ballast__lib_begin();
  double t = MPI_Wtime();
  int mrc = MPI_Wait(&ctx->step_req, MPI_STATUS_IGNORE);
  /* this call's part (coll_last) and the reduction's whole time on this
   * rank, starting and completing it (sent with the next step: the least
   * over ranks estimates the reduction's own cost) */
  double dt = MPI_Wtime() - t;
  ctx->coll_last += dt;
  ctx->step_full = ctx->step_post + dt;
  ballast__lib_end();
  ctx->step_live = 0;
  if (mrc != MPI_SUCCESS)
    return BALLAST_EMPI;
  ctx->step_ready = 1;
  double c = ctx->step_recv[STEP_COLL_MIN];
  if (isfinite(c) && c > 0 && (ctx->coll_cost < 0 || c < ctx->coll_cost))
    ctx->coll_cost = c;
  return 0;
}

/* Labels this rank's step (its part of the policy) and starts the
 * reduction of its contribution; a rank with an error contributes a
 * neutral step and its code. 0, or BALLAST_EMPI. */
static int step_start(rta_lb_context_t *ctx, double mine, int err, double wall) {
  rta_policy_step_t s;
  if (err || rta_policy_rank_observe(ctx->prank, ctx->policy, ctx->rank, mine, &s) < 0) {
    memset(&s, 0, sizeof s);
    s.ranks = 1;
    s.win_slowest = ctx->rank;
  }
  double *v = ctx->step_send;
  rta_policy_step_pack(&s, v);
  v[STEP_WHO] = err ? ctx->rank + 1 : 0;
  v[STEP_CODE] = err;
  v[STEP_WALL_MAX] = v[STEP_WALL_SUM] = wall;
  v[STEP_COLL_MIN] = ctx->step_full > 0 ? ctx->step_full : INFINITY;
  ballast__lib_begin();
  double t = MPI_Wtime();
  int mrc = MPI_Iallreduce(v, ctx->step_recv, 1, ctx->step_type, ctx->step_op, ctx->base,
                           &ctx->step_req);
  ctx->step_post = MPI_Wtime() - t;
  ctx->coll_last += ctx->step_post;
  ballast__lib_end();
  if (mrc != MPI_SUCCESS)
    return BALLAST_EMPI;
  ctx->step_live = 1;
  return 0;
}

/* The error a completed step carries: 0, BALLAST_ESTATE when a rank had a
 * task open (the application's misuse: the same code everywhere), else
 * BALLAST_EREMOTE (the rank's own code on that rank: \a err). */
static int step_error(const rta_lb_context_t *ctx, int err) {
  int who = (int)ctx->step_recv[STEP_WHO] - 1;
  if (who < 0)
    return 0;
  if ((int)ctx->step_recv[STEP_CODE] == BALLAST_ESTATE && !err) {
    BALLAST_WARN("rta: load balancing: a task was still open on rank %d (%s; its "
                 "step is not counted)", who, ballast_err_name(BALLAST_ESTATE));
    return BALLAST_ESTATE;
  }
  return err ? err : BALLAST_EREMOTE;
}

/* Feeds the completed reduction to the policy: *merged and *have. */
static void step_feed(rta_lb_context_t *ctx, rta_policy_step_t *merged, int *have) {
  rta_policy_step_unpack(ctx->step_recv, merged);
  ctx->fed_wall_max = ctx->step_recv[STEP_WALL_MAX];
  ctx->fed_wall_sum = ctx->step_recv[STEP_WALL_SUM];
  *have = rta_policy_observe_step(ctx->policy, merged) == 0;
}

/* The step's exchange. Under the automatic policy: completes the reduction
 * the previous call started (unless a remap's check did already) and feeds
 * it to the policy, then labels and contributes this call's step and leaves
 * its reduction running until the next call (no synchronisation of the
 * ranks here). Under the explicit policy, which remaps collectively at
 * every call anyway: the same reduction, completed at once. *have: a
 * merged step was fed (*merged). 0, or under the explicit policy the
 * step's error, the same on every rank; under the automatic one this
 * rank's own error \a err goes on through the call (rta_lb_perform: every
 * rank takes the same decision) and the others hear of it when the step
 * completes (a warning; that step is not counted). */
static int step_exchange(rta_lb_context_t *ctx, double mine, int err, double wall,
                         rta_policy_step_t *merged, int *have) {
  *have = 0;
  ctx->coll_last = 0; /* this call's reduction time, once one completes */
  int now = ctx->cfg.policy.mode != RTA_POLICY_AUTO;
  int rc = step_complete(ctx);
  if (!rc && ctx->step_ready && !now) {
    if (ctx->step_recv[STEP_WHO] == 0)
      step_feed(ctx, merged, have);
    else if ((int)ctx->step_recv[STEP_WHO] - 1 != ctx->rank)
      (void)step_error(ctx, 0);
  }
  ctx->step_ready = 0;
  if (!rc)
    rc = step_start(ctx, mine, err, wall);
  if (!rc && now) {
    rc = step_complete(ctx);
    if (!rc)
      rc = step_error(ctx, err);
    if (!rc)
      step_feed(ctx, merged, have);
    ctx->step_ready = 0;
  }
  return rc;
}

/* Closes the step unless the application just did (it called rta_step()
 * after the previous load-balancing call and no task began since): a
 * second rta_step() would close an empty step, and the judgement would see
 * no task time. 0, or BALLAST_ESTATE with a task open; *closed says whether
 * the closed step was measured. */
static int close_step(rta_lb_context_t *ctx, int *closed) {
  *closed = 0;
  if (rta_steps() > ctx->steps_seen && task__cost_step_closed()) {
    *closed = 1;
    return 0;
  }
  int src = rta_step();
  if (src == BALLAST_ESTATE) {
    BALLAST_WARN("rta: load balancing called while a task is open");
    return BALLAST_ESTATE;
  }
  *closed = src == 0;
  return 0;
}

/* Where every vertex goes: the mapping's slot; a gang's first member; in
 * placement mode a permutation (a strategy such as RANDOM may put two tasks
 * on one slot: the later ones go to the free slots, nearest first: same node,
 * then the lowest free slot). Deterministic, so identical on every rank. */
static int *target_slots(rta_lb_context_t *ctx, const rta_mapping_t *m,
                         const lb__gang_t *gangs, int ngangs) {
  int64_t n = rta_mapping_ntasks(m);
  int *slot = ballast__malloc((size_t)(n ? n : 1) * sizeof *slot);
  if (!slot)
    return NULL;
  for (int64_t v = 0; v < n; v++) {
    slot[v] = rta_mapping_slot(m, v);
    if (rta_mapping_nprocs(m, v) > 1)
      for (int g = 0; g < ngangs; g++)
        if (!strcmp(gangs[g].key, rta_mapping_key(m, v)))
          slot[v] = gangs[g].ranks[0];
  }
  if (ctx->placement && rta_mapping_placement(m) && n == ctx->size &&
      map__repair_by_node(ctx->hw, n, slot)) {
    free(slot);
    return NULL;
  }
  return slot;
}

/*
 * A remap, in phases over one record. Everything that can fail (the
 * mapping, gang placement, target slots, the new owners and local list, the
 * gangs' and the application's communicators) is made before the migration,
 * which is the commit point: it commits on every rank or rolls back on every
 * rank. After it, remap_commit only swaps pointers, fills the local list
 * from memory allocated before, and frees the old mapping and communicators:
 * nothing there can fail, so a remap that returns an error has changed
 * nothing but the statistics (and the cost model's closed step).
 */
typedef struct {
  rta_mapping_t *m;       /* the new mapping */
  lb__gang_t *gangs;     /* its gangs, their communicators once built */
  int ngangs;
  int *slot;              /* target slot of every vertex */
  int64_t *where;         /* host of every vertex after the move */
  rta_task_t **local;     /* room for this rank's list after the move */
  int *index;             /* placement: each vertex's index, carried by key */
  MPI_Comm app;           /* the new application communicator, or NULL */
  lb__move_result_t mv;
  int who, code;          /* the failing rank and its code, -1 when none */
  rta_graph_t *graph;     /* the graph mapped, when a listener wants it */
} remap_t;

/* The new mapping and its gangs. Collective over base. */
static int remap_map(rta_lb_context_t *ctx, remap_t *s) {
  rta_task_map_options_t mo;
  rta_task_map_options_init(&mo);
  mo.strategy = (rta_strategy_t)ctx->cfg.strategy;
  /* Remap k uses seed + k: a seeded RANDOM strategy gives a new map each time. */
  mo.engine.seed = ctx->cfg.seed +
                   (unsigned)(ctx->stats.remaps + ctx->stats.failed_remaps);
  if (ctx->cfg.balrat > 0)
    mo.engine.balrat = ctx->cfg.balrat;
  rta_task_t *root = NULL;
  int rc = rta_task_find(ctx->root_key, &root);
  rc = ballast__agree(ctx->base, rc, NULL, NULL);
  if (!rc)
    rc = task__map_keep(ctx->base, root, ctx->hw, &mo, &s->m,
                        lb__wants_graph(ctx) ? &s->graph : NULL);
  if (!rc)
    rc = ballast__agree(ctx->base,
                        lb__place_gangs(ctx, s->m, 0, &s->gangs, &s->ngangs),
                        NULL, NULL);
  return rc;
}

/* Local: the target slots, where every vertex will live, room for the local
 * list, and in placement mode each vertex's index (its rank at definition,
 * carried by key from the current mapping). */
static int remap_lists(rta_lb_context_t *ctx, remap_t *s) {
  int64_t n = rta_mapping_ntasks(s->m);
  s->slot = target_slots(ctx, s->m, s->gangs, s->ngangs);
  if (!s->slot || alloc_lists(n, &s->where, &s->local))
    return BALLAST_ENOMEM;
  if (ctx->warm) /* a refused warm map leaves the engine's slots: not an error */
    (void)lb__warm_slots(ctx, s->m, s->slot);
  locate(s->m, s->slot, s->gangs, s->ngangs, s->where);
  if (!ctx->placement)
    return 0;
  if (!(s->index = ballast__malloc((size_t)(n ? n : 1) * sizeof *s->index)))
    return BALLAST_ENOMEM;
  for (int64_t v = 0; v < n; v++) {
    int64_t u = rta_mapping_find(ctx->mapping, rta_mapping_key(s->m, v));
    s->index[v] = u >= 0 ? ctx->index[u] : (int)v;
  }
  return 0;
}

/* Everything the commit needs, made now. Collective over base. */
static int remap_prepare(rta_lb_context_t *ctx, remap_t *s) {
  int rc = ballast__agree(ctx->base, remap_lists(ctx, s), &s->who, &s->code);
  if (!rc && s->ngangs > 0) /* ngangs is the same on every rank */
    rc = ballast__agree(ctx->base, lb__gang_comms(ctx, s->gangs, s->ngangs),
                        &s->who, &s->code);
  /* A new application communicator only when a task changes hosts. */
  int64_t n = rta_mapping_ntasks(s->m);
  int any = 0;
  for (int64_t v = 0; !rc && v < n; v++)
    any |= rta_mapping_nprocs(s->m, v) == 1 &&
           s->slot[v] != rta_mapping_owner(s->m, v);
  if (!rc && ctx->placement && any)
    rc = ballast__agree(ctx->base, build_app_comm(ctx, n, s->where, s->index, &s->app),
                        &s->who, &s->code);
  return rc;
}

/* Frees what the record holds (the new state after a failure, the old one
 * after a commit). */
static void remap_free(remap_t *s) {
  int fin = 0;
  MPI_Finalized(&fin);
  if (!fin && s->app != MPI_COMM_NULL)
    MPI_Comm_free(&s->app);
  rta_mapping_destroy(s->m);
  rta_graph_destroy(s->graph);
  lb__gangs_free(s->gangs, s->ngangs);
  free(s->slot);
  free(s->where);
  free(s->local);
  free(s->index);
}

/* After the migration committed: the new state becomes the context's, the
 * old goes into \a s to be freed. Cannot fail. Freeing the old
 * communicators (remap_free) calls MPI_Comm_free, whose error, were there
 * one, cannot be undone and is ignored: the context is then fully in its
 * new state, and only a handle may leak. */
static void remap_commit(rta_lb_context_t *ctx, remap_t *s) {
  rta_mapping_t *m = ctx->mapping;
  lb__gang_t *gangs = ctx->gangs;
  int ngangs = ctx->ngangs;
  int64_t *where = ctx->where;
  rta_task_t **local = ctx->local;
  ctx->mapping = s->m;
  ctx->gangs = s->gangs;
  ctx->ngangs = s->ngangs;
  ctx->where = s->where;
  ctx->local = s->local;
  ctx->nlocal = list_local(ctx, ctx->mapping, ctx->where, ctx->gangs,
                           ctx->ngangs, ctx->local);
  s->m = m;
  s->gangs = gangs;
  s->ngangs = ngangs;
  s->where = where;
  s->local = local;
  if (ctx->placement) {
    int *index = ctx->index;
    ctx->index = s->index;
    s->index = index;
  }
  if (s->app != MPI_COMM_NULL) {
    MPI_Comm app = ctx->app;
    ctx->app = s->app;
    s->app = app;
  }
}

/* Max of the times and sum of the moves over ranks, in one collective, into
 * the statistics. A failure of that collective loses only these figures. */
static void remap_account(rta_lb_context_t *ctx, const remap_t *s, int rc,
                          double t_map, double t_move, rta_remap_measure_t *cost,
                          long *tasks) {
  double local[4] = {t_map, t_move, (double)s->mv.tasks, (double)s->mv.bytes};
  double mx[2] = {0, 0}, tot[2] = {0, 0};
  double *all = ctx->stepbuf; /* the step's times were consumed by the policy */
  if (MPI_Allgather(local, 4, MPI_DOUBLE, all, 4, MPI_DOUBLE, ctx->base) == MPI_SUCCESS)
    for (int r = 0; r < ctx->size; r++) {
      mx[0] = all[4 * r] > mx[0] ? all[4 * r] : mx[0];
      mx[1] = all[4 * r + 1] > mx[1] ? all[4 * r + 1] : mx[1];
      tot[0] += all[4 * r + 2];
      tot[1] += all[4 * r + 3];
    }
  ctx->stats.seconds_mapping += mx[0];
  ctx->stats.seconds_migrating += mx[1];
  *cost = (rta_remap_measure_t){mx[0], mx[1], rc ? 0 : tot[1], rc == 0};
  *tasks = rc ? 0 : (long)tot[0];
  if (rc)
    return;
  ctx->stats.remaps++;
  ctx->stats.tasks_moved += (long long)tot[0];
  ctx->stats.bytes_moved += tot[1];
  ctx->stats.last_cost = mx[0] + mx[1];
  const rta_map_quality_t *q = rta_mapping_quality(ctx->mapping);
  ctx->stats.imbalance_predicted = q ? q->max_avg_load_core : 0;
  ctx->stats.imbalance_after = 0;
  ctx->pending_after = 1;
  BALLAST_INFO("rta: remap %lld: %lld tasks and %.0f bytes moved, mapping "
               "%.3g s, migration %.3g s, predicted imbalance %.3f",
               ctx->stats.remaps, (long long)tot[0], tot[1], mx[0], mx[1],
               ctx->stats.imbalance_predicted);
}

/* This thread's CPU seconds (-1 when the clock is missing). */
static double thread_cpu(void) {
  struct timespec ts;
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts))
    return -1;
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Seconds since \a w0 (wall) and \a c0 (this thread's CPU time) in the
 * policy's unit (rta_policy.h): wall capped by CPU time when the step times
 * are task times, so gain and cost are seconds of one clock. */
static double elapsed(const rta_lb_context_t *ctx, double w0, double c0) {
  double w = MPI_Wtime() - w0, c = thread_cpu() - c0;
  return (ctx->cfg.step_time == RTA_LB_TIME_TASKS && c >= 0 && c < w) ? c : w;
}

/* Max/avg over ranks of \a load (\a sum in all). */
static double imbalance_of(const rta_lb_context_t *ctx, const double *load,
                           double sum) {
  double mx = 0;
  for (int r = 0; r < ctx->size; r++)
    mx = load[r] > mx ? load[r] : mx;
  return sum > 0 ? mx / (sum / ctx->size) : 1.0;
}

/* The candidate \a s's imbalance now (the current owners) and after (its
 * slots), of the model's load of the single-processor leaves, and the
 * tasks and bytes it moves: one pass over the mapping. Three passes (each
 * asking the mapping's accessors again) made the remap's time outside the
 * move 0.085 us per task moved at 4,096 x 4 KiB (bench_lb_remap's "other"),
 * one makes it 0.036. */
static void candidate_figures(const rta_lb_context_t *ctx, const remap_t *s,
                              rta_remap_candidate_t *c) {
  const rta_mapping_t *m = s->m;
  double *now = ctx->stepbuf, *after = ctx->stepbuf + ctx->size; /* the step's
                                           * times were consumed by the policy */
  memset(now, 0, 2 * (size_t)ctx->size * sizeof *now);
  double sum_now = 0, sum_after = 0;
  int64_t n = rta_mapping_ntasks(m);
  for (int64_t v = 0; v < n; v++) {
    if (rta_mapping_nprocs(m, v) != 1)
      continue;
    int owner = rta_mapping_owner(m, v), to = s->slot[v];
    double w = 0, bytes = 0; /* v is in range: the calls cannot fail */
    (void)rta_mapping_work(m, v, &w);
    if (owner >= 0 && owner < ctx->size) {
      now[owner] += w;
      sum_now += w;
    }
    if (to >= 0 && to < ctx->size) {
      after[to] += w;
      sum_after += w;
    }
    if (to != owner) {
      c->tasks++;
      (void)rta_mapping_state_bytes(m, v, &bytes);
      c->bytes += bytes;
    }
  }
  c->imbalance_now = imbalance_of(ctx, now, sum_now);
  c->imbalance_after = imbalance_of(ctx, after, sum_after);
}

/* Whether the automatic policy still wants the candidate \a s (computed in
 * \a t_map seconds on this rank): what it would move and gain, judged by
 * rta_policy_confirm(). Collective over base (the mapping seconds are agreed,
 * so every rank's policy stays the same); the same answer on every rank. */
static int candidate_wanted(rta_lb_context_t *ctx, const remap_t *s, double t_map,
                            rta_decision_t *d) {
  rta_remap_candidate_t c = {0, 0, 0, 0, 0};
  candidate_figures(ctx, s, &c);
  /* A warm map (or one from the estimates) that is where the tasks already
   * are: nothing to carry out (the same on every rank, so no rank enters the
   * reduction below). */
  if ((d->reason == RTA_REASON_WARM_START || d->reason == RTA_REASON_ESTIMATED) &&
      c.tasks == 0) {
    d->remap = 0;
    const lb__judged_t ev = {&c, 0, d};
    lb__emit_judged(ctx, &ev);
    return 0;
  }
  if (MPI_Allreduce(&t_map, &c.mapping_seconds, 1, MPI_DOUBLE, MPI_MAX, ctx->base) !=
      MPI_SUCCESS)
    return 1; /* no agreed figure: carry the remap out as decided */
  rta_policy_confirm(ctx->policy, &c, d);
  const lb__judged_t ev = {&c, 1, d};
  lb__emit_judged(ctx, &ev);
  if (!d->remap) /* the mapping was paid for all the same */
    ctx->stats.seconds_mapping += c.mapping_seconds;
  return d->remap;
}

/* Map, prepare, move (the commit point), adopt. Collective over base. A
 * candidate the policy drops (candidate_wanted) is freed unmoved: \a *dropped
 * is set and nothing is measured or counted. */
static int remap(rta_lb_context_t *ctx, rta_decision_t *d, rta_remap_measure_t *cost,
                 int *dropped, long *tasks) {
  remap_t s = {.app = MPI_COMM_NULL, .mv = {0, 0, -1, 0}, .who = -1};
  double t0 = MPI_Wtime(), c0 = thread_cpu();
  int rc = remap_map(ctx, &s);
  int prepared = 0;
  if (!rc)
    prepared = !(rc = remap_prepare(ctx, &s));
  double t_map = elapsed(ctx, t0, c0);
  double t1 = MPI_Wtime(), c1 = thread_cpu();
  /* listeners see a candidate's graph and slots whether or not it is
   * carried out (the record's replay maps it again and judges it again);
   * the graph is not needed after them */
  const lb__mapped_t mapped = {s.graph, s.m, s.slot};
  lb__emit_mapped(ctx, &mapped);
  rta_graph_destroy(s.graph);
  s.graph = NULL;
  if (prepared && !candidate_wanted(ctx, &s, t_map, d)) {
    *dropped = 1;
    remap_free(&s);
    return 0;
  }
  if (prepared) {
    ctx->move_phase[LB__PH_OTHER] += MPI_Wtime() - t1;
    rc = lb__move(ctx, s.m, s.slot, &s.mv);
    s.who = s.mv.failed_rank;
    s.code = s.mv.failed_code;
  }
  if (!rc) {
    double tc = MPI_Wtime();
    remap_commit(ctx, &s);
    ctx->move_phase[LB__PH_TREE] += MPI_Wtime() - tc;
  } else if (s.who >= 0) {
    ctx->stats.failed_remaps++;
    ctx->stats.last_error_rank = s.who;
    ctx->stats.last_error_code = s.code;
    BALLAST_WARN("rta: remap rolled back: rank %d failed with %s (%s); every "
                 "rank keeps its tasks and the previous mapping",
                 s.who, ballast_err_name(s.code), ballast_strerror(s.code));
  }
  double tf = MPI_Wtime();
  remap_free(&s);
  if (prepared)
    ctx->move_phase[LB__PH_OTHER] += MPI_Wtime() - tf;
  remap_account(ctx, &s, rc, t_map, elapsed(ctx, t1, c1), cost, tasks);
  return rc;
}

/* Before a remap the automatic policy decided (the same on every rank): the
 * step's reduction is completed (the remap synchronises the ranks anyway)
 * and a rank that had a task open in this step calls it off everywhere:
 * \a d no longer remaps and every rank returns the error (BALLAST_ESTATE;
 * its own code on the rank, BALLAST_EREMOTE elsewhere for another). The
 * completed step is fed at the next call unless the remap happens. 0 or
 * that error. */
static int remap_check(rta_lb_context_t *ctx, int own, rta_decision_t *d) {
  int rc = step_complete(ctx);
  if (!rc && ctx->step_ready && ctx->step_recv[STEP_WHO] != 0)
    rc = step_error(ctx, own);
  if (rc) {
    ctx->step_ready = 0;
    d->remap = 0;
    ctx->last.remap = 0;
  }
  return rc;
}

/* The statistics and the log line of one judged step. */
static void note_decision(rta_lb_context_t *ctx, const rta_decision_t *d) {
  if (d->imbalance > 0) {
    if (ctx->stats.imbalance_first == 0)
      ctx->stats.imbalance_first = d->imbalance;
    ctx->stats.imbalance_last = d->imbalance;
    if (ctx->pending_after) {
      ctx->stats.imbalance_after = d->imbalance;
      ctx->pending_after = 0;
    }
  }
  /* Only the automatic policy measures an imbalance: an explicit remap says
   * so rather than print figures nobody computed. */
  if (d->remap && d->reason == RTA_REASON_EXPLICIT)
    BALLAST_INFO("rta: step %lld: remap (explicit: requested by the application, "
                 "no imbalance measured)", d->step);
  else if (d->remap && d->reason == RTA_REASON_WARM_START)
    BALLAST_INFO("rta: step %lld: remap (warm start: the earlier run's map)", d->step);
  else if (d->remap && d->reason == RTA_REASON_ESTIMATED)
    BALLAST_INFO("rta: step %lld: remap (estimated: the tasks' est_work, before "
                 "measurements count)", d->step);
  else if (d->remap)
    BALLAST_INFO("rta: step %lld: remap (%s): imbalance %.3f > threshold %.3f, "
                 "predicted gain %.3g s, remap cost %.3g s, %d outlier(s) ignored",
                 d->step, rta_reason_name(d->reason), d->imbalance,
                 ctx->cfg.policy.threshold, d->predicted_gain, d->remap_cost,
                 d->ignored_outliers);
}

int rta_lb_perform(rta_lb_context_t *ctx, MPI_Comm *comm) {
  if (!ctx)
    return BALLAST_EINVAL;
  int rc0 = ballast__need_mpi("rta_lb_perform");
  if (rc0)
    return rc0;
  ctx->stats.calls++;
  if (ctx->cfg.policy.mode == RTA_POLICY_OFF) {
    if (comm)
      *comm = ctx->app;
    return 0;
  }
  double t_in = MPI_Wtime();
  double wall = t_in - ctx->last_exit;
  int closed = 0;
  int err = close_step(ctx, &closed);
  double mine = err ? 0 : step_time(ctx, wall, closed);
  rta_policy_step_t merged;
  int have = 0;
  int rc = step_exchange(ctx, mine, err, wall, &merged, &have);
  int own = ctx->cfg.policy.mode == RTA_POLICY_AUTO ? err : 0;
  double wait = step_wait(ctx);
  ctx->seconds_waiting += wait;
  if (rc) {
    double t = MPI_Wtime() - t_in;
    ctx->stats.seconds_deciding += t;
    ballast__own_add(t, wait);
    ctx->steps_seen = rta_steps();
    ctx->last_exit = MPI_Wtime();
    return rc;
  }
  ctx->stats.steps++;
  rta_decision_t d;
  rta_policy_decide(ctx->policy, &d);
  /* A failed assertion marked remap asks for one (agreed over the context;
   * no communication unless such an assertion exists). */
  int forced = 0;
  if (assert__remap_agree(ctx->base) > 0 && !d.remap) {
    d.remap = forced = 1;
    BALLAST_INFO("rta: step %lld: remap requested by a failed performance assertion", d.step);
  }
  if (ctx->warm && !d.remap) {
    d.remap = 1;
    d.reason = RTA_REASON_WARM_START;
    forced = 2;
  }
  /* The first call (or the first after one whose remap a rank's open task
   * called off): balance from the estimates, before measurements count
   * (the same on every rank). */
  if (ctx->cfg.balance_estimates && ctx->cfg.policy.mode == RTA_POLICY_AUTO &&
      !ctx->remap_tried && !d.remap) {
    d.remap = 1;
    d.reason = RTA_REASON_ESTIMATED;
    forced = 3;
  }
  ctx->last = d;
  const lb__step_t ev = {wall, mine, have ? &merged : NULL,
                            ctx->fed_wall_max, ctx->fed_wall_sum,
                            &d, forced, closed};
  lb__emit_step(ctx, &ev);
  note_decision(ctx, &d);
  double t_decided = MPI_Wtime();
  ctx->stats.seconds_deciding += t_decided - t_in;
  ballast__own_add(t_decided - t_in, wait);
  if (d.remap && ctx->cfg.policy.mode == RTA_POLICY_AUTO)
    rc = remap_check(ctx, own, &d);
  if (d.remap) {
    rta_remap_measure_t cost = {0, 0, 0, 0};
    int dropped = 0;
    long tasks = 0;
    ballast__lib_begin();
    lb__emit_remap_begun(ctx);
    ctx->remap_tried = 1;
    rc = remap(ctx, &d, &cost, &dropped, &tasks);
    ballast__lib_end();
    policy__warm_free(ctx->warm); /* one try: a failed warm remap is not repeated */
    ctx->warm = NULL;
    ctx->last = d;
    if (!dropped && d.imbalance > 0)
      ctx->stats.imbalance_before = d.imbalance;
    const lb__remap_end_t end = {rc, dropped, tasks, &cost, &d};
    lb__emit_remap_ended(ctx, &end);
    if (!dropped) { /* a dropped candidate: the step's reduction goes on */
      /* the step measured before the remap says nothing of the ranks after
       * it: dropped */
      ctx->step_ready = 0;
      rta_policy_rank_remapped(ctx->prank);
      /* A failed remap also restarts the warm-up, so a persistent failure is
       * retried after warmup + window steps, not at every step. */
      rta_policy_remap_measured(ctx->policy, &cost);
    }
    /* A remap is work, its collectives included: every rank's time in it is
     * what the remap cost that rank. */
    double t_remap = MPI_Wtime() - t_decided;
    ctx->seconds_remapping += t_remap;
    ballast__own_add(t_remap, 0);
  }
  if (comm)
    *comm = ctx->app;
  ctx->steps_seen = rta_steps();
  ctx->last_exit = MPI_Wtime();
  return rc ? rc : own;
}

MPI_Comm rta_lb_comm(const rta_lb_context_t *ctx) {
  return ctx ? ctx->app : MPI_COMM_NULL;
}

int rta_lb_placement(const rta_lb_context_t *ctx) {
  return ctx ? ctx->placement != 0 : BALLAST_EINVAL;
}

int rta_lb_task_owner(const rta_lb_context_t *ctx, const char *key, int *rank) {
  if (!ctx || !key || !rank)
    return BALLAST_EINVAL;
  int64_t v = rta_mapping_find(ctx->mapping, key);
  if (v < 0)
    return BALLAST_ENOTFOUND;
  *rank = (ctx->placement && ctx->index) ? ctx->index[v] : (int)ctx->where[v];
  return 0;
}

int64_t rta_lb_ntasks(const rta_lb_context_t *ctx) {
  if (!ctx)
    return BALLAST_EINVAL;
  return ctx->mapping ? rta_mapping_ntasks(ctx->mapping) : 0;
}

int rta_lb_nlocal(const rta_lb_context_t *ctx) {
  return ctx ? ctx->nlocal : BALLAST_EINVAL;
}

rta_task_t *rta_lb_local_task(const rta_lb_context_t *ctx, int i) {
  return (ctx && i >= 0 && i < ctx->nlocal) ? ctx->local[i] : NULL;
}

int rta_lb_task_comm(const rta_lb_context_t *ctx, const char *key, MPI_Comm *comm) {
  if (!ctx || !key || !comm)
    return BALLAST_EINVAL;
  const lb__gang_t *g = gang_of(ctx->gangs, ctx->ngangs, key);
  *comm = g ? g->comm : MPI_COMM_NULL;
  return g ? 0 : BALLAST_ENOTFOUND;
}

int rta_lb_gang_ranks(const rta_lb_context_t *ctx, const char *key, int n,
                      int *ranks) {
  if (!ctx || !key || !ranks)
    return BALLAST_EINVAL;
  const lb__gang_t *g = gang_of(ctx->gangs, ctx->ngangs, key);
  if (!g)
    return BALLAST_ENOTFOUND;
  if (n < g->nprocs)
    return BALLAST_ESIZE;
  memcpy(ranks, g->ranks, (size_t)g->nprocs * sizeof *ranks);
  return 0;
}

int rta_lb_last_decision(const rta_lb_context_t *ctx, rta_decision_t *d) {
  if (!ctx || !d)
    return BALLAST_EINVAL;
  *d = ctx->last;
  return 0;
}

int rta_lb_stats(const rta_lb_context_t *ctx, rta_lb_stats_t *s) {
  if (!ctx || !s)
    return BALLAST_EINVAL;
  *s = ctx->stats;
  return 0;
}

int rta_lb_last_error(const rta_lb_context_t *ctx, int *rank, int *code) {
  if (!ctx || !rank || !code)
    return BALLAST_EINVAL;
  *rank = ctx->stats.last_error_rank;
  *code = ctx->stats.last_error_code;
  return 0;
}

const rta_policy_config_t *rta_lb_policy(const rta_lb_context_t *ctx) {
  return ctx ? rta_policy_config(ctx->policy) : NULL;
}

