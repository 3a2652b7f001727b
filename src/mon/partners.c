/*
 * The per-partner communication matrix, kept sparse: one uthash per thread
 * keyed by (region, world rank of the partner); region -1 holds the whole
 * run. Each entry counts bytes and messages sent to the partner (sends, puts,
 * accumulates) and, apart, received from it (receives, gets).
 *
 * The owning thread looks entries up without a lock (it is the only thread
 * that changes the table's shape) and takes its table's mutex only to insert
 * a new entry. Readers on other threads take that mutex for their lookup, and
 * counters are relaxed atomics, so a read is safe while MPI calls run.
 */
#include <stdlib.h>
#include <string.h>

#include "common/common_internal.h"
#include "mon/mon_core.h"

#undef uthash_fatal
#define uthash_fatal(msg) abort()
#include <uthash.h>

#define P_BLOCK 1024

struct mon__pentry {
  int64_t key; /* region << 32 | partner; region -1 for the whole run */
  uint64_t bytes, msgs, rbytes, rmsgs;
  mon__pentry_t *whole; /* a region's entry: the same partner's whole-run entry */
  UT_hash_handle hh;
};

static inline int64_t pkey(int region, int partner) {
  return (int64_t)(((uint64_t)(uint32_t)region << 32) | (uint32_t)partner);
}

static inline unsigned phash(int64_t k) {
  uint64_t h = (uint64_t)k * 0x9e3779b97f4a7c15ULL;
  return (unsigned)(h >> 32);
}

static mon__pentry_t *pentry_get(mon__tls_t *t, int64_t k) {
  unsigned h = phash(k);
  mon__pentry_t **slot = &t->pcache[h & (MON__PCACHE - 1)];
  mon__pentry_t *e = *slot;
  if (e && e->key == k)
    return e;
  HASH_FIND_BYHASHVALUE(hh, t->partners, &k, sizeof k, h, e);
  if (!e) {
    e = mon__arena_get(&t->p_arena, sizeof *e, P_BLOCK);
    if (!e)
      return NULL;
    memset(e, 0, sizeof *e);
    e->key = k;
    pthread_mutex_lock(&t->plock);
    HASH_ADD_BYHASHVALUE(hh, t->partners, key, sizeof k, h, e);
    t->npartners++;
    pthread_mutex_unlock(&t->plock);
  }
  *slot = e;
  return e;
}

static void pentry_add(mon__pentry_t *e, uint64_t bytes, int recv) {
  if (recv) {
    MON__ADD(&e->rbytes, bytes);
    MON__ADD(&e->rmsgs, 1);
  } else {
    MON__ADD(&e->bytes, bytes);
    MON__ADD(&e->msgs, 1);
  }
}

/* One lookup per message: a region's entry points at the whole-run one. */
void mon__partner_add(mon__tls_t *t, int region, int partner, uint64_t bytes,
                      int recv) {
  mon__pentry_t *e = pentry_get(t, pkey(region, partner));
  if (!e)
    return;
  if (!e->whole && !(e->whole = pentry_get(t, pkey(-1, partner))))
    return;
  pentry_add(e, bytes, recv);
  pentry_add(e->whole, bytes, recv);
}

void mon__partner_free(mon__tls_t *t) {
  pthread_mutex_lock(&t->plock);
  HASH_CLEAR(hh, t->partners);
  pthread_mutex_unlock(&t->plock);
  mon__arena_free(&t->p_arena);
  t->npartners = 0;
  memset(t->pcache, 0, sizeof t->pcache);
}

static void pread(const mon__pentry_t *e, mon__partner_t *out) {
  out->bytes += MON__LD(&e->bytes);
  out->msgs += MON__LD(&e->msgs);
  out->rbytes += MON__LD(&e->rbytes);
  out->rmsgs += MON__LD(&e->rmsgs);
}

int mon__partner_read(int region, int partner, mon__partner_t *out) {
  if (!out || partner < 0)
    return BALLAST_EINVAL;
  if (region >= mon__region_count())
    return BALLAST_ENOTFOUND;
  memset(out, 0, sizeof *out);
  int64_t k = pkey(region < 0 ? -1 : region, partner);
  unsigned h = phash(k);
  for (mon__tls_t *t = mon__tls_first(); t; t = t->next) {
    mon__pentry_t *e = NULL;
    pthread_mutex_lock(&t->plock);
    HASH_FIND_BYHASHVALUE(hh, t->partners, &k, sizeof k, h, e);
    if (e)
      pread(e, out);
    pthread_mutex_unlock(&t->plock);
  }
  return 0;
}

/* Each thread's entries of the region (-1: whole run); with try, a thread
 * whose lock is taken is skipped (counted) instead of waited for. */
static int foreach(int region, int try,
                   void (*cb)(int partner, const mon__partner_t *p, void *ctx),
                   void *ctx) {
  int want = region < 0 ? -1 : region, skipped = 0;
  for (mon__tls_t *t = mon__tls_first(); t; t = t->next) {
    if (try) {
      if (pthread_mutex_trylock(&t->plock) != 0) {
        skipped++;
        continue;
      }
    } else {
      pthread_mutex_lock(&t->plock);
    }
    for (mon__pentry_t *e = t->partners; e; e = e->hh.next) {
      if ((int)(e->key >> 32) != want)
        continue;
      mon__partner_t p = {0};
      pread(e, &p);
      cb((int)(uint32_t)e->key, &p, ctx);
    }
    pthread_mutex_unlock(&t->plock);
  }
  return skipped;
}

void mon__partner_foreach(int region,
                          void (*cb)(int partner, const mon__partner_t *p,
                                     void *ctx),
                          void *ctx) {
  foreach(region, 0, cb, ctx);
}

int mon__partner_foreach_try(int region,
                             void (*cb)(int partner, const mon__partner_t *p,
                                        void *ctx),
                             void *ctx) {
  return foreach(region, 1, cb, ctx);
}

void mon__partner_sum_regions(mon__partner_t *out, int n) {
  memset(out, 0, (size_t)n * sizeof *out);
  for (mon__tls_t *t = mon__tls_first(); t; t = t->next) {
    pthread_mutex_lock(&t->plock);
    for (mon__pentry_t *e = t->partners; e; e = e->hh.next) {
      int r = (int)(e->key >> 32);
      if (r < 0 || r >= n)
        continue; /* the whole run's entries */
      mon__partner_t p = {0};
      pread(e, &p);
      out[r].bytes += p.bytes;
      out[r].msgs += p.msgs;
      out[r].rbytes += p.rbytes;
      out[r].rmsgs += p.rmsgs;
    }
    pthread_mutex_unlock(&t->plock);
  }
}
