/* The migration engine (layer mig, sees common only): bounded-memory
 * transport of task states with an all-or-nothing commit. The protocol is
 * described in migrate.h. */
#define _GNU_SOURCE /* process_vm_readv */
#include "mig/migrate.h"

#include <ballast/common.h>

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/common_internal.h"
#include "common/env.h"

#if defined(__linux__)
#include <sys/uio.h>
#include <unistd.h>
#define MIG_CMA 1
#else
#define MIG_CMA 0
#endif

#define MIGRATE_TAG 0x6d67 /* "mg" */
#define AGG_MAX ((size_t)64 << 10) /* smaller tails share one message per peer */
#define BATCH_MAX ((size_t)128 << 10) /* smaller parts: datatype messages per peer */
/* Parts per batch message. Open MPI's datatype engine walks a message's
 * description from its start at every fragment of its pipeline, so one
 * message over thousands of parts costs time quadratic in them: on the
 * 2-core VM 4,096 parts of 16 KiB took 845 ms as one message, 220 ms as
 * messages of 256 parts (and 4 KiB parts no faster as 64 or 16 a message). */
#define BATCH_PARTS 256

/* ---- the engine ------------------------------------------------------------- */

/* A header on the wire: task, head bytes, tail bytes, round, the head's
 * address in the sender's memory (read there by a peer that reads heads)
 * and the bytes of the state's description (ops->meta), which follows the
 * words padded to 8. */
#define HDR_WORDS 6
/* Words per peer in the counts' Alltoall: header words, rounds, process
 * id, node, the address of the probe word (two ints) and the number of
 * headers. */
#define PAIR_WORDS 7

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
  size_t off;        /* small tails: offset in the peer's aggregate */
  int read;          /* a batch-sized head the destination reads itself */
  uint64_t raddr;    /* incoming, read: the head's address at the source */
  const void *meta;  /* outgoing: its description (ops->meta), or NULL */
  size_t mlen;       /* its bytes */
} item_t;

/* What a migration holds for one peer during one round: its aggregates
 * (allocated per round, bytes and the pool block's size). */
typedef struct {
  unsigned char *sagg, *ragg;
  size_t slen, rlen;      /* bytes of this round's aggregates */
  size_t scap, rcap;      /* bytes the pool blocks behind sagg / ragg hold */
  int sfold, rfold;       /* this round's aggregate travels as the first part
                           * of the peer's first batch message (build_batches) */
} peer_t;

/* One message of a round's batch to or from one peer: an hindexed datatype
 * over at most BATCH_PARTS parts, committed for the round. */
typedef struct {
  MPI_Datatype type;
  int peer, send;
  size_t bytes;
} batch_t;

/* One migration, from the arguments to the agreed outcome. */
typedef struct {
  MPI_Comm comm;
  int rank, nprocs;
  const mig__ops_t *ops;
  void *ctx;
  mig__pool_t *pool;
  size_t budget;    /* bytes packed and received per round and rank */
  item_t *out;      /* outgoing states, sorted by peer then round */
  item_t *in;       /* incoming states, grouped by peer */
  int nmoves, nin, nrounds;
  int64_t *sh, *rh; /* per peer: the read verdict word, then its headers */
  /* Header counts and displacements in words, one int per peer in four
   * arrays of one block: MPI_Alltoall and MPI_Alltoallv take them as
   * contiguous int arrays, so they cannot live in peer_t. */
  int *scount, *rcount, *sdisp, *rdisp;
  int *spair, *rpair; /* per peer: PAIR_WORDS (exchange_counts) */
  int *read_from;     /* per peer: this rank reads the peer's batch heads */
  int *read_by;       /* per peer: the peer reads this rank's batch heads */
  int transport;      /* MIG__BATCH or MIG__READ: this rank's choice */
  long long misses0;  /* the pool's misses before this migration */
  double xfer_s;      /* the exchanges' seconds, for the pool's choice of
                       * transport (with st's bytes both ways) */
  peer_t *peer;
  MPI_Request *reqs;
  MPI_Status *sts;
  int *rslot;       /* what receive request k is for (post_receives) */
  MPI_Aint *bdisp;  /* one batch message's parts (build_batches) */
  int *blen;
  batch_t *bat;     /* this round's batch messages, at most one per part */
  int nbat;
  size_t arrived;   /* bytes of the blocks received into (mig__pool_follow) */
  int err, who, code; /* local error; the agreed failing rank and its code */
  mig__stats_t st;
  double mark;        /* MPI_Wtime at the end of the last timed phase (lap) */
} mig_t;

/* Tails below AGG_MAX (callback bytes, array headers, small arrays) share
 * one message per peer and round, each padded to 8 bytes: no message per
 * state. Heads never go through it: the destination keeps each head as an
 * array of its own, so a head copied into an aggregate would be copied out
 * again into a block of its own, two copies of every byte on top of MPI's.
 * Heads below BATCH_MAX and tails from AGG_MAX to BATCH_MAX travel, per
 * peer and round, as one message described by an hindexed datatype over
 * their own memory: sent straight from the caller's memory, received
 * straight into the blocks the destination keeps; MPI packs them into its
 * shared-memory fragments and out again, the only copies. On the 2-core VM,
 * 128 parts of 64 KiB went over Open MPI's shared memory in 1.0 ms that
 * way, against 2.3 ms as 128 messages and 1.3-1.7 ms as one contiguous
 * message. From 128 KiB, separate messages are as fast or much faster:
 * Open MPI sends a contiguous message by single copy (the receiver reads
 * the sender's pages, CMA), needs no pipeline of fragments that both ranks
 * must serve at once, and is not slowed by parts in memory of their own
 * mapping (glibc's malloc maps blocks of 128 KiB and more apart), where the
 * datatype pipeline lost 3-4x (bench_mig_parts, bench/README.md lb_migrate:
 * 128 KiB and 256 KiB parts 0.2-0.36 of Alltoallv batched, 0.6-0.8 alone;
 * 64 KiB parts 0.73-0.99 batched, 0.4-0.6 alone). */
