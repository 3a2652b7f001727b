/* The task tree: definition, lookup by key, removal, begin/end nesting. */
#include "task/task_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <ballast/mon.h>

#include "common/common_internal.h"
#include "mon/mon_hooks.h"
#include "tool/tool_internal.h"

static rta_task_t **open_stack;  /* begun, not yet ended; innermost last */
static int *open_depth;          /* per open task: its region's depth in mon */
static int nopen, capopen;

static void emit_task_end(const rta_task_t *t) {
  if (TOOL__ON(TOOL__EV_TASK_END)) {
    ballast_tool_task_t ev = {.t_ns = tool__now(), .key = t->key};
    tool__emit_task_end(&ev);
  }
}

/* MPI_Finalize left the region at \a depth: when it was the innermost open
 * task's, that task ends now, so its end event follows its region's exit as
 * rta_task_end's does and the tools' events stay nested. */
static void on_finalize_left(int depth) {
  if (nopen == 0)
    return;
  rta_task_t *o = open_stack[nopen - 1];
  if (!o->in_region || open_depth[nopen - 1] != depth)
    return;
  nopen--;
  o->open = 0;
  o->in_region = 0;
  emit_task_end(o);
}

/* ---- keys ------------------------------------------------------------------ */

int task__check_key(const char *key) {
  if (!key || !*key)
    return BALLAST_EINVAL;
  if (strnlen(key, RTA_KEY_MAX + 1) > RTA_KEY_MAX)
    return BALLAST_ENAMETOOLONG;
  return 0;
}

/* Logs a bad key once, naming it as far as it is printable. */
static int key_error(const char *what, const char *key, int rc) {
  if (!key)
    BALLAST_WARN("rta: %s: NULL key (%s)", what, ballast_err_name(rc));
  else
    BALLAST_WARN("rta: %s: key \"%.64s%s\" (%s)", what, key,
                 strnlen(key, 65) > 64 ? "..." : "", ballast_err_name(rc));
  return rc;
}

/* ---- parameters ------------------------------------------------------------- */

static uint64_t fnv_double(uint64_t h, double d) {
  if (d == 0.0)
    d = 0.0; /* -0 and +0 hash alike */
  return ballast__fnv1a(h, &d, sizeof d);
}

/* The last hash of parameters naming no partners: the tasks of a remap
 * mostly share their parameters, and FNV over them byte by byte was 1% of
 * the move's samples at 4,096 x 4 KiB. */
static struct {
  int valid, nprocs;
  double est_work;
  size_t state_size;
  uint64_t h;
} last_hash;

uint64_t task__params_hash(const rta_task_params_t *p) {
  if (p->ncomm == 0 && last_hash.valid && last_hash.nprocs == p->nprocs &&
      memcmp(&last_hash.est_work, &p->est_work, sizeof p->est_work) == 0 &&
      last_hash.state_size == p->state_size)
    return last_hash.h;
  uint64_t h = BALLAST__FNV_OFFSET;
  int64_t np = p->nprocs, nc = p->ncomm;
  uint64_t ss = p->state_size;
  h = ballast__fnv1a(h, &np, sizeof np);
  h = fnv_double(h, p->est_work);
  h = ballast__fnv1a(h, &ss, sizeof ss);
  h = ballast__fnv1a(h, &nc, sizeof nc);
  /* p->comm is sorted by key (rta's copy), so the order the application
   * declared partners in does not matter. */
  for (int i = 0; i < p->ncomm; i++) {
    h = ballast__fnv1a(h, p->comm[i].key, strlen(p->comm[i].key) + 1);
    h = fnv_double(h, p->comm[i].bytes);
  }
  if (p->ncomm == 0) {
    last_hash.valid = 1;
    last_hash.nprocs = p->nprocs;
    last_hash.est_work = p->est_work;
    last_hash.state_size = p->state_size;
    last_hash.h = h;
  }
  return h;
}

static int cmp_comm(const void *a, const void *b) {
  return strcmp(((const rta_comm_est_t *)a)->key,
                ((const rta_comm_est_t *)b)->key);
}

