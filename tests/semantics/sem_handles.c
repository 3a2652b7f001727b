/*
 * Handles freed while operations on them are pending (MPI-3.1 sections
 * 6.4.3, 4.1.9, 3.7.3): MPI_Comm_free only marks a communicator for
 * deallocation, pending operations complete normally; a datatype or group
 * freed while in use stays valid for the operations that use it. MPICH's
 * comm/cmfree (4 ranks) and comm/cmfree2 (2 ranks) crashed inside ballast's
 * MPI_Wait, which named the receive's sender through the freed communicator.
 * Runs on 2 and 4 ranks; each case prints what MPI returned (compared across
 * watched and unwatched runs by check_same.py) and, linked to ballast
 * (SEM_MON), checks that the completed receive was credited to the right
 * world rank.
 */
#include <stdio.h>
#include <unistd.h>

#include "sem_util.h"

static int me, n, left, right;

/* A communicator over the world with the ranks reversed, so that its ranks
 * and the world's differ (rank n-1-me). */
static MPI_Comm reversed(void) {
  MPI_Comm c;
  CHECK_EQ(MPI_Comm_split(MPI_COMM_WORLD, 0, n - me, &c), MPI_SUCCESS);
  return c;
}

/* cmfree: Irecv (MPI_ANY_SOURCE, MPI_ANY_TAG) and Isend on a duplicate,
 * the duplicate freed, then MPI_Wait on each. */
static void freed_wait(void) {
  MPI_Comm d;
  MPI_Comm_dup(MPI_COMM_WORLD, &d);
  int sb = 100 + me, rb = -1;
  MPI_Request rr, sr;
  sem_traffic_t b = sem_traffic(left);
  CHECK_EQ(MPI_Irecv(&rb, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, d, &rr), MPI_SUCCESS);
  CHECK_EQ(MPI_Isend(&sb, 1, MPI_INT, right, 7, d, &sr), MPI_SUCCESS);
  CHECK_EQ(MPI_Comm_free(&d), MPI_SUCCESS);
  CHECK(d == MPI_COMM_NULL);
  MPI_Status st;
  CHECK_EQ(MPI_Wait(&rr, &st), MPI_SUCCESS);
  CHECK_EQ(MPI_Wait(&sr, MPI_STATUS_IGNORE), MPI_SUCCESS);
  CHECK(rr == MPI_REQUEST_NULL && sr == MPI_REQUEST_NULL);
  int cnt = -1;
  MPI_Get_count(&st, MPI_INT, &cnt);
  CHECK_EQ(rb, 100 + left);
  CHECK_EQ(st.MPI_SOURCE, left);
  CHECK_EQ(st.MPI_TAG, 7);
  CHECK_EQ(cnt, 1);
  SEM_CHECK_RECV(left, b, 4, 1);
  sem_out("freed_wait", "%d %d %d %d", rb, st.MPI_SOURCE, st.MPI_TAG, cnt);
}

/* cmfree2: the communicator of a split (ranks differ from the world's), a
 * receive from a named source, freed, then MPI_Waitall. */
static void freed_waitall(void) {
  MPI_Comm c = reversed();
  int cme, cn;
  MPI_Comm_rank(c, &cme);
  MPI_Comm_size(c, &cn);
  CHECK_EQ(cme, n - 1 - me);
  int from = (cme + 1) % cn, to = (cme + cn - 1) % cn; /* world left, right */
  int sb[2] = {me, 2 * me}, rb[2] = {-1, -1};
  MPI_Request r[2];
  sem_traffic_t b = sem_traffic(left);
  MPI_Irecv(rb, 2, MPI_INT, from, 3, c, &r[0]);
  MPI_Isend(sb, 2, MPI_INT, to, 3, c, &r[1]);
  CHECK_EQ(MPI_Comm_free(&c), MPI_SUCCESS);
  MPI_Status st[2];
  CHECK_EQ(MPI_Waitall(2, r, st), MPI_SUCCESS);
  CHECK_EQ(rb[0], left);
  CHECK_EQ(rb[1], 2 * left);
  CHECK_EQ(st[0].MPI_SOURCE, from);
  CHECK_EQ(st[0].MPI_TAG, 3);
  SEM_CHECK_RECV(left, b, 8, 1);
  sem_out("freed_waitall", "%d %d %d %d", rb[0], rb[1], st[0].MPI_SOURCE, st[0].MPI_TAG);
}