static int tail_in_agg(const item_t *x) { return x->tail > 0 && x->tail < AGG_MAX; }
static int head_in_batch(const item_t *x) {
  return x->head > 0 && x->head < BATCH_MAX;
}
static int tail_in_batch(const item_t *x) {
  return x->tail >= AGG_MAX && x->tail < BATCH_MAX;
}
/* A part of 128 KiB or more: a message of its own. */
static int head_alone(const item_t *x) { return x->head >= BATCH_MAX; }
static int tail_alone(const item_t *x) { return x->tail >= BATCH_MAX; }

static size_t agg_bytes(const item_t *x) { return ballast__round8(x->tail); }

static int cmp_by_peer(const void *a, const void *b) {
  const item_t *x = a, *y = b;
  if (x->peer != y->peer)
    return x->peer < y->peer ? -1 : 1;
  return 0;
}

static const unsigned char no_tail[8]; /* what unpack sees as an empty tail */

/* Ends the current phase: its seconds since the last mark go to \a ph. */
static void lap(mig_t *m, int ph) {
  double now = MPI_Wtime();
  m->st.phase[ph] += now - m->mark;
  m->mark = now;
}

/* Every rank learns whether any failed (and the first that did); nonzero
 * when one did. */
static int agree(mig_t *m) {
  return ballast__agree(m->comm, m->err, &m->who, &m->code);
}

/* Commits one batch message of k parts (m->bdisp, m->blen; total bytes)
 * to or from peer p. */
static int add_batch(mig_t *m, int p, int send, int k, size_t total) {
  batch_t *b = &m->bat[m->nbat];
  if (MPI_Type_create_hindexed(k, m->blen, m->bdisp, MPI_BYTE, &b->type) !=
      MPI_SUCCESS)
    return BALLAST_EMPI; /* the handle is undefined: not counted, not freed */
  m->nbat++;
  b->peer = p;
  b->send = send;
  b->bytes = total;
  return MPI_Type_commit(&b->type) == MPI_SUCCESS ? 0 : BALLAST_EMPI;
}

/* Builds, for each peer of items v[lo, hi) (grouped by peer), the messages
 * of its batch in round r: the parts in item order, sent from hsend/tbuf
 * (send) or received into hbuf/tbuf, BATCH_PARTS parts to a message. Both
 * sides see a peer's parts in the same order with the same sizes, so they
 * cut the same messages, which MPI matches in order. The peer's aggregate
 * of this round, when below BATCH_MAX, is the first part of its first
 * message: one message per peer and round where a packed state's tail
 * and head made two (both sides have the same aggregate length, so both
 * fold it or neither); a larger one stays a contiguous message of its
 * own, which Open MPI sends by single copy. */
static int build_batches(mig_t *m, const item_t *v, int lo, int hi, int r,
                         int send) {
  MPI_Aint *disp = m->bdisp;
  int *len = m->blen;
  int i = lo, rc = 0;
  while (i < hi && !rc) {
    int p = v[i].peer, k = 0;
    size_t total = 0;
    peer_t *q = &m->peer[p];
    size_t alen = send ? q->slen : q->rlen;
    if (alen > 0 && alen < BATCH_MAX) {
      MPI_Get_address(send ? q->sagg : q->ragg, &disp[k]);
      len[k++] = (int)alen;
      total += alen;
      *(send ? &q->sfold : &q->rfold) = 1;
    }
    for (; i < hi && v[i].peer == p && !rc; i++) {
      const item_t *x = &v[i];
      if (x->round != r)
        continue;
      if (head_in_batch(x) && !x->read) {
        MPI_Get_address(send ? x->hsend : x->hbuf, &disp[k]);
        len[k++] = (int)x->head;
        total += x->head;
      }
      if (tail_in_batch(x)) {
        MPI_Get_address(x->tbuf, &disp[k]);
        len[k++] = (int)x->tail;
        total += x->tail;
      }
      if (k >= BATCH_PARTS) {
        rc = add_batch(m, p, send, k, total);
        k = 0;
        total = 0;
      }
    }
    if (k > 0 && !rc)
      rc = add_batch(m, p, send, k, total);
  }
  return rc;
}

static void free_types(mig_t *m) {
  for (int b = 0; m->bat && b < m->nbat; b++)
    MPI_Type_free(&m->bat[b].type);
  m->nbat = 0;
}

/* Hands this round's aggregates back to the pool. */
static void give_aggregates(mig_t *m) {
  for (int p = 0; m->peer && p < m->nprocs; p++) {
    peer_t *q = &m->peer[p];
    mig__pool_give(m->pool, q->sagg, q->scap);
    mig__pool_give(m->pool, q->ragg, q->rcap);
    q->sagg = q->ragg = NULL;
  }
}

static void give_item(mig_t *m, item_t *x) {
  mig__pool_give(m->pool, x->hbuf, x->hcap);
  mig__pool_give(m->pool, x->tbuf, x->tcap);
  x->hbuf = x->tbuf = NULL;
}

/* Everything sized by the communicator or by this rank's moves is
 * allocated now, so one agreement covers it with the sizes (fewer
 * collectives: each costs a scheduling round trip on a loaded machine). */
static void alloc_per_peer(mig_t *m) {
  size_t np = (size_t)m->nprocs;
  m->scount = ballast__calloc((6 + 2 * PAIR_WORDS) * np, sizeof *m->scount);
  m->peer = ballast__calloc(np, sizeof *m->peer);
  if (m->scount) {
    m->rcount = m->scount + np;
    m->sdisp = m->scount + 2 * np;
    m->rdisp = m->scount + 3 * np;
    m->read_from = m->scount + 4 * np;
    m->read_by = m->scount + 5 * np;
    m->spair = m->scount + 6 * np;
    m->rpair = m->scount + (6 + PAIR_WORDS) * np;
  }
  if (!m->scount || !m->peer)
    m->err = BALLAST_ENOMEM;
}

/* The description of outgoing state x (ops->meta), and the words its
 * header and description take. A local problem is recorded. */
static size_t ask_meta(mig_t *m, item_t *x) {
  if (m->ops->meta) {
    int rc = m->ops->meta(m->ctx, x->task, &x->meta, &x->mlen);
    if (rc < 0 || (x->mlen > 0 && !x->meta)) {
      BALLAST_WARN("migration: no description of task %lld", (long long)x->task);
      m->err = rc < 0 ? rc : BALLAST_EINVAL;
      x->mlen = 0;
    } else if (x->mlen > (size_t)INT_MAX) {
      BALLAST_WARN("migration: task %lld has a description of %zu bytes, more "
                   "than %d", (long long)x->task, x->mlen, INT_MAX);
      m->err = BALLAST_ETOOBIG;
      x->mlen = 0;
    }
  }
  return HDR_WORDS + ballast__round8(x->mlen) / 8;
}

