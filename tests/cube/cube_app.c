/*
 * The program tests/cube/check_cube.py measures: known regions, nested
 * three deep, MPI calls at every level, regions that only some ranks enter
 * (so the ranks' call trees differ and must be joined), an activity called
 * in two regions (two call paths), and a region name with XML markup.
 */
#include <mpi.h>

#include <ballast/mon.h>

static volatile double sink;

static void spin(int n) {
  for (int i = 0; i < n; i++)
    sink += i * 1e-9;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  double x = rank, y = 0;
  for (int it = 0; it < 4; it++) {
    mon_region_begin("step");
    mon_region_begin("compute");
    spin(200000 * (rank + 1));
    mon_region_begin("inner <&>");
    spin(50000);
    MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    mon_region_end("inner <&>");
    mon_region_end("compute");
    mon_region_begin("exchange");
    double buf[16] = {0}, rb[16];
    MPI_Sendrecv(buf, 16, MPI_DOUBLE, (rank + 1) % size, 0, rb, 16, MPI_DOUBLE,
                 (rank + size - 1) % size, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    mon_region_end("exchange");
    MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    mon_region_end("step");
  }
  /* rank 1 only: a region with a send; rank 0 receives outside any region */
  if (rank == 1 && size > 1) {
    mon_region_begin("only_rank1");
    MPI_Send(&x, 1, MPI_DOUBLE, 0, 5, MPI_COMM_WORLD);
    mon_region_end("only_rank1");
  } else if (rank == 0) {
    mon_region_begin("only_rank0");
    spin(1000);
    mon_region_end("only_rank0");
    if (size > 1)
      MPI_Recv(&y, 1, MPI_DOUBLE, 1, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
