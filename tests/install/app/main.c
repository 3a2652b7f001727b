/* An out-of-tree program built against an installed ballast: one region,
 * known MPI traffic, and the report printed by MPI_Finalize. */
#include <ballast.h>
#include <stdio.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, v = 1, sum = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int rc = mon_region_begin("installed");
  for (int i = 0; i < 3; i++)
    MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  rc |= mon_region_end("installed");
  if (rank == 0)
    printf("app: ballast %s, regions rc %d, sum %d\n", ballast_version(), rc, sum);
  fflush(stdout);
  MPI_Finalize();
  return rc != 0;
}