/* The outgoing headers' buffer: the read word per peer, then every move's
 * header words and description. Counted in ints (MPI_Alltoallv's counts
 * and displacements). */
static void alloc_headers(mig_t *m, size_t words) {
  words += (size_t)m->nprocs;
  if (!m->err && words > (size_t)INT_MAX) {
    BALLAST_WARN("migration: the headers of %d moves take %zu words, more than "
                 "the %d one exchange can count", m->nmoves, words, INT_MAX);
    m->err = BALLAST_ETOOBIG;
  }
  if (!m->err && !(m->sh = ballast__malloc(sizeof *m->sh * words)))
    m->err = BALLAST_ENOMEM;
}

/* 1. Validate and size every outgoing state. A local problem is recorded
 * and the rank still takes part in the agreement that follows. */
static void size_moves(mig_t *m, const mig__move_t *moves) {
  const mig__ops_t *ops = m->ops;
  if (m->nmoves < 0 || (m->nmoves > 0 && !moves) || !ops || !ops->size ||
      !ops->head || !ops->pack || !ops->unpack || !ops->finish)
    m->err = BALLAST_EINVAL;
  if (!m->err && ops->start) {
    int rc = ops->start(m->ctx);
    if (rc < 0)
      m->err = rc;
  }
  if (!m->err && m->nmoves > 0) {
    m->out = ballast__calloc((size_t)m->nmoves, sizeof *m->out);
    if (!m->out)
      m->err = BALLAST_ENOMEM;
  }
  size_t words = 0;
  for (int i = 0; !m->err && i < m->nmoves; i++) {
    item_t *x = &m->out[i];
    const mig__move_t *mv = &moves[i];
    if (mv->dest < 0 || mv->dest >= m->nprocs || mv->dest == m->rank) {
      BALLAST_WARN("migration: task %lld has destination %d (comm size %d, own rank %d)",
                   (long long)mv->task, mv->dest, m->nprocs, m->rank);
      m->err = BALLAST_EINVAL;
      break;
    }
    x->task = mv->task;
    x->peer = mv->dest;
    int rc = ops->size(m->ctx, mv->task, &x->head, &x->tail);
    if (rc >= 0 && x->head > 0) {
      /* Asked now: the header carries its address for a peer that reads. */
      const void *ptr = NULL;
      int hr = ops->head(m->ctx, x->task, &ptr);
      if (hr < 0 || !ptr) {
        BALLAST_WARN("migration: no head for task %lld", (long long)x->task);
        m->err = hr < 0 ? hr : BALLAST_EINVAL;
        break;
      }
      x->hsend = ptr;
    }
    if (rc < 0) {
      BALLAST_WARN("migration: size callback of task %lld failed: %s",
                   (long long)mv->task, ballast_strerror(rc));
      m->err = BALLAST_ECALLBACK;
    } else if (x->head > (size_t)INT_MAX || x->tail > (size_t)INT_MAX) {
      /* One MPI message per part, counted in bytes as an int. */
      BALLAST_WARN("migration: task %lld has %zu + %zu bytes of state, more than "
                   "the %d one message can carry", (long long)mv->task,
                   x->head, x->tail, INT_MAX);
      m->err = BALLAST_ETOOBIG;
    }
    if (!m->err)
      words += ask_meta(m, x);
  }
  alloc_headers(m, words);
}

/* 2. Rounds: greedy over the moves in destination order, each round packing
 * at most `budget` bytes (and at least one task). Rounds bound the staging
 * memory, the tails packed and received and the heads a caller copies out
 * of; a head the caller keeps is memory the rank holds after the commit
 * anyway (departed and arrived states are both alive until then, whatever
 * the rounds), so with ops->heads_kept heads that travel in batches are not
 * counted. Each round is an agreement and a wait for the slowest rank:
 * through a load-balancing context (mem_limit 64 MiB, 32 MiB a round on 2
 * ranks) 2,048 states of 64 KiB each way took 4 rounds against the
 * Alltoallv's one, and one round moved them in 0.75-0.8 of the exchange
 * time (bench_lb_remap case 11, quiet). Heads that travel alone still
 * count: the rounds are then also the window of messages in flight, and
 * 1,024 heads of 256 KiB each way in one round ran at 0.70-0.75 of
 * Alltoallv against 0.96-1.02 in two (bench_lb_migrate, quiet). */
static void plan_rounds(mig_t *m) {
  /* Callers list the moves by destination already (lb: each destination's
   * in key order, the order the destination expects them in): a sort of
   * thousands of items of 100 bytes, which glibc does by merging through a
   * copy, was most of plan_rounds' samples at 4,096 x 4 KiB. */
  int sorted = 1;
  for (int i = 1; sorted && i < m->nmoves; i++)
    sorted = m->out[i - 1].peer <= m->out[i].peer;
  if (!sorted)
    qsort(m->out, (size_t)m->nmoves, sizeof *m->out, cmp_by_peer);
  size_t acc = 0;
  int r = 0;
  for (int i = 0; i < m->nmoves; i++) {
    /* padded as in an aggregate, so no message of a round exceeds it */
    const item_t *x = &m->out[i];
    size_t b = (m->ops->heads_kept && head_in_batch(x) ? 0 : ballast__round8(x->head)) +
               ballast__round8(x->tail);
    if (acc > 0 && acc + b > m->budget) {
      r++;
      acc = 0;
    }
    m->out[i].round = r;
    acc += b;
  }
}

/* ---- heads read from the sender's memory -------------------------------------- */

