/* The prediction model of ballast-lbsim.
 *
 * Step by step over the recorded steps:
 *  - every task costs what the record measured for it in that step (W
 *    lines; on steps the record did not sample, its last measured cost; a
 *    task the record never measured, its work in the first graph);
 *  - a set-up step, one before the record's first measured cost (the call
 *    right after rta_lb_create: no task has run), takes the time the record
 *    measured for it and feeds the policy no task time; it is left out of
 *    the fit below. Its tasks' work is the application's estimates, not
 *    seconds;
 *  - a rank's task time is the sum of its tasks' costs; its communication
 *    time, for every edge of the task graph in force that leaves the rank,
 *    latency + bytes / bandwidth of the link (the hardware model's measured
 *    links between nodes, else the settings' intra- and inter-node figures);
 *  - the step takes scale x (the slowest rank's task + communication time)
 *    + const: what the application does besides the tasks (work outside
 *    them, its own waits) fitted on the record by least squares of rank 0's
 *    wall time against that model of the recorded mapping, step by step. When
 *    the slowest rank's time varies too little over the record to tell a
 *    scale from a constant (relative spread below 5%), or the fit gives a
 *    scale below 1, the scale is 1 and the constant the mean difference (an
 *    additive background). --background add|scale forces one form (scale:
 *    proportional, no constant). With the recorded settings the prediction
 *    therefore differs from the measured time by what the model gets wrong
 *    in the tasks' part (costs, decisions, mappings, communication);
 *    compute_per_step compares that part alone;
 *  - the policy (the settings') is fed the ranks' task times (or the step
 *    time when the record's step time is wall) and decides; a remap maps the
 *    task graph in force, its vertices weighted by each task's mean cost over
 *    the cost model's window (10 steps; at a step where the record remapped
 *    too, the weights the run's cost model gave), with the settings'
 *    strategy from the current slots, and costs the record's mean mapping time plus the bytes
 *    it moves at the record's migration rate (both measured by the record's
 *    remaps; without any, the mapping time lbsim measures and the intra-node
 *    bandwidth); the candidate is judged first, as lb.c judges it
 *    (rta_policy_confirm on the imbalance of its own mapping's loads and the
 *    tasks it moves): a dropped candidate costs its mapping time only and
 *    starts the policy's back-off;
 *  - a warm start the record carried out (R ... warm 1) is adopted at the
 *    same step with the recorded targets and cost (sim_warm);
 *  - the set-up remap from the tasks' estimates (balance_estimates: a D
 *    line with forced 3, reason "estimated") is made again at the same step
 *    under the automatic policy, as lb.c makes it: the graph recorded then,
 *    weighted by its estimates, mapped with the settings' strategy; a map
 *    that moves nothing is dropped unjudged.
 */
#include "lbsim.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ballast/common.h>

#define COST_WINDOW 10

typedef struct {
  const policy__t *r;
  const lbsim_settings_t *s;
  int ns;               /* slots (ranks) simulated */
  int64_t nk;           /* keys */
  double *cost;         /* per key: cost this step */
  double *hist;         /* per key: COST_WINDOW last costs (ring) */
  int *nhist;
  int *slot;            /* per key: slot, -1 when not a task */
  double *task, *comm;  /* per slot */
  int g;                /* graph in force */
  int64_t *row_of;      /* per step index: first cost row (sorted), -1 none */
  int64_t *order;       /* cost rows sorted by step */
  double t_map, move_rate; /* the record's mean mapping seconds, seconds per byte */
  const policy__remap_t *warm; /* the record's committed warm-start remap, or NULL */
  long long first_cost; /* the first step with a measured cost (LLONG_MIN: none) */
  unsigned char *est;   /* per step index: 1 when the record made the set-up
                           remap from the estimates there (D ... forced 3) */
} sim_t;

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Latency and bandwidth between two slots. */
static void link_of(const sim_t *m, int a, int b, double *lat, double *bw) {
  const rta_hw_t *hw = m->s->hw;
  int na = rta_hw_slot_node(hw, a), nb = rta_hw_slot_node(hw, b);
  *lat = na == nb ? m->s->intra_lat : m->s->inter_lat;
  *bw = na == nb ? m->s->intra_bw : m->s->inter_bw;
  double l, w;
  if (na != nb && rta_hw_link(hw, na, nb, &l, &w) == 0 && w > 0 && isfinite(w)) {
    *lat = l;
    *bw = w;
  }
}

