/* Scopes: what an assertion is checked over. Each thread keeps a stack of
 * frames, one per open in-code scope and per open instance of a region that
 * has assertions; a frame holds the instant, the CPU time and a snapshot of
 * the activities its assertions read, taken at entry. At exit the change is
 * handed to assert__check. Activity figures are whole-run (all threads, every
 * region), so an inner scope's MPI time also counts in the outer ones.
 *
 * A region's assertions are found once per region id (a binding: the
 * assertions on that name and the union of their activities, so each entry
 * and exit reads each activity once however many assertions share it). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "assert/assert_internal.h"
#include "common/common_internal.h"

#define MAX_FRAMES 64

typedef struct binding {
  int n;             /* assertions */
  pa_assert_t **as;
  int nact;          /* union of their activities */
  int *acts;
  int *map;          /* per assertion, its slot -> union index */
  int *mapoff;
  int uses_cpu;
  int gen;           /* region assertions' generation it was built for */
  struct binding *next;
} binding_t;

typedef struct {
  int region;        /* region id, or -1 for an in-code scope */
  int id;            /* the assertion (in-code scope) */
  const binding_t *b;
  int cpu;           /* CPU time read at both ends */
  uint64_t t0;
  double cpu0;
  size_t off;        /* its snapshot in the thread's buffer */
} frame_t;

typedef struct {
  frame_t f[MAX_FRAMES];
  int depth;
  double *snap;
  size_t cap, used;
} stack_t_;

static __thread stack_t_ *tl;
static pthread_key_t tl_key;
static pthread_once_t tl_once = PTHREAD_ONCE_INIT;

static void stack_free(void *p) {
  stack_t_ *s = p;
  if (s) {
    free(s->snap);
    free(s);
  }
}
static void key_make(void) { pthread_key_create(&tl_key, stack_free); }

static stack_t_ *stack(void) {
  if (__builtin_expect(!!(tl != NULL), 1))
    return tl;
  pthread_once(&tl_once, key_make);
  tl = ballast__calloc(1, sizeof *tl);
  if (tl)
    pthread_setspecific(tl_key, tl);
  return tl;
}

/* Push a frame reading \a acts; BALLAST_ERANGE when too deep. */
static int push(int region, int id, const binding_t *b, const int *acts, int nact,
                int cpu) {
  stack_t_ *s = stack();
  if (!s)
    return BALLAST_ENOMEM;
  if (s->depth == MAX_FRAMES)
    return BALLAST_ERANGE;
  size_t need = s->used + 3 * (size_t)nact;
  if (need > s->cap) {
    size_t cap = s->cap ? s->cap * 2 : 256;
    while (cap < need)
      cap *= 2;
    double *q = ballast__realloc(s->snap, cap * sizeof *q);
    if (!q)
      return BALLAST_ENOMEM;
    s->snap = q;
    s->cap = cap;
  }
  frame_t *f = &s->f[s->depth++];
  *f = (frame_t){region, id, b, cpu, 0, 0, s->used};
  for (int i = 0; i < nact; i++)
    assert__act_read(acts[i], s->snap + s->used + 3 * i);
  s->used = need;
  /* The clocks last, so the snapshot's own cost is outside the scope. */
  f->cpu0 = cpu ? assert__cpu_now() : 0;
  f->t0 = assert__now_ns();
  return 0;
}

/* The change since frame \a f (top of the stack): fills d and acts (3 per
 * activity), then pops it. */
static void pop(stack_t_ *s, const int *acts, int nact, pa_delta_t *d, double *out) {
  frame_t *f = &s->f[s->depth - 1];
  d->wall = 1e-9 * (double)(assert__now_ns() - f->t0);
  d->cpu = f->cpu ? assert__cpu_now() - f->cpu0 : 0;
  const double *snap = s->snap + f->off;
  for (int i = 0; i < nact; i++) {
    assert__act_read(acts[i], out + 3 * i);
    for (int k = 0; k < 3; k++)
      out[3 * i + k] -= snap[3 * i + k];
  }
  d->act = out;
  s->used = f->off;
  s->depth--;
}

