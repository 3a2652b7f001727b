/* The migration engine at the edges of its three transports: states whose
 * head and tail sit exactly on the 64 KiB (aggregate / batch) and 128 KiB
 * (batch / own message) boundaries, and at 1 MiB (huge-page blocks), empty
 * parts, heads in a peer's batch with tails of their own message or in the
 * aggregate (and the reverse), descriptions of 0 to 299 bytes sent with
 * the headers (announced before the states, checked byte for byte), many
 * parts of equal size to one peer (a batch whose blocks are swapped would
 * pass a size check), moves given in shuffled order, one task per
 * round (mem_limit 1: as many rounds as the busiest rank has moves), and
 * every allocation failing in turn on one rank (all or nothing, the pool's
 * accounting intact), then random sizes around those boundaries with new
 * draws at each epoch. Every byte of every part is checked at each unpack;
 * arrivals of 1 MiB and more must be 2 MiB aligned (rta_lb.h), tails 8-byte
 * aligned (migrate.h). Also rta_array_alloc at its 1 MiB boundary, the
 * pool keeping such memory while refusing plain malloc'ed blocks, its best
 * fit, and its bound following the migrations when none was given. */
#include <malloc.h>
#include <stdint.h>

#include <ballast/common.h>
#include <ballast/rta.h>

#include "common/util.h"
#include "mig/migrate.h"
#include "test_util.h"

#define KB ((size_t)1 << 10)
#define MB ((size_t)1 << 20)
#define NFIXED 30
#define NTASKS 40

typedef struct {
  size_t head, tail;
} spec_t;

/* Sizes around each transport's boundaries (migrate.c: tails below AGG_MAX
 * = 64 KiB in the aggregate, heads below BATCH_MAX = 1 MiB and larger
 * tails below it in the batch, parts of 1 MiB and more alone): each note
 * says where the state's parts go. */
static const spec_t fixed[NFIXED] = {
    {0, 0},                /* empty state: nothing on the wire */
    {1, 0},                /* a 1-byte head in the batch */
    {0, 1},                /* aggregate, tail only */
    {7, 9},                /* head in the batch, tail padded in the aggregate */
    {64 * KB - 1, 0},      /* head in the batch */
    {0, 64 * KB - 1},      /* largest tail of the aggregate */
    {32 * KB, 32 * KB - 1},/* head in the batch, tail in the aggregate */
    {64 * KB, 0},          /* head in the batch */
    {0, 64 * KB},          /* tail in the batch */
    {32 * KB, 32 * KB},    /* head in the batch, tail in the aggregate */
    {64 * KB - 8, 8},      /* the same, 8-byte tail */
    {MB - 1, 0},           /* own message, below a huge page's block */
    {0, MB - 1},           /* own message, below a huge page's block */
    {MB, 0},               /* own message from a huge page's block */
    {0, MB},               /* own message from a huge page's block */
    {MB + 1, 100},         /* own head, tail in the aggregate */
    {100 * KB, MB + 5},    /* head in the batch, tail its own message */
    {MB + 3, 100 * KB},    /* own head, tail in the batch */
    {MB - 1, MB - 1},      /* both own messages */
    {100, 70 * KB},        /* a 100-byte head in the batch, tail too */
    {60 * KB, 10 * KB},    /* head in the batch, tail in the aggregate */
    {3, 64 * KB},          /* a 3-byte head in the batch, tail too */
    {MB, MB},              /* both own messages */
    {2 * MB + 1, 0},       /* own head over 2 MiB */
    {128 * KB - 1, 0},     /* largest head of a batch */
    {0, 128 * KB - 1},     /* largest tail of a batch */
    {128 * KB, 0},         /* smallest head of its own message */
    {0, 128 * KB},         /* smallest tail of its own message */
    {128 * KB - 1, 128 * KB}, /* head in the batch, tail its own message */
    {128 * KB, 128 * KB - 1}, /* own head, tail in the batch */
};

/* Section 5 draws new sizes per epoch (0: the table above): mostly a few
 * bytes either side of 0, 8, 64 KiB, 128 KiB, 1 MiB and 2 MiB, sometimes
 * anything below 3 MiB. */
