/* The bit-for-bit replay: the recorded policy settings fed the recorded step
 * times must give the recorded decisions, and the recorded graphs mapped
 * with the recorded strategy, seeds and hardware model the recorded slots. */
#include "lbsim.h"

#include <stdlib.h>
#include <string.h>

#include <ballast/common.h>

#include "map/map_internal.h"

/* The recorded graph \a k as an engine graph. */
static int build_graph(const policy__graph_t *G, rta_graph_t **out) {
  rta_graph_t *g = NULL;
  int rc = rta_graph_create(G->n, &g);
  for (int64_t v = 0; !rc && v < G->n; v++)
    rc = rta_graph_set_vertex(g, v, G->v[v].work, G->v[v].state);
  for (int64_t u = 0; !rc && u < G->n; u++)
    for (int64_t e = G->xadj[u]; !rc && e < G->xadj[u + 1]; e++)
      rc = rta_graph_add_edge(g, u, G->adj[e], G->adjw[e]);
  if (rc) {
    rta_graph_destroy(g);
    return rc;
  }
  *out = g;
  return 0;
}

void lbsim_targets(int placement, const rta_hw_t *hw, int64_t n,
                   const int64_t *slots, int *target) {
  for (int64_t v = 0; v < n; v++)
    target[v] = (int)slots[v];
  /* lb.c's rule, from the engine (without memory the slots stay as mapped) */
  if (placement && n == rta_hw_nslots(hw))
    (void)map__repair_by_node(hw, n, target);
}

int lbsim_map(const policy__t *r, int k, const rta_hw_t *hw, rta_strategy_t s,
              unsigned seed, const int64_t *prev, int64_t *slots, int *target,
              rta_map_quality_t *q) {
  if (k < 0 || k >= r->ngraphs || r->graphs[k].n == 0 || !hw)
    return BALLAST_ENOTFOUND;
  rta_graph_t *g;
  int rc = build_graph(&r->graphs[k], &g);
  if (rc)
    return rc;
  /* remap_map in lb.c: the strategy, seed + k - 1, balrat, defaults else */
  rta_map_options_t o;
  rta_map_options_init(&o);
  o.seed = seed;
  if (r->balrat > 0)
    o.balrat = r->balrat;
  rc = rta_map_graph_ex(g, hw, s, prev, &o, slots, q);
  rta_graph_destroy(g);
  if (!rc && target)
    lbsim_targets(r->placement, hw, r->graphs[k].n, slots, target);
  return rc;
}

