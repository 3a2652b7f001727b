/*
 * Initial conditions from a seed. Every rank walks the same FCC lattice of
 * the liquid density (4 M^3 sites, site index = particle id) and draws each
 * site's random numbers from a generator seeded by (seed, id), so a run is
 * reproducible and independent of the rank count, the blocks and the owner
 * map; each rank keeps only the particles of its own blocks.
 *
 *  uniform  every site: the standard LJ liquid (rho = 0.8442, T = 0.72).
 *  droplet  sites inside a sphere (radius 0.25 L, centred off-centre at
 *           (0.3, 0.5, 0.5) L so that a static slab decomposition is
 *           unbalanced) and, outside it, a dilute gas keeping each site with
 *           probability rho_gas / rho (rho_gas = 0.02).
 *  cluster  as droplet with the sphere (radius 0.2 L) at (0.25, 0.5, 0.5) L
 *           and a drift velocity +drift along x added to its particles, so
 *           the dense region travels through the periodic box.
 */
#include "md.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MD_RHO_GAS 0.02

typedef struct {
  double c[MD_DIM];
  double r;
  int sphere;    /* 0 for uniform */
} shape_t;

static uint64_t site_seed(unsigned long seed, int64_t id) {
  uint64_t st = (uint64_t)seed * 0xD1B54A32D192ED03ull ^ (uint64_t)id * 0x9E3779B97F4A7C15ull;
  md_rng_next(&st);
  return st;
}

/* Whether site id is kept, and its unscaled thermal velocity and whether it
 * belongs to the dense sphere. */
static int site(const md_sim_t *s, const shape_t *sh, int64_t id, const double pos[3],
                double v[3], int *dense) {
  uint64_t st = site_seed(s->p.seed, id);
  double keep_draw = md_rng_uniform(&st);
  for (int d = 0; d < MD_DIM; d += 2) {
    /* Box-Muller, two normals per pair of uniforms */
    double u1 = md_rng_uniform(&st), u2 = md_rng_uniform(&st);
    double r = sqrt(-2.0 * log(1.0 - u1));
    v[d] = r * cos(2.0 * M_PI * u2);
    if (d + 1 < MD_DIM) v[d + 1] = r * sin(2.0 * M_PI * u2);
  }
  *dense = 1;
  if (!sh->sphere) return 1;
  double r2 = 0;
  for (int d = 0; d < MD_DIM; d++) r2 += (pos[d] - sh->c[d]) * (pos[d] - sh->c[d]);
  if (r2 <= sh->r * sh->r) return 1;
  *dense = 0;
  return keep_draw < MD_RHO_GAS / s->p.rho;
}

int md_scenario_create(md_sim_t *s, char *err, size_t errlen) {
  const md_params_t *p = &s->p;
  long m = lround(cbrt((double)p->particles / MD_FCC_SITES));
  if (m < 1) m = 1;
  double a = s->L[0] / (double)m;
  static const double basis[MD_FCC_SITES][MD_DIM] = {{0, 0, 0}, {0.5, 0.5, 0}, {0.5, 0, 0.5}, {0, 0.5, 0.5}};
  /* the spheres of the top of this file, in box lengths */
  shape_t sh = {{0, 0, 0}, 0, 0};
  if (p->scenario == MD_DROPLET) {
    sh = (shape_t){{0.3 * s->L[0], 0.5 * s->L[1], 0.5 * s->L[2]}, 0.25 * s->L[0], 1};
  } else if (p->scenario == MD_CLUSTER) {
    sh = (shape_t){{0.25 * s->L[0], 0.5 * s->L[1], 0.5 * s->L[2]}, 0.2 * s->L[0], 1};
  }
  /* Pass 1: count, centre-of-mass velocity and kinetic energy of the kept
   * sites (identical on every rank: no communication needed). */
  double sum_v[3] = {0, 0, 0}, sum_v2 = 0;
  long kept = 0;
  for (int pass = 0; pass < 2; pass++) {
    double vcm[3] = {0, 0, 0}, scale = 1.0;
    if (pass == 1) {
      if (kept < 2) {
        snprintf(err, errlen, "the scenario keeps %ld particles; use more --particles", kept);
        return -1;
      }
      for (int d = 0; d < MD_DIM; d++) vcm[d] = sum_v[d] / kept;
      double ke2 = sum_v2 - kept * (vcm[0] * vcm[0] + vcm[1] * vcm[1] + vcm[2] * vcm[2]);
      /* momentum removal takes 3 degrees of freedom (md_temperature) */
      double t_now = md_temperature(0.5 * ke2, (double)kept);
      scale = t_now > 0 ? sqrt(p->temperature / t_now) : 0.0;
      s->natoms = kept;
    }
    int64_t id = 0;
    for (long ix = 0; ix < m; ix++)
      for (long iy = 0; iy < m; iy++)
        for (long iz = 0; iz < m; iz++)
          for (int k = 0; k < MD_FCC_SITES; k++, id++) {
            /* a quarter lattice constant in: no site on a cell face */
            double pos[3] = {(ix + basis[k][0] + 0.25) * a, (iy + basis[k][1] + 0.25) * a,
                             (iz + basis[k][2] + 0.25) * a};
            double v[3];
            int dense;
            if (!site(s, &sh, id, pos, v, &dense)) continue;
            if (pass == 0) {
              kept++;
              for (int d = 0; d < MD_DIM; d++) {
                sum_v[d] += v[d];
                sum_v2 += v[d] * v[d];
              }
              continue;
            }
            int b = md_block_of_pos(s, pos[0], pos[1], pos[2]);
            if (s->owner[b] != s->rank) continue;
            double r9[9] = {pos[0], pos[1], pos[2], 0, 0, 0, 0, 0, 0};
            for (int d = 0; d < MD_DIM; d++) r9[3 + d] = (v[d] - vcm[d]) * scale;
            if (p->scenario == MD_CLUSTER && dense) r9[3] += p->drift;
            if (md_block_push(&s->blocks[b], r9, id)) {
              snprintf(err, errlen, "out of memory creating particles");
              return -1;
            }
          }
  }
  return 0;
}
