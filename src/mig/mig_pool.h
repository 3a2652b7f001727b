/*
 * The migration engine's pool of touched memory (private): receive and pack
 * buffers of large states come from it when the caller gives one, and the
 * memory of states that left goes back to it. Fresh memory costs a page
 * fault per page on first touch, which on a virtual machine is slower than
 * the transfer itself (see mig_pool.c).
 */
#ifndef BALLAST_RTA_MIG_POOL_H
#define BALLAST_RTA_MIG_POOL_H

#include <stddef.h>

/* The default bound of the bytes a migration moves per round and of a
 * pool's cache: 64 MiB. */
#define MIG__MEM_DEFAULT ((size_t)64 << 20)

/*
 * A bounded cache of touched memory blocks (from malloc or posix_memalign,
 * so free() releases any of them). Not thread safe; one per load-balancing
 * context. Blocks of MIG__POOL_MIN bytes and more serve requests of half
 * their size or more; smaller ones, down to MIG__POOL_SMALL, serve requests
 * of exactly their size; smaller still are never cached.
 */
typedef struct mig__pool mig__pool_t;

#define MIG__POOL_MIN ((size_t)64 << 10)
#define MIG__POOL_SMALL ((size_t)4 << 10)

/* How many migrations' arrivals a following bound remembers. */
#define MIG__POOL_FOLLOW_LAST 8u

/* A pool holding at most \a cap bytes, or with cap 0 a bound that follows
 * the migrations (mig__pool_follow), MIG__MEM_DEFAULT until the
 * first. NULL when out of memory (callers then run without). */
mig__pool_t *mig__pool_create(size_t cap);
/* Called by the engine when a migration commits, before the memory of the
 * states that left is handed back: a pool created with cap 0 may then hold
 * the most bytes of blocks \a arrived in any of the last
 * MIG__POOL_FOLLOW_LAST migrations and a quarter more, or
 * MIG__MEM_DEFAULT when none brought more than that, evicting its
 * oldest blocks when that is less than it holds; the next migration's
 * arrivals are received into them. A pool created with a bound keeps it.
 * pool may be NULL. */
void mig__pool_follow(mig__pool_t *pool, size_t arrived);
/* Frees every cached block and the pool; NULL does nothing. */
void mig__pool_destroy(mig__pool_t *pool);
/* A block of at least \a n bytes: a cached one (see above) when there is
 * one, else fresh memory (blocks of 1 MiB and more are 2 MiB aligned and
 * offered transparent huge pages). The caller owns it; free() or
 * mig__pool_give() it. NULL when out of memory. pool may be NULL. */
void *mig__pool_take(mig__pool_t *pool, size_t n);
/* mig__pool_take, and in *len (when not NULL) the bytes the block holds
 * (n or more): give it back with that length so the pool keeps counting it
 * whole. */
void *mig__pool_take_len(mig__pool_t *pool, size_t n, size_t *len);
/* Hands \a mem (at least \a n usable bytes, free()-able) to the pool, which
 * keeps it when it is at least MIG__POOL_SMALL, fits under the bound
 * (evicting the oldest blocks) and, from 1 MiB, is 2 MiB aligned like the
 * blocks mig__pool_take allocates (huge pages: states sent from them move
 * faster); else frees it. A 2 MiB-aligned block of 1-2 MiB counts a whole
 * 2 MiB against the bound (the huge page it holds), any other block its n
 * bytes; a block handed back with less than it holds (an adopted array of a
 * smaller state) is counted at that size. pool may be NULL (free). */
void mig__pool_give(mig__pool_t *pool, void *mem, size_t n);
/* The transports of batch-sized heads between ranks of one node: received
 * in Open MPI's batches, or read by the destination from the source's
 * memory (migrate.c). */
enum { MIG__BATCH = 0, MIG__READ = 1 };
/* Choices between two measures of the transport not chosen. */
#define MIG__POOL_RETRY 8u
/* The transport this rank should use for the heads it receives next (one
 * choice per migration, counted): each measured once, batches first, then
 * the faster by its last measure, and the slower measured again every
 * MIG__POOL_RETRY choices. pool NULL: batches. */
int mig__pool_transport(mig__pool_t *pool);
/* What a migration that used \a transport for 1 MiB or more of batch-sized
 * heads measured: \a seconds of exchange for \a bytes moved both ways. */
void mig__pool_transport_note(mig__pool_t *pool, int transport,
                                  double seconds, size_t bytes);
/* Bytes and blocks cached, and how many takes were served from the cache. */
void mig__pool_info(const mig__pool_t *pool, size_t *bytes,
                        int *blocks, long long *hits, long long *misses);

/* Test hook of the engine (mig__fail_alloc_after): while on, a take
 * served from the cache counts as one allocation for common's failure hook
 * (util.h) and fails when that allocation would, leaving the block cached.
 * Off, the hook sees only the memory a take allocates. */
void mig__pool_count_hits(int on);

/* Bytes held by every pool of the process (tests: 0 once all are destroyed). */
size_t mig__pool_held(void);

#endif /* BALLAST_RTA_MIG_POOL_H */
