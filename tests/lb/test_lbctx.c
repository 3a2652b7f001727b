/* Load-balancing contexts end to end: many random remaps in over-decomposition
 * and placement modes with every task's state verified before and after
 * (registered arrays of several types and dimensions, callback bytes, the
 * zero-copy single-array path), communicator semantics after a placement
 * remap (a ring addressed by the old ranks reaches the same tasks), rollback
 * under injected faults (failing unpack callback, failed allocation, arrays
 * that do not match), and bad input. */
#include <complex.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <ballast/rta.h>

#include "mig/migrate.h"
#include "test_util.h"

#define NT 24

static int me, np;

/* Fault switches. */
static int fail_unpack_rank = -1;  /* this rank's unpack callback fails */
static int short_register_rank = -1; /* this rank's unpack registers one array too few */

/* The state of one task. Kind 0: one 2-D double array and nothing else (the
 * zero-copy path). Kind 1: callback bytes (a name) + a 3-D int32 array, a 1-D
 * complex array and an array of an MPI datatype (3 floats). Kind 2: callback
 * bytes only. */
typedef struct {
  int id, kind;
  char name[32];
  double *d2;          /* kind 0: rows x 3 */
  int32_t *i3;         /* kind 1: 2 x rows x 2 */
  double _Complex *cz; /* kind 1: rows */
  float *f3;           /* kind 1: rows elements of MPI type 3 x float */
} blk_t;

static MPI_Datatype float3;
static int live_blocks; /* blk_t allocated and not released on this rank */

static int rows_of(int id) { return id % 4 == 0 ? 4000 + 13 * id : 20 + 7 * id; }
static int kind_of(int id) { return id % 3; }
static double dval(int id, int64_t i) { return id * 1000.5 + (double)i * 0.25; }
static int32_t ival(int id, int64_t i) { return (int32_t)(id * 7919 + i * 31); }

static void register_arrays(rta_task_t *t, blk_t *b) {
  int64_t z[3] = {0, 0, 0};
  if (b->kind == 0) {
    CHECK_EQ(rta_task_array_register(t, (void **)&b->d2, rta_type_elem(RTA_DOUBLE), 2, z), 0);
  } else if (b->kind == 1) {
    CHECK_EQ(rta_task_array_register(t, (void **)&b->i3, rta_type_elem(RTA_INT32), 3, z), 0);
    if (me == short_register_rank)
      return;
    CHECK_EQ(rta_task_array_register(t, (void **)&b->cz, rta_type_elem(RTA_COMPLEX_DOUBLE), 1, z), 0);
    CHECK_EQ(rta_task_array_register(t, (void **)&b->f3, rta_type_mpi(float3), 1, z), 0);
  }
}

/* Builds task id's state on this rank and defines it under root. */
static void make_task(rta_task_t *root, int id) {
  char name[32];
  snprintf(name, sizeof name, "t%03d", id);
  rta_task_params_t p = RTA_TASK_PARAMS_INIT;
  p.est_work = 1.0 + id % 5;
  const char *nm = name;
  rta_task_t *t;
  CHECK_EQ(rta_task_define(root, 1, &nm, &p, &t), 0);
  blk_t *b = calloc(1, sizeof *b);
  b->id = id;
  b->kind = kind_of(id);
  snprintf(b->name, sizeof b->name, "block-%d", id);
  int n = rows_of(id);
  if (b->kind == 0) {
    b->d2 = malloc(sizeof(double) * (size_t)n * 3);
    for (int64_t i = 0; i < (int64_t)n * 3; i++)
      b->d2[i] = dval(id, i);
    int64_t dims[2] = {n, 3};
    CHECK_EQ(rta_task_array_register(t, (void **)&b->d2, rta_type_elem(RTA_DOUBLE), 2, dims), 0);
  } else if (b->kind == 1) {
    b->i3 = malloc(sizeof(int32_t) * (size_t)n * 4);
    for (int64_t i = 0; i < (int64_t)n * 4; i++)
      b->i3[i] = ival(id, i);
    b->cz = malloc(sizeof(double _Complex) * (size_t)n);
    for (int i = 0; i < n; i++)
      b->cz[i] = dval(id, i) + dval(id, -i) * I;
    b->f3 = malloc(sizeof(float) * 3 * (size_t)n);
    for (int i = 0; i < 3 * n; i++)
      b->f3[i] = (float)(id + i * 0.5);
    int64_t d3[3] = {2, n, 2}, d1[1] = {n};
    CHECK_EQ(rta_task_array_register(t, (void **)&b->i3, rta_type_elem(RTA_INT32), 3, d3), 0);
    CHECK_EQ(rta_task_array_register(t, (void **)&b->cz, rta_type_elem(RTA_COMPLEX_DOUBLE), 1, d1), 0);
    CHECK_EQ(rta_task_array_register(t, (void **)&b->f3, rta_type_mpi(float3), 1, d1), 0);
  }
  rta_task_set_data(t, b);
  live_blocks++;
}

