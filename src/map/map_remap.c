/* ballast's own remap candidates beside SCOTCH's graphRemap: the combined
 * cost (hop-bytes + migration per step), a greedy refinement of the
 * combined cost restricted to moves towards a vertex's old slot or its
 * neighbours', a diffusion of the load from the old mapping, the choice
 * among the candidates and its last refinements, multilevel
 * (map_refine.c), node level then slot level, on hop-bytes within a
 * migration budget (map__remap_best).
 * Measured in bench/zoltan (README). */
#include <stdlib.h>
#include <string.h>

#include "common/common_internal.h"
#include "map/map_remap.h"

double map__remap_cost(const rta_graph_t *g, const rta_hw_t *hw,
                       const int64_t *slot, const int64_t *prev, double steps,
                       double *hop, double *mig) {
  double h = 0, m = 0;
  for (int64_t v = 0; v < g->nvert; v++) {
    int sv = (int)slot[v];
    for (int64_t i = g->xadj[v]; i < g->xadj[v + 1]; i++) {
      int64_t u = g->adj[i];
      if (u > v && slot[u] != sv)
        h += g->adjw[i] * map__hw_dist(hw, sv, (int)slot[u]);
    }
    if (prev && prev[v] >= 0 && prev[v] != sv)
      m += g->state[v] * map__hw_dist(hw, (int)prev[v], sv);
  }
  m /= steps > 0 ? steps : 1;
  if (hop)
    *hop = h;
  if (mig)
    *mig = m;
  return h + m;
}

/* ---- refinement --------------------------------------------------------------- */

/* The slot distances (map_remap.h) the refinements and the diffusion ask
 * for by the million: a float table when small enough. 0 or BALLAST_ENOMEM:
 * falling back to map__hw_dist would not round the distances to float as
 * the table does, so this rank's result could differ from the others'. */
int map__dist_init(map__dist_t *d, const rta_hw_t *hw) {
  d->hw = hw;
  d->ns = hw->nslots;
  d->t = NULL;
  if (d->ns > MAP__DIST_TABLE_MAX)
    return 0;
  d->t = ballast__malloc((size_t)d->ns * d->ns * sizeof *d->t);
  if (!d->t)
    return BALLAST_ENOMEM;
  for (int a = 0; a < d->ns; a++)
    for (int b = 0; b < d->ns; b++)
      d->t[(size_t)a * d->ns + b] = (float)map__hw_dist(hw, a, b);
  return 0;
}

int map__refine(const rta_graph_t *g, const rta_hw_t *hw, const int64_t *prev,
                double steps, double balrat, int passes, int64_t *slot) {
  int ns = hw->nslots;
  double *load = ballast__calloc((size_t)ns, sizeof *load);
  int *cand = ballast__malloc(64 * sizeof *cand);
  map__dist_t dt;
  if (!load || !cand || map__dist_init(&dt, hw)) {
    free(load);
    free(cand);
    return BALLAST_ENOMEM;
  }
  double total = 0;
  for (int64_t v = 0; v < g->nvert; v++) {
    load[slot[v]] += g->work[v];
    total += g->work[v];
  }
  double cap = (1 + balrat) * total / ns;
  double inv = 1.0 / (steps > 0 ? steps : 1);
  for (int pass = 0; pass < passes; pass++) {
    int64_t moved = 0;
    for (int64_t v = 0; v < g->nvert; v++) {
      int a = (int)slot[v], p = prev && prev[v] >= 0 ? (int)prev[v] : -1;
      /* candidates: the old slot and the neighbours' slots */
      int nc = 0;
      if (p >= 0 && p != a)
        cand[nc++] = p;
      for (int64_t i = g->xadj[v]; i < g->xadj[v + 1] && nc < 64; i++) {
        int b = (int)slot[g->adj[i]], dup = b == a;
        for (int j = 0; j < nc && !dup; j++)
          dup = cand[j] == b;
        if (!dup)
          cand[nc++] = b;
      }
      if (!nc)
        continue;
      double m = g->state[v] * inv, base = 0;
      for (int64_t i = g->xadj[v]; i < g->xadj[v + 1]; i++)
        base += g->adjw[i] * map__dist(&dt, a, (int)slot[g->adj[i]]);
      if (p >= 0)
        base += m * map__dist(&dt, p, a);
      /* on an overloaded slot the cheapest move to a slot with room is
       * taken even when it costs */
      int best = -1, over = load[a] > cap;
      double bestc = over ? 1e300 : base - 1e-9 * (base > 0 ? base : 1);
      for (int j = 0; j < nc; j++) {
        int b = cand[j];
        if (load[b] + g->work[v] > cap)
          continue;
        double c = p >= 0 ? m * map__dist(&dt, p, b) : 0;
        for (int64_t i = g->xadj[v]; i < g->xadj[v + 1] && c < bestc; i++)
          c += g->adjw[i] * map__dist(&dt, b, (int)slot[g->adj[i]]);
        if (c < bestc) {
          bestc = c;
          best = b;
        }
      }
      if (best >= 0) {
        load[a] -= g->work[v];
        load[best] += g->work[v];
        slot[v] = best;
        moved++;
      }
    }
    if (moved == 0)
      break;
  }
  free(load);
  free(cand);
  free(dt.t);
  return 0;
}