/* Communication time of every slot for the graph in force and the slots. */
static void model_comm(sim_t *m) {
  memset(m->comm, 0, (size_t)m->ns * sizeof *m->comm);
  const policy__graph_t *G = &m->r->graphs[m->g];
  for (int64_t u = 0; u < G->n; u++)
    for (int64_t e = G->xadj[u]; e < G->xadj[u + 1]; e++) {
      int a = m->slot[G->v[u].key], b = m->slot[G->v[G->adj[e]].key];
      if (a < 0 || b < 0 || a == b)
        continue;
      double lat, bw;
      link_of(m, a, b, &lat, &bw);
      /* the merged bytes of both directions: each end sends about half */
      double t = lat + 0.5 * G->adjw[e] / bw;
      m->comm[a] += t;
      m->comm[b] += t;
    }
}

/* The graph in force at \a step: the last recorded one built by then. */
static int graph_at(const policy__t *r, long long step) {
  int best = -1;
  for (int g = 0; g < r->ngraphs; g++)
    if (r->graphs[g].n > 0 && (best < 0 || r->graphs[g].step <= step))
      best = g;
  return best;
}

typedef struct {
  long long step;
  int64_t i;
} rowkey_t;

static int cmp_row(const void *a, const void *b) {
  const rowkey_t *x = a, *y = b;
  if (x->step != y->step)
    return (x->step > y->step) - (x->step < y->step);
  return (x->i > y->i) - (x->i < y->i);
}

/* The cost rows in step order (a rank's rows come together in the file). */
static int sort_rows(const policy__t *r, int64_t *order) {
  rowkey_t *k = malloc((size_t)(r->ncostrows ? r->ncostrows : 1) * sizeof *k);
  if (!k)
    return BALLAST_ENOMEM;
  for (int64_t i = 0; i < r->ncostrows; i++) {
    k[i].step = r->costrows[i].step;
    k[i].i = i;
  }
  qsort(k, (size_t)r->ncostrows, sizeof *k, cmp_row);
  for (int64_t i = 0; i < r->ncostrows; i++)
    order[i] = k[i].i;
  free(k);
  return 0;
}

/* Costs of step index \a j into m->cost (and the window history). */
static void apply_costs(sim_t *m, int64_t *next, long long step) {
  const policy__t *r = m->r;
  while (*next < r->ncostrows && r->costrows[m->order[*next]].step < step)
    (*next)++;
  for (; *next < r->ncostrows && r->costrows[m->order[*next]].step == step; (*next)++) {
    const policy__costs_t *c = &r->costrows[m->order[*next]];
    for (int64_t i = 0; i < c->n; i++)
      m->cost[c->key[i]] = c->cost[i];
  }
  for (int64_t k = 0; k < m->nk; k++) {
    m->hist[k * COST_WINDOW + m->nhist[k] % COST_WINDOW] = m->cost[k];
    m->nhist[k]++;
  }
}

static double mean_cost(const sim_t *m, int64_t k) {
  int n = m->nhist[k] < COST_WINDOW ? m->nhist[k] : COST_WINDOW;
  double s = 0;
  for (int i = 0; i < n; i++)
    s += m->hist[k * COST_WINDOW + i];
  return n ? s / n : m->cost[k];
}

static void sim_free(sim_t *m) {
  free(m->cost);
  free(m->hist);
  free(m->nhist);
  free(m->slot);
  free(m->task);
  free(m->comm);
  free(m->order);
  free(m->est);
}

