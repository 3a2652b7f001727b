/* Generated task graphs: 3D 7- and 27-point stencils (CSR built directly, so
 * 10^7 vertices take seconds) and molecular-dynamics linked-cell graphs. */
#include <math.h>
#include <stdlib.h>

#include "common/common_internal.h"
#include "map/map_internal.h"

int rta_graph_stencil3d(int64_t nx, int64_t ny, int64_t nz, int points,
                        double face_bytes, double state_bytes,
                        rta_graph_t **out) {
  if (!out || nx < 1 || ny < 1 || nz < 1 || (points != 7 && points != 27) ||
      !isfinite(face_bytes) || face_bytes < 0 || !isfinite(state_bytes) ||
      state_bytes < 0)
    return BALLAST_EINVAL;
  *out = NULL;
  if (nx > INT32_MAX / ny || nx * ny > INT32_MAX / nz)
    return BALLAST_ERANGE;
  int64_t n = nx * ny * nz;
  int64_t deg = points - 1;
  if (n > (INT32_MAX - 1) / deg)
    return BALLAST_ERANGE;
  int64_t *xadj = ballast__malloc((size_t)(n + 1) * sizeof *xadj);
  int32_t *adj = ballast__malloc((size_t)(n * deg) * sizeof *adj);
  double *adjw = ballast__malloc((size_t)(n * deg) * sizeof *adjw);
  if (!xadj || !adj || !adjw) {
    free(xadj);
    free(adj);
    free(adjw);
    return BALLAST_ENOMEM;
  }
  /* Weight by the number of offsets that are non-zero: 1 face, 2 edge,
   * 3 corner. */
  const double wt[4] = {0, face_bytes, face_bytes / 2, face_bytes / 4};
  int64_t a = 0;
  for (int64_t z = 0; z < nz; z++)
    for (int64_t y = 0; y < ny; y++)
      for (int64_t x = 0; x < nx; x++) {
        xadj[x + nx * (y + ny * z)] = a;
        /* dz outermost, dx innermost: neighbours come out sorted. */
        for (int dz = -1; dz <= 1; dz++)
          for (int dy = -1; dy <= 1; dy++)
            for (int dx = -1; dx <= 1; dx++) {
              int nnz = (dx != 0) + (dy != 0) + (dz != 0);
              if (nnz == 0 || (points == 7 && nnz > 1))
                continue;
              int64_t X = x + dx, Y = y + dy, Z = z + dz;
              if (X < 0 || Y < 0 || Z < 0 || X >= nx || Y >= ny || Z >= nz)
                continue;
              adj[a] = (int32_t)(X + nx * (Y + ny * Z));
              adjw[a++] = wt[nnz];
            }
      }
  xadj[n] = a;
  rta_graph_t *g = NULL;
  int rc = map__graph_from_csr(n, xadj, adj, adjw, &g);
  if (rc)
    return rc;
  for (int64_t v = 0; v < n; v++)
    g->state[v] = state_bytes;
  *out = g;
  return 0;
}

int rta_graph_md_cells(int64_t nx, int64_t ny, int64_t nz,
                       double particles_per_cell, double density_ratio,
                       double face_bytes, unsigned seed, rta_graph_t **out) {
  if (!out || nx < 1 || ny < 1 || nz < 1 || !isfinite(particles_per_cell) ||
      particles_per_cell <= 0 || !isfinite(density_ratio) ||
      density_ratio <= 0 || !isfinite(face_bytes) || face_bytes < 0)
    return BALLAST_EINVAL;
  *out = NULL;
  if (nx > INT32_MAX / ny || nx * ny > INT32_MAX / nz ||
      nx * ny * nz > (INT32_MAX - 1) / 26)
    return BALLAST_ERANGE;
  int64_t n = nx * ny * nz;
  rta_graph_t *g = NULL;
  int rc = rta_graph_create(n, &g);
  if (rc)
    return rc;
  for (int64_t z = 0; z < nz; z++)
    for (int64_t y = 0; y < ny; y++)
      for (int64_t x = 0; x < nx; x++) {
        int64_t v = x + nx * (y + ny * z);
        double t = nx > 1 ? (double)x / (double)(nx - 1) : 0.0;
        double dens = 1.0 + (density_ratio - 1.0) * t;
        double u = (double)(ballast__splitmix64((uint64_t)seed * 0x100000001ull +
                                  (uint64_t)v) >> 11) * 0x1p-53;
        double p = particles_per_cell * dens * (0.9 + 0.2 * u);
        g->work[v] = p;
        g->state[v] = 48.0 * p;
      }
  /* Each unordered pair once: offsets with (dz,dy,dx) lexicographically
   * positive; periodic wrap may make two offsets reach the same cell (small
   * dimensions): add_edge accumulates, as the halo is then exchanged twice. */
  for (int64_t z = 0; z < nz; z++)
    for (int64_t y = 0; y < ny; y++)
      for (int64_t x = 0; x < nx; x++) {
        int64_t v = x + nx * (y + ny * z);
        for (int dz = -1; dz <= 1; dz++)
          for (int dy = -1; dy <= 1; dy++)
            for (int dx = -1; dx <= 1; dx++) {
              if (dz < 0 || (dz == 0 && (dy < 0 || (dy == 0 && dx <= 0))))
                continue;
              int64_t X = (x + dx + nx) % nx, Y = (y + dy + ny) % ny,
                      Z = (z + dz + nz) % nz;
              int64_t u = X + nx * (Y + ny * Z);
              if (u == v)
                continue;
              double b = face_bytes * (g->work[v] + g->work[u]) /
                         (2.0 * particles_per_cell);
              if ((rc = rta_graph_add_edge(g, v, u, b))) {
                rta_graph_destroy(g);
                return rc;
              }
            }
      }
  if ((rc = map__graph_finalize(g))) {
    rta_graph_destroy(g);
    return rc;
  }
  *out = g;
  return 0;
}