/* ---- diffusion from the old mapping ----------------------------------------------- */

/* Cost of vertex v on slot b: its edges' bytes x distance to the
 * neighbours' slots, plus its migration (m per distance from p). */
static double vcost(const rta_graph_t *g, const map__dist_t *dt,
                    const int64_t *slot, int64_t v, int b, int p, double m) {
  double c = p >= 0 ? m * map__dist(dt, p, b) : 0;
  for (int64_t i = g->xadj[v]; i < g->xadj[v + 1]; i++)
    c += g->adjw[i] * map__dist(dt, b, (int)slot[g->adj[i]]);
  return c;
}

typedef struct {
  int64_t v;
  int to;
  double gain;
} dmove_t;

static int dmove_by_gain(const void *a, const void *b) {
  const dmove_t *x = a, *y = b;
  if (x->gain != y->gain)
    return x->gain < y->gain ? 1 : -1;
  return (x->v > y->v) - (x->v < y->v);
}

/* Index of pair (s, t) in the sorted quotient edge list, or -1. */
static int64_t qfind(const int64_t *key, int64_t nq, int64_t k) {
  int64_t lo = 0, hi = nq - 1;
  while (lo <= hi) {
    int64_t mid = (lo + hi) / 2;
    if (key[mid] == k)
      return mid;
    if (key[mid] < k)
      lo = mid + 1;
    else
      hi = mid - 1;
  }
  return -1;
}

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* Largest number of flow rounds (each moves at most one layer of boundary
 * vertices per pair of slots). */
#define DIFFUSE_ROUNDS 64
/* Largest number of diffusions (each from the loads the last one reached). */
#define DIFFUSE_ITERS 8

/* What one diffusion works with: the quotient graph of the slots (pairs
 * s < t joined by an edge, key s * ns + t, sorted; weight = bytes between
 * them, scaled to at most 1), the diffusion's potentials and flows, and the
 * moves proposed in a round. */
typedef struct {
  const rta_graph_t *g;
  const map__dist_t *dt;
  const int64_t *prev;
  double inv;          /* 1 / steps: the migration per step */
  int ns;              /* slots */
  int64_t *key, nq;    /* quotient pairs */
  double *qw, *flow;   /* nq: pair weight; work still to go from s to t */
  double *x, *r, *pp, *ap; /* ns: conjugate-gradient vectors */
  dmove_t *mv;         /* nvert: the moves proposed in a round */
} diff_t;

static void diff_free(diff_t *d) {
  free(d->x);
  free(d->r);
  free(d->pp);
  free(d->ap);
  free(d->key);
  free(d->qw);
  free(d->flow);
  free(d->mv);
}

