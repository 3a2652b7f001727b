/*
 * pia's name caches: by-name lookups without a lock.
 *
 * Regions: mon__region_find() answers "the first region created with this
 * name" under mon's registry lock, through a uthash table (~100 ns). Once
 * found, that answer never changes (ids are stable, names immutable, the
 * first region with a name stays the first), so each thread keeps its own
 * cache: an open-addressing table of (32-bit hash, id, short name). A hit
 * costs one hash of the name, one probe and one strcmp against the name kept
 * in the slot (or mon's copy for long names), which rules out collisions. Misses (names not seen
 * yet, or not existing) go to mon and are cached only when found. Being
 * per-thread, the cache needs no atomics; a thread's table is freed when the
 * thread exits.
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

/* One slot: the hash, the id and, for names of up to 23 bytes, the name
 * itself, so a hit is checked without touching mon's copy (one cache line
 * fewer on the lookup path). Longer names are checked against mon's copy. */
enum { INLINE_NAME = 24 };
typedef struct {
  uint32_t h;  /* low 32 bits of the hash */
  int32_t id1; /* id + 1; 0 = empty slot */
  char name[INLINE_NAME]; /* NUL-terminated copy, or "" when too long */
} slot_t;

typedef struct {
  slot_t *slots;
  uint32_t cap, used;
} table_t;

static void slot_set(slot_t *s, uint64_t h, int id, const char *name) {
  size_t len = strlen(name);
  s->h = (uint32_t)h;
  s->id1 = id + 1;
  if (len < INLINE_NAME)
    memcpy(s->name, name, len + 1);
  else
    s->name[0] = '\0';
}

/* Inserts without checking for duplicates (callers looked up first). */
static int table_put(table_t *t, uint64_t h, int id, const char *name) {
  if ((uint64_t)(t->used + 1) * 4 > (uint64_t)t->cap * 3) { /* load <= 3/4 */
    uint32_t ncap = t->cap ? t->cap * 2 : 256;
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
  slot_set(&t->slots[i], h, id, name);
  t->used++;
  return 0;
}

/* The cached id of name, or -1. name_of() gives the stored name of an id,
 * for names too long to be kept in the slot. */
static int table_get(const table_t *t, uint64_t h, const char *name,
                     const char *(*name_of)(int)) {
  if (!t->cap)
    return -1;
  uint32_t h32 = (uint32_t)h;
  for (uint32_t i = h32 & (t->cap - 1);; i = (i + 1) & (t->cap - 1)) {
    const slot_t *s = &t->slots[i];
    if (!s->id1)
      return -1;
    if (s->h != h32)
      continue;
    int id = s->id1 - 1;
    const char *n = s->name[0] ? s->name : name_of(id);
    if (n && strcmp(n, name) == 0)
      return id;
  }
}

/* ---- regions: one table per thread ------------------------------------------ */

static __thread table_t *tl_regions;
static pthread_key_t regions_key;
static pthread_once_t regions_once = PTHREAD_ONCE_INIT;

static void regions_free(void *p) {
  table_t *t = p;
  tl_regions = NULL; /* runs in the exiting thread */
  if (t) {
    free(t->slots);
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
  if (t) {
    int id = table_get(t, h, name, mon__region_name);
    /* The range check keeps a cached id honest should mon's registry have
     * been torn down (process exit) since it was cached. */
    if (id >= 0 && id < mon__region_count())
      return id;
  }
  int id = mon__region_find(name);
  /* Without a cache (out of memory) lookups still work, through mon. */
  if (id >= 0 && (t = regions_table()))
    (void)table_put(t, h, id, name);
  return id;
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
    if (table_get(&acts, h, name, mon__act_name) >= 0)
      continue; /* a duplicate name: the lowest id wins, as in mon */
    if (table_put(&acts, h, a, name) < 0)
      return; /* acts_ok stays 0: lookups go to mon */
  }
  acts_ok = 1;
}

int pia__act_find(const char *name) {
  pthread_once(&acts_once, acts_build);
  if (!acts_ok)
    return mon__act_find(name);
  int id = table_get(&acts, hash_name(name), name, mon__act_name);
  return id >= 0 ? id : BALLAST_ENOTFOUND;
}
