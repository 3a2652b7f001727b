/*
 * Nested named regions.
 *
 * The region tree is global: a region is identified by (parent, name), so
 * "solve" under "step" and "solve" under "init" are two regions. Ids are dense
 * and never reused; region 0 is the whole program ("ballast_main"). Tree
 * nodes live in a chunked array that never moves: readers on any thread use
 * ids below mon__region_count() without a lock. Creating a region and the
 * (parent, name) -> child lookup take one global mutex; in the steady state
 * neither is needed: mon_region_begin first tries a per-thread cache keyed
 * by (parent, name pointer) and confirmed with strcmp, and rta's handle form
 * (mon_region_enter) caches the child in the handle, hashing no string.
 *
 * Each thread keeps its own stack of open regions. Closing one adds, for the
 * closing thread: count += 1, inclusive wall ticks, inclusive MPI ticks (the
 * difference of the thread's running MPI counter, see aggregate.c), thread
 * CPU time, PAPI counter deltas when the machine has counters, and the
 * instance's wall time in the region's distribution (common/dist.h). A region's
 * figures are the sum over threads, and count closed instances only.
 *
 * Bad input never changes the stack: it returns an error and warns once per
 * distinct problem (mon__warn_once).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common_internal.h"
#include "mon/mon_core.h"
#include "tool/tool_internal.h"

#undef uthash_fatal
#define uthash_fatal(msg) abort()
#include <uthash.h>

typedef struct {
  const char *name; /* interned, owned by the names table */
  int parent, name_id;
  int first_child, next_sibling; /* atomic; -1 for none */
  int repeated;                   /* atomic: marked repeated (reps.c) */
  mon__rep_t *rep;                /* atomic: its series, once thread 0 entered it */
} region_t;

typedef struct {
  int id;           /* name id */
  int first_region; /* first region created with this name */
  int repeated;     /* regions of this name are repeated (mon_region_repeat) */
  UT_hash_handle hh;
  char name[];      /* one allocation per name: 10^6 regions stay small */
} name_t;

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static region_t *reg_meta[MON__MAX_CHUNKS];
static int reg_count; /* published with release after the node is written */
static int any_repeated; /* a name was marked repeated: push looks further */
/* The region extras: work a region's begin and end do only when a feature
 * asks for it, in one word, so that a plain pair tests one flag. A frame keeps
 * the word of its begin, so its end undoes exactly what the begin did. */
enum { RX_PAPI = 1, RX_CPU = 2, RX_REPEAT = 4, RX_MPIT = 8 };
static unsigned region_extras;
static name_t *names;
static int names_count;
/* (parent, name id) -> region id: open addressing, linear probing, load <= 1/2. */
static int *child_slots;
static size_t child_cap;

static region_t *meta(int id) {
  return &MON__LDACQ(&reg_meta[id >> MON__CHUNK_BITS])[id & (MON__CHUNK - 1)];
}

static size_t child_hash(int parent, int name_id) {
  uint64_t k = ((uint64_t)(uint32_t)parent << 32) | (uint32_t)name_id;
  k *= 0x9e3779b97f4a7c15ULL;
  return (size_t)(k ^ (k >> 29));
}

/* Under reg_lock. */
static int child_lookup(int parent, int name_id) {
  if (!child_cap)
    return -1;
  for (size_t i = child_hash(parent, name_id) & (child_cap - 1);;
       i = (i + 1) & (child_cap - 1)) {
    int id = child_slots[i];
    if (id < 0)
      return -1;
    region_t *r = meta(id);
    if (r->parent == parent && r->name_id == name_id)
      return id;
  }
}

static int child_insert(int id) {
  if ((size_t)(reg_count + 1) * 2 > child_cap) {
    size_t ncap = child_cap ? child_cap * 2 : 1024;
    int *ns = malloc(ncap * sizeof *ns);
    if (!ns)
      return BALLAST_ENOMEM;
    memset(ns, 0xff, ncap * sizeof *ns);
    for (size_t j = 0; j < child_cap; j++) {
      int cid = child_slots[j];
      if (cid <= 0)
        continue;
      region_t *r = meta(cid);
      size_t i = child_hash(r->parent, r->name_id) & (ncap - 1);
      while (ns[i] >= 0)
        i = (i + 1) & (ncap - 1);
      ns[i] = cid;
    }
    free(child_slots);
    child_slots = ns;
    child_cap = ncap;
  }
  region_t *r = meta(id);
  size_t i = child_hash(r->parent, r->name_id) & (child_cap - 1);
  while (child_slots[i] >= 0)
    i = (i + 1) & (child_cap - 1);
  child_slots[i] = id;
  return 0;
}

