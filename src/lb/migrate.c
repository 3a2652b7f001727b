/* rta's migration engine: bounded-memory transport of task states with an
 * all-or-nothing commit. The protocol is described in migrate.h. */
#include "lb/migrate.h"

#include <ballast/common.h>

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/common_internal.h"
#include "mon/mon_hooks.h"
#include "task/task_internal.h" /* also uthash */

#define MIGRATE_TAG 0x6d67 /* "mg" */
#define DEFAULT_MEM_LIMIT ((size_t)64 << 20)
#define AGG_MAX ((size_t)64 << 10) /* smaller states share one message per peer */
#define BATCH_MAX ((size_t)1 << 20)  /* smaller parts: one datatype message per peer */

static int fail_alloc_countdown; /* test hook; 0 = off */

void rta__migrate_fail_alloc_after(int n) { fail_alloc_countdown = n; }

static int alloc_fails(void) {
  return fail_alloc_countdown > 0 && --fail_alloc_countdown == 0;
}

/* Whether a block of n bytes may be cached: below 1 MiB always; from 1 MiB
 * only when 2 MiB aligned as alloc_large makes it (the application's
 * own malloc'ed arrays are not). A block received into becomes the
 * application's array and is sent from at a later remap, and sending is
 * where page size counts: Open MPI's single-copy path (CMA) has the receiver
 * pin the sender's pages one by one, and a state sent from 4 KiB pages moved
 * at 9-11 GB/s on the 2-core VM against 15-19 GB/s from huge pages. Caching
 * an application's 4 KiB-page array would keep that slow memory in
 * circulation; freeing it and receiving into a fresh huge page costs one
 * fault per 2 MiB once, after which the memory cycles through the pool. */
static int huge_ready(const void *mem, size_t n) {
  return n < RTA__HUGE_BYTES / 2 || ((uintptr_t)mem & (RTA__HUGE_BYTES - 1)) == 0;
}

/* What a cached block of n bytes counts against the bound: a 2 MiB-aligned
 * block of 1-2 MiB holds a whole huge page (alloc_large), so 2 MiB; any
 * other block its n bytes. */
static size_t block_cost(const void *mem, size_t n) {
  return huge_ready(mem, n) && n >= RTA__HUGE_BYTES / 2 ? rta__large_len(n) : n;
}

/* ---- the pool of touched memory ---------------------------------------------
 *
 * Fresh memory is what made migration slower than a plain MPI_Alltoallv of
 * the same bytes (whose buffers are touched already): each remap received
 * into new pages while the states that left were freed. The pool closes the
 * loop: memory of states that left (handed over by the caller at commit)
 * and buffers nobody kept are cached, bounded, and become the next receive
 * and pack buffers. Blocks go out to adopters, who free() them, so every
 * block comes from malloc or posix_memalign. */

/* A cached block. Large blocks (RTA__POOL_MIN and more) serve any request
 * of half their size or more, best fit; small ones (RTA__POOL_SMALL to
 * RTA__POOL_MIN) serve requests of exactly their size, found in O(1) through
 * a bin per size, since a remap of many small tasks takes and gives
 * thousands. Both classes are lists in the order blocks came in; the oldest
 * block of either goes first when the bound is reached. */
typedef struct block {
  void *mem;
  size_t len;                  /* serves requests of len / 2 to len (large) */
  size_t cost;                 /* counted against the bound (block_cost) */
  unsigned long long seq;      /* arrival order */
  struct block *prev, *next;   /* its class's list, oldest first */
  struct block *bprev, *bnext; /* small: its bin's stack */
} block_t;

typedef struct {
  size_t len;
  block_t *top;
  UT_hash_handle hh;
} bin_t;

enum { SMALL = 0, LARGE = 1 };

struct rta__mig_pool {
  size_t cap, bytes;
  block_t *old[2], *young[2]; /* per class */
  int n;
  bin_t *bins;                /* small blocks by size (uthash) */
  unsigned long long seq;
  long long hits, misses;
};

static size_t held_total; /* bytes in every pool (rta__mig_pool_held) */

size_t rta__mig_pool_held(void) { return held_total; }

rta__mig_pool_t *rta__mig_pool_create(size_t cap) {
  rta__mig_pool_t *p = ballast__calloc(1, sizeof *p);
  if (p)
    p->cap = cap ? cap : DEFAULT_MEM_LIMIT;
  return p;
}

static int class_of(size_t len) { return len >= RTA__POOL_MIN ? LARGE : SMALL; }