static int epoch;
static size_t pick(unsigned long long h) {
  static const size_t edges[] = {0, 1, 8, 64 * KB, 128 * KB, MB, 2 * MB};
  if ((h >> 16) % 4 == 0)
    return (size_t)((h >> 20) % (3 * MB));
  long long v = (long long)edges[h % 7] + (long long)((h >> 8) % 17) - 8;
  return v < 0 ? 0 : (size_t)v;
}
static unsigned long long mix(unsigned long long h) {
  h ^= h >> 31;
  h *= 0x94D049BB133111EBULL;
  return h ^ (h >> 29);
}

static spec_t spec(int t) {
  if (epoch > 0) {
    unsigned long long h = mix((unsigned long long)(t + 1) * 0x9E3779B97F4A7C15ULL ^
                               (unsigned long long)epoch * 0xBF58476D1CE4E5B9ULL);
    spec_t s = {pick(h), pick(mix(h + 7))};
    return s;
  }
  if (t < NFIXED)
    return fixed[t];
  /* Many batch parts of (nearly) equal size: a swap inside a batch shows
   * only in the bytes. */
  spec_t s = {100 * KB + (size_t)(t % 3) * 8, (t % 2) ? 70 * KB : 0};
  return s;
}

typedef struct {
  unsigned char *head, *tail; /* live state where owned */
  unsigned char *sh, *st;     /* staged arrival */
} task_t;

static task_t tasks[NTASKS];
static int me, np;
static int owner[NTASKS], pending[NTASKS];
static mig__pool_t *pool;
static int64_t fail_unpack = -1, fail_pack = -1;
static long long unpacks_checked;

static unsigned char byte_of(int t, size_t i, int part) {
  return (unsigned char)((t * 131 + epoch * 13 + (long long)i * 7 + part * 89 +
                          (long long)(i >> 8) * 3) & 0xff);
}

static void fill(unsigned char *p, int t, size_t n, int part) {
  for (size_t i = 0; i < n; i++)
    p[i] = byte_of(t, i, part);
}

/* Every task's expected parts, made once on every rank. */
static unsigned char *ref[NTASKS][2];

/* Every byte, so a shifted, swapped or truncated part cannot pass. Tasks
 * beyond NTASKS (the pool checks) are compared byte by byte. */
static int same(const unsigned char *p, int t, size_t n, int part) {
  if (t < NTASKS && ref[t][part])
    return memcmp(p, ref[t][part], n) == 0;
  for (size_t i = 0; i < n; i++)
    if (p[i] != byte_of(t, i, part))
      return 0;
  return 1;
}

static int op_size(void *ctx, int64_t t, size_t *head, size_t *tail) {
  (void)ctx;
  CHECK_EQ(owner[t], me);
  *head = spec((int)t).head;
  *tail = spec((int)t).tail;
  return 0;
}
static int op_head(void *ctx, int64_t t, const void **ptr) {
  (void)ctx;
  CHECK(spec((int)t).head > 0); /* asked only for a head */
  *ptr = tasks[t].head;
  return 0;
}
static int op_pack(void *ctx, int64_t t, void *buf, size_t bytes) {
  (void)ctx;
  CHECK_EQ(bytes, spec((int)t).tail);
  CHECK(bytes > 0);
  CHECK_EQ((uintptr_t)buf % 8, 0);
  if (t == fail_pack)
    return BALLAST_ECALLBACK;
  memcpy(buf, tasks[t].tail, bytes);
  return 0;
}
/* Each state's description (the engine's meta, sent with the headers):
 * 0 to 299 bytes, new lengths each epoch, the empty one included. */
#define META_MAX 300
static unsigned char meta_buf[NTASKS][META_MAX];
static int announced[NTASKS]; /* announced and not unpacked, this migration */
static long long announces;
static size_t meta_len(int t) { return (size_t)((t * 37 + epoch * 11) % META_MAX); }
static int op_meta(void *ctx, int64_t t, const void **ptr, size_t *len) {
  (void)ctx;
  CHECK_EQ(owner[t], me);
  *len = meta_len((int)t);
  for (size_t i = 0; i < *len; i++)
    meta_buf[t][i] = byte_of((int)t, i, 2);
  *ptr = meta_buf[t];
  return 0;
}
/* Before any state moves: the description whole, with the sizes to come. */
static int op_announce(void *ctx, int64_t t, int src, const void *meta, size_t len,
                       size_t head, size_t tail) {
  (void)ctx;
  CHECK(t >= 0 && t < NTASKS);
  CHECK_EQ(src, owner[t]);
  CHECK_EQ(pending[t], me);
  CHECK_EQ(head, spec((int)t).head);
  CHECK_EQ(tail, spec((int)t).tail);
  CHECK(meta != NULL);
  CHECK_EQ((uintptr_t)meta % 8, 0);
  CHECK_EQ(len, meta_len((int)t));
  for (size_t i = 0; i < len; i++)
    CHECK_EQ(((const unsigned char *)meta)[i], byte_of((int)t, i, 2));
  CHECK_EQ(announced[t], 0);
  CHECK_EQ(tasks[t].sh == NULL && tasks[t].st == NULL, 1); /* not yet unpacked */
  announced[t] = 1;
  announces++;
  return 0;
}

