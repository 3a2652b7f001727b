/* A plain MPI program that knows nothing of ballast (not linked to it): the
 * preload test runs it with LD_PRELOAD=libballast.so and BALLAST_PROFILE set,
 * then checks the profile for exactly this traffic (check_preload.py). */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2) {
    fprintf(stderr, "preload_app: run on 2 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  char buf[1000] = {0};
  MPI_Pcontrol(1, "exchange");
  for (int i = 0; i < 5; i++) {
    if (rank == 0)
      MPI_Send(buf, 100, MPI_CHAR, 1, i, MPI_COMM_WORLD);
    else
      MPI_Recv(buf, 1000, MPI_CHAR, MPI_ANY_SOURCE, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  MPI_Request rq[2];
  MPI_Isend(buf, 3, MPI_DOUBLE, 1 - rank, 9, MPI_COMM_WORLD, &rq[0]);
  MPI_Irecv(buf + 100, 50, MPI_DOUBLE, 1 - rank, 9, MPI_COMM_WORLD, &rq[1]);
  MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
  MPI_Pcontrol(-1, "exchange");
  double x = rank, y = 0;
  MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Finalize();
  return y == 1.0 ? 0 : 2;
}
