/*
 * ballast-ring: the smallest useful monitored MPI program.
 *
 * Each rank passes a buffer to its right neighbour around a ring, does some
 * local work and joins a global sum, step after step, inside nested regions:
 *
 *   ring
 *   └── step            (once per step)
 *       ├── exchange    MPI_Sendrecv of <bytes> bytes (right / left)
 *       ├── compute     local arithmetic, no MPI
 *       └── reduce      MPI_Allreduce of one double
 *
 * Nothing in the code asks for a report: linking libballast measures every
 * MPI call, and MPI_Finalize prints the report (BALLAST_REPORT=terse|full,
 * BALLAST_PROFILE=path for the JSON profile).
 *
 * Usage: mpiexec -n 2 ballast-ring [steps (100)] [bytes (4096)] [work (20000)]
 * The traffic is exact and deterministic: per rank, <steps> Sendrecv of
 * <bytes> bytes each way, <steps> Allreduce, one Bcast and one Barrier.
 */
#include <ballast.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long arg(int argc, char **argv, int i, long dflt, long lo) {
  if (argc <= i)
    return dflt;
  char *end;
  long v = strtol(argv[i], &end, 10);
  if (*end || v < lo) {
    fprintf(stderr, "ballast-ring: bad argument \"%s\" (want an integer >= %ld)\n",
            argv[i], lo);
    exit(2);
  }
  return v;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  long steps = arg(argc, argv, 1, 100, 0);
  long bytes = arg(argc, argv, 2, 4096, 1);
  long work = arg(argc, argv, 3, 20000, 0);
  /* Rank 0 decides and tells everyone: one Bcast. */
  long params[3] = {steps, bytes, work};
  MPI_Bcast(params, 3, MPI_LONG, 0, MPI_COMM_WORLD);
  steps = params[0];
  bytes = params[1];
  work = params[2];

  unsigned char *sbuf = malloc((size_t)bytes), *rbuf = malloc((size_t)bytes);
  if (!sbuf || !rbuf) {
    fprintf(stderr, "ballast-ring: out of memory\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  memset(sbuf, rank + 1, (size_t)bytes);
  int right = (rank + 1) % size, left = (rank + size - 1) % size;
  double x = rank, total = 0.0;

  mon_region_begin("ring");
  for (long s = 0; s < steps; s++) {
    mon_region_begin("step");

    mon_region_begin("exchange");
    MPI_Sendrecv(sbuf, (int)bytes, MPI_BYTE, right, 7, rbuf, (int)bytes, MPI_BYTE, left, 7,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    mon_region_end("exchange");

    mon_region_begin("compute");
    for (long i = 0; i < work; i++)
      x = x * 0.999999 + rbuf[i % bytes] * 1e-6;
    memcpy(sbuf, rbuf, (size_t)bytes);
    mon_region_end("compute");

    mon_region_begin("reduce");
    double part = x, sum = 0.0;
    MPI_Allreduce(&part, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    total += sum;
    mon_region_end("reduce");

    mon_region_end("step");
  }
  mon_region_end("ring");

  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0)
    printf("ballast-ring: %ld steps of %ld bytes on %d ranks, checksum %.6f\n", steps,
           bytes, size, total);
  fflush(stdout);
  free(sbuf);
  free(rbuf);
  MPI_Finalize();
  return 0;
}
