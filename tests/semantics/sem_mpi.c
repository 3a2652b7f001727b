/*
 * The MPI-3.1 semantics a profiling layer must preserve, each asserted as
 * the standard states it and printed (check_same.py compares watched and
 * unwatched runs): MPI_PROC_NULL (3.11), MPI_ANY_SOURCE / MPI_ANY_TAG,
 * MPI_STATUS(ES)_IGNORE (3.2.6), MPI_Request_get_status (3.7.6: completion
 * seen, request kept), persistent requests (3.9), generalized
 * requests (12.2), MPI_Cancel of a receive (3.8.4), zero counts, derived and
 * overlapping datatypes (4.1), intercommunicators with point to point and
 * collectives (6.6, 5.2.2), MPI_Comm_idup (6.4.2), error handlers that
 * return (8.3: MPI_ERRORS_RETURN, a user handler; codes passed through
 * unchanged), and MPI_Waitany / Testany / Waitsome / Testsome / Waitall /
 * Testall with MPI_REQUEST_NULL and inactive persistent requests (3.7.5:
 * MPI_UNDEFINED, empty statuses). 2 or 4 ranks. Linked to ballast (SEM_MON)
 * it also checks that nothing is credited for what moved nothing.
 */
#include <string.h>

#include "sem_util.h"

static int me, n, left, right;

/* An empty status (3.7.3): source MPI_ANY_SOURCE, tag MPI_ANY_TAG, count 0. */
static void check_empty(const MPI_Status *st) {
  int cnt = -1, canc = 1;
  CHECK_EQ(st->MPI_SOURCE, MPI_ANY_SOURCE);
  CHECK_EQ(st->MPI_TAG, MPI_ANY_TAG);
  MPI_Get_count(st, MPI_INT, &cnt);
  CHECK_EQ(cnt, 0);
  MPI_Test_cancelled(st, &canc);
  CHECK(!canc);
}

static void proc_null(void) {
  int x = 5, y = 7, cnt = -1;
  MPI_Status st, sts[2];
  sem_all_t b = sem_all();
  CHECK_EQ(MPI_Send(&x, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD), MPI_SUCCESS);
  CHECK_EQ(MPI_Recv(&y, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st), MPI_SUCCESS);
  CHECK_EQ(y, 7); /* untouched */
  CHECK_EQ(st.MPI_SOURCE, MPI_PROC_NULL);
  CHECK_EQ(st.MPI_TAG, MPI_ANY_TAG);
  MPI_Get_count(&st, MPI_INT, &cnt);
  CHECK_EQ(cnt, 0);
  MPI_Request r[2];
  MPI_Isend(&x, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &r[0]);
  MPI_Irecv(&y, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &r[1]);
  CHECK_EQ(MPI_Waitall(2, r, sts), MPI_SUCCESS);
  CHECK_EQ(sts[1].MPI_SOURCE, MPI_PROC_NULL);
  CHECK_EQ(sts[1].MPI_TAG, MPI_ANY_TAG);
  CHECK_EQ(MPI_Sendrecv(&x, 1, MPI_INT, MPI_PROC_NULL, 1, &y, 1, MPI_INT, MPI_PROC_NULL, 1,
                        MPI_COMM_WORLD, &st), MPI_SUCCESS);
  CHECK_EQ(st.MPI_SOURCE, MPI_PROC_NULL);
  MPI_Request pr;
  MPI_Recv_init(&y, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &pr);
  MPI_Start(&pr);
  CHECK_EQ(MPI_Wait(&pr, &st), MPI_SUCCESS);
  CHECK_EQ(st.MPI_SOURCE, MPI_PROC_NULL);
  MPI_Request_free(&pr);
  CHECK_EQ(y, 7);
  SEM_CHECK_NOTHING(b);
  sem_out("proc_null", "%d %d %d %d", st.MPI_SOURCE, sts[1].MPI_SOURCE, sts[1].MPI_TAG, y);
}

