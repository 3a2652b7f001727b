/* All or nothing under allocation failures: every allocation of a whole
 * remap (closing the step, mapping, gang placement, preparing owners and
 * communicators, describing, exchanging and moving the states, arrivals'
 * definitions and arrays) is failed in turn, on one rank at a time, through
 * common's hook ballast__alloc_fail_after(). After each attempt the contract
 * of rta_lb.h is checked on values: either the remap completed and returned
 * 0 on every rank, or it returned an error on every rank (the failing
 * rank's own code there, BALLAST_EREMOTE elsewhere) and nothing moved: each
 * rank has the same tasks, with the same state objects, every byte of their
 * arrays and callback state as before the attempt, the same owner answers
 * and the same communicator. A rank's sweep ends when an attempt succeeds
 * without the hook firing. Over-decomposition (tasks with callback bytes
 * and registered arrays, the single-array path, callback bytes only),
 * placement mode, and with 4 ranks on 2 pretended nodes a gang (its ranks
 * and communicator). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ballast/rta.h>

#include "common/util.h"
#include "test_util.h"

#define NT 16

static int me, np;
static int ntasks; /* tasks of the context under test, ids 0 .. ntasks-1 */
/* A gang of 2 ("gang", defined by rank 1) in the context under test: 4
 * ranks on a pretended machine of 2 nodes x 2 (BALLAST_HW_LAYOUT). */
static int with_gang;
static int live_blocks; /* states allocated by the test and not released */

/* ---- over-decomposition: the states ------------------------------------------- */

/* Kind 0: one double array (the single-array path). Kind 1: callback bytes
 * + an int32 array and a double array (lead array and packed tail). Kind 2:
 * callback bytes only. */
typedef struct {
  int id, kind;
  char name[24];
  double *d;
  int32_t *i;
} blk_t;

static int rows_of(int id) { return id % 4 == 0 ? 3000 + 11 * id : 10 + 5 * id; }
static double dval(int id, int64_t k) { return id * 100.25 + (double)k * 0.5; }
static int32_t ival(int id, int64_t k) { return (int32_t)(id * 7919 + k * 31); }

/* Registers the arrays of b's kind (empty); on failure unregisters what it
 * registered, so the task holds no pointer into b. */
static int register_arrays(rta_task_t *t, blk_t *b) {
  int64_t z[1] = {0};
  if (b->kind == 0)
    return rta_task_array_register(t, (void **)&b->d, rta_type_elem(RTA_DOUBLE), 1, z);
  if (b->kind != 1)
    return 0;
  int rc = rta_task_array_register(t, (void **)&b->i, rta_type_elem(RTA_INT32), 1, z);
  if (rc)
    return rc;
  rc = rta_task_array_register(t, (void **)&b->d, rta_type_elem(RTA_DOUBLE), 1, z);
  if (rc)
    CHECK_EQ(rta_task_array_unregister(t, (void **)&b->i), 0);
  return rc;
}

static int cb_size(rta_task_t *t, size_t *len, void *user) {
  (void)user;
  blk_t *b = rta_task_data(t);
  *len = b->kind == 0 ? 0 : 2 * sizeof(int) + sizeof b->name;
  return 0;
}
static int cb_pack(rta_task_t *t, void *buf, size_t len, void *user) {
  (void)user;
  blk_t *b = rta_task_data(t);
  if (len != 2 * sizeof(int) + sizeof b->name)
    return -1;
  memcpy(buf, &b->id, sizeof(int));
  memcpy((char *)buf + sizeof(int), &b->kind, sizeof(int));
  memcpy((char *)buf + 2 * sizeof(int), b->name, sizeof b->name);
  return 0;
}
static int cb_unpack(rta_task_t *t, const void *buf, size_t len, void *user) {
  (void)user;
  blk_t *b = calloc(1, sizeof *b);
  CHECK(b != NULL);
  if (len == 0) { /* kind 0: the id is in the name */
    b->id = atoi(rta_task_name(t) + 1);
    snprintf(b->name, sizeof b->name, "block-%d", b->id);
  } else {
    CHECK_EQ(len, 2 * sizeof(int) + sizeof b->name);
    memcpy(&b->id, buf, sizeof(int));
    memcpy(&b->kind, (const char *)buf + sizeof(int), sizeof(int));
    memcpy(b->name, (const char *)buf + 2 * sizeof(int), sizeof b->name);
  }
  if (register_arrays(t, b) != 0) { /* an injected failure: no state kept */
    free(b);
    return -1;
  }
  rta_task_set_data(t, b);
  live_blocks++;
  return 0;
}
static void cb_release(rta_task_t *t, void *user) {
  (void)user;
  blk_t *b = rta_task_data(t);
  CHECK(b->d == NULL && b->i == NULL); /* rta freed the arrays */
  free(b);
  rta_task_set_data(t, NULL);
  live_blocks--;
}