/* Under reg_lock: the interned name (created when create != 0). */
static name_t *name_get(const char *s, int create) {
  name_t *n = NULL;
  HASH_FIND_STR(names, s, n);
  if (n || !create)
    return n;
  size_t len = strlen(s);
  n = malloc(sizeof *n + len + 1);
  if (!n)
    return NULL;
  memset(n, 0, sizeof *n);
  memcpy(n->name, s, len + 1);
  n->id = names_count++;
  n->first_region = -1;
  HASH_ADD_KEYPTR(hh, names, n->name, len, n);
  return n;
}

/* Under reg_lock: the child of parent named n, created on first use. */
static int region_child(int parent, name_t *n) {
  int id = child_lookup(parent, n->id);
  if (id >= 0)
    return id;
  id = reg_count;
  if (id >= MON__MAX_REGIONS)
    return BALLAST_ERANGE;
  int c = id >> MON__CHUNK_BITS;
  if (!reg_meta[c]) {
    region_t *chunk = calloc(MON__CHUNK, sizeof *chunk);
    if (!chunk)
      return BALLAST_ENOMEM;
    MON__STREL(&reg_meta[c], chunk);
  }
  region_t *r = &reg_meta[c][id & (MON__CHUNK - 1)];
  r->name = n->name;
  r->parent = parent;
  r->name_id = n->id;
  r->first_child = -1;
  r->next_sibling = -1;
  r->repeated = n->repeated;
  r->rep = NULL;
  if (id > 0 && child_insert(id) != 0)
    return BALLAST_ENOMEM;
  if (n->first_region < 0)
    n->first_region = id;
  /* The id exists before it is linked: a reader that gets it from its
   * parent's child list must be able to read it and walk on from it. */
  MON__STREL(&reg_count, id + 1);
  if (id > 0) {
    region_t *p = meta(parent);
    MON__ST(&r->next_sibling, MON__LD(&p->first_child));
    MON__STREL(&p->first_child, id);
  }
  return id;
}

void mon__regions_init(void) {
  pthread_mutex_lock(&reg_lock);
  if (reg_count == 0) {
    name_t *n = name_get("ballast_main", 1);
    if (n)
      region_child(-1, n);
  }
  pthread_mutex_unlock(&reg_lock);
}

void mon__regions_free(void) {
  pthread_mutex_lock(&reg_lock);
  name_t *n, *tmp;
  HASH_ITER(hh, names, n, tmp) {
    HASH_DEL(names, n);
    free(n);
  }
  names_count = 0;
  for (int c = 0; c < MON__MAX_CHUNKS; c++) {
    free(reg_meta[c]);
    reg_meta[c] = NULL;
  }
  free(child_slots);
  child_slots = NULL;
  child_cap = 0;
  MON__STREL(&reg_count, 0);
  pthread_mutex_unlock(&reg_lock);
}

/* ---- per-thread statistics and the stack ---------------------------------------- */

static ballast__dist_t *regdist_get(mon__tls_t *t, int region);

/* The region's distribution chunk comes with its statistics chunk, so that
 * push checks one pointer. */
mon__regacc_t *mon__regacc_get(mon__tls_t *t, int region) {
  int c = region >> MON__CHUNK_BITS;
  mon__regacc_t *chunk = t->reg[c];
  if (!chunk) {
    if (!regdist_get(t, region))
      return NULL;
    chunk = calloc(MON__CHUNK, sizeof *chunk);
    if (!chunk)
      return NULL;
    MON__STREL(&t->reg[c], chunk);
  }
  return &chunk[region & (MON__CHUNK - 1)];
}