/* ---- in-code scopes -------------------------------------------------------- */

BALLAST_API int pia_assert_begin(int id) {
  pa_assert_t *a = assert__get(id);
  if (!a)
    return BALLAST_ENOTFOUND;
  if (a->kind != PA_KIND_SCOPE)
    return BALLAST_ESTATE;
  return push(-1, id, NULL, a->prog.acts, a->prog.nact, a->prog.uses_cpu);
}

BALLAST_API int pia_assert_end(int id) {
  pa_assert_t *a = assert__get(id);
  if (!a)
    return BALLAST_ENOTFOUND;
  stack_t_ *s = tl;
  if (!s || !s->depth || s->f[s->depth - 1].region != -1 || s->f[s->depth - 1].id != id)
    return BALLAST_EMISMATCH;
  double act[3 * PA_MAX_ACTS];
  pa_delta_t d;
  pop(s, a->prog.acts, a->prog.nact, &d, act);
  return assert__check(a, &d);
}

/* ---- regions ---------------------------------------------------------------- */

#define ID_CHUNK 1024
#define ID_NCHUNK 1024
static binding_t **by_id[ID_NCHUNK];
static binding_t *all;  /* every binding built, freed at the end */
static int region_gen;  /* bumped by each new region assertion */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

void assert__region_added(void) { __atomic_add_fetch(&region_gen, 1, __ATOMIC_ACQ_REL); }

static void binding_free(binding_t *b) {
  free(b->as);
  free(b->acts);
  free(b->map);
  free(b->mapoff);
  free(b);
}

static int union_slot(binding_t *b, int act) {
  for (int i = 0; i < b->nact; i++)
    if (b->acts[i] == act)
      return i;
  b->acts[b->nact] = act;
  return b->nact++;
}

/* The assertions on region \a name; NULL when out of memory. */
static binding_t *binding_build(const char *name, int gen) {
  binding_t *b = ballast__calloc(1, sizeof *b);
  if (!b)
    return NULL;
  b->gen = gen;
  int n = assert__count(), nmap = 0;
  for (int i = 0; i < n; i++) {
    pa_assert_t *a = assert__get(i);
    if (a->kind == PA_KIND_REGION && !strcmp(a->region, name))
      b->n++, nmap += a->prog.nact;
  }
  b->as = ballast__calloc((size_t)b->n + 1, sizeof *b->as);
  b->acts = ballast__calloc((size_t)nmap + 1, sizeof *b->acts);
  b->map = ballast__calloc((size_t)nmap + 1, sizeof *b->map);
  b->mapoff = ballast__calloc((size_t)b->n + 1, sizeof *b->mapoff);
  if (!b->as || !b->acts || !b->map || !b->mapoff) {
    binding_free(b);
    return NULL;
  }
  int k = 0, m = 0;
  for (int i = 0; i < n && k < b->n; i++) {
    pa_assert_t *a = assert__get(i);
    if (a->kind != PA_KIND_REGION || strcmp(a->region, name))
      continue;
    b->as[k] = a;
    b->uses_cpu |= a->prog.uses_cpu;
    b->mapoff[k++] = m;
    for (int j = 0; j < a->prog.nact; j++)
      b->map[m++] = union_slot(b, a->prog.acts[j]);
  }
  return b;
}