/* Unlinks b from its lists (the caller frees or hands out b->mem). */
static void pool_unlink(rta__mig_pool_t *p, block_t *b) {
  int k = class_of(b->len);
  if (b->prev)
    b->prev->next = b->next;
  else
    p->old[k] = b->next;
  if (b->next)
    b->next->prev = b->prev;
  else
    p->young[k] = b->prev;
  if (k == SMALL) {
    bin_t *bin = NULL;
    HASH_FIND(hh, p->bins, &b->len, sizeof b->len, bin);
    if (b->bprev)
      b->bprev->bnext = b->bnext;
    else if (bin)
      bin->top = b->bnext;
    if (b->bnext)
      b->bnext->bprev = b->bprev;
    if (bin && !bin->top) { /* no empty bins: their number stays bounded */
      HASH_DEL(p->bins, bin);
      free(bin);
    }
  }
  p->bytes -= b->cost;
  held_total -= b->cost;
  p->n--;
}

void rta__mig_pool_destroy(rta__mig_pool_t *p) {
  if (!p)
    return;
  for (int k = 0; k < 2; k++)
    while (p->old[k]) {
      block_t *b = p->old[k];
      pool_unlink(p, b);
      free(b->mem);
      free(b);
    }
  bin_t *bin, *tmp;
  HASH_ITER(hh, p->bins, bin, tmp) {
    HASH_DEL(p->bins, bin);
    free(bin);
  }
  free(p);
}

void *rta__mig_pool_take(rta__mig_pool_t *p, size_t n) {
  return rta__mig_pool_take_len(p, n, NULL);
}

void *rta__mig_pool_take_len(rta__mig_pool_t *p, size_t n, size_t *len) {
  if (len)
    *len = n;
  if (alloc_fails())
    return NULL;
  if (p && n >= RTA__POOL_SMALL) {
    block_t *best = NULL;
    if (class_of(n) == LARGE) {
      for (block_t *b = p->old[LARGE]; b; b = b->next)
        if (b->len >= n && b->len / 2 <= n && (!best || b->len < best->len))
          best = b;
    } else {
      bin_t *bin = NULL;
      HASH_FIND(hh, p->bins, &n, sizeof n, bin);
      best = bin ? bin->top : NULL;
    }
    if (best) {
      void *mem = best->mem;
      if (len)
        *len = best->len;
      pool_unlink(p, best);
      free(best);
      p->hits++;
      return mem;
    }
    p->misses++;
  }
  void *mem = rta__alloc_large(n);
  if (len && mem)
    *len = rta__large_len(n);
  return mem;
}

void rta__mig_pool_give(rta__mig_pool_t *p, void *mem, size_t n) {
  if (!mem)
    return;
  size_t cost = block_cost(mem, n);
  if (!p || n < RTA__POOL_SMALL || cost > p->cap || !huge_ready(mem, n)) {
    free(mem);
    return;
  }
  while (p->bytes + cost > p->cap) {
    block_t *o = p->old[SMALL], *l = p->old[LARGE];
    block_t *v = !o ? l : !l ? o : (o->seq < l->seq ? o : l);
    pool_unlink(p, v);
    free(v->mem);
    free(v);
  }
  block_t *b = ballast__calloc(1, sizeof *b);
  bin_t *bin = NULL;
  int k = class_of(n);
  if (b && k == SMALL) {
    HASH_FIND(hh, p->bins, &n, sizeof n, bin);
    if (!bin && (bin = ballast__calloc(1, sizeof *bin))) {
      bin->len = n;
      HASH_ADD(hh, p->bins, len, sizeof bin->len, bin);
    }
  }
  if (!b || (k == SMALL && !bin)) {
    free(b);
    free(mem);
    return;
  }
  b->mem = mem;
  b->len = n;
  b->cost = cost;
  b->seq = p->seq++;
  b->prev = p->young[k];
  if (p->young[k])
    p->young[k]->next = b;
  else
    p->old[k] = b;
  p->young[k] = b;
  if (bin) {
    b->bnext = bin->top;
    if (bin->top)
      bin->top->bprev = b;
    bin->top = b;
  }
  p->n++;
  p->bytes += cost;
  held_total += cost;
}

void rta__mig_pool_info(const rta__mig_pool_t *p, size_t *bytes, int *blocks,
                        long long *hits, long long *misses) {
  if (bytes)
    *bytes = p ? p->bytes : 0;
  if (blocks)
    *blocks = p ? p->n : 0;
  if (hits)
    *hits = p ? p->hits : 0;
  if (misses)
    *misses = p ? p->misses : 0;
}