/* Checks one parameter record of the child with full key \a key. */
static int check_params(const rta_task_params_t *p, const char *key) {
  if (p->nprocs < 1) {
    BALLAST_WARN("rta: task \"%s\": nprocs %d < 1", key, p->nprocs);
    return BALLAST_EINVAL;
  }
  if (!isfinite(p->est_work) || p->est_work < 0) {
    BALLAST_WARN("rta: task \"%s\": estimated work %g is not a finite value >= 0",
                 key, p->est_work);
    return BALLAST_EINVAL;
  }
  if (p->ncomm < 0 || (p->ncomm > 0 && !p->comm)) {
    BALLAST_WARN("rta: task \"%s\": %d partners but comm is %s", key, p->ncomm,
                 p->comm ? "set" : "NULL");
    return BALLAST_EINVAL;
  }
  for (int i = 0; i < p->ncomm; i++) {
    int rc = task__check_key(p->comm[i].key);
    if (rc) {
      BALLAST_WARN("rta: task \"%s\": partner %d has a %s key", key, i,
                   rc == BALLAST_ENAMETOOLONG ? "too long" : "NULL or empty");
      return rc;
    }
    if (strcmp(p->comm[i].key, key) == 0) {
      BALLAST_WARN("rta: task \"%s\" names itself as a partner", key);
      return BALLAST_EINVAL;
    }
    if (!isfinite(p->comm[i].bytes) || p->comm[i].bytes < 0) {
      BALLAST_WARN("rta: task \"%s\": bytes %g to \"%s\" is not a finite value >= 0",
                   key, p->comm[i].bytes, p->comm[i].key);
      return BALLAST_EINVAL;
    }
  }
  return 0;
}

/* Copies the parameters into t (partners sorted, keys copied). The
 * partners and their keys take one allocation (the keys after the array):
 * an arriving task with partners was one allocation per partner and one
 * more, and as many frees when it left. */
static int copy_params(rta_task_t *t, const rta_task_params_t *p) {
  t->params = *p;
  t->params.comm = NULL;
  if (p->ncomm > 0) {
    size_t n = (size_t)p->ncomm, kbytes = 0;
    for (size_t i = 0; i < n; i++)
      kbytes += strlen(p->comm[i].key) + 1; /* checked: RTA_KEY_MAX each */
    rta_comm_est_t *cc = ballast__malloc(n * sizeof *cc + kbytes);
    if (!cc)
      return BALLAST_ENOMEM;
    t->cold->comm_copy = cc;
    t->cold_held = 1;
    char *k = (char *)(cc + n);
    for (size_t i = 0; i < n; i++) {
      size_t len = strlen(p->comm[i].key) + 1;
      memcpy(k, p->comm[i].key, len);
      cc[i].bytes = p->comm[i].bytes;
      cc[i].key = k;
      k += len;
    }
    qsort(cc, (size_t)p->ncomm, sizeof *cc, cmp_comm);
    for (int i = 1; i < p->ncomm; i++)
      if (strcmp(cc[i - 1].key, cc[i].key) == 0) {
        BALLAST_WARN("rta: task \"%s\" lists partner \"%s\" twice", t->key,
                     cc[i].key);
        return BALLAST_EINVAL;
      }
    t->params.comm = cc;
  }
  t->params_hash = task__params_hash(&t->params);
  return 0;
}

/* ---- slabs of records ---------------------------------------------------------
 * While a remap defines its arrivals, records are carved from slabs of
 * SLAB_BYTES: one allocation for dozens of records instead of one each
 * (each of which found its chunk among the departed tasks' freed ones, cold
 * memory), the records adjacent. Slabs are below malloc's mmap threshold,
 * so they come from (and go back to) memory the process has touched. Places
 * begin on a 64-byte line, so a record's hot part and short key take five
 * lines (task_internal.h), not six as at a line's middle; a place also has
 * room for the task's cost window (cost.c stores an arriving window there:
 * no allocation a task, and the samples next to the record).
 *
 * A record of a slab that is removed leaves its place to the next remap's
 * arrivals (a free list per size, in the order places were freed: the
 * departures' order, so arrivals fill the places in the order they were
 * carved). A slab freed only once its last record had left (a RANDOM
 * remap moves about half of the tasks: a slab of a few dozen lived on
 * while any of them stayed) left the live records sparse among slabs
 * after a few remaps, cold lines and pages in every loop of a remap over
 * its tasks (describe, commit, removal), and each remap carved fresh slabs
 * (page faults). Places are reused, so the slabs hold at most the most
 * records alive in slabs at once; all of them are freed when the last
 * record in a slab is removed outside a remap (rta_reset). */