/* A rank on the same node may read a peer's batch-sized heads itself
 * (Linux cross-memory attach, process_vm_readv) instead of receiving them
 * through Open MPI's shared-memory pipeline. The pipeline hands every 32 KiB
 * fragment between the two ranks through cache lines both touch, so its
 * speed follows the round trip between their cores; a read is one copy by
 * the reader with no hand-over. On the 2-core VM, whose host alternates
 * between running the two vCPUs on cores that share a cache (round trip
 * about 55 ns) and on cores that do not (about 330 ns, bench/core_rtt), 2,048
 * parts of 16 KiB went at 0.92-1.08 of MPI_Alltoallv batched and 0.66-0.89
 * read in the near state, and at 0.26-0.35 batched and 0.50-0.65 read in
 * the far one (bench_mig_parts, hidx 256 against cma; bench/README.md
 * lb_migrate). Neither wins everywhere, so by default each rank chooses
 * from what its last migrations measured (mig__pool_transport), at the
 * price of one migration in nine on the slower one (on the VM at 4 KiB,
 * auto cost the engine 0.07 us per task against batches fixed when batches
 * were the faster: 0.37 against 0.29, three runs); BALLAST_LB_TRANSPORT
 * fixes the choice. */

/* What each rank reads at a peer to learn that it may read there at all
 * (the kernel checks ptrace permission per process pair). */
static const volatile uint64_t probe_word = 0x2174736162616c62ull; /* "ballast!" */

/* A number naming this node, the same in every process on it. */
static int node_id(void) {
  static int id, known;
  if (!known) {
    char name[MPI_MAX_PROCESSOR_NAME];
    int len = 0;
    if (MPI_Get_processor_name(name, &len) != MPI_SUCCESS)
      len = 0;
    id = (int)(uint32_t)ballast__fnv1a(BALLAST__FNV_OFFSET, name, (size_t)len);
    known = 1;
  }
  return id;
}

/* This rank's transport for the heads it receives: BALLAST_LB_TRANSPORT,
 * else the pool's choice (batches without a pool). */
static int choose_transport(const mig_t *m) {
  int mode = 0; /* auto,batch,read */
  if (ballast__env_enum("BALLAST_LB_TRANSPORT", &mode) != 1)
    mode = 0;
  if (!MIG_CMA || mode == 1)
    return MIG__BATCH;
  if (mode == 2)
    return MIG__READ;
  return mig__pool_transport(m->pool);
}

/* Which peers this rank reads from: those on its node that send it states,
 * when it chose to read and the probe word reads back. */
static void decide_reads(mig_t *m) {
#if MIG_CMA
  for (int p = 0; p < m->nprocs; p++) {
    const int *w = &m->rpair[PAIR_WORDS * p];
    m->read_from[p] = 0;
    if (m->transport != MIG__READ || p == m->rank || w[0] <= 1 || w[3] != node_id())
      continue;
    uint64_t got = 0, addr = (uint64_t)(uint32_t)w[4] | (uint64_t)(uint32_t)w[5] << 32;
    struct iovec l = {&got, sizeof got}, r = {(void *)(uintptr_t)addr, sizeof got};
    if (process_vm_readv((pid_t)w[2], &l, 1, &r, 1, 0) == (ssize_t)sizeof got &&
        got == probe_word)
      m->read_from[p] = 1;
    else
      BALLAST_DEBUG("migration: cannot read rank %d's memory (%s): its states "
                    "come through MPI", p, strerror(errno));
  }
#else
  (void)m;
#endif
}

/* Reads round r's heads from the peers this rank reads from into their
 * receive buffers, IOV_MAX (1,024) parts a call per peer. The sources stay
 * as they are until every rank has passed the agreement after the last
 * round: the caller frees a departed state only at the commit. */
static void read_heads(mig_t *m, int r) {
#if MIG_CMA
  enum { IOVS = 1024 };
  struct iovec l[IOVS], rv[IOVS];
  int n = 0, peer = -1;
  size_t want = 0;
  for (int i = 0; i <= m->nin && !m->err; i++) {
    const item_t *x = i < m->nin ? &m->in[i] : NULL;
    int use = x && x->round == r && x->read;
    if (n > 0 && (!x || n == IOVS || (use && x->peer != peer))) {
      pid_t pid = (pid_t)m->rpair[PAIR_WORDS * peer + 2];
      ssize_t got = process_vm_readv(pid, l, (unsigned long)n, rv, (unsigned long)n, 0);
      if (got != (ssize_t)want) {
        BALLAST_WARN("migration: reading %zu bytes of states from rank %d's "
                     "memory failed (%zd read: %s)", want, peer, got,
                     got < 0 ? strerror(errno) : "short");
        m->err = got < 0 ? BALLAST_EIO : BALLAST_ESIZE;
      }
      m->st.heads_read += n;
      n = 0;
      want = 0;
    }
    if (!use)
      continue;
    peer = x->peer;
    l[n] = (struct iovec){x->hbuf, x->head};
    rv[n] = (struct iovec){(void *)(uintptr_t)x->raddr, x->head};
    want += x->head;
    n++;
  }
#else
  (void)m;
  (void)r;
#endif
}

/* 3a. Header counts, with the rounds of every rank (every rank runs the
 * most any has: one collective fewer than agreeing on them apart), what a
 * peer needs to read this rank's memory, then everything sized by them:
 * the incoming items and the arrays of one round's requests and batch
 * parts. Each peer's header words start with one word: whether the sender
 * of that block reads the receiver's heads (decide_reads). */
