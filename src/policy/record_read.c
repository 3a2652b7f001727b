/* Reading a load-balancing record (format in policy.h). No MPI and no task
 * runtime: ballast-lbsim links it (ballast_policyengine) with the map engine. */
#include "policy/policy.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common_internal.h"
#include "common/tok.h"
#include "map/map_internal.h"

/* Grows *p (of *cap elements of size sz) to hold n; 0 or BALLAST_ENOMEM. */
static int grow(void **p, int64_t *cap, int64_t n, size_t sz) {
  if (n <= *cap)
    return 0;
  int64_t c = *cap ? *cap : 16;
  while (c < n)
    c *= 2;
  void *q = ballast__realloc(*p, (size_t)c * sz);
  if (!q)
    return BALLAST_ENOMEM;
  *p = q;
  *cap = c;
  return 0;
}

typedef struct {
  policy__t *r;
  const char *path;
  long long line;
  char why[160];
  int cur;              /* graph being read, -1 none */
  int64_t vread;        /* its V lines so far */
  int64_t ecap, lastu;  /* its edge arrays' room, last E vertex */
  int64_t cap_keys, cap_steps, cap_dec, cap_rem, cap_x, cap_j, cap_cost, cap_ev, cap_s;
  int64_t left;         /* bytes of the file after the current line */
} reader_t;

static int sort_keys(policy__t *r);

static int bad(reader_t *x, const char *what) {
  snprintf(x->why, sizeof x->why, "%s", what);
  return BALLAST_EPARSE;
}

/* A key with %XX escapes decoded into *out (malloc'ed): 0, BALLAST_EPARSE
 * for a bad escape, BALLAST_ENOMEM. */
static int unescape(reader_t *x, const char *w, size_t n, char **out) {
  char *s = ballast__malloc(n + 1);
  if (!s)
    return BALLAST_ENOMEM;
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    if (w[i] != '%') {
      s[k++] = w[i];
      continue;
    }
    char hex[3] = {i + 1 < n ? w[i + 1] : 0, i + 2 < n ? w[i + 2] : 0, 0};
    char *e;
    unsigned v = (unsigned)strtoul(hex, &e, 16);
    if (*e || !hex[0] || !hex[1] || v == 0) {
      free(s);
      return bad(x, "a key has a bad %XX escape");
    }
    s[k++] = (char)v;
    i += 2;
  }
  s[k] = '\0';
  *out = s;
  return 0;
}

static int add_event(reader_t *x, policy__event_kind_t kind, int64_t index) {
  policy__t *r = x->r;
  if (grow((void **)&r->events, &x->cap_ev, r->nevents + 1, sizeof *r->events))
    return BALLAST_ENOMEM;
  r->events[r->nevents].kind = kind;
  r->events[r->nevents++].index = index;
  return 0;
}

/* The previous graph's edges into CSR form (E lines come in vertex order). */
static int close_graph(reader_t *x) {
  if (x->cur < 0)
    return 0;
  policy__graph_t *g = &x->r->graphs[x->cur];
  if (x->vread != g->n)
    return bad(x, "a graph has fewer V lines than its G line announces");
  /* vertices after the last E line have no edge u < v */
  for (int64_t w = x->lastu + 1; w < g->n; w++)
    g->xadj[w + 1] = g->xadj[w];
  x->cur = -1;
  return 0;
}

static int line_C(reader_t *x, ballast__tok_t *t) {
  policy__t *r = x->r;
  size_t n;
  const char *w = ballast__tok_word(t, &n);
  int rc = w ? unescape(x, w, n, &r->root) : 0;
  if (rc)
    return rc;
  r->ranks = (int)ballast__tok_int(t, 1, 1 << 28);
  r->placement = (int)ballast__tok_int(t, 0, 1);
  w = ballast__tok_word(t, &n);
  char name[32] = "";
  if (w && n < sizeof name)
    memcpy(name, w, n);
  if (rta_strategy_parse(name, &r->strategy))
    return bad(x, "unknown strategy");
  if (ballast__tok_is(t, "wall"))
    r->step_time = 1;
  else if (!ballast__tok_is(t, "tasks"))
    return bad(x, "step_time is neither tasks nor wall");
  r->seed = (unsigned)ballast__tok_int(t, 0, UINT32_MAX);
  r->balrat = ballast__tok_f64(t);
  return 0;
}

