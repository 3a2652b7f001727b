/*
 * Physics: Lennard-Jones forces through linked cells (per block, over the
 * block's own particles and its ghosts), and the velocity Verlet kick and
 * drift with periodic or reflecting boundaries.
 *
 * The potential is U(r) = 4 (r^-12 - r^-6) - U_c for r < rc = 2.5 and 0
 * beyond, U_c = 4 (rc^-12 - rc^-6): truncated and shifted, so the energy is
 * continuous at the cutoff. Each block computes the full force on each of
 * its particles (both members of a pair compute it, no Newton's-third-law
 * sharing across blocks), which keeps a block's work independent of which
 * rank owns its neighbours; each pair energy is counted half per member.
 */
#include "md.h"

#include <ballast/common.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int scratch_reserve(md_scratch_t *w, int ncell, int np) {
  if (ncell + 1 > w->ccap) {
    int *p = realloc(w->start, sizeof(int) * (size_t)(ncell + 1));
    if (!p) return BALLAST_ENOMEM;
    w->start = p;
    w->ccap = ncell + 1;
  }
  if (np > w->pcap) {
    int nc = w->pcap ? w->pcap : 256;
    while (nc < np) nc *= 2;
    void *a = realloc(w->pc, sizeof(int) * (size_t)nc);
    if (!a) return BALLAST_ENOMEM;
    w->pc = a;
    if (!(a = realloc(w->sidx, sizeof(int) * (size_t)nc))) return BALLAST_ENOMEM;
    w->sidx = a;
    if (!(a = realloc(w->sx, sizeof(double) * (size_t)nc))) return BALLAST_ENOMEM;
    w->sx = a;
    if (!(a = realloc(w->sy, sizeof(double) * (size_t)nc))) return BALLAST_ENOMEM;
    w->sy = a;
    if (!(a = realloc(w->sz, sizeof(double) * (size_t)nc))) return BALLAST_ENOMEM;
    w->sz = a;
    w->pcap = nc;
  }
  return 0;
}

void md_scratch_free(md_scratch_t *w) {
  free(w->start); free(w->pc); free(w->sidx);
  free(w->sx); free(w->sy); free(w->sz);
  memset(w, 0, sizeof *w);
}

/* Forces on the particles of block b; returns its potential energy share. */
static int block_forces(md_sim_t *s, int b, double *epot) {
  md_block_t *blk = &s->blocks[b];
  md_scratch_t *w = &s->scr;
  int bc[MD_DIM], lo[MD_DIM], ext[MD_DIM];
  md_block_coords(s, b, &bc[0], &bc[1], &bc[2]);
  for (int d = 0; d < MD_DIM; d++) {
    lo[d] = s->blo[d][bc[d]];
    ext[d] = s->blo[d][bc[d] + 1] - lo[d] + 2;
  }
  int ncell = ext[0] * ext[1] * ext[2], n = blk->n, m = blk->n + blk->ng;
  if (scratch_reserve(w, ncell, m)) return BALLAST_ENOMEM;
  memset(w->start, 0, sizeof(int) * (size_t)(ncell + 1));
  for (int i = 0; i < n; i++) {
    int cx = md_cell_coord(s, 0, blk->x[i]) - lo[0] + 1;
    int cy = md_cell_coord(s, 1, blk->y[i]) - lo[1] + 1;
    int cz = md_cell_coord(s, 2, blk->z[i]) - lo[2] + 1;
    w->pc[i] = (cx * ext[1] + cy) * ext[2] + cz;
  }
  for (int g = 0; g < blk->ng; g++) w->pc[n + g] = blk->gcell[g];
  for (int i = 0; i < m; i++) w->start[w->pc[i] + 1]++;
  for (int c = 0; c < ncell; c++) w->start[c + 1] += w->start[c];
  /* Scatter into cell order; start[c] is used as the fill cursor and
   * restored afterwards by a shift. */
  for (int i = 0; i < m; i++) {
    int k = w->start[w->pc[i]]++;
    if (i < n) {
      w->sx[k] = blk->x[i]; w->sy[k] = blk->y[i]; w->sz[k] = blk->z[i];
      w->sidx[k] = i;
    } else {
      int g = i - n;
      w->sx[k] = blk->gx[g]; w->sy[k] = blk->gy[g]; w->sz[k] = blk->gz[g];
      w->sidx[k] = -1;
    }
  }
  for (int c = ncell; c > 0; c--) w->start[c] = w->start[c - 1];
  w->start[0] = 0;

  const double rc2 = MD_RC * MD_RC;
  const double irc6 = 1.0 / (rc2 * rc2 * rc2);
  const double ucut = 4.0 * irc6 * (irc6 - 1.0);
  double e = 0.0;
  const double *sx = w->sx, *sy = w->sy, *sz = w->sz;
  for (int cx = 1; cx < ext[0] - 1; cx++)
    for (int cy = 1; cy < ext[1] - 1; cy++)
      for (int cz = 1; cz < ext[2] - 1; cz++) {
        int c = (cx * ext[1] + cy) * ext[2] + cz;
        for (int k = w->start[c]; k < w->start[c + 1]; k++) {
          int i = w->sidx[k];
          /* interior cells hold only owned particles */
          double xi = sx[k], yi = sy[k], zi = sz[k], fx = 0, fy = 0, fz = 0, ei = 0;
          for (int dx = -1; dx <= 1; dx++)
            for (int dy = -1; dy <= 1; dy++) {
              int row = ((cx + dx) * ext[1] + (cy + dy)) * ext[2] + cz;
              /* the three cells dz = -1..1 are contiguous in cell order */
              int j0 = w->start[row - 1], j1 = w->start[row + 2];
              for (int j = j0; j < j1; j++) {
                if (j == k) continue;
                double rx = xi - sx[j], ry = yi - sy[j], rz = zi - sz[j];
                double r2 = rx * rx + ry * ry + rz * rz;
                if (r2 >= rc2) continue;
                double ir2 = 1.0 / r2, ir6 = ir2 * ir2 * ir2;
                double ff = 48.0 * ir6 * (ir6 - 0.5) * ir2;
                fx += ff * rx; fy += ff * ry; fz += ff * rz;
                ei += 4.0 * ir6 * (ir6 - 1.0) - ucut;
              }
            }
          blk->fx[i] = fx; blk->fy[i] = fy; blk->fz[i] = fz;
          e += 0.5 * ei;
        }
      }
  *epot += e;
  return 0;
}

