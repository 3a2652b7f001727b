/*
 * The C twin of sem_topo.F90: the same topology constructors with reorder =
 * 1 on 8 ranks that BALLAST_HW_LAYOUT spreads round-robin over 2 nodes, the
 * same result lines. check_same.py requires the Fortran programs' lines
 * (mpif.h, use mpi, use mpi_f08; unwatched, preloaded, linked) to equal this
 * program's unwatched ones: C and Fortran behave alike. Lines are keyed by
 * vertex (Cartesian, graph: the process of new rank v has vertex v's role)
 * or by old rank (distributed graphs: each process keeps its declared
 * neighbourhood, named here by old ranks). With SEM_EXPECT_REORDER=1 the
 * Cartesian and graph rings must have 2 links between nodes (ballast's
 * mapping), else 8 (MPI's order).
 */
#include <stdlib.h>

#include "sem_util.h"

static int me, n, expect;

/* MPI_UNWEIGHTED through a function GCC's bounds checks do not look into
 * (they take the sentinel for a zero-size buffer). */
__attribute__((noinline)) static int *unweighted(void) { return MPI_UNWEIGHTED; }
static MPI_Group world;

static int old_of(MPI_Comm c, int r) {
  MPI_Group g;
  int o = -1;
  MPI_Comm_group(c, &g);
  MPI_Group_translate_ranks(g, 1, &r, world, &o);
  MPI_Group_free(&g);
  return o;
}

/* Ring links (v, v+1) of comm whose ends are on two nodes (node = old % 2). */
static int crossings(MPI_Comm c) {
  int v, k = 0, all = 0;
  MPI_Comm_rank(c, &v);
  k = old_of(c, v) % 2 != old_of(c, (v + 1) % n) % 2;
  MPI_Allreduce(&k, &all, 1, MPI_INT, MPI_SUM, c);
  return all;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  CHECK_EQ(n, 8);
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  expect = getenv("SEM_EXPECT_REORDER") && atoi(getenv("SEM_EXPECT_REORDER")) ? 2 : 8;
  MPI_Comm c;
  int v, src, dst, got[4];

  /* 1-D periodic ring */
  int d1[1] = {8}, p1[1] = {1};
  CHECK_EQ(MPI_Cart_create(MPI_COMM_WORLD, 1, d1, p1, 1, &c), MPI_SUCCESS);
  MPI_Comm_rank(c, &v);
  MPI_Cart_shift(c, 0, 1, &src, &dst);
  MPI_Neighbor_allgather(&v, 1, MPI_INT, got, 1, MPI_INT, c);
  CHECK_EQ(got[0], src);
  CHECK_EQ(got[1], dst);
  CHECK_EQ(crossings(c), expect);
  sem_out_as(v, "cart1", "%d %d", src, dst);
  MPI_Comm_free(&c);

  /* 2 x 4, periodic in the second dimension */
  int d2[2] = {2, 4}, p2[2] = {0, 1}, co[2], s2[2], t2[2];
  CHECK_EQ(MPI_Cart_create(MPI_COMM_WORLD, 2, d2, p2, 1, &c), MPI_SUCCESS);
  MPI_Comm_rank(c, &v);
  MPI_Cart_coords(c, v, 2, co);
  MPI_Cart_shift(c, 0, 1, &s2[0], &t2[0]);
  MPI_Cart_shift(c, 1, 1, &s2[1], &t2[1]);
  sem_out_as(v, "cart2", "%d %d %d %d %d %d", co[0], co[1], s2[0], t2[0], s2[1], t2[1]);
  MPI_Comm_free(&c);

  /* graph: the ring */
  int index[8], edges[16], nb[2];
  for (int i = 0; i < 8; i++) {
    index[i] = 2 * (i + 1);
    edges[2 * i] = (i + 7) % 8;
    edges[2 * i + 1] = (i + 1) % 8;
  }
  CHECK_EQ(MPI_Graph_create(MPI_COMM_WORLD, 8, index, edges, 1, &c), MPI_SUCCESS);
  MPI_Comm_rank(c, &v);
  MPI_Graph_neighbors(c, v, 2, nb);
  CHECK_EQ(crossings(c), expect);
  sem_out_as(v, "graph", "%d %d", nb[0], nb[1]);
  MPI_Comm_free(&c);

  /* distributed, adjacent, weighted: each process its own ring neighbours */
  int in[2] = {(me + 7) % 8, (me + 1) % 8}, inw[2] = {100 + me, 200 + me};
  int out[2] = {(me + 1) % 8, (me + 7) % 8}, outw[2] = {300 + me, 400 + me};
  CHECK_EQ(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, in, inw, 2, out, outw,
                                          MPI_INFO_NULL, 1, &c), MPI_SUCCESS);
  int gi[2], giw[2], go[2], gow[2], indeg, outdeg, wt;
  MPI_Dist_graph_neighbors_count(c, &indeg, &outdeg, &wt);
  CHECK_EQ(indeg, 2);
  CHECK_EQ(outdeg, 2);
  CHECK(wt);
  MPI_Dist_graph_neighbors(c, 2, gi, giw, 2, go, gow);
  for (int i = 0; i < 2; i++) {
    gi[i] = old_of(c, gi[i]);
    go[i] = old_of(c, go[i]);
    CHECK_EQ(gi[i], in[i]);
    CHECK_EQ(giw[i], inw[i]);
    CHECK_EQ(go[i], out[i]);
    CHECK_EQ(gow[i], outw[i]);
  }
  sem_out("distadj", "%d:%d %d:%d / %d:%d %d:%d", gi[0], giw[0], gi[1], giw[1], go[0], gow[0],
          go[1], gow[1]);
  MPI_Comm_free(&c);

  /* distributed, general: each process the out-arcs of the next one */
  int node = (me + 1) % 8, deg = 2, tg[2] = {(node + 1) % 8, (node + 7) % 8};
  CHECK_EQ(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &node, &deg, tg, unweighted(),
                                 MPI_INFO_NULL, 1, &c), MPI_SUCCESS);
  MPI_Dist_graph_neighbors_count(c, &indeg, &outdeg, &wt);
  CHECK_EQ(indeg, 2);
  CHECK_EQ(outdeg, 2);
  CHECK(!wt);
  MPI_Dist_graph_neighbors(c, 2, gi, unweighted(), 2, go, unweighted());
  for (int i = 0; i < 2; i++) {
    gi[i] = old_of(c, gi[i]);
    go[i] = old_of(c, go[i]);
  }
  /* MPI leaves the order open: sorted */
  if (gi[0] > gi[1]) {
    int x = gi[0];
    gi[0] = gi[1], gi[1] = x;
  }
  if (go[0] > go[1]) {
    int x = go[0];
    go[0] = go[1], go[1] = x;
  }
  int a = (me + 1) % 8 < (me + 7) % 8 ? (me + 1) % 8 : (me + 7) % 8;
  int b = (me + 1) % 8 < (me + 7) % 8 ? (me + 7) % 8 : (me + 1) % 8;
  CHECK_EQ(gi[0], a);
  CHECK_EQ(gi[1], b);
  CHECK_EQ(go[0], a);
  CHECK_EQ(go[1], b);
  sem_out("distgen", "%d %d / %d %d", gi[0], gi[1], go[0], go[1]);
  MPI_Comm_free(&c);

  MPI_Group_free(&world);
  TEST_PASS("sem_topo");
  MPI_Finalize();
  return 0;
}