static void make_task(rta_task_t *root, int id) {
  char name[16];
  snprintf(name, sizeof name, "t%03d", id);
  rta_task_params_t p = RTA_TASK_PARAMS_INIT;
  p.est_work = 1.0 + id % 3;
  const char *nm = name;
  rta_task_t *t;
  CHECK_EQ(rta_task_define(root, 1, &nm, &p, &t), 0);
  blk_t *b = calloc(1, sizeof *b);
  b->id = id;
  b->kind = id % 3;
  snprintf(b->name, sizeof b->name, "block-%d", id);
  int64_t n = rows_of(id);
  if (b->kind == 0) {
    b->d = malloc(sizeof *b->d * (size_t)n);
    for (int64_t k = 0; k < n; k++)
      b->d[k] = dval(id, k);
    CHECK_EQ(rta_task_array_register(t, (void **)&b->d, rta_type_elem(RTA_DOUBLE), 1, &n), 0);
  } else if (b->kind == 1) {
    int64_t ni = 2 * n;
    b->i = malloc(sizeof *b->i * (size_t)ni);
    for (int64_t k = 0; k < ni; k++)
      b->i[k] = ival(id, k);
    b->d = malloc(sizeof *b->d * (size_t)n);
    for (int64_t k = 0; k < n; k++)
      b->d[k] = dval(id, -k);
    CHECK_EQ(rta_task_array_register(t, (void **)&b->i, rta_type_elem(RTA_INT32), 1, &ni), 0);
    CHECK_EQ(rta_task_array_register(t, (void **)&b->d, rta_type_elem(RTA_DOUBLE), 1, &n), 0);
  }
  rta_task_set_data(t, b);
  live_blocks++;
}

/* Checks every byte of the task's state against its id; its checksum. */
static uint64_t verify(rta_task_t *t) {
  blk_t *b = rta_task_data(t);
  CHECK(b != NULL);
  char name[24];
  snprintf(name, sizeof name, "t%03d", b->id);
  CHECK_STREQ(rta_task_name(t), name);
  snprintf(name, sizeof name, "block-%d", b->id);
  CHECK_STREQ(b->name, name);
  CHECK_EQ(b->kind, b->id % 3);
  int64_t n = rows_of(b->id), dims[RTA_MAX_DIMS];
  uint64_t h = ballast__splitmix64((uint64_t)b->id);
  if (b->kind == 2) {
    CHECK_EQ(rta_task_narrays(t), 0);
    return h;
  }
  CHECK_EQ(rta_task_narrays(t), b->kind == 0 ? 1 : 2);
  CHECK_EQ(rta_task_array_dims(t, (void **)&b->d, dims), 1);
  CHECK_EQ(dims[0], n);
  for (int64_t k = 0; k < n; k++) {
    CHECK(b->d[k] == dval(b->id, b->kind == 0 ? k : -k));
    h = ballast__splitmix64(h + (uint64_t)k);
  }
  if (b->kind == 1) {
    CHECK_EQ(rta_task_array_dims(t, (void **)&b->i, dims), 1);
    CHECK_EQ(dims[0], 2 * n);
    for (int64_t k = 0; k < 2 * n; k++) {
      CHECK_EQ(b->i[k], ival(b->id, k));
      h += (uint64_t)b->i[k];
    }
  }
  return h;
}

/* ---- the contract ---------------------------------------------------------------- */

/* What a rank holds: per task whether it is here, its state object and
 * checksum, and the owner the context answers. */
typedef struct {
  int here[NT];
  void *data[NT];
  uint64_t sum[NT];
  int owner[NT]; /* as rta_lb_task_owner() answers */
  int nlocal;
  MPI_Comm comm;
  int nhere;     /* of the ntasks tasks */
  int gang_here; /* with_gang: the gang is in this rank's list */
  int gang[2];   /* with_gang: its ranks */
  MPI_Comm gcomm; /* with_gang: its communicator here */
} snap_t;

static void snapshot(rta_lb_context_t *ctx, const char *root, snap_t *s) {
  memset(s, 0, sizeof *s);
  for (int id = 0; id < ntasks; id++) {
    char key[32];
    snprintf(key, sizeof key, "%s/t%03d", root, id);
    rta_task_t *t = NULL;
    s->here[id] = rta_task_find(key, &t) == 0;
    if (s->here[id]) {
      s->data[id] = rta_task_data(t);
      s->sum[id] = verify(t);
    }
    CHECK_EQ(rta_lb_task_owner(ctx, key, &s->owner[id]), 0);
  }
  s->nlocal = rta_lb_nlocal(ctx);
  for (int id = 0; id < ntasks; id++)
    s->nhere += s->here[id];
  for (int i = 0; i < s->nlocal; i++)
    s->gang_here += rta_task_data(rta_lb_local_task(ctx, i)) == NULL;
  s->comm = rta_lb_comm(ctx);
  s->gcomm = MPI_COMM_NULL;
  if (with_gang) {
    char key[32];
    snprintf(key, sizeof key, "%s/gang", root);
    CHECK_EQ(rta_lb_gang_ranks(ctx, key, 2, s->gang), 0);
    CHECK_EQ(rta_lb_task_comm(ctx, key, &s->gcomm), 0);
  }
  CHECK_EQ(live_blocks, s->nhere);
  CHECK_EQ(s->nlocal, s->nhere + s->gang_here);
}

