/*
 * The tools interface's dispatch: the tool records, typed registration per
 * event, the global event mask, the emit functions, ballast_tool_attach(),
 * and the start (at MPI_Init) and end (in MPI_Finalize) of tools.
 *
 * A tool's registrations made inside its init are staged in its record and
 * published only when the init returns 0, so a tool that declines or fails
 * leaves nothing behind, and tools' callbacks run in attach order.
 *
 * While a callback (or a tool's init) runs, the thread's tl_in points at
 * its slot, so a crash inside it can be put down to the tool and the event
 * (crash.c): one thread-local store before each callback and one after the
 * loop, on the path with tools only.
 */
#define _GNU_SOURCE /* dladdr, dlinfo */
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/common_internal.h"
#include "tool/tool_internal.h"

typedef void (*any_fn)(void); /* a callback stored untyped, called as its own type */

typedef struct {
  any_fn fn;
  void *ud;
  const ballast_tool_t *tool; /* whose callback (for a crash's message) */
  int ev;                     /* TOOL__EVI_*, or EV_INIT */
} slot_t;

enum { EV_INIT = TOOL__NEV }; /* the tool's init, not an event */

enum { T_QUEUED, T_INIT, T_ATTACHED, T_OFF };
enum { S_BEFORE, S_RUNNING, S_DONE };

struct ballast_tool {
  char *name;
  char *file;                      /* the object it was loaded from, or NULL */
  ballast_tool_init_v1_fn init;
  void *dl;                        /* dlopen handle, NULL when linked in */
  int state;                       /* T_* (under lock) */
  unsigned registered;             /* events registered, staged or published */
  slot_t staged[TOOL__NEV];
};

unsigned tool__mask;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static ballast_tool_t *tools[BALLAST_TOOL_MAX];
static int ntools;
static int stage = S_BEFORE;       /* atomic reads */
static slot_t slots[TOOL__NEV][BALLAST_TOOL_MAX];
static int nslots[TOOL__NEV]; /* published with release */

/* The callback this thread is in (NULL: none). Initial-exec, as mon's
 * thread state (MON__TLS): a signal handler reads it, and only static TLS
 * is safe to read there. */
static __thread __attribute__((tls_model("initial-exec"))) const slot_t *tl_in;

static const char *const ev_names[TOOL__NEV + 1] = {
#define TOOL__EVNAME_(n, N, f, e) #n,
    TOOL__EVENTS(TOOL__EVNAME_)
#undef TOOL__EVNAME_
    "init"};

int tool__current(const char **name, const char **file, const char **event) {
  const slot_t *s = tl_in;
  if (!s || !s->tool)
    return 0;
  *name = s->tool->name;
  *file = s->tool->file;
  *event = ev_names[s->ev];
  return 1;
}

/* ---- clock ---------------------------------------------------------------- */

static uint64_t mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t (*clock_fn)(void) = mono_ns;

uint64_t tool__now(void) { return __atomic_load_n(&clock_fn, __ATOMIC_ACQUIRE)(); }

void tool__set_clock(uint64_t (*now_ns)(void)) {
  __atomic_store_n(&clock_fn, now_ns ? now_ns : mono_ns, __ATOMIC_RELEASE);
}

uint64_t ballast_tool_now_ns(void) { return tool__now(); }

/* ---- communicators (mon's cache) -------------------------------------------- */

static int no_comm_ranks(int comm_id, int *world_ranks, int max) {
  (void)comm_id, (void)world_ranks, (void)max;
  return BALLAST_ENOTFOUND;
}

static int (*comm_ranks_fn)(int, int *, int) = no_comm_ranks;

static int comm_ranks(int comm_id, int *world_ranks, int max) {
  if (max < 0 || (max > 0 && !world_ranks))
    return BALLAST_EINVAL;
  return __atomic_load_n(&comm_ranks_fn, __ATOMIC_ACQUIRE)(comm_id, world_ranks, max);
}