static int line_P(reader_t *x, ballast__tok_t *t) {
  rta_policy_config_t *c = &x->r->policy;
  if (ballast__tok_is(t, "off"))
    c->mode = RTA_POLICY_OFF;
  else if (ballast__tok_is(t, "explicit"))
    c->mode = RTA_POLICY_EXPLICIT;
  else if (ballast__tok_is(t, "auto"))
    c->mode = RTA_POLICY_AUTO;
  else
    return bad(x, "unknown policy mode");
  c->warmup = (int)ballast__tok_int(t, 0, INT32_MAX);
  c->window = (int)ballast__tok_int(t, 3, INT32_MAX);
  c->threshold = ballast__tok_f64(t);
  c->outlier = ballast__tok_f64(t);
  c->horizon = (int)ballast__tok_int(t, 1, INT32_MAX);
  c->initial_cost = ballast__tok_f64(t);
  return 0;
}

static int line_K(reader_t *x, ballast__tok_t *t) {
  policy__t *r = x->r;
  int64_t id = ballast__tok_int(t, 0, INT32_MAX);
  size_t n;
  const char *w = ballast__tok_word(t, &n);
  if (t->bad)
    return 0;
  if (id != r->nkeys)
    return bad(x, "key ids must count up from 0");
  if (grow((void **)&r->keys, &x->cap_keys, r->nkeys + 1, sizeof *r->keys))
    return BALLAST_ENOMEM;
  int rc = unescape(x, w, n, &r->keys[r->nkeys]);
  if (rc)
    return rc;
  r->nkeys++;
  return 0;
}

static int line_G(reader_t *x, ballast__tok_t *t) {
  policy__t *r = x->r;
  int rc = close_graph(x);
  if (rc)
    return rc;
  int g = (int)ballast__tok_int(t, 0, 1 << 24);
  long long step = ballast__tok_int(t, 0, INT64_MAX);
  int64_t n = ballast__tok_int(t, 1, INT32_MAX);
  if (t->bad)
    return 0;
  if (g < r->ngraphs && r->graphs[g].n > 0)
    return bad(x, "a graph number appears twice");
  /* graph k comes before remap k's R line: the numbers cannot run ahead */
  if (g > r->nremaps + 1)
    return bad(x, "a graph number beyond the remaps recorded so far");
  if (n > x->left)
    return bad(x, "a graph of more vertices than the rest of the file can hold");
  if (g >= r->ngraphs) {
    policy__graph_t *q = ballast__realloc(r->graphs, (size_t)(g + 1) * sizeof *q);
    if (!q)
      return BALLAST_ENOMEM;
    memset(q + r->ngraphs, 0, (size_t)(g + 1 - r->ngraphs) * sizeof *q);
    r->graphs = q;
    r->ngraphs = g + 1;
  }
  policy__graph_t *G = &r->graphs[g];
  G->step = step;
  G->n = n;
  G->v = ballast__calloc((size_t)n, sizeof *G->v);
  G->xadj = ballast__calloc((size_t)n + 1, sizeof *G->xadj);
  if (!G->v || !G->xadj)
    return BALLAST_ENOMEM;
  x->cur = g;
  x->vread = 0;
  x->ecap = 0;
  x->lastu = -1;
  return 0;
}