static int op_unpack(void *ctx, int64_t t, int src, void **head, size_t hbytes,
                     const void *tail, size_t tbytes) {
  (void)ctx;
  CHECK(t >= 0 && t < NTASKS);
  CHECK_EQ(src, owner[t]);
  CHECK_EQ(pending[t], me);
  CHECK_EQ(hbytes, spec((int)t).head);
  CHECK_EQ(tbytes, spec((int)t).tail);
  CHECK(tail != NULL);
  CHECK_EQ((uintptr_t)tail % 8, 0);
  CHECK(tasks[t].sh == NULL && tasks[t].st == NULL);
  CHECK_EQ(announced[t], 1); /* told before its state came */
  announced[t] = 0;
  if (hbytes > 0) {
    CHECK(*head != NULL);
    CHECK(same(*head, (int)t, hbytes, 0));
    if (hbytes >= MB) /* rta_lb.h: arrivals of 1 MiB and more, 2 MiB aligned */
      CHECK_EQ((uintptr_t)*head % (2 * MB), 0);
  }
  CHECK(same(tail, (int)t, tbytes, 1));
  unpacks_checked++;
  if (t == fail_unpack)
    return BALLAST_ECALLBACK;
  if (hbytes > 0 && (t % 2)) { /* adopt the engine's buffer */
    tasks[t].sh = *head;
    *head = NULL;
  } else {
    tasks[t].sh = malloc(hbytes ? hbytes : 1);
    CHECK(tasks[t].sh != NULL);
    if (hbytes)
      memcpy(tasks[t].sh, *head, hbytes);
  }
  tasks[t].st = malloc(tbytes ? tbytes : 1);
  CHECK(tasks[t].st != NULL);
  memcpy(tasks[t].st, tail, tbytes);
  return 0;
}
static void op_finish(void *ctx, int64_t t, int outgoing, int outcome) {
  (void)ctx;
  if (outgoing) {
    if (outcome == MIG__COMMIT) {
      /* As the load-balancing context does: the head to the pool. */
      mig__pool_give(pool, tasks[t].head, spec((int)t).head);
      free(tasks[t].tail);
      tasks[t].head = tasks[t].tail = NULL;
    }
    return;
  }
  if (outcome == MIG__COMMIT) {
    tasks[t].head = tasks[t].sh;
    tasks[t].tail = tasks[t].st;
  } else {
    free(tasks[t].sh);
    free(tasks[t].st);
  }
  tasks[t].sh = tasks[t].st = NULL;
}

static const mig__ops_t ops = {op_size, op_head, op_pack, op_unpack, op_finish,
                               NULL, 0, op_meta, op_announce};

/* Every owned state has its bytes, no staging is left, each task has
 * exactly one owner, and the pool's bookkeeping is consistent. */