static void exchange_counts(mig_t *m) {
  int myrounds = m->nmoves > 0 ? m->out[m->nmoves - 1].round + 1 : 0;
  uint64_t probe = (uint64_t)(uintptr_t)&probe_word;
  for (int p = 0; p < m->nprocs; p++) {
    m->scount[p] = p != m->rank;
    m->spair[PAIR_WORDS * p + 6] = 0;
  }
  for (int i = 0; i < m->nmoves; i++) {
    const item_t *x = &m->out[i];
    m->scount[x->peer] += HDR_WORDS + (int)(ballast__round8(x->mlen) / 8);
    m->spair[PAIR_WORDS * x->peer + 6]++;
  }
  for (int p = 0; p < m->nprocs; p++) {
    int *w = &m->spair[PAIR_WORDS * p];
    w[0] = m->scount[p];
    w[1] = myrounds;
    w[2] = (int)getpid();
    w[3] = node_id();
    w[4] = (int)(uint32_t)probe;
    w[5] = (int)(uint32_t)(probe >> 32);
  }
  if (MPI_Alltoall(m->spair, PAIR_WORDS, MPI_INT, m->rpair, PAIR_WORDS, MPI_INT,
                   m->comm) != MPI_SUCCESS)
    m->err = BALLAST_EMPI;
  m->nrounds = 0;
  long long total_in = 0, nin = 0;
  for (int p = 0; p < m->nprocs; p++) {
    const int *w = &m->rpair[PAIR_WORDS * p];
    m->rcount[p] = m->err ? 0 : w[0];
    if (!m->err && w[1] > m->nrounds)
      m->nrounds = w[1];
    int items = m->err ? 0 : w[6];
    if (!m->err && (items < 0 || items > (m->rcount[p] - (p != m->rank)) / HDR_WORDS))
      m->err = BALLAST_ESIZE; /* not a peer of this protocol */
    nin += items > 0 ? items : 0;
    m->sdisp[p] = p ? m->sdisp[p - 1] + m->scount[p - 1] : 0;
    m->rdisp[p] = p ? m->rdisp[p - 1] + m->rcount[p - 1] : 0;
    total_in += m->rcount[p];
  }
  if (!m->err)
    decide_reads(m);
  for (int p = 0, i = 0, k = 0; p < m->nprocs; p++) {
    if (p != m->rank)
      m->sh[k++] = m->read_from[p];
    for (; i < m->nmoves && m->out[i].peer == p; i++) {
      const item_t *x = &m->out[i];
      m->sh[k++] = x->task;
      m->sh[k++] = (int64_t)x->head;
      m->sh[k++] = (int64_t)x->tail;
      m->sh[k++] = x->round;
      m->sh[k++] = (int64_t)(uintptr_t)x->hsend;
      m->sh[k++] = (int64_t)x->mlen;
      if (x->mlen > 0) { /* the padding too: no uninitialised bytes sent */
        m->sh[k + (int)(ballast__round8(x->mlen) / 8) - 1] = 0;
        memcpy(&m->sh[k], x->meta, x->mlen);
        k += (int)(ballast__round8(x->mlen) / 8);
      }
    }
  }
  if (!m->err && nin > INT_MAX)
    m->err = BALLAST_ESIZE;
  m->nin = m->err ? 0 : (int)nin;
  /* Requests per round: at most two per state (head, tail) when each part is
   * a message of its own; an aggregate or a batch replaces at least one such
   * part, so the two per peer below are slack. */
  size_t nreq_max = 2 * (size_t)m->nmoves + 2 * (size_t)m->nin + 2 * (size_t)m->nprocs + 1;
  m->rh = ballast__malloc(sizeof *m->rh * (size_t)(total_in > 0 ? total_in : 1));
  m->in = ballast__calloc((size_t)(m->nin > 0 ? m->nin : 1), sizeof *m->in);
  m->rslot = ballast__malloc(sizeof *m->rslot * nreq_max);
  m->reqs = ballast__malloc(sizeof *m->reqs * nreq_max);
  m->sts = ballast__malloc(sizeof *m->sts * nreq_max);
  size_t nparts = 2 * ((size_t)m->nmoves + (size_t)m->nin) + 1;
  /* A message is cut once it has BATCH_PARTS parts or more, after an item
   * that may add two (head and tail): room for one more. */
  m->bdisp = ballast__malloc(sizeof *m->bdisp * (BATCH_PARTS + 1));
  m->blen = ballast__malloc(sizeof *m->blen * (BATCH_PARTS + 1));
  m->bat = ballast__malloc(sizeof *m->bat * nparts);
  if (!m->rh || !m->in || !m->rslot || !m->reqs || !m->sts || !m->bdisp ||
      !m->blen || !m->bat)
    m->err = BALLAST_ENOMEM;
}

/* The headers from peer p (words [w, end), after its read word): its
 * incoming items from in[k] on, each told to the caller (ops->announce).
 * Returns the next item's index. */
static int read_headers(mig_t *m, int p, const int64_t *w, const int64_t *end,
                        int k) {
  while (w < end && !m->err) {
    size_t mw = end - w < HDR_WORDS ? 0 : ballast__round8((size_t)w[5]) / 8;
    if (k >= m->nin || end - w < HDR_WORDS || w[5] < 0 ||
        mw > (size_t)(end - w - HDR_WORDS)) {
      BALLAST_WARN("migration: the headers from rank %d do not add up", p);
      m->err = BALLAST_ESIZE;
      break;
    }
    item_t *x = &m->in[k++];
    x->task = w[0];
    x->peer = p;
    x->head = (size_t)w[1];
    x->tail = (size_t)w[2];
    x->round = (int)w[3];
    x->raddr = (uint64_t)w[4];
    x->read = m->read_from[p] && head_in_batch(x);
    if (m->ops->announce) {
      int rc = m->ops->announce(m->ctx, x->task, p, w + HDR_WORDS, (size_t)w[5],
                                x->head, x->tail);
      if (rc < 0) {
        BALLAST_WARN("migration: task %lld from rank %d was refused: %s",
                     (long long)x->task, p, ballast_strerror(rc));
        m->err = rc == BALLAST_ESIZE ? BALLAST_ESIZE : BALLAST_ECALLBACK;
      }
    }
    w += HDR_WORDS + mw;
  }
  return k;
}

/* 3b. The headers themselves, each incoming item announced to the caller.
 * A failure here is caught by the agreement that opens the first round,
 * before any state moves. A batch-sized head travels by read when its
 * destination said it reads its source. */
static void exchange_headers(mig_t *m) {
  if (MPI_Alltoallv(m->sh, m->scount, m->sdisp, MPI_INT64_T, m->rh, m->rcount,
                    m->rdisp, MPI_INT64_T, m->comm) != MPI_SUCCESS)
    m->err = BALLAST_EMPI;
  int k = 0;
  for (int p = 0; p < m->nprocs && !m->err; p++) {
    const int64_t *w = m->rh + m->rdisp[p], *end = w + m->rcount[p];
    m->read_by[p] = p != m->rank && w < end && *w++ != 0;
    k = read_headers(m, p, w, end, k);
  }
  if (!m->err && k != m->nin) {
    BALLAST_WARN("migration: %d headers received, %d announced", k, m->nin);
    m->err = BALLAST_ESIZE;
  }
  for (int i = 0; i < m->nmoves && !m->err; i++)
    m->out[i].read = m->read_by[m->out[i].peer] && head_in_batch(&m->out[i]);
}

