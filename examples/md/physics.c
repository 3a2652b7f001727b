/*
 * Physics: Lennard-Jones forces per block from its Verlet lists (nlist.c),
 * and the velocity Verlet kick and drift with periodic or reflecting
 * boundaries.
 *
 * The potential is U(r) = 4 (r^-12 - r^-6) - U_c for r < rc = 2.5 and 0
 * beyond, U_c = 4 (rc^-12 - rc^-6): truncated and shifted, so the energy is
 * continuous at the cutoff. A pair inside a block is computed once (Newton's
 * third law); a pair across blocks by both, each side taking its force and
 * half the energy, which keeps a block's work independent of which rank owns
 * its neighbours.
 */
#include "md.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int md_forces(md_sim_t *s) {
  double e = 0.0;
  for (int k = 0; k < s->nmine; k++) {
    int b = s->mine[k];
    /* ballast strategy: each block's forces are its task's work, so the
     * cost model measures per-block time (a failing clock call would only
     * lose a measurement) */
    rta_task_t *t = s->clock_blocks ? s->btask[b] : NULL;
    md_block_t *blk = &s->blocks[b];
    int rc = 0;
    if (t) (void)rta_task_begin(t);
    /* a list rebuild is the block's work too: its cost is the block's */
    if (!blk->nl.valid) rc = md_nlist_build(s, b);
    if (!rc) e += md_nlist_forces(blk, !s->skip_epot);
    if (t) (void)rta_task_end(t);
    if (rc) return rc;
    s->kst.kernel_atoms += blk->n;
    s->kst.kernel_checks += blk->nl.own_off[blk->n] + blk->nl.gh_off[blk->n];
  }
  /* a skipped energy must not pass for a value */
  s->epot_local = s->skip_epot ? NAN : e;
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

/* Walls: elastic reflection, kinetic energy unchanged, normal velocity
 * reversed. A periodic box wraps only at list rebuilds (md_wrap). */
static void reflect(const md_sim_t *s, int d, double *x, double *v) {
  double L = s->L[d];
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
    }
    if (s->periodic) continue;
    for (int i = 0; i < b->n; i++) {
      reflect(s, 0, &b->x[i], &b->vx[i]);
      reflect(s, 1, &b->y[i], &b->vy[i]);
      reflect(s, 2, &b->z[i], &b->vz[i]);
    }
  }
}

void md_local_sums(const md_sim_t *s, double out[MD_NSUMS]) {
  double ke = 0, px = 0, py = 0, pz = 0, n = 0, mn = INFINITY, mx = -INFINITY;
  for (int k = 0; k < s->nmine; k++) {
    const md_block_t *b = &s->blocks[s->mine[k]];
    for (int i = 0; i < b->n; i++) {
      ke += 0.5 * (b->vx[i] * b->vx[i] + b->vy[i] * b->vy[i] + b->vz[i] * b->vz[i]);
      px += b->vx[i]; py += b->vy[i]; pz += b->vz[i];
      /* in a periodic box a position may stray outside it between list
       * rebuilds (md_wrap): the extremes are those of the wrapped ones */
      const double p[MD_DIM] = {b->x[i], b->y[i], b->z[i]};
      for (int d = 0; d < MD_DIM; d++) {
        double q = p[d];
        if (s->periodic) q = q < 0.0 ? q + s->L[d] : q >= s->L[d] ? q - s->L[d] : q;
        if (q < mn) mn = q;
        if (q > mx) mx = q;
      }
    }
    n += b->n;
  }
  out[MD_SUM_KE] = ke;
  out[MD_SUM_PE] = s->epot_local;
  out[MD_SUM_MOM] = px;
  out[MD_SUM_MOM + 1] = py;
  out[MD_SUM_MOM + 2] = pz;
  out[MD_SUM_N] = n;
  out[MD_SUM_POS_MIN] = mn;
  out[MD_SUM_POS_MAX] = mx;
}