/* Wildcards and ignored statuses: every rank sends two messages with tags
 * 10 + me and 20 + me to its right neighbour. */
static void wildcards(void) {
  int s[2] = {me, -me}, r[2] = {-9, -9};
  MPI_Request q[2];
  MPI_Status st;
  sem_traffic_t b = sem_traffic(left);
  MPI_Isend(&s[0], 1, MPI_INT, right, 10 + me, MPI_COMM_WORLD, &q[0]);
  MPI_Isend(&s[1], 1, MPI_INT, right, 20 + me, MPI_COMM_WORLD, &q[1]);
  CHECK_EQ(MPI_Recv(&r[0], 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st),
           MPI_SUCCESS);
  CHECK_EQ(st.MPI_SOURCE, left);
  CHECK_EQ(st.MPI_TAG, 10 + left); /* non-overtaking: the first one sent */
  CHECK_EQ(MPI_Recv(&r[1], 1, MPI_INT, left, MPI_ANY_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
           MPI_SUCCESS);
  CHECK_EQ(MPI_Waitall(2, q, MPI_STATUSES_IGNORE), MPI_SUCCESS);
  CHECK_EQ(r[0], left);
  CHECK_EQ(r[1], -left);
  SEM_CHECK_RECV(left, b, 8, 2);
  /* nonblocking, statuses ignored everywhere */
  b = sem_traffic(left);
  MPI_Request q4[4];
  MPI_Irecv(&r[0], 1, MPI_INT, MPI_ANY_SOURCE, 30 + left, MPI_COMM_WORLD, &q4[0]);
  MPI_Irecv(&r[1], 1, MPI_INT, left, MPI_ANY_TAG, MPI_COMM_WORLD, &q4[1]);
  MPI_Isend(&s[0], 1, MPI_INT, right, 30 + me, MPI_COMM_WORLD, &q4[2]);
  MPI_Isend(&s[1], 1, MPI_INT, right, 40 + me, MPI_COMM_WORLD, &q4[3]);
  /* MPI_Request_get_status reports completion without freeing the request */
  int flag = 0;
  MPI_Status gs;
  while (!flag)
    CHECK_EQ(MPI_Request_get_status(q4[1], &flag, &gs), MPI_SUCCESS);
  CHECK(q4[1] != MPI_REQUEST_NULL);
  CHECK_EQ(gs.MPI_SOURCE, left);
  CHECK_EQ(gs.MPI_TAG, 40 + left);
  flag = 0;
  while (!flag)
    CHECK_EQ(MPI_Testall(4, q4, &flag, MPI_STATUSES_IGNORE), MPI_SUCCESS);
  CHECK(q4[1] == MPI_REQUEST_NULL);
  CHECK_EQ(r[0], left);
  CHECK_EQ(r[1], -left);
  SEM_CHECK_RECV(left, b, 8, 2);
  sem_out("wildcards", "%d %d %d %d", st.MPI_SOURCE, st.MPI_TAG, r[0], r[1]);
}

/* Persistent requests: started, completed, inactive requests complete at
 * once with an empty status, freed while inactive. */
static void persistent(void) {
  int s = 0, r = -1;
  MPI_Request q[2];
  MPI_Status st[2];
  sem_traffic_t b = sem_traffic(left);
  MPI_Send_init(&s, 1, MPI_INT, right, 50, MPI_COMM_WORLD, &q[0]);
  MPI_Recv_init(&r, 1, MPI_INT, MPI_ANY_SOURCE, 50, MPI_COMM_WORLD, &q[1]);
  /* inactive: Wait and Test return at once with an empty status */
  CHECK_EQ(MPI_Wait(&q[1], &st[1]), MPI_SUCCESS);
  check_empty(&st[1]);
  int flag = 0;
  CHECK_EQ(MPI_Test(&q[1], &flag, &st[1]), MPI_SUCCESS);
  CHECK(flag);
  check_empty(&st[1]);
  CHECK(q[1] != MPI_REQUEST_NULL);
  int sum = 0;
  for (int k = 0; k < 4; k++) {
    s = 100 * k + me;
    if (k % 2) {
      MPI_Start(&q[1]);
      MPI_Start(&q[0]);
    } else {
      MPI_Startall(2, q);
    }
    if (k < 2) {
      CHECK_EQ(MPI_Waitall(2, q, st), MPI_SUCCESS);
    } else {
      int idx = -1, done = 0;
      while (done < 2) {
        CHECK_EQ(MPI_Waitany(2, q, &idx, &st[0]), MPI_SUCCESS);
        CHECK(idx == 0 || idx == 1);
        if (idx == 1)
          CHECK_EQ(st[0].MPI_SOURCE, left);
        done++;
      }
    }
    CHECK_EQ(r, 100 * k + left);
    sum += r;
  }
  MPI_Request_free(&q[0]);
  MPI_Request_free(&q[1]);
  CHECK(q[0] == MPI_REQUEST_NULL && q[1] == MPI_REQUEST_NULL);
  SEM_CHECK_RECV(left, b, 16, 4);
  sem_out("persistent", "%d", sum);
}

/* Generalized requests: completed by the program, status from query_fn. */
static int gq_calls, gf_calls, gc_calls;

static int g_query(void *extra, MPI_Status *st) {
  gq_calls++;
  MPI_Status_set_elements(st, MPI_INT, *(int *)extra);
  MPI_Status_set_cancelled(st, 0);
  st->MPI_SOURCE = 3;
  st->MPI_TAG = 33;
  return MPI_SUCCESS;
}
static int g_free(void *extra) {
  (void)extra;
  gf_calls++;
  return MPI_SUCCESS;
}
static int g_cancel(void *extra, int complete) {
  (void)extra, (void)complete;
  gc_calls++;
  return MPI_SUCCESS;
}

static void grequest(void) {
  int elems = 6;
  gq_calls = gf_calls = gc_calls = 0;
  MPI_Request g[2];
  MPI_Status st;
  sem_all_t b = sem_all();
  CHECK_EQ(MPI_Grequest_start(g_query, g_free, g_cancel, &elems, &g[0]), MPI_SUCCESS);
  int flag = 1;
  CHECK_EQ(MPI_Test(&g[0], &flag, &st), MPI_SUCCESS);
  CHECK(!flag);
  CHECK_EQ(MPI_Grequest_complete(g[0]), MPI_SUCCESS);
  CHECK_EQ(MPI_Wait(&g[0], &st), MPI_SUCCESS);
  CHECK(g[0] == MPI_REQUEST_NULL);
  int cnt = -1;
  MPI_Get_count(&st, MPI_INT, &cnt);
  CHECK_EQ(cnt, 6);
  CHECK_EQ(st.MPI_SOURCE, 3);
  CHECK_EQ(st.MPI_TAG, 33);
  /* in a Waitsome with a null request, completed before the call */
  MPI_Grequest_start(g_query, g_free, g_cancel, &elems, &g[1]);
  g[0] = MPI_REQUEST_NULL;
  MPI_Grequest_complete(g[1]);
  int out = -1, idx[2] = {-1, -1};
  MPI_Status sts[2];
  CHECK_EQ(MPI_Waitsome(2, g, &out, idx, sts), MPI_SUCCESS);
  CHECK_EQ(out, 1);
  CHECK_EQ(idx[0], 1);
  CHECK_EQ(sts[0].MPI_TAG, 33);
  CHECK_EQ(gf_calls, 2);
  CHECK_GE(gq_calls, 2);
  CHECK_EQ(gc_calls, 0);
  SEM_CHECK_NOTHING(b);
  sem_out("grequest", "%d %d %d %d %d", cnt, st.MPI_SOURCE, st.MPI_TAG, out, idx[0]);
}

/* MPI_Cancel of a receive that nothing matches. */
static void cancel(void) {
  int r = -1, canc = 0;
  MPI_Request q;
  MPI_Status st;
  sem_all_t b = sem_all();
  MPI_Irecv(&r, 1, MPI_INT, MPI_ANY_SOURCE, 999, MPI_COMM_WORLD, &q);
  CHECK_EQ(MPI_Cancel(&q), MPI_SUCCESS);
  CHECK_EQ(MPI_Wait(&q, &st), MPI_SUCCESS);
  CHECK_EQ(MPI_Test_cancelled(&st, &canc), MPI_SUCCESS);
  CHECK(canc);
  CHECK_EQ(r, -1);
  /* the same with a persistent receive, then restarted and matched */
  MPI_Request p;
  MPI_Recv_init(&r, 1, MPI_INT, left, 998, MPI_COMM_WORLD, &p);
  MPI_Start(&p);
  MPI_Cancel(&p);
  MPI_Wait(&p, &st);
  int canc2 = 0;
  MPI_Test_cancelled(&st, &canc2);
  CHECK(canc2);
  SEM_CHECK_NOTHING(b);
  MPI_Barrier(MPI_COMM_WORLD); /* no one sends before every receive is cancelled */
  int s = 4000 + me;
  MPI_Start(&p);
  MPI_Send(&s, 1, MPI_INT, right, 998, MPI_COMM_WORLD);
  MPI_Wait(&p, &st);
  MPI_Test_cancelled(&st, &canc2);
  CHECK(!canc2);
  CHECK_EQ(r, 4000 + left);
  MPI_Request_free(&p);
  sem_out("cancel", "%d %d %d", canc, canc2, r);
}

/* Zero counts: messages, collectives and statuses of nothing. */
static void zero(void) {
  int x = 1, y = 2, cnt = -1;
  MPI_Status st;
  MPI_Request q[2];
  sem_traffic_t b = sem_traffic(left);
  MPI_Irecv(&y, 0, MPI_INT, left, 60, MPI_COMM_WORLD, &q[0]);
  MPI_Isend(&x, 0, MPI_INT, right, 60, MPI_COMM_WORLD, &q[1]);
  MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
  CHECK_EQ(MPI_Sendrecv(&x, 0, MPI_INT, right, 61, &y, 0, MPI_INT, left, 61, MPI_COMM_WORLD,
                        &st), MPI_SUCCESS);
  MPI_Get_count(&st, MPI_INT, &cnt);
  CHECK_EQ(cnt, 0);
  CHECK_EQ(st.MPI_SOURCE, left);
  CHECK_EQ(y, 2);
  SEM_CHECK_RECV(left, b, 0, 2); /* two empty messages */
  CHECK_EQ(MPI_Allreduce(&x, &y, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_SUCCESS);
  CHECK_EQ(MPI_Bcast(&x, 0, MPI_INT, 0, MPI_COMM_WORLD), MPI_SUCCESS);
  CHECK_EQ(MPI_Alltoall(&x, 0, MPI_INT, &y, 0, MPI_INT, MPI_COMM_WORLD), MPI_SUCCESS);
  CHECK_EQ(y, 2);
  sem_out("zero", "%d %d %d", cnt, st.MPI_SOURCE, y);
}

/* Derived datatypes: a vector received into a strided buffer, an indexed
 * type, a struct, a resized type, and an overlapping send type (the same
 * element sent twice, legal for sends). */
static void datatypes(void) {
  int sb[12], rb[12];
  for (int i = 0; i < 12; i++)
    sb[i] = 100 * me + i, rb[i] = -1;
  MPI_Datatype vec, idx, ovl, res, st2;
  MPI_Type_vector(3, 2, 4, MPI_INT, &vec); /* {0,1,4,5,8,9} */
  int bl[2] = {1, 3}, dp[2] = {10, 2};
  MPI_Type_indexed(2, bl, dp, MPI_INT, &idx); /* {10,2,3,4} */
  MPI_Type_create_hvector(3, 2, sizeof(int), MPI_INT, &ovl); /* {0,1,1,2,2,3} */
  MPI_Type_create_resized(MPI_INT, 0, 2 * sizeof(int), &res); /* every other int */
  int sbl[2] = {1, 1};
  MPI_Aint sdp[2] = {0, 3 * sizeof(int)};
  MPI_Datatype sty[2] = {MPI_INT, MPI_INT};
  MPI_Type_create_struct(2, sbl, sdp, sty, &st2); /* {0,3} */
  MPI_Datatype all[5] = {vec, idx, ovl, res, st2};
  for (int k = 0; k < 5; k++)
    MPI_Type_commit(&all[k]);
  vec = all[0], idx = all[1], ovl = all[2], res = all[3], st2 = all[4];
  char out[512];
  size_t at = 0;
  MPI_Status st;
  int el = -1, cnt = -1;
  /* vector -> vector */
  MPI_Sendrecv(sb, 1, vec, right, 70, rb, 1, vec, left, 70, MPI_COMM_WORLD, &st);
  MPI_Get_elements(&st, MPI_INT, &el);
  MPI_Get_count(&st, vec, &cnt);
  CHECK_EQ(el, 6);
  CHECK_EQ(cnt, 1);
  for (int i = 0; i < 12; i++) {
    int in = i % 4 < 2 && i < 10;
    CHECK_EQ(rb[i], in ? 100 * left + i : -1);
  }
  at += (size_t)snprintf(out + at, sizeof out - at, "vec %d %d", el, cnt);
  /* overlapping send -> contiguous receive */
  for (int i = 0; i < 12; i++)
    rb[i] = -1;
  MPI_Sendrecv(sb, 1, ovl, right, 71, rb, 6, MPI_INT, left, 71, MPI_COMM_WORLD, &st);
  static const int want_ovl[6] = {0, 1, 1, 2, 2, 3};
  for (int i = 0; i < 6; i++)
    CHECK_EQ(rb[i], 100 * left + want_ovl[i]);
  MPI_Get_count(&st, MPI_INT, &cnt);
  CHECK_EQ(cnt, 6);
  at += (size_t)snprintf(out + at, sizeof out - at, " ovl %d %d", rb[2], cnt);
  /* indexed -> resized (every other int), 4 of them */
  for (int i = 0; i < 12; i++)
    rb[i] = -1;
  MPI_Sendrecv(sb, 1, idx, right, 72, rb, 4, res, left, 72, MPI_COMM_WORLD, &st);
  static const int want_idx[4] = {10, 2, 3, 4};
  for (int i = 0; i < 4; i++) {
    CHECK_EQ(rb[2 * i], 100 * left + want_idx[i]);
    CHECK_EQ(rb[2 * i + 1], -1);
  }
  MPI_Get_count(&st, res, &cnt);
  MPI_Get_elements(&st, res, &el);
  CHECK_EQ(cnt, 4);
  CHECK_EQ(el, 4);
  at += (size_t)snprintf(out + at, sizeof out - at, " idx %d %d", rb[0], cnt);
  /* struct, nonblocking, partial receive: 2 structs sent, 3 posted */
  for (int i = 0; i < 12; i++)
    rb[i] = -1;
  MPI_Request q[2];
  MPI_Irecv(rb, 3, st2, left, 73, MPI_COMM_WORLD, &q[0]);
  MPI_Isend(sb, 2, st2, right, 73, MPI_COMM_WORLD, &q[1]);
  MPI_Status sts[2];
  MPI_Waitall(2, q, sts);
  MPI_Get_count(&sts[0], st2, &cnt);
  MPI_Get_elements(&sts[0], MPI_INT, &el);
  CHECK_EQ(cnt, 2);
  CHECK_EQ(el, 4);
  /* struct extent: lb 0, ub 4 ints -> second struct at int 4: {0,3,4,7} */
  CHECK_EQ(rb[0], 100 * left + 0);
  CHECK_EQ(rb[3], 100 * left + 3);
  CHECK_EQ(rb[4], 100 * left + 4);
  CHECK_EQ(rb[7], 100 * left + 7);
  at += (size_t)snprintf(out + at, sizeof out - at, " struct %d %d", cnt, el);
  for (int k = 0; k < 5; k++)
    MPI_Type_free(&all[k]);
  sem_out("datatypes", "%s", out);
}

/* Intercommunicator of evens and odds: point to point, rooted and
 * all-to-all collectives, merge. */
static void intercomm(void) {
  MPI_Comm local, inter, merged;
  MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &local);
  CHECK_EQ(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, me % 2 ? 0 : 1, 80, &inter),
           MPI_SUCCESS);
  int lme, lsize, rsize, flag = 0;
  MPI_Comm_rank(local, &lme);
  MPI_Comm_size(local, &lsize);
  MPI_Comm_remote_size(inter, &rsize);
  MPI_Comm_test_inter(inter, &flag);
  CHECK(flag);
  /* point to point with the remote process of the same local rank */
  int peer = lme % rsize, s = 1000 + me, r = -1;
  MPI_Status st;
  MPI_Sendrecv(&s, 1, MPI_INT, peer, 81, &r, 1, MPI_INT, MPI_ANY_SOURCE, 81, inter, &st);
  CHECK_EQ(st.MPI_SOURCE, lme % rsize == lme ? lme : st.MPI_SOURCE);
  int rpeer = 2 * st.MPI_SOURCE + (me % 2 ? 0 : 1);
  CHECK_EQ(r, 1000 + rpeer);
  /* Bcast from the evens' rank 0 to the odds */
  int v = me % 2 || lme ? -7 : 4242; /* the root's buffer holds the value */
  int root = me % 2 ? 0 : (lme == 0 ? MPI_ROOT : MPI_PROC_NULL);
  CHECK_EQ(MPI_Bcast(&v, 1, MPI_INT, root, inter), MPI_SUCCESS);
  CHECK_EQ(v, me % 2 || lme == 0 ? 4242 : -7); /* MPI_PROC_NULL: untouched */
  /* Allreduce: each side gets the sum over the other side */
  int sum = -1;
  CHECK_EQ(MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, inter), MPI_SUCCESS);
  int want = 0;
  for (int i = 0; i < n; i++)
    want += i % 2 != me % 2 ? i : 0;
  CHECK_EQ(sum, want);
  CHECK_EQ(MPI_Barrier(inter), MPI_SUCCESS);
  /* Allgather: the remote group's values */
  int got[8] = {-1, -1, -1, -1, -1, -1, -1, -1};
  MPI_Allgather(&me, 1, MPI_INT, got, 1, MPI_INT, inter);
  for (int i = 0; i < rsize; i++)
    CHECK_EQ(got[i], 2 * i + (me % 2 ? 0 : 1));
  MPI_Intercomm_merge(inter, me % 2, &merged);
  int mme = -1;
  MPI_Comm_rank(merged, &mme);
  CHECK_EQ(mme, me % 2 ? lsize + lme : lme);
  MPI_Comm_free(&merged);
  MPI_Comm_free(&inter);
  MPI_Comm_free(&local);
  sem_out("intercomm", "%d %d %d %d %d", r, st.MPI_SOURCE, v, sum, mme);
}