/* The quotient pairs of \a slot, sorted and unique. */
static int diff_pairs(diff_t *d, const int64_t *slot) {
  const rta_graph_t *g = d->g;
  int64_t cap = 1024, ne = 0;
  d->key = ballast__malloc((size_t)cap * sizeof *d->key);
  if (!d->key)
    return BALLAST_ENOMEM;
  for (int64_t v = 0; v < g->nvert; v++)
    for (int64_t i = g->xadj[v]; i < g->xadj[v + 1]; i++) {
      int64_t s = slot[v], t = slot[g->adj[i]];
      if (s >= t)
        continue;
      if (ne == cap) {
        int64_t *k2 = ballast__realloc(d->key, (size_t)cap * 2 * sizeof *d->key);
        if (!k2)
          return BALLAST_ENOMEM;
        d->key = k2;
        cap *= 2;
      }
      d->key[ne++] = s * d->ns + t;
    }
  qsort(d->key, (size_t)ne, sizeof *d->key, cmp_i64);
  for (int64_t i = 0; i < ne; i++)
    if (!d->nq || d->key[d->nq - 1] != d->key[i])
      d->key[d->nq++] = d->key[i];
  return 0;
}

/* The pairs' weights: bytes between the two slots, over the largest. */
static void diff_weights(diff_t *d, const int64_t *slot) {
  const rta_graph_t *g = d->g;
  for (int64_t v = 0; v < g->nvert; v++)
    for (int64_t i = g->xadj[v]; i < g->xadj[v + 1]; i++) {
      int64_t s = slot[v], t = slot[g->adj[i]];
      if (s < t)
        d->qw[qfind(d->key, d->nq, s * d->ns + t)] += g->adjw[i];
    }
  double wmax = 0;
  for (int64_t q = 0; q < d->nq; q++)
    if (d->qw[q] > wmax)
      wmax = d->qw[q];
  for (int64_t q = 0; q < d->nq; q++)
    d->qw[q] = wmax > 0 ? d->qw[q] / wmax : 1;
}

/* Solves the Laplacian L x = load - avg by conjugate gradients (L is
 * singular but the right-hand side sums to zero on each connected
 * component), then flow[q] > 0: work to send from s to t (t to s when
 * negative). */
static void diff_solve(diff_t *d, const double *load, double avg) {
  int ns = d->ns;
  double *x = d->x, *r = d->r, *pp = d->pp, *ap = d->ap, rr = 0, bb = 0;
  for (int s = 0; s < ns; s++) {
    r[s] = pp[s] = load[s] - avg;
    rr += r[s] * r[s];
  }
  bb = rr;
  for (int it = 0; it < 4 * ns && rr > 1e-16 * bb; it++) {
    memset(ap, 0, (size_t)ns * sizeof *ap);
    for (int64_t q = 0; q < d->nq; q++) {
      int s = (int)(d->key[q] / ns), t = (int)(d->key[q] % ns);
      double f = d->qw[q] * (pp[s] - pp[t]);
      ap[s] += f;
      ap[t] -= f;
    }
    double pap = 0;
    for (int s = 0; s < ns; s++)
      pap += pp[s] * ap[s];
    if (!(pap > 0))
      break;
    double alpha = rr / pap, rr2 = 0;
    for (int s = 0; s < ns; s++) {
      x[s] += alpha * pp[s];
      r[s] -= alpha * ap[s];
      rr2 += r[s] * r[s];
    }
    for (int s = 0; s < ns; s++)
      pp[s] = r[s] + rr2 / rr * pp[s];
    rr = rr2;
  }
  for (int64_t q = 0; q < d->nq; q++) {
    int s = (int)(d->key[q] / ns), t = (int)(d->key[q] % ns);
    d->flow[q] = d->qw[q] * (x[s] - x[t]);
  }
}