enum { SLAB_BYTES = 16384, SLAB_LINE = 64, RING_ROOM_MAX = 32 };

struct task__slab {
  struct task__slab *next; /* every slab (slab_all) */
  size_t used;             /* bytes of the slab carved, its header included */
};

/* A free place of a slab (its first bytes). */
typedef struct slab_place {
  struct slab_place *next;
} slab_place_t;

/* The first place of a slab: its header, rounded up to a line (malloc
 * aligns to 16, the places to SLAB_LINE within the slab's bytes). */
#define SLAB_FIRST (sizeof(struct task__slab) + SLAB_LINE)
#define SLAB_ROOM (SLAB_BYTES - SLAB_FIRST)
#define SLAB_CLASSES (SLAB_ROOM / SLAB_LINE + 1)

static int slabs_on;                    /* between open and close */
static struct task__slab *slab_cur; /* the slab records are carved from */
static struct task__slab *slab_all; /* every slab */
static size_t slab_live;                /* records alive in slabs */
/* Free places per size (SLAB_LINE units), oldest first. */
static slab_place_t *place_head[SLAB_CLASSES], *place_tail[SLAB_CLASSES];

/* Frees every slab once none holds a live record, outside a remap. */
static void slabs_release(void) {
  if (slab_live > 0 || slabs_on)
    return;
  while (slab_all) {
    struct task__slab *s = slab_all;
    slab_all = s->next;
    free(s);
  }
  slab_cur = NULL;
  memset(place_head, 0, sizeof place_head);
  memset(place_tail, 0, sizeof place_tail);
}

void task__slab_open(void) { slabs_on = 1; }

void task__slab_close(void) {
  slabs_on = 0;
  slabs_release();
}

/* Bytes a record of \a bytes takes in a slab. */
static size_t slab_need(size_t bytes) {
  return (bytes + SLAB_LINE - 1) & ~(size_t)(SLAB_LINE - 1);
}

/* A free place of \a need bytes (class k) from the free list or the
 * current slab (a new one when it is full); NULL without memory. */
static void *slab_take(size_t need, size_t k) {
  void *t = place_head[k];
  if (t) {
    if (!(place_head[k] = place_head[k]->next))
      place_tail[k] = NULL;
#if defined(__GNUC__)
    /* The next arrival's place, for writing: the places of the last
     * remap's departures are no longer in cache. */
    const char *nx = (const char *)place_head[k];
    for (size_t o = 0; nx && o < need; o += SLAB_LINE)
      __builtin_prefetch(nx + o, 1);
#endif
    return t;
  }
  if (!slab_cur || SLAB_BYTES - slab_cur->used < need) {
    struct task__slab *s = ballast__malloc(SLAB_BYTES);
    if (!s)
      return NULL;
    /* The first place on a line of the address space. */
    uintptr_t first = ((uintptr_t)s + sizeof *s + SLAB_LINE - 1) &
                      ~(uintptr_t)(SLAB_LINE - 1);
    s->used = (size_t)(first - (uintptr_t)s);
    s->next = slab_all;
    slab_all = slab_cur = s;
  }
  t = (unsigned char *)slab_cur + slab_cur->used;
  slab_cur->used += need;
  return t;
}

/* A record with room for a key of \a klen bytes and its cold part, the key
 * and cold pointers set, zeroed (from a slab, a freed place of its size
 * first, with room for a cost window; or its own allocation); NULL without
 * memory. */
static rta_task_t *alloc_record(size_t klen) {
  size_t kbytes = klen < TASK__KEY_INLINE ? 0 : ballast__round8(klen + 1);
  size_t bytes = sizeof(rta_task_t) + kbytes + sizeof(task__cold_t);
  rta_cost_config_t cfg;
  rta_cost_config_get(&cfg);
  size_t need = slab_need(bytes + (cfg.window <= RING_ROOM_MAX
                                       ? (size_t)cfg.window * sizeof(double)
                                       : 0));
  rta_task_t *t;
  if (!slabs_on || need > SLAB_ROOM) {
    if (!(t = ballast__calloc(1, bytes)))
      return NULL;
  } else {
    size_t k = need / SLAB_LINE;
    if (!(t = slab_take(need, k)))
      return NULL;
    memset(t, 0, bytes);
    t->place = (unsigned short)k; /* slab_free() at its removal */
    slab_live++;
  }
  t->key = kbytes ? (char *)(t + 1) : t->key_inline;
  t->cold = (task__cold_t *)(void *)((char *)(t + 1) + kbytes);
  if (t->place) {
    t->cold->ring_room = (double *)(void *)(t->cold + 1);
    t->cold->ring_cap = (int)((need - bytes) / sizeof(double));
  }
  return t;
}

