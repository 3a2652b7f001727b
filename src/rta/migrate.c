/* rta's migration engine: bounded-memory transport of task states with an
 * all-or-nothing commit. The protocol is described in migrate.h. */
#include "rta/migrate.h"

#include <ballast/common.h>

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "common_internal.h"
#include "mon/mon_internal.h"
#include "rta/rta_internal.h"

#define MIGRATE_TAG 0x6d67 /* "mg" */
#define DEFAULT_MEM_LIMIT ((size_t)64 << 20)
#define AGG_MAX ((size_t)64 << 10) /* smaller states share one message per peer */

static int fail_alloc_countdown; /* test hook; 0 = off */

void rta__migrate_fail_alloc_after(int n) { fail_alloc_countdown = n; }

static void *mig_malloc(size_t n) {
  if (fail_alloc_countdown > 0 && --fail_alloc_countdown == 0)
    return NULL;
  return malloc(n ? n : 1);
}

/* A receive buffer of a large state. Fresh memory costs a page fault per
 * 4 KiB page on first touch, which is most of a large migration's time on a
 * virtual machine (10 ms per MiB measured on the 2-core VM, against 0.2 ms
 * per MiB for memory already touched). Buffers of 1 MiB and more are
 * therefore aligned to 2 MiB and offered transparent huge pages (Linux
 * madvise; elsewhere this is a plain aligned allocation): one fault per
 * 2 MiB. A buffer between 1 and 2 MiB is given the whole 2 MiB so it can
 * be one huge page. The memory is freed with free(), as adopters expect. */
#define HUGE_BYTES ((size_t)2 << 20)
static void *mig_malloc_large(size_t n) {
  if (n < HUGE_BYTES / 2)
    return mig_malloc(n);
  if (fail_alloc_countdown > 0 && --fail_alloc_countdown == 0)
    return NULL;
  size_t len = n < HUGE_BYTES ? HUGE_BYTES : n;
  void *p = NULL;
  if (posix_memalign(&p, HUGE_BYTES, len) != 0)
    return NULL;
#ifdef MADV_HUGEPAGE
  (void)madvise(p, len & ~(HUGE_BYTES - 1), MADV_HUGEPAGE);
#endif
  return p;
}

typedef struct {
  int64_t task, bytes, round;
} header_t;

typedef struct {
  int64_t task;
  int peer;
  size_t bytes;
  int round;
  void *buf;        /* pack buffer (owned) or NULL when sent directly */
  const void *send; /* what goes on the wire */
  int staged;       /* incoming: unpack succeeded */
  size_t off;       /* small states: offset in the peer's aggregate */
} item_t;


static int cmp_by_peer(const void *a, const void *b) {
  const item_t *x = a, *y = b;
  if (x->peer != y->peer)
    return x->peer < y->peer ? -1 : 1;
  return 0;
}

