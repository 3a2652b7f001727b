/*
 * dist_vs_seq: the two-phase mapping of one graph with the sequential phase 1
 * and with the distributed phase 1 (PT-Scotch, rta_map_options_t.
 * distributed_phase1), both through rta_map_graph_par() on the ranks of
 * MPI_COMM_WORLD (phase 2 shared among them in both), on a simulated machine.
 * Prints, per path: wall seconds (total, phase 1, phase 2, as rank 0 sees
 * them), quality, and the peak RSS of rank 0's process.
 *
 * usage: mpiexec -n R dist_vs_seq [--stencil P:N | --md N] [--nodes K]
 *        [--topo "pack:2 core:12"] [--arch FILE] [--only seq|dist]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <mpi.h>

#include <ballast/rta_map.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size, nodes = 1024, points = 27, md = 0;
  long long n = 100;
  const char *topo = "pack:2 core:12", *arch = NULL, *only = NULL;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--stencil") && i + 1 < argc) {
      if (sscanf(argv[++i], "%d:%lld", &points, &n) != 2) n = 0;
    } else if (!strcmp(argv[i], "--md") && i + 1 < argc) {
      md = 1;
      n = atoll(argv[++i]);
    } else if (!strcmp(argv[i], "--nodes") && i + 1 < argc) {
      nodes = atoi(argv[++i]);
    } else if (!strcmp(argv[i], "--topo") && i + 1 < argc) {
      topo = argv[++i];
    } else if (!strcmp(argv[i], "--arch") && i + 1 < argc) {
      arch = argv[++i];
    } else if (!strcmp(argv[i], "--only") && i + 1 < argc) {
      only = argv[++i];
    } else {
      n = 0;
    }
  }
  if (n < 1) {
    if (!rank)
      fprintf(stderr, "usage: %s [--stencil P:N | --md N] [--nodes K] "
              "[--topo STR] [--arch FILE] [--only seq|dist]\n", argv[0]);
    MPI_Finalize();
    return 2;
  }
  rta_graph_t *g = NULL;
  int rc = md ? rta_graph_md_cells(n, n, n, 100, 0.3, 1.0, 1, &g)
              : rta_graph_stencil3d(n, n, n, points, 4.0, 64.0, &g);
  rta_hw_t *hw = NULL;
  if (!rc)
    rc = rta_hw_create_sim(arch ? 0 : nodes, topo, arch, NULL, &hw);
  if (rc) {
    fprintf(stderr, "setup failed: %s\n", ballast_strerror(rc));
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  int64_t nv = rta_graph_nvert(g);
  int64_t *slot = malloc((size_t)nv * sizeof *slot);
  if (!rank)
    printf("# %s %lld: %lld tasks onto %d nodes x (%s) = %d cores, %d ranks\n",
           md ? "md" : "stencil", n, (long long)nv, rta_hw_nnodes(hw), topo,
           rta_hw_nslots(hw), size);
  for (int dist = 0; dist < 2; dist++) {
    if (only && strcmp(only, dist ? "dist" : "seq"))
      continue;
    rta_map_options_t o;
    rta_map_options_init(&o);
    o.distributed_phase1 = dist;
    rta_map_quality_t q;
    MPI_Barrier(MPI_COMM_WORLD);
    rc = rta_map_graph_par(g, hw, RTA_MAP_TWOPHASE, NULL, &o, MPI_COMM_WORLD,
                           slot, &q);
    if (rc) {
      if (!rank)
        printf("%s failed: %s\n", dist ? "dist" : "seq", ballast_strerror(rc));
      continue;
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    if (!rank)
      printf("{\"path\":\"%s\",\"ranks\":%d,\"tasks\":%lld,\"cores\":%d,"
             "\"seconds\":%.2f,\"phase1\":%.2f,\"phase2\":%.2f,"
             "\"max_avg_core\":%.4f,\"max_avg_node\":%.4f,\"hop_bytes\":%.6g,"
             "\"internode\":%.6g,\"peak_rss_mib\":%.0f}\n",
             dist ? "dist" : "seq", size, (long long)nv, rta_hw_nslots(hw),
             q.seconds, q.seconds_phase1, q.seconds_phase2,
             q.max_avg_load_core, q.max_avg_load_node, q.hop_bytes,
             q.internode_volume, ru.ru_maxrss / 1024.0);
    fflush(stdout);
  }
  free(slot);
  rta_hw_destroy(hw);
  rta_graph_destroy(g);
  MPI_Finalize();
  return 0;
}
