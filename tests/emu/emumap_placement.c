/* The placement-mode permutation across emulated nodes.
 * 4 leaf tasks pl/t0..t3 (task r on rank r, with a registered array as its
 * state), heavy pairs (t0,t2), (t1,t3) split across the nodes by the default
 * rank order. The application exchanges through the context's communicator
 * (mon measures the volumes), then calls rta_lb_perform() with
 * the explicit policy and the two-phase strategy. Checks, on the new
 * communicator: rank i hosts task i with its state intact; the heavy pairs
 * now share a node (hostnames of the ranks); a ring addressed by the ranks
 * stored before the remap reaches the same tasks; the heavy exchange still
 * reaches its partner; rta_lb_task_owner agrees; the tasks really moved across
 * nodes (some process changed task).
 * Launched by emumap.sh: emumap_placement NODE_A NODE_B. */
#include <ballast/rta_lb.h>

#include "emumap_util.h"

enum { HEAVY = 1 << 20, LIGHT = 4096, STEPS = 3, NV = 5000 };

typedef struct {
  int index;
  int64_t *v; /* NV values: index * 1000000 + i */
} ptask_t;

static int p_size(rta_task_t *t, size_t *len, void *u) {
  (void)t;
  (void)u;
  *len = sizeof(int);
  return 0;
}
static int p_pack(rta_task_t *t, void *buf, size_t len, void *u) {
  (void)u;
  (void)len;
  memcpy(buf, &((ptask_t *)rta_task_data(t))->index, sizeof(int));
  return 0;
}
static int p_unpack(rta_task_t *t, const void *buf, size_t len, void *u) {
  (void)u;
  ptask_t *p = calloc(1, sizeof *p);
  if (!p || len != sizeof(int))
    return 1;
  memcpy(&p->index, buf, sizeof(int));
  rta_task_set_data(t, p);
  int64_t z = 0;
  return rta_task_array_register(t, (void **)&p->v, rta_type_elem(RTA_INT64), 1, &z);
}
static void p_release(rta_task_t *t, void *u) {
  (void)u;
  free(rta_task_data(t));
}

static int heavy_of(int r) { return (r + 2) % 4; }