static int line_V(reader_t *x, ballast__tok_t *t) {
  policy__t *r = x->r;
  if (x->cur < 0 || x->vread >= r->graphs[x->cur].n)
    return bad(x, "a V line outside a graph or beyond its vertex count");
  policy__vertex_t *v = &r->graphs[x->cur].v[x->vread++];
  v->key = (int)ballast__tok_int(t, 0, r->nkeys - 1);
  v->nprocs = (int)ballast__tok_int(t, 1, INT32_MAX);
  v->owner = (int)ballast__tok_int(t, -1, r->ranks - 1);
  v->work = ballast__tok_f64(t);
  v->state = ballast__tok_f64(t);
  if (!t->bad && (v->work < 0 || v->state < 0))
    return bad(x, "negative work or state");
  return 0;
}

static int line_E(reader_t *x, ballast__tok_t *t) {
  if (x->cur < 0 || x->vread != x->r->graphs[x->cur].n)
    return bad(x, "an E line outside a graph or before all its V lines");
  policy__graph_t *g = &x->r->graphs[x->cur];
  int64_t u = ballast__tok_int(t, 0, g->n - 1);
  if (t->bad)
    return 0;
  if (u < x->lastu)
    return bad(x, "E lines out of vertex order");
  for (int64_t w = x->lastu + 1; w <= u; w++)
    g->xadj[w + 1] = g->xadj[w];
  x->lastu = u;
  while (!t->bad && !ballast__tok_done(t)) {
    int64_t v = ballast__tok_int(t, u + 1, g->n - 1);
    double b = ballast__tok_f64(t);
    if (t->bad)
      break;
    int64_t e = g->xadj[u + 1], cap = x->ecap;
    if (grow((void **)&g->adjw, &cap, e + 1, sizeof *g->adjw) ||
        grow((void **)&g->adj, &x->ecap, e + 1, sizeof *g->adj))
      return BALLAST_ENOMEM;
    g->adj[e] = v;
    g->adjw[e] = b;
    g->xadj[u + 1]++;
  }
  return 0;
}

static int line_M(reader_t *x, ballast__tok_t *t) {
  policy__t *r = x->r;
  int g = (int)ballast__tok_int(t, 0, r->ngraphs - 1);
  int target = ballast__tok_is(t, "target");
  if (!target && !ballast__tok_is(t, "slot"))
    return bad(x, "M line neither slot nor target");
  if (t->bad || r->graphs[g].n == 0)
    return bad(x, "M line for a graph not read");
  policy__graph_t *G = &r->graphs[g];
  int **dst = target ? &G->target : &G->slot;
  if (*dst)
    return bad(x, "M line repeated");
  if (!(*dst = ballast__malloc((size_t)G->n * sizeof **dst)))
    return BALLAST_ENOMEM;
  for (int64_t v = 0; v < G->n && !t->bad; v++)
    (*dst)[v] = (int)ballast__tok_int(t, -1, r->ranks - 1);
  return 0;
}

static int line_Q(reader_t *x, ballast__tok_t *t) {
  policy__t *r = x->r;
  int g = (int)ballast__tok_int(t, 0, r->ngraphs - 1);
  if (t->bad)
    return 0;
  for (int i = 0; i < 7; i++)
    r->graphs[g].quality[i] = ballast__tok_f64(t);
  r->graphs[g].has_quality = 1;
  return 0;
}

static int line_T(reader_t *x, ballast__tok_t *t) {
  policy__t *r = x->r;
  if (r->ranks < 1)
    return bad(x, "a T line before the C line");
  if (grow((void **)&r->steps, &x->cap_steps, r->nsteps + 1, sizeof *r->steps))
    return BALLAST_ENOMEM;
  if (strlen(t->p) < 2 * (size_t)r->ranks)
    return bad(x, "a T line with fewer times than ranks");
  policy__step_t *s = &r->steps[r->nsteps];
  s->step = ballast__tok_int(t, 0, INT64_MAX);
  s->wall = ballast__tok_f64(t);
  if (!(s->times = ballast__malloc((size_t)r->ranks * sizeof *s->times)))
    return BALLAST_ENOMEM;
  r->nsteps++;
  for (int i = 0; i < r->ranks; i++)
    s->times[i] = ballast__tok_f64(t);
  return add_event(x, POLICY__EV_STEP, r->nsteps - 1);
}

