/* An MPI program that knows nothing of ballast: run with LD_PRELOAD of
 * libballast and BALLAST_TOOLS, a tool still sees its calls. 5 MPI_Bcast,
 * 3 MPI_Barrier, MPI_Pcontrol regions. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int v[4] = {1, 2, 3, 4};
  MPI_Pcontrol(1, "plain");
  for (int i = 0; i < 5; i++)
    MPI_Bcast(v, 4, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Pcontrol(-1, "plain");
  for (int i = 0; i < 3; i++)
    MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