/* A complete state: every task on exactly one rank, the one its owner
 * answer names, its state intact; the local list matches. */
static void check_complete(rta_lb_context_t *ctx, const snap_t *s) {
  int arank, here[NT], count[NT];
  MPI_Comm_rank(rta_lb_comm(ctx), &arank);
  int n = 0;
  for (int id = 0; id < ntasks; id++) {
    here[id] = s->here[id];
    n += here[id];
    CHECK_EQ(here[id], s->owner[id] == arank);
  }
  CHECK_EQ(n, s->nhere);
  MPI_Allreduce(here, count, ntasks, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  for (int id = 0; id < ntasks; id++)
    CHECK_EQ(count[id], 1);
  if (with_gang) { /* two ranks of one node, their communicator works */
    CHECK_NE(s->gang[0], s->gang[1]);
    CHECK_EQ(s->gang[0] / 2, s->gang[1] / 2);
    int member = me == s->gang[0] || me == s->gang[1];
    CHECK_EQ(s->gcomm != MPI_COMM_NULL, member);
    if (member) {
      int sum = 0;
      MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, s->gcomm);
      CHECK_EQ(sum, s->gang[0] + s->gang[1]);
    }
  }
}

/* Nothing moved: the same tasks, state objects, bytes, owners, communicator. */
static void check_unchanged(const snap_t *a, const snap_t *b) {
  for (int id = 0; id < ntasks; id++) {
    CHECK_EQ(a->here[id], b->here[id]);
    CHECK(a->data[id] == b->data[id]);
    CHECK(a->sum[id] == b->sum[id]);
    CHECK_EQ(a->owner[id], b->owner[id]);
  }
  CHECK_EQ(a->nlocal, b->nlocal);
  CHECK(a->comm == b->comm);
  CHECK(a->gcomm == b->gcomm);
  CHECK_EQ(a->gang[0], b->gang[0]);
  CHECK_EQ(a->gang[1], b->gang[1]);
}

static rta_lb_config_t explicit_random(void) {
  rta_lb_config_t c;
  rta_lb_config_init(&c);
  c.use_env = 0;
  c.policy.mode = RTA_POLICY_EXPLICIT;
  c.strategy = RTA_MAP_RANDOM;
  c.seed = 12; /* a map that moves tasks at 2 and 4 ranks, both modes */
  c.mem_limit = 64 << 10; /* several rounds */
  return c;
}

/* A fresh context over the initial tasks (task id on rank id % np): every
 * attempt of a sweep runs the same remap, so the k-th allocation is the
 * same one each time and the sweep reaches the remap's last allocation. */
typedef struct {
  rta_task_t *root;
  rta_lb_context_t *ctx;
  MPI_Comm comm;
} setup_t;

static void setup(const char *rn, int placement, setup_t *u) {
  rta_task_params_t rp = RTA_TASK_PARAMS_INIT;
  rp.serial = (rta_serial_t){cb_size, cb_pack, cb_unpack, cb_release};
  CHECK_EQ(rta_task_define(NULL, 1, &rn, &rp, &u->root), 0);
  for (int id = 0; id < ntasks; id++)
    if (id % np == me)
      make_task(u->root, id);
  if (with_gang && me == 1) {
    rta_task_params_t gp = RTA_TASK_PARAMS_INIT;
    gp.nprocs = 2;
    gp.est_work = 2.0;
    const char *gn = "gang";
    CHECK_EQ(rta_task_define(u->root, 1, &gn, &gp, NULL), 0);
  }
  rta_lb_config_t cfg = explicit_random();
  CHECK_EQ(rta_lb_create(MPI_COMM_WORLD, u->root, &cfg, &u->ctx, &u->comm), 0);
  CHECK_EQ(rta_lb_placement(u->ctx), placement);
}

static void teardown(setup_t *u) {
  for (int i = 0; i < rta_lb_nlocal(u->ctx); i++) {
    blk_t *b = rta_task_data(rta_lb_local_task(u->ctx, i));
    if (!b)
      continue; /* the gang */
    free(b->d);
    free(b->i);
    free(b);
    live_blocks--;
  }
  CHECK_EQ(live_blocks, 0);
  CHECK_EQ(rta_lb_destroy(u->ctx), 0);
  CHECK_EQ(rta_task_remove(u->root), 0);
}