static int line_W(reader_t *x, ballast__tok_t *t) {
  policy__t *r = x->r;
  if (grow((void **)&r->costrows, &x->cap_cost, r->ncostrows + 1, sizeof *r->costrows))
    return BALLAST_ENOMEM;
  policy__costs_t *c = &r->costrows[r->ncostrows++];
  memset(c, 0, sizeof *c);
  c->step = ballast__tok_int(t, 0, INT64_MAX);
  int64_t cap = 0, cap2 = 0;
  while (!t->bad && !ballast__tok_done(t)) {
    if (grow((void **)&c->key, &cap, c->n + 1, sizeof *c->key) ||
        grow((void **)&c->cost, &cap2, c->n + 1, sizeof *c->cost))
      return BALLAST_ENOMEM;
    c->key[c->n] = (int)ballast__tok_int(t, 0, r->nkeys - 1);
    c->cost[c->n++] = ballast__tok_f64(t);
  }
  return 0;
}

static int line_B(reader_t *x, ballast__tok_t *t) {
  policy__t *r = x->r;
  size_t n = (size_t)r->ranks;
  if (n < 1)
    return bad(x, "a B line before the C line");
  if (!r->bytes && !(r->bytes = ballast__calloc(n * n, sizeof *r->bytes)))
    return BALLAST_ENOMEM;
  (void)ballast__tok_int(t, 0, INT64_MAX);
  int from = (int)ballast__tok_int(t, 0, r->ranks - 1);
  while (!t->bad && !ballast__tok_done(t)) {
    int p = (int)ballast__tok_int(t, 0, r->ranks - 1);
    double b = ballast__tok_f64(t);
    if (!t->bad)
      r->bytes[(size_t)from * n + (size_t)p] = b;
  }
  return 0;
}

/* A reason by its rta_reason_name. */
static int reason_of(reader_t *x, ballast__tok_t *t, rta_reason_t *reason) {
  size_t n;
  const char *w = ballast__tok_word(t, &n);
  for (int k = RTA_REASON_OFF; w && k <= RTA_REASON_ESTIMATED; k++)
    if (strlen(rta_reason_name((rta_reason_t)k)) == n &&
        !strncmp(w, rta_reason_name((rta_reason_t)k), n)) {
      *reason = (rta_reason_t)k;
      return 0;
    }
  return w ? bad(x, "unknown decision reason") : 0;
}

static int line_D(reader_t *x, ballast__tok_t *t) {
  policy__t *r = x->r;
  if (grow((void **)&r->decisions, &x->cap_dec, r->ndecisions + 1, sizeof *r->decisions))
    return BALLAST_ENOMEM;
  policy__decision_t *e = &r->decisions[r->ndecisions];
  memset(e, 0, sizeof *e);
  e->d.step = ballast__tok_int(t, 0, INT64_MAX);
  e->d.remap = (int)ballast__tok_int(t, 0, 1);
  int rc = reason_of(x, t, &e->d.reason);
  if (rc)
    return rc;
  e->d.imbalance = ballast__tok_f64(t);
  e->d.max_time = ballast__tok_f64(t);
  e->d.avg_time = ballast__tok_f64(t);
  e->d.predicted_gain = ballast__tok_f64(t);
  e->d.remap_cost = ballast__tok_f64(t);
  e->d.ignored_outliers = (int)ballast__tok_int(t, 0, INT32_MAX);
  e->forced = (int)ballast__tok_int(t, 0, r->version >= 3 ? 3 : 2);
  e->d.slowest = -1;
  if (r->version >= 3) { /* what the policy saw: noise or imbalance */
    e->d.slowest = (int)ballast__tok_int(t, -1, INT32_MAX);
    e->d.persistent = (int)ballast__tok_int(t, 0, INT32_MAX);
    e->d.noise = (int)ballast__tok_int(t, 0, 7);
    e->d.warmup_end = ballast__tok_int(t, 0, INT64_MAX);
  }
  r->ndecisions++;
  return add_event(x, POLICY__EV_DECIDE, r->ndecisions - 1);
}