static ballast__dist_t *regdist_get(mon__tls_t *t, int region) {
  int c = region >> MON__CHUNK_BITS;
  if (!t->regdist[c]) {
    /* zeros are empty distributions; 64 KiB per 1,024 regions of a thread,
     * each on its own cache line */
    ballast__dist_t *chunk = aligned_alloc(64, MON__CHUNK * sizeof *chunk);
    if (!chunk)
      return NULL;
    memset(chunk, 0, MON__CHUNK * sizeof *chunk);
    MON__STREL(&t->regdist[c], chunk);
  }
  return &t->regdist[c][region & (MON__CHUNK - 1)];
}

void mon__regdist_free(mon__tls_t *t) {
  for (int c = 0; c < MON__MAX_CHUNKS; c++) {
    if (!t->regdist[c])
      continue;
    for (int s = 0; s < MON__CHUNK; s++)
      ballast__dist_free(&t->regdist[c][s]);
    free(t->regdist[c]);
    t->regdist[c] = NULL;
  }
}

static long long (*reghw_get(mon__tls_t *t, int region))[4] {
  int c = region >> MON__CHUNK_BITS;
  if (!t->reghw[c]) {
    long long (*chunk)[4] = calloc(MON__CHUNK, sizeof *chunk);
    if (!chunk)
      return NULL;
    MON__STREL(&t->reghw[c], chunk);
  }
  return &t->reghw[c][region & (MON__CHUNK - 1)];
}

/* Raises region_enter / region_exit for the tools interface. */
static void region_event(unsigned ev, uint64_t ticks, int id, int depth) {
  ballast_tool_region_t e = {
      .t_ns = mon__ticks_ns(ticks), .name = meta(id)->name, .id = id, .depth = depth};
  if (ev == TOOL__EV_REGION_ENTER)
    tool__emit_region_enter(&e);
  else
    tool__emit_region_exit(&e);
}

/* The series of repeated region id, created at its first instance on thread
 * 0 (the only writer of r->rep); NULL (warned once) when out of memory. */
static mon__rep_t *rep_of(int id) {
  region_t *m = meta(id);
  mon__rep_t *r = MON__LD(&m->rep);
  if (r)
    return r;
  r = mon__rep_create(id);
  if (!r) {
    mon__warn_once("repoom", m->name,
                   "mon: out of memory for the repetitions of region \"%s\"; its "
                   "instances count as usual but are not kept as repetitions", m->name);
    return NULL;
  }
  MON__STREL(&m->rep, r);
  return r;
}

void mon__region_extras_update(void) {
  unsigned x = (mon__papi_nevents() > 0 ? RX_PAPI : 0) | (mon__cfg.region_cpu ? RX_CPU : 0) |
               (MON__LD(&any_repeated) ? RX_REPEAT : 0) | (MON__LD(&mon__mpit_n) ? RX_MPIT : 0);
  MON__ST(&region_extras, x);
}

/* A begin's extras, in their order: the repetition, MPI_T, PAPI, the CPU clock. */
static void push_extras(mon__tls_t *t, mon__frame_t *f, unsigned x) {
  if ((x & RX_REPEAT) && t->index == 0 && MON__LD(&meta(f->id)->repeated))
    f->rep = rep_of(f->id);
  if (f->rep)
    mon__rep_begin(t, f);
  if ((x & RX_MPIT) && MON__LD(&mon__mpit_n) && t->index == 0)
    mon__mpit_push(t->depth - 1);
  if (x & RX_PAPI)
    mon__papi_read(t, f->hw0);
  /* A system call (no vDSO for thread CPU clocks): BALLAST_REGION_CPU=0 skips
   * it for very fine-grained regions. */
  f->c0 = (x & RX_CPU) ? mon__thread_cpu_ns() : 0;
}

