/*
 * Geometry of the decomposition: the box, its linked cells (edge >= rc +
 * skin, so that a cell and its 26 neighbours hold every pair of a Verlet
 * list), the blocks of cells (units of work), and for every cell the blocks
 * whose extended range (block plus one ghost cell layer) holds it or its
 * periodic image. Everything here is computed identically on every rank.
 */
#include "md.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void *xcalloc(size_t n, size_t sz) { return calloc(n ? n : 1, sz); }

/* Blocks per dimension when the user gave none: MPI_Dims_create of the
 * target count, capped by the cells available per dimension. */
static void choose_blocks(md_sim_t *s, int target) {
  for (;;) {
    int dims[MD_DIM] = {0, 0, 0};
    MPI_Dims_create(target, MD_DIM, dims);
    int ok = 1;
    for (int d = 0; d < MD_DIM; d++)
      if (dims[d] > s->nc[d]) ok = 0;
    if (ok || target <= 1) {
      for (int d = 0; d < MD_DIM; d++)
        s->nb[d] = dims[d] > s->nc[d] ? s->nc[d] : dims[d];
      return;
    }
    target--;
  }
}

int md_geometry_init(md_sim_t *s, char *err, size_t errlen) {
  const md_params_t *p = &s->p;
  long m = lround(cbrt((double)p->particles / MD_FCC_SITES));
  if (m < 1) m = 1;
  double lat = cbrt(MD_FCC_SITES / p->rho);  /* FCC lattice constant of the liquid */
  s->periodic = !p->walls;
  double lmin = 0;
  for (int d = 0; d < MD_DIM; d++) {
    s->L[d] = p->box[d] > 0 ? p->box[d] : (double)m * lat; /* box: --read-data */
    lmin = d == 0 || s->L[d] < lmin ? s->L[d] : lmin;
  }
  if (p->skin < 0) {
    /* The default skin, or as much of it as MD_MIN_CELLS cells per side
     * allow: a box of MD_MIN_CELLS cells of rc (the smallest one ever
     * accepted) still runs, with lists rebuilt more often. The margin keeps
     * the cell count from rounding below MD_MIN_CELLS. */
    double fit = lmin / MD_MIN_CELLS / (1.0 + 1e-9) - MD_RC;
    s->p.skin = fit < MD_SKIN ? (fit > 0 ? fit : 0.0) : MD_SKIN;
  }
  /* cells hold every pair of the Verlet list: edge >= rc + skin */
  s->rlist = MD_RC + p->skin;
  for (int d = 0; d < MD_DIM; d++) {
    /* an edge of at least rlist with a margin against rounding: the ghost
     * layer of one cell holds every list partner */
    s->nc[d] = (int)floor(s->L[d] / (s->rlist * (1.0 + 1e-12)));
    if (s->nc[d] < MD_MIN_CELLS) {
      snprintf(err, errlen, "box of %.3g sigma holds %d cells of >= %.2g sigma (cut-off "
               "%.1f + skin %.2g) per dimension; at least %d are needed: use more "
               "--particles (>= %ld)%s", s->L[d], s->nc[d], s->rlist, MD_RC, p->skin,
               MD_MIN_CELLS, (long)(MD_FCC_SITES * pow(ceil(MD_MIN_CELLS * s->rlist / lat), MD_DIM)),
               p->skin > 0 ? " or a smaller --skin" : "");
      return -1;
    }
    s->cs[d] = s->L[d] / s->nc[d];
  }
  if (p->nb[0] > 0) {
    memcpy(s->nb, p->nb, sizeof s->nb);
  } else if (p->placement) {
    int dims[MD_DIM] = {0, 0, 0};
    MPI_Dims_create(s->size, MD_DIM, dims);
    memcpy(s->nb, dims, sizeof dims);
  } else {
    choose_blocks(s, MD_BLOCKS_PER_RANK * s->size);
  }
  s->nblocks = s->nb[0] * s->nb[1] * s->nb[2];
  for (int d = 0; d < MD_DIM; d++)
    if (s->nb[d] > s->nc[d]) {
      snprintf(err, errlen, "--blocks: %d blocks in dimension %d but only %d cells "
               "(a block holds at least one cell of >= %.2g sigma)", s->nb[d], d,
               s->nc[d], s->rlist);
      return -1;
    }
  if (p->placement && s->nblocks != s->size) {
    snprintf(err, errlen, "--placement needs one block per rank: %d blocks "
             "(%dx%dx%d) on %d ranks", s->nblocks, s->nb[0], s->nb[1], s->nb[2], s->size);
    return -1;
  }
  for (int d = 0; d < MD_DIM; d++) {
    int nc = s->nc[d], nb = s->nb[d];
    s->blo[d] = xcalloc((size_t)nb + 1, sizeof(int));
    s->cell_blk[d] = xcalloc((size_t)nc, sizeof(int));
    s->gmap[d] = xcalloc((size_t)nc, sizeof(md_ghostmap_t));
    if (!s->blo[d] || !s->cell_blk[d] || !s->gmap[d]) {
      snprintf(err, errlen, "out of memory");
      return -1;
    }
    for (int i = 0; i <= nb; i++)
      s->blo[d][i] = (int)((long)i * nc / nb);
    for (int i = 0; i < nb; i++)
      for (int c = s->blo[d][i]; c < s->blo[d][i + 1]; c++)
        s->cell_blk[d][c] = i;
    for (int c = 0; c < nc; c++) {
      md_ghostmap_t *g = &s->gmap[d][c];
      int reps[3] = {c, 0, 0}, shifts[3] = {0, 0, 0}, nr = 1;
      if (s->periodic && c == 0) { reps[nr] = nc; shifts[nr++] = 1; }
      if (s->periodic && c == nc - 1) { reps[nr] = -1; shifts[nr++] = -1; }
      for (int k = 0; k < nr; k++)
        for (int i = 0; i < nb; i++)
          if (s->blo[d][i] - 1 <= reps[k] && reps[k] <= s->blo[d][i + 1]) {
            if (g->n >= 4) {
              snprintf(err, errlen, "internal: more than 4 ghost images of a cell");
              return -1;
            }
            g->blk[g->n] = i;
            g->shift[g->n++] = shifts[k];
          }
    }
  }
  return 0;
}

