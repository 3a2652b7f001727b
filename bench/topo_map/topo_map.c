/*
 * Cost of the topology reordering's mapping (issue 15): a 3D periodic
 * Cartesian grid of P ranks (the graph MPI_Cart_create declares, 1 per
 * neighbour arc) mapped one rank per slot with rta_map_permutation() onto a
 * simulated machine of P / C nodes of C cores ("pack:2 core:C/2", complete
 * graph between nodes), as the reordering wrapper does on a real job (which
 * runs phase 2 in parallel over the ranks; here it runs alone: an upper
 * bound). Prints, per size, the median time over REPS runs, and the
 * hop-bytes of the result against two launch orders: by slot (ranks filled
 * node by node) and round-robin over the nodes.
 *
 * usage: bench_topo_map [REPS [C]]   (defaults 5, 32)
 */
#include <stdio.h>
#include <stdlib.h>

#include <ballast.h>

#include "bench_util.h"

static int cart_graph(int nx, int ny, int nz, rta_graph_t **out) {
  int n = nx * ny * nz, rc = rta_graph_create(n, out);
  for (int v = 0; !rc && v < n; v++) {
    int x = v / (ny * nz), y = (v / nz) % ny, z = v % nz;
    int nb[3] = {(((x + 1) % nx) * ny + y) * nz + z, (x * ny + (y + 1) % ny) * nz + z,
                 (x * ny + y) * nz + (z + 1) % nz};
    for (int k = 0; !rc && k < 3; k++)
      rc = rta_graph_add_edge(*out, v, nb[k], 2); /* one arc each way */
  }
  return rc;
}

static double hop_bytes(const rta_graph_t *g, const rta_hw_t *hw, const int64_t *slot) {
  rta_map_quality_t q;
  return rta_map_evaluate(g, hw, slot, NULL, &q) ? -1 : q.hop_bytes;
}

int main(int argc, char **argv) {
  int reps = argc > 1 ? atoi(argv[1]) : 5, cores = argc > 2 ? atoi(argv[2]) : 32;
  static const int sizes[][3] = {{16, 8, 8}, {16, 16, 16}, {32, 20, 16}};
  MPI_Init(&argc, &argv);
  char topo[64];
  snprintf(topo, sizeof topo, "pack:2 core:%d", cores / 2);
  printf("%8s %6s %12s %14s %14s %14s\n", "ranks", "nodes", "median_s", "hop_by_slot",
         "hop_roundrobin", "hop_ballast");
  for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
    int n = sizes[i][0] * sizes[i][1] * sizes[i][2], nodes = n / cores;
    rta_hw_t *hw = NULL;
    rta_graph_t *g = NULL;
    if (rta_hw_create_sim(nodes, topo, NULL, NULL, &hw) ||
        cart_graph(sizes[i][0], sizes[i][1], sizes[i][2], &g)) {
      fprintf(stderr, "setup failed for %d ranks\n", n);
      return 1;
    }
    int64_t *slot = malloc((size_t)n * sizeof *slot), *ident = malloc((size_t)n * sizeof *ident),
            *rr = malloc((size_t)n * sizeof *rr);
    double *t = malloc((size_t)reps * sizeof *t);
    for (int v = 0; v < n; v++) {
      ident[v] = v;
      rr[v] = (int64_t)(v % nodes) * cores + v / nodes; /* rank v on node v mod nodes */
    }
    for (int r = 0; r < reps; r++) {
      double t0 = bench_now();
      if (rta_map_permutation(g, hw, NULL, MPI_COMM_NULL, slot, NULL)) {
        fprintf(stderr, "mapping failed for %d ranks\n", n);
        return 1;
      }
      t[r] = bench_now() - t0;
    }
    qsort(t, (size_t)reps, sizeof *t, bench_cmp_double);
    printf("%8d %6d %12.4f %14.0f %14.0f %14.0f\n", n, nodes, t[reps / 2],
           hop_bytes(g, hw, ident), hop_bytes(g, hw, rr), hop_bytes(g, hw, slot));
    free(slot);
    free(ident);
    free(rr);
    free(t);
    rta_graph_destroy(g);
    rta_hw_destroy(hw);
  }
  MPI_Finalize();
  return 0;
}