/* S (version 3): the merged step the policy was fed. */
static int line_S(reader_t *x, ballast__tok_t *t) {
  policy__t *r = x->r;
  if (r->version < 3)
    return bad(x, "an S line in a version 2 record");
  if (grow((void **)&r->merged, &x->cap_s, r->nmerged + 1, sizeof *r->merged))
    return BALLAST_ENOMEM;
  policy__merged_t *e = &r->merged[r->nmerged];
  e->step = ballast__tok_int(t, 0, INT64_MAX);
  double v[RTA_POLICY_STEP_DOUBLES];
  for (int i = 0; i < RTA_POLICY_STEP_DOUBLES; i++)
    v[i] = ballast__tok_f64(t);
  rta_policy_step_unpack(v, &e->s);
  r->nmerged++;
  return add_event(x, POLICY__EV_MERGED, r->nmerged - 1);
}

static int line_R(reader_t *x, ballast__tok_t *t) {
  policy__t *r = x->r;
  if (grow((void **)&r->remaps, &x->cap_rem, r->nremaps + 1, sizeof *r->remaps))
    return BALLAST_ENOMEM;
  policy__remap_t *e = &r->remaps[r->nremaps];
  e->step = ballast__tok_int(t, 0, INT64_MAX);
  e->k = (int)ballast__tok_int(t, 1, INT32_MAX);
  e->committed = (int)ballast__tok_int(t, 0, 1);
  e->rc = (int)ballast__tok_int(t, INT32_MIN, 0);
  e->tasks = ballast__tok_f64(t);
  e->bytes = ballast__tok_f64(t);
  e->t_map = ballast__tok_f64(t);
  e->t_move = ballast__tok_f64(t);
  e->seed = (unsigned)ballast__tok_int(t, 0, UINT32_MAX);
  e->warm = (int)ballast__tok_int(t, 0, 1);
  /* the attempt's candidate, judged just before it */
  e->cand = -1;
  if (r->ncandidates > 0 && r->candidates[r->ncandidates - 1].k == e->k)
    e->cand = r->ncandidates - 1;
  r->nremaps++;
  return add_event(x, POLICY__EV_REMAP, r->nremaps - 1);
}

static int line_X(reader_t *x, ballast__tok_t *t) {
  policy__t *r = x->r;
  if (grow((void **)&r->measures, &x->cap_x, r->nmeasures + 1, sizeof *r->measures))
    return BALLAST_ENOMEM;
  rta_remap_measure_t *m = &r->measures[r->nmeasures++];
  m->mapping = ballast__tok_f64(t);
  m->migration = ballast__tok_f64(t);
  m->bytes = ballast__tok_f64(t);
  m->committed = (int)ballast__tok_int(t, 0, 1);
  return add_event(x, POLICY__EV_REMAPPED, r->nmeasures - 1);
}

static int line_J(reader_t *x, ballast__tok_t *t) {
  policy__t *r = x->r;
  if (grow((void **)&r->candidates, &x->cap_j, r->ncandidates + 1, sizeof *r->candidates))
    return BALLAST_ENOMEM;
  policy__candidate_t *e = &r->candidates[r->ncandidates];
  memset(e, 0, sizeof *e);
  e->step = ballast__tok_int(t, 0, INT64_MAX);
  e->k = (int)ballast__tok_int(t, 1, INT32_MAX);
  e->judged = (int)ballast__tok_int(t, 0, 1);
  e->c.imbalance_now = ballast__tok_f64(t);
  e->c.imbalance_after = ballast__tok_f64(t);
  e->c.tasks = ballast__tok_int(t, 0, INT64_MAX);
  e->c.bytes = ballast__tok_f64(t);
  e->c.mapping_seconds = ballast__tok_f64(t);
  e->d.step = e->step;
  e->d.remap = (int)ballast__tok_int(t, 0, 1);
  int rc = reason_of(x, t, &e->d.reason);
  if (rc)
    return rc;
  e->d.predicted_gain = ballast__tok_f64(t);
  e->d.remap_cost = ballast__tok_f64(t);
  e->d.predicted_imbalance = ballast__tok_f64(t);
  e->d.tasks_to_move = ballast__tok_int(t, 0, INT64_MAX);
  r->ncandidates++;
  return add_event(x, POLICY__EV_CANDIDATE, r->ncandidates - 1);
}

