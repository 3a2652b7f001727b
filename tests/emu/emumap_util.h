/* Helpers shared by the emumap test programs (tests/emu/emumap_*.c), which run as
 * 4 ranks on 2 emulated nodes x 2 ranks (tools/emucluster), started by
 * emumap.sh with the node names as the first two arguments. */
#ifndef BALLAST_EMUMAP_UTIL_H
#define BALLAST_EMUMAP_UTIL_H

#include <time.h>
#include <unistd.h>

#include "test_util.h"

enum { EMU_HOST_LEN = 64, EMU_NRANKS = 4 };

/* Gathers every rank's hostname (rank order of \a comm) into \a all and
 * checks that this rank's is one of the two node names. */
static inline void emu_hostnames(MPI_Comm comm, const char *node_a,
                                 const char *node_b,
                                 char all[][EMU_HOST_LEN]) {
  char me[EMU_HOST_LEN] = {0};
  CHECK_EQ(gethostname(me, sizeof me - 1), 0);
  CHECK(strcmp(me, node_a) == 0 || strcmp(me, node_b) == 0);
  CHECK_EQ(MPI_Allgather(me, EMU_HOST_LEN, MPI_CHAR, all, EMU_HOST_LEN,
                         MPI_CHAR, comm), MPI_SUCCESS);
}

/* The common start of every emumap program, after MPI_Init: two node
 * names as arguments, EMU_NRANKS ranks, every rank's hostname gathered into
 * \a host (see emu_hostnames). Returns this rank in MPI_COMM_WORLD. */
static inline int emu_start(int argc, char **argv, char host[][EMU_HOST_LEN]) {
  CHECK_EQ(argc, 3);
  int me, np;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  CHECK_EQ(np, EMU_NRANKS);
  emu_hostnames(MPI_COMM_WORLD, argv[1], argv[2], host);
  return me;
}

/* A barrier that waits asleep (polls every 200 us): on these 2 cores the 4
 * ranks share, ranks spinning in MPI would steal the CPU from a pair being
 * measured. */
static inline void emu_idle_barrier(MPI_Comm comm) {
  MPI_Request req;
  int done = 0;
  CHECK_EQ(MPI_Ibarrier(comm, &req), MPI_SUCCESS);
  while (!done) {
    CHECK_EQ(MPI_Test(&req, &done, MPI_STATUS_IGNORE), MPI_SUCCESS);
    if (!done)
      nanosleep(&(struct timespec){0, 200000}, NULL);
  }
}

/* Ping-pong between ranks \a a and \a b of \a comm, the same method as
 * rta_hw_refresh_links(): one warm-up, then \a reps round trips of \a len
 * bytes; returns the one-way time per message on a and b (0 elsewhere).
 * Collective over comm: the other ranks wait asleep in emu_idle_barrier. */
static inline double emu_pingpong(MPI_Comm comm, int a, int b, int len,
                                  int reps) {
  int r;
  MPI_Comm_rank(comm, &r);
  if (r != a && r != b) {
    emu_idle_barrier(comm);
    return 0.0;
  }
  char *buf = calloc(1, (size_t)len > 0 ? (size_t)len : 1);
  CHECK(buf != NULL);
  int peer = r == a ? b : a;
  double t0 = 0.0;
  for (int k = -1; k < reps; k++) {
    if (k == 0)
      t0 = MPI_Wtime();
    if (r == a) {
      CHECK_EQ(MPI_Send(buf, len, MPI_BYTE, peer, 91, comm), MPI_SUCCESS);
      CHECK_EQ(MPI_Recv(buf, len, MPI_BYTE, peer, 91, comm, MPI_STATUS_IGNORE),
               MPI_SUCCESS);
    } else {
      CHECK_EQ(MPI_Recv(buf, len, MPI_BYTE, peer, 91, comm, MPI_STATUS_IGNORE),
               MPI_SUCCESS);
      CHECK_EQ(MPI_Send(buf, len, MPI_BYTE, peer, 91, comm), MPI_SUCCESS);
    }
  }
  double t = (MPI_Wtime() - t0) / (2.0 * reps);
  free(buf);
  emu_idle_barrier(comm);
  return t;
}

#endif