static int push(mon__tls_t *t, int id) {
  if (t->depth == t->cap) {
    int ncap = t->cap ? t->cap * 2 : 16;
    mon__frame_t *ns = realloc(t->stack, (size_t)ncap * sizeof *ns);
    if (!ns)
      return BALLAST_ENOMEM;
    t->stack = ns;
    t->cap = ncap;
  }
  unsigned x = MON__LD(&region_extras);
  /* Allocate the statistics record now, so closing the region cannot fail. */
  if (!mon__regacc_get(t, id))
    return BALLAST_ENOMEM;
  if ((x & RX_PAPI) && !reghw_get(t, id))
    return BALLAST_ENOMEM;
  mon__frame_t *f = &t->stack[t->depth++];
  f->id = id;
  f->extras = x;
  f->rep = NULL;
  if (__builtin_expect(x != 0, 0))
    push_extras(t, f, x);
  f->m0 = MON__LD(&t->mpi_ticks);
  f->t0 = mon__ticks();
  t->cur_region = id;
  if (TOOL__ON(TOOL__EV_REGION_ENTER))
    region_event(TOOL__EV_REGION_ENTER, f->t0, id, t->depth);
  return 0;
}

/* An end's extras before its exit event: the CPU time, MPI_T, the
 * repetition. Returns the instance's CPU time (0 without the clock). */
static uint64_t pop_extras(mon__tls_t *t, mon__frame_t *f, uint64_t wall, uint64_t mt) {
  unsigned x = f->extras;
  uint64_t cpu = (x & RX_CPU) ? mon__thread_cpu_ns() - f->c0 : 0;
  if ((x & RX_MPIT) && MON__LD(&mon__mpit_n) && t->index == 0)
    mon__mpit_pop(f->id, t->depth - 1);
  /* A repetition is labelled before the exit event, so what the event
   * runs (performance assertions marked good) sees its label. */
  if (f->rep)
    mon__rep_end(t, f, wall, mt, cpu);
  return cpu;
}

static void pop(mon__tls_t *t) {
  uint64_t now = mon__ticks();
  mon__frame_t *f = &t->stack[t->depth - 1];
  uint64_t mt = MON__LD(&t->mpi_ticks) - f->m0;
  unsigned x = f->extras;
  uint64_t cpu = __builtin_expect(x != 0, 0) ? pop_extras(t, f, now - f->t0, mt) : 0;
  if (TOOL__ON(TOOL__EV_REGION_EXIT))
    region_event(TOOL__EV_REGION_EXIT, now, f->id, t->depth);
  f = &t->stack[--t->depth]; /* the event's handlers may have grown the stack */
  int c = f->id >> MON__CHUNK_BITS, s = f->id & (MON__CHUNK - 1);
  mon__regacc_t *a = &t->reg[c][s];
  MON__ADD(&a->wticks, now - f->t0);
  ballast__dist_add(&t->regdist[c][s], mon__dur_ns(now - f->t0));
  MON__ADD(&a->mticks, mt);
  if (x & RX_CPU)
    MON__ADD(&a->cpu_ns, cpu);
  if (x & RX_PAPI) {
    int nhw = mon__papi_nevents();
    long long v[4];
    mon__papi_read(t, v);
    long long *hw = t->reghw[c][s];
    for (int i = 0; i < nhw; i++)
      MON__ADD(&hw[i], v[i] - f->hw0[i]);
  }
  /* The count last: a reader that sees the count sees the times too. */
  __atomic_store_n(&a->count, MON__LD(&a->count) + 1, __ATOMIC_RELEASE);
  t->cur_region = t->depth ? t->stack[t->depth - 1].id : 0;
}

/* ---- checks ---------------------------------------------------------------------------- */

static int check_name(const char *name, const char *what) {
  if (!name) {
    mon__warn_once("null", what, "mon: %s of a region with a NULL name (ignored)", what);
    return BALLAST_EINVAL;
  }
  if (!*name) {
    mon__warn_once("empty", what, "mon: %s of a region with an empty name (ignored)", what);
    return BALLAST_EINVAL;
  }
  if (strnlen(name, MON__NAME_MAX + 1) > MON__NAME_MAX) {
    char head[33];
    snprintf(head, sizeof head, "%s", name);
    mon__warn_once("long", head,
                   "mon: %s of a region whose name is longer than %d bytes "
                   "(\"%s...\", ignored)", what, MON__NAME_MAX, head);
    return BALLAST_ENAMETOOLONG;
  }
  return 0;
}

