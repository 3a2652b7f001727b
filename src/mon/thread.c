/*
 * Per-thread state and the wrappers' entry and exit.
 *
 * Each thread gets one mon__tls_t the first time it records anything. The
 * state is appended to a global list under a mutex (once per thread, never on
 * the hot path) and lives until teardown, so the figures of threads that have
 * ended still count. The reentrancy guard is a plain thread-local: checking it costs a TLS
 * load. The library-traffic depth lives in common (ballast__lib_begin).
 */
#include <stdlib.h>
#include <string.h>

#include "common/common_internal.h"
#include "mon/mon_core.h"

MON__TLS mon__tls_t *mon__tl_self;
static MON__TLS int tl_guard;

static pthread_mutex_t list_lock = PTHREAD_MUTEX_INITIALIZER;
static mon__tls_t *list_head;   /* newest first; published with release */
static int list_count;

static mon__tls_t *tls_create(void) {
  /* aligned for its cache-line members (sizeof is a multiple of 64) */
  mon__tls_t *t = aligned_alloc(_Alignof(mon__tls_t), sizeof *t);
  if (!t)
    return NULL;
  memset(t, 0, sizeof *t);
  mon__agg_reset(t->act, MON__NACT);
  mon__agg_reset(t->lib, MON__NACT);
  t->last_regact_id = -1;
  t->papi_set = -1;
  pthread_mutex_init(&t->plock, NULL);
  pthread_mutex_lock(&list_lock);
  t->index = list_count++;
  t->next = list_head;
  MON__STREL(&list_head, t);
  pthread_mutex_unlock(&list_lock);
  mon__tl_self = t;
  return t;
}

mon__tls_t *mon__tls_get(void) {
  mon__tls_t *t = mon__tl_self;
  return t ? t : tls_create();
}

mon__tls_t *mon__tls_first(void) { return MON__LDACQ(&list_head); }

int mon__tls_count(void) { return MON__LDACQ(&list_count); }

void mon__tls_free_all(void) {
  pthread_mutex_lock(&list_lock);
  mon__tls_t *t = list_head;
  list_head = NULL;
  list_count = 0;
  pthread_mutex_unlock(&list_lock);
  while (t) {
    mon__tls_t *next = t->next;
    mon__sig_free(t);
    mon__partner_free(t);
    mon__regact_free(t);
    mon__regdist_free(t);
    for (int a = 0; a < MON__NACT; a++)
      ballast__dist_free(&t->actdist[a]);
    mon__papi_thread_free(t);
    for (int c = 0; c < MON__MAX_CHUNKS; c++) {
      free(t->reg[c]);
      free(t->reghw[c]);
    }
    free(t->stack);
    pthread_mutex_destroy(&t->plock);
    free(t);
    t = next;
  }
  /* Only the calling thread's pointer can be reset; teardown happens when the
   * other threads are gone. */
  mon__tl_self = NULL;
}

mon__tls_t *mon__enter(void) {
  if (__builtin_expect(MON__LD(&mon__state) != MON__ON, 0) || tl_guard)
    return NULL;
  mon__tls_t *t = mon__tl_self;
  if (__builtin_expect(!t, 0) && !(t = tls_create()))
    return NULL;
  tl_guard = 1;
  return t;
}

void mon__leave(mon__tls_t *t) {
  (void)t;
  tl_guard = 0;
}