/* Checks every byte of a task's state against its id; returns a checksum. */
static uint64_t verify(rta_task_t *t) {
  blk_t *b = rta_task_data(t);
  CHECK(b != NULL);
  char name[32];
  snprintf(name, sizeof name, "t%03d", b->id);
  CHECK_STREQ(rta_task_name(t), name);
  snprintf(name, sizeof name, "block-%d", b->id);
  CHECK_STREQ(b->name, name);
  int n = rows_of(b->id);
  int64_t dims[RTA_MAX_DIMS];
  uint64_t h = (uint64_t)b->id * 0x9E3779B97F4A7C15ull;
  if (b->kind == 0) {
    CHECK_EQ(rta_task_array_dims(t, (void **)&b->d2, dims), 2);
    CHECK_EQ(dims[0], n);
    CHECK_EQ(dims[1], 3);
    for (int64_t i = 0; i < (int64_t)n * 3; i++) {
      CHECK(b->d2[i] == dval(b->id, i));
      h += (uint64_t)(b->d2[i] * 4);
    }
  } else if (b->kind == 1) {
    CHECK_EQ(rta_task_array_dims(t, (void **)&b->i3, dims), 3);
    CHECK_EQ(dims[1], n);
    for (int64_t i = 0; i < (int64_t)n * 4; i++) {
      CHECK_EQ(b->i3[i], ival(b->id, i));
      h += (uint64_t)b->i3[i];
    }
    for (int i = 0; i < n; i++) {
      CHECK(creal(b->cz[i]) == dval(b->id, i) && cimag(b->cz[i]) == dval(b->id, -i));
      h += (uint64_t)creal(b->cz[i]);
    }
    for (int i = 0; i < 3 * n; i++)
      CHECK(b->f3[i] == (float)(b->id + i * 0.5));
  } else {
    CHECK_EQ(rta_task_narrays(t), 0);
  }
  return h;
}

/* ---- callbacks, defined on the shared root ------------------------------------ */

static int cb_size(rta_task_t *t, size_t *len, void *user) {
  (void)user;
  blk_t *b = rta_task_data(t);
  *len = b->kind == 0 ? 0 : 2 * sizeof(int) + sizeof b->name;
  if (b->kind == 0)
    *len = 0;
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
  if (me == fail_unpack_rank)
    return -1;
  blk_t *b = calloc(1, sizeof *b);
  if (!b)
    return -1;
  if (len == 0) {
    /* kind 0: no callback bytes; the id is in the name */
    b->id = atoi(rta_task_name(t) + 1);
    b->kind = 0;
    snprintf(b->name, sizeof b->name, "block-%d", b->id);
  } else {
    if (len != 2 * sizeof(int) + sizeof b->name) {
      free(b);
      return -1;
    }
    memcpy(&b->id, buf, sizeof(int));
    memcpy(&b->kind, (const char *)buf + sizeof(int), sizeof(int));
    memcpy(b->name, (const char *)buf + 2 * sizeof(int), sizeof b->name);
  }
  rta_task_set_data(t, b);
  register_arrays(t, b);
  live_blocks++;
  return 0;
}
static void cb_release(rta_task_t *t, void *user) {
  (void)user;
  blk_t *b = rta_task_data(t);
  /* rta has freed the registered arrays and set the pointers to NULL. */
  CHECK(b->d2 == NULL && b->i3 == NULL && b->cz == NULL && b->f3 == NULL);
  free(b);
  rta_task_set_data(t, NULL);
  live_blocks--;
}

