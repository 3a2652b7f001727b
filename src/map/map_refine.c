/* Multilevel k-way FM refinement of the remap's combined cost (hop-bytes +
 * migration per step), map__refine_ml (map_remap.h). The single-level
 * greedy refinement (map_remap.c) moves one vertex at a time and only
 * downhill: on a remapped stencil it leaves ragged boundaries between
 * slots (and nodes) that no single move improves. Here the graph is
 * coarsened inside each (current slot, old slot) group, so a coarse vertex
 * is a chunk of a slot's boundary that can move as a whole, and FM with
 * hill climbing accepts a few uphill moves to reach better ones. With
 * every move priced alike and a budget on the migration, the same passes
 * change which tasks move rather than how many (the remap's last step).
 * The same FM with the nodes as parts (map__refine_nodes), and a rebalance
 * of the cores inside each node (map__rebalance_nodes) for the tasks the
 * node level returns to overfilled slots.
 * Measured in bench/zoltan (README). */
#include <stdlib.h>
#include <string.h>

#include "common/common_internal.h"
#include "map/map_remap.h"

/* Coarsest level: at most this many levels, stopped earlier when a
 * matching shrinks a level by less than COARSEN_MIN_GAIN. */
#define ML_MAX_LEVELS 12
#define COARSEN_MIN_GAIN 0.1
/* A cluster's work stays below the average slot work over this. */
#define CLUSTER_FRAC 8
/* FM passes per level, and the moves a pass makes past its best prefix
 * before it gives up (hill climbing). */
#define FM_PASSES 4
#define FM_STALL_MIN 64
#define FM_STALL_DIV 128
/* A part that goes above cap offers all its vertices' moves again only
 * when it holds at most this many (a slot); in a larger one (a node of
 * thousands of tasks) the moved vertex's neighbours, pushed again after
 * every move, carry the chain. Measured on bench/zoltan's 512-core
 * stencil: the node level 4x faster for +0.1% hop-bytes; at the slot
 * level the scan is needed (without it, +3-7% hop-bytes). */
#define OVERFILL_SCAN_MAX 1024
/* map__rebalance_nodes() drains slots only in nodes of at most this many
 * slots (every task of a drained slot tries every slot of its node). */
#define REBALANCE_NODE_MAX 256

/* One level: a CSR of the (coarse) graph with its vertices' work,
 * migration cost per unit of distance (state / steps), old and current
 * slots, and its map to the next coarser level. */
typedef struct {
  int64_t n;
  int64_t *xadj;
  int32_t *adj;
  double *w, *work, *mig, *st; /* st: state bytes */
  int32_t *prev, *slot, *cnt;  /* cnt: task vertices */
  int32_t *cmap; /* n: vertex of the next level (unused on the coarsest) */
  void *blk;     /* one block holding the arrays allocated for the level
                  * (few allocations: remaps are swept for failures) */
} lvl_t;

static void lvl_free(lvl_t *l) {
  free(l->blk);
  memset(l, 0, sizeof *l);
}

/* One zeroed block for the level's arrays: nd doubles of n, n + 1 int64
 * (xadj) when \a coarse, narc doubles and int32 (w, adj), four int32 of
 * n (cnt, prev, slot, cmap); the doubles from \a d[], in order. */
static int lvl_block(lvl_t *l, int64_t n, int64_t narc, int coarse,
                     double **d[], int nd) {
  size_t nn = (size_t)(n ? n : 1), na = coarse ? (size_t)(narc ? narc : 1) : 0;
  size_t bytes = nd * nn * sizeof(double) +
                 (coarse ? (nn + 1) * sizeof(int64_t) : 0) +
                 na * (sizeof(double) + sizeof(int32_t)) + 4 * nn * sizeof(int32_t);
  char *p = l->blk = ballast__calloc(1, bytes);
  if (!p)
    return BALLAST_ENOMEM;
  for (int k = 0; k < nd; k++, p += nn * sizeof(double))
    *d[k] = (double *)(void *)p;
  if (coarse) {
    l->xadj = (int64_t *)(void *)p;
    p += (nn + 1) * sizeof(int64_t);
    l->w = (double *)(void *)p;
    p += na * sizeof(double);
    l->adj = (int32_t *)(void *)p;
    p += na * sizeof(int32_t);
  }
  l->cnt = (int32_t *)(void *)p;
  l->prev = l->cnt + nn;
  l->slot = l->prev + nn;
  l->cmap = l->slot + nn;
  return 0;
}

/* Level 0: the task graph itself, with prev and slot as int32. */
static int lvl_fine(lvl_t *l, const rta_graph_t *g, const int64_t *prev,
                    double inv, const int64_t *slot) {
  int64_t n = g->nvert;
  *l = (lvl_t){.n = n, .xadj = g->xadj, .adj = g->adj, .w = g->adjw,
               .work = g->work};
  double **d[] = {&l->mig, &l->st};
  if (lvl_block(l, n, 0, 0, d, 2))
    return BALLAST_ENOMEM;
  for (int64_t v = 0; v < n; v++) {
    l->st[v] = g->state[v];
    l->cnt[v] = 1;
    l->prev[v] = prev && prev[v] >= 0 ? (int32_t)prev[v] : -1;
    l->mig[v] = l->prev[v] >= 0 ? g->state[v] * inv : 0;
    l->slot[v] = (int32_t)slot[v];
  }
  return 0;
}