/* The set-up steps: the first measured cost's step, and the steps at which
 * the record made the set-up remap from the estimates (the D line after a
 * step's T line). */
static void setup_steps(const policy__t *r, sim_t *m) {
  m->first_cost = LLONG_MIN;
  for (int64_t i = 0; i < r->ncostrows; i++)
    if (m->first_cost == LLONG_MIN || r->costrows[i].step < m->first_cost)
      m->first_cost = r->costrows[i].step;
  int64_t last = -1;
  for (int64_t i = 0; i < r->nevents; i++) {
    const policy__event_t *e = &r->events[i];
    if (e->kind == POLICY__EV_STEP)
      last = e->index;
    else if (e->kind == POLICY__EV_DECIDE && last >= 0 && last < r->nsteps &&
             r->decisions[e->index].forced == 3)
      m->est[last] = 1;
  }
}

/* Whether step index \a j is a set-up step: before any measured cost. */
static int setup_step(const sim_t *m, int64_t j) {
  return m->first_cost != LLONG_MIN && m->r->steps[j].step < m->first_cost;
}

/* Arrays, initial costs and slots, the record's remap rates. */
static int sim_init(sim_t *m, const policy__t *r, const lbsim_settings_t *s) {
  memset(m, 0, sizeof *m);
  m->r = r;
  m->s = s;
  m->ns = rta_hw_nslots(s->hw);
  m->nk = r->nkeys;
  m->g = graph_at(r, 0);
  size_t nk = (size_t)(m->nk ? m->nk : 1);
  m->cost = calloc(nk, sizeof *m->cost);
  m->hist = calloc(nk * COST_WINDOW, sizeof *m->hist);
  m->nhist = calloc(nk, sizeof *m->nhist);
  m->slot = malloc(nk * sizeof *m->slot);
  m->task = calloc((size_t)m->ns, sizeof *m->task);
  m->comm = calloc((size_t)m->ns, sizeof *m->comm);
  m->order = malloc((size_t)(r->ncostrows ? r->ncostrows : 1) * sizeof *m->order);
  m->est = calloc((size_t)(r->nsteps ? r->nsteps : 1), 1);
  if (!m->cost || !m->hist || !m->nhist || !m->slot || !m->task || !m->comm || !m->order ||
      !m->est)
    return BALLAST_ENOMEM;
  setup_steps(r, m);
  if (m->g < 0)
    return BALLAST_ENOTFOUND;
  if (sort_rows(r, m->order))
    return BALLAST_ENOMEM;
  for (int64_t k = 0; k < m->nk; k++)
    m->slot[k] = -1;
  const policy__graph_t *G = &r->graphs[m->g];
  for (int64_t v = 0; v < G->n; v++) {
    int o = G->v[v].owner;
    /* another machine: the record's ranks spread over its slots in blocks */
    if (s->placement_free || r->ranks != m->ns)
      o = (int)((int64_t)v * m->ns / G->n);
    m->slot[G->v[v].key] = o;
    m->cost[G->v[v].key] = G->v[v].work;
  }
  double tm = 0, tv = 0, b = 0;
  int n = 0;
  for (int64_t i = 0; i < r->nremaps; i++)
    if (r->remaps[i].committed) {
      tm += r->remaps[i].t_map;
      tv += r->remaps[i].t_move;
      b += r->remaps[i].bytes;
      n++;
    }
  m->t_map = n ? tm / n : -1;
  for (int64_t i = 0; i < r->nremaps && !m->warm; i++)
    if (r->remaps[i].warm && r->remaps[i].committed)
      m->warm = &r->remaps[i];
  m->move_rate = b > 0 ? tv / b : 1.0 / s->intra_bw;
  model_comm(m);
  return 0;
}

/* A simulated remap after \a step: the graph in force weighted by the
 * tasks' mean costs, mapped from the current slots, then judged as lb.c
 * judges a candidate (rta_policy_confirm on its own predicted moves and
 * imbalance): a dropped one changes no slot, its mapping time is paid. The
 * policy is told what a remap carried out cost. */
