/* The migration pool: the cache of touched memory a load-balancing context
 * keeps between remaps (migrate.h). Unit checks of the pool (fit, bound,
 * eviction of the oldest, small and oversized blocks refused, injected
 * allocation failure), then end to end through a context: arrays that left
 * become the next arrivals' memory (hits), the pool never holds more than
 * its bound, a rollback (failing unpack callback, failed allocation) leaves
 * every task's state identical with the pool in use, and destroying the
 * context returns every cached byte. Both layouts that adopt the receive
 * memory are used: a single array (raw) and callback bytes + arrays (the
 * lead array adopted, the small one unpacked). Also the pool's choice of
 * transport for batch-sized heads (auto). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <ballast/rta.h>

#include "lb/lb_internal.h"
#include "common/util.h"
#include "mig/migrate.h"
#include "test_util.h"

#define NT 16
#define POOL_CAP ((size_t)1 << 20)

static int me, np;
static int fail_unpack_rank = -1;

typedef struct {
  int id;
  double *d; /* rows_of(id) doubles */
  int32_t *k; /* kind 1: 50 ints */
} st_t;

static int kind_of(int id) { return id % 2; }
static int64_t rows_of(int id) { return 9000 + 100 * id; } /* 72-84 KB: pooled */
static double dval(int id, int64_t i) { return id * 100000.0 + (double)i; }

static void register_arrays(rta_task_t *t, st_t *s, int64_t rows) {
  int64_t d1[1] = {rows}, d2[1] = {50};
  CHECK_EQ(rta_task_array_register(t, (void **)&s->d, rta_type_elem(RTA_DOUBLE), 1, d1), 0);
  if (kind_of(s->id) == 1)
    CHECK_EQ(rta_task_array_register(t, (void **)&s->k, rta_type_elem(RTA_INT32), 1, d2), 0);
}

static int cb_size(rta_task_t *t, size_t *len, void *u) {
  (void)u;
  st_t *s = rta_task_data(t);
  *len = kind_of(s->id) ? sizeof(int) : 0;
  return 0;
}
static int cb_pack(rta_task_t *t, void *buf, size_t len, void *u) {
  (void)u;
  st_t *s = rta_task_data(t);
  CHECK_EQ(len, sizeof(int));
  memcpy(buf, &s->id, sizeof(int));
  return 0;
}
static int cb_unpack(rta_task_t *t, const void *buf, size_t len, void *u) {
  (void)u;
  if (me == fail_unpack_rank)
    return -1;
  st_t *s = calloc(1, sizeof *s);
  CHECK(s != NULL);
  if (len == sizeof(int))
    memcpy(&s->id, buf, sizeof(int));
  else
    s->id = atoi(rta_task_name(t) + 1);
  rta_task_set_data(t, s);
  register_arrays(t, s, 0);
  return 0;
}
static void cb_release(rta_task_t *t, void *u) {
  (void)u;
  st_t *s = rta_task_data(t);
  CHECK(s->d == NULL && s->k == NULL); /* rta took the arrays */
  free(s);
  rta_task_set_data(t, NULL);
}