/* MPI_Test until done, with statuses ignored for the send. */
static void freed_test(void) {
  MPI_Comm c = reversed();
  int sb = 7 * me, rb = -1, flag = 0, polls = 0;
  MPI_Request rr, sr;
  sem_traffic_t b = sem_traffic(left);
  MPI_Irecv(&rb, 1, MPI_INT, MPI_ANY_SOURCE, 5, c, &rr);
  MPI_Isend(&sb, 1, MPI_INT, n - 1 - right, 5, c, &sr);
  MPI_Comm_free(&c);
  MPI_Status st;
  while (!flag) {
    CHECK_EQ(MPI_Test(&rr, &flag, &st), MPI_SUCCESS);
    polls++;
  }
  flag = 0;
  while (!flag)
    CHECK_EQ(MPI_Test(&sr, &flag, MPI_STATUS_IGNORE), MPI_SUCCESS);
  CHECK_EQ(rb, 7 * left);
  CHECK_EQ(st.MPI_SOURCE, n - 1 - left);
  SEM_CHECK_RECV(left, b, 4, 1);
  CHECK_GT(polls, 0);
  sem_out("freed_test", "%d %d %d", rb, st.MPI_SOURCE, st.MPI_TAG);
}

/* Persistent requests outlive their freed communicator: started three
 * times, completed with Waitall, then freed. */
static void freed_persistent(void) {
  MPI_Comm c = reversed();
  int sb = 0, rb = -1;
  MPI_Request r[2];
  sem_traffic_t b = sem_traffic(left);
  MPI_Recv_init(&rb, 1, MPI_INT, MPI_ANY_SOURCE, 9, c, &r[0]);
  MPI_Send_init(&sb, 1, MPI_INT, n - 1 - right, 9, c, &r[1]);
  MPI_Comm_free(&c);
  int got[3];
  for (int k = 0; k < 3; k++) {
    sb = 1000 * k + me;
    CHECK_EQ(MPI_Startall(2, r), MPI_SUCCESS);
    MPI_Status st[2];
    CHECK_EQ(MPI_Waitall(2, r, st), MPI_SUCCESS);
    CHECK(r[0] != MPI_REQUEST_NULL && r[1] != MPI_REQUEST_NULL); /* inactive, not freed */
    CHECK_EQ(rb, 1000 * k + left);
    CHECK_EQ(st[0].MPI_SOURCE, n - 1 - left);
    got[k] = rb;
  }
  MPI_Request_free(&r[0]);
  MPI_Request_free(&r[1]);
  CHECK(r[0] == MPI_REQUEST_NULL);
  SEM_CHECK_RECV(left, b, 12, 3);
  sem_out("freed_persistent", "%d %d %d", got[0], got[1], got[2]);
}

