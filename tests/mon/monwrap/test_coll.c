/* Exact collective accounting on 4 ranks: rooted (partner = the root's world
 * rank, also through a reversed communicator), unrooted, vector variants,
 * MPI_IN_PLACE, nonblocking (accounted at completion) and neighbourhood
 * collectives on a non-periodic Cartesian topology (MPI_PROC_NULL neighbours
 * move nothing). Volumes follow the table in src/mon/mpi31.spec. */
#include "monwrap_util.h"

static int rank, size;

static void rooted(void) {
  int sbuf[64] = {0}, rbuf[256] = {0};
  const int root = 2;
  mw_act_t bc = mw_act("MPI_Bcast"), ga = mw_act("MPI_Gather"), gv = mw_act("MPI_Gatherv"),
           sc = mw_act("MPI_Scatter"), re = mw_act("MPI_Reduce");
  mw_act_t sbc = mw_sig("MPI_Bcast", root), sre = mw_sig("MPI_Reduce", root);
  mon__partner_t p = mw_partner(root);

  MPI_Bcast(sbuf, 10, MPI_INT, root, MPI_COMM_WORLD);
  CHECK_ACT("MPI_Bcast", bc, 1, 40);

  MPI_Gather(sbuf, 3, MPI_INT, rbuf, 3, MPI_INT, root, MPI_COMM_WORLD);
  CHECK_ACT("MPI_Gather", ga, 1, rank == root ? 12 + 4 * 12 : 12);

  int counts[4] = {1, 2, 3, 4}, displs[4] = {0, 1, 3, 6};
  MPI_Gatherv(sbuf, counts[rank], MPI_INT, rbuf, counts, displs, MPI_INT, root, MPI_COMM_WORLD);
  CHECK_ACT("MPI_Gatherv", gv, 1, 4 * counts[rank] + (rank == root ? 4 * 10 : 0));

  MPI_Scatter(sbuf, 2, MPI_DOUBLE, rbuf, 2, MPI_DOUBLE, root, MPI_COMM_WORLD);
  CHECK_ACT("MPI_Scatter", sc, 1, 16 + (rank == root ? 4 * 16 : 0));

  if (rank == root)
    MPI_Reduce(MPI_IN_PLACE, rbuf, 5, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD);
  else
    MPI_Reduce(sbuf, rbuf, 5, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD);
  CHECK_ACT("MPI_Reduce", re, 1, rank == root ? 40 : 20);

  /* Partner of a rooted collective: the root's world rank, in the
   * signature; collectives stay out of the point-to-point partner matrix. */
  mw_act_t q = mw_sig("MPI_Bcast", root);
  CHECK_EQ(q.calls - sbc.calls, 1);
  CHECK_EQ(q.bytes - sbc.bytes, 40);
  q = mw_sig("MPI_Reduce", root);
  CHECK_EQ(q.calls - sre.calls, 1);
  CHECK_EQ(q.bytes - sre.bytes, rank == root ? 40 : 20);
  CHECK_PARTNER(root, p, 0, 0, 0, 0);

  /* The same through a reversed communicator: root 3 there is world rank 0. */
  MPI_Comm rev;
  MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &rev);
  sbc = mw_sig("MPI_Bcast", 0);
  bc = mw_act("MPI_Bcast");
  MPI_Bcast(sbuf, 6, MPI_INT, 3, rev);
  CHECK_ACT("MPI_Bcast", bc, 1, 24);
  q = mw_sig("MPI_Bcast", 0);
  CHECK_EQ(q.calls - sbc.calls, 1);
  CHECK_EQ(q.bytes - sbc.bytes, 24);
  MPI_Comm_free(&rev);
}

