/*
 * The migration engine (layer mig, private: lb includes it; it sees common
 * only). Moves opaque task states between the ranks of a communicator with
 * bounded memory, and commits only when every rank has
 * unpacked everything it received: otherwise every rank rolls back and keeps
 * its old state.
 *
 * The engine knows nothing of the task tree: the caller describes each move
 * (task number, destination rank) and supplies the operations below. The
 * load-balancing context adapts tasks' serialisation callbacks and registered
 * arrays to these operations.
 *
 * A state travels in two parts: a head, contiguous memory of the source
 * sent as it is (no pack copy) and received into a buffer of its own that
 * the destination may keep (no unpack copy), and a tail that pack() writes
 * and unpack() reads. Either part may be empty.
 *
 * Protocol (collective over comm):
 *  1. every rank asks the head and tail sizes, and the head's memory, of
 *     each outgoing state;
 *  2. headers (task, head, tail, round, the head's address, and the
 *     caller's description of the state, ops->meta, after the words) are
 *     exchanged with MPI_Alltoall(v), counts first (with every rank's
 *     number of rounds and what a peer on the same node needs to read its
 *     memory); each destination is told of its arrivals (ops->announce)
 *     before any state moves;
 *     with the headers each rank tells each source whether it reads that
 *     source's heads of less than 128 KiB itself (the transport, chosen per
 *     migration: BALLAST_LB_TRANSPORT, else from the pool's measures);
 *     rounds bound the bytes in flight per rank;
 *  3. per round: all receives and sends are posted nonblocking, the heads
 *     read from same-node sources are read (process_vm_readv), then
 *     everything is waited for; per peer, tails of less than 64 KiB share
 *     one packed aggregate, heads not read and larger tails of less than
 *     128 KiB travel in messages described by hindexed datatypes over
 *     their own memory (at most 256 parts each; an aggregate of less than
 *     128 KiB is the first part of the first), and parts of 128 KiB and
 *     more travel alone; received states are handed to unpack, which
 *     stages them (not yet live);
 *  4. one MPI_Allreduce agrees on success (and on the first failing rank);
 *  5. success: finish(COMMIT) on both sides (the source frees its state, the
 *     destination makes the staged state live); failure: finish(ROLLBACK)
 *     (the destination drops what it staged, the source keeps everything).
 * A failure on a rank never stops it from taking part in the rest of the
 * protocol, so no rank hangs and no message is left unreceived.
 *
 * Receive and pack buffers of large states come from a pool of memory that
 * has already been touched (mig__pool_t, mig_pool.h) when the caller gives one:
 * fresh memory costs a page fault per page on first touch, which on a
 * virtual machine is slower than the transfer itself.
 */
#ifndef BALLAST_RTA_MIGRATE_H
#define BALLAST_RTA_MIGRATE_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "mig/mig_pool.h"

/** One outgoing move, known to the source rank. */
typedef struct {
  int64_t task; /* the caller's global task number (sent in the header) */
  int dest;     /* destination rank in comm; the source's own rank is refused */
} mig__move_t;

enum { MIG__COMMIT = 1, MIG__ROLLBACK = 0 };

