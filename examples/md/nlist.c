/*
 * Verlet neighbour lists: the rebuild decision, periodic wrapping and cell
 * sorting at a rebuild, the list build of a block and the pair kernel.
 *
 * A list holds the pairs within rlist = rc + skin at its build. It stays
 * exact (every pair within rc is in it) as long as no particle moved more
 * than skin / 2 since the build: two particles then approach each other by
 * at most skin. md_rebuild_due checks that bound on every rank and decides
 * together, so every rank rebuilds at the same steps; a rebuild wraps,
 * migrates, sorts, exchanges the full halo and marks the new reference
 * positions (main.c), and md_forces rebuilds each block's list.
 *
 * Inside a block the owned-owned pairs form a half list (j > i) and the
 * kernel applies Newton's third law; pairs with ghosts are computed from
 * both sides (md.h states the rule).
 */
#include "md.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* "omp simd" with a reduction where the compiler takes -fopenmp-simd
 * (CMakeLists.txt defines MD_OMP_SIMD): it lets the compiler reorder the
 * sums of a pair loop into vector lanes without -ffast-math. */
#ifdef MD_OMP_SIMD
#define MD_PRAGMA(x) _Pragma(#x)
#define MD_SIMD_REDUCE(a, b, c, d) MD_PRAGMA(omp simd reduction(+ : a, b, c, d))
#else
#define MD_SIMD_REDUCE(a, b, c, d)
#endif

/* First capacity of the lists and scratch arrays (doubled after). */
#define FIRST_CAP 256

static int grow_int(int **p, int *cap, int need) {
  if (need <= *cap) return 0;
  int nc = *cap ? *cap : FIRST_CAP;
  while (nc < need) nc *= 2;
  int *q = realloc(*p, sizeof(int) * (size_t)nc);
  if (!q) return BALLAST_ENOMEM;
  *p = q;
  *cap = nc;
  return 0;
}

void md_nlist_free(md_nlist_t *nl) {
  free(nl->own_off); free(nl->gh_off); free(nl->own_j); free(nl->gh_j);
  memset(nl, 0, sizeof *nl);
}

int md_rebuild_due(md_sim_t *s, int *due) {
  const double lim = 0.25 * s->p.skin * s->p.skin;  /* (skin / 2)^2 */
  int mine = s->rebuild_due;
  for (int k = 0; !mine && k < s->nmine; k++) {
    const md_block_t *b = &s->blocks[s->mine[k]];
    for (int i = 0; i < b->n; i++) {
      double dx = b->x[i] - b->x0[i], dy = b->y[i] - b->y0[i], dz = b->z[i] - b->z0[i];
      if (dx * dx + dy * dy + dz * dz > lim) { mine = 1; break; }
    }
  }
  if (MPI_Allreduce(&mine, due, 1, MPI_INT, MPI_MAX, s->comm) != MPI_SUCCESS)
    return BALLAST_EMPI;
  return 0;
}

void md_wrap(md_sim_t *s) {
  if (!s->periodic) return;  /* walls reflect every step (md_drift) */
  for (int k = 0; k < s->nmine; k++) {
    md_block_t *b = &s->blocks[s->mine[k]];
    double *xs[MD_DIM] = {b->x, b->y, b->z};
    for (int d = 0; d < MD_DIM; d++) {
      double L = s->L[d], *x = xs[d];
      for (int i = 0; i < b->n; i++) {
        if (x[i] < 0.0) x[i] += L;
        else if (x[i] >= L) x[i] -= L;
      }
    }
  }
}

void md_mark_build(md_sim_t *s, int forced) {
  for (int k = 0; k < s->nmine; k++) {
    md_block_t *b = &s->blocks[s->mine[k]];
    size_t n = sizeof(double) * (size_t)b->n;
    if (!n) continue;
    memcpy(b->x0, b->x, n);
    memcpy(b->y0, b->y, n);
    memcpy(b->z0, b->z, n);
  }
  s->rebuild_due = 0;
  s->kst.rebuilds++;
  if (forced) s->kst.forced++;
}