static int line_Z(reader_t *x, ballast__tok_t *t) {
  (void)ballast__tok_int(t, 0, INT64_MAX);
  (void)ballast__tok_int(t, 0, INT64_MAX);
  x->r->dropped = ballast__tok_int(t, 0, INT64_MAX);
  x->r->closed = 1;
  return 0;
}

/* One line (without its newline). */
static int parse_line(reader_t *x, const char *line) {
  policy__t *r = x->r;
  if (r->closed)
    return bad(x, "text after the closing Z line");
  char type = line[0];
  if (!type || (line[1] != ' ' && line[1] != '\0'))
    return bad(x, "a line must start with a one-letter type and a space");
  if (type == 'H') {
    if (r->hw)
      return bad(x, "a second hardware model");
    int rc = map__hw_from_text(line, &r->hw, x->why, sizeof x->why);
    if (rc == BALLAST_EPARSE && !x->why[0])
      snprintf(x->why, sizeof x->why, "malformed hardware model");
    return rc;
  }
  static const struct {
    char type;
    int (*fn)(reader_t *, ballast__tok_t *);
  } kinds[] = {{'C', line_C}, {'P', line_P}, {'K', line_K}, {'G', line_G},
               {'V', line_V}, {'E', line_E}, {'M', line_M}, {'Q', line_Q},
               {'T', line_T}, {'W', line_W}, {'B', line_B}, {'D', line_D},
               {'J', line_J}, {'R', line_R}, {'X', line_X}, {'Z', line_Z},
               {'S', line_S}};
  for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
    if (kinds[k].type == type) {
      if (type != 'V' && type != 'E' && type != 'G') {
        int rc = close_graph(x);
        if (rc)
          return rc;
      }
      ballast__tok_t t = {line + 1, 0};
      int rc = kinds[k].fn(x, &t);
      if (!rc && (t.bad || !ballast__tok_done(&t)))
        rc = bad(x, t.bad ? "a field is missing, malformed or out of range"
                          : "unexpected text at the end of the line");
      return rc;
    }
  return bad(x, "unknown line type (a record of a newer version?)");
}

/* The first line: magic and a version this reader knows. */
static int parse_magic(reader_t *x, const char *line) {
  size_t m = strlen(POLICY__MAGIC);
  if (strncmp(line, POLICY__MAGIC, m) != 0 || line[m] != ' ')
    return bad(x, "not a ballast load-balancing record (no \"" POLICY__MAGIC
                  "\" header)");
  ballast__tok_t t = {line + m, 0};
  long long v = ballast__tok_int(&t, 0, INT32_MAX);
  if (t.bad || !ballast__tok_done(&t))
    return bad(x, "the header's version is malformed");
  if (v != POLICY__VERSION && v != 2) {
    snprintf(x->why, sizeof x->why, "version %lld, this reader knows versions 2 and %d",
             v, POLICY__VERSION);
    return BALLAST_EPARSE;
  }
  x->r->version = (int)v;
  return 0;
}

