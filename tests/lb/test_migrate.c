/* The migration engine: many random remaps with checksums of every state,
 * bounded rounds, the direct (no pack copy) and adopting (no unpack copy)
 * paths, the three transports (aggregate, per-peer batch, own message), and
 * rollback under injected faults (a failing pack or unpack
 * callback, a failed allocation, a size mismatch): afterwards every task is
 * where it was with the same bytes, and the next migration succeeds. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <ballast/common.h>

#include "mig/migrate.h"
#include "test_util.h"

/* Beyond the first 64, small states: a rank sends a few hundred heads to
 * one peer in one round, more than one batch message carries (256 parts,
 * migrate.c). */
#define NTASKS 2000

typedef struct {
  int owner;              /* rank that holds the live state */
  size_t len;
  unsigned char *data;    /* live state, NULL where not owned */
  unsigned char *staged;  /* received, not yet committed */
  size_t staged_len;
} task_t;

static task_t tasks[NTASKS];
static int me, np;

/* Fault switches, set per scenario. */
static int64_t fail_pack_task = -1, fail_unpack_task = -1, lie_size_task = -1;

static unsigned char byte_of(int64_t t, size_t i, unsigned gen) {
  return (unsigned char)((t * 131 + (int64_t)i * 7 + gen * 17) & 0xff);
}

/* Sizes: ~300 KB and 1-3 KB (heads in a peer's batch datatype, tails in
 * the aggregate), 1.2 MB (parts of their own message); beyond task 64,
 * 16 bytes to 3 KB. */
static size_t len_of(int64_t t) {
  if (t >= 64)
    return (size_t)(16 + (t * 37) % 3000);
  if (t % 5 == 0)
    return (size_t)(300000 + t);
  if (t % 13 == 0)
    return (size_t)(1200000 + t);
  return (size_t)(1000 + 37 * t);
}

/* Three layouts: tasks whose id is a multiple of 3 travel as a head only,
 * sent straight from the application's buffer (no pack copy); those of 3k+1
 * as a head (the bytes) and a tail (their length); the others as a tail only,
 * [length][bytes], through pack. Odd tasks adopt the engine's head buffer (no
 * unpack copy) where there is one, even ones copy out of it. */
static int kind(int64_t t) { return (int)(t % 3); }

static int op_size(void *ctx, int64_t t, size_t *head, size_t *tail) {
  (void)ctx;
  size_t lie = t == lie_size_task ? 8 : 0;
  *head = kind(t) == 2 ? 0 : tasks[t].len;
  *tail = kind(t) == 0 ? 0 : sizeof(uint64_t) + (kind(t) == 2 ? tasks[t].len : 0) + lie;
  return 0;
}
static int op_head(void *ctx, int64_t t, const void **ptr) {
  (void)ctx;
  CHECK(kind(t) != 2);
  *ptr = tasks[t].data;
  return 0;
}
static int op_pack(void *ctx, int64_t t, void *buf, size_t bytes) {
  (void)ctx;
  CHECK(kind(t) != 0);
  CHECK_EQ((uintptr_t)buf % 8, 0);
  if (t == fail_pack_task)
    return BALLAST_ECALLBACK;
  uint64_t n = tasks[t].len;
  memcpy(buf, &n, sizeof n);
  size_t off = sizeof n;
  if (kind(t) == 2) {
    memcpy((char *)buf + off, tasks[t].data, tasks[t].len);
    off += tasks[t].len;
  }
  if (bytes > off) /* the lying size: pad */
    memset((char *)buf + off, 0, bytes - off);
  return 0;
}
/* Set: every head is adopted (ops_kept, heads_kept: the round budget
 * counts tails only). */
static int keep_heads;
static int op_unpack(void *ctx, int64_t t, int src, void **head, size_t hbytes,
                     const void *tail, size_t tbytes) {
  (void)ctx;
  (void)src;
  CHECK(tail != NULL);
  if (t == fail_unpack_task)
    return BALLAST_ECALLBACK;
  uint64_t n = hbytes;
  if (kind(t) != 0) {
    if (tbytes < sizeof n)
      return BALLAST_ESIZE;
    memcpy(&n, tail, sizeof n);
  }
  /* The state describes its own size: a mismatch is the size error. */
  size_t want_t = kind(t) == 0 ? 0 : sizeof n + (kind(t) == 2 ? n : 0);
  size_t want_h = kind(t) == 2 ? 0 : n;
  if (tbytes != want_t || hbytes != want_h || n != len_of(t))
    return BALLAST_ESIZE;
  if (kind(t) != 2 && (t % 2 || keep_heads)) {
    tasks[t].staged = *head;
    *head = NULL;
  } else {
    tasks[t].staged = malloc(n);
    CHECK(tasks[t].staged != NULL);
    memcpy(tasks[t].staged, kind(t) == 2 ? (const char *)tail + sizeof n : *head, n);
  }
  tasks[t].staged_len = n;
  return 0;
}
static mig__pool_t *pool; /* NULL in the first half of the remaps */
static int pending_owner[NTASKS];
static void op_finish(void *ctx, int64_t t, int outgoing, int outcome) {
  (void)ctx;
  if (outgoing) {
    if (outcome == MIG__COMMIT) {
      /* What left goes to the pool, as the load-balancing context does. */
      mig__pool_give(pool, tasks[t].data, tasks[t].len);
      tasks[t].data = NULL;
      tasks[t].owner = pending_owner[t];
    }
  } else {
    if (outcome == MIG__COMMIT) {
      tasks[t].data = tasks[t].staged;
      tasks[t].len = tasks[t].staged_len;
      tasks[t].owner = me;
    } else {
      free(tasks[t].staged);
    }
    tasks[t].staged = NULL;
  }
}