void md_geometry_free(md_sim_t *s) {
  for (int d = 0; d < MD_DIM; d++) {
    free(s->blo[d]);
    free(s->cell_blk[d]);
    free(s->gmap[d]);
    s->blo[d] = NULL;
    s->cell_blk[d] = NULL;
    s->gmap[d] = NULL;
  }
}

int md_block_index(const md_sim_t *s, int bx, int by, int bz) {
  return (bx * s->nb[1] + by) * s->nb[2] + bz;
}

void md_block_coords(const md_sim_t *s, int b, int *bx, int *by, int *bz) {
  *bz = b % s->nb[2];
  *by = (b / s->nb[2]) % s->nb[1];
  *bx = b / (s->nb[2] * s->nb[1]);
}

int md_cell_coord(const md_sim_t *s, int d, double x) {
  int c = (int)floor(x / s->cs[d]);
  if (c < 0) c = 0;
  if (c >= s->nc[d]) c = s->nc[d] - 1;
  return c;
}

int md_block_of_pos(const md_sim_t *s, double x, double y, double z) {
  return md_block_index(s, s->cell_blk[0][md_cell_coord(s, 0, x)],
                        s->cell_blk[1][md_cell_coord(s, 1, y)],
                        s->cell_blk[2][md_cell_coord(s, 2, z)]);
}

int md_block_neighbours(const md_sim_t *s, int b, int *out) {
  int c[MD_DIM], n = 0;
  md_block_coords(s, b, &c[0], &c[1], &c[2]);
  for (int dx = -1; dx <= 1; dx++)
    for (int dy = -1; dy <= 1; dy++)
      for (int dz = -1; dz <= 1; dz++) {
        int q[MD_DIM] = {c[0] + dx, c[1] + dy, c[2] + dz}, ok = 1;
        for (int d = 0; d < MD_DIM; d++) {
          if (q[d] < 0 || q[d] >= s->nb[d]) {
            if (!s->periodic) ok = 0;
            q[d] = (q[d] + s->nb[d]) % s->nb[d];
          }
        }
        if (!ok) continue;
        int nbk = md_block_index(s, q[0], q[1], q[2]);
        if (nbk == b) continue;
        int dup = 0;
        for (int k = 0; k < n; k++)
          if (out[k] == nbk) dup = 1;
        if (!dup) out[n++] = nbk;
      }
  return n;
}
