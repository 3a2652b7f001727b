/*
 * MPI's topology constructors with reorder = 1 get ballast's mapping
 * (src/mon/wrap_topo.c, src/topo). Run on 8 ranks that BALLAST_HW_LAYOUT
 * spreads round-robin over 2 nodes (node of world rank r = r % 2), so MPI's
 * own order puts every ring neighbour on the other node and a good order
 * only 2 of the 8 ring links.
 * argv[1] "on": reorder applies; "off": BALLAST_REORDER=off, every
 * communicator keeps the old order.
 */
#include <stdlib.h>
#include <string.h>

#include "test_util.h" /* MPI only: the same program runs under LD_PRELOAD */

static int on;

/* MPI_UNWEIGHTED is a sentinel address that GCC's bounds checks take for a
 * zero-size buffer; passed through a function they do not look into. */
__attribute__((noinline)) static int *unweighted(void) { return MPI_UNWEIGHTED; }

/* World rank of rank r of comm. */
static int world_of(MPI_Comm comm, int r) {
  MPI_Group g, w;
  int out = -1;
  MPI_Comm_group(comm, &g);
  MPI_Comm_group(MPI_COMM_WORLD, &w);
  MPI_Group_translate_ranks(g, 1, &r, w, &out);
  MPI_Group_free(&g);
  MPI_Group_free(&w);
  return out;
}

/* Links of a ring over comm (rank i with i+1) whose ends sit on two nodes. */
static int ring_crossings(MPI_Comm comm) {
  int me, n;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_size(comm, &n);
  int mine = world_of(comm, me) % 2 != world_of(comm, (me + 1) % n) % 2, all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_SUM, comm);
  return all;
}

static int renumbered(MPI_Comm comm) {
  int me, old, moved = 0;
  MPI_Comm_rank(comm, &me);
  MPI_Comm_rank(MPI_COMM_WORLD, &old);
  int mine = me != old;
  MPI_Allreduce(&mine, &moved, 1, MPI_INT, MPI_SUM, comm);
  return moved;
}

static void test_cart_ring(void) {
  int dims[1] = {8}, periods[1] = {1};
  MPI_Comm cart;
  CHECK_EQ(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 1, &cart), MPI_SUCCESS);
  int type = 0;
  MPI_Topo_test(cart, &type);
  CHECK_EQ(type, MPI_CART);
  int me, src, dst;
  MPI_Comm_rank(cart, &me);
  MPI_Cart_shift(cart, 0, 1, &src, &dst);
  CHECK_EQ(dst, (me + 1) % 8);
  CHECK_EQ(src, (me + 7) % 8);
  if (on) {
    CHECK_EQ(ring_crossings(cart), 2);
    CHECK_GT(renumbered(cart), 0);
  } else {
    CHECK_EQ(ring_crossings(cart), 8);
    CHECK_EQ(renumbered(cart), 0);
  }
  /* A neighbourhood collective sees the Cartesian neighbours' new ranks. */
  int got[2] = {-1, -1};
  MPI_Neighbor_allgather(&me, 1, MPI_INT, got, 1, MPI_INT, cart);
  CHECK_EQ(got[0], src);
  CHECK_EQ(got[1], dst);
  MPI_Comm_free(&cart);
}

static void test_cart_2d(void) {
  int dims[2] = {2, 4}, periods[2] = {0, 1};
  MPI_Comm cart, keep;
  CHECK_EQ(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 1, &cart), MPI_SUCCESS);
  int me, coords[2], back = -1, d[2], p[2], c[2];
  MPI_Comm_rank(cart, &me);
  MPI_Cart_coords(cart, me, 2, coords);
  CHECK_EQ(coords[0], me / 4);
  CHECK_EQ(coords[1], me % 4);
  MPI_Cart_rank(cart, coords, &back);
  CHECK_EQ(back, me);
  MPI_Cart_get(cart, 2, d, p, c);
  CHECK_EQ(d[0], 2);
  CHECK_EQ(d[1], 4);
  CHECK_EQ(p[0], 0);
  CHECK_EQ(p[1], 1);
  int src, dst;
  MPI_Cart_shift(cart, 0, 1, &src, &dst);
  CHECK_EQ(dst, me < 4 ? me + 4 : MPI_PROC_NULL);
  MPI_Comm_free(&cart);
  /* reorder = 0 is never changed. */
  CHECK_EQ(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &keep), MPI_SUCCESS);
  CHECK_EQ(renumbered(keep), 0);
  MPI_Comm_free(&keep);
}

