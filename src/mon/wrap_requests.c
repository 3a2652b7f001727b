/*
 * Requests of nonblocking and persistent operations, accounted at completion.
 *
 * A wrapper that posts an operation (MPI_Isend, MPI_Irecv, MPI_Send_init,
 * MPI_Iallreduce, MPI_Rput, MPI_File_iread, ...) records the call and its
 * partner, and tracks the request with what completion needs: the posting
 * activity, the bytes and partner of a send, or for a receive the rank
 * translation of the communicator that names the status's MPI_SOURCE. The
 * wait/test-family wrappers capture the handles before PMPI (MPI overwrites completed
 * non-persistent handles with MPI_REQUEST_NULL) and, for every completed
 * tracked request, credit its bytes to the posting activity (mon__account).
 * Persistent requests stay tracked: MPI_Start arms them and each completion
 * of an armed one credits one transfer.
 *
 * Handles are not unique: Open MPI hands out one shared, already completed
 * request for every send that finished inside MPI_Isend, so the table is a
 * multiset. Each entry carries a sequence number and a completion consumes
 * the oldest entry of its handle; distinct live requests have distinct
 * handles, so for them this is exact, and among entries of a shared
 * completed request any order gives the same totals.
 *
 * A request can be posted on one thread and completed on another, so the
 * table is shared: 64 shards chosen by the handle's hash, each an
 * open-addressing table (linear probing, backward-shift deletion) behind a
 * small spinlock. Critical sections are a few dozen instructions and never
 * call MPI. Blocking calls never come here. Growth allocates, only while an
 * operation is posted; no entry is ever dropped for lack of room (when memory
 * runs out the one operation is not accounted, and nothing else changes).
 * A global count of tracked entries lets the wait/test wrappers skip all of
 * this in programs that have nothing outstanding.
 *
 * Everything completion needs is captured when the operation is posted, and
 * no MPI handle is looked at again at completion: MPI lets a program free a
 * communicator, datatype, group, window or file while operations on it are
 * pending (MPICH's comm/cmfree), and by the time of the wait the handle may
 * be dangling or name a new object. Sends keep their bytes (from the
 * datatype) and partner's world rank; a receive holds its communicator's
 * rank translation (mon__w_src_hold: an atomic increment, released when the
 * entry goes); received bytes come from the status alone.
 *
 * The same table type maps matched messages (MPI_Mprobe) to their sender's
 * world rank until MPI_Mrecv/MPI_Imrecv consumes them.
 */
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "mon/wrap_internal.h"
#include "tool/tool_internal.h"

#define NSHARD 64

typedef struct {
  uintptr_t key;     /* handle; 0 = empty */
  mon__wsrc_t *src;  /* receive: held translation of MPI_SOURCE, or NULL */
  uint64_t bytes;    /* send: bytes per transfer */
  int act;           /* posting activity */
  int partner;       /* send, matched message: world rank */
  unsigned flags;    /* MON__WREQ_* */
  int active;        /* persistent: armed by MPI_Start */
  uint64_t seq;      /* posting order within the shard */
  int tag, comm_id;  /* for the tools' mpi_complete: copied when posted */
} entry_t;

typedef struct {
  char lock;
  size_t cap, n;     /* cap: power of two or 0 */
  entry_t *e;
  uint64_t seq;      /* next sequence number */
  char pad[64 - sizeof(char) - 2 * sizeof(size_t) - sizeof(entry_t *) - sizeof(uint64_t)];
} shard_t;

typedef struct {
  shard_t sh[NSHARD];
  long count;        /* entries over all shards (atomic) */
} table_t;

static table_t reqs, msgs;

static uint64_t hash(uintptr_t key) {
  uint64_t h = (uint64_t)key;
  h ^= h >> 29;
  h *= 0xBF58476D1CE4E5B9ull;
  h ^= h >> 32;
  return h;
}

static shard_t *shard_of(table_t *tb, uintptr_t key) {
  return &tb->sh[hash(key) % NSHARD];
}

static void lock(shard_t *s) {
  int spins = 0;
  while (__atomic_test_and_set(&s->lock, __ATOMIC_ACQUIRE)) {
    while (__atomic_load_n(&s->lock, __ATOMIC_RELAXED))
      if (++spins > 64) {
        sched_yield(); /* oversubscribed: let the holder run */
        spins = 0;
      }
  }
}