/* One attempt with the k-th allocation failing on \a victim (k = 0: none),
 * the contract checked. Returns 1 when the remap failed, 0 when it completed
 * without the hook firing, 2 when it completed although the hook fired (a
 * failure the library absorbed, e.g. the migration memory pool). */
static int attempt(const char *rn, int placement, int victim, int k) {
  setup_t u;
  setup(rn, placement, &u);
  snap_t before, after;
  snapshot(u.ctx, rn, &before);
  CHECK(u.comm == before.comm);
  rta_lb_stats_t s0, s1;
  CHECK_EQ(rta_lb_stats(u.ctx, &s0), 0);
  ballast__alloc_fail_after(me == victim ? k : 0);
  int rc = rta_lb_perform(u.ctx, &u.comm);
  long seen = ballast__alloc_count();
  ballast__alloc_fail_after(0);
  int fired = me == victim && k > 0 && seen >= k, any_fired = 0;
  MPI_Allreduce(&fired, &any_fired, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
  int rcs[64];
  MPI_Allgather(&rc, 1, MPI_INT, rcs, 1, MPI_INT, MPI_COMM_WORLD);
  snapshot(u.ctx, rn, &after);
  CHECK(u.comm == after.comm);
  CHECK_EQ(rta_lb_stats(u.ctx, &s1), 0);
  int result;
  if (rcs[victim] == 0) {
    for (int r = 0; r < np; r++)
      CHECK_EQ(rcs[r], 0);
    CHECK_EQ(s1.remaps, s0.remaps + 1);
    CHECK_GT(s1.tasks_moved, 0); /* the remap really moves tasks */
    check_complete(u.ctx, &after);
    result = any_fired ? 2 : 0;
  } else {
    CHECK_EQ(any_fired, 1);
    /* The victim's own code: its allocation, or its unpack callback that
     * could not register an array. */
    CHECK(rcs[victim] == BALLAST_ENOMEM || rcs[victim] == BALLAST_ECALLBACK);
    /* Elsewhere BALLAST_EREMOTE, or the victim's code where rta_task_map
     * gives every rank the code of the mapping engine run on rank 0. */
    for (int r = 0; r < np; r++)
      if (r != victim && rcs[r] != BALLAST_EREMOTE)
        CHECK_EQ(rcs[r], rcs[victim]);
    CHECK_EQ(s1.remaps, s0.remaps);
    check_unchanged(&before, &after);
    result = 1;
  }
  teardown(&u);
  return result;
}

/* Fails every allocation of the remap in turn on each rank, until an
 * attempt completes with the hook never firing. */
static void run(const char *rn, int placement) {
  int total = 0;
  for (int victim = 0; victim < np; victim++) {
    int nf = 0, k = 1, r;
    while ((r = attempt(rn, placement, victim, k)) != 0) {
      nf += r == 1;
      k++;
      CHECK_LT(k, 100000); /* the sweep ends */
    }
    CHECK_GT(nf, 20); /* a remap allocates: many attempts really failed */
    total += nf;
  }
  char msg[96];
  snprintf(msg, sizeof msg, "lb faults %s%s: %d failed attempts, contract held",
           placement ? "placement" : "over-decomposition",
           with_gang ? " with a gang" : "", total);
  TEST_PASS(msg);
}

/* argv[1], when given, names the sweeps to run ("over", "placement",
 * "gang", comma-separated), so that ctest can run them as separate tests
 * (each a third of the time on 4 ranks); without, all of them. */
static int wanted(int argc, char **argv, const char *sweep) {
  if (argc < 2)
    return 1;
  char list[256];
  snprintf(list, sizeof list, ",%s,", argv[1]);
  char key[32];
  snprintf(key, sizeof key, ",%s,", sweep);
  return strstr(list, key) != NULL;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  CHECK_LE(np, NT);
  CHECK_LE(np, 64);
  CHECK(wanted(argc, argv, "over") || wanted(argc, argv, "placement") ||
        wanted(argc, argv, "gang"));
  ntasks = NT;
  if (wanted(argc, argv, "over"))
    run("fo", 0);
  ntasks = np; /* one task per rank: placement mode */
  if (wanted(argc, argv, "placement"))
    run("fp", 1);
  const char *layout = getenv("BALLAST_HW_LAYOUT");
  if (np == 4 && layout && *layout && wanted(argc, argv, "gang")) {
    ntasks = NT;
    with_gang = 1;
    run("fg", 0);
    with_gang = 0;
  }
  rta_reset();
  MPI_Finalize();
  return 0;
}
