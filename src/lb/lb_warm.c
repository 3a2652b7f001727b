/*
 * Warm start (rta_lb_warm_start(), BALLAST_LB_WARMSTART): an earlier run of
 * the same task tree seeds the cost model and the first mapping. The table
 * key -> (slot, seconds per step) is read by policy (warm_read.c: from a
 * load-balancing record or a job profile); here it is checked against the
 * context, seeds the costs of this rank's tasks and is kept on the context
 * until its next load-balancing call, which remaps to it (lb.c:
 * lb__warm_slots). Every rank reads the file itself and builds the same
 * table; the ranks agree on failure.
 */
#include "lb/lb_internal.h"
#include "policy/policy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common_internal.h"
#include "task/task_hooks.h"

/* ---- the warm start ------------------------------------------------------------ */

/* The table from \a path (record or profile), checked against the context:
 * at least half of its single-processor tasks must be in it. */
static int load(const rta_lb_context_t *ctx, const char *path, policy__warm_t **out,
                char *why, size_t nwhy) {
  int rc = policy__warm_read(path, ctx->root_key, ctx->size, out, why, nwhy);
  if (rc)
    return rc;
  int64_t n = 0, found = 0;
  for (int64_t v = 0; v < rta_mapping_ntasks(ctx->mapping); v++)
    if (rta_mapping_nprocs(ctx->mapping, v) == 1) {
      int slot;
      double cost;
      n++;
      found += policy__warm_find(*out, rta_mapping_key(ctx->mapping, v), &slot, &cost);
    }
  if (2 * found < n || found == 0) {
    snprintf(why, nwhy, "only %lld of the context's %lld tasks are in it (another task "
             "tree)", (long long)found, (long long)n);
    policy__warm_free(*out);
    *out = NULL;
    return BALLAST_EMISMATCH;
  }
  return 0;
}

/* Seeds the cost window of this rank's tasks that have measured nothing yet
 * with the earlier run's time per step (min_steps samples: measured at once). */
static int seed_costs(rta_lb_context_t *ctx, const policy__warm_t *w) {
  int seeded = 0;
  double s[64];
  int n = task__cost_min_steps();
  n = n > 64 ? 64 : n;
  for (int i = 0; i < ctx->nlocal; i++) {
    rta_task_cost_t c;
    int slot;
    double cost = 0;
    if (!policy__warm_find(w, rta_task_key(ctx->local[i]), &slot, &cost) || cost <= 0 ||
        rta_task_cost(ctx->local[i], &c) || c.total_steps > 0)
      continue;
    for (int k = 0; k < n; k++)
      s[k] = cost;
    seeded += task__cost_restore(ctx->local[i], s, n, n) == 0;
  }
  return seeded;
}

int rta_lb_warm_start(rta_lb_context_t *ctx, const char *path) {
  if (!ctx || !path)
    return BALLAST_EINVAL;
  int rc0 = ballast__need_mpi("rta_lb_warm_start");
  if (rc0)
    return rc0;
  if (ctx->cfg.policy.mode == RTA_POLICY_OFF) {
    if (ctx->rank == 0)
      BALLAST_WARN("rta: warm start from %s ignored: load balancing is off", path);
    return BALLAST_EDISABLED;
  }
  char why[512] = "";
  policy__warm_t *w = NULL;
  int rc = load(ctx, path, &w, why, sizeof why);
  int who = -1, code = 0;
  ballast__lib_begin();
  int arc = ballast__agree(ctx->base, rc, &who, &code);
  ballast__lib_end();
  if (arc) {
    /* The (first) rank that failed names the reason, rank 0 that one did. */
    if (ctx->rank == who)
      BALLAST_WARN("rta: warm start of context \"%s\" from %s refused: %s (%s); the "
                   "context balances from its own measurements", ctx->root_key, path,
                   why, ballast_err_name(rc));
    else if (ctx->rank == 0)
      BALLAST_WARN("rta: warm start of context \"%s\" from %s refused on rank %d (%s); "
                   "the context balances from its own measurements", ctx->root_key,
                   path, who, ballast_err_name(code));
    policy__warm_free(w);
    return arc;
  }
  int seeded = seed_costs(ctx, w);
  policy__warm_free(ctx->warm);
  ctx->warm = w;
  BALLAST_INFO("rta: warm start of context \"%s\" from %s: %lld tasks known, %d of this "
               "rank's seeded; the next load-balancing call adopts the earlier map",
               ctx->root_key, path, (long long)policy__warm_ntasks(w), seeded);
  return 0;
}

int lb__warm_slots(const rta_lb_context_t *ctx, const rta_mapping_t *m, int *slot) {
  const policy__warm_t *w = ctx->warm;
  int64_t n = rta_mapping_ntasks(m);
  int *want = ballast__malloc((size_t)(n ? n : 1) * sizeof *want);
  int *used = ballast__calloc((size_t)ctx->size, sizeof *used);
  int ok = want && used;
  for (int64_t v = 0; ok && v < n; v++) {
    int was = -1;
    double cost;
    want[v] = slot[v];
    if (rta_mapping_nprocs(m, v) != 1)
      continue;
    /* Unknown tasks stay where they are; their estimates serve. */
    int known = policy__warm_find(w, rta_mapping_key(m, v), &was, &cost);
    want[v] = (known && was >= 0 && was < ctx->size) ? was : rta_mapping_owner(m, v);
    if (want[v] >= 0 && want[v] < ctx->size)
      used[want[v]]++;
  }
  /* Placement: only a permutation of the ranks will do. */
  for (int r = 0; ok && ctx->placement && r < ctx->size; r++)
    ok = used[r] == 1;
  if (ok)
    memcpy(slot, want, (size_t)n * sizeof *slot);
  else if (want && used && ctx->rank == 0)
    BALLAST_WARN("rta: the warm map of context \"%s\" is not a permutation of its ranks "
                 "(placement); the engine's mapping is used", ctx->root_key);
  free(want);
  free(used);
  return ok ? 0 : (want && used ? BALLAST_EMISMATCH : BALLAST_ENOMEM);
}