int rta__migrate(MPI_Comm comm, const rta__move_t *moves, int nmoves,
                 const rta__migrate_ops_t *ops, void *ctx, size_t mem_limit,
                 rta__migrate_stats_t *stats) {
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

  mon__lib_begin();
  int err = 0, who = -1, code = 0;
  item_t *out = NULL, *in = NULL;
  header_t *sh = NULL, *rh = NULL;
  int *scount = NULL, *rcount = NULL, *sdisp = NULL, *rdisp = NULL;
  MPI_Request *reqs = NULL;
  unsigned char **sagg = NULL, **ragg = NULL; /* per peer, one round */
  size_t *slen = NULL, *rlen = NULL;
  int *rslot = NULL;
  int nin = 0, nrounds = 0;

  /* Everything sized by the communicator or by this rank's moves is
   * allocated now, so one agreement covers it with the sizes (fewer
   * collectives: each costs a scheduling round trip on a loaded machine). */
  scount = calloc((size_t)nprocs, sizeof *scount);
  rcount = calloc((size_t)nprocs, sizeof *rcount);
  sdisp = calloc((size_t)nprocs, sizeof *sdisp);
  rdisp = calloc((size_t)nprocs, sizeof *rdisp);
  sh = malloc(sizeof *sh * (size_t)(nmoves > 0 ? nmoves : 1));
  sagg = calloc((size_t)nprocs, sizeof *sagg);
  ragg = calloc((size_t)nprocs, sizeof *ragg);
  slen = calloc((size_t)nprocs, sizeof *slen);
  rlen = calloc((size_t)nprocs, sizeof *rlen);
  if (!scount || !rcount || !sdisp || !rdisp || !sh || !sagg || !ragg || !slen ||
      !rlen)
    err = BALLAST_ENOMEM;

  /* 1. Validate and size every outgoing state. A local problem is recorded
   * and the rank still takes part in the agreement below. */
  if (nmoves < 0 || (nmoves > 0 && !moves) || !ops || !ops->size ||
      !ops->pack || !ops->unpack || !ops->finish)
    err = BALLAST_EINVAL;
  if (!err && nmoves > 0) {
    out = calloc((size_t)nmoves, sizeof *out);
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
    int rc = ops->size(ctx, moves[i].task, &out[i].bytes);
    if (rc < 0) {
      BALLAST_WARN("migration: size callback of task %lld failed: %s",
                   (long long)moves[i].task, ballast_strerror(rc));
      err = BALLAST_ECALLBACK;
    } else if (out[i].bytes > (size_t)INT_MAX) {
      /* One MPI message per state, counted in bytes as an int. */
      BALLAST_WARN("migration: task %lld has %zu bytes of state, more than the "
                   "%d one message can carry", (long long)moves[i].task,
                   out[i].bytes, INT_MAX);
      err = BALLAST_ETOOBIG;
    }
  }
  if (rta__agree(comm, err, &who, &code))
    goto done;

  /* 2. Rounds: greedy over the moves in destination order, each round packing
   * at most `budget` bytes (and at least one task). */
  if (nmoves > 0)
    qsort(out, (size_t)nmoves, sizeof *out, cmp_by_peer);
  {
    size_t acc = 0;
    int r = 0;
    for (int i = 0; i < nmoves; i++) {
      if (acc > 0 && acc + out[i].bytes > budget) {
        r++;
        acc = 0;
      }
      out[i].round = r;
      acc += out[i].bytes;
    }
  }

  /* 3. Headers, counts first. */
  for (int i = 0; i < nmoves; i++) {
    scount[out[i].peer] += 3;
    sh[i].task = out[i].task;
    sh[i].bytes = (int64_t)out[i].bytes;
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
  nin = (int)(total_in / 3);
  rh = malloc(sizeof *rh * (size_t)(nin > 0 ? nin : 1));
  in = calloc((size_t)(nin > 0 ? nin : 1), sizeof *in);
  rslot = malloc(sizeof *rslot * (size_t)(nmoves + nin + 2 * nprocs + 1));
  reqs = malloc(sizeof *reqs * (size_t)(nmoves + nin + 2 * nprocs + 1));
  if (!rh || !in || !rslot || !reqs)
    err = BALLAST_ENOMEM;
  if (rta__agree(comm, err, &who, &code))
    goto done;
  if (MPI_Alltoallv(sh, scount, sdisp, MPI_INT64_T, rh, rcount, rdisp,
                    MPI_INT64_T, comm) != MPI_SUCCESS)
    err = BALLAST_EMPI;
  {
    int k = 0;
    for (int p = 0; p < nprocs; p++)
      for (int j = 0; j < rcount[p] / 3; j++, k++) {
        in[k].task = rh[k].task;
        in[k].peer = p;
        in[k].bytes = (size_t)rh[k].bytes;
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
  if (rta__agree(comm, err, &who, &code))
    goto done;

  /* 4. Rounds: allocate and pack, agree, transfer, unpack. The agreement
   * before any byte moves means a failed allocation or pack stops every rank
   * at the same round, with no message left in flight.
   * Small states (below AGG_MAX bytes, known to both sides from the headers)
   * travel together: one message per peer and round, so a remap of thousands
   * of small tasks costs a few messages, not thousands of requests. Larger
   * states travel one message each, sent directly from the application's
   * memory where the caller allows it. */
  int oi = 0; /* first outgoing item of the current round */
  for (int r = 0; r < nrounds; r++) {
    int oend = oi;
    while (oend < nmoves && out[oend].round == r)
      oend++;
    memset(slen, 0, sizeof *slen * (size_t)nprocs);
    memset(rlen, 0, sizeof *rlen * (size_t)nprocs);
    /* Incoming items are grouped by source, each source's rounds ascending:
     * select this round's items wherever they are. */
    for (int i = 0; i < nin && !err; i++) {
      if (in[i].round != r)
        continue;
      if (in[i].bytes < AGG_MAX) {
        in[i].off = rlen[in[i].peer];
        rlen[in[i].peer] += in[i].bytes;
        continue;
      }
      in[i].buf = mig_malloc_large(in[i].bytes);
      if (!in[i].buf) {
        BALLAST_WARN("migration: cannot allocate %zu bytes for task %lld from rank %d",
                     in[i].bytes, (long long)in[i].task, in[i].peer);
        err = BALLAST_ENOMEM;
      }
    }
    for (int p = 0; p < nprocs && !err; p++)
      if (rlen[p] > 0 && !(ragg[p] = mig_malloc_large(rlen[p])))
        err = BALLAST_ENOMEM;
    for (int i = oi; i < oend; i++)
      if (out[i].bytes < AGG_MAX) {
        out[i].off = slen[out[i].peer];
        slen[out[i].peer] += out[i].bytes;
      }
    for (int p = 0; p < nprocs && !err; p++)
      if (slen[p] > 0 && !(sagg[p] = mig_malloc_large(slen[p])))
        err = BALLAST_ENOMEM;
    for (int i = oi; i < oend && !err; i++) {
      const void *ptr = NULL;
      int small = out[i].bytes < AGG_MAX;
      if (ops->direct && ops->direct(ctx, out[i].task, &ptr, out[i].bytes) == 0) {
        if (small)
          memcpy(sagg[out[i].peer] + out[i].off, ptr, out[i].bytes);
        else
          out[i].send = ptr;
        continue;
      }
      void *dst = small ? sagg[out[i].peer] + out[i].off : NULL;
      if (!small) {
        out[i].buf = mig_malloc_large(out[i].bytes);
        dst = out[i].buf;
      }
      if (!dst) {
        BALLAST_WARN("migration: cannot allocate %zu bytes to pack task %lld",
                     out[i].bytes, (long long)out[i].task);
        err = BALLAST_ENOMEM;
        break;
      }
      int rc = ops->pack(ctx, out[i].task, dst, out[i].bytes);
      if (rc < 0) {
        BALLAST_WARN("migration: pack callback of task %lld failed: %s",
                     (long long)out[i].task, ballast_strerror(rc));
        err = rc == BALLAST_ESIZE ? BALLAST_ESIZE : BALLAST_ECALLBACK;
        break;
      }
      out[i].send = out[i].buf;
    }
    if (rta__agree(comm, err, &who, &code))
      goto done;
    /* Receives first (aggregates, then single states), then sends. rslot[k]
     * says what request k receives: -1-p for peer p's aggregate, else the
     * incoming item. */
    int nreq = 0, nrecv = 0;
    for (int p = 0; p < nprocs; p++)
      if (rlen[p] > 0) {
        rslot[nreq] = -1 - p;
        MPI_Irecv(ragg[p], (int)rlen[p], MPI_BYTE, p, MIGRATE_TAG + 1, comm,
                  &reqs[nreq++]);
      }
    for (int i = 0; i < nin; i++)
      if (in[i].round == r && in[i].bytes >= AGG_MAX) {
        rslot[nreq] = i;
        MPI_Irecv(in[i].buf, (int)in[i].bytes, MPI_BYTE, in[i].peer, MIGRATE_TAG,
                  comm, &reqs[nreq++]);
      }
    nrecv = nreq;
    for (int p = 0; p < nprocs; p++)
      if (slen[p] > 0)
        MPI_Isend(sagg[p], (int)slen[p], MPI_BYTE, p, MIGRATE_TAG + 1, comm,
                  &reqs[nreq++]);
    for (int i = oi; i < oend; i++)
      if (out[i].bytes >= AGG_MAX)
        MPI_Isend(out[i].send, (int)out[i].bytes, MPI_BYTE, out[i].peer,
                  MIGRATE_TAG, comm, &reqs[nreq++]);
    MPI_Status *sts = malloc(sizeof *sts * (size_t)(nreq > 0 ? nreq : 1));
    if (!sts || MPI_Waitall(nreq, reqs, sts ? sts : MPI_STATUSES_IGNORE) != MPI_SUCCESS)
      err = err ? err : (sts ? BALLAST_EMPI : BALLAST_ENOMEM);
    for (int k = 0; k < nrecv && !err; k++) {
      int got = -1;
      MPI_Get_count(&sts[k], MPI_BYTE, &got);
      size_t want = rslot[k] < 0 ? rlen[-1 - rslot[k]] : in[rslot[k]].bytes;
      if ((size_t)got != want) {
        BALLAST_WARN("migration: %d bytes received from rank %d, %zu announced",
                     got, sts[k].MPI_SOURCE, want);
        err = BALLAST_ESIZE;
      }
    }
    for (int i = 0; i < nin; i++) {
      if (in[i].round != r || err)
        continue;
      if (in[i].bytes < AGG_MAX) {
        /* The caller may keep what it is given: hand it its own buffer. */
        in[i].buf = mig_malloc(in[i].bytes);
        if (!in[i].buf) {
          err = BALLAST_ENOMEM;
          continue;
        }
        memcpy(in[i].buf, ragg[in[i].peer] + in[i].off, in[i].bytes);
      }
      int rc = ops->unpack(ctx, in[i].task, in[i].peer, &in[i].buf, in[i].bytes);
      if (rc < 0) {
        BALLAST_WARN("migration: unpack of task %lld from rank %d failed: %s",
                     (long long)in[i].task, in[i].peer, ballast_strerror(rc));
        err = rc == BALLAST_ESIZE ? BALLAST_ESIZE : BALLAST_ECALLBACK;
      } else {
        in[i].staged = 1;
        st.tasks_received++;
        st.bytes_received += in[i].bytes;
      }
      free(in[i].buf);
      in[i].buf = NULL;
    }
    free(sts);
    for (int i = 0; i < nin; i++)
      if (in[i].round == r) {
        free(in[i].buf);
        in[i].buf = NULL;
      }
    for (int p = 0; p < nprocs; p++) {
      free(sagg[p]);
      free(ragg[p]);
      sagg[p] = ragg[p] = NULL;
    }
    for (int i = oi; i < oend; i++) {
      free(out[i].buf);
      out[i].buf = NULL;
      st.tasks_sent++;
      st.bytes_sent += out[i].bytes;
    }
    oi = oend;
    st.rounds++;
  }
  rta__agree(comm, err, &who, &code);

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
      free(out[i].buf);
    for (int i = 0; i < nin && in; i++)
      free(in[i].buf);
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
  for (int p = 0; p < nprocs; p++) {
    if (sagg)
      free(sagg[p]);
    if (ragg)
      free(ragg[p]);
  }
  free(sagg);
  free(ragg);
  free(slen);
  free(rlen);
  free(rslot);
  mon__lib_end();
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