static int read_all(reader_t *x, FILE *f) {
  char *line = NULL;
  size_t cap = 0;
  ssize_t n;
  int rc = 0;
  /* a V line takes at least 10 bytes: the file's size bounds a graph */
  x->left = INT64_MAX;
  if (fseek(f, 0, SEEK_END) == 0) {
    long sz = ftell(f);
    x->left = sz >= 0 ? sz / 5 : INT64_MAX;
    rewind(f);
  }
  while (!rc && (n = getline(&line, &cap, f)) >= 0) {
    x->line++;
    if (n == 0 || line[n - 1] != '\n') {
      rc = bad(x, "the record is cut inside a line (truncated)");
      break;
    }
    line[n - 1] = '\0';
    if ((size_t)n - 1 != strlen(line))
      rc = bad(x, "a NUL byte inside a line");
    else if (x->line == 1)
      rc = parse_magic(x, line);
    else
      rc = parse_line(x, line);
  }
  if (!rc && ferror(f))
    rc = BALLAST_EIO;
  if (!rc && x->line == 0)
    rc = bad(x, "the file is empty");
  if (!rc)
    rc = close_graph(x);
  if (!rc && (!x->r->root || x->r->ranks < 1))
    rc = bad(x, "no context (C) line");
  if (!rc)
    rc = sort_keys(x->r);
  free(line);
  return rc;
}

int policy__open(const char *path, policy__t **out) {
  if (!path || !out)
    return BALLAST_EINVAL;
  *out = NULL;
  FILE *f = fopen(path, "r");
  if (!f) {
    BALLAST_WARN("lb record '%s': cannot open it (%s)", path, strerror(errno));
    return BALLAST_EIO;
  }
  reader_t x = {.path = path, .cur = -1};
  x.r = ballast__calloc(1, sizeof *x.r);
  int rc = x.r ? 0 : BALLAST_ENOMEM;
  if (!rc) {
    rta_policy_config_init(&x.r->policy);
    rc = read_all(&x, f);
  }
  fclose(f);
  if (rc) {
    if (rc == BALLAST_ENOMEM)
      BALLAST_WARN("lb record '%s': out of memory at line %lld", path, x.line);
    else if (rc == BALLAST_EIO)
      BALLAST_WARN("lb record '%s': reading failed at line %lld", path, x.line);
    else
      BALLAST_WARN("lb record '%s', line %lld: %s", path, x.line, x.why);
    policy__close(x.r);
    return rc;
  }
  *out = x.r;
  return 0;
}

void policy__close(policy__t *r) {
  if (!r)
    return;
  free(r->root);
  rta_hw_destroy(r->hw);
  for (int64_t i = 0; i < r->nkeys; i++)
    free(r->keys[i]);
  free(r->keys);
  free(r->key_order);
  for (int g = 0; g < r->ngraphs; g++) {
    policy__graph_t *G = &r->graphs[g];
    free(G->v);
    free(G->xadj);
    free(G->adj);
    free(G->adjw);
    free(G->slot);
    free(G->target);
  }
  free(r->graphs);
  for (int64_t i = 0; i < r->nsteps; i++)
    free(r->steps[i].times);
  free(r->steps);
  free(r->decisions);
  free(r->merged);
  free(r->remaps);
  free(r->measures);
  free(r->candidates);
  for (int64_t i = 0; i < r->ncostrows; i++) {
    free(r->costrows[i].key);
    free(r->costrows[i].cost);
  }
  free(r->costrows);
  free(r->events);
  free(r->bytes);
  free(r);
}

uint64_t policy__keys_hash(const char *const *keys, int64_t n) {
  uint64_t h = BALLAST__FNV_OFFSET;
  for (int64_t i = 0; i < n; i++) /* each key with its terminating 0 */
    h = ballast__fnv1a(h, keys[i], strlen(keys[i]) + 1);
  return h;
}

uint64_t policy__tree_hash(const policy__t *r, int g) {
  if (!r || g < 0 || g >= r->ngraphs || r->graphs[g].n == 0)
    return 0;
  const policy__graph_t *G = &r->graphs[g];
  const char **k = ballast__malloc((size_t)G->n * sizeof *k);
  if (!k)
    return 0;
  for (int64_t v = 0; v < G->n; v++)
    k[v] = r->keys[G->v[v].key];
  uint64_t h = policy__keys_hash(k, G->n);
  free(k);
  return h;
}