/* A derived datatype freed with a receive and a send on it pending. */
static void freed_type(void) {
  MPI_Datatype vec;
  MPI_Type_vector(3, 1, 2, MPI_INT, &vec);
  MPI_Type_commit(&vec);
  int sb[6], rb[6];
  for (int i = 0; i < 6; i++) {
    sb[i] = 10 * me + i;
    rb[i] = -1;
  }
  MPI_Request r[2];
  sem_traffic_t b = sem_traffic(left);
  MPI_Irecv(rb, 1, vec, left, 11, MPI_COMM_WORLD, &r[0]);
  MPI_Isend(sb, 1, vec, right, 11, MPI_COMM_WORLD, &r[1]);
  CHECK_EQ(MPI_Type_free(&vec), MPI_SUCCESS);
  CHECK(vec == MPI_DATATYPE_NULL);
  /* a new datatype (its handle may be the freed one's) used before the wait */
  MPI_Datatype other;
  MPI_Type_contiguous(2, MPI_DOUBLE, &other);
  MPI_Type_commit(&other);
  int osz = 0;
  MPI_Type_size(other, &osz);
  CHECK_EQ(osz, 16);
  MPI_Status st[2];
  CHECK_EQ(MPI_Waitall(2, r, st), MPI_SUCCESS);
  int el = -1, cnt = -1;
  MPI_Get_elements(&st[0], MPI_INT, &el);
  MPI_Get_count(&st[0], MPI_INT, &cnt);
  for (int i = 0; i < 6; i++)
    CHECK_EQ(rb[i], i % 2 ? -1 : 10 * left + i);
  CHECK_EQ(el, 3);
  CHECK_EQ(cnt, 3);
  SEM_CHECK_RECV(left, b, 12, 1);
  MPI_Type_free(&other);
  sem_out("freed_type", "%d %d %d %d %d %d / %d %d", rb[0], rb[1], rb[2], rb[3], rb[4],
          rb[5], el, cnt);
}

/* The freed communicator's handle (and ballast's cache slot for it) may
 * name new communicators before the wait: many are created, used and freed
 * between the post and the completion. */
static void reuse(void) {
  MPI_Comm d;
  MPI_Comm_dup(MPI_COMM_WORLD, &d);
  int sb = 555 + me, rb = -1;
  MPI_Request r[2];
  sem_traffic_t b = sem_traffic(left);
  MPI_Irecv(&rb, 1, MPI_INT, MPI_ANY_SOURCE, 1, d, &r[0]);
  MPI_Isend(&sb, 1, MPI_INT, right, 1, d, &r[1]);
  MPI_Comm_free(&d);
  int sum = 0;
  for (int k = 0; k < 16; k++) {
    MPI_Comm c;
    MPI_Comm_split(MPI_COMM_WORLD, 0, (me * (k + 3)) % n == 0 ? -me : me + k, &c);
    int cme = -1, y = -1;
    MPI_Comm_rank(c, &cme);
    /* point to point (with itself, not to disturb the counts checked) on
     * the new communicator: ballast translates its ranks */
    MPI_Sendrecv(&cme, 1, MPI_INT, cme, 0, &y, 1, MPI_INT, cme, 0, c, MPI_STATUS_IGNORE);
    CHECK_EQ(y, cme);
    sum += y;
    MPI_Comm_free(&c);
  }
  MPI_Status st;
  CHECK_EQ(MPI_Wait(&r[0], &st), MPI_SUCCESS);
  CHECK_EQ(MPI_Wait(&r[1], MPI_STATUS_IGNORE), MPI_SUCCESS);
  CHECK_EQ(rb, 555 + left);
  CHECK_EQ(st.MPI_SOURCE, left);
  SEM_CHECK_RECV(left, b, 4, 1);
  (void)sum;
  sem_out("reuse", "%d %d", rb, st.MPI_SOURCE);
}

/* A matched message outlives its freed communicator (MPI_Mprobe, then
 * MPI_Comm_free, then MPI_Mrecv; MPI_Improbe + MPI_Imrecv likewise). */
