/* A plain MPI program, not linked to ballast: STEPS steps, each a region
 * "step" (MPI_Pcontrol) holding one MPI_Barrier and a region "inner" with one
 * MPI_Allreduce. Rank 1 makes one extra call (MPI_Comm_rank) in step 3, so an
 * assertion on the step's call count fails there, and only there. Run by
 * check_file.py under LD_PRELOAD=libballast.so with an assertion file. */
#include <mpi.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, steps = argc > 1 ? atoi(argv[1]) : 5;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  for (int s = 1; s <= steps; s++) {
    MPI_Pcontrol(1, "step");
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Pcontrol(1, "inner");
    double x = 1, y;
    MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Pcontrol(-1, "inner");
    if (rank == 1 && s == 3) {
      int r;
      MPI_Comm_rank(MPI_COMM_WORLD, &r);
    }
    MPI_Pcontrol(-1, "step");
  }
  MPI_Finalize();
  return 0;
}
