/* Cost of the tools interface per MPI call and per region.
 *
 * usage: tool_overhead MODE [BATCHES]   (one rank is enough: local calls)
 *   MODE none   no tool: every emit point is one branch on the event mask
 *        other  a tool registered for finalize only: the mask is not empty,
 *               its MPI and region bits are clear (the branch tests the bit)
 *        exit   a tool with empty mpi_exit, region_enter and region_exit
 *               callbacks (the tool is linked in, ballast_tool_attach; a
 *               dlopened one is called through the same pointer)
 *        both   empty mpi_enter and mpi_exit (and region) callbacks
 * Batches of 1000 calls alternate, per-call ns per batch, medians printed:
 *   comm_rank : MPI_Comm_rank (wrapped) paired with PMPI_Comm_rank (the
 *               unwrapped entry point) in the same process: the paired
 *               difference is what the wrapper (and the tool) add per call
 *   region    : one mon_region_begin + mon_region_end pair
 * Output: <mode> comm_rank mpi_ns <m> pmpi_ns <m> added_ns <m>
 *         <mode> region pair_ns <m>
 * run.py runs the modes alternately and prints the differences and ratios.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ballast.h>

#include "bench_util.h"

static int sink;

static void empty_exit(const ballast_tool_mpi_exit_t *e, void *u) { (void)e, (void)u; }
static void empty_enter(const ballast_tool_mpi_enter_t *e, void *u) { (void)e, (void)u; }
static void empty_region(const ballast_tool_region_t *e, void *u) { (void)e, (void)u; }
static void empty_fin(const ballast_tool_finalize_t *e, void *u) { (void)e, (void)u; }

static int mode; /* 0 none, 1 other, 2 exit, 3 both */

static int init(const ballast_tool_api_v1_t *api, ballast_tool_t *tool) {
  if (mode == 1)
    return api->on_finalize(tool, empty_fin, NULL);
  int rc = api->on_mpi_exit(tool, empty_exit, NULL) |
           api->on_region_enter(tool, empty_region, NULL) |
           api->on_region_exit(tool, empty_region, NULL);
  if (mode == 3)
    rc |= api->on_mpi_enter(tool, empty_enter, NULL);
  return rc;
}

static double batch(int which) {
  double t0 = bench_now_ns();
  for (int k = 0; k < 1000; k++) {
    int r = 0;
    if (which == 0)
      MPI_Comm_rank(MPI_COMM_WORLD, &r);
    else if (which == 1)
      PMPI_Comm_rank(MPI_COMM_WORLD, &r);
    else {
      mon_region_begin("bench_region");
      mon_region_end("bench_region");
    }
    sink += r;
  }
  return (bench_now_ns() - t0) / 1000.0;
}

int main(int argc, char **argv) {
  static const char *names[] = {"none", "other", "exit", "both"};
  mode = -1;
  for (int i = 0; argc > 1 && i < 4; i++)
    if (strcmp(argv[1], names[i]) == 0)
      mode = i;
  int nb = argc > 2 ? atoi(argv[2]) : 501;
  if (mode < 0 || nb < 1) {
    fprintf(stderr, "usage: tool_overhead none|other|exit|both [BATCHES]\n");
    return 2;
  }
  if (mode > 0 && ballast_tool_attach("bench_empty", init) != 0) {
    fprintf(stderr, "tool_overhead: the empty tool did not attach\n");
    return 1;
  }
  MPI_Init(&argc, &argv);
  double *w = malloc(sizeof(double) * (size_t)nb), *p = malloc(sizeof(double) * (size_t)nb),
         *d = malloc(sizeof(double) * (size_t)nb), *g = malloc(sizeof(double) * (size_t)nb);
  if (!w || !p || !d || !g)
    MPI_Abort(MPI_COMM_WORLD, 1);
  for (int i = 0; i < 50; i++) /* warm caches and the region's fast path */
    batch(i % 3);
  for (int i = 0; i < nb; i++) {
    /* alternate the order, so neither side always runs first */
    if (i % 2) {
      w[i] = batch(0);
      p[i] = batch(1);
    } else {
      p[i] = batch(1);
      w[i] = batch(0);
    }
    d[i] = w[i] - p[i];
    g[i] = batch(2);
  }
  printf("%s comm_rank mpi_ns %.2f pmpi_ns %.2f added_ns %.2f\n", names[mode],
         bench_median(w, nb), bench_median(p, nb), bench_median(d, nb));
  printf("%s region pair_ns %.2f\n", names[mode], bench_median(g, nb));
  fflush(stdout);
  free(w), free(p), free(d), free(g);
  MPI_Finalize();
  return sink == -1;
}