/* The bins of block b: the block's cells and the one-cell ghost layer
 * around them, cut per dimension into as many bins as fit with an edge of
 * at least rlist / 2 (a margin against rounding), so a particle's list
 * partners lie within REACH bins of its own. Finer bins than the cells:
 * the stencil volume, hence the distance checks of a build, shrinks. */
enum { REACH = 2 };
typedef struct {
  double o[MD_DIM], ib[MD_DIM];  /* origin and inverse bin edge */
  int nb[MD_DIM];
  int nbin;
} bins_t;

static void block_bins(const md_sim_t *s, int b, bins_t *g) {
  int bc[MD_DIM];
  md_block_coords(s, b, &bc[0], &bc[1], &bc[2]);
  g->nbin = 1;
  for (int d = 0; d < MD_DIM; d++) {
    int lo = s->blo[d][bc[d]], ncell = s->blo[d][bc[d] + 1] - lo + 2;
    double width = ncell * s->cs[d];
    int nb = (int)floor(width / (0.5 * s->rlist * (1.0 + 1e-12)));
    g->o[d] = (lo - 1) * s->cs[d];
    g->nb[d] = nb > 2 * REACH + 1 ? nb : 2 * REACH + 1;
    g->ib[d] = g->nb[d] / width;
    g->nbin *= g->nb[d];
  }
}

/* Bin of a position: a ghost's is clamped to the grid, an owned
 * particle's to the bins at least REACH from its edges, so its stencil stays
 * inside the grid. The clamp loses no partner: an owned particle in the
 * ghost layer's bins (the one-cell layer may be thinner than REACH bins) has
 * all its partners within the grid, hence in the shifted stencil. Distances
 * are judged on the positions; the bins only choose the candidates. */
static int bin_of(const bins_t *g, double x, double y, double z, int owned) {
  const double p[MD_DIM] = {x, y, z};
  int c = 0, m = owned ? REACH : 0;
  for (int d = 0; d < MD_DIM; d++) {
    int q = (int)floor((p[d] - g->o[d]) * g->ib[d]);
    q = q < m ? m : q >= g->nb[d] - m ? g->nb[d] - m - 1 : q;
    c = c * g->nb[d] + q;
  }
  return c;
}

static int scratch_reserve(md_scratch_t *w, int nbin, int np) {
  if (nbin + 1 > w->ccap) {
    int *p = realloc(w->start, sizeof(int) * (size_t)(nbin + 1));
    if (!p) return BALLAST_ENOMEM;
    w->start = p;
    if (!(p = realloc(w->gstart, sizeof(int) * (size_t)(nbin + 1)))) return BALLAST_ENOMEM;
    w->gstart = p;
    w->ccap = nbin + 1;
  }
  if (np > w->pcap) {
    int nc = w->pcap ? w->pcap : FIRST_CAP;
    while (nc < np) nc *= 2;
    void *a;
    if (!(a = realloc(w->pc, sizeof(int) * (size_t)nc))) return BALLAST_ENOMEM;
    w->pc = a;
    if (!(a = realloc(w->sidx, sizeof(int) * (size_t)nc))) return BALLAST_ENOMEM;
    w->sidx = a;
    if (!(a = realloc(w->perm, sizeof(int) * (size_t)nc))) return BALLAST_ENOMEM;
    w->perm = a;
    double **arr[] = {&w->sx, &w->sy, &w->sz, &w->tmp};
    for (size_t k = 0; k < sizeof arr / sizeof arr[0]; k++) {
      if (!(a = realloc(*arr[k], sizeof(double) * (size_t)nc))) return BALLAST_ENOMEM;
      *arr[k] = a;
    }
    w->pcap = nc;
  }
  return 0;
}

void md_scratch_free(md_scratch_t *w) {
  free(w->start); free(w->gstart); free(w->pc); free(w->sidx);
  free(w->sx); free(w->sy); free(w->sz);
  free(w->perm); free(w->tmp);
  memset(w, 0, sizeof *w);
}