/* 4a. Receive buffers of round r: offsets in the aggregates, a buffer of
 * its own for each head and each tail outside the aggregate, and the
 * aggregates. */
static void alloc_receives(mig_t *m, int r) {
  for (int i = 0; i < m->nin && !m->err; i++) {
    item_t *x = &m->in[i];
    if (x->round != r)
      continue;
    if (tail_in_agg(x)) {
      x->off = m->peer[x->peer].rlen;
      m->peer[x->peer].rlen += agg_bytes(x);
    }
    if (x->head > 0 && !(x->hbuf = mig__pool_take_len(m->pool, x->head, &x->hcap)))
      m->err = BALLAST_ENOMEM;
    if (!m->err && x->tail > 0 && !tail_in_agg(x) &&
        !(x->tbuf = mig__pool_take_len(m->pool, x->tail, &x->tcap)))
      m->err = BALLAST_ENOMEM;
    m->arrived += ballast__large_len(x->head) + (tail_in_agg(x) ? 0 : ballast__large_len(x->tail));
    if (m->err)
      BALLAST_WARN("migration: cannot allocate %zu bytes for task %lld from rank %d",
                   x->head + x->tail, (long long)x->task, x->peer);
  }
  for (int p = 0; p < m->nprocs && !m->err; p++) {
    peer_t *q = &m->peer[p];
    if (q->rlen > 0 && !(q->ragg = mig__pool_take_len(m->pool, q->rlen, &q->rcap)))
      m->err = BALLAST_ENOMEM;
  }
}

/* Packs one outgoing state: its tail into the aggregate or a buffer of its
 * own (its head is sent from the caller's memory, asked in size_moves). */
static int pack_one(mig_t *m, item_t *x) {
  unsigned char *agg = tail_in_agg(x) ? m->peer[x->peer].sagg + x->off : NULL;
  if (x->tail == 0)
    return 0;
  void *dst = agg; /* NULL: a buffer and a message of its own */
  if (!dst && !(dst = x->tbuf = mig__pool_take_len(m->pool, x->tail, &x->tcap))) {
    BALLAST_WARN("migration: cannot allocate %zu bytes to pack task %lld",
                 x->tail, (long long)x->task);
    return BALLAST_ENOMEM;
  }
  int rc = m->ops->pack(m->ctx, x->task, dst, x->tail);
  if (rc < 0) {
    BALLAST_WARN("migration: pack callback of task %lld failed: %s",
                 (long long)x->task, ballast_strerror(rc));
    return rc == BALLAST_ESIZE ? BALLAST_ESIZE : BALLAST_ECALLBACK;
  }
  if (agg)
    memset((unsigned char *)dst + x->tail, 0, ballast__round8(x->tail) - x->tail);
  return 0;
}

/* 4b. The outgoing states out[oi, oend) of round r: their aggregates, then
 * packed. */
static void pack_sends(mig_t *m, int oi, int oend) {
  for (int i = oi; i < oend; i++) {
    item_t *x = &m->out[i];
    if (tail_in_agg(x)) {
      x->off = m->peer[x->peer].slen;
      m->peer[x->peer].slen += agg_bytes(x);
    }
  }
  for (int p = 0; p < m->nprocs && !m->err; p++) {
    peer_t *q = &m->peer[p];
    if (q->slen > 0 && !(q->sagg = mig__pool_take_len(m->pool, q->slen, &q->scap)))
      m->err = BALLAST_ENOMEM;
  }
  for (int i = oi; i < oend && !m->err; i++)
    m->err = pack_one(m, &m->out[i]);
}

/* 4c. Receives first (aggregates, batches). rslot[k] says what request k
 * receives: -1-p for peer p's aggregate, -1-nprocs-b for batch message b,
 * 2i for the head of incoming item i, 2i+1 for its tail. Returns the
 * number of requests posted. */
static int post_receives(mig_t *m) {
  int nreq = 0;
  for (int p = 0; p < m->nprocs; p++) {
    const peer_t *q = &m->peer[p];
    if (q->rlen > 0 && !q->rfold) {
      m->rslot[nreq] = -1 - p;
      MPI_Irecv(q->ragg, (int)q->rlen, MPI_BYTE, p, MIGRATE_TAG + 1, m->comm,
                &m->reqs[nreq++]);
    }
  }
  for (int b = 0; b < m->nbat; b++)
    if (!m->bat[b].send) {
      m->rslot[nreq] = -1 - m->nprocs - b;
      MPI_Irecv(MPI_BOTTOM, 1, m->bat[b].type, m->bat[b].peer, MIGRATE_TAG + 3,
                m->comm, &m->reqs[nreq++]);
    }
  return nreq;
}

/* 4d. Then the sends of aggregates and batches, after the nreq requests
 * posted. */
static int post_sends(mig_t *m, int nreq) {
  for (int p = 0; p < m->nprocs; p++) {
    const peer_t *q = &m->peer[p];
    if (q->slen > 0 && !q->sfold)
      MPI_Isend(q->sagg, (int)q->slen, MPI_BYTE, p, MIGRATE_TAG + 1, m->comm,
                &m->reqs[nreq++]);
  }
  for (int b = 0; b < m->nbat; b++)
    if (m->bat[b].send)
      MPI_Isend(MPI_BOTTOM, 1, m->bat[b].type, m->bat[b].peer, MIGRATE_TAG + 3,
                m->comm, &m->reqs[nreq++]);
  return nreq;
}

/* 4e. Waits for every request, then checks that each of the nrecv receives
 * brought the bytes its header announced. */
static void wait_all(mig_t *m, int nreq, int nrecv) {
  if (MPI_Waitall(nreq, m->reqs, m->sts) != MPI_SUCCESS)
    m->err = BALLAST_EMPI;
  for (int k = 0; k < nrecv && !m->err; k++) {
    int s = m->rslot[k], got = -1;
    if (s < -m->nprocs) {
      /* A batch is counted in its own datatype (MPI_UNDEFINED when short). */
      const batch_t *b = &m->bat[-1 - m->nprocs - s];
      MPI_Get_count(&m->sts[k], b->type, &got);
      if (got != 1) {
        BALLAST_WARN("migration: a batch from rank %d is not the %zu bytes "
                     "announced", b->peer, b->bytes);
        m->err = BALLAST_ESIZE;
      }
      continue;
    }
    MPI_Get_count(&m->sts[k], MPI_BYTE, &got);
    size_t want = s < 0 ? m->peer[-1 - s].rlen
                        : (s % 2 ? m->in[s / 2].tail : m->in[s / 2].head);
    if ((size_t)got != want) {
      BALLAST_WARN("migration: %d bytes received from rank %d, %zu announced",
                   got, m->sts[k].MPI_SOURCE, want);
      m->err = BALLAST_ESIZE;
    }
  }
}