/* Heavy-edge matching inside (slot, prev) groups: f->cmap and the number
 * of coarse vertices. \a mate is scratch (n). */
static int64_t match(lvl_t *f, double maxw, int32_t *mate) {
  int64_t n = f->n, nc = 0;
  for (int64_t v = 0; v < n; v++)
    mate[v] = -1;
  for (int64_t v = 0; v < n; v++) {
    if (mate[v] >= 0)
      continue;
    int32_t best = -1;
    double bw = 0;
    for (int64_t i = f->xadj[v]; i < f->xadj[v + 1]; i++) {
      int32_t u = f->adj[i];
      if (u == v || mate[u] >= 0 || f->slot[u] != f->slot[v] ||
          f->prev[u] != f->prev[v] || f->work[u] + f->work[v] > maxw)
        continue;
      if (f->w[i] > bw) {
        bw = f->w[i];
        best = u;
      }
    }
    mate[v] = best >= 0 ? best : (int32_t)v;
    if (best >= 0)
      mate[best] = (int32_t)v;
  }
  for (int64_t v = 0; v < n; v++)
    f->cmap[v] = -1;
  for (int64_t v = 0; v < n; v++)
    if (f->cmap[v] < 0)
      f->cmap[v] = f->cmap[mate[v]] = (int32_t)nc++;
  return nc;
}

/* Allocates the arrays of coarse level \a c of \a nc vertices and at most
 * \a narc arcs. */
static int lvl_alloc(lvl_t *c, int64_t nc, int64_t narc) {
  c->n = nc;
  double **d[] = {&c->work, &c->mig, &c->st};
  return lvl_block(c, nc, narc, 1, d, 3);
}

/* Builds coarse level \a c from \a f and f->cmap (nc coarse vertices):
 * members' work and migration summed, arcs between clusters merged.
 * \a mem (2 nc) and \a pos (nc, -1 everywhere, so again on return) are
 * scratch. */
static int coarsen(const lvl_t *f, int64_t nc, lvl_t *c, int32_t *mem,
                   int64_t *pos) {
  int rc = lvl_alloc(c, nc, f->xadj[f->n]);
  if (rc)
    return rc;
  for (int64_t k = 0; k < 2 * nc; k++)
    mem[k] = -1;
  for (int64_t v = 0; v < f->n; v++) {
    int32_t k = f->cmap[v];
    mem[2 * k + (mem[2 * k] >= 0)] = (int32_t)v;
    c->work[k] += f->work[v];
    c->mig[k] += f->mig[v];
    c->st[k] += f->st[v];
    c->cnt[k] += f->cnt[v];
    c->prev[k] = f->prev[v];
    c->slot[k] = f->slot[v];
  }
  int64_t a = 0;
  for (int64_t k = 0; k < nc; k++) {
    c->xadj[k] = a;
    for (int j = 0; j < 2 && mem[2 * k + j] >= 0; j++) {
      int32_t v = mem[2 * k + j];
      for (int64_t i = f->xadj[v]; i < f->xadj[v + 1]; i++) {
        int32_t u = f->cmap[f->adj[i]];
        if (u == k)
          continue;
        if (pos[u] < 0) {
          pos[u] = a;
          c->adj[a] = u;
          c->w[a++] = f->w[i];
        } else {
          c->w[pos[u]] += f->w[i];
        }
      }
    }
    for (int64_t i = c->xadj[k]; i < a; i++)
      pos[c->adj[i]] = -1;
  }
  c->xadj[nc] = a;
  return 0;
}

/* ---- FM ------------------------------------------------------------------ */

typedef struct {
  double gain;
  int32_t v, to;
  uint32_t stamp;
} hent_t;

/* What the FM passes of one level work with. */
typedef struct {
  lvl_t *l;
  const map__dist_t *dt;
  double *load, cap, capx; /* slot work; the bound; a move's bound */
  double excess;           /* sum over slots of the work above cap */
  uint32_t *stamp;         /* n: bumped when a vertex's best move changes */
  char *locked;            /* n */
  int *mark, tick;         /* ns: candidate slots seen (mark == tick) */
  int *cand;               /* ns */
  double *conn;            /* ns: bytes to each part of cand */
  hent_t *heap;
  int64_t nheap, capheap;
  int32_t *mv_v, *mv_from; /* the moves of a pass, in order */
  int64_t *xs;             /* ns + 1: the pass's vertices of slot s are */
  int32_t *vs;             /* vs[xs[s] .. xs[s + 1]) (as the pass began) */
  double dmax;             /* largest slot distance */
  int flat;                /* a move costs mig x dmax, whatever its distance */
  const map__budget_t *bud; /* or NULL: no bound on the migration */
  int64_t tasks;           /* tasks away from their old slot */
  double bytes;            /* and their state bytes */
  double boost;            /* added to the gain of moves out of a slot above cap */
} fm_t;