/* Gives a slab record's place to the next arrivals of its size. */
static void slab_free(rta_task_t *t) {
  size_t k = t->place;
  slab_place_t *p = (slab_place_t *)(void *)t;
  p->next = NULL;
  if (place_tail[k])
    place_tail[k]->next = p;
  else
    place_head[k] = p;
  place_tail[k] = p;
  slab_live--;
  slabs_release();
}

static void free_task_record(rta_task_t *t) {
  if (!t)
    return;
  if (t->cold_held) { /* else nothing of the cold part needs freeing */
    task__cold_t *cold = t->cold;
    free(cold->comm_copy); /* and its keys */
    task__cost_clear(t);
    mon_region_handle_destroy(cold->region);
  }
  task__arrays_clear(t);
  free(t->children);
  if (t->place)
    slab_free(t);
  else
    free(t); /* and its key and cold part */
}

/* ---- definition ------------------------------------------------------------- */

static int add_child(rta_task_t *parent, rta_task_t *c) {
  if (parent->nchildren == parent->capchildren) {
    int cap = parent->capchildren ? 2 * parent->capchildren : 4;
    rta_task_t **ch = ballast__realloc(parent->children, (size_t)cap * sizeof *ch);
    if (!ch)
      return BALLAST_ENOMEM;
    parent->children = ch;
    parent->capchildren = cap;
  }
  parent->children[parent->nchildren++] = c;
  return 0;
}

/* Puts a task make_task built in the index of keys (room reserved). */
static void link_task(rta_task_t *t) { task__index_add(t); }

/* Builds (unlinked) the child called name under parent; \a hkey and
 * \a hash: a key whose hash is known (NULL: none). */
static int make_task(rta_task_t *parent, const char *name,
                     const rta_task_params_t *p, const char *hkey,
                     unsigned hash, rta_task_t **out) {
  *out = NULL;
  if (!name || !*name)
    return key_error("task_define", name, BALLAST_EINVAL);
  if (strchr(name, '/'))
    return key_error("task_define: a task name may not contain '/'", name,
                     BALLAST_EINVAL);
  size_t plen = parent ? strlen(parent->key) + 1 : 0;
  size_t nlen = strnlen(name, RTA_KEY_MAX + 1);
  if (plen + nlen > RTA_KEY_MAX)
    return key_error("task_define: key longer than RTA_KEY_MAX", name,
                     BALLAST_ENAMETOOLONG);
  /* The key lives in the record's allocation: one allocation a task, and
   * a key comparison reads memory next to the record. */
  rta_task_t *t = alloc_record(plen + nlen);
  if (!t)
    return BALLAST_ENOMEM;
  if (parent) {
    memcpy(t->key, parent->key, plen - 1);
    t->key[plen - 1] = '/';
  }
  memcpy(t->key + plen, name, nlen + 1);
  t->cold->name = t->key + plen;
  t->parent = parent;
  t->stage = parent ? parent->nstages : -1;
  /* The key's hash once, for this check and for linking (link_task). An
   * arrival's was computed when its index slot was asked for ahead: hashing
   * it again was 3% of the move's own samples at 4,096 x 4 KiB (once: the
   * unpack phase 0.01-0.03 us per task moved less). */
  t->keyhash = hkey && strcmp(hkey, t->key) == 0 ? hash
                                                 : task__key_hash(t->key, plen + nlen);
  if (task__index_find(t->key, t->keyhash)) {
    key_error("task_define: duplicate key", t->key, BALLAST_EEXIST);
    free_task_record(t);
    return BALLAST_EEXIST;
  }
  int rc = check_params(p, t->key);
  if (!rc)
    rc = copy_params(t, p);
  if (rc) {
    free_task_record(t);
    return rc;
  }
  *out = t;
  return 0;
}