int md_forces(md_sim_t *s) {
  double e = 0.0;
  for (int k = 0; k < s->nmine; k++) {
    int b = s->mine[k];
    /* ballast strategy: each block's forces are its task's work, so the
     * cost model measures per-block time (a failing clock call would only
     * lose a measurement) */
    rta_task_t *t = s->clock_blocks ? s->btask[b] : NULL;
    if (t) (void)rta_task_begin(t);
    int rc = block_forces(s, b, &e);
    if (t) (void)rta_task_end(t);
    if (rc) return rc;
  }
  s->epot_local = e;
  return 0;
}

void md_kick(md_sim_t *s, double h) {
  for (int k = 0; k < s->nmine; k++) {
    md_block_t *b = &s->blocks[s->mine[k]];
    for (int i = 0; i < b->n; i++) {
      b->vx[i] += h * b->fx[i];
      b->vy[i] += h * b->fy[i];
      b->vz[i] += h * b->fz[i];
    }
  }
}

static void boundary(const md_sim_t *s, int d, double *x, double *v) {
  double L = s->L[d];
  if (s->periodic) {
    if (*x < 0.0) *x += L;
    else if (*x >= L) *x -= L;
    return;
  }
  /* elastic reflection: kinetic energy unchanged, normal velocity reversed */
  if (*x < 0.0) { *x = -*x; *v = -*v; }
  else if (*x > L) { *x = 2.0 * L - *x; *v = -*v; }
  if (*x < 0.0) *x = 0.0;
  if (*x > L) *x = L;
}

void md_drift(md_sim_t *s, double dt) {
  for (int k = 0; k < s->nmine; k++) {
    md_block_t *b = &s->blocks[s->mine[k]];
    for (int i = 0; i < b->n; i++) {
      b->x[i] += dt * b->vx[i];
      b->y[i] += dt * b->vy[i];
      b->z[i] += dt * b->vz[i];
      boundary(s, 0, &b->x[i], &b->vx[i]);
      boundary(s, 1, &b->y[i], &b->vy[i]);
      boundary(s, 2, &b->z[i], &b->vz[i]);
    }
  }
}

void md_local_sums(const md_sim_t *s, double out[8]) {
  double ke = 0, px = 0, py = 0, pz = 0, n = 0, mn = INFINITY, mx = -INFINITY;
  for (int k = 0; k < s->nmine; k++) {
    const md_block_t *b = &s->blocks[s->mine[k]];
    for (int i = 0; i < b->n; i++) {
      ke += 0.5 * (b->vx[i] * b->vx[i] + b->vy[i] * b->vy[i] + b->vz[i] * b->vz[i]);
      px += b->vx[i]; py += b->vy[i]; pz += b->vz[i];
      double lo = fmin(b->x[i], fmin(b->y[i], b->z[i]));
      double hi = fmax(b->x[i], fmax(b->y[i], b->z[i]));
      if (lo < mn) mn = lo;
      if (hi > mx) mx = hi;
    }
    n += b->n;
  }
  out[0] = ke; out[1] = s->epot_local; out[2] = px; out[3] = py; out[4] = pz;
  out[5] = n; out[6] = mn; out[7] = mx;
}