static int hent_above(const hent_t *a, const hent_t *b) {
  return a->gain > b->gain || (a->gain == b->gain && a->v < b->v);
}

static int heap_push(fm_t *f, hent_t e) {
  if (f->nheap == f->capheap) {
    int64_t nc = f->capheap ? 2 * f->capheap : 1024;
    hent_t *h = ballast__realloc(f->heap, (size_t)nc * sizeof *h);
    if (!h)
      return BALLAST_ENOMEM;
    f->heap = h;
    f->capheap = nc;
  }
  int64_t i = f->nheap++;
  while (i > 0 && hent_above(&e, &f->heap[(i - 1) / 2])) {
    f->heap[i] = f->heap[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  f->heap[i] = e;
  return 0;
}

static hent_t heap_pop(fm_t *f) {
  hent_t top = f->heap[0], last = f->heap[--f->nheap];
  int64_t i = 0, n = f->nheap;
  for (;;) {
    int64_t c = 2 * i + 1;
    if (c >= n)
      break;
    if (c + 1 < n && hent_above(&f->heap[c + 1], &f->heap[c]))
      c++;
    if (!hent_above(&f->heap[c], &last))
      break;
    f->heap[i] = f->heap[c];
    i = c;
  }
  if (n)
    f->heap[i] = last;
  return top;
}

/* Cost of vertex v on part b: its migration, and its bytes to each part
 * of f->cand[0 .. np) (f->conn) x the distance. */
static double fm_cost(const fm_t *f, int64_t v, int b, int np) {
  const lvl_t *l = f->l;
  int p = l->prev[v];
  double c = p < 0 || p == b ? 0
             : l->mig[v] * (f->flat ? f->dmax : map__dist(f->dt, p, b));
  for (int j = 0; j < np; j++)
    c += f->conn[f->cand[j]] * map__dist(f->dt, b, f->cand[j]);
  return c;
}

/* Does moving v to b keep the migration within the budget? */
static int fm_affordable(const fm_t *f, int64_t v, int b) {
  const lvl_t *l = f->l;
  int p = l->prev[v];
  if (!f->bud || p < 0)
    return 1;
  int d = (b != p) - (l->slot[v] != p);
  return d <= 0 || (f->tasks + (int64_t)d * l->cnt[v] <= f->bud->tasks &&
                    f->bytes + d * l->st[v] <= f->bud->bytes);
}

/* f->cand gets the parts of v's neighbours (f->conn their bytes to v), its
 * old part and its own (their bytes may be 0); returns how many. */
static int fm_parts(fm_t *f, int64_t v) {
  const lvl_t *l = f->l;
  int np = 0;
  f->tick++;
  for (int64_t i = l->xadj[v]; i < l->xadj[v + 1]; i++) {
    int b = l->slot[l->adj[i]];
    if (f->mark[b] != f->tick) {
      f->mark[b] = f->tick;
      f->conn[b] = 0;
      f->cand[np++] = b;
    }
    f->conn[b] += l->w[i];
  }
  int extra[2] = {l->slot[v], l->prev[v]};
  for (int k = 0; k < 2; k++)
    if (extra[k] >= 0 && f->mark[extra[k]] != f->tick) {
      f->mark[extra[k]] = f->tick;
      f->conn[extra[k]] = 0;
      f->cand[np++] = extra[k];
    }
  return np;
}

/* The best move of \a v to its old slot or a neighbour's with room for it
 * (bound capx); -1 when there is none. The costs come from the bytes to
 * each neighbouring part, gathered once. */
static int fm_best(fm_t *f, int64_t v, double *gain) {
  const lvl_t *l = f->l;
  int a = l->slot[v], to = -1, np = fm_parts(f, v);
  double base = 0, best = -1e300;
  /* out of an overfilled slot: only where the vertex fits under cap, so
   * that the chain of moves ends */
  double bound = f->load[a] > f->cap ? f->cap : f->capx;
  for (int j = 0; j < np; j++) {
    int b = f->cand[j];
    if (b == a || f->load[b] + l->work[v] > bound || !fm_affordable(f, v, b))
      continue;
    if (to < 0)
      base = fm_cost(f, v, a, np);
    double gn = base - fm_cost(f, v, b, np);
    if (gn > best) {
      best = gn;
      to = b;
    }
  }
  *gain = best;
  return to;
}

static int fm_boundary(const lvl_t *l, int64_t v);

/* Pushes v's best move; moves out of a slot above cap come first (their
 * gain is raised by boost) so that an overfilled slot is emptied at once. */
static int fm_push_best(fm_t *f, int64_t v) {
  double gn;
  int to = fm_best(f, v, &gn);
  if (to < 0)
    return 0;
  if (f->load[f->l->slot[v]] > f->cap)
    gn += f->boost;
  return heap_push(f, (hent_t){gn, (int32_t)v, to, f->stamp[v]});
}

/* The vertices of each slot at the start of a pass. */
static void fm_slots(fm_t *f, int ns) {
  const lvl_t *l = f->l;
  memset(f->xs, 0, ((size_t)ns + 1) * sizeof *f->xs);
  for (int64_t v = 0; v < l->n; v++)
    f->xs[l->slot[v] + 1]++;
  for (int s = 0; s < ns; s++)
    f->xs[s + 1] += f->xs[s];
  for (int64_t v = 0; v < l->n; v++)
    f->vs[f->xs[l->slot[v]]++] = (int32_t)v;
  for (int s = ns; s > 0; s--)
    f->xs[s] = f->xs[s - 1];
  f->xs[0] = 0;
}

/* Slot b just went above cap: its unlocked vertices offer their moves
 * again, raised. */
static int fm_overfilled(fm_t *f, int b) {
  int rc = 0;
  for (int64_t i = f->xs[b]; i < f->xs[b + 1] && !rc; i++) {
    int32_t u = f->vs[i];
    if (!f->locked[u] && fm_boundary(f->l, u)) {
      f->stamp[u]++;
      rc = fm_push_best(f, u);
    }
  }
  return rc;
}

static double over(const fm_t *f, double load) {
  return load > f->cap ? load - f->cap : 0;
}

/* Moves v to slot b, keeping the loads and the excess. */
static void fm_move(fm_t *f, int64_t v, int b) {
  lvl_t *l = f->l;
  int a = l->slot[v];
  double w = l->work[v];
  f->excess -= over(f, f->load[a]) + over(f, f->load[b]);
  f->load[a] -= w;
  f->load[b] += w;
  f->excess += over(f, f->load[a]) + over(f, f->load[b]);
  int p = l->prev[v];
  if (p >= 0) {
    int d = (b != p) - (a != p);
    f->tasks += (int64_t)d * l->cnt[v];
    f->bytes += d * l->st[v];
  }
  l->slot[v] = b;
}

/* Are there vertices worth a look: v touches another slot or is away from
 * its old one? */
static int fm_boundary(const lvl_t *l, int64_t v) {
  if (l->prev[v] >= 0 && l->prev[v] != l->slot[v])
    return 1;
  for (int64_t i = l->xadj[v]; i < l->xadj[v + 1]; i++)
    if (l->slot[l->adj[i]] != l->slot[v])
      return 1;
  return 0;
}

/* One pass: moves best first, each vertex once, then back to the best
 * prefix (least excess, then lowest cost). Returns the cost it saved (>= 0)
 * or a negative BALLAST_E* code in \a rc. */
static double fm_pass(fm_t *f, double eps, int *rc) {
  lvl_t *l = f->l;
  double exeps = 1e-9 * f->cap;
  int64_t nmv = 0, bestmv = 0, stall = FM_STALL_MIN + l->n / FM_STALL_DIV;
  double cum = 0, bestcum = 0, bestex = f->excess;
  f->nheap = 0;
  memset(f->locked, 0, (size_t)l->n);
  fm_slots(f, f->dt->ns);
  for (int64_t v = 0; v < l->n && !*rc; v++)
    if (fm_boundary(l, v))
      *rc = fm_push_best(f, v);
  while (f->nheap && !*rc && nmv - bestmv < stall) {
    hent_t e = heap_pop(f);
    if (f->locked[e.v] || e.stamp != f->stamp[e.v])
      continue;
    int from_over = f->load[l->slot[e.v]] > f->cap;
    if (f->load[e.to] + l->work[e.v] > (from_over ? f->cap : f->capx) ||
        !fm_affordable(f, e.v, e.to) ||
        from_over != (e.gain >= 0.5 * f->boost)) {
      f->stamp[e.v]++;
      *rc = fm_push_best(f, e.v);
      continue;
    }
    if (from_over)
      e.gain -= f->boost;
    int was_over = f->load[e.to] > f->cap;
    f->mv_v[nmv] = e.v;
    f->mv_from[nmv++] = l->slot[e.v];
    f->locked[e.v] = 1;
    fm_move(f, e.v, e.to);
    cum += e.gain;
    if (!was_over && f->load[e.to] > f->cap &&
        f->xs[e.to + 1] - f->xs[e.to] <= OVERFILL_SCAN_MAX)
      *rc = fm_overfilled(f, e.to);
    if (f->excess < bestex - exeps ||
        (f->excess <= bestex + exeps && cum > bestcum + eps)) {
      bestcum = cum;
      bestex = f->excess < bestex ? f->excess : bestex;
      bestmv = nmv;
    }
    for (int64_t i = l->xadj[e.v]; i < l->xadj[e.v + 1] && !*rc; i++) {
      int32_t u = l->adj[i];
      if (!f->locked[u]) {
        f->stamp[u]++;
        *rc = fm_push_best(f, u);
      }
    }
  }
  while (nmv > bestmv) {
    nmv--;
    fm_move(f, f->mv_v[nmv], f->mv_from[nmv]);
  }
  return bestcum;
}

/* FM passes on level \a l until one saves (almost) nothing. */
static int fm_level(fm_t *f, lvl_t *l, double tol) {
  f->l = l;
  double maxw = 0;
  for (int64_t v = 0; v < l->n; v++)
    if (l->work[v] > maxw)
      maxw = l->work[v];
  f->capx = f->cap + maxw;
  /* above any gain: 4 x the largest cost a vertex can have */
  double big = 0;
  for (int64_t v = 0; v < l->n; v++) {
    double c = l->mig[v];
    for (int64_t i = l->xadj[v]; i < l->xadj[v + 1]; i++)
      c += l->w[i];
    if (c > big)
      big = c;
  }
  f->boost = 4 * big * f->dmax + 1;
  int rc = 0;
  for (int pass = 0; pass < FM_PASSES && !rc; pass++)
    if (fm_pass(f, tol, &rc) <= tol)
      break;
  return rc;
}

/* ---- driver ------------------------------------------------------------------ */

/* The levels and everything the FM passes share. */
typedef struct {
  lvl_t lev[ML_MAX_LEVELS];
  int nlev;
  fm_t f;
  map__dist_t dt;
  int32_t *mate;
  int64_t *pos;
  void *blk; /* holds f's scratch, mate and pos */
} ml_t;

static void ml_free(ml_t *m) {
  for (int k = 0; k < m->nlev; k++)
    lvl_free(&m->lev[k]);
  free(m->blk);
  free(m->f.heap);
  free(m->dt.t);
}

/* Carves \a cnt elements of \a size bytes out of *p. */
static void *carve(char **p, size_t cnt, size_t size) {
  void *r = *p;
  *p += cnt * size;
  return r;
}

/* The scratch of every level, in one block (8-byte elements first), and
 * the heap, sized for a pass's entries in most cases (it can grow). */
static int ml_alloc(ml_t *m, const rta_graph_t *g, int nparts) {
  size_t n = (size_t)(g->nvert ? g->nvert : 1), ns = (size_t)nparts;
  size_t bytes = 2 * ns * sizeof(double) + (ns + 1) * sizeof(int64_t) +
                 n * sizeof(int64_t) + 2 * ns * sizeof(int) +
                 6 * n * sizeof(int32_t) + n;
  char *p = m->blk = ballast__calloc(1, bytes);
  m->f.capheap = 4 * (int64_t)n + 1024;
  m->f.heap = ballast__malloc((size_t)m->f.capheap * sizeof *m->f.heap);
  if (!p || !m->f.heap)
    return BALLAST_ENOMEM;
  m->f.load = carve(&p, ns, sizeof(double));
  m->f.conn = carve(&p, ns, sizeof(double));
  m->f.xs = carve(&p, ns + 1, sizeof(int64_t));
  m->pos = carve(&p, n, sizeof(int64_t));
  m->f.mark = carve(&p, ns, sizeof(int));
  m->f.cand = carve(&p, ns, sizeof(int));
  m->f.stamp = carve(&p, n, sizeof(uint32_t));
  m->f.mv_v = carve(&p, n, sizeof(int32_t));
  m->f.mv_from = carve(&p, n, sizeof(int32_t));
  m->f.vs = carve(&p, n, sizeof(int32_t));
  m->mate = carve(&p, 2 * n, sizeof(int32_t)); /* also coarsen's mem */
  m->f.locked = carve(&p, n, 1);
  for (size_t v = 0; v < n; v++)
    m->pos[v] = -1;
  return 0;
}

/* Coarsens level by level until a matching no longer shrinks the graph. */
static int ml_coarsen(ml_t *m, double maxw) {
  while (m->nlev < ML_MAX_LEVELS) {
    lvl_t *f = &m->lev[m->nlev - 1];
    int64_t nc = match(f, maxw, m->mate);
    if (nc > (1 - COARSEN_MIN_GAIN) * f->n)
      return 0;
    int rc = coarsen(f, nc, &m->lev[m->nlev++], m->mate, m->pos);
    if (rc)
      return rc;
  }
  return 0;
}

/* Level 0, the loads, the bounds and the largest distance; the coarser
 * levels. The parts (slots, or nodes) and their distances are m->dt's.
 * \a total gets the total work. */
static int ml_setup(ml_t *m, const rta_graph_t *g, const int64_t *prev,
                    double steps, double balrat, const int64_t *slot,
                    double *total) {
  int ns = m->dt.ns;
  int rc = ml_alloc(m, g, ns);
  m->nlev = 1;
  if (rc || (rc = lvl_fine(&m->lev[0], g, prev, 1.0 / (steps > 0 ? steps : 1),
                           slot)))
    return rc;
  *total = 0;
  for (int64_t v = 0; v < g->nvert; v++) {
    m->f.load[slot[v]] += g->work[v];
    *total += g->work[v];
    if (prev && prev[v] >= 0 && prev[v] != slot[v]) {
      m->f.tasks++;
      m->f.bytes += g->state[v];
    }
  }
  m->f.dt = &m->dt;
  for (int a = 0; a < ns; a++)
    for (int b = 0; b < (m->dt.t ? ns : 1); b++)
      if (map__dist(&m->dt, a, b) > m->f.dmax)
        m->f.dmax = map__dist(&m->dt, a, b);
  if (!m->dt.t)
    m->f.dmax *= 2; /* d(a, b) <= d(a, 0) + d(0, b) */
  m->f.cap = (1 + balrat) * *total / ns;
  for (int s = 0; s < ns; s++)
    m->f.excess += over(&m->f, m->f.load[s]);
  return ml_coarsen(m, *total / ns / CLUSTER_FRAC);
}

/* The multilevel FM on parts whose distances m->dt holds (set by the
 * caller; freed here with everything else): slots, or nodes. */
static int refine_parts(ml_t *m0, const rta_graph_t *g, const int64_t *prev,
                        double steps, double balrat, int flat,
                        const map__budget_t *bud, int64_t *slot) {
  ml_t m = *m0;
  m.f.flat = flat;
  m.f.bud = bud;
  double total = 0;
  int rc = ml_setup(&m, g, prev, steps, balrat, slot, &total);
  /* a tolerance in the unit of the costs, against rounding */
  double tol = 1e-12 * (total + 1);
  for (int64_t v = 0; v < g->nvert && !rc; v++)
    tol += 1e-12 * (m.lev[0].mig[v] + (double)(g->xadj[v + 1] - g->xadj[v]));
  for (int k = m.nlev - 1; k >= 0 && !rc; k--) {
    lvl_t *l = &m.lev[k];
    if (k < m.nlev - 1)
      for (int64_t v = 0; v < l->n; v++)
        l->slot[v] = m.lev[k + 1].slot[l->cmap[v]];
    rc = fm_level(&m.f, l, tol);
  }
  if (!rc)
    for (int64_t v = 0; v < g->nvert; v++)
      slot[v] = m.lev[0].slot[v];
  ml_free(&m);
  return rc;
}

int map__refine_ml(const rta_graph_t *g, const rta_hw_t *hw,
                   const int64_t *prev, double steps, double balrat, int flat,
                   const map__budget_t *bud, int64_t *slot) {
  ml_t m;
  memset(&m, 0, sizeof m);
  int rc = map__dist_init(&m.dt, hw);
  if (rc) {
    free(m.dt.t);
    return rc;
  }
  return refine_parts(&m, g, prev, steps, balrat, flat, bud, slot);
}

/* ---- node level ------------------------------------------------------------- */

/* Nodes with the same number of slots, at least two, few enough for a
 * table of their distances? Then \a d gets that table (its parts are the
 * nodes); 1, 0 (no node level), or BALLAST_ENOMEM. */
static int node_dist(const rta_hw_t *hw, map__dist_t *d) {
  int nn = hw->nnodes, per = nn ? hw->node_xslot[1] - hw->node_xslot[0] : 0;
  if (nn < 2 || nn > MAP__DIST_TABLE_MAX)
    return 0;
  for (int k = 0; k < nn; k++)
    if (hw->node_xslot[k + 1] - hw->node_xslot[k] != per)
      return 0;
  *d = (map__dist_t){.hw = hw, .ns = nn};
  d->t = ballast__malloc((size_t)nn * nn * sizeof *d->t);
  if (!d->t)
    return BALLAST_ENOMEM;
  for (int a = 0; a < nn; a++)
    for (int b = 0; b < nn; b++)
      d->t[(size_t)a * nn + b] = a == b ? 0 : (float)map__hw_node_dist(hw, a, b);
  return 1;
}

/* The slot in node \a k for a task v that the node level moved there: its
 * old slot when it is there, else the slot of \a k with the most bytes to
 * v's neighbours, else the least loaded slot of \a k. \a acc: scratch
 * (nslots, zero, so again on return). */
static int64_t node_slot(const rta_graph_t *g, const rta_hw_t *hw,
                         const int64_t *prev, const int64_t *slot,
                         const double *load, int k, int64_t v, double *acc) {
  if (prev && prev[v] >= 0 && hw->slot_node[prev[v]] == k)
    return prev[v];
  int64_t best = -1;
  for (int64_t i = g->xadj[v]; i < g->xadj[v + 1]; i++) {
    int64_t s = slot[g->adj[i]];
    if (hw->slot_node[s] != k)
      continue;
    acc[s] += g->adjw[i];
    if (best < 0 || acc[s] > acc[best] || (acc[s] == acc[best] && s < best))
      best = s;
  }
  for (int64_t i = g->xadj[v]; i < g->xadj[v + 1]; i++)
    acc[slot[g->adj[i]]] = 0;
  if (best >= 0)
    return best;
  for (int i = hw->node_xslot[k]; i < hw->node_xslot[k + 1]; i++) {
    int s = hw->node_slot[i];
    if (best < 0 || load[s] < load[best])
      best = s;
  }
  return best;
}

/* Budget of the node level: \a bud less what \a slot moves inside nodes
 * (those moves stay), in \a nb. */
static void node_budget(const rta_graph_t *g, const rta_hw_t *hw,
                        const int64_t *prev, const int64_t *slot,
                        const map__budget_t *bud, map__budget_t *nb) {
  *nb = *bud;
  for (int64_t v = 0; v < g->nvert; v++)
    if (prev[v] >= 0 && prev[v] != slot[v] &&
        hw->slot_node[prev[v]] == hw->slot_node[slot[v]]) {
      nb->tasks--;
      nb->bytes -= g->state[v];
    }
}

int map__refine_nodes(const rta_graph_t *g, const rta_hw_t *hw,
                      const int64_t *prev, double steps, double balrat,
                      const map__budget_t *bud, int64_t *slot) {
  ml_t m;
  memset(&m, 0, sizeof m);
  int rc = prev ? node_dist(hw, &m.dt) : 0;
  if (rc <= 0)
    return rc;
  int64_t n = g->nvert;
  size_t nn = (size_t)(n ? n : 1);
  int64_t *node = ballast__malloc(2 * nn * sizeof *node);
  double *load = ballast__calloc((size_t)hw->nslots * 2, sizeof *load);
  if (!node || !load) {
    free(node);
    free(load);
    free(m.dt.t);
    return BALLAST_ENOMEM;
  }
  int64_t *nprev = node + nn;
  for (int64_t v = 0; v < n; v++) {
    node[v] = hw->slot_node[slot[v]];
    nprev[v] = prev[v] >= 0 ? hw->slot_node[prev[v]] : -1;
  }
  map__budget_t nb;
  node_budget(g, hw, prev, slot, bud, &nb);
  rc = refine_parts(&m, g, nprev, steps, balrat, 1, &nb, node);
  if (!rc) {
    /* the tasks that stay on their node keep their slot; the others take
     * one in their new node */
    for (int64_t v = 0; v < n; v++)
      if (node[v] == hw->slot_node[slot[v]])
        load[slot[v]] += g->work[v];
    for (int64_t v = 0; v < n; v++)
      if (node[v] != hw->slot_node[slot[v]]) {
        slot[v] = node_slot(g, hw, prev, slot, load, (int)node[v], v,
                            load + hw->nslots);
        load[slot[v]] += g->work[v];
      }
  }
  free(node);
  free(load);
  return rc;
}

/* ---- rebalance inside nodes -------------------------------------------------- */

/* Cost of task v on slot b: its bytes x distance to its neighbours' slots,
 * plus \a m (its flat migration price) when b is not its old slot. */
static double in_node_cost(const rta_graph_t *g, const map__dist_t *dt,
                           const int64_t *prev, const int64_t *slot, double m,
                           int64_t v, int b) {
  double c = prev && prev[v] >= 0 && prev[v] != b ? m : 0;
  for (int64_t i = g->xadj[v]; i < g->xadj[v + 1]; i++)
    c += g->adjw[i] * map__dist(dt, b, (int)slot[g->adj[i]]);
  return c;
}

/* The cheapest slot of v's node other than its own with room for it under
 * \a cap (-1: none), the rise of v's cost in \a rise. */
static int in_node_best(const rta_graph_t *g, const rta_hw_t *hw,
                        const map__dist_t *dt, const int64_t *prev,
                        const int64_t *slot, const double *load, double cap,
                        double m, int64_t v, double *rise) {
  int a = (int)slot[v], k = hw->slot_node[a], to = -1;
  double base = in_node_cost(g, dt, prev, slot, m, v, a), best = 0;
  for (int i = hw->node_xslot[k]; i < hw->node_xslot[k + 1]; i++) {
    int b = hw->node_slot[i];
    if (b == a || load[b] + g->work[v] > cap)
      continue;
    double c = in_node_cost(g, dt, prev, slot, m, v, b);
    if (to < 0 || c < best) {
      best = c;
      to = b;
    }
  }
  *rise = best - base;
  return to;
}

/* Largest slot distance (2 x the largest from slot 0 without a table). */
static double dist_max(const map__dist_t *dt) {
  double d = 0;
  for (int a = 0; a < (dt->t ? dt->ns : 1); a++)
    for (int b = 0; b < dt->ns; b++)
      if (map__dist(dt, a, b) > d)
        d = map__dist(dt, a, b);
  return dt->t ? d : 2 * d;
}

/* What the rebalance inside nodes works with. */
typedef struct {
  const rta_graph_t *g;
  const rta_hw_t *hw;
  map__dist_t dt;
  const int64_t *prev;
  const map__budget_t *bud; /* or NULL */
  double cap, inv;          /* the bound; largest distance / steps */
  double *load;             /* nslots */
  int64_t *slot;
  int64_t tasks;            /* tasks away from their old slot */
  double bytes;             /* and their state bytes */
  uint32_t *stamp;          /* nvert: bumped when a task's best move changes */
  fm_t f;                   /* its heap only */
} rebal_t;

/* Does moving v from its slot to b keep the migration within the budget?
 * Then the tasks and bytes away from their old slot are updated. */
static int rebal_take(rebal_t *r, int64_t v, int b) {
  if (!r->prev || r->prev[v] < 0)
    return 1;
  int d = (b != r->prev[v]) - (r->slot[v] != r->prev[v]);
  if (d > 0 && r->bud &&
      (r->tasks + d > r->bud->tasks ||
       r->bytes + d * r->g->state[v] > r->bud->bytes))
    return 0;
  r->tasks += d;
  r->bytes += d * r->g->state[v];
  return 1;
}

/* Pushes v's cheapest move inside its node (gain: minus its rise). */
static int rebal_push(rebal_t *r, int64_t v) {
  double rise;
  int b = in_node_best(r->g, r->hw, &r->dt, r->prev, r->slot, r->load, r->cap,
                       r->g->state[v] * r->inv, v, &rise);
  if (b < 0)
    return 0;
  return heap_push(&r->f, (hent_t){-rise, (int32_t)v, b, r->stamp[v]});
}

/* Drains slot s down to the bound into the other slots of its node,
 * cheapest rise first; a task's neighbours in s are priced again after it
 * moves. \a vs[0 .. nv): the tasks of s. */
static int rebal_drain(rebal_t *r, int s, const int32_t *vs, int64_t nv) {
  const rta_graph_t *g = r->g;
  int rc = 0;
  r->f.nheap = 0;
  for (int64_t i = 0; i < nv && !rc; i++)
    rc = rebal_push(r, vs[i]);
  while (!rc && r->f.nheap && r->load[s] > r->cap) {
    hent_t e = heap_pop(&r->f);
    int64_t v = e.v;
    if (e.stamp != r->stamp[v] || r->slot[v] != s)
      continue;
    double rise;
    int b = in_node_best(g, r->hw, &r->dt, r->prev, r->slot, r->load, r->cap,
                         g->state[v] * r->inv, v, &rise);
    if (b >= 0 && -rise != e.gain) { /* the loads changed its best move */
      rc = heap_push(&r->f, (hent_t){-rise, (int32_t)v, b, r->stamp[v]});
      continue;
    }
    if (b < 0 || !rebal_take(r, v, b))
      continue;
    r->load[s] -= g->work[v];
    r->load[b] += g->work[v];
    r->slot[v] = b;
    for (int64_t i = g->xadj[v]; i < g->xadj[v + 1] && !rc; i++) {
      int64_t u = g->adj[i];
      if (r->slot[u] == s) {
        r->stamp[u]++;
        rc = rebal_push(r, u);
      }
    }
  }
  return rc;
}

/* The tasks of each slot, vs[xs[s] .. xs[s + 1]); the loads, the bound and
 * the migration of r->slot. */
static void rebal_setup(rebal_t *r, double balrat, int64_t *xs, int32_t *vs) {
  const rta_graph_t *g = r->g;
  int ns = r->hw->nslots;
  double total = 0;
  for (int64_t v = 0; v < g->nvert; v++) {
    int64_t s = r->slot[v];
    r->load[s] += g->work[v];
    total += g->work[v];
    xs[s + 1]++;
    if (r->prev && r->prev[v] >= 0 && r->prev[v] != s) {
      r->tasks++;
      r->bytes += g->state[v];
    }
  }
  for (int s = 0; s < ns; s++)
    xs[s + 1] += xs[s];
  for (int64_t v = 0; v < g->nvert; v++)
    vs[xs[r->slot[v]]++] = (int32_t)v;
  for (int s = ns; s > 0; s--)
    xs[s] = xs[s - 1];
  xs[0] = 0;
  r->cap = (1 + balrat) * total / ns;
}

int map__rebalance_nodes(const rta_graph_t *g, const rta_hw_t *hw,
                         const int64_t *prev, double steps, double balrat,
                         const map__budget_t *bud, int64_t *slot) {
  int ns = hw->nslots;
  size_t nn = (size_t)(g->nvert ? g->nvert : 1);
  rebal_t r = {.g = g, .hw = hw, .prev = prev, .bud = bud, .slot = slot};
  r.load = ballast__calloc((size_t)ns, sizeof *r.load);
  r.stamp = ballast__calloc(nn, sizeof *r.stamp);
  int64_t *xs = ballast__calloc((size_t)ns + 1, sizeof *xs);
  int32_t *vs = ballast__malloc(nn * sizeof *vs);
  int rc = !r.load || !r.stamp || !xs || !vs ? BALLAST_ENOMEM
                                              : map__dist_init(&r.dt, hw);
  if (!rc) {
    rebal_setup(&r, balrat, xs, vs);
    r.inv = dist_max(&r.dt) / (steps > 0 ? steps : 1);
  }
  /* a slot's tasks only leave it (nothing moves into a slot above cap) */
  for (int s = 0; s < ns && !rc; s++) {
    int k = hw->slot_node[s];
    if (r.load[s] > r.cap && xs[s + 1] > xs[s] &&
        hw->node_xslot[k + 1] - hw->node_xslot[k] <= REBALANCE_NODE_MAX)
      rc = rebal_drain(&r, s, vs + xs[s], xs[s + 1] - xs[s]);
  }
  free(r.load);
  free(r.stamp);
  free(xs);
  free(vs);
  free(r.dt.t);
  free(r.f.heap);
  return rc;
}