static int cmp_task_key(const void *a, const void *b) {
  return strcmp((*(rta_task_t *const *)a)->key, (*(rta_task_t *const *)b)->key);
}

int rta_task_define(rta_task_t *parent, int n, const char *const *names,
                    const rta_task_params_t *params, rta_task_t **out) {
  if (n < 1 || !names) {
    BALLAST_WARN("rta: task_define: n = %d, names %s", n, names ? "set" : "NULL");
    return BALLAST_EINVAL;
  }
  static const rta_task_params_t defaults = RTA_TASK_PARAMS_INIT;
  rta_task_t **made = ballast__calloc((size_t)n, sizeof *made);
  if (!made)
    return BALLAST_ENOMEM;
  int rc = 0, i;
  /* All or nothing: build and check every child before linking any. */
  for (i = 0; i < n && !rc; i++)
    rc = make_task(parent, names[i], params ? &params[i] : &defaults, NULL, 0,
                   &made[i]);
  if (!rc && n > 1) {
    /* A name repeated within the call: sort a copy, compare neighbours. */
    rta_task_t **sorted = ballast__malloc((size_t)n * sizeof *sorted);
    if (!sorted)
      rc = BALLAST_ENOMEM;
    else {
      memcpy(sorted, made, (size_t)n * sizeof *sorted);
      qsort(sorted, (size_t)n, sizeof *sorted, cmp_task_key);
      for (i = 1; i < n && !rc; i++)
        if (strcmp(sorted[i - 1]->key, sorted[i]->key) == 0)
          rc = key_error("task_define: key repeated in one call", sorted[i]->key,
                         BALLAST_EEXIST);
      free(sorted);
    }
  }
  if (!rc)
    rc = task__index_reserve((size_t)n);
  if (!rc && parent && parent->capchildren < parent->nchildren + n) {
    rta_task_t **ch = ballast__realloc(parent->children,
                              (size_t)(parent->nchildren + n) * sizeof *ch);
    if (!ch)
      rc = BALLAST_ENOMEM;
    else {
      parent->children = ch;
      parent->capchildren = parent->nchildren + n;
    }
  }
  if (rc) {
    for (int j = 0; j < n; j++)
      free_task_record(made[j]);
    free(made);
    return rc;
  }
  for (i = 0; i < n; i++) {
    if (parent)
      add_child(parent, made[i]); /* capacity reserved above: cannot fail */
    link_task(made[i]);
    if (out)
      out[i] = made[i];
  }
  if (parent)
    parent->nstages++;
  free(made);
  return 0;
}

int task__adopt(rta_task_t *parent, const char *name,
                const rta_task_params_t *params, int stage,
                rta_task_t **out) {
  return task__adopt_hashed(parent, name, params, stage, NULL, 0, out);
}

int task__adopt_hashed(rta_task_t *parent, const char *name,
                       const rta_task_params_t *params, int stage,
                       const char *key, unsigned hash, rta_task_t **out) {
  rta_task_t *t;
  if (parent && (stage < 0 || stage >= parent->nstages))
    return BALLAST_EINVAL;
  int rc = make_task(parent, name, params, key, hash, &t);
  if (rc)
    return rc;
  if (task__index_reserve(1) || (parent && add_child(parent, t))) {
    free_task_record(t);
    return BALLAST_ENOMEM;
  }
  t->stage = parent ? stage : -1;
  link_task(t);
  *out = t;
  return 0;
}

int rta_task_find(const char *key, rta_task_t **out) {
  if (out)
    *out = NULL;
  int rc = task__check_key(key);
  if (rc || !out)
    return rc ? rc : BALLAST_EINVAL;
  rta_task_t *t = task__index_find(key, task__key_hash(key, strlen(key)));
  if (!t)
    return BALLAST_ENOTFOUND;
  *out = t;
  return 0;
}

/* ---- removal ---------------------------------------------------------------- */

static int subtree_open(const rta_task_t *t) {
  if (t->open)
    return 1;
  for (int i = 0; i < t->nchildren; i++)
    if (subtree_open(t->children[i]))
      return 1;
  return 0;
}

static void remove_subtree(rta_task_t *t) {
  for (int i = 0; i < t->nchildren; i++)
    remove_subtree(t->children[i]);
  task__index_del(t);
  free_task_record(t);
}

