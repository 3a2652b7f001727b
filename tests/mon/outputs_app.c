/* The program check_outputs.py runs under mpiexec -n 2: regions with hostile
 * names (control characters, bytes that are not UTF-8, a '/' inside a name)
 * and an exact exchange from rank 0 to rank 1 of six messages, four of them
 * empty, over four kinds of send, so the report's and the profile's
 * message counts can be checked against known values. */
#include <mpi.h>
#include <stdio.h>

#include <ballast/mon.h>

static void region(const char *name) {
  mon_region_begin(name);
  mon_region_end(name);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  region("line\nbreak");
  region("ctl\x01\x1b[31mred\x7f");
  region("bad\xff\xfeutf8");
  region("surrogate\xed\xa0\x80");
  region("cut\xe2\x82");
  region("quote\"back\\slash");
  region("r\xc3\xa9sum\xc3\xa9");
  region("x/y");
  mon_region_begin("x");
  region("y");
  mon_region_end("x");

  /* Six messages 0 -> 1: 0, 8, 0, 16, 0 and 0 bytes (24 in all). */
  char buf[16] = {0};
  if (rank == 0) {
    MPI_Request rq[2];
    MPI_Send(buf, 0, MPI_CHAR, 1, 1, MPI_COMM_WORLD);
    MPI_Send(buf, 8, MPI_CHAR, 1, 2, MPI_COMM_WORLD);
    MPI_Isend(buf, 0, MPI_CHAR, 1, 3, MPI_COMM_WORLD, &rq[0]);
    MPI_Isend(buf, 16, MPI_CHAR, 1, 4, MPI_COMM_WORLD, &rq[1]);
    MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
    MPI_Ssend(buf, 0, MPI_CHAR, 1, 5, MPI_COMM_WORLD);
    MPI_Send_init(buf, 0, MPI_CHAR, 1, 6, MPI_COMM_WORLD, &rq[0]);
    MPI_Start(&rq[0]);
    MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
    MPI_Request_free(&rq[0]);
  } else if (rank == 1) {
    MPI_Request rq;
    MPI_Recv(buf, 16, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Recv(buf, 16, MPI_CHAR, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Irecv(buf, 16, MPI_CHAR, 0, 3, MPI_COMM_WORLD, &rq);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    MPI_Recv(buf, 16, MPI_CHAR, 0, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Irecv(buf, 16, MPI_CHAR, MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, &rq);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    MPI_Recv(buf, 16, MPI_CHAR, 0, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  MPI_Finalize();
  return 0;
}
