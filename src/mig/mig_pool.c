/* The migration engine's pool of touched memory (mig_pool.h).
 *
 * Fresh memory is what made migration slower than a plain MPI_Alltoallv of
 * the same bytes (whose buffers are touched already): each remap received
 * into new pages while the states that left were freed. The pool closes the
 * loop: memory of states that left (handed over by the caller at commit)
 * and buffers nobody kept are cached, bounded, and become the next receive
 * and pack buffers. Blocks go out to adopters, who free() them, so every
 * block comes from malloc or posix_memalign. */
#include "mig/mig_pool.h"

#include <stdint.h>
#include <stdlib.h>

#include <uthash.h>

#include "common/common_internal.h"

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
  return n < BALLAST__HUGE_BYTES / 2 || ((uintptr_t)mem & (BALLAST__HUGE_BYTES - 1)) == 0;
}

/* What a cached block of n bytes counts against the bound: a 2 MiB-aligned
 * block of 1-2 MiB holds a whole huge page (alloc_large), so 2 MiB; any
 * other block its n bytes. */
static size_t block_cost(const void *mem, size_t n) {
  return huge_ready(mem, n) && n >= BALLAST__HUGE_BYTES / 2 ? ballast__large_len(n) : n;
}

/* A cached block. Large blocks (MIG__POOL_MIN and more) serve any request
 * of half their size or more, best fit; small ones (MIG__POOL_SMALL to
 * MIG__POOL_MIN) serve requests of exactly their size. Every block sits in
 * a bin per size (uthash), so a take finds an exact fit in O(1) and a
 * large take's best fit in one pass over the distinct sizes, not over the
 * blocks: a remap of 4,096 states of 64 KiB caches thousands of large
 * blocks, and a scan of all of them per take cost 12 us per state moved
 * (bench_lb_migrate, 4,096 x 64 KiB, the pack phase). Both classes are
 * also lists in the order blocks came in; the oldest block of either goes
 * first when the bound is reached. */
typedef struct block {
  void *mem;
  size_t len;                  /* serves requests of len / 2 to len (large) */
  size_t cost;                 /* counted against the bound (block_cost) */
  unsigned long long seq;      /* arrival order */
  struct block *prev, *next;   /* its class's list, oldest first */
  struct block *bprev, *bnext; /* its bin's stack; bnext: the spare list */
  struct bin *bin;             /* its bin: no lookup to unlink it */
} block_t;

typedef struct bin {
  size_t len;
  block_t *top;
  UT_hash_handle hh;
} bin_t;

enum { SMALL = 0, LARGE = 1 };

struct mig__pool {
  size_t cap, bytes;
  int follows;                /* created with cap 0: the bound follows arrivals */
  size_t recent[MIG__POOL_FOLLOW_LAST]; /* the last migrations' arrivals */
  unsigned nrecent;
  block_t *old[2], *young[2]; /* per class */
  int n;
  bin_t *bins;                /* blocks by size (uthash) */
  bin_t *last;                /* the bin of the last give: most share one size */
  block_t *spare;             /* records of blocks gone out, for the next gives:
                               * a remap gives and takes thousands of small
                               * blocks, each record a malloc and a free */
  unsigned long long seq;
  long long hits, misses;
  /* The transport of batch-sized heads (mig__pool_transport): the last
   * ns per byte each measured, and the choice count when it did (0: never). */
  double ns_per_byte[2];
  unsigned long long measured[2], choices;
};

static size_t held_total; /* bytes in every pool (mig__pool_held) */

size_t mig__pool_held(void) { return held_total; }

mig__pool_t *mig__pool_create(size_t cap) {
  mig__pool_t *p = ballast__calloc(1, sizeof *p);
  if (p) {
    p->cap = cap ? cap : MIG__MEM_DEFAULT;
    p->follows = cap == 0;
  }
  return p;
}

static int class_of(size_t len) { return len >= MIG__POOL_MIN ? LARGE : SMALL; }