/* Counting sort of the keys pc[0..m) into start[0..nbin] (start[c] = first
 * sorted index of bin c); order[k] = the item at sorted position k. Stable:
 * the items of a bin keep their order. */
static void counting_sort(const int *pc, int m, int nbin, int *start, int *order) {
  memset(start, 0, sizeof(int) * (size_t)(nbin + 1));
  for (int i = 0; i < m; i++) start[pc[i] + 1]++;
  for (int c = 0; c < nbin; c++) start[c + 1] += start[c];
  /* start[c] serves as the fill cursor, then is restored by a shift */
  for (int i = 0; i < m; i++) order[start[pc[i]]++] = i;
  for (int c = nbin; c > 0; c--) start[c] = start[c - 1];
  start[0] = 0;
}

static int sort_block(md_sim_t *s, int b) {
  md_block_t *blk = &s->blocks[b];
  md_scratch_t *w = &s->scr;
  bins_t g;
  int n = blk->n;
  block_bins(s, b, &g);
  blk->nl.valid = 0;
  if (n < 2) return 0;
  if (scratch_reserve(w, g.nbin, n)) return BALLAST_ENOMEM;
  for (int i = 0; i < n; i++) w->pc[i] = bin_of(&g, blk->x[i], blk->y[i], blk->z[i], 1);
  counting_sort(w->pc, n, g.nbin, w->start, w->perm);
  double *arr[9] = {blk->x, blk->y, blk->z, blk->vx, blk->vy, blk->vz,
                    blk->fx, blk->fy, blk->fz};
  for (int a = 0; a < 9; a++) {
    for (int k = 0; k < n; k++) w->tmp[k] = arr[a][w->perm[k]];
    memcpy(arr[a], w->tmp, sizeof(double) * (size_t)n);
  }
  int64_t *ids = (int64_t *)(void *)w->tmp;  /* same size as a double */
  for (int k = 0; k < n; k++) ids[k] = blk->id[w->perm[k]];
  memcpy(blk->id, ids, sizeof(int64_t) * (size_t)n);
  return 0;
}

int md_sort_blocks(md_sim_t *s) {
  for (int k = 0; k < s->nmine; k++) {
    int rc = sort_block(s, s->mine[k]);
    if (rc) return rc;
  }
  return 0;
}

/* Owned bins into start[] (the owned particles must be in bin order: the
 * half list relies on it) and the ghosts sorted by bin into the scratch
 * (positions sx/sy/sz, ghost index sidx, gstart[]). */
static int bin_block(md_sim_t *s, int b, const bins_t *g) {
  md_block_t *blk = &s->blocks[b];
  md_scratch_t *w = &s->scr;
  int n = blk->n, ng = blk->ng;
  if (scratch_reserve(w, g->nbin, n + ng)) return BALLAST_ENOMEM;
  memset(w->start, 0, sizeof(int) * (size_t)(g->nbin + 1));
  for (int i = 0; i < n; i++) {
    int c = bin_of(g, blk->x[i], blk->y[i], blk->z[i], 1);
    if (i && c < w->pc[i - 1]) {
      fprintf(stderr, "ballast-md: rank %d: block %d is not sorted by bin at a list build "
              "(md_sort_blocks must precede md_halo_exchange)\n", s->rank, b);
      return BALLAST_ESTATE;
    }
    w->pc[i] = c;
    w->start[c + 1]++;
  }
  for (int c = 0; c < g->nbin; c++) w->start[c + 1] += w->start[c];
  int *gpc = w->pc + n;
  for (int j = 0; j < ng; j++) gpc[j] = bin_of(g, blk->gx[j], blk->gy[j], blk->gz[j], 0);
  counting_sort(gpc, ng, g->nbin, w->gstart, w->perm);
  for (int k = 0; k < ng; k++) {
    int j = w->perm[k];
    w->sx[k] = blk->gx[j]; w->sy[k] = blk->gy[j]; w->sz[k] = blk->gz[j];
    w->sidx[k] = j;
  }
  return 0;
}