/* 4f. The parts that travel alone, of items v[lo, hi) in round r:
 * received (send = 0) into their buffers or sent, after the nreq requests
 * posted, each peer's in item order (head before tail). Returns the number
 * of requests posted. All at once, not in windows of a few parts per peer:
 * a window is a wait for the peer, and on a loaded machine each wait costs
 * a scheduling round (bench/README.md, lb_migrate). */
static int post_alone(mig_t *m, const item_t *v, int lo, int hi, int r,
                      int send, int nreq) {
  for (int i = lo; i < hi; i++) {
    const item_t *x = &v[i];
    if (x->round != r)
      continue;
    for (int part = 0; part < 2; part++) {
      if (!(part ? tail_alone(x) : head_alone(x)))
        continue;
      int tag = MIGRATE_TAG + 2 * part;
      size_t len = part ? x->tail : x->head;
      if (send) {
        MPI_Isend(part ? x->tbuf : x->hsend, (int)len, MPI_BYTE, x->peer, tag,
                  m->comm, &m->reqs[nreq++]);
      } else {
        m->rslot[nreq] = 2 * i + part;
        MPI_Irecv(part ? x->tbuf : x->hbuf, (int)len, MPI_BYTE, x->peer, tag,
                  m->comm, &m->reqs[nreq++]);
      }
    }
  }
  return nreq;
}

/* 4g. The round's messages: every receive (aggregates, batches, parts
 * alone), then every send, then the heads this rank reads, then one wait;
 * timed for the pool's choice of transport. */
static void exchange_round(mig_t *m, int r, int oi, int oend) {
  double t0 = MPI_Wtime();
  int nrecv = post_alone(m, m->in, 0, m->nin, r, 0, post_receives(m));
  int nreq = post_alone(m, m->out, oi, oend, r, 1, post_sends(m, nrecv));
  read_heads(m, r); /* while the messages are in flight */
  wait_all(m, nreq, nrecv);
  m->xfer_s += MPI_Wtime() - t0;
}

/* Hands one received state to unpack, which stages it. */
static void unpack_one(mig_t *m, item_t *x) {
  const unsigned char *tail = tail_in_agg(x) ? m->peer[x->peer].ragg + x->off
                                             : (const unsigned char *)x->tbuf;
  if (x->tail == 0)
    tail = no_tail;
  int rc = m->ops->unpack(m->ctx, x->task, x->peer, &x->hbuf, x->head, tail, x->tail);
  if (rc < 0) {
    BALLAST_WARN("migration: unpack of task %lld from rank %d failed: %s",
                 (long long)x->task, x->peer, ballast_strerror(rc));
    m->err = rc == BALLAST_ESIZE ? BALLAST_ESIZE : BALLAST_ECALLBACK;
  } else {
    x->staged = 1;
    m->st.tasks_received++;
    m->st.bytes_received += x->head + x->tail;
  }
  give_item(m, x);
}

/* 4f. Unpacks round r's arrivals, then returns every buffer of the round
 * (out[oi, oend) sent) to the pool. */
static void unpack_round(mig_t *m, int r, int oi, int oend) {
  for (int i = 0; i < m->nin; i++) {
    item_t *x = &m->in[i];
    if (x->round != r || m->err)
      continue;
    unpack_one(m, x);
  }
  for (int i = 0; i < m->nin; i++)
    if (m->in[i].round == r)
      give_item(m, &m->in[i]);
  give_aggregates(m);
  free_types(m);
  for (int i = oi; i < oend; i++) {
    mig__pool_give(m->pool, m->out[i].tbuf, m->out[i].tcap);
    m->out[i].tbuf = NULL;
    m->st.tasks_sent++;
    m->st.bytes_sent += m->out[i].head + m->out[i].tail;
  }
  m->st.rounds++;
}

/* 4. Rounds: allocate and pack, agree, transfer, unpack. The agreement
 * before any byte moves means a failed allocation or pack stops every rank
 * at the same round, with no message left in flight.
 * Per peer and round there is at most one aggregate (tails below 64 KiB;
 * below 128 KiB in all, the first part of the batch), a batch (heads below
 * 128 KiB and tails of 64 to 128 KiB, hindexed datatypes over their own
 * memory, BATCH_PARTS parts a message), and a message for each part of
 * 128 KiB or more. So a remap of thousands of small
 * tasks costs a few messages, not thousands of requests, and ballast
 * copies no head. Both sides
 * post a peer's messages of one kind in header order, which MPI's ordering
 * of matching messages preserves. Nonzero when the rounds stopped on an
 * agreed failure. */
static int run_rounds(mig_t *m) {
  int oi = 0; /* first outgoing item of the current round */
  for (int r = 0; r < m->nrounds; r++) {
    int oend = oi;
    while (oend < m->nmoves && m->out[oend].round == r)
      oend++;
    for (int p = 0; p < m->nprocs; p++) {
      m->peer[p].slen = m->peer[p].rlen = 0;
      m->peer[p].sfold = m->peer[p].rfold = 0;
    }
    /* Incoming items are grouped by source, each source's rounds ascending:
     * alloc_receives selects this round's items wherever they are. */
    alloc_receives(m, r);
    pack_sends(m, oi, oend);
    if (!m->err)
      m->err = build_batches(m, m->out, oi, oend, r, 1);
    if (!m->err)
      m->err = build_batches(m, m->in, 0, m->nin, r, 0);
    lap(m, MIG__PH_PACK);
    if (agree(m))
      return 1;
    exchange_round(m, r, oi, oend);
    lap(m, MIG__PH_XFER);
    unpack_round(m, r, oi, oend);
    lap(m, MIG__PH_UNPACK);
    oi = oend;
  }
  return 0;
}