static void unlock(shard_t *s) { __atomic_clear(&s->lock, __ATOMIC_RELEASE); }

static size_t home(const shard_t *s, uintptr_t key) {
  return (size_t)(hash(key) >> 6) & (s->cap - 1);
}

/* Under the lock: index of the oldest entry of key, or -1. */
static long find(const shard_t *s, uintptr_t key) {
  long best = -1;
  if (s->cap == 0)
    return -1;
  for (size_t i = home(s, key); s->e[i].key != 0; i = (i + 1) & (s->cap - 1))
    if (s->e[i].key == key && (best < 0 || s->e[i].seq < s->e[best].seq))
      best = (long)i;
  return best;
}

/* Under the lock: adds e. Returns 1, or -1 out of memory. */
static int put(shard_t *s, const entry_t *e) {
  if ((s->n + 1) * 2 > s->cap) {
    size_t cap = s->cap ? 2 * s->cap : 16;
    entry_t *ne = calloc(cap, sizeof *ne);
    if (ne == NULL)
      return -1;
    entry_t *old = s->e;
    size_t ocap = s->cap;
    s->e = ne;
    s->cap = cap;
    for (size_t i = 0; i < ocap; i++)
      if (old[i].key != 0) {
        size_t j = home(s, old[i].key);
        while (ne[j].key != 0)
          j = (j + 1) & (cap - 1);
        ne[j] = old[i];
      }
    free(old);
  }
  size_t i = home(s, e->key);
  while (s->e[i].key != 0)
    i = (i + 1) & (s->cap - 1);
  s->e[i] = *e;
  s->e[i].seq = s->seq++;
  s->n++;
  return 1;
}

/* Under the lock: removes slot i, shifting back the entries after it. */
static void del(shard_t *s, size_t i) {
  size_t mask = s->cap - 1;
  for (size_t j = (i + 1) & mask; s->e[j].key != 0; j = (j + 1) & mask) {
    size_t h = home(s, s->e[j].key);
    /* entry j may move to the hole i unless its home lies in (i, j] */
    if (((j - h) & mask) >= ((j - i) & mask)) {
      s->e[i] = s->e[j];
      i = j;
    }
  }
  s->e[i].key = 0;
  s->n--;
}

/* Returns 1 when added, -1 out of memory. */
static int table_put(table_t *tb, const entry_t *e) {
  shard_t *s = shard_of(tb, e->key);
  lock(s);
  int added = put(s, e);
  unlock(s);
  if (added > 0)
    __atomic_add_fetch(&tb->count, 1, __ATOMIC_RELAXED);
  return added;
}

/* Copies out and removes the entry of key; 0 when found. */
static int table_take(table_t *tb, uintptr_t key, entry_t *out) {
  shard_t *s = shard_of(tb, key);
  lock(s);
  long i = find(s, key);
  if (i >= 0) {
    *out = s->e[i];
    del(s, (size_t)i);
  }
  unlock(s);
  if (i < 0)
    return -1;
  __atomic_sub_fetch(&tb->count, 1, __ATOMIC_RELAXED);
  return 0;
}

static int table_empty(table_t *tb) {
  return __atomic_load_n(&tb->count, __ATOMIC_RELAXED) == 0;
}

static void table_free(table_t *tb) {
  for (int i = 0; i < NSHARD; i++) {
    shard_t *s = &tb->sh[i];
    lock(s);
    for (size_t k = 0; k < s->cap; k++)
      if (s->e[k].key != 0)
        mon__w_src_release(s->e[k].src); /* requests never completed */
    free(s->e);
    s->e = NULL;
    s->cap = s->n = 0;
    unlock(s);
  }
  __atomic_store_n(&tb->count, 0, __ATOMIC_RELAXED);
}

/* ---- requests --------------------------------------------------------------- */

void mon__wreq_post(MPI_Request req, int act, int partner, uint64_t bytes,
                    unsigned flags, MPI_Comm comm, int tag, int comm_id) {
  uintptr_t key = MON__HANDLE_KEY(req);
  if (key == 0 || req == MPI_REQUEST_NULL)
    return;
  /* The receive's translation is taken now, while comm is surely valid. */
  mon__wsrc_t *src = (flags & MON__WREQ_RECV) && comm != MPI_COMM_NULL
                         ? mon__w_src_hold(comm) : NULL;
  entry_t e = {.key = key, .src = src, .bytes = bytes, .act = act,
               .partner = partner, .flags = flags,
               .active = !(flags & MON__WREQ_PERSISTENT), .tag = tag, .comm_id = comm_id};
  if (table_put(&reqs, &e) < 0)
    mon__w_src_release(src);
}