static void verify(void) {
  int mine[NTASKS], all[NTASKS];
  for (int t = 0; t < NTASKS; t++) {
    CHECK(tasks[t].sh == NULL && tasks[t].st == NULL);
    mine[t] = tasks[t].head != NULL;
    CHECK_EQ(tasks[t].tail != NULL, mine[t]);
    if (mine[t]) {
      CHECK_EQ(owner[t], me);
      CHECK(same(tasks[t].head, t, spec(t).head, 0));
      CHECK(same(tasks[t].tail, t, spec(t).tail, 1));
    }
  }
  MPI_Allreduce(mine, all, NTASKS, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  for (int t = 0; t < NTASKS; t++)
    CHECK_EQ(all[t], 1);
  size_t held = 0;
  mig__pool_info(pool, &held, NULL, NULL, NULL);
  CHECK_EQ(mig__pool_held(), held);
}

static unsigned long long rng = 987654321;
static int rnd_of(unsigned long long *state, int n) {
  *state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
  return (int)((*state >> 33) % (unsigned long long)n);
}
/* The draw of owners, the same on every rank. */
static int rnd(int n) { return rnd_of(&rng, n); }
/* This rank's own shuffles (a different number of draws per rank). */
static unsigned long long local_rng;

/* Draws new owners (same draw everywhere; every task moves unless np == 1),
 * migrates with the moves in shuffled order, and updates owner[] on
 * success. Returns the engine's code; rounds_range (may be NULL) gets the
 * bounds of the rounds a mem_limit of 1 must take (see below). */
static int remap(size_t mem_limit, mig__stats_t *st, int *rounds_range) {
  mig__move_t moves[NTASKS];
  int n = 0;
  for (int t = 0; t < NTASKS; t++) {
    pending[t] = (owner[t] + 1 + rnd(np - 1)) % np;
    if (owner[t] == me)
      moves[n++] = (mig__move_t){t, pending[t]};
  }
  for (int i = n - 1; i > 0; i--) { /* not in destination order */
    int j = rnd_of(&local_rng, i + 1);
    mig__move_t x = moves[i];
    moves[i] = moves[j];
    moves[j] = x;
  }
  memset(announced, 0, sizeof announced); /* a rollback leaves some set */
  int rc = mig__run(MPI_COMM_WORLD, moves, n, &ops, NULL, mem_limit, pool, st);
  if (rounds_range) {
    /* One task per round, except that an empty state (task 0) adds no
     * bytes and shares the round of the move after it unless it is last in
     * the engine's (unspecified) order within its destination. */
    int lo_hi[2] = {n - (owner[0] == me && n > 1 ? 1 : 0), n}, m[2];
    MPI_Allreduce(lo_hi, m, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    rounds_range[0] = m[0];
    rounds_range[1] = m[1];
  }
  int rc_max = 0, rc_min = 0; /* all or nothing: everyone agrees */
  int ok = rc == 0;
  MPI_Allreduce(&ok, &rc_max, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(&ok, &rc_min, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  CHECK_EQ(rc_max, rc_min);
  if (rc == 0)
    memcpy(owner, pending, sizeof owner);
  return rc;
}

/* Totals of a committed remap: every task moved, bytes sent == received. */
static void check_totals(const mig__stats_t *st) {
  long long v[4] = {st->tasks_sent, st->tasks_received, (long long)st->bytes_sent,
                    (long long)st->bytes_received};
  long long s[4];
  MPI_Allreduce(v, s, 4, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  long long all_bytes = 0;
  for (int t = 0; t < NTASKS; t++)
    all_bytes += (long long)(spec(t).head + spec(t).tail);
  CHECK_EQ(s[0], NTASKS);
  CHECK_EQ(s[1], NTASKS);
  CHECK_EQ(s[2], all_bytes);
  CHECK_EQ(s[3], all_bytes);
  CHECK_EQ(st->failed_rank, -1);
}

/* rta_array_alloc and the pool's huge-page rule, on their own. */
static void test_alloc_and_pool(void) {
  unsigned char *below = rta_array_alloc(MB - 1), *at = rta_array_alloc(MB);
  unsigned char *over = rta_array_alloc(2 * MB + 1);
  CHECK(below != NULL && at != NULL && over != NULL);
  CHECK_EQ((uintptr_t)at % (2 * MB), 0);
  CHECK_EQ((uintptr_t)over % (2 * MB), 0);
  CHECK_GE(malloc_usable_size(at), 2 * MB); /* a whole huge page for 1-2 MiB */
  CHECK_GE(malloc_usable_size(over), 2 * MB + 1);
  fill(at, 1, MB, 0);
  fill(over, 2, 2 * MB + 1, 0);
  fill(below, 3, MB - 1, 0);
  /* An application may realloc such an array (rta.h: free() releases it). */
  unsigned char *grown = realloc(at, 3 * MB);
  CHECK(grown != NULL);
  CHECK(same(grown, 1, MB, 0));
  free(grown);

  mig__pool_t *p = mig__pool_create(8 * MB);
  CHECK(p != NULL);
  size_t held = 0;
  int nb = 0;
  /* Kept: below 1 MiB whatever the alignment, and 2 MiB-aligned blocks. */
  mig__pool_give(p, below, MB - 1);
  mig__pool_give(p, over, 2 * MB + 1);
  mig__pool_info(p, &held, &nb, NULL, NULL);
  CHECK_EQ(nb, 2);
  CHECK_EQ(held, 3 * MB);
  CHECK_EQ(mig__pool_held(), held);
  /* Refused: a plain malloc'ed block of 1 MiB (glibc never aligns it to
   * 2 MiB: its header sits in front of the data); the counts do not move. */
  unsigned char *plain = malloc(MB);
  CHECK(plain != NULL);
  if ((uintptr_t)plain % (2 * MB)) {
    mig__pool_give(p, plain, MB);
    mig__pool_info(p, &held, &nb, NULL, NULL);
    CHECK_EQ(nb, 2);
    CHECK_EQ(held, 3 * MB);
  } else {
    free(plain);
  }
  /* The cached blocks serve takes of their size class, bytes intact. */
  unsigned char *b1 = mig__pool_take(p, 2 * MB);
  CHECK(b1 == over);
  CHECK(same(b1, 2, 2 * MB + 1, 0));
  unsigned char *b2 = mig__pool_take(p, MB - 1);
  CHECK(b2 == below);
  CHECK(same(b2, 3, MB - 1, 0));
  mig__pool_info(p, &held, &nb, NULL, NULL);
  CHECK_EQ(nb, 0);
  CHECK_EQ(held, 0);
  CHECK_EQ(mig__pool_held(), 0);
  free(b1);
  free(b2);
  mig__pool_destroy(p);
}

/* The pool's best fit among large blocks (the smallest of n to 2n bytes,
 * found through its bins per size), and a bound that follows the
 * migrations when the pool was created without one (mig__pool_follow),
 * while an explicit bound stays. */
static void test_pool_fit_and_follow(void) {
  mig__pool_t *p = mig__pool_create(8 * MB);
  CHECK(p != NULL);
  void *b80 = malloc(80 * KB), *b96 = malloc(96 * KB), *b200 = malloc(200 * KB);
  CHECK(b80 && b96 && b200);
  mig__pool_give(p, b200, 200 * KB);
  mig__pool_give(p, b80, 80 * KB);
  mig__pool_give(p, b96, 96 * KB);
  CHECK(mig__pool_take(p, 90 * KB) == b96);
  CHECK(mig__pool_take(p, 70 * KB) == b80);
  void *miss = mig__pool_take(p, 64 * KB); /* 200 KiB is over twice that */
  CHECK(miss != b200);
  CHECK(mig__pool_take(p, 120 * KB) == b200);
  free(miss);
  free(b80);
  free(b96);
  free(b200);
  mig__pool_destroy(p);

  /* Blocks of 8 MiB, 2 MiB aligned, never touched (no pages behind them). */
  enum { NB = 12 };
  size_t held = 0;
  int nb = 0;
  for (int follows = 0; follows < 2; follows++) {
    p = mig__pool_create(follows ? 0 : MIG__MEM_DEFAULT);
    CHECK(p != NULL);
    /* A following bound keeps a quarter more than arrived: NB + NB / 4. */
    mig__pool_follow(p, (size_t)NB * 8 * MB);
    for (int i = 0; i < NB + NB / 4 + 1; i++) {
      void *b = rta_array_alloc(8 * MB);
      CHECK(b != NULL);
      mig__pool_give(p, b, 8 * MB);
    }
    mig__pool_info(p, &held, &nb, NULL, NULL);
    CHECK_EQ(held, follows ? (size_t)(NB + NB / 4) * 8 * MB : MIG__MEM_DEFAULT);
    CHECK_EQ(nb, follows ? NB + NB / 4 : (int)(MIG__MEM_DEFAULT / (8 * MB)));
    /* Smaller migrations: the bound stays while the large one is among the
     * last MIG__POOL_FOLLOW_LAST, then down to the default, oldest first. */
    for (unsigned k = 1; k < MIG__POOL_FOLLOW_LAST; k++)
      mig__pool_follow(p, MB);
    mig__pool_info(p, &held, &nb, NULL, NULL);
    CHECK_EQ(held, follows ? (size_t)(NB + NB / 4) * 8 * MB : MIG__MEM_DEFAULT);
    mig__pool_follow(p, MB);
    mig__pool_info(p, &held, &nb, NULL, NULL);
    CHECK_EQ(held, MIG__MEM_DEFAULT);
    CHECK_EQ(nb, (int)(MIG__MEM_DEFAULT / (8 * MB)));
    CHECK_EQ(mig__pool_held(), held);
    mig__pool_destroy(p);
  }
  CHECK_EQ(mig__pool_held(), 0);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  CHECK_GE(np, 2);
  local_rng = 1000003ULL * (unsigned long long)(me + 1);
  test_alloc_and_pool();
  test_pool_fit_and_follow();
  for (int t = 0; t < NTASKS; t++)
    for (int part = 0; part < 2; part++) {
      size_t n = part ? spec(t).tail : spec(t).head;
      ref[t][part] = malloc(n ? n : 1);
      CHECK(ref[t][part] != NULL);
      fill(ref[t][part], t, n, part);
    }

  for (int t = 0; t < NTASKS; t++) {
    owner[t] = t % np;
    if (owner[t] != me)
      continue;
    spec_t s = spec(t);
    /* Mixed origins, as in applications: malloc and rta_array_alloc. */
    tasks[t].head = (t % 4 == 0) ? rta_array_alloc(s.head) : malloc(s.head ? s.head : 1);
    tasks[t].tail = malloc(s.tail ? s.tail : 1);
    CHECK(tasks[t].head != NULL && tasks[t].tail != NULL);
    fill(tasks[t].head, t, s.head, 0);
    fill(tasks[t].tail, t, s.tail, 1);
  }
  verify();

  mig__stats_t st;
  int rr[2] = {0, 0};
  /* 1. Default bound (one round), then one task per round (mem_limit 1:
   * the per-round budget rounds down to 1 byte), then a bound a few batch
   * parts wide; without a pool, then with one. */
  const size_t limits[3] = {0, 1, (size_t)np * 400 * KB};
  for (int it = 0; it < 6; it++) {
    if (it == 3) {
      pool = mig__pool_create(16 * MB);
      CHECK(pool != NULL);
    }
    size_t lim = limits[it % 3];
    CHECK_EQ(remap(lim, &st, rr), 0);
    check_totals(&st);
    if (lim == 0)
      CHECK_EQ(st.rounds, 1);
    else if (lim == 1) { /* each rank's moves one per round */
      CHECK_GE(st.rounds, rr[0]);
      CHECK_LE(st.rounds, rr[1]);
      CHECK_GE(st.rounds, 8);
    }
    else
      CHECK_GT(st.rounds, 1);
    if (me == 0)
      printf("# remap %d, mem_limit %zu: %d rounds\n", it, lim, st.rounds);
    verify();
  }
  long long all_unpacks = 0;
  MPI_Allreduce(&unpacks_checked, &all_unpacks, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  CHECK_EQ(all_unpacks, 6 * NTASKS);
  long long all_announces = 0; /* every arrival was announced first */
  MPI_Allreduce(&announces, &all_announces, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  CHECK_EQ(all_announces, 6 * NTASKS);

  /* 2. Callback failures after the round's batch datatypes exist (unpack)
   * and in a later round (pack), in tight rounds: everyone rolls back. */
  const int bad = np - 1;
  const int64_t victims[3] = {16, 19, 21}; /* head in a batch: own / batch / batch tail */
  for (int k = 0; k < 3; k++) {
    for (int which = 0; which < 2; which++) {
      unsigned long long save = rng;
      int64_t v = victims[k];
      int dest = -1;
      for (int t = 0; t <= v; t++) /* the draw remap() is about to make */
        dest = (owner[t] + 1 + rnd(np - 1)) % np;
      rng = save;
      int here = which == 0 ? owner[v] == me : dest == me;
      if (here && which == 0)
        fail_pack = v;
      if (here && which == 1)
        fail_unpack = v;
      int rc = remap(k == 0 ? 1 : (size_t)np * 400 * KB, &st, NULL);
      CHECK_NE(rc, 0);
      CHECK_EQ(st.failed_rank, which == 0 ? owner[v] : dest);
      CHECK_EQ(rc, here ? BALLAST_ECALLBACK : BALLAST_EREMOTE);
      CHECK_EQ(st.tasks_sent, 0);
      CHECK_EQ(st.tasks_received, 0);
      fail_pack = fail_unpack = -1;
      rng = save;
      verify();
    }
  }

  /* 3. The n-th allocation fails on one rank, for every n until a remap
   * gets through: each attempt rolls back everywhere with that rank's
   * ENOMEM, nothing is lost or left staged, the pool's count stays right. */
  for (int round_limit = 0; round_limit < 2; round_limit++) {
    size_t lim = round_limit ? (size_t)np * 400 * KB : 0;
    int failures = 0, absorbed = 0;
    for (int n = 1; n < 10000; n++) {
      unsigned long long save = rng;
      if (me == bad)
        mig__fail_alloc_after(n);
      int rc = remap(lim, &st, NULL);
      /* A remap can get through with its n-th allocation failed: the pool's
       * bookkeeping of a block handed back (the pool then frees the block
       * instead of caching it). The sweep is complete once the remap made
       * fewer than n allocations. */
      int more = me == bad && ballast__alloc_count() >= n;
      mig__fail_alloc_after(0);
      MPI_Allreduce(MPI_IN_PLACE, &more, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
      if (rc == 0) {
        check_totals(&st);
        verify();
        if (!more)
          break;
        absorbed++;
        continue;
      }
      failures++;
      CHECK_EQ(st.failed_rank, bad);
      CHECK_EQ(st.failed_code, BALLAST_ENOMEM);
      CHECK_EQ(rc, me == bad ? BALLAST_ENOMEM : BALLAST_EREMOTE);
      rng = save;
      verify();
    }
    CHECK_GT(failures, 2); /* the sweep really hit several allocations */
    if (me == 0)
      printf("# mem_limit %zu: %d allocations failed in turn, each rolled back; "
             "%d more failed harmlessly (the pool's bookkeeping)\n", lim, failures, absorbed);
  }

  /* 4. After all that, plain remaps still work. */
  CHECK_EQ(remap(0, &st, NULL), 0);
  check_totals(&st);
  verify();

  /* 5. Random sizes around the boundaries, new ones each epoch (the owner
   * rebuilds its states), under the four kinds of bound, sometimes with an
   * allocation failing on one rank (then the same remap again). */
  for (epoch = 1; epoch <= 8; epoch++) {
    for (int t = 0; t < NTASKS; t++) {
      spec_t sp = spec(t);
      for (int part = 0; part < 2; part++) {
        size_t n = part ? sp.tail : sp.head;
        free(ref[t][part]);
        ref[t][part] = malloc(n ? n : 1);
        CHECK(ref[t][part] != NULL);
        fill(ref[t][part], t, n, part);
      }
      if (owner[t] != me)
        continue;
      free(tasks[t].head);
      free(tasks[t].tail);
      tasks[t].head = (epoch % 2) ? rta_array_alloc(sp.head) : malloc(sp.head ? sp.head : 1);
      tasks[t].tail = malloc(sp.tail ? sp.tail : 1);
      CHECK(tasks[t].head != NULL && tasks[t].tail != NULL);
      memcpy(tasks[t].head, ref[t][0], sp.head);
      memcpy(tasks[t].tail, ref[t][1], sp.tail);
    }
    const size_t lims[4] = {0, 1, (size_t)np * 300 * KB, (size_t)np * 3 * MB};
    size_t lim = lims[epoch % 4];
    int inject = epoch % 3 == 2;
    unsigned long long save = rng;
    if (inject && me == epoch % np)
      mig__fail_alloc_after(1 + epoch % 5);
    int rc = remap(lim, &st, NULL);
    mig__fail_alloc_after(0);
    if (rc) {
      CHECK(inject);
      CHECK_EQ(st.failed_rank, epoch % np);
      CHECK_EQ(st.failed_code, BALLAST_ENOMEM);
      rng = save;
      verify();
      CHECK_EQ(remap(lim, &st, NULL), 0);
    }
    check_totals(&st);
    verify();
  }

  for (int t = 0; t < NTASKS; t++) {
    free(tasks[t].head);
    free(tasks[t].tail);
  }
  for (int t = 0; t < NTASKS; t++) {
    free(ref[t][0]);
    free(ref[t][1]);
  }
  mig__pool_destroy(pool);
  CHECK_EQ(mig__pool_held(), 0);
  TEST_PASS("lb_migrate_edges");
  MPI_Finalize();
  return 0;
}