/* The binding of region \a id (NULL: none, or it could not be built). */
static const binding_t *binding(int id, const char *name) {
  if (id < 0 || id >= ID_CHUNK * ID_NCHUNK)
    return NULL;
  int gen = __atomic_load_n(&region_gen, __ATOMIC_ACQUIRE);
  binding_t **chunk = __atomic_load_n(&by_id[id / ID_CHUNK], __ATOMIC_ACQUIRE);
  binding_t *b = chunk ? __atomic_load_n(&chunk[id % ID_CHUNK], __ATOMIC_ACQUIRE) : NULL;
  if (__builtin_expect(!!(b && b->gen == gen), 1))
    return b->n ? b : NULL;
  pthread_mutex_lock(&lock);
  if (!chunk && !(chunk = by_id[id / ID_CHUNK])) {
    chunk = ballast__calloc(ID_CHUNK, sizeof *chunk);
    __atomic_store_n(&by_id[id / ID_CHUNK], chunk, __ATOMIC_RELEASE);
  }
  b = NULL;
  if (chunk && (b = binding_build(name, gen)) != NULL) {
    b->next = all; /* a replaced binding may still be in a frame: keep it */
    all = b;
    __atomic_store_n(&chunk[id % ID_CHUNK], b, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&lock);
  return b && b->n ? b : NULL;
}

void assert__region_enter(int id, const char *name) {
  const binding_t *b = binding(id, name);
  if (!b)
    return;
  int rc = push(id, -1, b, b->acts, b->nact, b->uses_cpu);
  if (rc < 0)
    BALLAST_DEBUG("assert: region %s: instance not checked (%s)", name, ballast_strerror(rc));
}

/* Check each assertion of the binding over the change of the union; those
 * marked good only when the instance (of region id) was a good repetition. */
static void check_binding(const binding_t *b, const pa_delta_t *u, int id) {
  double act[3 * PA_MAX_ACTS];
  int label = -2; /* not read yet */
  for (int k = 0; k < b->n; k++) {
    pa_assert_t *a = b->as[k];
    if (a->flags & PIA_ASSERT_GOOD) {
      if (label == -2)
        label = pia_region_rep_last_label(id);
      if (label != PIA_REP_GOOD)
        continue;
    }
    for (int j = 0; j < a->prog.nact; j++)
      memcpy(act + 3 * j, u->act + 3 * b->map[b->mapoff[k] + j], 3 * sizeof *act);
    pa_delta_t d = {u->wall, u->cpu, act};
    assert__check(a, &d);
  }
}

void assert__region_exit(int id, const char *name) {
  stack_t_ *s = tl;
  if (!s || !s->depth)
    return;
  (void)name;
  /* Find this region's frame; frames above it were left without an exit
   * event (they are dropped, unchecked). */
  int top = s->depth - 1;
  while (top >= 0 && s->f[top].region != id)
    top--;
  if (top < 0)
    return;
  s->depth = top + 1;
  const binding_t *b = s->f[top].b;
  double buf[3 * PA_MAX_ACTS];
  double *act = b->nact <= PA_MAX_ACTS ? buf
                : ballast__malloc(3 * (size_t)b->nact * sizeof *act);
  if (!act) {
    s->used = s->f[top].off;
    s->depth--;
    return;
  }
  pa_delta_t d;
  pop(s, b->acts, b->nact, &d, act);
  check_binding(b, &d, id);
  if (act != buf)
    free(act);
}

/* Whole-run assertions, over the totals (at finalize). */
void assert__run_checks(void) {
  pia_regdata_t r;
  memset(&r, 0, sizeof r);
  pia_region_data(PIA_REGION_MAIN, &r);
  int n = assert__count();
  for (int i = 0; i < n; i++) {
    pa_assert_t *a = assert__get(i);
    if (a->kind != PA_KIND_RUN)
      continue;
    double act[3 * PA_MAX_ACTS];
    for (int j = 0; j < a->prog.nact; j++)
      assert__act_read(a->prog.acts[j], act + 3 * j);
    pa_delta_t d = {r.wtime, r.cputime, act};
    assert__check(a, &d);
  }
}

void assert__scope_teardown(void) {
  pthread_mutex_lock(&lock);
  for (binding_t *b = all, *nx; b; b = nx) {
    nx = b->next;
    binding_free(b);
  }
  all = NULL;
  for (int c = 0; c < ID_NCHUNK; c++) {
    free(by_id[c]);
    by_id[c] = NULL;
  }
  pthread_mutex_unlock(&lock);
  if (tl) {
    pthread_setspecific(tl_key, NULL);
    stack_free(tl);
    tl = NULL;
  }
}