void mon__wreq_start(const MPI_Request *rq, int n) {
  if (table_empty(&reqs) || rq == NULL)
    return;
  for (int k = 0; k < n; k++) {
    uintptr_t key = MON__HANDLE_KEY(rq[k]);
    shard_t *s = shard_of(&reqs, key);
    lock(s);
    /* persistent handles are unique: arm the first inactive entry */
    for (size_t i = s->cap ? home(s, key) : 0; s->cap && s->e[i].key != 0;
         i = (i + 1) & (s->cap - 1))
      if (s->e[i].key == key && !s->e[i].active) {
        s->e[i].active = 1;
        break;
      }
    unlock(s);
  }
}

static void credit(mon__tls_t *t, const entry_t *e, const MPI_Status *st) {
  int cancelled = 0;
  if ((e->flags & MON__WREQ_P2P) && st != NULL &&
      PMPI_Test_cancelled(st, &cancelled) == MPI_SUCCESS && cancelled)
    return; /* a cancelled send or receive moved nothing (MPI_Cancel) */
  if (e->flags & MON__WREQ_RECV) {
    if (st == NULL)
      return;
    /* Through the translation held since the post, never through the
     * communicator's handle: the program may have freed it. */
    int src = e->src != NULL ? mon__w_src_rank(e->src, st->MPI_SOURCE) : e->partner;
    uint64_t bytes = mon__w_rbytes(st);
    mon__account(t, e->act, src, bytes);
    if (TOOL__ON(TOOL__EV_MPI_COMPLETE))
      mon__tool_mpi_complete(e->act, 1, src, st->MPI_TAG, bytes, e->comm_id,
                             mon__tl_done_ticks);
  } else {
    mon__account(t, e->act, e->partner, e->bytes);
    if (TOOL__ON(TOOL__EV_MPI_COMPLETE))
      mon__tool_mpi_complete(e->act, 0, e->partner, e->tag, e->bytes, e->comm_id,
                             mon__tl_done_ticks);
  }
}

/* Completion of the request whose handle was key before the call. With
 * failed set (its status carries an error) the request stops being tracked
 * (a persistent one becomes inactive) and nothing is credited: what a failed
 * operation moved is not known. */
static void done_(mon__tls_t *t, uintptr_t key, const MPI_Status *st, int failed) {
  entry_t e;
  shard_t *s = shard_of(&reqs, key);
  lock(s);
  long i = find(s, key);
  int found = 0;
  if (i >= 0) {
    e = s->e[i];
    if (e.flags & MON__WREQ_PERSISTENT) {
      /* an inactive persistent request "completes" at once, moving nothing */
      found = e.active;
      s->e[i].active = 0;
    } else {
      found = 1;
      del(s, (size_t)i);
    }
  }
  unlock(s);
  if (found && !failed)
    credit(t, &e, st);
  if (i >= 0 && !(e.flags & MON__WREQ_PERSISTENT)) {
    __atomic_sub_fetch(&reqs.count, 1, __ATOMIC_RELAXED);
    mon__w_src_release(e.src);
  }
}

static void done(mon__tls_t *t, uintptr_t key, const MPI_Status *st) {
  done_(t, key, st, 0);
}

void mon__wreq_done(mon__tls_t *t, MPI_Request before, const MPI_Status *st) {
  if (!table_empty(&reqs))
    done(t, MON__HANDLE_KEY(before), st);
}

void mon__wreq_failed(mon__tls_t *t, MPI_Request before, MPI_Request after) {
  if (after == MPI_REQUEST_NULL && before != MPI_REQUEST_NULL && !table_empty(&reqs))
    done_(t, MON__HANDLE_KEY(before), NULL, 1);
}