/* ---- the engine ------------------------------------------------------------- */

typedef struct {
  int64_t task, head, tail, round;
} header_t;
#define HDR_WORDS 4

typedef struct {
  int64_t task;
  int peer;
  size_t head, tail; /* bytes of the two parts */
  int round;
  void *hbuf;        /* incoming large: the head's receive buffer */
  void *tbuf;        /* outgoing large: pack buffer; incoming large: tail */
  size_t hcap, tcap; /* bytes the pool block behind hbuf / tbuf holds */
  const void *hsend; /* outgoing large: the head, sent from the caller's memory */
  int staged;        /* incoming: unpack succeeded */
  size_t off;        /* small states: offset in the peer's aggregate */
} item_t;


/* Small states (known to both sides from the headers) share one message per
 * peer and round: head and tail, each padded to 8 bytes. So do the small
 * tails of larger states (callback bytes and array headers next to a large
 * array), which saves a message per state. */
static int is_small(const item_t *x) { return x->head + x->tail < AGG_MAX; }
static int tail_in_agg(const item_t *x) {
  return !is_small(x) && x->tail > 0 && x->tail < AGG_MAX;
}
static int in_agg(const item_t *x) { return is_small(x) || tail_in_agg(x); }
/* The parts of larger states that are below BATCH_MAX travel, per peer and
 * round, as one message described by an hindexed datatype over their own
 * memory (heads straight from the caller's memory into the buffers the
 * destination keeps, as before). On the 2-core VM, 128 parts of 64 KiB went
 * over Open MPI's shared memory in 1.0 ms that way, against 2.3 ms as 128
 * messages and 1.3-1.7 ms as one contiguous message; from 1 MiB separate
 * messages are as fast or faster (single copy, no pipeline), so those keep
 * their own. */
static int head_in_batch(const item_t *x) {
  return !is_small(x) && x->head > 0 && x->head < BATCH_MAX;
}
static int tail_in_batch(const item_t *x) {
  return !is_small(x) && !tail_in_agg(x) && x->tail > 0 && x->tail < BATCH_MAX;
}

/* Builds, for each peer of items v[lo, hi) (grouped by peer), the datatype
 * of its batch in round r: the parts in item order, sent from hsend/tbuf
 * (send) or received into hbuf/tbuf. disp and len hold 2 (hi - lo) entries.
 * type[p] stays MPI_DATATYPE_NULL for a peer with no batch part; bytes[p]
 * (when bytes is not NULL) receives the batch's size. */
static int build_batches(const item_t *v, int lo, int hi, int r, int send,
                         MPI_Aint *disp, int *len, MPI_Datatype *type,
                         size_t *bytes) {
  int i = lo;
  while (i < hi) {
    int p = v[i].peer, k = 0;
    size_t total = 0;
    for (; i < hi && v[i].peer == p; i++) {
      const item_t *x = &v[i];
      if (x->round != r)
        continue;
      if (head_in_batch(x)) {
        MPI_Get_address(send ? x->hsend : x->hbuf, &disp[k]);
        len[k++] = (int)x->head;
        total += x->head;
      }
      if (tail_in_batch(x)) {
        MPI_Get_address(x->tbuf, &disp[k]);
        len[k++] = (int)x->tail;
        total += x->tail;
      }
    }
    if (k == 0)
      continue;
    if (MPI_Type_create_hindexed(k, len, disp, MPI_BYTE, &type[p]) != MPI_SUCCESS) {
      type[p] = MPI_DATATYPE_NULL; /* undefined after a failure */
      return BALLAST_EMPI;
    }
    if (MPI_Type_commit(&type[p]) != MPI_SUCCESS)
      return BALLAST_EMPI; /* a valid handle: free_types frees it */
    if (bytes)
      bytes[p] = total;
  }
  return 0;
}

static void free_types(MPI_Datatype *type, int n) {
  for (int p = 0; type && p < n; p++)
    if (type[p] != MPI_DATATYPE_NULL)
      MPI_Type_free(&type[p]);
}
static size_t agg_bytes(const item_t *x) {
  return is_small(x) ? ballast__round8(x->head) + ballast__round8(x->tail) : ballast__round8(x->tail);
}

static int cmp_by_peer(const void *a, const void *b) {
  const item_t *x = a, *y = b;
  if (x->peer != y->peer)
    return x->peer < y->peer ? -1 : 1;
  return 0;
}

static const unsigned char no_tail[8]; /* what unpack sees as an empty tail */