int rta_task_remove(rta_task_t *task) {
  if (!task)
    return BALLAST_EINVAL;
  if (subtree_open(task)) {
    BALLAST_WARN("rta: task_remove \"%s\": the task or a descendant is open",
                 task->key);
    return BALLAST_ESTATE;
  }
  rta_task_t *p = task->parent;
  if (p) {
    int i = 0;
    while (i < p->nchildren && p->children[i] != task)
      i++;
    if (i < p->nchildren) {
      memmove(p->children + i, p->children + i + 1,
              (size_t)(p->nchildren - i - 1) * sizeof *p->children);
      p->nchildren--;
    }
  }
  remove_subtree(task);
  return 0;
}

static int has_doomed_ancestor(const rta_task_t *t) {
  for (const rta_task_t *a = t->parent; a; a = a->parent)
    if (a->doomed)
      return 1;
  return 0;
}

/* Keeps the children not marked doomed, in order. */
static void compact_children(rta_task_t *p) {
  /* Each child's mark is one line of a record, cold for the children that
   * stay (a remap's root: thousands of them): asked for a few ahead, so
   * the misses overlap instead of coming one after the other. */
  enum { AHEAD = 8 };
  int k = 0;
  for (int i = 0; i < p->nchildren; i++) {
#if defined(__GNUC__)
    if (i + AHEAD < p->nchildren)
      __builtin_prefetch(&p->children[i + AHEAD]->doomed);
#endif
    if (!p->children[i]->doomed)
      p->children[k++] = p->children[i];
  }
  p->nchildren = k;
}

/* task__remove_tasks' marks of the tops, kept from call to call (a remap's
 * removal: thousands of tasks; a malloc of them each remap found the heap's
 * fast bins full of the departures' freed chunks and consolidated them,
 * 20% of the removal's samples at 4,096 x 4 KiB); freed by rta_reset. */
static unsigned char *top_mem;
static size_t top_cap;

/* The tops as a set of pointers (open addressing, at most half full), kept
 * from call to call like top_mem: a parent's children are compacted by
 * looking each up here instead of reading its mark, a line of its record,
 * cold for the thousands that stay (the compaction was two fifths of the
 * removal's samples at 4,096 x 4 KiB with the marks asked for ahead). */
static const rta_task_t **gone_set;
static size_t gone_cap; /* a power of two, or 0 */

static unsigned gone_bits; /* log2(gone_cap) */

/* Fibonacci hashing of the address: one multiplication. */
static size_t gone_home(const rta_task_t *t) {
  return (size_t)((((uint64_t)(uintptr_t)t >> 4) * 0x9E3779B97F4A7C15ull) >>
                  (64 - gone_bits));
}

/* An empty set with room for n tasks; 0 or BALLAST_ENOMEM (set unusable). */
static int gone_room(size_t n) {
  size_t cap = 64;
  while (cap < 2 * n)
    cap *= 2;
  if (cap > gone_cap) {
    const rta_task_t **m = ballast__malloc(cap * sizeof *m);
    if (!m)
      return BALLAST_ENOMEM;
    free(gone_set);
    gone_set = m;
    gone_cap = cap;
    for (gone_bits = 0; ((size_t)1 << gone_bits) < cap; gone_bits++)
      ;
  }
  memset(gone_set, 0, gone_cap * sizeof *gone_set);
  return 0;
}

static void gone_add(const rta_task_t *t) {
  size_t i = gone_home(t);
  while (gone_set[i] && gone_set[i] != t)
    i = (i + 1) & (gone_cap - 1);
  gone_set[i] = t;
}

static int gone_has(const rta_task_t *t) {
  for (size_t i = gone_home(t); gone_set[i]; i = (i + 1) & (gone_cap - 1))
    if (gone_set[i] == t)
      return 1;
  return 0;
}

/* compact_children() by the set of tops (gone_set) instead of the marks. */
static void compact_children_set(rta_task_t *p) {
  int k = 0;
  for (int i = 0; i < p->nchildren; i++)
    if (!gone_has(p->children[i]))
      p->children[k++] = p->children[i];
  p->nchildren = k;
}

static unsigned char *top_room(size_t n) {
  if (n > top_cap) {
    size_t cap = n + n / 4;
    unsigned char *m = ballast__malloc(cap);
    if (!m)
      return NULL;
    free(top_mem);
    top_mem = m;
    top_cap = cap;
  }
  return top_mem;
}

