/* Phase 1 of the mapping puts heavily communicating tasks on one node.
 * 4 leaf tasks hp/t0..t3, task r on rank r; the heavy pairs (t0,t2) and
 * (t1,t3) exchange 1 MiB per step, the light pairs (t0,t1), (t2,t3) 4 KiB.
 * The default rank order (ranks 0,1 on node A, 2,3 on node B) splits both
 * heavy pairs across the (shaped) inter-node link. After a few real
 * exchange steps (so mon measures the partner volumes that rta_task_map
 * uses in placement mode; the declared volumes agree with them), the
 * measured-links model is discovered and the tasks are mapped with the
 * two-phase strategy, fresh and as a remap from the current owners: each
 * heavy pair lands on one node, the two pairs on different nodes (balance),
 * and the inter-node volume is the light traffic only.
 * Launched by emumap.sh: emumap_phase1 NODE_A NODE_B. */
#include <ballast/rta.h>

#include "emumap_util.h"

enum { HEAVY = 1 << 20, LIGHT = 4096, STEPS = 3 };

static int heavy_of(int r) { return (r + 2) % 4; }
static int light_of(int r) { return r ^ 1; }

static void exchange(int me, char *sbuf, char *rbuf) {
  int h = heavy_of(me), l = light_of(me);
  memset(sbuf, me + 1, HEAVY);
  CHECK_EQ(MPI_Sendrecv(sbuf, HEAVY, MPI_BYTE, h, 1, rbuf, HEAVY, MPI_BYTE, h,
                        1, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_SUCCESS);
  CHECK_EQ(rbuf[0], h + 1);
  CHECK_EQ(rbuf[HEAVY - 1], h + 1);
  CHECK_EQ(MPI_Sendrecv(sbuf, LIGHT, MPI_BYTE, l, 2, rbuf, LIGHT, MPI_BYTE, l,
                        2, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_SUCCESS);
  CHECK_EQ(rbuf[LIGHT - 1], l + 1);
}

/* Node of each task t0..t3 under mapping m. */
static void nodes_of(const rta_mapping_t *m, const rta_hw_t *hw, int node[4]) {
  CHECK_EQ(rta_mapping_ntasks(m), 4);
  for (int t = 0; t < 4; t++) {
    char key[16];
    snprintf(key, sizeof key, "hp/t%d", t);
    int64_t i = rta_mapping_find(m, key);
    CHECK_GE(i, 0);
    int slot = rta_mapping_slot(m, i);
    CHECK(slot >= 0 && slot < 4);
    node[t] = rta_hw_slot_node(hw, slot);
  }
}

static void check_pairs(const char *what, const rta_mapping_t *m,
                        const rta_hw_t *hw, int me) {
  int node[4];
  nodes_of(m, hw, node);
  const rta_map_quality_t *q = rta_mapping_quality(m);
  CHECK(q != NULL);
  if (me == 0) {
    printf("%s: nodes of t0..t3 = %d %d %d %d; inter-node volume %.0f B/step, "
           "hop-bytes %.4g\n", what, node[0], node[1], node[2], node[3],
           q->internode_volume, q->hop_bytes);
    fflush(stdout);
  }
  CHECK_EQ(node[0], node[2]);
  CHECK_EQ(node[1], node[3]);
  CHECK_NE(node[0], node[1]);
  /* Only the light pairs cross: 2 pairs x 2 directions x 4 KiB, give or take
   * what mon counted of rta's own and MPI's small traffic. */
  CHECK_DLT(q->internode_volume, 0.1 * HEAVY);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  char host[EMU_NRANKS][EMU_HOST_LEN];
  int me = emu_start(argc, argv, host), np = EMU_NRANKS;
  /* The default order splits both heavy pairs across the nodes. */
  for (int r = 0; r < np; r++)
    CHECK(strcmp(host[r], host[heavy_of(r)]) != 0);

  const char *rn = "hp";
  rta_task_t *root = NULL;
  CHECK_EQ(rta_task_define(NULL, 1, &rn, NULL, &root), 0);
  char name[8], hkey[16], lkey[16];
  snprintf(name, sizeof name, "t%d", me);
  snprintf(hkey, sizeof hkey, "hp/t%d", heavy_of(me));
  snprintf(lkey, sizeof lkey, "hp/t%d", light_of(me));
  rta_comm_est_t comm[2] = {{hkey, HEAVY}, {lkey, LIGHT}};
  rta_task_params_t p = RTA_TASK_PARAMS_INIT;
  p.ncomm = 2;
  p.comm = comm;
  p.state_size = 1024;
  const char *nm = name;
  CHECK_EQ(rta_task_define(root, 1, &nm, &p, NULL), 0);

  char *sbuf = malloc(HEAVY), *rbuf = malloc(HEAVY);
  CHECK(sbuf && rbuf);
  for (int s = 0; s < STEPS; s++) {
    exchange(me, sbuf, rbuf);
    CHECK_EQ(rta_step(), 0);
  }

  rta_hw_options_t ho;
  rta_hw_options_init(&ho);
  ho.measure_links = 1;
  rta_hw_t *hw = NULL;
  CHECK_EQ(rta_hw_discover_ex(MPI_COMM_WORLD, &ho, &hw), 0);
  CHECK_EQ(rta_hw_nnodes(hw), 2);

  /* The default placement (task r on rank r) as the reference. */
  rta_task_map_options_t mo;
  rta_task_map_options_init(&mo);
  mo.strategy = RTA_MAP_ROUNDROBIN;
  mo.fresh = 1;
  rta_mapping_t *m = NULL;
  CHECK_EQ(rta_task_map(MPI_COMM_WORLD, root, hw, &mo, &m), 0);
  CHECK_EQ(rta_mapping_placement(m), 1);
  int node[4];
  nodes_of(m, hw, node);
  CHECK_NE(node[0], node[2]);
  double default_volume = rta_mapping_quality(m)->internode_volume;
  if (me == 0)
    printf("default order: inter-node volume %.0f B/step\n", default_volume);
  CHECK_DGE(default_volume, 2.0 * HEAVY);
  rta_mapping_destroy(m);

  /* Two-phase, fresh. */
  for (int s = 0; s < STEPS; s++) {
    exchange(me, sbuf, rbuf);
    CHECK_EQ(rta_step(), 0);
  }
  rta_task_map_options_init(&mo);
  mo.fresh = 1;
  CHECK_EQ(rta_task_map(MPI_COMM_WORLD, root, hw, &mo, &m), 0);
  check_pairs("two-phase, fresh", m, hw, me);
  rta_mapping_destroy(m);

  /* Two-phase remap from the current owners (migration cost counted). */
  for (int s = 0; s < STEPS; s++) {
    exchange(me, sbuf, rbuf);
    CHECK_EQ(rta_step(), 0);
  }
  rta_task_map_options_init(&mo);
  CHECK_EQ(rta_task_map(MPI_COMM_WORLD, root, hw, &mo, &m), 0);
  check_pairs("two-phase, remap", m, hw, me);
  CHECK_GE(rta_mapping_quality(m)->tasks_migrated, 2);
  rta_mapping_destroy(m);

  rta_hw_destroy(hw);
  free(sbuf);
  free(rbuf);
  CHECK_EQ(rta_task_remove(root), 0);
  TEST_PASS("emumap phase1: heavy pairs mapped onto one node each");
  MPI_Finalize();
  return 0;
}