/* Index of the pair of slots \a a and \a b (either order), or -1. */
static int64_t diff_pair(const diff_t *d, int a, int b) {
  return a < b ? qfind(d->key, d->nq, (int64_t)a * d->ns + b)
               : qfind(d->key, d->nq, (int64_t)b * d->ns + a);
}

/* Work still to go from slot a to slot b along pair q. */
static double diff_flow(const diff_t *d, int64_t q, int a, int b) {
  return a < b ? d->flow[q] : -d->flow[q];
}

/* The best move of boundary vertex \a v along a pair with flow left (-1:
 * none), its gain in \a gain. \a out: flow still to leave each slot. */
static int diff_best_move(const diff_t *d, const int64_t *slot,
                          const double *out, int64_t v, double *gain) {
  const rta_graph_t *g = d->g;
  int a = (int)slot[v], p = (int)d->prev[v], to = -1;
  if (out[a] < 0.5 * g->work[v])
    return -1;
  double m = g->state[v] * d->inv, base = -1, best = -1e300;
  for (int64_t i = g->xadj[v]; i < g->xadj[v + 1]; i++) {
    int b = (int)slot[g->adj[i]];
    if (b == a || b == to)
      continue;
    int64_t q = diff_pair(d, a, b);
    if (q < 0 || diff_flow(d, q, a, b) < 0.5 * g->work[v])
      continue;
    if (base < 0)
      base = vcost(g, d->dt, slot, v, a, p, m);
    double gn = base - vcost(g, d->dt, slot, v, b, p, m);
    if (gn > best) {
      best = gn;
      to = b;
    }
  }
  *gain = best;
  return to;
}

/* One round: every boundary vertex proposes its best move along a pair
 * with flow left; moves are applied best first while the pair's flow lasts.
 * Returns the number of moves applied. */
static int64_t diff_round(diff_t *d, double *load, int64_t *slot) {
  const rta_graph_t *g = d->g;
  double *out = d->r; /* reused: flow still to leave each slot */
  int64_t nm = 0, moved = 0;
  memset(out, 0, (size_t)d->ns * sizeof *out);
  for (int64_t q = 0; q < d->nq; q++) {
    int s = (int)(d->key[q] / d->ns), t = (int)(d->key[q] % d->ns);
    if (d->flow[q] > 0)
      out[s] += d->flow[q];
    else
      out[t] -= d->flow[q];
  }
  for (int64_t v = 0; v < g->nvert; v++) {
    double gain;
    int to = diff_best_move(d, slot, out, v, &gain);
    if (to >= 0) {
      d->mv[nm].v = v;
      d->mv[nm].to = to;
      d->mv[nm++].gain = gain;
    }
  }
  qsort(d->mv, (size_t)nm, sizeof *d->mv, dmove_by_gain);
  for (int64_t i = 0; i < nm; i++) {
    int64_t v = d->mv[i].v;
    int a = (int)slot[v], b = d->mv[i].to;
    int64_t q = diff_pair(d, a, b);
    if (diff_flow(d, q, a, b) < 0.5 * g->work[v])
      continue;
    d->flow[q] += a < b ? -g->work[v] : g->work[v];
    load[a] -= g->work[v];
    load[b] += g->work[v];
    slot[v] = b;
    moved++;
  }
  return nm ? moved : -1;
}