static void freed_mprobe(void) {
  for (int nb = 0; nb < 2; nb++) {
    MPI_Comm c = reversed();
    int sb = 42 + me + nb, rb = -1;
    MPI_Request sr;
    sem_traffic_t b = sem_traffic(left);
    MPI_Isend(&sb, 1, MPI_INT, n - 1 - right, 2, c, &sr);
    MPI_Message msg = MPI_MESSAGE_NULL;
    MPI_Status st;
    if (nb) {
      int flag = 0;
      while (!flag)
        MPI_Improbe(MPI_ANY_SOURCE, 2, c, &flag, &msg, &st);
    } else {
      MPI_Mprobe(MPI_ANY_SOURCE, 2, c, &msg, &st);
    }
    CHECK_EQ(st.MPI_SOURCE, n - 1 - left);
    MPI_Comm_free(&c);
    MPI_Status rs;
    if (nb) {
      MPI_Request rr;
      CHECK_EQ(MPI_Imrecv(&rb, 1, MPI_INT, &msg, &rr), MPI_SUCCESS);
      CHECK_EQ(MPI_Wait(&rr, &rs), MPI_SUCCESS);
    } else {
      CHECK_EQ(MPI_Mrecv(&rb, 1, MPI_INT, &msg, &rs), MPI_SUCCESS);
    }
    CHECK(msg == MPI_MESSAGE_NULL);
    MPI_Wait(&sr, MPI_STATUS_IGNORE);
    CHECK_EQ(rb, 42 + left + nb);
    CHECK_EQ(rs.MPI_SOURCE, n - 1 - left);
    SEM_CHECK_RECV(left, b, 4, 1);
    sem_out(nb ? "freed_improbe" : "freed_mprobe", "%d %d", rb, rs.MPI_SOURCE);
  }
}

/* A send request freed (MPI_Request_free) and its communicator freed while
 * the message is still on its way. */
static void freed_request(void) {
  MPI_Comm d;
  MPI_Comm_dup(MPI_COMM_WORLD, &d);
  int sb = 77 + me, rb = -1;
  MPI_Request rr, sr;
  sem_traffic_t bs = sem_traffic(right);
  MPI_Irecv(&rb, 1, MPI_INT, left, 4, d, &rr);
  MPI_Isend(&sb, 1, MPI_INT, right, 4, d, &sr);
  CHECK_EQ(MPI_Request_free(&sr), MPI_SUCCESS);
  CHECK(sr == MPI_REQUEST_NULL);
  MPI_Comm_free(&d);
  MPI_Wait(&rr, MPI_STATUS_IGNORE);
  CHECK_EQ(rb, 77 + left);
  SEM_CHECK_SENT(right, bs, 4, 1);
  MPI_Barrier(MPI_COMM_WORLD); /* sb stays valid until every receive is done */
  sem_out("freed_request", "%d", rb);
}

/* An intercommunicator (evens and odds) freed with receives pending. */
static void freed_intercomm(void) {
  MPI_Comm local, inter;
  MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &local);
  CHECK_EQ(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, me % 2 ? 0 : 1, 21, &inter),
           MPI_SUCCESS);
  int lme, rsize;
  MPI_Comm_rank(local, &lme);
  MPI_Comm_remote_size(inter, &rsize);
  int peer = lme % rsize; /* remote rank lme: world rank 2*lme + 1 - me%2 */
  int sb = 300 + me, rb = -1;
  MPI_Request r[2];
  /* every process of one side sends to remote rank lme % rsize; the
   * receivers count what comes in from any source */
  int nrecv = 0;
  for (int k = 0; k < n / 2; k++)
    nrecv += k % rsize == lme;
  CHECK_EQ(nrecv, 1);
  sem_traffic_t b = sem_traffic(2 * lme + 1 - me % 2);
  MPI_Irecv(&rb, 1, MPI_INT, MPI_ANY_SOURCE, 6, inter, &r[0]);
  MPI_Isend(&sb, 1, MPI_INT, peer, 6, inter, &r[1]);
  MPI_Comm_free(&inter);
  MPI_Comm_free(&local);
  MPI_Status st[2];
  CHECK_EQ(MPI_Waitall(2, r, st), MPI_SUCCESS);
  CHECK_EQ(st[0].MPI_SOURCE, lme);
  CHECK_EQ(rb, 300 + 2 * lme + 1 - me % 2);
  SEM_CHECK_RECV(2 * lme + 1 - me % 2, b, 4, 1);
  sem_out("freed_intercomm", "%d %d", rb, st[0].MPI_SOURCE);
}