static int same(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

/* Differences between a decision and the recorded one, printed. */
static int cmp_decision(const rta_decision_t *a, const rta_decision_t *b, int v3,
                        FILE *out, int show) {
  int diff = a->remap != b->remap || a->reason != b->reason ||
             !same(a->imbalance, b->imbalance) || !same(a->max_time, b->max_time) ||
             !same(a->avg_time, b->avg_time) ||
             !same(a->predicted_gain, b->predicted_gain) ||
             !same(a->remap_cost, b->remap_cost) ||
             a->ignored_outliers != b->ignored_outliers || a->step != b->step ||
             (v3 && (a->slowest != b->slowest || a->persistent != b->persistent ||
                     a->noise != b->noise || a->warmup_end != b->warmup_end));
  if (diff && show)
    fprintf(out, "  decision at step %lld differs: replayed %s %s imbalance %a gain %a "
            "cost %a, recorded %s %s imbalance %a gain %a cost %a\n", b->step,
            a->remap ? "remap" : "keep", rta_reason_name(a->reason), a->imbalance,
            a->predicted_gain, a->remap_cost, b->remap ? "remap" : "keep",
            rta_reason_name(b->reason), b->imbalance, b->predicted_gain, b->remap_cost);
  return diff;
}

void lbsim_candidate(int ranks, int64_t n, const policy__vertex_t *v, const double *work,
                     const int64_t *prev, const int *target, rta_remap_candidate_t *c) {
  double *load = calloc((size_t)(ranks > 0 ? ranks : 1), sizeof *load);
  memset(c, 0, sizeof *c);
  for (int pass = 0; load && pass < 2; pass++) {
    /* lb.c's load_imbalance: single-processor tasks, in vertex order */
    double sum = 0, mx = 0;
    memset(load, 0, (size_t)ranks * sizeof *load);
    for (int64_t i = 0; i < n; i++) {
      int64_t q = pass ? target[i] : prev[i];
      double wk = work ? work[i] : v[i].work;
      if (v[i].nprocs == 1 && q >= 0 && q < ranks) {
        load[q] += wk;
        sum += wk;
      }
    }
    for (int q = 0; q < ranks; q++)
      mx = load[q] > mx ? load[q] : mx;
    *(pass ? &c->imbalance_after : &c->imbalance_now) = sum > 0 ? mx / (sum / ranks) : 1.0;
  }
  free(load);
  for (int64_t i = 0; i < n; i++)
    if (v[i].nprocs == 1 && target[i] != prev[i]) {
      c->tasks++;
      c->bytes += v[i].state;
    }
}

/* The candidate's figures from the replayed targets against the J line's. */
static int cmp_candidate(const policy__t *r, const policy__remap_t *rm,
                         const int64_t *prev, const int *target, FILE *out, int show) {
  const policy__graph_t *G = &r->graphs[rm->k];
  const rta_remap_candidate_t *a = &r->candidates[rm->cand].c;
  rta_remap_candidate_t c;
  lbsim_candidate(r->ranks, G->n, G->v, NULL, prev, target, &c);
  int diff = !same(c.imbalance_now, a->imbalance_now) ||
             !same(c.imbalance_after, a->imbalance_after) || c.tasks != a->tasks ||
             !same(c.bytes, a->bytes);
  if (diff && show)
    fprintf(out, "  remap %d: candidate replayed imbalance %a -> %a, %lld tasks, %a "
            "bytes; recorded %a -> %a, %lld tasks, %a bytes\n", rm->k, c.imbalance_now,
            c.imbalance_after, c.tasks, c.bytes, a->imbalance_now, a->imbalance_after,
            a->tasks, a->bytes);
  return diff;
}

/* Remap attempt k mapped again; differences in slots, targets (a warm
 * map's are the record's) and the candidate's figures. */
static long long cmp_mapping(const policy__t *r, const policy__remap_t *rm, FILE *out,
                             int show) {
  const policy__graph_t *G = rm->k < r->ngraphs ? &r->graphs[rm->k] : NULL;
  if (!G || G->n == 0 || !G->slot)
    return 0; /* the remap failed before it mapped: nothing to compare */
  int64_t *prev = malloc((size_t)G->n * sizeof *prev);
  int64_t *slots = malloc((size_t)G->n * sizeof *slots);
  int *target = malloc((size_t)G->n * sizeof *target);
  long long diff = 0;
  int rc = prev && slots && target ? 0 : BALLAST_ENOMEM;
  for (int64_t v = 0; !rc && v < G->n; v++)
    prev[v] = G->v[v].owner;
  if (!rc)
    rc = lbsim_map(r, rm->k, r->hw, r->strategy, rm->seed, prev, slots, target, NULL);
  for (int64_t v = 0; !rc && rm->warm && G->target && v < G->n; v++)
    target[v] = G->target[v];
  for (int64_t v = 0; !rc && v < G->n; v++) {
    int d = slots[v] != G->slot[v] || (G->target && target[v] != G->target[v]);
    if (d && show && diff < 5)
      fprintf(out, "  remap %d: task %s mapped to %d (target %d), recorded %d (target %d)\n",
              rm->k, r->keys[G->v[v].key], (int)slots[v], target[v], G->slot[v],
              G->target ? G->target[v] : -1);
    diff += d;
  }
  if (!rc && rm->cand >= 0)
    diff += cmp_candidate(r, rm, prev, target, out, show);
  free(prev);
  free(slots);
  free(target);
  if (rc && show)
    fprintf(out, "  remap %d: the engine failed: %s\n", rm->k, ballast_strerror(rc));
  return rc ? 1 : diff;
}

/* The policy's verdict on a candidate against the J line's. */
static int cmp_verdict(const rta_decision_t *a, const rta_decision_t *b, FILE *out,
                       int show) {
  int diff = a->remap != b->remap || a->reason != b->reason ||
             !same(a->predicted_gain, b->predicted_gain) ||
             !same(a->remap_cost, b->remap_cost) ||
             !same(a->predicted_imbalance, b->predicted_imbalance) ||
             a->tasks_to_move != b->tasks_to_move;
  if (diff && show)
    fprintf(out, "  candidate at step %lld judged differently: replayed %s %s gain %a "
            "cost %a, recorded %s %s gain %a cost %a\n", b->step,
            a->remap ? "remap" : "drop", rta_reason_name(a->reason), a->predicted_gain,
            a->remap_cost, b->remap ? "remap" : "drop", rta_reason_name(b->reason),
            b->predicted_gain, b->remap_cost);
  return diff;
}

long long lbsim_replay(const policy__t *r, FILE *out, int verbose) {
  if (!r->hw) {
    fprintf(out, "replay: the record has no hardware model\n");
    return BALLAST_EINVAL;
  }
  int decisions = r->ngraphs > 0 && r->graphs[0].n > 0; /* started at definition */
  rta_policy_t *p = NULL;
  int rc = rta_policy_create(&r->policy, r->ranks, &p);
  if (rc)
    return rc;
  long long diff = 0, ndec = 0, nmap = 0, ncand = 0;
  rta_decision_t d; /* the last decision, as lb.c hands it on */
  memset(&d, 0, sizeof d);
  for (int64_t i = 0; i < r->nevents && !rc; i++) {
    const policy__event_t *e = &r->events[i];
    /* version 3: the merged steps the policy was fed (S); version 2: every
     * rank's times (T), merged here */
    if (e->kind == POLICY__EV_STEP && decisions && r->version < 3)
      rc = rta_policy_observe(p, r->steps[e->index].times, r->ranks);
    else if (e->kind == POLICY__EV_MERGED && decisions)
      rc = rta_policy_observe_step(p, &r->merged[e->index].s);
    else if (e->kind == POLICY__EV_DECIDE && decisions) {
      const policy__decision_t *rd = &r->decisions[e->index];
      rc = rta_policy_decide(p, &d);
      /* lb.c's order: a failed assertion first, then a pending warm start */
      if (rd->forced && !d.remap)
        d.remap = 1;
      if (rd->forced == 2)
        d.reason = RTA_REASON_WARM_START;
      if (rd->forced == 3)
        d.reason = RTA_REASON_ESTIMATED;
      diff += cmp_decision(&d, &rd->d, r->version >= 3, out, verbose || diff < 5);
      ndec++;
    } else if (e->kind == POLICY__EV_CANDIDATE && decisions) {
      const policy__candidate_t *c = &r->candidates[e->index];
      if (c->judged)
        rc = rta_policy_confirm(p, &c->c, &d);
      else /* lb.c: a warm map that moves nothing is dropped unjudged */
        d.remap = 0;
      diff += cmp_verdict(&d, &c->d, out, verbose || diff < 5);
      ncand++;
    } else if (e->kind == POLICY__EV_REMAP) {
      diff += cmp_mapping(r, &r->remaps[e->index], out, verbose || diff < 5);
      nmap++;
    } else if (e->kind == POLICY__EV_REMAPPED && decisions)
      rc = rta_policy_remap_measured(p, &r->measures[e->index]);
  }
  rta_policy_destroy(p);
  if (rc)
    return rc;
  if (!decisions)
    fprintf(out, "replay: the record began after the definition (rta_lb_record): "
            "decisions not replayed\n");
  fprintf(out, "replay: %lld decisions, %lld candidate judgements and %lld mappings "
          "replayed: %s (%lld differences)\n", ndec, ncand, nmap,
          diff ? "DIFFERENT" : "bit-identical", diff);
  return diff;
}