/* One diffusion: flows from the current loads, carried out layer by layer. */
static int diffuse_once(const rta_graph_t *g, const rta_hw_t *hw,
                        const map__dist_t *dt, const int64_t *prev, double inv,
                        double *load, double avg, int64_t *slot) {
  int64_t n = g->nvert;
  int ns = hw->nslots, rc;
  diff_t d = {.g = g, .dt = dt, .prev = prev, .inv = inv, .ns = ns};
  d.x = ballast__calloc((size_t)ns, sizeof *d.x);
  d.r = ballast__calloc((size_t)ns, sizeof *d.r);
  d.pp = ballast__calloc((size_t)ns, sizeof *d.pp);
  d.ap = ballast__calloc((size_t)ns, sizeof *d.ap);
  if (!d.x || !d.r || !d.pp || !d.ap) {
    diff_free(&d);
    return BALLAST_ENOMEM;
  }
  if ((rc = diff_pairs(&d, slot))) {
    diff_free(&d);
    return rc;
  }
  d.qw = ballast__calloc((size_t)(d.nq ? d.nq : 1), sizeof *d.qw);
  d.flow = ballast__calloc((size_t)(d.nq ? d.nq : 1), sizeof *d.flow);
  d.mv = ballast__malloc((size_t)(n ? n : 1) * sizeof *d.mv);
  if (!d.qw || !d.flow || !d.mv) {
    diff_free(&d);
    return BALLAST_ENOMEM;
  }
  diff_weights(&d, slot);
  diff_solve(&d, load, avg);
  for (int round = 0; round < DIFFUSE_ROUNDS; round++) {
    int64_t moved = diff_round(&d, load, slot);
    /* nothing proposed; or the tail of a diffusion, a handful of moves per
     * round: stop it */
    if (moved < 0 || moved <= n / 10000)
      break;
  }
  diff_free(&d);
  return 0;
}

int map__diffuse(const rta_graph_t *g, const rta_hw_t *hw, const int64_t *prev,
                 double steps, double balrat, int64_t *slot) {
  int64_t n = g->nvert;
  int ns = hw->nslots, rc = 0;
  double *load = ballast__calloc((size_t)ns, sizeof *load);
  if (!load)
    return BALLAST_ENOMEM;
  /* start from the old places; new vertices go to a neighbour's */
  for (int64_t v = 0; v < n; v++)
    slot[v] = prev[v];
  for (int pass = 0; pass < 2; pass++)
    for (int64_t v = 0; v < n; v++)
      if (slot[v] < 0)
        for (int64_t i = g->xadj[v]; i < g->xadj[v + 1]; i++)
          if (slot[g->adj[i]] >= 0) {
            slot[v] = slot[g->adj[i]];
            break;
          }
  for (int64_t v = 0; v < n; v++)
    if (slot[v] < 0)
      slot[v] = v % ns;
  double total = 0;
  for (int64_t v = 0; v < n; v++) {
    load[slot[v]] += g->work[v];
    total += g->work[v];
  }
  double avg = total / ns, inv = 1.0 / (steps > 0 ? steps : 1);
  map__dist_t dt;
  if (map__dist_init(&dt, hw)) {
    free(load);
    return BALLAST_ENOMEM;
  }
  /* the flows of one diffusion can get stuck (a slot no longer touches
   * the slot it should feed): diffuse again from the loads reached */
  for (int it = 0; it < DIFFUSE_ITERS && !rc; it++) {
    double mx = 0;
    for (int s = 0; s < ns; s++)
      if (load[s] > mx)
        mx = load[s];
    if (mx <= (1 + balrat) * avg)
      break;
    rc = diffuse_once(g, hw, &dt, prev, inv, load, avg, slot);
  }
  free(load);
  free(dt.t);
  return rc;
}

/* ---- the choice ------------------------------------------------------------------ */

/* Greedy refinement sweeps applied to each remap candidate. */
#define REFINE_PASSES 4

/* Largest slot work of a mapping, over the average. */
static double max_over_avg(const rta_graph_t *g, const rta_hw_t *hw,
                           const int64_t *slot, double *load) {
  double total = 0, mx = 0;
  memset(load, 0, (size_t)hw->nslots * sizeof *load);
  for (int64_t v = 0; v < g->nvert; v++) {
    load[slot[v]] += g->work[v];
    total += g->work[v];
  }
  for (int s = 0; s < hw->nslots; s++)
    if (load[s] > mx)
      mx = load[s];
  return total > 0 ? mx * hw->nslots / total : 1.0;
}