/* Sum over ranks of every local task's checksum, each verified. */
static uint64_t global_sum(rta_lb_context_t *ctx, int64_t *count) {
  uint64_t h = 0, all = 0;
  int64_t c = rta_lb_nlocal(ctx);
  for (int i = 0; i < rta_lb_nlocal(ctx); i++) {
    rta_task_t *t = rta_lb_local_task(ctx, i);
    st_t *s = rta_task_data(t);
    CHECK(s != NULL && s->d != NULL);
    int64_t dims[RTA_MAX_DIMS];
    CHECK_EQ(rta_task_array_dims(t, (void **)&s->d, dims), 1);
    CHECK_EQ(dims[0], rows_of(s->id));
    for (int64_t j = 0; j < rows_of(s->id); j++) {
      CHECK(s->d[j] == dval(s->id, j));
      h += (uint64_t)s->d[j];
    }
    if (kind_of(s->id)) {
      CHECK(s->k != NULL);
      for (int j = 0; j < 50; j++)
        CHECK_EQ(s->k[j], s->id * 3 + j);
    }
  }
  MPI_Allreduce(&h, &all, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(&c, count, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  return all;
}

/* Keys of this rank's tasks, one string (sorted by the context). */
static char *local_keys(rta_lb_context_t *ctx) {
  size_t cap = 16 * (size_t)NT + 1, n = 0;
  char *s = calloc(1, cap);
  for (int i = 0; i < rta_lb_nlocal(ctx); i++)
    n += (size_t)snprintf(s + n, cap - n, "%s;", rta_task_key(rta_lb_local_task(ctx, i)));
  return s;
}

static void check_pool_bound(rta_lb_context_t *ctx) {
  size_t held;
  mig__pool_info(ctx->pool, &held, NULL, NULL, NULL);
  CHECK_LE(held, POOL_CAP);
  CHECK_EQ(mig__pool_held(), held); /* the only pool of the process */
}

static void test_pool_unit(void) {
  mig__pool_t *p = mig__pool_create(POOL_CAP);
  CHECK(p != NULL);
  const size_t b = 300000;
  void *blk[4];
  for (int i = 0; i < 4; i++) {
    blk[i] = malloc(b);
    CHECK(blk[i] != NULL);
    memset(blk[i], i, b);
  }
  size_t held;
  int nb;
  long long hits, misses;
  for (int i = 0; i < 3; i++)
    mig__pool_give(p, blk[i], b);
  mig__pool_info(p, &held, &nb, &hits, &misses);
  CHECK_EQ(held, 3 * b);
  CHECK_EQ(nb, 3);
  /* A fourth block exceeds the bound: the oldest (blk[0]) is freed. */
  mig__pool_give(p, blk[3], b);
  mig__pool_info(p, &held, &nb, NULL, NULL);
  CHECK_EQ(held, 3 * b);
  CHECK_EQ(nb, 3);
  CHECK_EQ(mig__pool_held(), 3 * b);
  /* Too small to cache, and larger than the bound: freed, not kept. */
  mig__pool_give(p, malloc(1000), 1000);
  mig__pool_give(p, malloc(POOL_CAP + 1), POOL_CAP + 1);
  mig__pool_info(p, &held, &nb, NULL, NULL);
  CHECK_EQ(held, 3 * b);
  /* A request of 100 KB does not take a 300 KB block (more than twice). */
  void *x = mig__pool_take(p, 100000);
  CHECK(x != NULL);
  mig__pool_info(p, &held, &nb, &hits, &misses);
  CHECK_EQ(nb, 3);
  CHECK_EQ(hits, 0);
  CHECK_EQ(misses, 1);
  free(x);
  /* Requests that fit are served from the cache, never with the evicted block. */
  for (int i = 0; i < 3; i++) {
    void *y = mig__pool_take(p, 250000 + (size_t)i);
    CHECK(y == blk[1] || y == blk[2] || y == blk[3]);
    CHECK_EQ(((unsigned char *)y)[b - 1], (unsigned char)(y == blk[1] ? 1 : y == blk[2] ? 2 : 3));
    mig__pool_give(p, y, b); /* back, as a buffer nobody kept */
    mig__pool_info(p, NULL, &nb, &hits, NULL);
    CHECK_EQ(nb, 3);
    CHECK_EQ(hits, i + 1);
  }
  /* An injected allocation failure (common's hook, which the engine's
   * mig__fail_alloc_after arms for a migration) fails a take the
   * cache cannot serve and leaves the cache as it was; a take served from
   * the cache allocates nothing, so the hook passes it by. */
  ballast__alloc_fail_after(1);
  CHECK(mig__pool_take(p, 100000) == NULL);
  mig__pool_info(p, NULL, &nb, &hits, &misses);
  CHECK_EQ(nb, 3);
  CHECK_EQ(hits, 3);
  CHECK_EQ(misses, 2);
  ballast__alloc_fail_after(1);
  void *hit = mig__pool_take(p, b);
  CHECK(hit == blk[1] || hit == blk[2] || hit == blk[3]);
  CHECK_EQ(ballast__alloc_count(), 0);
  ballast__alloc_fail_after(0);
  mig__pool_give(p, hit, b);
  mig__pool_info(p, NULL, &nb, NULL, NULL);
  CHECK_EQ(nb, 3);
  mig__pool_destroy(p);
  CHECK_EQ(mig__pool_held(), 0);
  mig__pool_destroy(NULL);
  /* Small blocks serve requests of exactly their size; the oldest block of
   * either class is evicted first. */
  p = mig__pool_create(100 << 10);
  unsigned char *sa = malloc(16384), *sb = malloc(16384), *lg = malloc(70 << 10);
  sa[0] = 'a';
  sb[0] = 'b';
  mig__pool_give(p, sa, 16384);
  mig__pool_give(p, lg, 70 << 10);
  mig__pool_give(p, sb, 16384); /* over 100 KiB: sa, the oldest, goes */
  mig__pool_info(p, &held, &nb, NULL, NULL);
  CHECK_EQ(nb, 2);
  CHECK_EQ(held, (size_t)(70 << 10) + 16384);
  void *w = mig__pool_take(p, 16000); /* not exactly 16384: fresh */
  mig__pool_info(p, NULL, &nb, &hits, &misses);
  CHECK_EQ(nb, 2);
  CHECK_EQ(hits, 0);
  free(w);
  unsigned char *got = mig__pool_take(p, 16384);
  CHECK(got == sb);
  CHECK_EQ(got[0], 'b');
  got = mig__pool_take(p, 16384); /* none left of that size */
  mig__pool_info(p, NULL, &nb, &hits, &misses);
  CHECK_EQ(hits, 1);
  CHECK_EQ(misses, 2);
  CHECK_EQ(nb, 1);
  mig__pool_give(p, got, 16384);
  mig__pool_give(p, sb, 16384); /* over 100 KiB: lg, now the oldest, goes */
  mig__pool_info(p, &held, &nb, NULL, NULL);
  CHECK_EQ(nb, 2);
  CHECK_EQ(held, 2 * (size_t)16384);
  CHECK_EQ(mig__pool_held(), held);
  mig__pool_destroy(p);
  CHECK_EQ(mig__pool_held(), 0);

  /* From 1 MiB only 2 MiB-aligned blocks (huge pages, as take allocates
   * them) are kept; an application's plain malloc'ed array is freed. */
  p = mig__pool_create(16 << 20);
  const size_t mb = (size_t)1 << 20;
  unsigned char *plain = malloc(mb); /* glibc: a 16-byte header into a page */
  CHECK(plain != NULL);
  memset(plain, 1, mb);
  if ((uintptr_t)plain & ((2 << 20) - 1)) {
    mig__pool_give(p, plain, mb);
    mig__pool_info(p, &held, &nb, NULL, NULL);
    CHECK_EQ(nb, 0);
    CHECK_EQ(held, 0);
  } else {
    free(plain); /* aligned by chance: nothing to check */
  }
  unsigned char *hp = mig__pool_take(p, mb + 1);
  CHECK(hp != NULL);
  CHECK_EQ((uintptr_t)hp & ((2 << 20) - 1), 0);
  hp[mb] = 7;
  mig__pool_give(p, hp, mb + 1);
  mig__pool_info(p, &held, &nb, NULL, NULL);
  CHECK_EQ(nb, 1);
  CHECK_EQ(held, 2 * mb); /* the whole huge page it holds counts */
  CHECK(mig__pool_take(p, mb) == hp); /* served from the pool */
  CHECK_EQ(hp[mb], 7);
  free(hp);
  /* The bound holds in huge pages: 16 blocks of 1 MiB + 1 are 32 MiB of
   * memory, and a 16 MiB pool keeps 8 of them. */
  for (int i = 0; i < 16; i++) {
    unsigned char *q = mig__pool_take(p, mb + 1);
    CHECK(q != NULL);
    memset(q, i, mb + 1);
    mig__pool_give(p, q, mb + 1);
    mig__pool_info(p, &held, &nb, NULL, NULL);
    CHECK_LE(held, (size_t)16 << 20);
  }
  mig__pool_destroy(p);
  CHECK_EQ(mig__pool_held(), 0);
  p = mig__pool_create(16 << 20);
  unsigned char *blocks[16];
  for (int i = 0; i < 16; i++)
    blocks[i] = mig__pool_take(p, mb + 1); /* all fresh: none cached yet */
  for (int i = 0; i < 16; i++)
    mig__pool_give(p, blocks[i], mb + 1);
  mig__pool_info(p, &held, &nb, NULL, NULL);
  CHECK_EQ(nb, 8);
  CHECK_EQ(held, (size_t)16 << 20);
  /* take_len reports what a block holds, so it goes back whole: taken for a
   * 1 MiB request, the 2 MiB block serves a 2 MiB one next. */
  mig__pool_destroy(p);
  p = mig__pool_create(16 << 20);
  size_t len = 0;
  unsigned char *t1 = mig__pool_take_len(p, mb, &len);
  CHECK(t1 != NULL);
  CHECK_EQ(len, 2 * mb);
  mig__pool_give(p, t1, len);
  CHECK(mig__pool_take_len(p, 2 * mb, &len) == t1);
  CHECK_EQ(len, 2 * mb);
  free(t1);
  unsigned char *t2 = mig__pool_take_len(p, 100, &len); /* fresh, small */
  CHECK(t2 != NULL);
  CHECK_EQ(len, 100);
  free(t2);
  mig__pool_destroy(p);
  CHECK_EQ(mig__pool_held(), 0);

  /* rta_array_alloc: plain below 1 MiB, 2 MiB aligned from there, free()-able. */
  void *a0 = rta_array_alloc(0), *a1 = rta_array_alloc(100);
  unsigned char *a3 = rta_array_alloc((size_t)3 << 20);
  CHECK(a0 != NULL && a1 != NULL && a3 != NULL);
  CHECK_EQ((uintptr_t)a3 & ((2 << 20) - 1), 0);
  memset(a3, 5, (size_t)3 << 20);
  CHECK_EQ(a3[((size_t)3 << 20) - 1], 5);
  free(a0);
  free(a1);
  free(a3);

  void *z = mig__pool_take(NULL, 100000); /* no pool: plain memory */
  CHECK(z != NULL);
  mig__pool_give(NULL, z, 100000);          /* no pool: freed */
  CHECK_EQ(mig__pool_held(), 0);
}

static void test_context(void) {
  rta_task_params_t rp = RTA_TASK_PARAMS_INIT;
  rp.serial = (rta_serial_t){cb_size, cb_pack, cb_unpack, cb_release};
  const char *rn = "pool";
  rta_task_t *root;
  CHECK_EQ(rta_task_define(NULL, 1, &rn, &rp, &root), 0);
  for (int id = 0; id < NT; id++) {
    if (id % np != me)
      continue;
    char name[16];
    snprintf(name, sizeof name, "t%02d", id);
    const char *nm = name;
    rta_task_t *t;
    CHECK_EQ(rta_task_define(root, 1, &nm, NULL, &t), 0);
    st_t *s = calloc(1, sizeof *s);
    s->id = id;
    s->d = malloc(sizeof(double) * (size_t)rows_of(id));
    for (int64_t j = 0; j < rows_of(id); j++)
      s->d[j] = dval(id, j);
    if (kind_of(id)) {
      s->k = malloc(50 * sizeof(int32_t));
      for (int j = 0; j < 50; j++)
        s->k[j] = id * 3 + j;
    }
    rta_task_set_data(t, s);
    register_arrays(t, s, rows_of(id));
  }
  rta_lb_config_t cfg;
  rta_lb_config_init(&cfg);
  cfg.use_env = 0;
  cfg.policy.mode = RTA_POLICY_EXPLICIT;
  cfg.strategy = RTA_MAP_RANDOM;
  cfg.seed = 3;
  cfg.mem_limit = POOL_CAP; /* also the pool's bound; several rounds */
  rta_lb_context_t *ctx;
  MPI_Comm comm;
  CHECK_EQ(rta_lb_create(MPI_COMM_WORLD, root, &cfg, &ctx, &comm), 0);
  int64_t cnt;
  uint64_t sum0 = global_sum(ctx, &cnt);
  CHECK_EQ(cnt, NT);

  for (int k = 0; k < 8; k++) {
    CHECK_EQ(rta_lb_perform(ctx, &comm), 0);
    CHECK(global_sum(ctx, &cnt) == sum0);
    CHECK_EQ(cnt, NT);
    check_pool_bound(ctx);
  }
  long long hits, all_hits;
  size_t held, max_held;
  mig__pool_info(ctx->pool, &held, NULL, &hits, NULL);
  MPI_Allreduce(&hits, &all_hits, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  CHECK_GT(all_hits, 0); /* arrivals landed in memory of states that left */
  MPI_Allreduce(&held, &max_held, 1, MPI_UNSIGNED_LONG, MPI_MAX, MPI_COMM_WORLD);
  CHECK_GT(max_held, 0);

  /* Rollbacks with the pool in use: a failing unpack callback on the last
   * rank, then a failed allocation (a block taken from the pool) on rank 0.
   * Each is retried until the victim takes part in the moves. */
  for (int fault = 0; fault < 2; fault++) {
    int failed = 0;
    for (int attempt = 0; attempt < 8 && !failed; attempt++) {
      char *before = local_keys(ctx);
      if (fault == 0)
        fail_unpack_rank = np - 1;
      else if (me == 0)
        mig__fail_alloc_after(1);
      int rc = rta_lb_perform(ctx, &comm);
      fail_unpack_rank = -1;
      mig__fail_alloc_after(0);
      int any = rc != 0, all;
      MPI_Allreduce(&any, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
      CHECK_EQ(any, all); /* every rank rolled back, or none */
      if (rc != 0) {
        failed = 1;
        int victim = fault == 0 ? np - 1 : 0;
        CHECK_EQ(rc, me == victim ? (fault == 0 ? BALLAST_ECALLBACK : BALLAST_ENOMEM)
                                  : BALLAST_EREMOTE);
        char *after = local_keys(ctx);
        CHECK_STREQ(after, before); /* the same tasks, here */
        free(after);
      }
      free(before);
      CHECK(global_sum(ctx, &cnt) == sum0);
      CHECK_EQ(cnt, NT);
      check_pool_bound(ctx);
    }
    CHECK_EQ(failed, 1);
    CHECK_EQ(rta_lb_perform(ctx, &comm), 0); /* and the next succeeds */
    CHECK(global_sum(ctx, &cnt) == sum0);
  }

  for (int i = 0; i < rta_lb_nlocal(ctx); i++) {
    st_t *s = rta_task_data(rta_lb_local_task(ctx, i));
    free(s->d);
    free(s->k);
    free(s);
  }
  CHECK_EQ(rta_lb_destroy(ctx), 0);
  CHECK_EQ(mig__pool_held(), 0); /* every cached byte returned */
  CHECK_EQ(rta_task_remove(root), 0);
}

/* The pool's choice of transport for batch-sized heads (BALLAST_LB_TRANSPORT
 * auto, mig_pool.h): batches until they are measured, then reads until
 * they are, then the faster by its last measure, the slower measured again
 * once in MIG__POOL_RETRY + 1 choices, and a change of which is faster
 * followed; measures of nothing are ignored. Local: no MPI. */
static void test_transport_choice(void) {
  CHECK_EQ(mig__pool_transport(NULL), MIG__BATCH);
  mig__pool_t *p = mig__pool_create(POOL_CAP);
  CHECK(p != NULL);
  CHECK_EQ(mig__pool_transport(p), MIG__BATCH);
  CHECK_EQ(mig__pool_transport(p), MIG__BATCH); /* still unmeasured */
  mig__pool_transport_note(p, MIG__BATCH, 0.010, (size_t)1 << 20);
  mig__pool_transport_note(p, MIG__READ, 0.001, 0); /* no bytes: ignored */
  mig__pool_transport_note(p, 7, 0.001, (size_t)1 << 20); /* no such transport */
  CHECK_EQ(mig__pool_transport(p), MIG__READ);
  CHECK_EQ(mig__pool_transport(p), MIG__READ); /* until measured */
  mig__pool_transport_note(p, MIG__READ, 0.005, (size_t)1 << 20);
  /* Steady: reads twice as fast, every choice measured. */
  int batches = 0, n = 3 * (int)(MIG__POOL_RETRY + 1);
  for (int i = 0; i < n; i++) {
    int t = mig__pool_transport(p);
    CHECK(t == MIG__BATCH || t == MIG__READ);
    batches += t == MIG__BATCH;
    mig__pool_transport_note(p, t, t == MIG__READ ? 0.005 : 0.010,
                                 (size_t)1 << 20);
  }
  CHECK_EQ(batches, 3);
  /* The batches become the faster at their next measure: then mostly them. */
  int t;
  while ((t = mig__pool_transport(p)) != MIG__BATCH)
    mig__pool_transport_note(p, t, 0.005, (size_t)1 << 20);
  mig__pool_transport_note(p, MIG__BATCH, 0.002, (size_t)1 << 20);
  int reads = 0;
  for (unsigned i = 0; i < MIG__POOL_RETRY + 1; i++) {
    t = mig__pool_transport(p);
    reads += t == MIG__READ;
    mig__pool_transport_note(p, t, t == MIG__READ ? 0.005 : 0.002,
                                 (size_t)1 << 20);
  }
  CHECK_EQ(reads, 1);
  mig__pool_destroy(p);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  test_pool_unit();
  test_transport_choice();
  test_context();
  rta_reset();
  TEST_PASS("lb_pool");
  MPI_Finalize();
  return 0;
}