int task__remove_tasks(rta_task_t **v, int n) {
  /* Thousands of cold records after a remap: each asked for a few places
   * ahead of the first loop that reads it, and its index slot ahead of the
   * last. */
  enum { AHEAD = 8 };
  for (int i = 0; i < n; i++) {
    if (i + AHEAD < n)
      task__prefetch(v[i + AHEAD], 0);
    if (v[i] && subtree_open(v[i])) {
      BALLAST_WARN("rta: task_remove \"%s\": the task or a descendant is open",
                   v[i]->key);
      return BALLAST_ESTATE;
    }
  }
  unsigned char *top = n > 0 ? top_room((size_t)n) : NULL;
  if (!top) { /* out of memory (or nothing to do): one at a time */
    for (int i = 0; i < n; i++)
      if (v[i]) {
        int dup = 0;
        for (int j = 0; j < i && !dup; j++)
          dup = v[j] == v[i];
        if (!dup && !has_doomed_ancestor(v[i]))
          v[i]->doomed = 1;
      }
    /* Marked = first listing of a task with no listed ancestor. Removing
     * one never frees another marked task. */
    for (int i = 0; i < n; i++)
      if (v[i] && v[i]->doomed == 1) {
        v[i]->doomed = 0;
        rta_task_remove(v[i]);
      }
    return 0;
  }
  for (int i = 0; i < n; i++)
    if (v[i])
      v[i]->doomed = 1;
  /* Nothing is freed before every top is known: a top is the first listing
   * of a task with no doomed ancestor (its subtree goes with it). */
  for (int i = 0; i < n; i++) {
    rta_task_t *t = v[i];
    top[i] = t && t->doomed == 1 && !has_doomed_ancestor(t);
    if (top[i])
      t->doomed = 2; /* a second listing is not a top */
  }
  /* A top's parent survives; each such parent is compacted once. Its
   * children that are marked are tops (a top has no doomed ancestor, so
   * neither has a marked child of its parent). */
  int by_set = gone_room((size_t)n) == 0;
  for (int i = 0; by_set && i < n; i++)
    if (top[i])
      gone_add(v[i]);
  for (int i = 0; i < n; i++) {
    rta_task_t *p = top[i] ? v[i]->parent : NULL;
    if (p && !p->compacted) {
      if (by_set)
        compact_children_set(p);
      else
        compact_children(p);
      p->compacted = 1;
    }
  }
  for (int i = 0; i < n; i++)
    if (top[i] && v[i]->parent)
      v[i]->parent->compacted = 0;
  for (int i = 0; i < n; i++) {
    if (i + AHEAD < n && top[i + AHEAD])
      task__index_prefetch(v[i + AHEAD]);
    if (top[i])
      remove_subtree(v[i]);
  }
  return 0;
}

int rta_reset(void) {
  /* Close what is open so mon's region stack stays balanced. */
  while (nopen > 0) {
    rta_task_t *o = open_stack[--nopen];
    if (o->in_region)
      mon_region_leave(o->cold->region);
    o->open = 0;
    o->in_region = 0;
  }
  task__index_drain(free_task_record);
  free(top_mem);
  top_mem = NULL;
  top_cap = 0;
  free(gone_set);
  gone_set = NULL;
  gone_cap = 0;
  gone_bits = 0;
  free(open_stack);
  free(open_depth);
  open_stack = NULL;
  open_depth = NULL;
  capopen = 0;
  return task__cost_reset_config();
}

/* ---- accessors ---------------------------------------------------------------- */

const char *rta_task_key(const rta_task_t *t) { return t ? t->key : NULL; }
const char *rta_task_name(const rta_task_t *t) { return t ? t->cold->name : NULL; }
rta_task_t *rta_task_parent(const rta_task_t *t) { return t ? t->parent : NULL; }
int rta_task_nchildren(const rta_task_t *t) { return t ? t->nchildren : BALLAST_EINVAL; }
rta_task_t *rta_task_child(const rta_task_t *t, int i) {
  return (t && i >= 0 && i < t->nchildren) ? t->children[i] : NULL;
}
int rta_task_nstages(const rta_task_t *t) { return t ? t->nstages : BALLAST_EINVAL; }
int rta_task_stage(const rta_task_t *t) {
  if (!t)
    return BALLAST_EINVAL;
  return t->stage >= 0 ? t->stage : BALLAST_ENOTFOUND; /* a root has no stage */
}
const rta_task_params_t *rta_task_params(const rta_task_t *t) {
  return t ? &t->params : NULL;
}
void rta_task_set_data(rta_task_t *t, void *data) {
  if (t)
    t->data = data;
}
void *rta_task_data(const rta_task_t *t) { return t ? t->data : NULL; }