/* What this migration's exchanges measured, for the pool's next choice:
 * only a migration that received 1 MiB or more of batch-sized heads, most
 * of them into memory the pool had, says anything about their transport
 * (a first migration receives into fresh pages, whose faults cost more
 * than either transport: 28 ms against 10-12 ms for 2,048 states of 16 KiB
 * on the VM, which made the batches of a first migration look slow). */
static void note_transport(mig_t *m) {
  long long misses = 0;
  mig__pool_info(m->pool, NULL, NULL, NULL, &misses);
  if (4 * (misses - m->misses0) > m->nin)
    return;
  size_t batched = 0;
  for (int i = 0; i < m->nin; i++)
    batched += head_in_batch(&m->in[i]) ? m->in[i].head : 0;
  if (batched >= ((size_t)1 << 20))
    mig__pool_transport_note(m->pool,
                                 m->st.heads_read > 0 ? MIG__READ : MIG__BATCH,
                                 m->xfer_s,
                                 (size_t)(m->st.bytes_sent + m->st.bytes_received));
}

/* 5. Commit everywhere or roll back everywhere, then free everything. */
static void finish(mig_t *m) {
  int outcome = (m->who < 0) ? MIG__COMMIT : MIG__ROLLBACK;
  const mig__ops_t *ops = m->ops;
  if (outcome == MIG__COMMIT) { /* before the departed states reach the pool */
    mig__pool_follow(m->pool, m->arrived);
    note_transport(m);
  }
  if (ops && ops->finish) {
    for (int i = 0; i < m->nmoves && m->out; i++)
      ops->finish(m->ctx, m->out[i].task, 1, outcome);
    for (int i = 0; i < m->nin && m->in; i++)
      if (m->in[i].staged)
        ops->finish(m->ctx, m->in[i].task, 0, outcome);
  }
  for (int i = 0; i < m->nmoves && m->out; i++)
    mig__pool_give(m->pool, m->out[i].tbuf, m->out[i].tcap);
  for (int i = 0; i < m->nin && m->in; i++) {
    mig__pool_give(m->pool, m->in[i].hbuf, m->in[i].hcap);
    mig__pool_give(m->pool, m->in[i].tbuf, m->in[i].tcap);
  }
  give_aggregates(m);
  free_types(m);
  free(m->out);
  free(m->in);
  free(m->sh);
  free(m->rh);
  free(m->scount); /* and rcount, sdisp, rdisp: one block */
  free(m->peer);
  free(m->reqs);
  free(m->sts);
  free(m->bdisp);
  free(m->blen);
  free(m->bat);
  free(m->rslot);
}

/* The agreed outcome as the caller sees it: stats and the return code. */
static int report(mig_t *m, double t0, mig__stats_t *stats) {
  mig__stats_t *st = &m->st;
  st->failed_rank = m->who;
  st->failed_code = m->code;
  st->seconds = MPI_Wtime() - t0;
  if (m->who >= 0) {
    st->tasks_sent = st->tasks_received = 0;
    st->bytes_sent = st->bytes_received = 0;
    if (m->who == m->rank)
      BALLAST_WARN("migration rolled back: this rank failed with %s",
                   ballast_err_name(m->code));
  }
  if (stats)
    *stats = *st;
  if (m->who < 0)
    return 0;
  return m->who == m->rank ? m->code : BALLAST_EREMOTE;
}

/* The engine's failure injection is common's allocation hook, armed when
 * the next migration starts so that n counts from the engine's first
 * allocation (callers' own allocations before it, lb's planning, do not
 * count). While that migration runs, a block the pool serves from its
 * cache counts as an allocation too, as it always has for this hook: a
 * sweep over n then fails every take in turn, not only those the cache
 * could not serve. The hook stays armed after the migration (a test reads
 * ballast__alloc_count() to know whether its sweep is complete) until
 * mig__fail_alloc_after(0) or ballast__alloc_fail_after(0). */
static int fail_alloc_at_start; /* 0: no migration arms the hook */

void mig__fail_alloc_after(int n) {
  fail_alloc_at_start = n > 0 ? n : 0;
  if (n <= 0)
    ballast__alloc_fail_after(0);
}

int mig__run(MPI_Comm comm, const mig__move_t *moves, int nmoves,
                 const mig__ops_t *ops, void *ctx, size_t mem_limit,
                 mig__pool_t *pool, mig__stats_t *stats) {
  mig_t m = {.comm = comm, .ops = ops, .ctx = ctx, .pool = pool,
             .nmoves = nmoves, .who = -1};
  m.st.failed_rank = -1;
  double t0 = MPI_Wtime();
  m.mark = t0;
  MPI_Comm_rank(comm, &m.rank);
  MPI_Comm_size(comm, &m.nprocs);
  if (mem_limit == 0)
    mem_limit = MIG__MEM_DEFAULT;
  m.budget = mem_limit / (size_t)m.nprocs;
  if (m.budget == 0)
    m.budget = 1;
  /* An aggregate or a batch of one round must count its bytes in an int. */
  if (m.budget > (size_t)INT_MAX / 2)
    m.budget = (size_t)INT_MAX / 2;

  int armed = fail_alloc_at_start;
  if (armed) {
    ballast__alloc_fail_after(armed);
    mig__pool_count_hits(1);
    fail_alloc_at_start = 0;
  }
  /* Each agreement covers the local steps since the one before; after a
   * failure every rank skips to finish, which rolls back. */
  ballast__lib_begin();
  m.transport = choose_transport(&m);
  mig__pool_info(pool, NULL, NULL, NULL, &m.misses0);
  alloc_per_peer(&m);
  size_moves(&m, moves);
  if (!agree(&m)) {
    plan_rounds(&m);
    exchange_counts(&m);
    if (!agree(&m)) {
      exchange_headers(&m);
      lap(&m, MIG__PH_PLAN);
      if (!run_rounds(&m))
        agree(&m);
    }
  }
  lap(&m, MIG__PH_XFER); /* the agreement after a failure, or the last */
  finish(&m);
  lap(&m, MIG__PH_COMMIT);
  ballast__lib_end();
  if (armed)
    mig__pool_count_hits(0);
  return report(&m, t0, stats);
}