/* 1: record; 0: monitoring is off (calls succeed and do nothing); <0: error. */
static int check_state(void) {
  int st = MON__LD(&mon__state);
  if (st == MON__ON)
    return 1;
  if (mon__cfg.disabled)
    return 0;
  mon__warn_once("state", st == MON__DONE ? "after" : "before",
                 "mon: region call %s monitoring (%s)",
                 st == MON__DONE ? "after the end of" : "before the start of",
                 st == MON__DONE ? "after MPI_Finalize" : "before MPI_Init");
  return BALLAST_ESTATE;
}

/* ---- public API -------------------------------------------------------------------- */

/* The region of \a name under the thread's current one when the thread's
 * cache holds it (a name seen there was valid: no length check), else -1. */
static int cached_child(mon__tls_t *t, const char *name, unsigned *slot) {
  int parent = t->cur_region;
  *slot = (unsigned)(((uintptr_t)name >> 3) ^ ((unsigned)parent * 0x9e3779b1u)) &
          (MON__RCACHE - 1);
  int id = t->rcache[*slot].id;
  /* The pointer alone could name a reused buffer: the strcmp makes it sure. */
  return t->rcache[*slot].name == name && t->rcache[*slot].parent == parent && id > 0 &&
                 strcmp(meta(id)->name, name) == 0
             ? id
             : -1;
}

int mon_region_begin(const char *name) {
  mon__tls_t *t = mon__tl_self;
  unsigned slot;
  int id;
  /* The usual case first: monitoring on, a name this thread began here. */
  if (name && t && MON__LD(&mon__state) == MON__ON && (id = cached_child(t, name, &slot)) > 0)
    return push(t, id);
  int rc = check_name(name, "begin");
  if (rc)
    return rc;
  if ((rc = check_state()) <= 0)
    return rc;
  if (!(t = mon__tls_get()))
    return BALLAST_ENOMEM;
  int parent = t->cur_region;
  if ((id = cached_child(t, name, &slot)) < 0) {
    pthread_mutex_lock(&reg_lock);
    name_t *n = name_get(name, 1);
    id = n ? region_child(parent, n) : BALLAST_ENOMEM;
    pthread_mutex_unlock(&reg_lock);
    if (id < 0) {
      mon__warn_once("create", name, "mon: cannot create region \"%s\": %s", name,
                     ballast_strerror(id));
      return id;
    }
    t->rcache[slot].name = name;
    t->rcache[slot].parent = parent;
    t->rcache[slot].id = id;
  }
  return push(t, id);
}

/* Checks that the innermost open region is the one being ended. */
static int check_top(mon__tls_t *t, const char *name, int name_id) {
  if (!t || t->depth == 0) {
    mon__warn_once("nobegin", name,
                   "mon: end of region \"%s\" without a begin (ignored)", name);
    return BALLAST_EMISMATCH;
  }
  region_t *top = meta(t->stack[t->depth - 1].id);
  if (name_id >= 0 ? top->name_id != name_id : strcmp(top->name, name) != 0) {
    char key[2 * MON__NAME_MAX + 8];
    snprintf(key, sizeof key, "%s>%s", top->name, name);
    mon__warn_once("mismatch", key,
                   "mon: end of region \"%s\" while \"%s\" is the innermost "
                   "open region (ignored, regions stay open)", name, top->name);
    return BALLAST_EMISMATCH;
  }
  return 0;
}

int mon_region_end(const char *name) {
  mon__tls_t *t = mon__tl_self;
  /* The usual case first: monitoring on and the name of the innermost open
   * region (a valid name: no length check). */
  if (name && t && t->depth > 0 && MON__LD(&mon__state) == MON__ON &&
      strcmp(meta(t->stack[t->depth - 1].id)->name, name) == 0) {
    pop(t);
    return 0;
  }
  int rc = check_name(name, "end");
  if (rc)
    return rc;
  if ((rc = check_state()) <= 0)
    return rc;
  if ((rc = check_top(t, name, -1)) != 0)
    return rc;
  pop(t);
  return 0;
}

/* The task runtime's: ends a task whose region MPI_Finalize left. */
static mon__region_left_fn finalize_left;