static void test_graph_ring(void) {
  int index[8], edges[16];
  for (int v = 0; v < 8; v++) {
    index[v] = 2 * (v + 1);
    edges[2 * v] = (v + 7) % 8;
    edges[2 * v + 1] = (v + 1) % 8;
  }
  MPI_Comm gc;
  CHECK_EQ(MPI_Graph_create(MPI_COMM_WORLD, 8, index, edges, 1, &gc), MPI_SUCCESS);
  int me, nb[2], cnt = 0;
  MPI_Comm_rank(gc, &me);
  MPI_Graph_neighbors_count(gc, me, &cnt);
  CHECK_EQ(cnt, 2);
  MPI_Graph_neighbors(gc, me, 2, nb);
  CHECK_EQ(nb[0], (me + 7) % 8);
  CHECK_EQ(nb[1], (me + 1) % 8);
  CHECK_EQ(ring_crossings(gc), on ? 2 : 8);
  MPI_Comm_free(&gc);
}

/* Process r's lists: in from r-1 and r+1, out to r+1 and r-1 (old ranks),
 * weights that name the declaring process. */
static void dist_lists(int r, int *src, int *sw, int *dst, int *dw) {
  src[0] = (r + 7) % 8, src[1] = (r + 1) % 8;
  sw[0] = 100 + r, sw[1] = 200 + r;
  dst[0] = (r + 1) % 8, dst[1] = (r + 7) % 8;
  dw[0] = 300 + r, dw[1] = 400 + r;
}

/* The distributed graphs keep MPI's own order (a reordering may only
 * renumber processes, each keeps the neighbourhood it declared, so none
 * could come nearer its neighbours): every process has the lists it
 * declared, in its order, and the ring keeps its 8 links between nodes. */
static void test_dist_adjacent(void) {
  int old, src[2], sw[2], dst[2], dw[2];
  MPI_Comm_rank(MPI_COMM_WORLD, &old);
  dist_lists(old, src, sw, dst, dw);
  MPI_Comm dg;
  CHECK_EQ(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, src, sw, 2, dst, dw,
                                          MPI_INFO_NULL, 1, &dg), MPI_SUCCESS);
  int me, indeg, outdeg, weighted;
  MPI_Comm_rank(dg, &me);
  CHECK_EQ(me, old);
  MPI_Dist_graph_neighbors_count(dg, &indeg, &outdeg, &weighted);
  CHECK_EQ(indeg, 2);
  CHECK_EQ(outdeg, 2);
  CHECK(weighted);
  int gs[2], gsw[2], gd[2], gdw[2];
  MPI_Dist_graph_neighbors(dg, 2, gs, gsw, 2, gd, gdw);
  for (int i = 0; i < 2; i++) {
    CHECK_EQ(gs[i], src[i]);
    CHECK_EQ(gsw[i], sw[i]);
    CHECK_EQ(gd[i], dst[i]);
    CHECK_EQ(gdw[i], dw[i]);
  }
  int got[2] = {-1, -1};
  MPI_Neighbor_allgather(&me, 1, MPI_INT, got, 1, MPI_INT, dg);
  CHECK_EQ(got[0], src[0]);
  CHECK_EQ(got[1], src[1]);
  CHECK_EQ(ring_crossings(dg), 8);
  CHECK_EQ(renumbered(dg), 0);
  MPI_Comm_free(&dg);
}

/* General: rank r declares the out-arcs of vertex (r + 3) % 8, unweighted. */
static void test_dist_general(void) {
  int old;
  MPI_Comm_rank(MPI_COMM_WORLD, &old);
  int v = (old + 3) % 8, node = v, degree = 2, targets[2] = {(v + 1) % 8, (v + 7) % 8};
  MPI_Comm dg;
  CHECK_EQ(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &node, &degree, targets,
                                 unweighted(), MPI_INFO_NULL, 1, &dg), MPI_SUCCESS);
  int me, indeg, outdeg, weighted;
  MPI_Comm_rank(dg, &me);
  CHECK_EQ(me, old);
  MPI_Dist_graph_neighbors_count(dg, &indeg, &outdeg, &weighted);
  CHECK_EQ(indeg, 2);
  CHECK_EQ(outdeg, 2);
  CHECK(!weighted);
  int s[2], d[2];
  MPI_Dist_graph_neighbors(dg, 2, s, unweighted(), 2, d, unweighted());
  int a = (me + 1) % 8, b = (me + 7) % 8;
  CHECK((s[0] == a && s[1] == b) || (s[0] == b && s[1] == a));
  CHECK((d[0] == a && d[1] == b) || (d[0] == b && d[1] == a));
  CHECK_EQ(ring_crossings(dg), 8);
  MPI_Comm_free(&dg);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  on = argc > 1 && !strcmp(argv[1], "on");
  int n;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  CHECK_EQ(n, 8);
  test_cart_ring();
  test_cart_2d();
  test_graph_ring();
  test_dist_adjacent();
  test_dist_general();
  TEST_PASS("topo_reorder");
  MPI_Finalize();
  return 0;
}
