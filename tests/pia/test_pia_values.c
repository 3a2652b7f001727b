/*
 * PIA values against a known workload (2 ranks):
 *  - rank 0 sends N messages of K ints to rank 1 inside region "comm":
 *    MPI_Send ncalls == N, nbytes == N*K*4 (whole run and in "comm"),
 *    MPI_Recv the same on rank 1, the P2P group equals Send + Recv, the
 *    partner volume is N messages and N*K*4 bytes each way;
 *  - region counts exact, times within (0, wall];
 *  - accumulation: two gets add up;
 *  - the tree: names repeated under different parents, by-name returns the
 *    first created, by-path and by-child address the exact one, navigation;
 *  - ids stable while 2000 new regions appear.
 */
#include <ballast.h>

#include "test_util.h"

enum { N = 100, K = 25 };

static double now(void) { return MPI_Wtime(); }

static void workload(int rank) {
  int buf[K];
  for (int i = 0; i < K; i++)
    buf[i] = i;
  CHECK_EQ(mon_region_begin("comm"), 0);
  for (int n = 0; n < N; n++) {
    if (rank == 0)
      MPI_Send(buf, K, MPI_INT, 1, 7, MPI_COMM_WORLD);
    else
      MPI_Recv(buf, K, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  CHECK_EQ(mon_region_end("comm"), 0);
}

static void check_activities(int rank, double wall) {
  pia_act_t send = pia_activity_find("MPI_Send");
  pia_act_t recv = pia_activity_find("MPI_Recv");
  pia_act_t p2p = pia_activity_find(PIA_GROUP_P2P);
  pia_act_t all = pia_activity_find(PIA_GROUP_ALL);
  CHECK_GE(send, 0);
  CHECK_GE(recv, 0);
  CHECK_GE(p2p, 0);
  CHECK_GE(all, 0);
  CHECK_NE(send, recv);
  CHECK_STREQ(pia_activity_name(send), "MPI_Send");
  CHECK_STREQ(pia_activity_name(p2p), "MPI_P2P");
  CHECK_GE(pia_activity_find(PIA_GROUP_COLL), 0);
  CHECK_GE(pia_activity_find(PIA_GROUP_RMA), 0);
  CHECK_GE(pia_activity_find(PIA_GROUP_IO), 0);

  pia_regid_t comm = pia_region_find("comm");
  CHECK_GT(comm, 0);
  pia_act_t mine = rank == 0 ? send : recv, other = rank == 0 ? recv : send;

  pia_actdata_t d;
  pia_actdata_init(&d);
  CHECK_EQ(d.ncalls, 0);
  CHECK(isinf(d.tmin) && d.tmin > 0);
  CHECK_EQ(pia_activity_data(mine, &d), 0);
  CHECK_EQ(d.ncalls, N);
  CHECK_EQ(d.nbytes, (long long)N * K * 4);
  CHECK_DGT(d.tsum, 0.0);
  CHECK_DLE(d.tsum, wall);
  CHECK_DGT(d.tmin, 0.0);
  CHECK_DLE(d.tmin, d.tmax);
  CHECK_DLE(d.tmax, d.tsum);

  /* It accumulates: a second get of the same activity doubles the sums. */
  double tsum1 = d.tsum;
  CHECK_EQ(pia_activity_data(mine, &d), 0);
  CHECK_EQ(d.ncalls, 2 * N);
  CHECK_EQ(d.nbytes, 2LL * N * K * 4);
  CHECK_NEAR(d.tsum, 2 * tsum1, 1e-9);

  /* The other direction did nothing on this rank. */
  pia_actdata_init(&d);
  CHECK_EQ(pia_activity_data(other, &d), 0);
  CHECK_EQ(d.ncalls, 0);
  CHECK_EQ(d.nbytes, 0);

  /* By region: all of it happened in "comm", none in the whole-program
   * region itself (exclusive attribution). */
  pia_actdata_init(&d);
  CHECK_EQ(pia_region_activity_data(comm, mine, &d), 0);
  CHECK_EQ(d.ncalls, N);
  CHECK_EQ(d.nbytes, (long long)N * K * 4);
  pia_actdata_init(&d);
  CHECK_EQ(pia_region_activity_data(PIA_REGION_MAIN, mine, &d), 0);
  CHECK_EQ(d.ncalls, 0);
  pia_actdata_init(&d);
  CHECK_EQ(pia_region_activity_data(PIA_REGION_ALL, mine, &d), 0);
  CHECK_EQ(d.ncalls, N);

  /* Groups: in "comm" only Send/Recv ran, so P2P and ALL equal them. */
  pia_actdata_t g, s;
  pia_actdata_init(&g);
  pia_actdata_init(&s);
  CHECK_EQ(pia_region_activity_data(comm, p2p, &g), 0);
  CHECK_EQ(pia_region_activity_data(comm, send, &s), 0);
  CHECK_EQ(pia_region_activity_data(comm, recv, &s), 0);
  CHECK_EQ(g.ncalls, s.ncalls);
  CHECK_EQ(g.nbytes, s.nbytes);
  CHECK_NEAR(g.tsum, s.tsum, 1e-9);
  pia_actdata_init(&g);
  CHECK_EQ(pia_region_activity_data(comm, all, &g), 0);
  CHECK_EQ(g.ncalls, N);

  /* Partners: world rank of the peer. */
  int peer = 1 - rank;
  pia_partnerdata_t p;
  CHECK_EQ(pia_partner_data(peer, PIA_REGION_ALL, &p), 0);
  CHECK_EQ(rank == 0 ? p.nbytes : p.rbytes, (long long)N * K * 4);
  CHECK_EQ(rank == 0 ? p.nmsgs : p.rmsgs, N);
  CHECK_EQ(rank == 0 ? p.rbytes : p.nbytes, 0);
  CHECK_EQ(pia_partner_data(peer, comm, &p), 0);
  CHECK_EQ(rank == 0 ? p.nmsgs : p.rmsgs, N);
  CHECK_EQ(pia_partner_data(peer, PIA_REGION_MAIN, &p), 0);
  CHECK_EQ(p.nmsgs + p.rmsgs, 0);
  pia_partnerdata_t v[2];
  CHECK_EQ(pia_partner_volumes(2, PIA_REGION_ALL, v), 0);
  CHECK_EQ(v[rank].nbytes + v[rank].rbytes, 0);
  CHECK_EQ(v[peer].nbytes + v[peer].rbytes, (long long)N * K * 4);
}

static void check_tree(double tstart) {
  /* a/b, a/c, d/b, d/b/a: "b" and "a" repeat. */
  for (int rep = 0; rep < 3; rep++) {
    mon_region_begin("a");
    mon_region_begin("b");
    mon_region_end("b");
    mon_region_begin("c");
    mon_region_end("c");
    mon_region_end("a");
    mon_region_begin("d");
    mon_region_begin("b");
    CHECK_EQ(pia_region_current(), pia_region_find_by_path("d/b"));
    mon_region_begin("a");
    mon_region_end("a");
    mon_region_end("b");
    mon_region_end("d");
  }
  CHECK_EQ(pia_region_current(), PIA_REGION_MAIN);
  pia_regid_t a = pia_region_find_child(PIA_REGION_MAIN, "a");
  pia_regid_t ab = pia_region_find_child(a, "b");
  pia_regid_t ac = pia_region_find_child(a, "c");
  pia_regid_t d = pia_region_find_by_path("/d");
  pia_regid_t db = pia_region_find_by_path("d/b");
  pia_regid_t dba = pia_region_find_by_path("d/b/a");
  CHECK_GT(a, 0);
  CHECK_GT(ab, 0);
  CHECK_GT(ac, 0);
  CHECK_GT(d, 0);
  CHECK_GT(db, 0);
  CHECK_GT(dba, 0);
  CHECK_NE(ab, db);
  CHECK_NE(a, dba);
  /* by name: the first created */
  CHECK_EQ(pia_region_find("b"), ab);
  CHECK_EQ(pia_region_find("a"), a);
  CHECK_EQ(pia_region_find_by_path("a/b"), ab);
  CHECK_EQ(pia_region_find_by_path(""), PIA_REGION_MAIN);
  /* navigation */
  CHECK_EQ(pia_region_parent(ab), a);
  CHECK_EQ(pia_region_parent(db), d);
  CHECK_EQ(pia_region_parent(a), PIA_REGION_MAIN);
  CHECK_EQ(pia_region_parent(PIA_REGION_MAIN), BALLAST_ENOTFOUND);
  CHECK_EQ(pia_region_child(a), ac); /* newest first */
  CHECK_EQ(pia_region_next(ac), ab);
  CHECK_EQ(pia_region_next(ab), BALLAST_ENOTFOUND);
  CHECK_EQ(pia_region_child(ac), BALLAST_ENOTFOUND);
  int top = 0, sawa = 0, sawd = 0;
  for (pia_regid_t c = pia_region_child(PIA_REGION_MAIN); c >= 0;
       c = pia_region_next(c)) {
    top++;
    sawa += c == a;
    sawd += c == d;
  }
  CHECK_EQ(sawa, 1);
  CHECK_EQ(sawd, 1);
  CHECK_GE(top, 3); /* comm, a, d (and nothing created by others here) */

  double wall = now() - tstart;
  pia_regdata_t r;
  CHECK_EQ(pia_region_data(ab, &r), 0);
  CHECK_EQ(r.id, ab);
  CHECK_STREQ(r.name, "b");
  CHECK_EQ(r.count, 3);
  CHECK_EQ(r.count64, 3);
  CHECK_DGT(r.wtime, 0.0);
  CHECK_DLE(r.wtime, wall);
  CHECK_DGE(r.mtime, 0.0);
  CHECK_DLE(r.mtime, r.wtime);
  CHECK(r.nhwc >= 0 && r.nhwc <= PIA_HWC_MAX);
  pia_regdata_t ra;
  CHECK_EQ(pia_region_data(a, &ra), 0);
  CHECK_DGE(ra.wtime, r.wtime); /* inclusive */
  CHECK_EQ(pia_region_data(dba, &r), 0);
  CHECK_STREQ(r.name, "a");
  CHECK_EQ(r.count, 3);

  /* Ids are stable while 2000 new regions appear. */
  char name[32];
  for (int i = 0; i < 2000; i++) {
    snprintf(name, sizeof name, "grow%d", i);
    mon_region_begin(name);
    mon_region_end(name);
  }
  CHECK_GE(pia_region_count(), 2000 + 7);
  CHECK_EQ(pia_region_find_by_path("a/b"), ab);
  CHECK_EQ(pia_region_find_by_path("d/b/a"), dba);
  CHECK_EQ(pia_region_find("b"), ab);
  CHECK_EQ(pia_region_data(ab, &r), 0);
  CHECK_STREQ(r.name, "b");
  CHECK_EQ(r.count, 3);
  pia_regid_t g = pia_region_find("grow1999");
  CHECK_GT(g, dba);
  CHECK_EQ(pia_region_data(g, &r), 0);
  CHECK_EQ(r.count, 1);
}

static void check_main(double wall) {
  pia_regdata_t r;
  CHECK_EQ(pia_region_data(PIA_REGION_MAIN, &r), 0);
  CHECK_EQ(r.id, PIA_REGION_MAIN);
  CHECK(r.name != NULL);
  CHECK_DGE(r.wtime, wall); /* the whole program contains the measured span */
  CHECK_DGT(r.mtime, 0.0);
  /* Region 0's clock starts when MPI_Init returns, but MPI_Init's own
   * duration is counted as MPI time (the wrapper records it): take it out
   * before comparing. (Reported to mon's authors: the two should agree.) */
  pia_actdata_t init;
  pia_actdata_init(&init);
  CHECK_EQ(pia_activity_data(pia_activity_find("MPI_Init"), &init), 0);
  CHECK_EQ(init.ncalls, 1);
  CHECK_DLE(r.mtime - init.tsum, r.wtime);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK_EQ(size, 2);
  double t0 = now();
  workload(rank);
  double wall = now() - t0;

  pia_regid_t comm = pia_region_find("comm");
  CHECK_GT(comm, 0);
  pia_act_t send0 = pia_activity_find("MPI_Send");
  int nact = pia_activity_count();
  CHECK_GT(nact, 0);
  pia_regdata_t r;
  CHECK_EQ(pia_region_data(comm, &r), 0);
  CHECK_EQ(r.count, 1);
  CHECK_STREQ(r.name, "comm");
  CHECK_DGT(r.wtime, 0.0);
  CHECK_DLE(r.wtime, wall);
  CHECK_DGT(r.mtime, 0.0);
  CHECK_DLE(r.mtime, r.wtime);
  CHECK_DGE(r.cputime, 0.0);

  check_activities(rank, wall);
  t0 = now();
  check_tree(t0);
  check_main(now() - t0);

  /* Activity ids are stable while new signatures appear (new calls, new
   * sizes, new partners, new regions). */
  double x = rank, y = 0, xb[3] = {0, 0, 0};
  for (int i = 1; i <= 50; i++) {
    mon_region_begin(i % 2 ? "sig_odd" : "sig_even");
    MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Bcast(xb, i % 3 + 1, MPI_DOUBLE, i % 2, MPI_COMM_WORLD);
    mon_region_end(i % 2 ? "sig_odd" : "sig_even");
  }
  CHECK_EQ(y, 1.0);
  CHECK_EQ(pia_activity_find("MPI_Send"), send0);
  CHECK_EQ(pia_activity_count(), nact);
  CHECK_STREQ(pia_activity_name(send0), "MPI_Send");
  pia_actdata_t d;
  pia_actdata_init(&d);
  CHECK_EQ(pia_activity_data(pia_activity_find("MPI_Allreduce"), &d), 0);
  CHECK_EQ(d.ncalls, 50);
  MPI_Barrier(MPI_COMM_WORLD);
  TEST_PASS("pia_values");
  MPI_Finalize();
  return 0;
}
