/* The process's tasks by key: an open-addressing table of (hash, task)
 * pairs, linear probing, at most half full.
 *
 * Why not uthash: its chains run through the task records, so a
 * lookup that finds nothing, the duplicate check of every definition,
 * touched a cold record per element of the chain (up to ten), and a
 * deletion touched its neighbours in two lists. A remap defines and removes
 * thousands of tasks; with the hashes stored in the table a lookup reads
 * one or two adjacent slots and touches a record only when the hashes
 * match. Growing is the only allocation: callers reserve room before they
 * link (task__index_reserve), so linking cannot fail.
 */
#include "task/task_internal.h"

#include <stdlib.h>
#include <string.h>

#include "common/common_internal.h"

typedef struct {
  unsigned hash;
  rta_task_t *t; /* NULL: empty */
} slot_t;

static slot_t *tab;
static size_t cap; /* a power of two, or 0 */
static size_t count;

unsigned task__key_hash(const char *key, size_t len) {
  /* FNV-1a, then mixed */
  uint64_t h = ballast__splitmix64(ballast__fnv1a(BALLAST__FNV_OFFSET, key, len));
  return (unsigned)(h ^ (h >> 32));
}

static size_t home(unsigned hash) { return (size_t)hash & (cap - 1); }

static void put(slot_t s) {
  size_t i = home(s.hash);
  while (tab[i].t)
    i = (i + 1) & (cap - 1);
  tab[i] = s;
}

int task__index_reserve(size_t more) {
  if (2 * (count + more) <= cap)
    return 0;
  size_t ncap = cap ? cap : 64;
  while (2 * (count + more) > ncap)
    ncap *= 2;
  slot_t *nt = ballast__calloc(ncap, sizeof *nt);
  if (!nt)
    return BALLAST_ENOMEM;
  slot_t *old = tab;
  size_t ocap = cap;
  tab = nt;
  cap = ncap;
  for (size_t i = 0; i < ocap; i++)
    if (old[i].t)
      put(old[i]);
  free(old);
  return 0;
}

rta_task_t *task__index_find(const char *key, unsigned hash) {
  if (!cap)
    return NULL;
  for (size_t i = home(hash); tab[i].t; i = (i + 1) & (cap - 1))
    if (tab[i].hash == hash && strcmp(tab[i].t->key, key) == 0)
      return tab[i].t;
  return NULL;
}

void task__index_add(rta_task_t *t) {
  put((slot_t){t->keyhash, t});
  count++;
}

void task__index_prefetch(const rta_task_t *t) {
#if defined(__GNUC__)
  if (cap)
    __builtin_prefetch(&tab[home(t->keyhash)]);
#else
  (void)t;
#endif
}

unsigned task__index_prefetch_key(const char *key) {
  unsigned h = task__key_hash(key, strlen(key));
#if defined(__GNUC__)
  if (cap)
    __builtin_prefetch(&tab[home(h)]);
#endif
  return h;
}

/* The slot holding t (it is in the table). */
static size_t slot_of(const rta_task_t *t) {
  size_t i = home(t->keyhash);
  while (tab[i].t != t)
    i = (i + 1) & (cap - 1);
  return i;
}

void task__index_del(rta_task_t *t) {
  if (!cap)
    return;
  /* Backward-shift deletion: a later slot of the run moves into the hole
   * unless its home lies cyclically in (hole, slot]; no tombstones. */
  size_t i = slot_of(t), j = i;
  for (;;) {
    j = (j + 1) & (cap - 1);
    if (!tab[j].t)
      break;
    size_t k = home(tab[j].hash);
    int stays = i <= j ? (i < k && k <= j) : (i < k || k <= j);
    if (!stays) {
      tab[i] = tab[j];
      i = j;
    }
  }
  tab[i] = (slot_t){0, NULL};
  count--;
}

/* The first task at or after slot i, or NULL. */
static rta_task_t *from(size_t i) {
  for (; i < cap; i++)
    if (tab[i].t)
      return tab[i].t;
  return NULL;
}

rta_task_t *task__first(void) { return from(0); }
rta_task_t *task__next(const rta_task_t *t) {
  return t && cap ? from(slot_of(t) + 1) : NULL;
}
int64_t task__count(void) { return (int64_t)count; }

void task__index_drain(void (*fn)(rta_task_t *)) {
  for (size_t i = 0; i < cap; i++)
    if (tab[i].t) {
      rta_task_t *t = tab[i].t;
      tab[i] = (slot_t){0, NULL};
      fn(t);
    }
  count = 0;
  free(tab);
  tab = NULL;
  cap = 0;
}