void tool__set_comm_ranks(int (*fn)(int comm_id, int *world_ranks, int max)) {
  __atomic_store_n(&comm_ranks_fn, fn ? fn : no_comm_ranks, __ATOMIC_RELEASE);
}

/* ---- distributions (mon's) ----------------------------------------------------- */

static int no_dist(int kind, int id, int nq, const double *q, double *out, uint64_t *count) {
  (void)kind, (void)id, (void)nq, (void)q, (void)out;
  if (count)
    *count = 0;
  return BALLAST_ESTATE;
}

static int (*dist_fn)(int, int, int, const double *, double *, uint64_t *) = no_dist;

static int dist_quantiles(int kind, int id, int nq, const double *q, double *out,
                          uint64_t *count) {
  if (count)
    *count = 0;
  if ((kind != BALLAST_TOOL_DIST_REGION && kind != BALLAST_TOOL_DIST_MPI) || nq < 0 ||
      (nq > 0 && (!q || !out)))
    return BALLAST_EINVAL;
  return __atomic_load_n(&dist_fn, __ATOMIC_ACQUIRE)(kind, id, nq, q, out, count);
}

void tool__set_dist(int (*fn)(int kind, int id, int nq, const double *q,
                              double *out_ns, uint64_t *count)) {
  __atomic_store_n(&dist_fn, fn ? fn : no_dist, __ATOMIC_RELEASE);
}

static int no_mpit_count(void) { return 0; }
static int no_mpit_region(int region, int var, const char **name, double *delta,
                          double *max) {
  (void)region, (void)var, (void)name, (void)delta, (void)max;
  return BALLAST_ENOTFOUND;
}
static int (*mpit_count_fn)(void) = no_mpit_count;
static int (*mpit_region_fn)(int, int, const char **, double *, double *) = no_mpit_region;

static int mpit_count(void) { return __atomic_load_n(&mpit_count_fn, __ATOMIC_ACQUIRE)(); }

static int mpit_region(int region, int var, const char **name, double *delta, double *max) {
  if (!name || !delta || !max)
    return BALLAST_EINVAL;
  return __atomic_load_n(&mpit_region_fn, __ATOMIC_ACQUIRE)(region, var, name, delta, max);
}

void tool__set_mpit(int (*count)(void),
                    int (*region)(int region, int var, const char **name,
                                  double *delta, double *max)) {
  __atomic_store_n(&mpit_count_fn, count ? count : no_mpit_count, __ATOMIC_RELEASE);
  __atomic_store_n(&mpit_region_fn, region ? region : no_mpit_region, __ATOMIC_RELEASE);
}

/* ---- registration ------------------------------------------------------------ */

/* Publishes one callback (under lock): the slot first, then the count, then
 * the mask bit, so an emitter that sees the bit or the count sees the slot. */
static void publish(int ev, slot_t s) {
  int n = nslots[ev];
  slots[ev][n] = s;
  __atomic_store_n(&nslots[ev], n + 1, __ATOMIC_RELEASE);
  __atomic_or_fetch(&tool__mask, 1u << ev, __ATOMIC_RELEASE);
}

static int reg(ballast_tool_t *tool, int ev, any_fn fn, void *ud) {
  if (!tool || !fn)
    return BALLAST_EINVAL;
  int rc = 0;
  pthread_mutex_lock(&lock);
  if (stage == S_DONE || tool->state == T_OFF)
    rc = BALLAST_ESTATE;
  else if (tool->registered & (1u << ev))
    rc = BALLAST_EEXIST;
  else {
    tool->registered |= 1u << ev;
    slot_t s = {fn, ud, tool, ev};
    if (tool->state == T_ATTACHED)
      publish(ev, s);
    else
      tool->staged[ev] = s;
  }
  pthread_mutex_unlock(&lock);
  return rc;
}