int rta__migrate(MPI_Comm comm, const rta__move_t *moves, int nmoves,
                 const rta__migrate_ops_t *ops, void *ctx, size_t mem_limit,
                 rta__mig_pool_t *pool, rta__migrate_stats_t *stats) {
  rta__migrate_stats_t st;
  memset(&st, 0, sizeof st);
  st.failed_rank = -1;
  double t0 = MPI_Wtime();
  int rank, nprocs;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &nprocs);
  if (mem_limit == 0)
    mem_limit = DEFAULT_MEM_LIMIT;
  size_t budget = mem_limit / (size_t)nprocs;
  if (budget == 0)
    budget = 1;
  /* An aggregate or a batch of one round must count its bytes in an int. */
  if (budget > (size_t)INT_MAX / 2)
    budget = (size_t)INT_MAX / 2;

  ballast__lib_begin();
  int err = 0, who = -1, code = 0;
  item_t *out = NULL, *in = NULL;
  header_t *sh = NULL, *rh = NULL;
  int *scount = NULL, *rcount = NULL, *sdisp = NULL, *rdisp = NULL;
  MPI_Request *reqs = NULL;
  MPI_Status *sts = NULL;
  unsigned char **sagg = NULL, **ragg = NULL; /* per peer, one round */
  size_t *slen = NULL, *rlen = NULL, *scap = NULL, *rcap = NULL;
  MPI_Datatype *stype = NULL, *rtype = NULL; /* per peer, one round's batch */
  size_t *rbat = NULL; /* per peer, bytes of this round's incoming batch */
  MPI_Aint *bdisp = NULL;
  int *blen = NULL;
  int *rslot = NULL;
  int nin = 0, nrounds = 0;

  /* Everything sized by the communicator or by this rank's moves is
   * allocated now, so one agreement covers it with the sizes (fewer
   * collectives: each costs a scheduling round trip on a loaded machine). */
  scount = ballast__calloc((size_t)nprocs, sizeof *scount);
  rcount = ballast__calloc((size_t)nprocs, sizeof *rcount);
  sdisp = ballast__calloc((size_t)nprocs, sizeof *sdisp);
  rdisp = ballast__calloc((size_t)nprocs, sizeof *rdisp);
  sh = ballast__malloc(sizeof *sh * (size_t)(nmoves > 0 ? nmoves : 1));
  sagg = ballast__calloc((size_t)nprocs, sizeof *sagg);
  ragg = ballast__calloc((size_t)nprocs, sizeof *ragg);
  slen = ballast__calloc((size_t)nprocs, sizeof *slen);
  rlen = ballast__calloc((size_t)nprocs, sizeof *rlen);
  scap = ballast__calloc((size_t)nprocs, sizeof *scap);
  rcap = ballast__calloc((size_t)nprocs, sizeof *rcap);
  stype = ballast__malloc(sizeof *stype * (size_t)nprocs);
  rtype = ballast__malloc(sizeof *rtype * (size_t)nprocs);
  rbat = ballast__calloc((size_t)nprocs, sizeof *rbat);
  /* Each on its own: the failure path frees whichever array exists. */
  for (int p = 0; stype && p < nprocs; p++)
    stype[p] = MPI_DATATYPE_NULL;
  for (int p = 0; rtype && p < nprocs; p++)
    rtype[p] = MPI_DATATYPE_NULL;
  if (!scount || !rcount || !sdisp || !rdisp || !sh || !sagg || !ragg || !slen ||
      !rlen || !scap || !rcap || !stype || !rtype || !rbat)
    err = BALLAST_ENOMEM;

  /* 1. Validate and size every outgoing state. A local problem is recorded
   * and the rank still takes part in the agreement below. */
  if (nmoves < 0 || (nmoves > 0 && !moves) || !ops || !ops->size ||
      !ops->head || !ops->pack || !ops->unpack || !ops->finish)
    err = BALLAST_EINVAL;
  if (!err && nmoves > 0) {
    out = ballast__calloc((size_t)nmoves, sizeof *out);
    if (!out)
      err = BALLAST_ENOMEM;
  }
  for (int i = 0; !err && i < nmoves; i++) {
    if (moves[i].dest < 0 || moves[i].dest >= nprocs || moves[i].dest == rank) {
      BALLAST_WARN("migration: task %lld has destination %d (comm size %d, own rank %d)",
                   (long long)moves[i].task, moves[i].dest, nprocs, rank);
      err = BALLAST_EINVAL;
      break;
    }
    out[i].task = moves[i].task;
    out[i].peer = moves[i].dest;
    int rc = ops->size(ctx, moves[i].task, &out[i].head, &out[i].tail);
    if (rc < 0) {
      BALLAST_WARN("migration: size callback of task %lld failed: %s",
                   (long long)moves[i].task, ballast_strerror(rc));
      err = BALLAST_ECALLBACK;
    } else if (out[i].head > (size_t)INT_MAX || out[i].tail > (size_t)INT_MAX) {
      /* One MPI message per part, counted in bytes as an int. */
      BALLAST_WARN("migration: task %lld has %zu + %zu bytes of state, more than "
                   "the %d one message can carry", (long long)moves[i].task,
                   out[i].head, out[i].tail, INT_MAX);
      err = BALLAST_ETOOBIG;
    }
  }
  if (ballast__agree(comm, err, &who, &code))
    goto done;

  /* 2. Rounds: greedy over the moves in destination order, each round packing
   * at most `budget` bytes (and at least one task). */
  if (nmoves > 0)
    qsort(out, (size_t)nmoves, sizeof *out, cmp_by_peer);
  {
    size_t acc = 0;
    int r = 0;
    for (int i = 0; i < nmoves; i++) {
      /* padded as in an aggregate, so no message of a round exceeds it */
      size_t b = ballast__round8(out[i].head) + ballast__round8(out[i].tail);
      if (acc > 0 && acc + b > budget) {
        r++;
        acc = 0;
      }
      out[i].round = r;
      acc += b;
    }
  }

  /* 3. Headers, counts first. */
  for (int i = 0; i < nmoves; i++) {
    scount[out[i].peer] += HDR_WORDS;
    sh[i].task = out[i].task;
    sh[i].head = (int64_t)out[i].head;
    sh[i].tail = (int64_t)out[i].tail;
    sh[i].round = out[i].round;
  }
  if (MPI_Alltoall(scount, 1, MPI_INT, rcount, 1, MPI_INT, comm) != MPI_SUCCESS)
    err = BALLAST_EMPI;
  long long total_in = 0;
  for (int p = 0; p < nprocs; p++) {
    sdisp[p] = p ? sdisp[p - 1] + scount[p - 1] : 0;
    rdisp[p] = p ? rdisp[p - 1] + rcount[p - 1] : 0;
    total_in += rcount[p];
  }
  nin = (int)(total_in / HDR_WORDS);
  /* Requests per round: at most two per state (head, tail) when each part is
   * a message of its own; an aggregate or a batch replaces at least one such
   * part, so the two per peer below are slack. */
  size_t nreq_max = 2 * (size_t)nmoves + 2 * (size_t)nin + 2 * (size_t)nprocs + 1;
  rh = ballast__malloc(sizeof *rh * (size_t)(nin > 0 ? nin : 1));
  in = ballast__calloc((size_t)(nin > 0 ? nin : 1), sizeof *in);
  rslot = ballast__malloc(sizeof *rslot * nreq_max);
  reqs = ballast__malloc(sizeof *reqs * nreq_max);
  sts = ballast__malloc(sizeof *sts * nreq_max);
  size_t nparts = 2 * (size_t)(nmoves > nin ? nmoves : nin) + 1;
  bdisp = ballast__malloc(sizeof *bdisp * nparts);
  blen = ballast__malloc(sizeof *blen * nparts);
  if (!rh || !in || !rslot || !reqs || !sts || !bdisp || !blen)
    err = BALLAST_ENOMEM;
  if (ballast__agree(comm, err, &who, &code))
    goto done;
  if (MPI_Alltoallv(sh, scount, sdisp, MPI_INT64_T, rh, rcount, rdisp,
                    MPI_INT64_T, comm) != MPI_SUCCESS)
    err = BALLAST_EMPI;
  {
    int k = 0;
    for (int p = 0; p < nprocs; p++)
      for (int j = 0; j < rcount[p] / HDR_WORDS; j++, k++) {
        in[k].task = rh[k].task;
        in[k].peer = p;
        in[k].head = (size_t)rh[k].head;
        in[k].tail = (size_t)rh[k].tail;
        in[k].round = (int)rh[k].round;
      }
  }
  int myrounds = 0;
  for (int i = 0; i < nmoves; i++)
    if (out[i].round + 1 > myrounds)
      myrounds = out[i].round + 1;
  for (int i = 0; i < nin; i++)
    if (in[i].round + 1 > myrounds)
      myrounds = in[i].round + 1;
  if (MPI_Allreduce(&myrounds, &nrounds, 1, MPI_INT, MPI_MAX, comm) != MPI_SUCCESS)
    err = BALLAST_EMPI;
  if (ballast__agree(comm, err, &who, &code))
    goto done;

  /* 4. Rounds: allocate and pack, agree, transfer, unpack. The agreement
   * before any byte moves means a failed allocation or pack stops every rank
   * at the same round, with no message left in flight.
   * Per peer and round there is at most one aggregate (small states whole,
   * head and tail side by side, and the small tails of larger states), one
   * batch (heads and tails of 64 KiB to 1 MiB, an hindexed datatype over
   * their own memory), and a message for each part of 1 MiB or more. So a
   * remap of thousands of small tasks costs a few messages, not thousands of
   * requests, and no head is copied unless its state is small. Both sides
   * post a peer's messages of one kind in header order, which MPI's ordering
   * of matching messages preserves. */
  int oi = 0; /* first outgoing item of the current round */
  for (int r = 0; r < nrounds; r++) {
    int oend = oi;
    while (oend < nmoves && out[oend].round == r)
      oend++;
    memset(slen, 0, sizeof *slen * (size_t)nprocs);
    memset(rlen, 0, sizeof *rlen * (size_t)nprocs);
    memset(rbat, 0, sizeof *rbat * (size_t)nprocs);
    /* Incoming items are grouped by source, each source's rounds ascending:
     * select this round's items wherever they are. */
    for (int i = 0; i < nin && !err; i++) {
      if (in[i].round != r)
        continue;
      if (in_agg(&in[i])) {
        in[i].off = rlen[in[i].peer];
        rlen[in[i].peer] += agg_bytes(&in[i]);
      }
      if (is_small(&in[i]))
        continue;
      if (in[i].head > 0 && !(in[i].hbuf = rta__mig_pool_take_len(pool, in[i].head, &in[i].hcap)))
        err = BALLAST_ENOMEM;
      if (!err && in[i].tail > 0 && !tail_in_agg(&in[i]) &&
          !(in[i].tbuf = rta__mig_pool_take_len(pool, in[i].tail, &in[i].tcap)))
        err = BALLAST_ENOMEM;
      if (err)
        BALLAST_WARN("migration: cannot allocate %zu bytes for task %lld from rank %d",
                     in[i].head + in[i].tail, (long long)in[i].task, in[i].peer);
    }
    for (int p = 0; p < nprocs && !err; p++)
      if (rlen[p] > 0 && !(ragg[p] = rta__mig_pool_take_len(pool, rlen[p], &rcap[p])))
        err = BALLAST_ENOMEM;
    for (int i = oi; i < oend; i++)
      if (in_agg(&out[i])) {
        out[i].off = slen[out[i].peer];
        slen[out[i].peer] += agg_bytes(&out[i]);
      }
    for (int p = 0; p < nprocs && !err; p++)
      if (slen[p] > 0 && !(sagg[p] = rta__mig_pool_take_len(pool, slen[p], &scap[p])))
        err = BALLAST_ENOMEM;
    for (int i = oi; i < oend && !err; i++) {
      item_t *x = &out[i];
      int small = is_small(x);
      unsigned char *agg = in_agg(x) ? sagg[x->peer] + x->off : NULL;
      if (x->head > 0) {
        const void *ptr = NULL;
        int rc = ops->head(ctx, x->task, &ptr);
        if (rc < 0 || !ptr) {
          BALLAST_WARN("migration: no head for task %lld", (long long)x->task);
          err = rc < 0 ? rc : BALLAST_EINVAL;
          break;
        }
        if (small) {
          memcpy(agg, ptr, x->head);
          memset(agg + x->head, 0, ballast__round8(x->head) - x->head);
        } else {
          x->hsend = ptr;
        }
      }
      if (x->tail == 0)
        continue;
      void *dst = small ? agg + ballast__round8(x->head) : agg; /* NULL: own message */
      if (!dst && !(dst = x->tbuf = rta__mig_pool_take_len(pool, x->tail, &x->tcap))) {
        BALLAST_WARN("migration: cannot allocate %zu bytes to pack task %lld",
                     x->tail, (long long)x->task);
        err = BALLAST_ENOMEM;
        break;
      }
      int rc = ops->pack(ctx, x->task, dst, x->tail);
      if (rc < 0) {
        BALLAST_WARN("migration: pack callback of task %lld failed: %s",
                     (long long)x->task, ballast_strerror(rc));
        err = rc == BALLAST_ESIZE ? BALLAST_ESIZE : BALLAST_ECALLBACK;
        break;
      }
      if (in_agg(x))
        memset((unsigned char *)dst + x->tail, 0, ballast__round8(x->tail) - x->tail);
    }
    if (!err)
      err = build_batches(out, oi, oend, r, 1, bdisp, blen, stype, NULL);
    if (!err)
      err = build_batches(in, 0, nin, r, 0, bdisp, blen, rtype, rbat);
    if (ballast__agree(comm, err, &who, &code))
      goto done;
    /* Receives first (aggregates, batches, then single parts), then sends.
     * rslot[k] says what request k receives: -1-p for peer p's aggregate,
     * -1-nprocs-p for its batch, 2i for the head of incoming item i, 2i+1
     * for its tail. */
    int nreq = 0, nrecv = 0;
    for (int p = 0; p < nprocs; p++) {
      if (rlen[p] > 0) {
        rslot[nreq] = -1 - p;
        MPI_Irecv(ragg[p], (int)rlen[p], MPI_BYTE, p, MIGRATE_TAG + 1, comm,
                  &reqs[nreq++]);
      }
      if (rtype[p] != MPI_DATATYPE_NULL) {
        rslot[nreq] = -1 - nprocs - p;
        MPI_Irecv(MPI_BOTTOM, 1, rtype[p], p, MIGRATE_TAG + 3, comm, &reqs[nreq++]);
      }
    }
    for (int i = 0; i < nin; i++) {
      if (in[i].round != r || is_small(&in[i]))
        continue;
      if (in[i].head > 0 && !head_in_batch(&in[i])) {
        rslot[nreq] = 2 * i;
        MPI_Irecv(in[i].hbuf, (int)in[i].head, MPI_BYTE, in[i].peer, MIGRATE_TAG,
                  comm, &reqs[nreq++]);
      }
      if (in[i].tail > 0 && !tail_in_agg(&in[i]) && !tail_in_batch(&in[i])) {
        rslot[nreq] = 2 * i + 1;
        MPI_Irecv(in[i].tbuf, (int)in[i].tail, MPI_BYTE, in[i].peer,
                  MIGRATE_TAG + 2, comm, &reqs[nreq++]);
      }
    }
    nrecv = nreq;
    for (int p = 0; p < nprocs; p++) {
      if (slen[p] > 0)
        MPI_Isend(sagg[p], (int)slen[p], MPI_BYTE, p, MIGRATE_TAG + 1, comm,
                  &reqs[nreq++]);
      if (stype[p] != MPI_DATATYPE_NULL)
        MPI_Isend(MPI_BOTTOM, 1, stype[p], p, MIGRATE_TAG + 3, comm, &reqs[nreq++]);
    }
    for (int i = oi; i < oend; i++) {
      if (is_small(&out[i]))
        continue;
      if (out[i].head > 0 && !head_in_batch(&out[i]))
        MPI_Isend(out[i].hsend, (int)out[i].head, MPI_BYTE, out[i].peer,
                  MIGRATE_TAG, comm, &reqs[nreq++]);
      if (out[i].tail > 0 && !tail_in_agg(&out[i]) && !tail_in_batch(&out[i]))
        MPI_Isend(out[i].tbuf, (int)out[i].tail, MPI_BYTE, out[i].peer,
                  MIGRATE_TAG + 2, comm, &reqs[nreq++]);
    }
    if (MPI_Waitall(nreq, reqs, sts) != MPI_SUCCESS)
      err = BALLAST_EMPI;
    for (int k = 0; k < nrecv && !err; k++) {
      int s = rslot[k], got = -1;
      if (s < -nprocs) {
        /* A batch is counted in its own datatype (MPI_UNDEFINED when short). */
        int p = -1 - nprocs - s;
        MPI_Get_count(&sts[k], rtype[p], &got);
        if (got != 1) {
          BALLAST_WARN("migration: the batch from rank %d is not the %zu bytes "
                       "announced", p, rbat[p]);
          err = BALLAST_ESIZE;
        }
        continue;
      }
      MPI_Get_count(&sts[k], MPI_BYTE, &got);
      size_t want = s < 0 ? rlen[-1 - s] : (s % 2 ? in[s / 2].tail : in[s / 2].head);
      if ((size_t)got != want) {
        BALLAST_WARN("migration: %d bytes received from rank %d, %zu announced",
                     got, sts[k].MPI_SOURCE, want);
        err = BALLAST_ESIZE;
      }
    }
    for (int i = 0; i < nin; i++) {
      item_t *x = &in[i];
      if (x->round != r || err)
        continue;
      const unsigned char *tail =
          tail_in_agg(x) ? ragg[x->peer] + x->off : (const unsigned char *)x->tbuf;
      if (is_small(x)) {
        const unsigned char *agg = ragg[x->peer] + x->off;
        /* The caller may keep the head: hand it a buffer of its own. */
        if (x->head > 0) {
          if (!(x->hbuf = rta__mig_pool_take_len(pool, x->head, &x->hcap))) {
            err = BALLAST_ENOMEM;
            continue;
          }
          memcpy(x->hbuf, agg, x->head);
        }
        tail = agg + ballast__round8(x->head);
      }
      if (x->tail == 0)
        tail = no_tail;
      int rc = ops->unpack(ctx, x->task, x->peer, &x->hbuf, x->head, tail, x->tail);
      if (rc < 0) {
        BALLAST_WARN("migration: unpack of task %lld from rank %d failed: %s",
                     (long long)x->task, x->peer, ballast_strerror(rc));
        err = rc == BALLAST_ESIZE ? BALLAST_ESIZE : BALLAST_ECALLBACK;
      } else {
        x->staged = 1;
        st.tasks_received++;
        st.bytes_received += x->head + x->tail;
      }
      rta__mig_pool_give(pool, x->hbuf, x->hcap);
      rta__mig_pool_give(pool, x->tbuf, x->tcap);
      x->hbuf = x->tbuf = NULL;
    }
    for (int i = 0; i < nin; i++)
      if (in[i].round == r) {
        rta__mig_pool_give(pool, in[i].hbuf, in[i].hcap);
        rta__mig_pool_give(pool, in[i].tbuf, in[i].tcap);
        in[i].hbuf = in[i].tbuf = NULL;
      }
    for (int p = 0; p < nprocs; p++) {
      rta__mig_pool_give(pool, sagg[p], scap[p]);
      rta__mig_pool_give(pool, ragg[p], rcap[p]);
      sagg[p] = ragg[p] = NULL;
    }
    free_types(stype, nprocs);
    free_types(rtype, nprocs);
    for (int i = oi; i < oend; i++) {
      rta__mig_pool_give(pool, out[i].tbuf, out[i].tcap);
      out[i].tbuf = NULL;
      st.tasks_sent++;
      st.bytes_sent += out[i].head + out[i].tail;
    }
    oi = oend;
    st.rounds++;
  }
  ballast__agree(comm, err, &who, &code);