static int sim_remap(sim_t *m, int k, long long step, lbsim_result_t *res,
                     rta_policy_t *p, rta_decision_t *d) {
  const policy__t *r = m->r;
  int g = graph_at(r, step);
  const policy__graph_t *G = &r->graphs[g];
  rta_graph_t *eg = NULL;
  int64_t *prev = malloc((size_t)G->n * sizeof *prev);
  int64_t *slots = malloc((size_t)G->n * sizeof *slots);
  int *target = malloc((size_t)G->n * sizeof *target);
  double *work = malloc((size_t)G->n * sizeof *work);
  int rc = prev && slots && target && work ? rta_graph_create(G->n, &eg) : BALLAST_ENOMEM;
  /* a remap at a step the record remapped too maps with the weights the
   * run's cost model gave then */
  int recorded = G->step == step;
  for (int64_t v = 0; !rc && v < G->n; v++) {
    prev[v] = m->slot[G->v[v].key];
    work[v] = recorded ? G->v[v].work : mean_cost(m, G->v[v].key);
    rc = rta_graph_set_vertex(eg, v, work[v], G->v[v].state);
  }
  for (int64_t u = 0; !rc && u < G->n; u++)
    for (int64_t e = G->xadj[u]; !rc && e < G->xadj[u + 1]; e++)
      rc = rta_graph_add_edge(eg, u, G->adj[e], G->adjw[e]);
  rta_map_options_t o;
  rta_map_options_init(&o);
  o.seed = r->seed + (unsigned)(k - 1);
  if (r->balrat > 0)
    o.balrat = r->balrat;
  double t0 = now();
  if (!rc)
    rc = rta_map_graph_ex(eg, m->s->hw, m->s->strategy, prev, &o, slots, NULL);
  double t_map = now() - t0;
  rta_remap_candidate_t c;
  if (!rc) {
    lbsim_targets(r->placement, m->s->hw, G->n, slots, target);
    lbsim_candidate(m->ns, G->n, G->v, work, prev, target, &c);
    c.mapping_seconds = m->t_map >= 0 ? m->t_map : t_map;
    if (d->reason == RTA_REASON_ESTIMATED && c.tasks == 0)
      d->remap = 0; /* lb.c: a set-up map that moves nothing, dropped unjudged */
    else
      rc = rta_policy_confirm(p, &c, d);
  }
  if (!rc && !d->remap) {
    res->dropped++;
    res->remap_seconds += c.mapping_seconds;
  } else if (!rc) {
    for (int64_t v = 0; v < G->n; v++)
      m->slot[G->v[v].key] = target[v];
    rta_remap_measure_t cost = {c.mapping_seconds, c.bytes * m->move_rate, c.bytes, 1};
    res->remaps++;
    res->tasks_moved += (double)c.tasks;
    res->bytes_moved += c.bytes;
    res->remap_seconds += cost.mapping + cost.migration;
    m->g = g;
    model_comm(m);
    rc = rta_policy_remap_measured(p, &cost);
  }
  rta_graph_destroy(eg);
  free(work);
  free(prev);
  free(slots);
  free(target);
  return rc;
}