void mon__wreq_free(mon__tls_t *t, MPI_Request req) {
  entry_t e;
  if (table_empty(&reqs) || table_take(&reqs, MON__HANDLE_KEY(req), &e) != 0)
    return;
  /* A freed active send still goes out; a freed receive's size is never known. */
  if (e.active && !(e.flags & MON__WREQ_RECV))
    credit(t, &e, NULL);
  mon__w_src_release(e.src);
}

long mon__wreq_tracked(void) { return __atomic_load_n(&reqs.count, __ATOMIC_RELAXED); }

/* ---- matched messages ------------------------------------------------------------ */

void mon__wmsg_put(MPI_Message msg, int partner) {
  uintptr_t key = MON__HANDLE_KEY(msg);
  if (key == 0 || msg == MPI_MESSAGE_NULL || msg == MPI_MESSAGE_NO_PROC)
    return;
  entry_t e = {.key = key, .partner = partner};
  (void)table_put(&msgs, &e);
}

int mon__wmsg_take(MPI_Message msg) {
  entry_t e;
  if (table_empty(&msgs) || table_take(&msgs, MON__HANDLE_KEY(msg), &e) != 0)
    return MON_NO_PARTNER;
  return e.partner;
}

/* ---- the wait/test family ------------------------------------------------------- */

void mon__wq_handles(mon__wq_t *q, int n, const MPI_Request *rq) {
  q->n = 0;
  q->h = NULL;
  q->st = NULL;
  if (n <= 0 || rq == NULL || table_empty(&reqs))
    return;
  q->h = n <= MON__WQ_INLINE ? q->h_inline : malloc((size_t)n * sizeof *q->h);
  if (q->h == NULL)
    return; /* out of memory: these completions go unaccounted */
  memcpy(q->h, rq, (size_t)n * sizeof *q->h);
  q->n = n;
}

MPI_Status *mon__wq_pre(mon__wq_t *q, int n, const MPI_Request *rq, MPI_Status *statuses) {
  mon__wq_handles(q, n, rq);
  if (q->n == 0 || statuses != MPI_STATUSES_IGNORE)
    return statuses;
  q->st = n <= MON__WQ_INLINE ? q->st_inline : malloc((size_t)n * sizeof *q->st);
  if (q->st == NULL) {
    mon__wq_fini(q);
    return statuses;
  }
  return q->st;
}

void mon__wq_all(mon__tls_t *t, mon__wq_t *q, const MPI_Status *statuses,
                 int in_status) {
  for (int i = 0; i < q->n; i++) {
    const MPI_Status *st = statuses == MPI_STATUSES_IGNORE ? NULL : &statuses[i];
    if (in_status && st && st->MPI_ERROR == MPI_ERR_PENDING)
      continue; /* not completed */
    done_(t, MON__HANDLE_KEY(q->h[i]), st, in_status && st && st->MPI_ERROR != MPI_SUCCESS);
  }
}

void mon__wq_one(mon__tls_t *t, mon__wq_t *q, int index, const MPI_Status *status) {
  if (index >= 0 && index < q->n)
    done(t, MON__HANDLE_KEY(q->h[index]), status);
}

void mon__wq_failed_one(mon__tls_t *t, mon__wq_t *q, int index,
                        const MPI_Request *reqs) {
  if (index >= 0 && index < q->n && reqs[index] == MPI_REQUEST_NULL &&
      q->h[index] != MPI_REQUEST_NULL)
    done_(t, MON__HANDLE_KEY(q->h[index]), NULL, 1);
}

void mon__wq_some(mon__tls_t *t, mon__wq_t *q, int outcount, const int *indices,
                  const MPI_Status *statuses, int in_status) {
  if (outcount == MPI_UNDEFINED || indices == NULL)
    return;
  for (int k = 0; k < outcount; k++) {
    const MPI_Status *st = statuses == MPI_STATUSES_IGNORE ? NULL : &statuses[k];
    if (indices[k] >= 0 && indices[k] < q->n)
      done_(t, MON__HANDLE_KEY(q->h[indices[k]]), st,
            in_status && st && st->MPI_ERROR != MPI_SUCCESS);
  }
}

void mon__wq_fini(mon__wq_t *q) {
  if (q->h != q->h_inline)
    free(q->h);
  if (q->st != q->st_inline)
    free(q->st);
  q->h = NULL;
  q->st = NULL;
  q->n = 0;
}

void mon__wrap_requests_finalize(void) {
  table_free(&reqs);
  table_free(&msgs);
}