/* Sum of checksums and task count over every rank; each task verified. */
static void global_sum(rta_lb_context_t *ctx, uint64_t *sum, int64_t *count) {
  uint64_t h = 0;
  int64_t c = rta_lb_nlocal(ctx);
  for (int i = 0; i < rta_lb_nlocal(ctx); i++) {
    h += verify(rta_lb_local_task(ctx, i));
    if (i > 0) /* the iterator lists them sorted by key (rta_lb.h) */
      CHECK_LT(strcmp(rta_task_key(rta_lb_local_task(ctx, i - 1)),
                      rta_task_key(rta_lb_local_task(ctx, i))), 0);
  }
  /* Every unpack was matched by a release where the task did not stay. */
  CHECK_EQ(live_blocks, rta_lb_nlocal(ctx));
  MPI_Allreduce(&h, sum, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(&c, count, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
}

/* Every task's owner, as the context says, agrees with where it is defined. */
static void check_owners(rta_lb_context_t *ctx, int nt) {
  MPI_Comm app = rta_lb_comm(ctx);
  int arank;
  MPI_Comm_rank(app, &arank);
  for (int id = 0; id < nt; id++) {
    char key[64];
    snprintf(key, sizeof key, "od/t%03d", id);
    int owner = -1;
    CHECK_EQ(rta_lb_task_owner(ctx, key, &owner), 0);
    rta_task_t *t = NULL;
    int here = rta_task_find(key, &t) == 0;
    CHECK_EQ(here, owner == arank);
  }
}

static rta_lb_config_t explicit_random(void) {
  rta_lb_config_t c;
  rta_lb_config_init(&c);
  c.use_env = 0;
  c.policy.mode = RTA_POLICY_EXPLICIT;
  c.strategy = RTA_MAP_RANDOM;
  c.seed = 7;
  c.mem_limit = 256 << 10; /* several rounds */
  return c;
}

static void test_overdecomposition(void) {
  rta_task_params_t rp = RTA_TASK_PARAMS_INIT;
  rp.serial.size = cb_size;
  rp.serial.pack = cb_pack;
  rp.serial.unpack = cb_unpack;
  rp.serial.release = cb_release;
  const char *rn = "od";
  rta_task_t *root;
  CHECK_EQ(rta_task_define(NULL, 1, &rn, &rp, &root), 0);
  for (int id = 0; id < NT; id++)
    if (id % np == me)
      make_task(root, id);
  rta_lb_config_t cfg = explicit_random();
  rta_lb_context_t *ctx = NULL;
  MPI_Comm comm = MPI_COMM_NULL;
  CHECK_EQ(rta_lb_create(MPI_COMM_WORLD, root, &cfg, &ctx, &comm), 0);
  CHECK(comm != MPI_COMM_NULL && comm != MPI_COMM_WORLD);
  CHECK_EQ(rta_lb_placement(ctx), 0);
  CHECK_EQ(rta_lb_ntasks(ctx), NT);
  uint64_t sum0, sum;
  int64_t cnt0, cnt;
  global_sum(ctx, &sum0, &cnt0);
  CHECK_EQ(cnt0, NT);
  check_owners(ctx, NT);

  long long moved = 0;
  for (int k = 0; k < 12; k++) {
    MPI_Comm before = comm;
    CHECK_EQ(rta_lb_perform(ctx, &comm), 0);
    CHECK(comm == before); /* over-decomposition keeps the communicator */
    rta_decision_t d;
    CHECK_EQ(rta_lb_last_decision(ctx, &d), 0);
    CHECK_EQ(d.remap, 1);
    CHECK_EQ((int)d.reason, (int)RTA_REASON_EXPLICIT);
    global_sum(ctx, &sum, &cnt);
    CHECK_EQ(cnt, NT);
    CHECK(sum == sum0);
    check_owners(ctx, NT);
    rta_lb_stats_t s;
    CHECK_EQ(rta_lb_stats(ctx, &s), 0);
    CHECK_EQ(s.remaps, k + 1);
    CHECK_GE(s.tasks_moved, moved);
    moved = s.tasks_moved;
  }
  CHECK_GT(moved, NT / 2); /* random maps really moved tasks */

  /* Rollback 1: a failing unpack callback on the last rank. */
  int victim = np - 1, failed = 0;
  for (int attempt = 0; attempt < 6 && !failed; attempt++) {
    fail_unpack_rank = victim;
    int rc = rta_lb_perform(ctx, &comm);
    fail_unpack_rank = -1;
    if (rc == 0)
      continue; /* the victim received nothing this time: a normal remap */
    failed = 1;
    CHECK_EQ(rc, me == victim ? BALLAST_ECALLBACK : BALLAST_EREMOTE);
    int wr, wc;
    CHECK_EQ(rta_lb_last_error(ctx, &wr, &wc), 0);
    CHECK_EQ(wr, victim);
    CHECK_EQ(wc, BALLAST_ECALLBACK);
    global_sum(ctx, &sum, &cnt);
    CHECK_EQ(cnt, NT);
    CHECK(sum == sum0);
    check_owners(ctx, NT);
  }
  CHECK_EQ(failed, 1);
  CHECK_EQ(rta_lb_perform(ctx, &comm), 0);
  global_sum(ctx, &sum, &cnt);
  CHECK(sum == sum0);

  /* Rollback 2: a failed allocation in the engine on rank 0. */
  failed = 0;
  for (int attempt = 0; attempt < 6 && !failed; attempt++) {
    if (me == 0)
      mig__fail_alloc_after(1);
    int rc = rta_lb_perform(ctx, &comm);
    mig__fail_alloc_after(0);
    if (rc == 0)
      continue;
    failed = 1;
    CHECK_EQ(rc, me == 0 ? BALLAST_ENOMEM : BALLAST_EREMOTE);
    int wr, wc;
    rta_lb_last_error(ctx, &wr, &wc);
    CHECK_EQ(wr, 0);
    CHECK_EQ(wc, BALLAST_ENOMEM);
    global_sum(ctx, &sum, &cnt);
    CHECK_EQ(cnt, NT);
    CHECK(sum == sum0);
    check_owners(ctx, NT);
  }
  CHECK_EQ(failed, 1);

  /* Rollback 3: arrays that do not match (a size mismatch) on rank 0. */
  failed = 0;
  for (int attempt = 0; attempt < 6 && !failed; attempt++) {
    short_register_rank = 0;
    int rc = rta_lb_perform(ctx, &comm);
    short_register_rank = -1;
    if (rc == 0)
      continue;
    failed = 1;
    CHECK_EQ(rc, me == 0 ? BALLAST_ESIZE : BALLAST_EREMOTE);
    global_sum(ctx, &sum, &cnt);
    CHECK_EQ(cnt, NT);
    CHECK(sum == sum0);
  }
  CHECK_EQ(failed, 1);
  CHECK_EQ(rta_lb_perform(ctx, &comm), 0);
  global_sum(ctx, &sum, &cnt);
  CHECK(sum == sum0);
  rta_lb_stats_t s;
  rta_lb_stats(ctx, &s);
  CHECK_GE(s.failed_remaps, 3);

  for (int i = 0; i < rta_lb_nlocal(ctx); i++) {
    rta_task_t *t = rta_lb_local_task(ctx, i);
    blk_t *b = rta_task_data(t);
    free(b->d2);
    free(b->i3);
    free(b->cz);
    free(b->f3);
    free(b);
  }
  CHECK_EQ(rta_lb_destroy(ctx), 0);
  CHECK_EQ(rta_task_remove(root), 0);
  TEST_PASS("lbctx over-decomposition: random remaps, rollbacks");
}

/* ---- placement mode ------------------------------------------------------------- */

typedef struct {
  int index;
  int64_t *v; /* 1000 + 7 * index values */
} ptask_t;

static int p_size(rta_task_t *t, size_t *len, void *u) {
  (void)u;
  ptask_t *p = rta_task_data(t);
  *len = p->index % 2 ? sizeof(int) : 0; /* odd tasks: callback bytes too */
  return 0;
}
static int p_pack(rta_task_t *t, void *buf, size_t len, void *u) {
  (void)u;
  (void)len;
  ptask_t *p = rta_task_data(t);
  memcpy(buf, &p->index, sizeof(int));
  return 0;
}
static int p_unpack(rta_task_t *t, const void *buf, size_t len, void *u) {
  (void)u;
  ptask_t *p = calloc(1, sizeof *p);
  if (len == sizeof(int))
    memcpy(&p->index, buf, sizeof(int));
  else
    p->index = atoi(rta_task_name(t) + 1);
  rta_task_set_data(t, p);
  int64_t z = 0;
  return rta_task_array_register(t, (void **)&p->v, rta_type_elem(RTA_INT64), 1, &z);
}
static void p_release(rta_task_t *t, void *u) {
  (void)u;
  free(rta_task_data(t));
}

static void test_placement(void) {
  rta_task_params_t rp = RTA_TASK_PARAMS_INIT;
  rp.serial = (rta_serial_t){p_size, p_pack, p_unpack, p_release};
  const char *rn = "pl";
  rta_task_t *root, *t;
  CHECK_EQ(rta_task_define(NULL, 1, &rn, &rp, &root), 0);
  char name[16];
  snprintf(name, sizeof name, "r%d", me);
  const char *nm = name;
  CHECK_EQ(rta_task_define(root, 1, &nm, NULL, &t), 0);
  ptask_t *p = calloc(1, sizeof *p);
  p->index = me;
  int64_t n = 1000 + 7 * me;
  p->v = malloc((size_t)n * sizeof *p->v);
  for (int64_t i = 0; i < n; i++)
    p->v[i] = me * 100000 + i;
  CHECK_EQ(rta_task_array_register(t, (void **)&p->v, rta_type_elem(RTA_INT64), 1, &n), 0);
  rta_task_set_data(t, p);

  rta_lb_config_t cfg = explicit_random();
  rta_lb_context_t *ctx;
  MPI_Comm comm;
  CHECK_EQ(rta_lb_create(MPI_COMM_WORLD, root, &cfg, &ctx, &comm), 0);
  CHECK_EQ(rta_lb_placement(ctx), 1);
  int r;
  MPI_Comm_rank(comm, &r);
  CHECK_EQ(r, me); /* identity before any remap */
  int permuted = 0;
  for (int k = 0; k < 10; k++) {
    CHECK_EQ(rta_lb_perform(ctx, &comm), 0);
    CHECK_EQ(rta_lb_comm(ctx), comm);
    CHECK_EQ(rta_lb_nlocal(ctx), 1);
    rta_task_t *mine = rta_lb_local_task(ctx, 0);
    ptask_t *q = rta_task_data(mine);
    MPI_Comm_rank(comm, &r);
    /* The process hosting task i has rank i. */
    CHECK_EQ(q->index, r);
    snprintf(name, sizeof name, "r%d", r);
    CHECK_STREQ(rta_task_name(mine), name);
    int64_t dims[RTA_MAX_DIMS];
    CHECK_EQ(rta_task_array_dims(mine, (void **)&q->v, dims), 1);
    CHECK_EQ(dims[0], 1000 + 7 * r);
    for (int64_t i = 0; i < dims[0]; i++)
      CHECK_EQ(q->v[i], r * 100000 + i);
    permuted |= r != me;
    /* A ring addressed by the ranks stored before the remaps. */
    int to = (r + 1) % np, from = (r - 1 + np) % np, got = -1;
    MPI_Sendrecv(&q->index, 1, MPI_INT, to, 5, &got, 1, MPI_INT, from, 5, comm,
                 MPI_STATUS_IGNORE);
    CHECK_EQ(got, from);
    int owner = -1;
    char key[32];
    snprintf(key, sizeof key, "pl/r%d", from);
    CHECK_EQ(rta_lb_task_owner(ctx, key, &owner), 0);
    CHECK_EQ(owner, from);
  }
  int any = 0;
  MPI_Allreduce(&permuted, &any, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
  CHECK_EQ(any, 1); /* some process really changed task */
  ptask_t *q = rta_task_data(rta_lb_local_task(ctx, 0));
  free(q->v);
  free(q);
  CHECK_EQ(rta_lb_destroy(ctx), 0);
  CHECK_EQ(rta_task_remove(root), 0);
  TEST_PASS("lbctx placement: permutations, rank i hosts task i, ring");
}

/* ---- bad input ---------------------------------------------------------------------- */

static void test_bad_input(void) {
  const char *rn = "bad";
  rta_task_t *root, *other;
  CHECK_EQ(rta_task_define(NULL, 1, &rn, NULL, &root), 0);
  const char *on = "bad_other";
  CHECK_EQ(rta_task_define(NULL, 1, &on, NULL, &other), 0);
  char name[16];
  snprintf(name, sizeof name, "x%d", me);
  const char *nm = name;
  CHECK_EQ(rta_task_define(root, 1, &nm, NULL, NULL), 0);
  CHECK_EQ(rta_task_define(other, 1, &nm, NULL, NULL), 0);
  rta_lb_context_t *ctx = (rta_lb_context_t *)1;
  MPI_Comm c = MPI_COMM_WORLD;
  CHECK_EQ(rta_lb_create(MPI_COMM_NULL, root, NULL, &ctx, &c), BALLAST_EINVAL);
  CHECK(ctx == NULL && c == MPI_COMM_NULL);
  /* NULL root on one rank: everyone fails. */
  int rc = rta_lb_create(MPI_COMM_WORLD, me == 0 ? NULL : root, NULL, &ctx, &c);
  CHECK_EQ(rc, me == 0 ? BALLAST_EINVAL : BALLAST_EREMOTE);
  CHECK(ctx == NULL);
  /* Different roots: a mismatch everywhere. */
  rc = rta_lb_create(MPI_COMM_WORLD, me == np - 1 ? other : root, NULL, &ctx, &c);
  CHECK_EQ(rc, BALLAST_EMISMATCH);
  /* A bad configuration. */
  rta_lb_config_t cfg;
  rta_lb_config_init(&cfg);
  cfg.use_env = 0;
  cfg.policy.window = 1;
  CHECK_EQ(rta_lb_create(MPI_COMM_WORLD, root, &cfg, &ctx, &c), BALLAST_EINVAL);
  cfg.policy.window = 10;
  cfg.strategy = 99;
  CHECK_EQ(rta_lb_create(MPI_COMM_WORLD, root, &cfg, &ctx, &c), BALLAST_EINVAL);
  rta_lb_config_init(NULL); /* does nothing */
  /* Calls on things that are not contexts. */
  MPI_Comm w = MPI_COMM_WORLD;
  rta_lb_context_t *none;
  CHECK_EQ(rta_lb_find(w, &none), BALLAST_ENOTFOUND);
  CHECK_EQ(rta_lb_find(w, NULL), BALLAST_EINVAL);
  CHECK_EQ(rta_lb_perform(NULL, NULL), BALLAST_EINVAL);
  CHECK_EQ(rta_lb_destroy(NULL), 0);
  CHECK_EQ(rta_lb_comm(NULL), MPI_COMM_NULL);
  int owner;
  CHECK_EQ(rta_lb_task_owner(NULL, "bad/x0", &owner), BALLAST_EINVAL);
  /* A valid context: unknown keys, a task open during the call. */
  rta_lb_config_init(&cfg);
  cfg.use_env = 0;
  cfg.policy.mode = RTA_POLICY_EXPLICIT;
  CHECK_EQ(rta_lb_create(MPI_COMM_WORLD, root, &cfg, &ctx, &c), 0);
  CHECK_EQ(rta_lb_task_owner(ctx, "bad/nope", &owner), BALLAST_ENOTFOUND);
  CHECK_EQ(rta_lb_task_comm(ctx, "bad/x0", &w), BALLAST_ENOTFOUND);
  rta_lb_context_t *found;
  CHECK_EQ(rta_lb_find(c, &found), 0);
  CHECK(found == ctx);
  rta_task_t *mine;
  snprintf(name, sizeof name, "bad/x%d", me);
  CHECK_EQ(rta_task_find(name, &mine), 0);
  if (me == 0)
    CHECK_EQ(rta_task_begin(mine), 0);
  rc = rta_lb_perform(ctx, &c);
  CHECK_EQ(rc, BALLAST_ESTATE); /* the application's misuse: the same code everywhere */
  if (me == 0)
    CHECK_EQ(rta_task_end(mine), 0);
  CHECK_EQ(rta_lb_perform(ctx, &c), 0);
  CHECK_EQ(rta_lb_destroy(ctx), 0);
  CHECK_EQ(rta_lb_find(c, &found), BALLAST_ENOTFOUND);
  CHECK_EQ(rta_task_remove(root), 0);
  CHECK_EQ(rta_task_remove(other), 0);
  TEST_PASS("lbctx bad input");
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  MPI_Type_contiguous(3, MPI_FLOAT, &float3);
  MPI_Type_commit(&float3);
  test_overdecomposition();
  test_placement();
  test_bad_input();
  MPI_Type_free(&float3);
  rta_reset();
  MPI_Finalize();
  return 0;
}