static void idup(void) {
  MPI_Comm d;
  MPI_Request q;
  CHECK_EQ(MPI_Comm_idup(MPI_COMM_WORLD, &d, &q), MPI_SUCCESS);
  /* the old communicator is usable while the duplicate is pending */
  int x = me, y = -1;
  MPI_Sendrecv(&x, 1, MPI_INT, right, 90, &y, 1, MPI_INT, left, 90, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
  CHECK_EQ(y, left);
  MPI_Status st;
  CHECK_EQ(MPI_Wait(&q, &st), MPI_SUCCESS);
  int cmp = -1;
  MPI_Comm_compare(d, MPI_COMM_WORLD, &cmp);
  CHECK_EQ(cmp, MPI_CONGRUENT);
  int s = -1;
  MPI_Allreduce(&me, &s, 1, MPI_INT, MPI_SUM, d);
  CHECK_EQ(s, n * (n - 1) / 2);
  /* a point-to-point message on it, received from any source */
  MPI_Sendrecv(&x, 1, MPI_INT, right, 91, &y, 1, MPI_INT, MPI_ANY_SOURCE, 91, d, &st);
  CHECK_EQ(st.MPI_SOURCE, left);
  MPI_Comm_free(&d);
  sem_out("idup", "%d %d %d", cmp, s, y);
}

/* Error handlers that return: the codes come back unchanged. */
static int eh_calls, eh_last;

static void eh_fn(MPI_Comm *comm, int *code, ...) {
  (void)comm;
  eh_calls++;
  eh_last = *code;
}

static void errors(void) {
  MPI_Comm d;
  MPI_Comm_dup(MPI_COMM_WORLD, &d);
  eh_calls = eh_last = 0;
  CHECK_EQ(MPI_Comm_set_errhandler(d, MPI_ERRORS_RETURN), MPI_SUCCESS);
  int x = 0, cls[6], codes[6];
  codes[0] = MPI_Send(&x, 1, MPI_INT, n, 0, d);                /* rank out of range */
  codes[1] = MPI_Send(&x, -1, MPI_INT, right, 0, d);           /* negative count */
  codes[2] = MPI_Send(&x, 1, MPI_DATATYPE_NULL, right, 0, d);  /* no datatype */
  MPI_Request q = MPI_REQUEST_NULL;
  codes[3] = MPI_Irecv(&x, 1, MPI_INT, n + 5, 0, d, &q);       /* bad source */
  codes[4] = MPI_Allreduce(&x, &x, 1, MPI_INT, MPI_OP_NULL, d); /* no operation */
  codes[5] = MPI_Bcast(&x, 1, MPI_INT, n, d);                  /* root out of range */
  for (int i = 0; i < 6; i++) {
    CHECK_NE(codes[i], MPI_SUCCESS);
    MPI_Error_class(codes[i], &cls[i]);
  }
  CHECK_EQ(cls[0], MPI_ERR_RANK);
  CHECK_EQ(cls[1], MPI_ERR_COUNT);
  CHECK_EQ(cls[2], MPI_ERR_TYPE);
  CHECK_EQ(cls[3], MPI_ERR_RANK);
  CHECK_EQ(cls[4], MPI_ERR_OP);
  CHECK_EQ(cls[5], MPI_ERR_ROOT);
  CHECK(q == MPI_REQUEST_NULL);
  /* a user handler: called once per error, with the code returned */
  MPI_Errhandler eh;
  MPI_Comm_create_errhandler(eh_fn, &eh);
  MPI_Comm_set_errhandler(d, eh);
  int c = MPI_Send(&x, 1, MPI_INT, n, 0, d);
  CHECK_EQ(eh_calls, 1);
  CHECK_EQ(eh_last, c);
  MPI_Errhandler got;
  MPI_Comm_get_errhandler(d, &got);
  CHECK(got == eh);
  MPI_Errhandler_free(&got);
  MPI_Errhandler_free(&eh);
  /* the communicator still works */
  int y = -1;
  CHECK_EQ(MPI_Sendrecv(&me, 1, MPI_INT, right, 1, &y, 1, MPI_INT, left, 1, d,
                        MPI_STATUS_IGNORE), MPI_SUCCESS);
  CHECK_EQ(y, left);
  MPI_Comm_free(&d);
  sem_out("errors", "%d %d %d %d %d %d / %d %d", cls[0], cls[1], cls[2], cls[3], cls[4], cls[5],
          eh_calls, eh_last == c);
}

/* The wait/test family with MPI_REQUEST_NULL and inactive persistent
 * requests. */
static void completion(void) {
  MPI_Request q[4] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  MPI_Status st[4];
  int idx = -2, out = -2, flag = -2, ind[4];
  sem_all_t b = sem_all();
  /* all null */
  CHECK_EQ(MPI_Waitany(4, q, &idx, &st[0]), MPI_SUCCESS);
  CHECK_EQ(idx, MPI_UNDEFINED);
  check_empty(&st[0]);
  CHECK_EQ(MPI_Testany(4, q, &idx, &flag, &st[0]), MPI_SUCCESS);
  CHECK(flag);
  CHECK_EQ(idx, MPI_UNDEFINED);
  CHECK_EQ(MPI_Waitsome(4, q, &out, ind, st), MPI_SUCCESS);
  CHECK_EQ(out, MPI_UNDEFINED);
  CHECK_EQ(MPI_Testsome(4, q, &out, ind, st), MPI_SUCCESS);
  CHECK_EQ(out, MPI_UNDEFINED);
  CHECK_EQ(MPI_Waitall(4, q, st), MPI_SUCCESS);
  for (int i = 0; i < 4; i++)
    check_empty(&st[i]);
  flag = 0;
  CHECK_EQ(MPI_Testall(4, q, &flag, MPI_STATUSES_IGNORE), MPI_SUCCESS);
  CHECK(flag);
  CHECK_EQ(MPI_Waitany(0, NULL, &idx, MPI_STATUS_IGNORE), MPI_SUCCESS);
  CHECK_EQ(idx, MPI_UNDEFINED);
  /* inactive persistent requests count as null */
  int r = -1, s = me;
  MPI_Recv_init(&r, 1, MPI_INT, left, 95, MPI_COMM_WORLD, &q[1]);
  MPI_Send_init(&s, 1, MPI_INT, right, 95, MPI_COMM_WORLD, &q[3]);
  CHECK_EQ(MPI_Waitany(4, q, &idx, &st[0]), MPI_SUCCESS);
  CHECK_EQ(idx, MPI_UNDEFINED);
  CHECK_EQ(MPI_Testsome(4, q, &out, ind, st), MPI_SUCCESS);
  CHECK_EQ(out, MPI_UNDEFINED);
  CHECK_EQ(MPI_Waitsome(4, q, &out, ind, MPI_STATUSES_IGNORE), MPI_SUCCESS);
  CHECK_EQ(out, MPI_UNDEFINED);
  SEM_CHECK_NOTHING(b);
  /* two active among null ones: Testsome until both are done */
  sem_traffic_t bl = sem_traffic(left);
  MPI_Start(&q[1]);
  MPI_Start(&q[3]);
  int done[4] = {0, 0, 0, 0}, ndone = 0, first = -1;
  while (ndone < 2) {
    CHECK_EQ(MPI_Testsome(4, q, &out, ind, st), MPI_SUCCESS);
    CHECK(out >= 0 && out <= 2);
    for (int k = 0; k < out; k++) {
      CHECK(ind[k] == 1 || ind[k] == 3);
      CHECK(!done[ind[k]]);
      done[ind[k]] = 1;
      ndone++;
      if (ind[k] == 1) {
        CHECK_EQ(st[k].MPI_SOURCE, left);
        first = 1;
      }
    }
  }
  CHECK_EQ(first, 1);
  /* both inactive again */
  CHECK_EQ(MPI_Waitsome(4, q, &out, ind, st), MPI_SUCCESS);
  CHECK_EQ(out, MPI_UNDEFINED);
  CHECK_EQ(r, left);
  SEM_CHECK_RECV(left, bl, 4, 1);
  MPI_Request_free(&q[1]);
  MPI_Request_free(&q[3]);
  sem_out("completion", "%d %d %d", idx, first, r);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  CHECK_EQ(n % 2, 0);
  CHECK_LE(n, 8);
  right = (me + 1) % n;
  left = (me + n - 1) % n;
  int rounds = argc > 1 ? atoi(argv[1]) : 1;
  for (int k = 0; k < rounds; k++) {
    proc_null();
    wildcards();
    persistent();
    grequest();
    cancel();
    zero();
    datatypes();
    intercomm();
    idup();
    errors();
    completion();
    MPI_Barrier(MPI_COMM_WORLD);
  }
  TEST_PASS("sem_mpi");
  MPI_Finalize();
  return 0;
}