static const mig__ops_t ops = {op_size, op_head, op_pack, op_unpack, op_finish,
                                       NULL, 0, NULL, NULL};
static const mig__ops_t ops_kept = {op_size, op_head, op_pack, op_unpack,
                                            op_finish, NULL, 1, NULL, NULL};
static const mig__ops_t *ops_now = &ops;

/* Checks every task this rank owns against its expected bytes, and that the
 * owners agree globally: each task owned by exactly one rank. */
static void verify(const int *expect_owner) {
  int mine[NTASKS], all[NTASKS];
  for (int t = 0; t < NTASKS; t++) {
    mine[t] = tasks[t].data ? 1 : 0;
    if (tasks[t].data) {
      CHECK_EQ(expect_owner[t], me);
      CHECK_EQ(tasks[t].len, len_of(t));
      for (size_t i = 0; i < tasks[t].len; i += 97)
        CHECK_EQ(tasks[t].data[i], byte_of(t, i, 0));
      CHECK_EQ(tasks[t].data[tasks[t].len - 1], byte_of(t, tasks[t].len - 1, 0));
    }
    CHECK(tasks[t].staged == NULL);
  }
  MPI_Allreduce(mine, all, NTASKS, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  for (int t = 0; t < NTASKS; t++)
    CHECK_EQ(all[t], 1);
}

static unsigned long long rng = 12345;
static int rnd(int n) {
  rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
  return (int)((rng >> 33) % (unsigned long long)n);
}

/* The most heads this rank sent one peer in the last remap (kinds 0, 1). */
static int heads_to_one_peer;
/* This rank's moves in the last remap, and those a budget of 1 byte counts
 * under heads_kept: with a tail (kinds 1, 2) or a head of 128 KiB or more
 * (one message of its own). */
static int moves_all, moves_counted;

/* Draws a new owner for every task (same draw on every rank) and migrates. */
static int remap(size_t mem_limit, mig__stats_t *st, int *owner_now) {
  mig__move_t moves[NTASKS];
  int n = 0, heads[64] = {0};
  moves_counted = 0;
  for (int t = 0; t < NTASKS; t++) {
    pending_owner[t] = rnd(np);
    if (owner_now[t] == me && pending_owner[t] != me) {
      moves[n].task = t;
      moves[n].dest = pending_owner[t];
      n++;
      if (kind(t) != 2 && pending_owner[t] < 64)
        heads[pending_owner[t]]++;
      moves_counted += kind(t) != 0 || len_of(t) >= ((size_t)128 << 10);
    }
  }
  heads_to_one_peer = 0;
  for (int p = 0; p < 64; p++)
    if (heads[p] > heads_to_one_peer)
      heads_to_one_peer = heads[p];
  moves_all = n;
  int rc = mig__run(MPI_COMM_WORLD, moves, n, ops_now, NULL, mem_limit, pool, st);
  if (rc == 0)
    for (int t = 0; t < NTASKS; t++)
      owner_now[t] = pending_owner[t];
  return rc;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  int owner[NTASKS];
  for (int t = 0; t < NTASKS; t++) {
    owner[t] = t % np;
    tasks[t].owner = owner[t];
    tasks[t].len = len_of(t);
    if (owner[t] == me) {
      tasks[t].data = malloc(tasks[t].len);
      for (size_t i = 0; i < tasks[t].len; i++)
        tasks[t].data[i] = byte_of(t, i, 0);
    }
  }
  verify(owner);

  /* Many random remaps, alternating a generous and a tight memory bound. */
  mig__stats_t st;
  long long moved = 0, heads_read = 0;
  for (int it = 0; it < 12; it++) {
    if (it == 6) {
      pool = mig__pool_create((size_t)2 << 20);
      CHECK(pool != NULL);
    }
    size_t limit = (it % 2) ? (size_t)np * 200000 : 0;
    CHECK_EQ(remap(limit, &st, owner), 0);
    CHECK_EQ(st.failed_rank, -1);
    if (!(it % 2) && np == 2) {
      /* one round (no bound): some rank sent its peer more heads than one
       * batch message carries */
      int most = 0;
      MPI_Allreduce(&heads_to_one_peer, &most, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
      CHECK_GT(most, 256);
    }
    if (it % 2) {
      /* a state of 300 KB exceeds the per-round budget: several rounds */
      int rounds_max = 0;
      MPI_Allreduce(&st.rounds, &rounds_max, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
      CHECK_GT(rounds_max, 1);
    }
    long long sent = st.tasks_sent, recvd = st.tasks_received, s_all, r_all;
    MPI_Allreduce(&sent, &s_all, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&recvd, &r_all, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    CHECK_EQ(s_all, r_all);
    moved += s_all;
    heads_read += st.heads_read;
    verify(owner);
  }
  CHECK_GT(moved, NTASKS); /* the draws really moved tasks around */
  /* The transport of batch-sized heads, when the run fixes it
   * (BALLAST_LB_TRANSPORT): every rank read its sources' memory (all ranks
   * share the node here), or none did. */
  const char *tr = getenv("BALLAST_LB_TRANSPORT");
  if (tr && !strcmp(tr, "read"))
    CHECK_GT(heads_read, 0);
  if (tr && !strcmp(tr, "batch"))
    CHECK_EQ(heads_read, 0);
  {
    /* Heads the caller keeps are not staging: with heads_kept and a budget
     * of 1 byte, a batched head-only move adds 0 bytes, so a round starts
     * only at a move with a tail or a head of its own message: fewer rounds
     * than moves; the states arrive whole. */
    keep_heads = 1;
    ops_now = &ops_kept;
    CHECK_EQ(remap(1, &st, owner), 0);
    int mine[2] = {moves_counted + 1, moves_all}, most[2];
    MPI_Allreduce(mine, most, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    CHECK_LE(st.rounds, most[0]);
    CHECK_LT(st.rounds, most[1]);
    verify(owner);
    keep_heads = 0;
    ops_now = &ops;
  }
  {
    /* The pool served arrivals with memory of states that left, and stayed
     * within its bound. */
    size_t held;
    int blocks;
    long long hits, misses, all_hits;
    mig__pool_info(pool, &held, &blocks, &hits, &misses);
    CHECK_LE(held, (size_t)2 << 20);
    CHECK_EQ(mig__pool_held(), held);
    MPI_Allreduce(&hits, &all_hits, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    CHECK_GT(all_hits, 0);
  }

  /* Faults: each on one rank only; everyone rolls back, nothing is lost. */
  const int bad = np - 1;
  for (int scenario = 0; scenario < 4; scenario++) {
    int before[NTASKS];
    memcpy(before, owner, sizeof before);
    unsigned long long rng_before = rng;
    /* Pick a task that will move away from or to `bad` in the next draw. */
    unsigned long long save = rng;
    int64_t victim = -1;
    for (int t = 0; t < NTASKS; t++) {
      int o = rnd(np);
      if (victim < 0 && t % 3 != 0 && o != owner[t] && (owner[t] == bad || o == bad))
        victim = t;
    }
    rng = save;
    CHECK_GE(victim, 0);
    int expect_here = 0;
    if (scenario == 0 && owner[victim] == me) { fail_pack_task = victim; expect_here = 1; }
    if (scenario == 1) {
      /* the unpack happens on the destination */
      int dest;
      unsigned long long s2 = rng;
      for (int t = 0; t <= victim; t++) dest = rnd(np);
      rng = s2;
      if (dest == me) { fail_unpack_task = victim; expect_here = 1; }
    }
    if (scenario == 2 && me == bad) { mig__fail_alloc_after(1); expect_here = 1; }
    if (scenario == 3 && owner[victim] == me) { lie_size_task = victim; }
    int rc = remap(0, &st, owner);
    CHECK_NE(rc, 0);
    CHECK_GE(st.failed_rank, 0);
    if (expect_here)
      CHECK(rc == BALLAST_ECALLBACK || rc == BALLAST_ENOMEM);
    else if (scenario != 3)
      CHECK(rc == BALLAST_EREMOTE || st.failed_rank == me);
    if (scenario == 3)
      CHECK(rc == BALLAST_ESIZE || rc == BALLAST_EREMOTE);
    fail_pack_task = fail_unpack_task = lie_size_task = -1;
    mig__fail_alloc_after(0);
    for (int t = 0; t < NTASKS; t++)
      CHECK_EQ(owner[t], before[t]);
    verify(owner); /* identical bytes, same owners */
    rng = rng_before;
    CHECK_EQ(remap(0, &st, owner), 0); /* and the next remap succeeds */
    verify(owner);
  }

  /* Bad input: a move to oneself is refused everywhere, nothing moves. */
  {
    mig__move_t self_move = {0, me};
    int n = owner[0] == me ? 1 : 0;
    int rc = mig__run(MPI_COMM_WORLD, &self_move, n, &ops, NULL, 0, pool, &st);
    CHECK_NE(rc, 0);
    verify(owner);
  }
  for (int t = 0; t < NTASKS; t++)
    free(tasks[t].data);
  mig__pool_destroy(pool);
  CHECK_EQ(mig__pool_held(), 0);
  TEST_PASS("lb_migrate");
  MPI_Finalize();
  return 0;
}