/* Candidates of a particle in bin c: the owned ones after i in bin order
 * (half stencil: rows after c's row, c's row from i + 1) into oj, and the
 * ghosts of every stencil bin into gj, both within rlist. Returns the
 * distance checks made. */
static int list_one(const md_block_t *blk, const md_scratch_t *w, const bins_t *g, int i,
                    int c, double rl2, int *oj, int *no, int *gj, int *ngh) {
  const int plane = g->nb[1] * g->nb[2];
  const double xi = blk->x[i], yi = blk->y[i], zi = blk->z[i];
  const double *x = blk->x, *y = blk->y, *z = blk->z;
  const double *sx = w->sx, *sy = w->sy, *sz = w->sz;
  int checks = 0, a = *no, q = *ngh;
  for (int dx = -REACH; dx <= REACH; dx++)
    for (int dy = -REACH; dy <= REACH; dy++) {
      /* the bins dz = -REACH..REACH of a row are contiguous in bin order */
      int row = c + dx * plane + dy * g->nb[2];
      int after = dx > 0 || (dx == 0 && dy > 0);
      int j0 = after ? w->start[row - REACH] : i + 1;
      int j1 = (after || (dx == 0 && dy == 0)) ? w->start[row + REACH + 1] : j0;
      /* branch-free appends: about a quarter of the candidates are kept, a
       * branch on the distance would be mispredicted (the caller reserved
       * room for every candidate, so the store past the end is in bounds) */
      for (int j = j0; j < j1; j++) {
        double rx = xi - x[j], ry = yi - y[j], rz = zi - z[j];
        oj[a] = j;
        a += rx * rx + ry * ry + rz * rz < rl2;
      }
      int k0 = w->gstart[row - REACH], k1 = w->gstart[row + REACH + 1];
      for (int k = k0; k < k1; k++) {
        double rx = xi - sx[k], ry = yi - sy[k], rz = zi - sz[k];
        gj[q] = w->sidx[k];
        q += rx * rx + ry * ry + rz * rz < rl2;
      }
      checks += (j1 - j0) + (k1 - k0);
    }
  *no = a;
  *ngh = q;
  return checks;
}

int md_nlist_build(md_sim_t *s, int b) {
  md_block_t *blk = &s->blocks[b];
  md_nlist_t *nl = &blk->nl;
  md_scratch_t *w = &s->scr;
  bins_t g;
  int n = blk->n, rc;
  block_bins(s, b, &g);
  if ((rc = bin_block(s, b, &g))) return rc;
  if (n + 1 > nl->offcap) {
    int cap = nl->offcap;
    if ((rc = grow_int(&nl->own_off, &cap, n + 1))) return rc;
    cap = nl->offcap;
    if ((rc = grow_int(&nl->gh_off, &cap, n + 1))) return rc;
    nl->offcap = cap;
  }
  const double rl2 = s->rlist * s->rlist;
  const int plane = g.nb[1] * g.nb[2];
  int no = 0, ngh = 0;
  double checks = 0;
  nl->own_off[0] = nl->gh_off[0] = 0;
  for (int i = 0; i < n; i++) {
    int c = w->pc[i], on = 0, gn = 0;
    /* room for every candidate of the stencil */
    for (int dx = -REACH; dx <= REACH; dx++)
      for (int dy = -REACH; dy <= REACH; dy++) {
        int row = c + dx * plane + dy * g.nb[2];
        on += w->start[row + REACH + 1] - w->start[row - REACH];
        gn += w->gstart[row + REACH + 1] - w->gstart[row - REACH];
      }
    if ((rc = grow_int(&nl->own_j, &nl->ojcap, no + on)) ||
        (rc = grow_int(&nl->gh_j, &nl->gjcap, ngh + gn)))
      return rc;
    checks += list_one(blk, w, &g, i, c, rl2, nl->own_j, &no, nl->gh_j, &ngh);
    nl->own_off[i + 1] = no;
    nl->gh_off[i + 1] = ngh;
  }
  nl->valid = 1;
  s->kst.list_atoms += n;
  s->kst.list_entries += no + ngh;
  s->kst.build_checks += checks;
  return 0;
}