typedef struct {
  /* Bytes of a task's state, head and tail (source side). */
  int (*size)(void *ctx, int64_t task, size_t *head, size_t *tail);
  /* The head's memory, \a head bytes sent as they are (source side; asked
   * with the sizes, only when head > 0). It must stay as it is until
   * finish: a destination on the same node may read it there (migrate.c,
   * heads read from the sender's memory) at any time before. */
  int (*head)(void *ctx, int64_t task, const void **ptr);
  /* Packs exactly \a tail bytes into buf (source side; asked only when
   * tail > 0; buf is 8-byte aligned). */
  int (*pack)(void *ctx, int64_t task, void *buf, size_t tail);
  /* Stages a received state (destination side). *head holds the head bytes
   * in memory from malloc (or the pool); unpack may keep it (set *head =
   * NULL) and later free() it. tail is read only, valid during the call,
   * 8-byte aligned, and never NULL (even when empty). */
  int (*unpack)(void *ctx, int64_t task, int src, void **head, size_t hbytes,
                const void *tail, size_t tbytes);
  /* Ends one move on one side: outgoing (source) or incoming (destination). */
  void (*finish)(void *ctx, int64_t task, int outgoing, int outcome);
  /* Optional (NULL: none): called once before the sizes; a negative code
   * is this rank's failure, agreed with the sizes' (a caller's local step
   * before the migration needs no agreement of its own). */
  int (*start)(void *ctx);
  /* Nonzero when unpack keeps every head it is given (sets *head = NULL
   * whenever it succeeds): received heads are then the new states' memory,
   * not staging, and the round budget (mig__run's mem_limit) does not
   * count the heads that travel in batches (below 128 KiB). 0: every head
   * counts. */
  int heads_kept;
  /* Optional (NULL: none): what the destination needs to know of a state
   * before it arrives (the caller's descriptor), \a *len bytes at \a *ptr
   * (source side; asked with the sizes, read until the headers are
   * exchanged). It travels with the headers, not with the state: one
   * exchange of every rank's descriptions before the rounds, no message
   * of its own and no copy into a tail. */
  int (*meta)(void *ctx, int64_t task, const void **ptr, size_t *len);
  /* Optional (NULL: none): told of each incoming state after the headers'
   * exchange, before any round (destination side): its source, its
   * description (meta, \a len bytes, 8-byte aligned, valid until mig__run
   * returns; never NULL, even when empty) and the head and tail bytes it
   * will come with. A negative code is this rank's failure, agreed before
   * any state moves. It must take nothing that needs giving back: finish
   * is called only for the states unpack staged. */
  int (*announce)(void *ctx, int64_t task, int src, const void *meta,
                  size_t len, size_t head, size_t tail);
} mig__ops_t;

/* The engine's phases, timed on each rank (mig__stats_t.phase):
 * planning (sizes, rounds, the headers' exchange), packing (receive
 * buffers, aggregates, batches), the exchange (the agreements, messages
 * posted and waited for), unpacking (the unpack callbacks, buffers for
 * small heads) and the commit (the finish callbacks, buffers freed). */
enum { MIG__PH_PLAN, MIG__PH_PACK, MIG__PH_XFER, MIG__PH_UNPACK,
       MIG__PH_COMMIT, MIG__PH_NPHASES };

typedef struct {
  int64_t tasks_sent, tasks_received;
  uint64_t bytes_sent, bytes_received;
  int rounds;
  int64_t heads_read; /* heads this rank read from its sources' memory */
  double seconds;
  double phase[MIG__PH_NPHASES]; /* seconds per phase on this rank */
  int failed_rank; /* first rank that failed, -1 when none */
  int failed_code; /* its BALLAST_E* code */
} mig__stats_t;

/*
 * Collective over comm. \a mem_limit bounds the bytes a rank packs and
 * receives per round (at least one task per round moves, whatever its size;
 * with ops->heads_kept, heads below 128 KiB are not counted).
 * \a pool (may be NULL) supplies receive and pack buffers and gets back the
 * ones nobody kept. Returns 0 when everything was committed; otherwise the
 * local error code, or BALLAST_EREMOTE when the failure was on another rank;
 * in both cases every rank has rolled back.
 */
int mig__run(MPI_Comm comm, const mig__move_t *moves, int nmoves,
                 const mig__ops_t *ops, void *ctx, size_t mem_limit,
                 mig__pool_t *pool, mig__stats_t *stats);

/* Test hook: the n-th allocation from the start of the next migration
 * fails (n <= 0: none, and disarms). One mechanism with common's
 * ballast__alloc_fail_after (util.h): this arms that hook when mig__run
 * starts, so n counts from the engine's first allocation (allocations in
 * the callbacks it calls, and the pool's own bookkeeping, count too), and
 * while the migration runs, blocks taken from the pool count as
 * allocations, those served from its cache included. The hook stays armed
 * after the migration until disarmed. */
void mig__fail_alloc_after(int n);

#endif /* BALLAST_RTA_MIGRATE_H */