/* Tasks and state bytes that \a slot moves away from \a prev. */
static void migration(const rta_graph_t *g, const int64_t *prev,
                      const int64_t *slot, int64_t *tasks, double *bytes) {
  *tasks = 0;
  *bytes = 0;
  for (int64_t v = 0; v < g->nvert; v++)
    if (prev[v] >= 0 && prev[v] != slot[v]) {
      ++*tasks;
      *bytes += g->state[v];
    }
}

/* The migration weights of within_budget()'s slot-level refinement: steps
 * x these, every move priced alike. Within the budget the cost is then
 * hop-bytes, and a move must gain at least its state x the largest
 * distance / (steps x weight). At x3000 moves are all but free and the
 * refinement spends the whole budget; at x300 it stops where a move gains
 * less than that, which on bench/zoltan's MD case gives 0.5% fewer
 * hop-bytes, 4% fewer tasks and 6% fewer bytes moved, and on the 512-core
 * stencil 9% fewer tasks and bytes for +3% hop-bytes (ballast's combined
 * cost at 10 steps: +1.6%, -4.4%). x1000, then x3000, only finish a
 * rebalance that x300 leaves above the bound (slot_level()). Measured in
 * bench/README.md (zoltan). */
#define FLAT_MULT_LOW 300
#define FLAT_MULT_MID 1000
#define FLAT_MULT 3000

/* The slot level of within_budget() from the node level's result \a trial
 * (a copy in \a nodes). x300 first; when that leaves a core above \a bal,
 * the node level's result again, its cores rebalanced inside their nodes
 * (map__rebalance_nodes(): the tasks the node level sent back to their old
 * slot overfill it, 395 cores on bench/zoltan's 2,048-core stencil, up to
 * 2.6x the average), x300 again, then x1000 and x3000 while a core is
 * still above. On that case x300 alone leaves cores at 1.8x the average
 * (their neighbours' cores full, no single move pays) and x3000 from there
 * rebalanced them by spending the budget: 76,959 tasks moved (Zoltan PHG:
 * 76,782) for 17.15M hop-bytes; from the rebalanced start, x300 leaves 3
 * cores above the bound and x1000 finishes: 73,604 tasks, 17.80M
 * hop-bytes (x3000 instead of x1000: 76,382, 17.21M). */
static int slot_level(const rta_graph_t *g, const rta_hw_t *hw,
                      const int64_t *prev, double steps, double balrat,
                      double bal, const map__budget_t *bud,
                      const int64_t *nodes, int64_t *trial, double *load) {
  int rc = map__refine_ml(g, hw, prev, steps * FLAT_MULT_LOW, balrat, 1, bud,
                          trial);
  if (rc || max_over_avg(g, hw, trial, load) <= bal + 1e-9)
    return rc;
  memcpy(trial, nodes, (size_t)g->nvert * sizeof *trial);
  rc = map__rebalance_nodes(g, hw, prev, steps * FLAT_MULT_LOW, balrat, bud,
                            trial);
  if (!rc)
    rc = map__refine_ml(g, hw, prev, steps * FLAT_MULT_LOW, balrat, 1, bud,
                        trial);
  if (rc || max_over_avg(g, hw, trial, load) <= bal + 1e-9)
    return rc;
  rc = map__refine_ml(g, hw, prev, steps * FLAT_MULT_MID, balrat, 1, bud,
                      trial);
  if (rc || max_over_avg(g, hw, trial, load) <= bal + 1e-9)
    return rc;
  return map__refine_ml(g, hw, prev, steps * FLAT_MULT, balrat, 1, bud, trial);
}

/* Lower hop-bytes within a migration budget. The combined cost prices a
 * move inside a socket 16x below one between nodes, so its refinement keeps
 * the old node boundaries and rebalances inside nodes; it stops in a local
 * minimum where no single move pays. From the winner \a slot: a node-level
 * refinement (map__refine_nodes(): hop-bytes between nodes weigh most, and
 * a node boundary rarely moves one task at a time), then a slot-level one
 * that rebalances the cores and lowers hop-bytes inside and between nodes
 * (slot_level()), both with every move priced alike and no move taking the
 * migration above \a bud (tasks and bytes). The result replaces the winner
 * when its hop-bytes are lower, it is within the budget and no more
 * overloaded than the winner (or than \a lim). \a trial: scratch (nvert);
 * \a load: scratch (nslots). */