/* Groups freed while in use: a window's access and exposure epochs opened
 * with groups that are freed before the epochs end. */
static void freed_group(void) {
  int *base = NULL;
  MPI_Win win;
  MPI_Win_allocate(2 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
  base[0] = base[1] = -1;
  MPI_Group world, to, from;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  MPI_Group_incl(world, 1, &right, &to);
  MPI_Group_incl(world, 1, &left, &from);
  MPI_Group_free(&world);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_post(from, 0, win);
  MPI_Win_start(to, 0, win);
  CHECK_EQ(MPI_Group_free(&to), MPI_SUCCESS);
  CHECK_EQ(MPI_Group_free(&from), MPI_SUCCESS);
  int v = 900 + me;
  MPI_Put(&v, 1, MPI_INT, right, 1, 1, MPI_INT, win);
  CHECK_EQ(MPI_Win_complete(win), MPI_SUCCESS);
  CHECK_EQ(MPI_Win_wait(win), MPI_SUCCESS);
  int got0 = base[0], got1 = base[1];
  CHECK_EQ(got0, -1);
  CHECK_EQ(got1, 900 + left);
  MPI_Win_free(&win);
  sem_out("freed_group", "%d %d", got0, got1);
}

/* A derived datatype freed while a file write and read on it are pending
 * (each rank its own file). */
static void freed_type_io(void) {
  char path[256];
  snprintf(path, sizeof path, "%s/sem_handles_%d_%d.bin",
           getenv("SEM_TMPDIR") ? getenv("SEM_TMPDIR") : "/tmp", (int)getpid(), me);
  MPI_File fh;
  CHECK_EQ(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_RDWR,
                         MPI_INFO_NULL, &fh), MPI_SUCCESS);
  MPI_Datatype pair;
  MPI_Type_contiguous(2, MPI_INT, &pair);
  MPI_Type_commit(&pair);
  int w[4] = {me, me + 1, me + 2, me + 3}, r[4] = {-1, -1, -1, -1};
  MPI_Request rq;
  MPI_Status st;
  CHECK_EQ(MPI_File_iwrite_at(fh, 0, w, 2, pair, &rq), MPI_SUCCESS);
  MPI_Type_free(&pair);
  CHECK_EQ(MPI_Wait(&rq, &st), MPI_SUCCESS);
  MPI_Type_contiguous(2, MPI_INT, &pair);
  MPI_Type_commit(&pair);
  CHECK_EQ(MPI_File_iread_at(fh, 0, r, 2, pair, &rq), MPI_SUCCESS);
  MPI_Type_free(&pair);
  CHECK_EQ(MPI_Wait(&rq, &st), MPI_SUCCESS);
  int cnt = -1;
  MPI_Get_count(&st, MPI_INT, &cnt);
  CHECK_EQ(cnt, 4);
  for (int i = 0; i < 4; i++)
    CHECK_EQ(r[i], me + i);
  MPI_File_close(&fh);
  MPI_File_delete(path, MPI_INFO_NULL);
  sem_out("freed_type_io", "%d %d %d %d %d", r[0], r[1], r[2], r[3], cnt);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  CHECK_EQ(n % 2, 0);
  right = (me + 1) % n;
  left = (me + n - 1) % n;
  int rounds = argc > 1 ? atoi(argv[1]) : 1;
  for (int k = 0; k < rounds; k++) {
    freed_wait();
    freed_waitall();
    freed_test();
    freed_persistent();
    freed_type();
    reuse();
    freed_mprobe();
    freed_request();
    freed_intercomm();
    freed_group();
    freed_type_io();
  }
  TEST_PASS("sem_handles");
  MPI_Finalize();
  return 0;
}
