/*
 * Signature tables: one uthash per thread, keyed by the compact signature
 * (activity, thread, region, partner, bytes), IPM-style. An entry holds the
 * call count, total/min/max ticks and total bytes.
 *
 * - Nothing is dropped: uthash grows its bucket array as entries arrive.
 * - Entries come from a per-thread arena in blocks of SIG_BLOCK, so a new
 *   signature costs a malloc only once every SIG_BLOCK signatures (plus
 *   uthash's occasional bucket doubling).
 * - In front of everything, each activity's last entry: a call repeated
 *   with the same region, partner and bytes (a polling loop, the same
 *   message every step) finds its entry with three compares, no hash.
 * - Then a direct-mapped cache of MON__SIGCACHE entry pointers indexed by
 *   the signature's hash: a loop of a few alternating calls (send/recv, a
 *   halo exchange) hits it and never walks a bucket.
 * Only the owning thread touches its table; other threads read it only
 * through mon__sig_foreach, when nobody records (report, tests).
 */
#include <stdlib.h>
#include <string.h>

#include "common/common_internal.h"
#include "mon/mon_core.h"

#undef uthash_fatal
/* Running out of memory while monitoring must not kill the application's
 * process from inside a hash macro; abort is the only honest option left. */
#define uthash_fatal(msg) abort()
#include <uthash.h>

#define SIG_BLOCK 4096

struct mon__sig {
  uint64_t k[3];   /* act<<48 | thread<<32 | region ; partner ; bytes */
  uint64_t count, nbytes, tsum, tmin, tmax;
  UT_hash_handle hh;
};

static inline unsigned sig_hash(const uint64_t k[3]) {
  uint64_t h = ballast__fmix64(k[0] * 0x9e3779b97f4a7c15ULL ^ ballast__fmix64(k[1] + 0x632be59bd9b4e019ULL) ^
                     (k[2] * 0xc2b2ae3d27d4eb4fULL));
  return (unsigned)(h ^ (h >> 32));
}

void mon__sig_add(mon__tls_t *t, int act, int region, int partner,
                  uint64_t bytes, uint64_t ticks, uint64_t calls) {
  uint64_t k[3] = {((uint64_t)(unsigned)act << 48) |
                       ((uint64_t)(t->index & 0xffff) << 32) | (uint32_t)region,
                   (uint32_t)partner, bytes};
  mon__sig_t *e = t->siglast[act];
  if (__builtin_expect(e && e->k[0] == k[0] && e->k[1] == k[1] && e->k[2] == k[2], 1))
    goto found;
  unsigned h = sig_hash(k);
  mon__sig_t **slot = &t->sigcache[h & (MON__SIGCACHE - 1)];
  e = *slot;
  if (!e || e->k[0] != k[0] || e->k[1] != k[1] || e->k[2] != k[2]) {
    HASH_FIND_BYHASHVALUE(hh, t->sigs, k, sizeof k, h, e);
    if (!e) {
      e = mon__arena_get(&t->sig_arena, sizeof *e, SIG_BLOCK);
      if (!e) {
        BALLAST_ERROR("mon: out of memory for a new signature; aborting");
        abort();
      }
      memcpy(e->k, k, sizeof k);
      e->count = e->nbytes = e->tsum = e->tmax = 0;
      e->tmin = UINT64_MAX;
      HASH_ADD_BYHASHVALUE(hh, t->sigs, k, sizeof k, h, e);
      t->nsigs++;
    }
    *slot = e;
  }
  t->siglast[act] = e;
found:
  e->count += calls;
  e->nbytes += bytes;
  if (calls) {
    e->tsum += ticks;
    if (ticks < e->tmin)
      e->tmin = ticks;
    if (ticks > e->tmax)
      e->tmax = ticks;
  }
}

void mon__sig_free(mon__tls_t *t) {
  HASH_CLEAR(hh, t->sigs);
  mon__arena_free(&t->sig_arena);
  memset(t->sigcache, 0, sizeof t->sigcache);
  memset(t->siglast, 0, sizeof t->siglast);
  t->nsigs = 0;
}

uint64_t mon__sig_count(void) {
  uint64_t n = 0;
  for (mon__tls_t *t = mon__tls_first(); t; t = t->next)
    n += t->nsigs;
  return n;
}

int mon__sig_foreach(int (*cb)(const mon__sigview_t *s, void *ctx), void *ctx) {
  if (!cb)
    return BALLAST_EINVAL;
  double sec = mon__tick_seconds();
  for (mon__tls_t *t = mon__tls_first(); t; t = t->next) {
    for (mon__sig_t *e = t->sigs; e; e = e->hh.next) {
      mon__sigview_t v;
      v.act = (int)(e->k[0] >> 48);
      v.thread = (int)((e->k[0] >> 32) & 0xffff);
      v.region = (int)(uint32_t)e->k[0];
      v.partner = (int)(int32_t)(uint32_t)e->k[1];
      v.bytes = e->k[2];
      v.count = e->count;
      v.nbytes = e->nbytes;
      v.tsum = (double)e->tsum * sec;
      v.tmin = e->count ? (double)e->tmin * sec : 0.0;
      v.tmax = (double)e->tmax * sec;
      int rc = cb(&v, ctx);
      if (rc)
        return rc;
    }
  }
  return 0;
}
