/* Behaviour pia.h documents, pinned:
 *  - MPI_Sendrecv counts both halves in the partner volumes: the message sent
 *    under nbytes/nmsgs of the destination, the message received under
 *    rbytes/rmsgs of its source;
 *  - an instance of a region still open contributes nothing to
 *    pia_region_data() until it is left; region 0 is live. */
#include <ballast.h>

#include "test_util.h"

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK_EQ(size, 2);
  int peer = 1 - rank;

  pia_partnerdata_t a, b;
  CHECK_EQ(pia_partner_data(peer, PIA_REGION_ALL, &a), 0);
  int s[5] = {1, 2, 3, 4, 5}, r[9];
  /* 5 ints out, 9 ints back (each rank sends 5 + 4 * rank ints) */
  int n = 5 + 4 * rank, m = 5 + 4 * peer;
  int big[9] = {0};
  MPI_Sendrecv(rank ? big : s, n, MPI_INT, peer, 7, r, 9, MPI_INT, peer, 7,
               MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  CHECK_EQ(pia_partner_data(peer, PIA_REGION_ALL, &b), 0);
  CHECK_EQ(b.nbytes - a.nbytes, 4 * n);
  CHECK_EQ(b.nmsgs - a.nmsgs, 1);
  CHECK_EQ(b.rbytes - a.rbytes, 4 * m);
  CHECK_EQ(b.rmsgs - a.rmsgs, 1);

  /* An open instance contributes nothing; region 0 is live. */
  pia_regdata_t d, d0a, d0b;
  CHECK_EQ(pia_region_data(PIA_REGION_MAIN, &d0a), 0);
  CHECK_EQ(mon_region_begin("open"), 0);
  pia_regid_t id = pia_region_current();
  CHECK_GT(id, 0);
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK_EQ(pia_region_data(id, &d), 0);
  CHECK_EQ(d.count64, 0);
  CHECK_EQ(d.count, 0);
  CHECK(d.wtime == 0.0 && d.mtime == 0.0 && d.cputime == 0.0);
  CHECK_EQ(pia_region_data(PIA_REGION_MAIN, &d0b), 0);
  CHECK(d0b.wtime > d0a.wtime && d0b.mtime > d0a.mtime);
  CHECK_EQ(mon_region_end("open"), 0);
  CHECK_EQ(pia_region_data(id, &d), 0);
  CHECK_EQ(d.count64, 1);
  CHECK(d.wtime > 0.0 && d.mtime > 0.0 && d.mtime <= d.wtime);

  printf("rank %d: documented partner and region semantics hold\n", rank);
  MPI_Finalize();
  return 0;
}