static int within_budget(const rta_graph_t *g, const rta_hw_t *hw,
                         const int64_t *prev, double steps, double balrat,
                         double lim, map__budget_t bud, int64_t *slot,
                         int64_t *trial, double *load) {
  double h0, h1, bal = max_over_avg(g, hw, slot, load);
  if (bal < lim)
    bal = lim;
  bud.bytes *= 1 + 1e-12; /* the refinement sums in another order */
  size_t bytes = (size_t)g->nvert * sizeof *slot;
  int64_t *nodes = ballast__malloc(bytes ? bytes : sizeof *nodes);
  if (!nodes)
    return BALLAST_ENOMEM;
  memcpy(trial, slot, bytes);
  int rc = map__refine_nodes(g, hw, prev, steps, balrat, &bud, trial);
  if (!rc) {
    memcpy(nodes, trial, bytes);
    rc = slot_level(g, hw, prev, steps, balrat, bal, &bud, nodes, trial, load);
  }
  free(nodes);
  if (rc)
    return rc;
  int64_t t;
  double b;
  migration(g, prev, trial, &t, &b);
  map__remap_cost(g, hw, slot, prev, steps, &h0, NULL);
  map__remap_cost(g, hw, trial, prev, steps, &h1, NULL);
  if (h1 < h0 && t <= bud.tasks && b <= bud.bytes &&
      max_over_avg(g, hw, trial, load) <= bal + 1e-9)
    memcpy(slot, trial, bytes);
  return 0;
}

int map__remap_best(const rta_graph_t *g, const rta_hw_t *hw,
                    const int64_t *prev, double steps, double balrat,
                    int64_t *slot) {
  int64_t n = g->nvert;
  int64_t *diff = ballast__malloc((size_t)(n ? n : 1) * sizeof *diff);
  double *load = ballast__malloc((size_t)hw->nslots * sizeof *load);
  int rc = 0;
  if (!diff || !load) {
    rc = BALLAST_ENOMEM;
    goto done;
  }
  /* the budget of the last refinements: the migration of SCOTCH's remap
   * (the reference remapper, at the same migration weight), or the
   * winner's when larger */
  map__budget_t bud;
  migration(g, prev, slot, &bud.tasks, &bud.bytes);
  if ((rc = map__diffuse(g, hw, prev, steps, balrat, diff)))
    goto done;
  double lim = 1 + balrat, best = 0, bestbal = 0;
  int64_t *all[2] = {slot, diff};
  int pick = -1;
  for (int k = 0; k < 2; k++) {
    if ((rc = map__refine(g, hw, prev, steps, balrat, REFINE_PASSES, all[k])))
      goto done;
    double ck = map__remap_cost(g, hw, all[k], prev, steps, NULL, NULL);
    double bk = max_over_avg(g, hw, all[k], load);
    int ok = bk <= lim + 1e-9, best_ok = pick >= 0 && bestbal <= lim + 1e-9;
    /* balanced beats unbalanced; then the cheaper; unbalanced: the
     * better balanced */
    if (pick < 0 || (ok && (!best_ok || ck < best)) ||
        (!ok && !best_ok && bk < bestbal)) {
      pick = k;
      best = ck;
      bestbal = bk;
    }
  }
  if (pick > 0)
    memcpy(slot, all[pick], (size_t)n * sizeof *slot);
  int64_t wt;
  double wb;
  migration(g, prev, slot, &wt, &wb);
  bud.tasks = wt > bud.tasks ? wt : bud.tasks;
  bud.bytes = wb > bud.bytes ? wb : bud.bytes;
  /* diff is scratch from here */
  rc = within_budget(g, hw, prev, steps, balrat, lim, bud, slot, diff, load);
done:
  free(diff);
  free(load);
  return rc;
}
