/* The collective steps of the mapping engine agree on failure: one rank's
 * allocations fail, one after the other across a whole call, and every rank
 * must return together (no rank left waiting in a collective), with an error
 * everywhere (BALLAST_ENOMEM on the failing rank, BALLAST_EREMOTE elsewhere
 * for rta_map_graph_par; the failing rank's code everywhere for discovery)
 * or success everywhere with the mapping of a call that nothing failed (no
 * allocation failure is papered over by a guess that changes the result).
 * Covers rta_map_graph_par (two-phase first mapping and remap with ballast's
 * candidates, tree-leaf first mapping) and rta_hw_discover_ex (pretended
 * layout, measured links). */
#include <string.h>

#include <ballast/rta_map.h>

#include "common/util.h"
#include "test_util.h"

/* Arms the hook on \a victim only; after \a call, tells whether the n-th
 * allocation was reached there (the sweep is complete when it was not). */
static int armed_reached(int rank, int victim, int n) {
  int reached = rank == victim && ballast__alloc_count() >= n;
  MPI_Allreduce(MPI_IN_PLACE, &reached, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return reached;
}

/* Checks the verdicts of one call: all 0, or the victim's own code and
 * \a others elsewhere (others 0: the victim's code everywhere). */
static void check_verdict(int rank, int size, int victim, int rc, int others) {
  int all[16];
  MPI_Allgather(&rc, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
  int failed = 0;
  for (int r = 0; r < size; r++)
    failed += all[r] != 0;
  CHECK(failed == 0 || failed == size);
  if (failed && rank == victim)
    CHECK_EQ(rc, BALLAST_ENOMEM);
  if (failed && rank != victim)
    CHECK_EQ(rc, others ? others : all[victim]);
}

static void sweep_map(int rank, int size, int victim, rta_strategy_t st,
                      const int64_t *prev) {
  rta_graph_t *g = NULL;
  rta_hw_t *hw = NULL;
  CHECK_EQ(rta_graph_stencil3d(8, 8, 8, 27, 4.0, 8.0, &g), 0);
  CHECK_EQ(rta_hw_create_sim(4, "pack:2 core:2", NULL, NULL, &hw), 0);
  if (prev)
    for (int v = 0; v < 64; v++)
      CHECK_EQ(rta_graph_set_vertex(g, v, 4.0, 8.0), 0);
  int64_t *slot = malloc(512 * sizeof *slot), *ref = malloc(512 * sizeof *ref);
  CHECK_EQ(rta_map_graph_par(g, hw, st, prev, NULL,
                             MPI_COMM_WORLD, ref, NULL), 0);
  int calls = 0;
  for (int n = 1;; n++) {
    if (rank == victim)
      ballast__alloc_fail_after(n);
    int rc = rta_map_graph_par(g, hw, st, prev, NULL,
                               MPI_COMM_WORLD, slot, NULL);
    int reached = armed_reached(rank, victim, n);
    ballast__alloc_fail_after(0);
    check_verdict(rank, size, victim, rc, BALLAST_EREMOTE);
    if (rc == 0)
      CHECK(memcmp(slot, ref, 512 * sizeof *slot) == 0);
    calls++;
    if (!reached) {
      CHECK_EQ(rc, 0);
      break;
    }
  }
  CHECK_GT(calls, 5);
  free(slot);
  free(ref);
  rta_hw_destroy(hw);
  rta_graph_destroy(g);
}

static void sweep_discover(int rank, int size, int victim) {
  rta_hw_options_t o;
  rta_hw_options_init(&o);
  o.layout = "nodes=2;ranks_per_node=2";
  o.measure_links = 1;
  for (int n = 1;; n++) {
    rta_hw_t *hw = NULL;
    if (rank == victim)
      ballast__alloc_fail_after(n);
    int rc = rta_hw_discover_ex(MPI_COMM_WORLD, &o, &hw);
    int reached = armed_reached(rank, victim, n);
    ballast__alloc_fail_after(0);
    check_verdict(rank, size, victim, rc, 0);
    CHECK(rc ? hw == NULL : hw != NULL);
    rta_hw_destroy(hw);
    if (!reached) {
      CHECK_EQ(rc, 0);
      break;
    }
  }
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK_LE(size, 16);
  /* The old mapping of the remap sweep: the first mapping, unfailed. */
  rta_graph_t *g = NULL;
  rta_hw_t *hw = NULL;
  int64_t *prev = malloc(512 * sizeof *prev);
  CHECK_EQ(rta_graph_stencil3d(8, 8, 8, 27, 4.0, 8.0, &g), 0);
  CHECK_EQ(rta_hw_create_sim(4, "pack:2 core:2", NULL, NULL, &hw), 0);
  CHECK_EQ(rta_map_graph(g, hw, RTA_MAP_TWOPHASE, NULL, 1, prev, NULL), 0);
  rta_hw_destroy(hw);
  rta_graph_destroy(g);
  for (int victim = 0; victim < size; victim += size > 1 ? size - 1 : 1) {
    sweep_map(rank, size, victim, RTA_MAP_TWOPHASE, NULL);
    sweep_map(rank, size, victim, RTA_MAP_TWOPHASE, prev);
    sweep_map(rank, size, victim, RTA_MAP_TLEAF, NULL);
    sweep_discover(rank, size, victim);
  }
  free(prev);
  TEST_PASS("map_agree");
  MPI_Finalize();
  return 0;
}