/* The step model (scale, const) fitted on the record; see the top. */
static void fit_steps(const policy__t *r, const lbsim_settings_t *s, double *k,
                      double *c) {
  *k = 1;
  *c = 0;
  lbsim_settings_t rs = *s;
  rs.hw = r->hw;
  rs.placement_free = 0;
  sim_t m;
  if (!r->hw || rta_hw_nslots(r->hw) != r->ranks)
    return;
  if (sim_init(&m, r, &rs)) {
    sim_free(&m);
    return;
  }
  double sx = 0, sy = 0, sxx = 0, sxy = 0, n = 0;
  for (int64_t i = 0; i < r->nevents; i++) {
    const policy__event_t *e = &r->events[i];
    if (e->kind == POLICY__EV_STEP && !setup_step(&m, e->index)) {
      const policy__step_t *st = &r->steps[e->index];
      double x = 0;
      for (int q = 0; q < r->ranks; q++)
        x = fmax(x, st->times[q] + m.comm[q]);
      sx += x;
      sy += st->wall;
      sxx += x * x;
      sxy += x * st->wall;
      n++;
    } else if (e->kind == POLICY__EV_REMAP && r->remaps[e->index].committed) {
      const policy__graph_t *G = &r->graphs[r->remaps[e->index].k];
      for (int64_t v = 0; G->target && v < G->n; v++)
        m.slot[G->v[v].key] = G->target[v];
      m.g = r->remaps[e->index].k;
      model_comm(&m);
    }
  }
  sim_free(&m);
  if (n == 0)
    return;
  double mx = sx / n, my = sy / n, var = sxx / n - mx * mx;
  double spread = mx > 0 && var > 0 ? sqrt(var) / mx : 0;
  if (s->background == LBSIM_BG_SCALE && mx > 0) {
    *k = my / mx;
    return;
  }
  if (s->background == LBSIM_BG_FIT && spread >= 0.05) {
    double b = (sxy / n - mx * my) / var;
    if (b >= 1) {
      *k = b;
      *c = my - b * mx;
      return;
    }
  }
  *c = my - mx; /* additive: the mean time besides the tasks */
}

/* The warm start: an input of the run, not a choice of its policy. At the
 * step the record adopted the earlier run's map, when the policy does not
 * remap itself (lb.c's order), the simulation adopts it too (on the
 * record's machine and placement; elsewhere the slots stay) at the
 * recorded cost, and tells the policy what the record told it. */
static int sim_warm(sim_t *m, rta_policy_t *p, lbsim_result_t *res) {
  const policy__remap_t *w = m->warm;
  const policy__graph_t *G = &m->r->graphs[w->k];
  if (G->target && m->r->ranks == m->ns && !m->s->placement_free) {
    for (int64_t v = 0; v < G->n; v++)
      m->slot[G->v[v].key] = G->target[v];
    m->g = w->k;
    model_comm(m);
  }
  rta_remap_measure_t cost = {w->t_map, w->t_move, w->bytes, 1};
  res->remaps++;
  res->tasks_moved += w->tasks;
  res->bytes_moved += w->bytes;
  res->remap_seconds += w->t_map + w->t_move;
  return rta_policy_remap_measured(p, &cost);
}

/* One step (index \a j) of the simulation: task times, the step's time, the
 * policy; a set-up step runs no task and takes its recorded time. */
static int sim_step(sim_t *m, rta_policy_t *p, int64_t j, lbsim_result_t *res,
                    double *imb_sum) {
  long long step = m->r->steps[j].step;
  int setup = setup_step(m, j);
  memset(m->task, 0, (size_t)m->ns * sizeof *m->task);
  for (int64_t k = 0; !setup && k < m->nk; k++)
    if (m->slot[k] >= 0 && m->slot[k] < m->ns)
      m->task[m->slot[k]] += m->cost[k];
  double mx = 0, sum = 0, worst = 0, wc = 0;
  for (int q = 0; q < m->ns; q++) {
    mx = fmax(mx, m->task[q]);
    sum += m->task[q];
    if (m->task[q] + m->comm[q] > worst) {
      worst = m->task[q] + m->comm[q];
      wc = m->comm[q];
    }
  }
  *imb_sum += sum > 0 ? mx / (sum / m->ns) : 1.0;
  res->compute_per_step += mx;
  res->comm_per_step += setup ? 0 : wc; /* a set-up step sent nothing */
  double t = setup ? m->r->steps[j].wall : res->scale * worst + res->background;
  res->time_per_step += t;
  if (m->r->step_time == 1)
    for (int q = 0; q < m->ns; q++)
      m->task[q] = t;
  int rc = rta_policy_observe(p, m->task, m->ns);
  rta_decision_t d;
  if (!rc)
    rc = rta_policy_decide(p, &d);
  if (!rc && d.remap)
    rc = sim_remap(m, res->remaps + 1, step, res, p, &d);
  else if (!rc && m->warm && m->warm->step == step)
    rc = sim_warm(m, p, res);
  else if (!rc && m->est[j] && m->s->policy.mode == RTA_POLICY_AUTO) {
    /* lb.c: balance from the estimates, forced under the automatic policy */
    d.remap = 1;
    d.reason = RTA_REASON_ESTIMATED;
    rc = sim_remap(m, res->remaps + 1, step, res, p, &d);
  }
  return rc;
}