int policy__last_graph(const policy__t *r) {
  for (int g = r ? r->ngraphs - 1 : -1; g >= 0; g--)
    if (r->graphs[g].n > 0)
      return g;
  return -1;
}

static int cmp_keyref(const void *a, const void *b, const policy__t *r) {
  return strcmp(r->keys[*(const int64_t *)a], r->keys[*(const int64_t *)b]);
}

/* Index of \a key in the key table, or -1: a binary search in the key ids
 * sorted by key (built by policy__open). */
static int64_t key_id(const policy__t *r, const char *key) {
  int64_t lo = 0, hi = r->nkeys - 1;
  while (lo <= hi) {
    int64_t mid = lo + (hi - lo) / 2;
    int c = strcmp(r->keys[r->key_order[mid]], key);
    if (!c)
      return r->key_order[mid];
    if (c < 0)
      lo = mid + 1;
    else
      hi = mid - 1;
  }
  return -1;
}

/* The key ids sorted by key (insertion into runs, then merges: no qsort
 * context argument in C11). */
static int sort_keys(policy__t *r) {
  int64_t n = r->nkeys;
  int64_t *a = ballast__malloc((size_t)(n ? n : 1) * sizeof *a);
  int64_t *b = ballast__malloc((size_t)(n ? n : 1) * sizeof *b);
  if (!a || !b) {
    free(a);
    free(b);
    return BALLAST_ENOMEM;
  }
  for (int64_t i = 0; i < n; i++)
    a[i] = i;
  for (int64_t width = 1; width < n; width *= 2) {
    for (int64_t lo = 0; lo < n; lo += 2 * width) {
      int64_t mid = lo + width < n ? lo + width : n;
      int64_t hi = lo + 2 * width < n ? lo + 2 * width : n;
      int64_t i = lo, j = mid, k = lo;
      while (i < mid && j < hi)
        b[k++] = cmp_keyref(&a[j], &a[i], r) < 0 ? a[j++] : a[i++];
      while (i < mid)
        b[k++] = a[i++];
      while (j < hi)
        b[k++] = a[j++];
    }
    int64_t *t = a;
    a = b;
    b = t;
  }
  free(b);
  r->key_order = a;
  return 0;
}

int policy__task(const policy__t *r, const char *key, policy__task_t *t) {
  if (!r || !key || !t)
    return BALLAST_EINVAL;
  memset(t, 0, sizeof *t);
  int64_t id = key_id(r, key);
  int found = -1;
  long long since = -1;
  for (int g = r->ngraphs - 1; g >= 0 && id >= 0 && found < 0; g--) {
    const policy__graph_t *G = &r->graphs[g];
    for (int64_t v = 0; v < G->n && found < 0; v++)
      if (G->v[v].key == id) {
        found = g;
        t->work = G->v[v].work;
        t->state = G->v[v].state;
        t->nprocs = G->v[v].nprocs;
        t->slot = G->target ? G->target[v] : G->v[v].owner;
        since = G->step;
        /* a rolled-back remap left the task where it was */
        for (int64_t i = 0; i < r->nremaps; i++)
          if (r->remaps[i].k == g && !r->remaps[i].committed)
            t->slot = G->v[v].owner;
      }
  }
  double sum = 0;
  for (int64_t i = 0; found >= 0 && i < r->ncostrows; i++)
    if (r->costrows[i].step > since)
      for (int64_t k = 0; k < r->costrows[i].n; k++)
        if (r->costrows[i].key[k] == id) {
          sum += r->costrows[i].cost[k];
          t->ncosts++;
        }
  t->mean_cost = t->ncosts ? sum / (double)t->ncosts : 0;
  return found >= 0 ? 0 : BALLAST_ENOTFOUND;
}