done:
  /* 5. Commit everywhere or roll back everywhere. */
  {
    int outcome = (who < 0) ? RTA__COMMIT : RTA__ROLLBACK;
    if (ops && ops->finish) {
      for (int i = 0; i < nmoves && out; i++)
        ops->finish(ctx, out[i].task, 1, outcome);
      for (int i = 0; i < nin && in; i++)
        if (in[i].staged)
          ops->finish(ctx, in[i].task, 0, outcome);
    }
    for (int i = 0; i < nmoves && out; i++)
      rta__mig_pool_give(pool, out[i].tbuf, out[i].tcap);
    for (int i = 0; i < nin && in; i++) {
      rta__mig_pool_give(pool, in[i].hbuf, in[i].hcap);
      rta__mig_pool_give(pool, in[i].tbuf, in[i].tcap);
    }
  }
  free(out);
  free(in);
  free(sh);
  free(rh);
  free(scount);
  free(rcount);
  free(sdisp);
  free(rdisp);
  free(reqs);
  free(sts);
  for (int p = 0; p < nprocs; p++) {
    if (sagg)
      rta__mig_pool_give(pool, sagg[p], scap ? scap[p] : 0);
    if (ragg)
      rta__mig_pool_give(pool, ragg[p], rcap ? rcap[p] : 0);
  }
  free(sagg);
  free(ragg);
  free(slen);
  free(rlen);
  free(scap);
  free(rcap);
  free_types(stype, nprocs);
  free_types(rtype, nprocs);
  free(stype);
  free(rtype);
  free(rbat);
  free(bdisp);
  free(blen);
  free(rslot);
  ballast__lib_end();
  st.failed_rank = who;
  st.failed_code = code;
  st.seconds = MPI_Wtime() - t0;
  if (who >= 0) {
    st.tasks_sent = st.tasks_received = 0;
    st.bytes_sent = st.bytes_received = 0;
    if (who == rank)
      BALLAST_WARN("migration rolled back: this rank failed with %s",
                   ballast_err_name(code));
  }
  if (stats)
    *stats = st;
  if (who < 0)
    return 0;
  return who == rank ? code : BALLAST_EREMOTE;
}
