/*
 * fwrap.F90 in C, call for call: compare.py checks that ballast's profile of
 * each Fortran binding style equals this program's. Run on 3 ranks;
 * argument 1: the file for the MPI-IO part. Fortran's MPI_Pcontrol has no
 * name argument: its levels 1/-1 are the region "pcontrol", named here.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define NMAX 8

static void die(const char *what) {
  printf("FAIL fwrap.c: %s\n", what);
  exit(1);
}

int main(int argc, char **argv) {
  int rank, n, idx, outcount, flag, indices[4];
  int ia[64], ib[64], counts[NMAX], rcounts[NMAX], displs[NMAX];
  double da[16], db[16];
  MPI_Comm dup, split, cart;
  MPI_Request reqs[4], many[40];
  MPI_Datatype types[NMAX];
  MPI_Win win;
  MPI_File fh;
  MPI_Message msg;
  MPI_Status st, sts[4];
  MPI_Aint adispls[2];

  if (argc < 2)
    die("usage: fwrap FILE");
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  int right = (rank + 1) % n, left = (rank + n - 1) % n;
  for (int i = 0; i < 64; i++) {
    ia[i] = rank;
    ib[i] = 0;
  }
  for (int i = 0; i < 16; i++) {
    da[i] = 1.0;
    db[i] = 0.0;
  }
  MPI_Pcontrol(1, "pcontrol");

  /* ---- point to point */
  if (rank == 0) {
    MPI_Send(ia, 5, MPI_INT, 1, 1, MPI_COMM_WORLD);
    MPI_Recv(db, 3, MPI_DOUBLE, 1, 2, MPI_COMM_WORLD, &st);
    if (st.MPI_SOURCE != 1)
      die("Recv source");
  } else if (rank == 1) {
    MPI_Recv(ib, 64, MPI_INT, MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Ssend(da, 3, MPI_DOUBLE, 0, 2, MPI_COMM_WORLD);
  }
  MPI_Sendrecv(da, 10, MPI_DOUBLE, right, 3, db, 10, MPI_DOUBLE, left, 3, MPI_COMM_WORLD, &st);
  MPI_Sendrecv_replace(ia, 7, MPI_INT, right, 4, left, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  for (int i = 0; i < 64; i++)
    ia[i] = rank;

  /* ---- nonblocking, completed by the wait family */
  MPI_Irecv(db, 8, MPI_DOUBLE, left, 5, MPI_COMM_WORLD, &reqs[0]);
  MPI_Isend(da, 8, MPI_DOUBLE, right, 5, MPI_COMM_WORLD, &reqs[1]);
  MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
  MPI_Irecv(ib, 4, MPI_INT, left, 6, MPI_COMM_WORLD, &reqs[0]);
  MPI_Issend(ia, 4, MPI_INT, right, 6, MPI_COMM_WORLD, &reqs[1]);
  for (int i = 0; i < 2; i++) {
    MPI_Waitany(2, reqs, &idx, &st);
    if (idx < 0 || idx > 1)
      die("Waitany index");
  }
  MPI_Irecv(ib, 9, MPI_INT, left, 7, MPI_COMM_WORLD, &reqs[0]);
  MPI_Isend(ia, 9, MPI_INT, right, 7, MPI_COMM_WORLD, &reqs[1]);
  MPI_Waitsome(1, reqs, &outcount, indices, sts);
  if (outcount != 1 || indices[0] != 0)
    die("Waitsome");
  MPI_Wait(&reqs[1], MPI_STATUS_IGNORE);
  MPI_Irecv(ib, 2, MPI_INT, left, 8, MPI_COMM_WORLD, &reqs[0]);
  MPI_Isend(ia, 2, MPI_INT, right, 8, MPI_COMM_WORLD, &reqs[1]);
  for (flag = 0; !flag;)
    MPI_Testall(2, reqs, &flag, MPI_STATUSES_IGNORE);
  MPI_Irecv(ib, 3, MPI_INT, left, 9, MPI_COMM_WORLD, &reqs[0]);
  MPI_Isend(ia, 3, MPI_INT, right, 9, MPI_COMM_WORLD, &reqs[1]);
  for (flag = 0; !flag;)
    MPI_Test(&reqs[0], &flag, &st);
  for (flag = 0; !flag;)
    MPI_Testany(1, &reqs[1], &idx, &flag, MPI_STATUS_IGNORE);

  /* more requests than the wrappers keep inline */
  for (int i = 0; i < 20; i++)
    MPI_Irecv(&ib[i], 1, MPI_INT, left, 101 + i, MPI_COMM_WORLD, &many[i]);
  for (int i = 0; i < 20; i++)
    MPI_Isend(&ia[i], 1, MPI_INT, right, 101 + i, MPI_COMM_WORLD, &many[20 + i]);
  MPI_Waitall(40, many, MPI_STATUSES_IGNORE);

  /* ---- persistent requests */
  MPI_Recv_init(ib, 6, MPI_INT, left, 10, MPI_COMM_WORLD, &reqs[0]);
  MPI_Send_init(ia, 6, MPI_INT, right, 10, MPI_COMM_WORLD, &reqs[1]);
  for (int i = 0; i < 2; i++) {
    MPI_Startall(2, reqs);
    MPI_Waitall(2, reqs, sts);
  }
  MPI_Start(&reqs[0]);
  MPI_Start(&reqs[1]);
  MPI_Wait(&reqs[0], &st);
  MPI_Wait(&reqs[1], &st);
  MPI_Request_free(&reqs[0]);
  MPI_Request_free(&reqs[1]);

  /* ---- probes and matched receives */
  if (rank == 0) {
    MPI_Send(ia, 6, MPI_INT, 1, 11, MPI_COMM_WORLD);
    MPI_Send(da, 3, MPI_DOUBLE, 1, 12, MPI_COMM_WORLD);
    MPI_Send(da, 5, MPI_DOUBLE, 1, 13, MPI_COMM_WORLD);
    MPI_Send(ia, 2, MPI_INT, 1, 14, MPI_COMM_WORLD);
  } else if (rank == 1) {
    MPI_Probe(0, 11, MPI_COMM_WORLD, &st);
    MPI_Recv(ib, 6, MPI_INT, 0, 11, MPI_COMM_WORLD, &st);
    MPI_Mprobe(0, 12, MPI_COMM_WORLD, &msg, &st);
    MPI_Mrecv(db, 3, MPI_DOUBLE, &msg, MPI_STATUS_IGNORE);
    for (flag = 0; !flag;)
      MPI_Improbe(0, 13, MPI_COMM_WORLD, &flag, &msg, &st);
    MPI_Imrecv(db, 5, MPI_DOUBLE, &msg, &reqs[0]);
    MPI_Wait(&reqs[0], MPI_STATUS_IGNORE);
    for (flag = 0; !flag;)
      MPI_Iprobe(0, 14, MPI_COMM_WORLD, &flag, &st);
    MPI_Recv(ib, 2, MPI_INT, 0, 14, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }

  /* ---- collectives */
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Bcast(ia, 5, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Gather(rank == 0 ? MPI_IN_PLACE : ia, 2, MPI_INT, ib, 2, MPI_INT, 0, MPI_COMM_WORLD);
  for (int i = 0; i < n; i++) {
    counts[i] = i + 1;
    rcounts[i] = rank + 1;
    displs[i] = 4 * i;
  }
  MPI_Gatherv(ia, rank + 1, MPI_INT, ib, counts, displs, MPI_INT, 1, MPI_COMM_WORLD);
  MPI_Scatter(ia, 3, MPI_INT, ib, 3, MPI_INT, 2, MPI_COMM_WORLD);
  MPI_Scatterv(ia, counts, displs, MPI_INT, ib, rank + 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Allgather(ia, 2, MPI_INT, ib, 2, MPI_INT, MPI_COMM_WORLD);
  MPI_Allgatherv(ia, rank + 1, MPI_INT, ib, counts, displs, MPI_INT, MPI_COMM_WORLD);
  MPI_Alltoall(ia, 3, MPI_INT, ib, 3, MPI_INT, MPI_COMM_WORLD);
  MPI_Alltoallv(ia, counts, displs, MPI_INT, ib, rcounts, displs, MPI_INT, MPI_COMM_WORLD);
  for (int i = 0; i < n; i++) {
    types[i] = MPI_INT;
    displs[i] = 16 * i;
  }
  MPI_Alltoallw(ia, counts, displs, types, ib, rcounts, displs, types, MPI_COMM_WORLD);
  if (rank == 0)
    MPI_Reduce(MPI_IN_PLACE, ia, 4, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  else
    MPI_Reduce(ia, ib, 4, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, da, 6, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Reduce_scatter(ia, ib, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Reduce_scatter_block(ia, ib, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Scan(ia, ib, 3, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Exscan(ia, ib, 3, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Ibarrier(MPI_COMM_WORLD, &reqs[0]);
  MPI_Wait(&reqs[0], MPI_STATUS_IGNORE);
  MPI_Iallreduce(ia, ib, 5, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &reqs[0]);
  MPI_Ialltoallw(ia, counts, displs, types, ib, rcounts, displs, types, MPI_COMM_WORLD,
                 &reqs[1]);
  MPI_Waitall(2, reqs, sts);
  for (int i = 0; i < 64; i++)
    ia[i] = rank;

  /* ---- communicators and a periodic ring topology */
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  MPI_Comm_split(dup, rank % 2, rank, &split);
  MPI_Allreduce(ia, ib, 2, MPI_INT, MPI_SUM, split);
  MPI_Comm_free(&split);
  MPI_Comm_free(&dup);
  int dims[1] = {n}, periods[1] = {1};
  MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart);
  MPI_Neighbor_alltoall(ia, 2, MPI_INT, ib, 2, MPI_INT, cart);
  MPI_Neighbor_allgather(ia, 3, MPI_INT, ib, 3, MPI_INT, cart);
  for (int i = 0; i < 2; i++) {
    counts[i] = i + 1;
    rcounts[i] = 2 - i;
    types[i] = MPI_DOUBLE;
    adispls[i] = 16 * i;
  }
  MPI_Neighbor_alltoallw(da, counts, adispls, types, db, rcounts, adispls, types, cart);
  MPI_Comm_free(&cart);

  /* ---- one-sided */
  MPI_Win_create(ib, 64 * 4, 4, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  MPI_Win_fence(0, win);
  MPI_Put(ia, 2, MPI_INT, right, 4, 2, MPI_INT, win);
  MPI_Get(&ia[9], 3, MPI_INT, left, 4, 3, MPI_INT, win);
  MPI_Win_fence(0, win);
  MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win);
  MPI_Accumulate(ia, 4, MPI_INT, right, 4, 4, MPI_INT, MPI_SUM, win);
  MPI_Win_unlock(right, win);
  MPI_Win_free(&win);

  /* ---- MPI-IO */
  if (MPI_File_open(MPI_COMM_WORLD, argv[1], MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                    &fh) != MPI_SUCCESS)
    die("File_open");
  MPI_Offset off = rank * 32;
  MPI_File_write_at(fh, off, ia, 8, MPI_INT, MPI_STATUS_IGNORE);
  MPI_File_sync(fh);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_File_read_at(fh, off, ib, 8, MPI_INT, &st);
  MPI_File_close(&fh);

  /* ---- nested regions; level 0 only counts */
  MPI_Pcontrol(1, "pcontrol");
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Pcontrol(-1, "pcontrol");
  MPI_Pcontrol(0);
  MPI_Pcontrol(-1, "pcontrol");
  MPI_Finalize();
  return 0;
}
