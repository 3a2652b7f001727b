/*
 * cube_write's synthetic program: R regions in a tree of fan-out F (region
 * k is a child of region (k-1)/F), each entered once with one MPI call
 * inside, so the Cube archive has about 2R call paths; with "disjoint" the
 * ranks' regions are named apart (rank r's tree "r<rank>/..."), so the
 * union holds P x R region paths, the agreement's worst case.
 *
 *   cube_regions R [F] [disjoint]   (run with BALLAST_CUBE=path BALLAST_VERBOSE=2)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include <ballast/mon.h>

static int R, F, disjoint, rank;
static char (*names)[32];

static void visit(int k) {
  mon_region_begin(names[k]);
  int x = k, y;
  MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_MAX, MPI_COMM_SELF);
  for (int c = k * F + 1; c <= k * F + F && c < R; c++)
    visit(c);
  mon_region_end(names[k]);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  R = argc > 1 ? atoi(argv[1]) : 1000;
  F = argc > 2 ? atoi(argv[2]) : 8;
  disjoint = argc > 3 && !strcmp(argv[3], "disjoint");
  if (R < 1 || F < 1) {
    fprintf(stderr, "usage: cube_regions R [F] [disjoint]\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  names = malloc((size_t)R * sizeof *names);
  for (int k = 0; k < R; k++) {
    if (disjoint)
      snprintf(names[k], sizeof names[k], "r%d_region_%d", rank, k);
    else
      snprintf(names[k], sizeof names[k], "region_%d", k);
  }
  visit(0);
  free(names);
  MPI_Finalize();
  return 0;
}