int lbsim_simulate(const policy__t *r, const lbsim_settings_t *s, lbsim_result_t *res) {
  memset(res, 0, sizeof *res);
  res->name = rta_strategy_name(s->strategy);
  sim_t m;
  int rc = sim_init(&m, r, s);
  rta_policy_t *p = NULL;
  if (!rc)
    rc = rta_policy_create(&s->policy, m.ns, &p);
  if (!rc)
    fit_steps(r, s, &res->scale, &res->background);
  double imb = 0, imb_last = 0;
  int64_t next = 0, last_from = r->nsteps - s->policy.window;
  for (int64_t j = 0; !rc && j < r->nsteps; j++) {
    long long step = r->steps[j].step;
    if (!setup_step(&m, j)) /* a set-up step's tasks have not run */
      apply_costs(&m, &next, step);
    int g = graph_at(r, step); /* newer measured bytes once recorded */
    if (g != m.g && r->graphs[g].step <= step) {
      m.g = g;
      model_comm(&m);
    }
    double before = imb;
    rc = sim_step(&m, p, j, res, &imb);
    if (j >= last_from)
      imb_last += imb - before;
    res->steps++;
  }
  if (!rc && res->steps > 0) {
    double n = (double)res->steps;
    res->time_per_step = (res->time_per_step + res->remap_seconds) / n;
    res->compute_per_step /= n;
    res->comm_per_step /= n;
    res->imbalance = imb / n;
    int64_t nl = r->nsteps < s->policy.window ? r->nsteps : s->policy.window;
    res->imbalance_last = imb_last / (double)nl;
  }
  rta_policy_destroy(p);
  sim_free(&m);
  return rc;
}

void lbsim_measured(const policy__t *r, lbsim_result_t *res) {
  memset(res, 0, sizeof *res);
  res->name = "measured";
  double imb = 0, imb_last = 0, wall = 0;
  int64_t last_from = r->nsteps - r->policy.window;
  for (int64_t j = 0; j < r->nsteps; j++) {
    const policy__step_t *st = &r->steps[j];
    double mx = 0, sum = 0;
    for (int q = 0; q < r->ranks; q++) {
      mx = fmax(mx, st->times[q]);
      sum += st->times[q];
    }
    double x = sum > 0 ? mx / (sum / r->ranks) : 1.0;
    imb += x;
    if (j >= last_from)
      imb_last += x;
    wall += st->wall;
    res->compute_per_step += mx;
  }
  for (int64_t i = 0; i < r->nremaps; i++) {
    const policy__remap_t *x = &r->remaps[i];
    res->remap_seconds += x->t_map + x->t_move;
    res->dropped += !x->committed && x->rc == 0;
    if (x->committed) {
      res->remaps++;
      res->tasks_moved += x->tasks;
      res->bytes_moved += x->bytes;
    }
  }
  res->steps = r->nsteps;
  if (r->nsteps > 0) {
    double n = (double)r->nsteps;
    res->time_per_step = (wall + res->remap_seconds) / n;
    res->compute_per_step /= n;
    res->imbalance = imb / n;
    int64_t nl = r->nsteps < r->policy.window ? r->nsteps : r->policy.window;
    res->imbalance_last = imb_last / (double)nl;
  }
}