static int has_serial(const rta_serial_t *s) {
  return s->size || s->pack || s->unpack || s->release;
}

int rta_task_serial(const rta_task_t *t, rta_serial_t *ops, void **user) {
  if (!t)
    return BALLAST_EINVAL;
  for (; t; t = t->parent)
    if (has_serial(&t->params.serial)) {
      if (ops)
        *ops = t->params.serial;
      if (user)
        *user = t->params.user;
      return 0;
    }
  return BALLAST_ENOTFOUND;
}

int task__open_depth(void) { return nopen; }

/* ---- begin / end ---------------------------------------------------------------- */

int rta_task_begin(rta_task_t *t) {
  if (!t)
    return BALLAST_EINVAL;
  /* Outside MPI_Init..MPI_Finalize nothing could be measured: refuse rather
   * than answer 0 for a task that is clocked nowhere. */
  int rc = ballast__need_mpi("rta_task_begin");
  if (rc)
    return rc;
  if (t->open)
    return key_error("task_begin: task already open", t->key, BALLAST_ESTATE);
  if (nopen == capopen) {
    int cap = capopen ? 2 * capopen : 8;
    rta_task_t **s = ballast__realloc(open_stack, (size_t)cap * sizeof *s);
    if (!s)
      return BALLAST_ENOMEM;
    open_stack = s;
    int *d = ballast__realloc(open_depth, (size_t)cap * sizeof *d);
    if (!d)
      return BALLAST_ENOMEM;
    open_depth = d;
    capopen = cap;
    mon__set_finalize_left_hook(on_finalize_left);
  }
  /* The handle makes entering the region O(1), without hashing the key. */
  task__cold_t *cold = t->cold;
  if (!cold->region) {
    rc = mon_region_handle_create(t->key, &cold->region);
    if (rc)
      return rc;
    t->cold_held = 1;
  }
  /* The task's slice encloses its region's (tool.h, "Nesting"): task_begin
   * is raised before the region is entered, as task_end after it is left. */
  if (TOOL__ON(TOOL__EV_TASK_BEGIN)) {
    ballast_tool_task_t ev = {.t_ns = tool__now(), .key = t->key};
    tool__emit_task_begin(&ev);
  }
  /* With monitoring off the region call succeeds and does nothing (estimates
   * serve in the cost model). */
  t->in_region = mon_region_enter(cold->region) == 0;
  if (t->in_region)
    task__cost_on_begin(t);
  open_depth[nopen] = t->in_region ? mon__region_depth() : 0;
  open_stack[nopen++] = t;
  t->open = 1;
  return 0;
}

int rta_task_end(rta_task_t *t) {
  if (!t)
    return BALLAST_EINVAL;
  int rc = ballast__need_mpi("rta_task_end");
  if (rc)
    return rc;
  if (!t->open)
    return key_error("task_end without a matching task_begin", t->key,
                     BALLAST_EMISMATCH);
  if (open_stack[nopen - 1] != t) {
    BALLAST_WARN("rta: task_end \"%s\": the innermost open task is \"%s\" (%s)",
                 t->key, open_stack[nopen - 1]->key,
                 ballast_err_name(BALLAST_EMISMATCH));
    return BALLAST_EMISMATCH;
  }
  if (t->in_region) {
    rc = mon_region_leave(t->cold->region);
    if (rc == BALLAST_EMISMATCH) {
      /* An application region opened inside the task is still open: keep
       * the task open too, so rta and mon agree; the application closes its
       * region and ends the task again. */
      return key_error("task_end: a region opened inside the task is still open",
                       t->key, rc);
    }
  }
  t->open = 0;
  t->in_region = 0;
  nopen--;
  emit_task_end(t);
  return 0;
}

rta_task_t *rta_task_current(void) {
  return nopen > 0 ? open_stack[nopen - 1] : NULL;
}