/* Unlinks b from its lists (the caller frees or hands out b->mem). */
static void pool_unlink(mig__pool_t *p, block_t *b) {
  int k = class_of(b->len);
  if (b->prev)
    b->prev->next = b->next;
  else
    p->old[k] = b->next;
  if (b->next)
    b->next->prev = b->prev;
  else
    p->young[k] = b->prev;
  bin_t *bin = b->bin;
  if (b->bprev)
    b->bprev->bnext = b->bnext;
  else if (bin)
    bin->top = b->bnext;
  if (b->bnext)
    b->bnext->bprev = b->bprev;
  if (bin && !bin->top) { /* no empty bins: their number stays bounded */
    HASH_DEL(p->bins, bin);
    if (p->last == bin)
      p->last = NULL;
    free(bin);
  }
  p->bytes -= b->cost;
  held_total -= b->cost;
  p->n--;
}

void mig__pool_destroy(mig__pool_t *p) {
  if (!p)
    return;
  for (int k = 0; k < 2; k++)
    while (p->old[k]) {
      block_t *b = p->old[k];
      pool_unlink(p, b);
      free(b->mem);
      free(b);
    }
  while (p->spare) {
    block_t *b = p->spare;
    p->spare = b->bnext;
    free(b);
  }
  bin_t *bin, *tmp;
  HASH_ITER(hh, p->bins, bin, tmp) {
    HASH_DEL(p->bins, bin);
    free(bin);
  }
  free(p);
}

/* Whether cache hits count as allocations for common's failure hook (only
 * while a migration runs with mig__fail_alloc_after armed). */
static int hits_count;

void mig__pool_count_hits(int on) { hits_count = on; }

/* The bin of the smallest large blocks that can serve n (n to 2n bytes),
 * NULL when none. */
static bin_t *best_fit(mig__pool_t *p, size_t n) {
  bin_t *best = NULL;
  for (bin_t *bin = p->bins; bin; bin = bin->hh.next)
    if (bin->len >= n && bin->len / 2 <= n && class_of(bin->len) == LARGE &&
        (!best || bin->len < best->len))
      best = bin;
  return best;
}

/* Keeps the record of a block that left the pool for the next give. */
static void spare_put(mig__pool_t *p, block_t *b) {
  b->bnext = p->spare;
  p->spare = b;
}

void *mig__pool_take(mig__pool_t *p, size_t n) {
  return mig__pool_take_len(p, n, NULL);
}

void *mig__pool_take_len(mig__pool_t *p, size_t n, size_t *len) {
  if (len)
    *len = n;
  if (p && n >= MIG__POOL_SMALL) {
    bin_t *bin = NULL;
    HASH_FIND(hh, p->bins, &n, sizeof n, bin);
    if (!bin && class_of(n) == LARGE)
      bin = best_fit(p, n);
    block_t *best = bin ? bin->top : NULL;
    if (best && hits_count && ballast__alloc_tick())
      return NULL; /* an injected failure: the block stays cached */
    if (best) {
      void *mem = best->mem;
      if (len)
        *len = best->len;
      pool_unlink(p, best);
      spare_put(p, best);
      p->hits++;
      return mem;
    }
    p->misses++;
  }
  void *mem = ballast__alloc_large(n);
  if (len && mem)
    *len = ballast__large_len(n);
  return mem;
}

/* Frees the oldest blocks until the pool holds at most \a keep bytes. */
static void evict(mig__pool_t *p, size_t keep) {
  while (p->bytes > keep) {
    block_t *o = p->old[SMALL], *l = p->old[LARGE];
    block_t *v = !o ? l : !l ? o : (o->seq < l->seq ? o : l);
    pool_unlink(p, v);
    free(v->mem);
    spare_put(p, v);
  }
}