int mon__regions_close_all(void) {
  mon__tls_t *t = mon__tl_self;
  if (!t || t->depth == 0)
    return 0;
  int n = t->depth;
  mon__warn_once("open", meta(t->stack[n - 1].id)->name,
                 "mon: MPI_Finalize with %d region(s) still open (innermost "
                 "\"%s\"); closing them", n, meta(t->stack[n - 1].id)->name);
  while (t->depth) {
    int depth = t->depth;
    pop(t);
    mon__region_left_fn fn = __atomic_load_n(&finalize_left, __ATOMIC_ACQUIRE);
    if (fn)
      fn(depth);
  }
  return n;
}

void mon__set_finalize_left_hook(mon__region_left_fn fn) {
  __atomic_store_n(&finalize_left, fn, __ATOMIC_RELEASE);
}

/* ---- handles (cheap form for rta) ------------------------------------------------------ */

struct mon_region_handle_s {
  int name_id;
  uint64_t cache; /* atomic: (parent + 1) << 32 | child id; 0 = empty */
  char name[];
};

int mon_region_handle_create(const char *name, mon_region_handle_t *h) {
  if (!h)
    return BALLAST_EINVAL;
  *h = NULL;
  int rc = check_name(name, "handle");
  if (rc)
    return rc;
  size_t len = strlen(name);
  mon_region_handle_t nh = malloc(sizeof *nh + len + 1);
  if (!nh)
    return BALLAST_ENOMEM;
  memcpy(nh->name, name, len + 1);
  nh->cache = 0;
  pthread_mutex_lock(&reg_lock);
  name_t *n = name_get(name, 1);
  nh->name_id = n ? n->id : -1;
  pthread_mutex_unlock(&reg_lock);
  if (!n) {
    free(nh);
    return BALLAST_ENOMEM;
  }
  *h = nh;
  return 0;
}

void mon_region_handle_destroy(mon_region_handle_t h) { free(h); }

int mon_region_enter(mon_region_handle_t h) {
  if (!h)
    return BALLAST_EINVAL;
  int rc = check_state();
  if (rc <= 0)
    return rc;
  mon__tls_t *t = mon__tls_get();
  if (!t)
    return BALLAST_ENOMEM;
  int parent = t->cur_region;
  uint64_t c = MON__LDACQ(&h->cache); /* pairs with the release below */
  int id;
  if ((int)(c >> 32) == parent + 1) {
    id = (int)(uint32_t)c;
  } else {
    pthread_mutex_lock(&reg_lock);
    name_t *n = name_get(h->name, 1);
    id = n ? region_child(parent, n) : BALLAST_ENOMEM;
    pthread_mutex_unlock(&reg_lock);
    if (id < 0)
      return id;
    MON__STREL(&h->cache, ((uint64_t)(uint32_t)(parent + 1) << 32) | (uint32_t)id);
  }
  return push(t, id);
}

int mon_region_leave(mon_region_handle_t h) {
  if (!h)
    return BALLAST_EINVAL;
  int rc = check_state();
  if (rc <= 0)
    return rc;
  mon__tls_t *t = mon__tl_self;
  if ((rc = check_top(t, h->name, h->name_id)) != 0)
    return rc;
  pop(t);
  return 0;
}

/* ---- read side --------------------------------------------------------------------------- */

int mon__region_count(void) { return MON__LDACQ(&reg_count); }

static int valid(int id) { return id >= 0 && id < mon__region_count(); }

const char *mon__region_name(int id) { return valid(id) ? meta(id)->name : NULL; }

int mon__region_find(const char *name) {
  if (!name)
    return BALLAST_EINVAL;
  pthread_mutex_lock(&reg_lock);
  name_t *n = name_get(name, 0);
  int id = n ? n->first_region : -1;
  pthread_mutex_unlock(&reg_lock);
  return id >= 0 ? id : BALLAST_ENOTFOUND;
}

int mon__region_find_child(int parent, const char *name) {
  if (!name)
    return BALLAST_EINVAL;
  if (!valid(parent))
    return BALLAST_ENOTFOUND;
  pthread_mutex_lock(&reg_lock);
  name_t *n = name_get(name, 0);
  int id = n ? child_lookup(parent, n->id) : -1;
  pthread_mutex_unlock(&reg_lock);
  return id >= 0 ? id : BALLAST_ENOTFOUND;
}