#define TOOL__REG_(n, N, f, e)                                   \
  static int on_##n(ballast_tool_t *tool, f fn, void *ud) {              \
    return reg(tool, TOOL__EVI_##N, (any_fn)fn, ud);             \
  }
TOOL__EVENTS(TOOL__REG_)
#undef TOOL__REG_

/* ---- emit ------------------------------------------------------------------------- */

/* tl_in is put back after the loop, not cleared: a tool's callback may
 * raise events of its own (MPI calls from the finalize callback). */
#define TOOL__EMIT_(n, N, f, e)                                          \
  void tool__emit_##n(const e *ev) {                                     \
    int cnt = __atomic_load_n(&nslots[TOOL__EVI_##N], __ATOMIC_ACQUIRE); \
    const slot_t *outer = tl_in;                                                 \
    for (int i = 0; i < cnt; i++) {                                              \
      const slot_t *s = &slots[TOOL__EVI_##N][i];                        \
      tl_in = s;                                                                 \
      ((f)s->fn)(ev, s->ud);                                                     \
    }                                                                            \
    tl_in = outer;                                                               \
  }
TOOL__EVENTS(TOOL__EMIT_)
#undef TOOL__EMIT_

/* ---- the table ------------------------------------------------------------------- */

static int world_size(void) {
  int init = 0, fin = 0, n = -1;
  PMPI_Initialized(&init);
  PMPI_Finalized(&fin);
  if (init && !fin)
    PMPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}

static const char *tool_name(ballast_tool_t *tool) { return tool ? tool->name : NULL; }

static const ballast_tool_api_v1_t api = {
    .version = BALLAST_TOOL_VERSION,
    .size = (int)sizeof(ballast_tool_api_v1_t),
#define TOOL__TAB_(n, N, f, e) .on_##n = on_##n,
    TOOL__EVENTS(TOOL__TAB_)
#undef TOOL__TAB_
    .now_ns = tool__now,
    .world_rank = ballast__world_rank,
    .world_size = world_size,
    .tool_name = tool_name,
    .comm_ranks = comm_ranks,
    .dist_quantiles = dist_quantiles,
    .mpit_count = mpit_count,
    .mpit_region = mpit_region,
};

/* ---- tools ----------------------------------------------------------------------- */

/* The file a tool's code is in: the path dlopen resolved, or the object
 * (program or library) that holds its init. NULL when unknown. */
static char *object_file(ballast_tool_init_v1_fn init, void *dl) {
  struct link_map *lm = NULL;
  if (dl && dlinfo(dl, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name && *lm->l_name)
    return strdup(lm->l_name);
  Dl_info info;
  void *addr;
  memcpy(&addr, &init, sizeof addr); /* POSIX: a function as a data pointer */
  if (dladdr(addr, &info) && info.dli_fname && *info.dli_fname)
    return strdup(info.dli_fname);
  return NULL;
}

ballast_tool_t *tool__new(const char *name, ballast_tool_init_v1_fn init, void *dl,
                          int *queued, int *err) {
  ballast_tool_t *t = calloc(1, sizeof *t);
  char *copy = strdup(name);
  if (!t || !copy) {
    free(t);
    free(copy);
    BALLAST_WARN("tool \"%s\": out of memory; running without it", name);
    *err = BALLAST_ENOMEM;
    return NULL;
  }
  t->name = copy;
  t->file = object_file(init, dl);
  t->init = init;
  t->dl = dl;
  t->state = T_QUEUED;
  pthread_mutex_lock(&lock);
  int full = ntools == BALLAST_TOOL_MAX;
  if (!full)
    tools[ntools++] = t;
  /* Decided under the lock that tool__start takes: a tool added
   * before MPI_Init is run by it, one added after by its caller. */
  *queued = stage == S_BEFORE;
  pthread_mutex_unlock(&lock);
  if (full) {
    BALLAST_WARN("tool \"%s\": %d tools are attached already (the most there can be); "
                 "running without it", name, BALLAST_TOOL_MAX);
    free(copy);
    free(t->file);
    free(t);
    *err = BALLAST_ERANGE;
    return NULL;
  }
  return t;
}

int tool__run_init(ballast_tool_t *t) {
  pthread_mutex_lock(&lock);
  t->state = T_INIT;
  pthread_mutex_unlock(&lock);
  /* A tool's own MPI calls in its init are not the application's traffic. */
  ballast__lib_begin();
  /* Armed before the first init runs, so a crash inside it is named too;
   * with no tool attached the handlers only hand signals on. */
  tool__crash_arm();
  const slot_t in_init = {NULL, NULL, t, EV_INIT};
  const slot_t *outer = tl_in;
  tl_in = &in_init;
  int rc = t->init(&api, t);
  tl_in = outer;
  ballast__lib_end();
  pthread_mutex_lock(&lock);
  int attached = rc == 0 && stage != S_DONE;
  if (attached) {
    t->state = T_ATTACHED;
    for (int ev = 0; ev < TOOL__NEV; ev++)
      if (t->registered & (1u << ev))
        publish(ev, t->staged[ev]);
  } else {
    t->state = T_OFF;
  }
  pthread_mutex_unlock(&lock);
  if (rc < 0) {
    BALLAST_WARN("tool \"%s\": its init returned %d (an error); running without it",
                 t->name, rc);
    return BALLAST_ECALLBACK;
  }
  if (rc > 0)
    BALLAST_DEBUG("tool \"%s\" declined to attach (init returned %d)", t->name, rc);
  else
    BALLAST_DEBUG("tool \"%s\" attached", t->name);
  return rc > 0 ? 1 : 0;
}

int ballast_tool_attach(const char *name, ballast_tool_init_v1_fn init) {
  if (!name || !*name || !init)
    return BALLAST_EINVAL;
  int st = __atomic_load_n(&stage, __ATOMIC_ACQUIRE);
  if (st == S_DONE)
    return BALLAST_ESTATE;
  int err = 0, queued = 0;
  ballast_tool_t *t = tool__new(name, init, NULL, &queued, &err);
  if (!t)
    return err;
  return queued ? 0 : tool__run_init(t);
}

void tool__start(void) {
  pthread_mutex_lock(&lock);
  if (stage != S_BEFORE) {
    pthread_mutex_unlock(&lock);
    return;
  }
  /* Tools attached from here on run their init at once. */
  int nqueued = ntools;
  __atomic_store_n(&stage, S_RUNNING, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&lock);
  /* Every rank starts the same tools with the same environment and files
   * (a tool that does not load, an assertion file's bad line): their
   * warnings are printed once per job, not once per rank. Every rank gets
   * here, inside MPI_Init. */
  ballast__log_hold();
  const char *env = getenv("BALLAST_TOOLS");
  if (env && *env) {
    char *list = strdup(env);
    if (!list) {
      BALLAST_WARN("tool: out of memory reading BALLAST_TOOLS; no tool loaded");
    } else {
      char *save = NULL;
      for (char *e = strtok_r(list, ":", &save); e; e = strtok_r(NULL, ":", &save))
        tool__load(e);
      free(list);
    }
  }
  for (int i = 0; i < nqueued; i++)
    (void)tool__run_init(tools[i]);
  ballast__log_release(MPI_COMM_WORLD);
}

void tool__finalize(void) {
  pthread_mutex_lock(&lock);
  int st = stage;
  __atomic_store_n(&stage, S_DONE, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&lock);
  if (st == S_DONE)
    return;
  if (TOOL__ON(TOOL__EV_FINALIZE)) {
    ballast_tool_finalize_t ev = {.t_ns = tool__now()};
    ballast__lib_begin();
    tool__emit_finalize(&ev);
    ballast__lib_end();
  }
  /* No event after finalize: the emit points see an empty mask. */
  __atomic_store_n(&tool__mask, 0u, __ATOMIC_RELEASE);
  tool__crash_disarm();
}
