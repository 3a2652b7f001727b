/*
 * pia's name caches: by-name lookups without a lock.
 *
 * Regions: mon__region_find() answers "the first region created with this
 * name" under mon's registry lock, through a uthash table (~100 ns). Once
 * found, that answer never changes (ids are stable, names immutable, the
 * first region with a name stays the first), so each thread keeps its own
 * cache: an open-addressing table of 32-byte slots (32-bit hash, id, mon's
 * copy of the name, and the name itself when it is short). A hit costs one
 * hash of the name, one probe (one cache line) and a compare against the
 * name kept in the slot (or mon's copy for long names), which rules out
 * collisions. Misses (names not seen yet, or not existing) go to mon and are
 * cached only when found. Being per-thread, the cache needs no atomics; a
 * thread's table is freed when the thread exits.
 *
 * The seed's pattern is "find by name, then read the data": the last hit is
 * remembered (pia__region_name), so the read that follows gets the name
 * without touching mon's region record. A warm find + read is then two
 * dependent cache misses (the slot, then the region's statistics) once the
 * tables outgrow the caches. (Huge pages for the tables were tried: no
 * measurable gain on the test VM, whose misses cost ~150-300 ns with or
 * without them.)
 *
 * Activities: the set is fixed when mon starts, so one read-only table is
 * built once (pthread_once) from mon__act_name() and shared by all threads.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pia/pia_internal.h"

/* FNV-1a, 64-bit: short names hash in a few ns. */
static uint64_t hash_name(const char *s) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (; *s; s++)
    h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
  return h ^ (h >> 32);
}

/* One slot: the hash, the id, mon's copy of the name (stable for the life
 * of the process) and, for names of up to 15 bytes, the name itself, so a
 * hit is checked without touching mon's copy (one cache line per probe).
 * Longer names are checked against mon's copy. */
enum { INLINE_NAME = 16 };
typedef struct {
  uint32_t h;  /* low 32 bits of the hash */
  int32_t id1; /* id + 1; 0 = empty slot */
  const char *stored; /* mon's copy of the name */
  char name[INLINE_NAME]; /* NUL-terminated copy, or "" when too long */
} slot_t;
_Static_assert(sizeof(slot_t) == 32, "two slots per cache line");

typedef struct {
  slot_t *slots;
  uint32_t cap, used;
} table_t;

static void slot_set(slot_t *s, uint64_t h, int id, const char *name,
                     const char *stored) {
  size_t len = strlen(name);
  s->h = (uint32_t)h;
  s->id1 = id + 1;
  s->stored = stored;
  if (len < INLINE_NAME)
    memcpy(s->name, name, len + 1);
  else
    s->name[0] = '\0';
}

static void table_free(table_t *t) {
  free(t->slots);
  t->slots = NULL;
  t->cap = t->used = 0;
}

/* Inserts without checking for duplicates (callers looked up first). */
static int table_put(table_t *t, uint64_t h, int id, const char *name,
                     const char *stored) {
  if ((uint64_t)(t->used + 1) * 4 > (uint64_t)t->cap * 3) { /* load <= 3/4 */
    uint32_t ncap = t->cap ? t->cap * 2 : 256;
    if (!ncap)
      return BALLAST_ENOMEM; /* 2^32 slots: give up caching */
    slot_t *ns = calloc(ncap, sizeof *ns);
    if (!ns)
      return BALLAST_ENOMEM;
    for (uint32_t j = 0; j < t->cap; j++) {
      if (!t->slots[j].id1)
        continue;
      uint32_t i = t->slots[j].h & (ncap - 1);
      while (ns[i].id1)
        i = (i + 1) & (ncap - 1);
      ns[i] = t->slots[j];
    }
    free(t->slots);
    t->slots = ns;
    t->cap = ncap;
  }
  uint32_t i = (uint32_t)h & (t->cap - 1);
  while (t->slots[i].id1)
    i = (i + 1) & (t->cap - 1);
  slot_set(&t->slots[i], h, id, name, stored);
  t->used++;
  return 0;
}

/* The slot caching name, or NULL. */
static const slot_t *table_get(const table_t *t, uint64_t h, const char *name) {
  if (!t->cap)
    return NULL;
  uint32_t h32 = (uint32_t)h;
  for (uint32_t i = h32 & (t->cap - 1);; i = (i + 1) & (t->cap - 1)) {
    const slot_t *s = &t->slots[i];
    if (!s->id1)
      return NULL;
    if (s->h != h32)
      continue;
    const char *n = s->name[0] ? s->name : s->stored;
    if (strcmp(n, name) == 0)
      return s;
  }
}

/* ---- regions: one table per thread ------------------------------------------ */

static __thread table_t *tl_regions;
static __thread int tl_last_id = -1;            /* the last region found */
static __thread const char *tl_last_name;       /* ... and mon's copy of its name */
static pthread_key_t regions_key;
static pthread_once_t regions_once = PTHREAD_ONCE_INIT;

static void regions_free(void *p) {
  table_t *t = p;
  tl_regions = NULL; /* runs in the exiting thread */
  if (t) {
    table_free(t);
    free(t);
  }
}

static void regions_key_init(void) {
  if (pthread_key_create(&regions_key, regions_free) != 0)
    regions_key = (pthread_key_t)-1;
}

static table_t *regions_table(void) {
  table_t *t = tl_regions;
  if (t)
    return t;
  pthread_once(&regions_once, regions_key_init);
  if (regions_key == (pthread_key_t)-1 || !(t = calloc(1, sizeof *t)))
    return NULL;
  if (pthread_setspecific(regions_key, t) != 0) {
    free(t);
    return NULL;
  }
  return tl_regions = t;
}

int pia__region_find(const char *name) {
  uint64_t h = hash_name(name);
  table_t *t = tl_regions;
  /* mon's registry is torn down only at process exit and never rebuilt:
   * with regions present, the names the slots point to are alive. */
  if (t && mon__region_count() > 0) {
    const slot_t *s = table_get(t, h, name);
    if (s) {
      tl_last_id = s->id1 - 1;
      tl_last_name = s->stored;
      return s->id1 - 1;
    }
  }
  int id = mon__region_find(name);
  if (id < 0)
    return id;
  const char *stored = mon__region_name(id);
  /* Without a cache (out of memory) lookups still work, through mon. */
  if (stored && (t = regions_table()))
    (void)table_put(t, h, id, name, stored);
  tl_last_id = id;
  tl_last_name = stored;
  return id;
}

const char *pia__region_name(int id) {
  return id == tl_last_id ? tl_last_name : mon__region_name(id);
}

/* ---- activities: one shared read-only table ---------------------------------- */

static table_t acts;
static pthread_once_t acts_once = PTHREAD_ONCE_INIT;
static int acts_ok;

static void acts_build(void) {
  int n = mon__act_count();
  for (int a = 0; a < n; a++) {
    const char *name = mon__act_name(a);
    if (!name)
      continue;
    uint64_t h = hash_name(name);
    if (table_get(&acts, h, name))
      continue; /* a duplicate name: the lowest id wins, as in mon */
    if (table_put(&acts, h, a, name, name) < 0)
      return; /* acts_ok stays 0: lookups go to mon */
  }
  acts_ok = 1;
}

int pia__act_find(const char *name) {
  pthread_once(&acts_once, acts_build);
  if (!acts_ok)
    return mon__act_find(name);
  const slot_t *s = table_get(&acts, hash_name(name), name);
  return s ? s->id1 - 1 : BALLAST_ENOTFOUND;
}