int mon__region_current(void) {
  mon__tls_t *t = mon__tl_self;
  return t ? t->cur_region : 0;
}

int mon__region_depth(void) {
  mon__tls_t *t = mon__tl_self;
  return t ? t->depth : 0;
}

int mon__region_parent(int id) {
  if (!valid(id))
    return BALLAST_ENOTFOUND;
  return meta(id)->parent;
}

int mon__region_first_child(int id) {
  if (!valid(id))
    return BALLAST_ENOTFOUND;
  return MON__LDACQ(&meta(id)->first_child);
}

int mon__region_next_sibling(int id) {
  if (!valid(id))
    return BALLAST_ENOTFOUND;
  return MON__LDACQ(&meta(id)->next_sibling);
}

int mon__region_mark_repeated(const char *name) {
  pthread_mutex_lock(&reg_lock);
  name_t *n = name_get(name, 1);
  if (n) {
    n->repeated = 1;
    MON__ST(&any_repeated, 1);
    mon__region_extras_update();
    for (int id = 0; id < reg_count; id++)
      if (meta(id)->name_id == n->id)
        MON__ST(&meta(id)->repeated, 1);
  }
  pthread_mutex_unlock(&reg_lock);
  return n ? 0 : BALLAST_ENOMEM;
}

int mon__region_is_repeated(int id) {
  if (!valid(id))
    return BALLAST_ENOTFOUND;
  return MON__LD(&meta(id)->repeated) ? 1 : 0;
}

mon__rep_t *mon__region_rep(int id) {
  return valid(id) ? MON__LDACQ(&meta(id)->rep) : NULL;
}

int mon_region_repeat(const char *name) {
  int rc = check_name(name, "repeat");
  if (rc)
    return rc;
  if (mon__cfg.disabled)
    return 0;
  return mon__region_mark_repeated(name);
}

int mon__region_read(int id, mon__regstats_t *out) {
  if (!out)
    return BALLAST_EINVAL;
  if (!valid(id))
    return BALLAST_ENOTFOUND;
  memset(out, 0, sizeof *out);
  double sec = mon__tick_seconds();
  out->nhwc = mon__papi_nevents();
  if (id == 0) {
    /* The whole program: live while it runs, fixed at MPI_Finalize. */
    uint64_t fin = MON__LD(&mon__cfg.t_fin);
    uint64_t end = fin ? fin : mon__ticks();
    uint64_t m = 0;
    for (mon__tls_t *t = mon__tls_first(); t; t = t->next)
      m += MON__LD(&t->mpi_ticks);
    out->count = 1;
    out->wtime = mon__cfg.t_init ? (double)(end - mon__cfg.t_init) * sec : 0.0;
    out->mtime = (double)m * sec;
    out->cputime = (double)(fin ? mon__cfg.cpu_fin_ns : mon__process_cpu_ns()) * 1e-9;
    return 0;
  }
  int c = id >> MON__CHUNK_BITS, s = id & (MON__CHUNK - 1);
  uint64_t n = 0, w = 0, m = 0, cpu = 0;
  for (mon__tls_t *t = mon__tls_first(); t; t = t->next) {
    mon__regacc_t *chunk = MON__LDACQ(&t->reg[c]);
    if (!chunk)
      continue;
    n += __atomic_load_n(&chunk[s].count, __ATOMIC_ACQUIRE);
    w += MON__LD(&chunk[s].wticks);
    m += MON__LD(&chunk[s].mticks);
    cpu += MON__LD(&chunk[s].cpu_ns);
    long long (*hw)[4] = MON__LDACQ(&t->reghw[c]);
    for (int i = 0; hw && i < out->nhwc; i++)
      out->hwc[i] += MON__LD(&hw[s][i]);
  }
  out->count = n;
  out->wtime = (double)w * sec;
  out->mtime = (double)m * sec;
  out->cputime = (double)cpu * 1e-9;
  return 0;
}

const char *mon__path_step(const char *parent, const char *name) {
  if (!parent)
    return name;
  size_t n = strlen(parent);
  if (strncmp(name, parent, n) == 0 && name[n] == '/' && name[n + 1])
    return name + n + 1;
  return name;
}
