/* Exact point-to-point accounting on 2 ranks: blocking, MPI_STATUS_IGNORE and
 * MPI_ANY_SOURCE, sendrecv, nonblocking with waitall/waitany/testsome,
 * persistent requests started several times, probe/mprobe, MPI_PROC_NULL,
 * and partners translated to world ranks on split and dup communicators. */
#include "monwrap_util.h"
#include "mon/wrap_internal.h"

static int rank, peer;

static void blocking(void) {
  int buf[100] = {0};
  double d[5] = {0};
  mw_act_t send = mw_act("MPI_Send"), ssend = mw_act("MPI_Ssend"), recv = mw_act("MPI_Recv");
  mon__partner_t p = mw_partner(peer);
  if (rank == 0) {
    for (int i = 0; i < 3; i++)
      MPI_Send(buf, 10, MPI_INT, 1, 7, MPI_COMM_WORLD);
    MPI_Ssend(d, 5, MPI_DOUBLE, 1, 8, MPI_COMM_WORLD);
    CHECK_ACT("MPI_Send", send, 3, 3 * 40);
    CHECK_ACT("MPI_Ssend", ssend, 1, 40);
    CHECK_PARTNER(1, p, 160, 4, 0, 0);
  } else {
    /* Posted for 100 ints, received 10: the status tells the truth even
     * when the caller ignores it. */
    for (int i = 0; i < 3; i++)
      MPI_Recv(buf, 100, MPI_INT, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Status st;
    MPI_Recv(d, 5, MPI_DOUBLE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
    CHECK_EQ(st.MPI_SOURCE, 0);
    CHECK_ACT("MPI_Recv", recv, 4, 160);
    CHECK_PARTNER(0, p, 0, 0, 160, 4);
  }
}

static void sendrecv_and_null(void) {
  int a[7] = {0}, b[7] = {0};
  mw_act_t sr = mw_act("MPI_Sendrecv"), srr = mw_act("MPI_Sendrecv_replace");
  mw_act_t send = mw_act("MPI_Send");
  MPI_Sendrecv(a, 7, MPI_INT, peer, 1, b, 7, MPI_INT, peer, 1, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
  CHECK_ACT("MPI_Sendrecv", sr, 1, 56);
  /* send 3 ints, receive from MPI_PROC_NULL: 12 bytes */
  MPI_Sendrecv_replace(a, 3, MPI_INT, peer, 2, MPI_PROC_NULL, 2, MPI_COMM_WORLD,
                       MPI_STATUS_IGNORE);
  /* the peer's message is still pending: take it */
  MPI_Recv(b, 7, MPI_INT, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  CHECK_ACT("MPI_Sendrecv_replace", srr, 1, 12);
  MPI_Send(a, 7, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD);
  CHECK_ACT("MPI_Send", send, 1, 0);
}

static void nonblocking(void) {
  char buf[4][64];
  MPI_Request rq[4];
  mw_act_t isend = mw_act("MPI_Isend"), irecv = mw_act("MPI_Irecv");
  mw_act_t wall = mw_act("MPI_Waitall"), wany = mw_act("MPI_Waitany"),
           tsome = mw_act("MPI_Testsome");
  mon__partner_t p = mw_partner(peer);
  long tracked = mon__wreq_tracked();
  if (rank == 0) {
    for (int i = 0; i < 4; i++)
      MPI_Isend(buf[i], 8 * (i + 1), MPI_CHAR, 1, i, MPI_COMM_WORLD, &rq[i]);
    CHECK_ACT("MPI_Isend", isend, 4, 0); /* nothing until completion */
    MPI_Waitall(4, rq, MPI_STATUSES_IGNORE);
    CHECK_ACT("MPI_Isend", isend, 4, 8 + 16 + 24 + 32);
    CHECK_ACT("MPI_Waitall", wall, 1, 0);
    CHECK_PARTNER(1, p, 80, 4, 0, 0);
  } else {
    for (int i = 0; i < 4; i++)
      MPI_Irecv(buf[i], 64, MPI_CHAR, i % 2 ? MPI_ANY_SOURCE : 0, i, MPI_COMM_WORLD, &rq[i]);
    int idx[4], n = 0, got = 0;
    for (int k = 0; k < 2; k++) {
      MPI_Waitany(4, rq, idx, MPI_STATUS_IGNORE);
      got++;
    }
    while (got < 4) {
      MPI_Testsome(4, rq, &n, idx, MPI_STATUSES_IGNORE);
      if (n != MPI_UNDEFINED)
        got += n;
    }
    CHECK_ACT("MPI_Irecv", irecv, 4, 80);
    CHECK_ACT("MPI_Waitany", wany, 2, 0);
    CHECK_GE(mw_act("MPI_Testsome").calls - tsome.calls, 1);
    CHECK_PARTNER(0, p, 0, 0, 80, 4);
  }
  CHECK_EQ(mon__wreq_tracked(), tracked);
}

/* The rest of the wait/test family, with real status arrays, and the send
 * modes that need a buffer (Bsend) or a posted receive (Rsend). */
static void wait_family(void) {
  char buf[6][64];
  MPI_Request rq[6];
  MPI_Status st[6];
  mw_act_t isend = mw_act("MPI_Isend"), issend = mw_act("MPI_Issend"),
           ibsend = mw_act("MPI_Ibsend"), irecv = mw_act("MPI_Irecv"),
           bsend = mw_act("MPI_Bsend"), rsend = mw_act("MPI_Rsend");
  static char attach[4096];
  MPI_Buffer_attach(attach, sizeof attach);
  if (rank == 0) {
    MPI_Isend(buf[0], 5, MPI_CHAR, 1, 0, MPI_COMM_WORLD, &rq[0]);
    MPI_Issend(buf[1], 6, MPI_CHAR, 1, 1, MPI_COMM_WORLD, &rq[1]);
    MPI_Ibsend(buf[2], 7, MPI_CHAR, 1, 2, MPI_COMM_WORLD, &rq[2]);
    int flag = 0;
    while (!flag)
      MPI_Testall(3, rq, &flag, st);
    MPI_Bsend(buf[3], 11, MPI_CHAR, 1, 3, MPI_COMM_WORLD);
    MPI_Recv(NULL, 0, MPI_CHAR, 1, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* receive posted */
    MPI_Rsend(buf[4], 13, MPI_CHAR, 1, 4, MPI_COMM_WORLD);
    /* freed while active: the send still happens and is credited */
    MPI_Request fr;
    MPI_Isend(buf[5], 17, MPI_CHAR, 1, 5, MPI_COMM_WORLD, &fr);
    MPI_Request_free(&fr);
    CHECK_ACT("MPI_Isend", isend, 2, 5 + 17);
    CHECK_ACT("MPI_Issend", issend, 1, 6);
    CHECK_ACT("MPI_Ibsend", ibsend, 1, 7);
    CHECK_ACT("MPI_Bsend", bsend, 1, 11);
    CHECK_ACT("MPI_Rsend", rsend, 1, 13);
  } else {
    for (int i = 0; i < 3; i++)
      MPI_Irecv(buf[i], 64, MPI_CHAR, 0, i, MPI_COMM_WORLD, &rq[i]);
    int done = 0, idx[3], n;
    while (done < 3) {
      MPI_Waitsome(3, rq, &n, idx, st);
      for (int k = 0; k < n; k++) {
        int c;
        MPI_Get_count(&st[k], MPI_CHAR, &c);
        CHECK_EQ(c, 5 + idx[k]);
      }
      done += n;
    }
    MPI_Irecv(buf[3], 64, MPI_CHAR, 0, 3, MPI_COMM_WORLD, &rq[3]);
    MPI_Irecv(buf[4], 64, MPI_CHAR, 0, 4, MPI_COMM_WORLD, &rq[4]);
    MPI_Send(NULL, 0, MPI_CHAR, 0, 99, MPI_COMM_WORLD);
    MPI_Irecv(buf[5], 64, MPI_CHAR, 0, 5, MPI_COMM_WORLD, &rq[5]);
    int got = 0, index, flag;
    while (got < 3) {
      MPI_Testany(3, &rq[3], &index, &flag, &st[0]);
      if (flag && index != MPI_UNDEFINED)
        got++;
    }
    CHECK_ACT("MPI_Irecv", irecv, 6, 5 + 6 + 7 + 11 + 13 + 17);
  }
  void *old;
  int oldsize;
  MPI_Buffer_detach(&old, &oldsize);
}

static void persistent(void) {
  char buf[50] = {0};
  MPI_Request rq;
  mw_act_t sinit = mw_act("MPI_Send_init"), rinit = mw_act("MPI_Recv_init");
  mw_act_t start = mw_act("MPI_Start"), startall = mw_act("MPI_Startall");
  long tracked = mon__wreq_tracked();
  if (rank == 0)
    MPI_Send_init(buf, 12, MPI_CHAR, 1, 3, MPI_COMM_WORLD, &rq);
  else
    MPI_Recv_init(buf, 50, MPI_CHAR, MPI_ANY_SOURCE, 3, MPI_COMM_WORLD, &rq);
  for (int i = 0; i < 3; i++) {
    MPI_Start(&rq);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    /* Waiting on the now inactive request completes at once and moves nothing. */
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
  }
  for (int i = 0; i < 2; i++) {
    MPI_Startall(1, &rq);
    int flag = 0;
    while (!flag)
      MPI_Test(&rq, &flag, MPI_STATUS_IGNORE);
  }
  CHECK_ACT("MPI_Start", start, 3, 0);
  CHECK_ACT("MPI_Startall", startall, 2, 0);
  if (rank == 0)
    CHECK_ACT("MPI_Send_init", sinit, 1, 5 * 12);
  else
    CHECK_ACT("MPI_Recv_init", rinit, 1, 5 * 12);
  CHECK_EQ(mon__wreq_tracked(), tracked + 1);
  MPI_Request_free(&rq);
  CHECK_EQ(mon__wreq_tracked(), tracked);
}

static void probes(void) {
  char buf[32] = {0};
  mw_act_t probe = mw_act("MPI_Probe"), mrecv = mw_act("MPI_Mrecv"),
           imrecv = mw_act("MPI_Imrecv"), recv = mw_act("MPI_Recv");
  mon__partner_t p = mw_partner(peer);
  if (rank == 0) {
    for (int i = 0; i < 3; i++)
      MPI_Send(buf, 9, MPI_CHAR, 1, 20 + i, MPI_COMM_WORLD);
  } else {
    MPI_Status st;
    MPI_Probe(MPI_ANY_SOURCE, 20, MPI_COMM_WORLD, &st);
    MPI_Recv(buf, 32, MPI_CHAR, st.MPI_SOURCE, 20, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Message msg;
    MPI_Mprobe(MPI_ANY_SOURCE, 21, MPI_COMM_WORLD, &msg, MPI_STATUS_IGNORE);
    MPI_Mrecv(buf, 32, MPI_CHAR, &msg, MPI_STATUS_IGNORE);
    int flag = 0;
    while (!flag)
      MPI_Improbe(0, 22, MPI_COMM_WORLD, &flag, &msg, MPI_STATUS_IGNORE);
    MPI_Request rq;
    MPI_Imrecv(buf, 32, MPI_CHAR, &msg, &rq);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    CHECK_ACT("MPI_Probe", probe, 1, 0);
    CHECK_ACT("MPI_Recv", recv, 1, 9);
    CHECK_ACT("MPI_Mrecv", mrecv, 1, 9);
    CHECK_ACT("MPI_Imrecv", imrecv, 1, 9);
    CHECK_PARTNER(0, p, 0, 0, 27, 3);
  }
}

/* Partners on derived communicators are world ranks; a freed communicator's
 * cache entry must not survive into a new one with the same handle. */
static void communicators(void) {
  int buf[4] = {0};
  MPI_Comm rev, same, dup;
  MPI_Comm_split(MPI_COMM_WORLD, 0, -rank, &rev); /* rank order reversed */
  int r;
  MPI_Comm_rank(rev, &r);
  CHECK_EQ(r, 1 - rank);
  mon__partner_t p = mw_partner(peer), self = mw_partner(rank);
  /* in rev, the peer has rank 1 - r = rank */
  MPI_Sendrecv(buf, 4, MPI_INT, rank, 0, buf, 4, MPI_INT, rank, 0, rev, MPI_STATUS_IGNORE);
  /* 16 bytes each way, both with the peer's world rank */
  CHECK_PARTNER(peer, p, 16, 1, 16, 1);
  CHECK_PARTNER(rank, self, 0, 0, 0, 0);
  MPI_Comm_free(&rev);

  MPI_Comm_split(MPI_COMM_WORLD, 0, rank, &same);
  MPI_Comm_dup(same, &dup);
  p = mw_partner(peer);
  self = mw_partner(rank);
  if (rank == 0) {
    MPI_Send(buf, 4, MPI_INT, 1, 0, same);
    MPI_Send(buf, 2, MPI_INT, 1, 0, dup);
  } else {
    MPI_Recv(buf, 4, MPI_INT, MPI_ANY_SOURCE, 0, same, MPI_STATUS_IGNORE);
    MPI_Recv(buf, 4, MPI_INT, 0, 0, dup, MPI_STATUS_IGNORE);
  }
  if (rank == 0)
    CHECK_PARTNER(1, p, 24, 2, 0, 0);
  else
    CHECK_PARTNER(0, p, 0, 0, 24, 2);
  CHECK_PARTNER(rank, self, 0, 0, 0, 0);
  CHECK_EQ(mon__world_rank(dup, 1), 1);
  CHECK_EQ(mon__world_rank(dup, MPI_PROC_NULL), MON_NO_PARTNER);
  MPI_Comm_free(&dup);
  MPI_Comm_free(&same);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK_EQ(size, 2);
  peer = 1 - rank;
  CHECK(mon__active());

  mw_act_t rk = mw_act("MPI_Comm_rank");
  MPI_Comm_rank(MPI_COMM_WORLD, &size);
  CHECK_ACT("MPI_Comm_rank", rk, 1, 0);

  blocking();
  MPI_Barrier(MPI_COMM_WORLD);
  sendrecv_and_null();
  MPI_Barrier(MPI_COMM_WORLD);
  nonblocking();
  MPI_Barrier(MPI_COMM_WORLD);
  wait_family();
  MPI_Barrier(MPI_COMM_WORLD);
  persistent();
  MPI_Barrier(MPI_COMM_WORLD);
  probes();
  MPI_Barrier(MPI_COMM_WORLD);
  communicators();

  /* The P2P group sums its members: at least the Send bytes seen above. */
  CHECK_GT(mw_act("MPI_P2P").bytes, 0);
  CHECK_GE(mw_act("MPI_ALL").calls, mw_act("MPI_P2P").calls);
  TEST_PASS("monwrap_p2p");
  MPI_Finalize();
  return 0;
}