/* The memory that departs at a commit is what the next remap's arrivals
 * will need, about as much as arrived in this one; a pool bounded below
 * that volume received most arrivals into fresh memory (bench_lb_remap case
 * 12, 128 MiB arriving per rank and remap against a 64 MiB pool: the
 * exchange ran at 0.35 of Alltoallv, every arrival faulting its pages).
 * Bounded by this migration's arrivals alone, it still missed whenever a
 * rank received more than it had received the time before: the counts
 * moved between ranks vary from remap to remap (RANDOM on 2 ranks, 256 x 1
 * MiB: 114-134 arrivals, 0-30 misses per rank and remap, each a fresh 2 MiB
 * huge page at 0.2-3 ms per MiB on the VM, the host faulting it in), and a
 * remap runs at the pace of its slowest rank. So the bound is the largest
 * of the last MIG__POOL_FOLLOW_LAST migrations' arrivals and a quarter more,
 * for a remap that brings more than any of them. Keeping it does
 * not raise the rank's footprint above the migration's own peak: the pool
 * only keeps blocks given to it, and after the commit the live states plus
 * the pool are at most what was alive while both the departed and the
 * arrived states were (live before + the pool before + fresh arrivals). */
void mig__pool_follow(mig__pool_t *p, size_t arrived) {
  if (!p || !p->follows)
    return;
  p->recent[p->nrecent++ % MIG__POOL_FOLLOW_LAST] = arrived;
  size_t cap = MIG__MEM_DEFAULT;
  for (unsigned i = 0; i < MIG__POOL_FOLLOW_LAST; i++)
    cap = p->recent[i] > cap ? p->recent[i] : cap;
  p->cap = cap == MIG__MEM_DEFAULT ? cap : cap + cap / 4;
  evict(p, p->cap);
}

void mig__pool_give(mig__pool_t *p, void *mem, size_t n) {
  if (!mem)
    return;
  size_t cost = block_cost(mem, n);
  if (!p || n < MIG__POOL_SMALL || cost > p->cap || !huge_ready(mem, n)) {
    free(mem);
    return;
  }
  evict(p, p->cap - cost);
  block_t *b = p->spare;
  if (b)
    p->spare = b->bnext;
  else
    b = ballast__malloc(sizeof *b);
  bin_t *bin = p->last && p->last->len == n ? p->last : NULL;
  int k = class_of(n);
  if (b && !bin) {
    HASH_FIND(hh, p->bins, &n, sizeof n, bin);
    if (!bin && (bin = ballast__calloc(1, sizeof *bin))) {
      bin->len = n;
      HASH_ADD(hh, p->bins, len, sizeof bin->len, bin);
    }
  }
  if (!b || !bin) {
    free(b);
    free(mem);
    return;
  }
  p->last = bin;
  b->mem = mem;
  b->len = n;
  b->cost = cost;
  b->seq = p->seq++;
  b->bin = bin;
  b->next = b->bprev = NULL;
  b->prev = p->young[k];
  if (p->young[k])
    p->young[k]->next = b;
  else
    p->old[k] = b;
  p->young[k] = b;
  b->bnext = bin->top;
  if (bin->top)
    bin->top->bprev = b;
  bin->top = b;
  p->n++;
  p->bytes += cost;
  held_total += cost;
}

/* Which transport next: each is measured once (batches first), then the
 * faster by its last measure, the other measured again after
 * MIG__POOL_RETRY choices since its last measure, because what makes one
 * faster (the placement of the ranks' cores, bench/core_rtt) changes while a
 * job runs: on the 2-core VM, for tens of seconds at a time. */
int mig__pool_transport(mig__pool_t *p) {
  if (!p)
    return MIG__BATCH;
  p->choices++;
  if (!p->measured[MIG__BATCH])
    return MIG__BATCH;
  if (!p->measured[MIG__READ])
    return MIG__READ;
  int best = p->ns_per_byte[MIG__READ] < p->ns_per_byte[MIG__BATCH]
                 ? MIG__READ : MIG__BATCH;
  int other = !best;
  return p->choices - p->measured[other] > MIG__POOL_RETRY ? other : best;
}

void mig__pool_transport_note(mig__pool_t *p, int transport, double seconds,
                                  size_t bytes) {
  if (!p || bytes == 0 || (transport != MIG__BATCH && transport != MIG__READ))
    return;
  p->ns_per_byte[transport] = seconds * 1e9 / (double)bytes;
  p->measured[transport] = p->choices ? p->choices : 1;
}

void mig__pool_info(const mig__pool_t *p, size_t *bytes, int *blocks,
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