/* One step of the application, addressed by task index = rank in comm. */
static void exchange(MPI_Comm comm, int task, char *sbuf, char *rbuf) {
  int h = heavy_of(task), l = task ^ 1;
  memset(sbuf, task + 1, HEAVY);
  CHECK_EQ(MPI_Sendrecv(sbuf, HEAVY, MPI_BYTE, h, 1, rbuf, HEAVY, MPI_BYTE, h,
                        1, comm, MPI_STATUS_IGNORE), MPI_SUCCESS);
  CHECK_EQ(rbuf[0], h + 1);
  CHECK_EQ(rbuf[HEAVY - 1], h + 1);
  CHECK_EQ(MPI_Sendrecv(sbuf, LIGHT, MPI_BYTE, l, 2, rbuf, LIGHT, MPI_BYTE, l,
                        2, comm, MPI_STATUS_IGNORE), MPI_SUCCESS);
  CHECK_EQ(rbuf[LIGHT - 1], l + 1);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  char host0[EMU_NRANKS][EMU_HOST_LEN];
  int me = emu_start(argc, argv, host0), np = EMU_NRANKS;
  for (int r = 0; r < np; r++)
    CHECK(strcmp(host0[r], host0[heavy_of(r)]) != 0);

  rta_task_params_t rp = RTA_TASK_PARAMS_INIT;
  rp.serial = (rta_serial_t){p_size, p_pack, p_unpack, p_release};
  const char *rn = "pl";
  rta_task_t *root, *t;
  CHECK_EQ(rta_task_define(NULL, 1, &rn, &rp, &root), 0);
  char name[8];
  snprintf(name, sizeof name, "t%d", me);
  const char *nm = name;
  CHECK_EQ(rta_task_define(root, 1, &nm, NULL, &t), 0);
  ptask_t *p = calloc(1, sizeof *p);
  CHECK(p != NULL);
  p->index = me;
  int64_t n = NV;
  p->v = malloc(NV * sizeof *p->v);
  CHECK(p->v != NULL);
  for (int64_t i = 0; i < NV; i++)
    p->v[i] = me * 1000000 + i;
  CHECK_EQ(rta_task_array_register(t, (void **)&p->v, rta_type_elem(RTA_INT64), 1,
                              &n), 0);
  rta_task_set_data(t, p);

  rta_lb_config_t cfg;
  rta_lb_config_init(&cfg);
  cfg.use_env = 0;
  cfg.policy.mode = RTA_POLICY_EXPLICIT;
  cfg.strategy = RTA_MAP_TWOPHASE;
  cfg.measure_links = 1; /* the "measured-model mapping" of issue 7 */
  rta_lb_context_t *ctx = NULL;
  MPI_Comm comm = MPI_COMM_NULL;
  CHECK_EQ(rta_lb_create(MPI_COMM_WORLD, root, &cfg, &ctx, &comm), 0);
  CHECK_EQ(rta_lb_placement(ctx), 1);
  int r;
  MPI_Comm_rank(comm, &r);
  CHECK_EQ(r, me);

  char *sbuf = malloc(HEAVY), *rbuf = malloc(HEAVY);
  CHECK(sbuf && rbuf);
  for (int s = 0; s < STEPS; s++) {
    exchange(comm, r, sbuf, rbuf);
    if (s < STEPS - 1)
      CHECK_EQ(rta_step(), 0); /* the last step is closed by the remap */
  }
  CHECK_EQ(rta_lb_perform(ctx, &comm), 0);
  CHECK_EQ(rta_lb_comm(ctx), comm);
  rta_decision_t d;
  CHECK_EQ(rta_lb_last_decision(ctx, &d), 0);
  CHECK_EQ((int)d.reason, (int)RTA_REASON_EXPLICIT);
  rta_lb_stats_t st;
  CHECK_EQ(rta_lb_stats(ctx, &st), 0);
  CHECK_EQ(st.remaps, 1);
  CHECK_GE(st.tasks_moved, 2);

  /* Rank i of the new communicator hosts task i, state intact. */
  MPI_Comm_rank(comm, &r);
  CHECK_EQ(rta_lb_nlocal(ctx), 1);
  rta_task_t *mine = rta_lb_local_task(ctx, 0);
  CHECK(mine != NULL);
  ptask_t *q = rta_task_data(mine);
  CHECK_EQ(q->index, r);
  snprintf(name, sizeof name, "t%d", r);
  CHECK_STREQ(rta_task_name(mine), name);
  int64_t dims[RTA_MAX_DIMS];
  CHECK_EQ(rta_task_array_dims(mine, (void **)&q->v, dims), 1);
  CHECK_EQ(dims[0], NV);
  for (int64_t i = 0; i < NV; i++)
    CHECK_EQ(q->v[i], r * 1000000 + i);

  /* The heavy pairs now share a node. */
  char host[EMU_NRANKS][EMU_HOST_LEN];
  emu_hostnames(comm, argv[1], argv[2], host);
  for (int k = 0; k < np; k++)
    CHECK_STREQ(host[k], host[heavy_of(k)]);
  CHECK(strcmp(host[0], host[1]) != 0);
  int moved = r != me, any = 0;
  MPI_Allreduce(&moved, &any, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
  CHECK_EQ(any, 1);
  if (me == 0) {
    printf("after the remap: task -> host:");
    for (int k = 0; k < np; k++)
      printf(" t%d->%s", k, host[k]);
    printf(" (before: t0,t1 on %s, t2,t3 on %s)\n", host0[0], host0[2]);
    fflush(stdout);
  }

  /* A ring addressed by the ranks stored before the remap. */
  int to = (r + 1) % np, from = (r - 1 + np) % np, got = -1;
  CHECK_EQ(MPI_Sendrecv(&q->index, 1, MPI_INT, to, 5, &got, 1, MPI_INT, from,
                        5, comm, MPI_STATUS_IGNORE), MPI_SUCCESS);
  CHECK_EQ(got, from);
  char key[16];
  snprintf(key, sizeof key, "pl/t%d", from);
  int owner = -1;
  CHECK_EQ(rta_lb_task_owner(ctx, key, &owner), 0);
  CHECK_EQ(owner, from);
  /* The application's own exchange still reaches the same partners. */
  exchange(comm, r, sbuf, rbuf);

  free(sbuf);
  free(rbuf);
  free(q->v);
  free(q);
  CHECK_EQ(rta_lb_destroy(ctx), 0);
  CHECK_EQ(rta_task_remove(root), 0);
  TEST_PASS("emumap placement: permutation across nodes, heavy pairs on one "
            "node, ring by old ranks");
  MPI_Finalize();
  return 0;
}
