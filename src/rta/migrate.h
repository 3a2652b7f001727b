/*
 * rta's migration engine (private). Moves opaque task states between the ranks
 * of a communicator with bounded memory, and commits only when every rank has
 * unpacked everything it received: otherwise every rank rolls back and keeps
 * its old state.
 *
 * The engine knows nothing of the task tree: the caller describes each move
 * (task number, destination rank) and supplies the operations below. The
 * load-balancing context adapts tasks' serialisation callbacks and registered
 * arrays to these operations.
 *
 * Protocol (collective over comm):
 *  1. every rank asks the size of each outgoing state;
 *  2. headers (task, bytes, round) are exchanged with MPI_Alltoall(v), counts
 *     first; rounds bound the bytes in flight per rank;
 *  3. per round: all receives and sends are posted nonblocking, then waited;
 *     received states are handed to unpack, which stages them (not yet live);
 *  4. one MPI_Allreduce agrees on success (and on the first failing rank);
 *  5. success: finish(COMMIT) on both sides (the source frees its state, the
 *     destination makes the staged state live); failure: finish(ROLLBACK)
 *     (the destination drops what it staged, the source keeps everything).
 * A failure on a rank never stops it from taking part in the rest of the
 * protocol, so no rank hangs and no message is left unreceived.
 */
#ifndef BALLAST_RTA_MIGRATE_H
#define BALLAST_RTA_MIGRATE_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

/** One outgoing move, known to the source rank. */
typedef struct {
  int64_t task; /* the caller's global task number (sent in the header) */
  int dest;     /* destination rank in comm; the source's own rank is refused */
} rta__move_t;

enum { RTA__COMMIT = 1, RTA__ROLLBACK = 0 };

typedef struct {
  /* Bytes of a task's state (source side). */
  int (*size)(void *ctx, int64_t task, size_t *bytes);
  /* Optional: the state as one contiguous block to send from directly (no
   * pack copy). Return 0 with *ptr set, or 1 to use pack instead. */
  int (*direct)(void *ctx, int64_t task, const void **ptr, size_t bytes);
  /* Packs exactly \a bytes into buf (source side). */
  int (*pack)(void *ctx, int64_t task, void *buf, size_t bytes);
  /* Stages a received state (destination side). *buf was malloc'ed by the
   * engine; unpack may keep it (set *buf = NULL) to avoid a copy. */
  int (*unpack)(void *ctx, int64_t task, int src, void **buf, size_t bytes);
  /* Ends one move on one side: outgoing (source) or incoming (destination). */
  void (*finish)(void *ctx, int64_t task, int outgoing, int outcome);
} rta__migrate_ops_t;

typedef struct {
  int64_t tasks_sent, tasks_received;
  uint64_t bytes_sent, bytes_received;
  int rounds;
  double seconds;
  int failed_rank; /* first rank that failed, -1 when none */
  int failed_code; /* its BALLAST_E* code */
} rta__migrate_stats_t;

/*
 * Collective over comm. \a mem_limit bounds the bytes a rank packs and
 * receives per round (at least one task per round moves, whatever its size).
 * Returns 0 when everything was committed; otherwise the local error code, or
 * BALLAST_EREMOTE when the failure was on another rank; in both cases every
 * rank has rolled back.
 */
int rta__migrate(MPI_Comm comm, const rta__move_t *moves, int nmoves,
                 const rta__migrate_ops_t *ops, void *ctx, size_t mem_limit,
                 rta__migrate_stats_t *stats);

/* Test hook: make the engine's n-th allocation from now fail (0 disables). */
void rta__migrate_fail_alloc_after(int n);

#endif /* BALLAST_RTA_MIGRATE_H */