/* The pair kernel of one block; eflag (a constant at each call site) says
 * whether to sum the potential energy. */
static inline double kernel(md_block_t *blk, const int eflag) {
  const double rc2 = MD_RC * MD_RC;
  const double irc6 = 1.0 / (rc2 * rc2 * rc2);
  const double ucut = 4.0 * irc6 * (irc6 - 1.0);
  const md_nlist_t *nl = &blk->nl;
  const int n = blk->n;
  const double *restrict x = blk->x, *restrict y = blk->y, *restrict z = blk->z;
  const double *restrict gx = blk->gx, *restrict gy = blk->gy, *restrict gz = blk->gz;
  double *restrict fx = blk->fx, *restrict fy = blk->fy, *restrict fz = blk->fz;
  const int *restrict oj = nl->own_j, *restrict gj = nl->gh_j;
  double eo = 0.0, eg = 0.0;
  if (n) {
    memset(fx, 0, sizeof(double) * (size_t)n);
    memset(fy, 0, sizeof(double) * (size_t)n);
    memset(fz, 0, sizeof(double) * (size_t)n);
  }
  for (int i = 0; i < n; i++) {
    const double xi = x[i], yi = y[i], zi = z[i];
    double fxi = 0, fyi = 0, fzi = 0;
    /* owned pairs j > i: the force on j too (Newton's third law). The
     * stores to f[j] keep this loop scalar; measured, a vectorised
     * two-pass form (forces into a chunk, then scattered) was no faster
     * with 2-lane SSE2 gathers. */
    for (int k = nl->own_off[i]; k < nl->own_off[i + 1]; k++) {
      const int j = oj[k];
      double rx = xi - x[j], ry = yi - y[j], rz = zi - z[j];
      double r2 = rx * rx + ry * ry + rz * rz;
      if (r2 >= rc2) continue;
      double ir2 = 1.0 / r2, ir6 = ir2 * ir2 * ir2;
      double ff = 48.0 * ir6 * (ir6 - 0.5) * ir2;
      fxi += ff * rx; fyi += ff * ry; fzi += ff * rz;
      fx[j] -= ff * rx; fy[j] -= ff * ry; fz[j] -= ff * rz;
      if (eflag) eo += 4.0 * ir6 * (ir6 - 1.0) - ucut;
    }
    /* ghost pairs: the force on i only, half the energy (the ghost's own
     * block computes the other half); branch-free, no store to memory */
    double egi = 0;
    const int g0 = nl->gh_off[i], g1 = nl->gh_off[i + 1];
    MD_SIMD_REDUCE(fxi, fyi, fzi, egi)
    for (int k = g0; k < g1; k++) {
      const int g = gj[k];
      double rx = xi - gx[g], ry = yi - gy[g], rz = zi - gz[g];
      double r2 = rx * rx + ry * ry + rz * rz;
      int in = r2 < rc2;
      double ir2 = in ? 1.0 / r2 : 0.0, ir6 = ir2 * ir2 * ir2;
      double ff = 48.0 * ir6 * (ir6 - 0.5) * ir2;
      fxi += ff * rx; fyi += ff * ry; fzi += ff * rz;
      if (eflag) egi += in ? 4.0 * ir6 * (ir6 - 1.0) - ucut : 0.0;
    }
    eg += egi;
    fx[i] += fxi; fy[i] += fyi; fz[i] += fzi;
  }
  return eo + 0.5 * eg;
}

double md_nlist_forces(md_block_t *blk, int eflag) {
  return eflag ? kernel(blk, 1) : kernel(blk, 0);
}