static void unrooted(void) {
  int sbuf[64] = {0}, rbuf[256] = {0};
  mw_act_t nop = mw_sig("MPI_Allreduce", MON_NO_PARTNER);
  mw_act_t ar = mw_act("MPI_Allreduce"), ag = mw_act("MPI_Allgather"),
           agv = mw_act("MPI_Allgatherv"), a2a = mw_act("MPI_Alltoall"),
           a2av = mw_act("MPI_Alltoallv"), rsb = mw_act("MPI_Reduce_scatter_block"),
           sca = mw_act("MPI_Scan"), exs = mw_act("MPI_Exscan"), bar = mw_act("MPI_Barrier");
  mon__partner_t self = mw_partner(rank);

  MPI_Allreduce(sbuf, rbuf, 7, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, rbuf, 7, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  CHECK_ACT("MPI_Allreduce", ar, 2, 2 * 56);
  CHECK_EQ(mw_sig("MPI_Allreduce", MON_NO_PARTNER).calls - nop.calls, 2);

  MPI_Allgather(sbuf, 2, MPI_INT, rbuf, 2, MPI_INT, MPI_COMM_WORLD);
  CHECK_ACT("MPI_Allgather", ag, 1, 8 + 4 * 8);

  int counts[4] = {1, 2, 3, 4}, displs[4] = {0, 1, 3, 6};
  MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, rbuf, counts, displs, MPI_INT,
                 MPI_COMM_WORLD);
  CHECK_ACT("MPI_Allgatherv", agv, 1, 4 * counts[rank] + 4 * 10);

  MPI_Alltoall(sbuf, 3, MPI_INT, rbuf, 3, MPI_INT, MPI_COMM_WORLD);
  CHECK_ACT("MPI_Alltoall", a2a, 1, 2 * 4 * 12);

  /* rank r sends r+1 ints to everyone and receives j+1 from rank j */
  int sc[4], sd[4], rc[4], rd[4];
  for (int j = 0; j < 4; j++) {
    sc[j] = rank + 1;
    sd[j] = j * 4;
    rc[j] = j + 1;
    rd[j] = j * 4;
  }
  MPI_Alltoallv(sbuf, sc, sd, MPI_INT, rbuf, rc, rd, MPI_INT, MPI_COMM_WORLD);
  CHECK_ACT("MPI_Alltoallv", a2av, 1, 4 * 4 * (rank + 1) + 4 * 10);

  MPI_Reduce_scatter_block(sbuf, rbuf, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  CHECK_ACT("MPI_Reduce_scatter_block", rsb, 1, 4 * 8 + 8);

  MPI_Scan(sbuf, rbuf, 3, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  CHECK_ACT("MPI_Scan", sca, 1, 24);
  MPI_Exscan(sbuf, rbuf, 3, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  CHECK_ACT("MPI_Exscan", exs, 1, rank > 0 ? 24 : 12);

  MPI_Barrier(MPI_COMM_WORLD);
  CHECK_ACT("MPI_Barrier", bar, 1, 0);
  /* Unrooted collectives have no partner. */
  CHECK_PARTNER(rank, self, 0, 0, 0, 0);
}

static void nonblocking(void) {
  int sbuf[64] = {0}, rbuf[256] = {0};
  mw_act_t iar = mw_act("MPI_Iallreduce"), ibc = mw_act("MPI_Ibcast"),
           ia2a = mw_act("MPI_Ialltoall"), iba = mw_act("MPI_Ibarrier");
  MPI_Request rq[4];
  MPI_Iallreduce(sbuf, rbuf, 4, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &rq[0]);
  MPI_Ibcast(sbuf, 9, MPI_CHAR, 1, MPI_COMM_WORLD, &rq[1]);
  MPI_Ialltoall(sbuf, 1, MPI_INT, rbuf, 1, MPI_INT, MPI_COMM_WORLD, &rq[2]);
  MPI_Ibarrier(MPI_COMM_WORLD, &rq[3]);
  CHECK_ACT("MPI_Iallreduce", iar, 1, 0);
  MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
  CHECK_ACT("MPI_Iallreduce", iar, 1, 64);
  MPI_Waitall(3, &rq[1], MPI_STATUSES_IGNORE);
  CHECK_ACT("MPI_Ibcast", ibc, 1, 9);
  CHECK_ACT("MPI_Ialltoall", ia2a, 1, 32);
  CHECK_ACT("MPI_Ibarrier", iba, 1, 0);
}

/* A 2x2 non-periodic grid: every rank has 2 real neighbours of 4 slots. */
static void neighbourhood(void) {
  int dims[2] = {2, 2}, periods[2] = {0, 0};
  MPI_Comm cart;
  MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
  int sbuf[64] = {0}, rbuf[64] = {0};
  mw_act_t nag = mw_act("MPI_Neighbor_allgather"), na2a = mw_act("MPI_Neighbor_alltoall"),
           na2av = mw_act("MPI_Neighbor_alltoallv"), ina = mw_act("MPI_Ineighbor_alltoall");
  MPI_Neighbor_allgather(sbuf, 3, MPI_INT, rbuf, 3, MPI_INT, cart);
  CHECK_ACT("MPI_Neighbor_allgather", nag, 1, 2 * 12 + 2 * 12);
  MPI_Neighbor_alltoall(sbuf, 2, MPI_INT, rbuf, 2, MPI_INT, cart);
  CHECK_ACT("MPI_Neighbor_alltoall", na2a, 1, 2 * 8 + 2 * 8);

  /* counts per slot (dim 0: -1, +1; dim 1: -1, +1), the same both ways along
   * a dimension so sends match receives; only real neighbours move */
  int cnt[4] = {1, 1, 3, 3}, dsp[4] = {0, 4, 8, 12};
  int src, dst;
  uint64_t expect = 0;
  for (int d = 0; d < 2; d++) {
    MPI_Cart_shift(cart, d, 1, &src, &dst);
    expect += (src != MPI_PROC_NULL ? cnt[2 * d] : 0) + (dst != MPI_PROC_NULL ? cnt[2 * d + 1] : 0);
  }
  MPI_Neighbor_alltoallv(sbuf, cnt, dsp, MPI_INT, rbuf, cnt, dsp, MPI_INT, cart);
  CHECK_ACT("MPI_Neighbor_alltoallv", na2av, 1, 2 * 4 * expect);

  MPI_Request rq;
  MPI_Ineighbor_alltoall(sbuf, 1, MPI_DOUBLE, rbuf, 1, MPI_DOUBLE, cart, &rq);
  MPI_Wait(&rq, MPI_STATUS_IGNORE);
  CHECK_ACT("MPI_Ineighbor_alltoall", ina, 1, 2 * 8 + 2 * 8);
  MPI_Comm_free(&cart);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK_EQ(size, 4);
  mw_act_t coll = mw_act("MPI_COLL");
  mw_act_t bar = mw_act("MPI_Barrier");
  rooted();
  unrooted();
  nonblocking();
  neighbourhood();
  /* every call above is a collective: the group moved by their sum */
  uint64_t ncalls = 5 + 1 + 2 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 1 + 4 + 4;
  CHECK_EQ(mw_act("MPI_COLL").calls - coll.calls, ncalls);
  CHECK_EQ(mw_act("MPI_Barrier").calls - bar.calls, 1);
  TEST_PASS("monwrap_coll");
  MPI_Finalize();
  return 0;
}
