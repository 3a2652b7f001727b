/*
 * Hardware counters per region through PAPI, where the machine has any.
 *
 * At MPI_Init mon initialises PAPI and tries an event set with PAPI_TOT_CYC
 * and PAPI_TOT_INS (each kept only if it can be added and started). When none
 * works (virtual machines usually expose no counters) mon says so in ONE info
 * line and regions carry no counters. Each thread that opens regions gets its
 * own event set on first use. Built only with BALLAST_HAVE_PAPI=1; otherwise
 * the same functions report "no counters". The one line is said by rank 0
 * at info level (BALLAST_VERBOSE=2); the full report says it too.
 */
#include "common/common_internal.h"
#include "mon/mon_core.h"

#if BALLAST_HAVE_PAPI
#include <papi.h>
#include <string.h>

static const char *const ev_names[] = {"PAPI_TOT_CYC", "PAPI_TOT_INS"};
static const int ev_codes[] = {PAPI_TOT_CYC, PAPI_TOT_INS};
static int nev;          /* events that work; 0 = counters off */
static int ev_ok[2];     /* which of ev_codes */

static unsigned long thread_id(void) { return (unsigned long)pthread_self(); }

/* An event set with the working events, started. -1 on failure. */
static int make_set(int probe) {
  int set = PAPI_NULL;
  if (PAPI_create_eventset(&set) != PAPI_OK)
    return -1;
  int added = 0;
  for (int i = 0; i < 2; i++) {
    if (!probe && !ev_ok[i])
      continue;
    if (PAPI_add_event(set, ev_codes[i]) == PAPI_OK) {
      if (probe)
        ev_ok[i] = 1;
      added++;
    }
  }
  if (!added || PAPI_start(set) != PAPI_OK) {
    PAPI_cleanup_eventset(set);
    PAPI_destroy_eventset(&set);
    if (probe)
      ev_ok[0] = ev_ok[1] = 0;
    return -1;
  }
  if (probe)
    nev = added;
  return set;
}

/* Said once per job: by rank 0 only. */
#define SAY(...)                                                              \
  do {                                                                        \
    if (ballast__world_rank() <= 0)                                           \
      BALLAST_INFO(__VA_ARGS__);                                              \
  } while (0)

void mon__papi_init(void) {
  int v = PAPI_library_init(PAPI_VER_CURRENT);
  if (v != PAPI_VER_CURRENT) {
    SAY("mon: PAPI unavailable (%s); regions carry no hardware counters",
                 v < 0 ? PAPI_strerror(v) : "version mismatch");
    return;
  }
  if (PAPI_thread_init(thread_id) != PAPI_OK) {
    SAY("mon: PAPI thread support unavailable; no hardware counters");
    return;
  }
  mon__tls_t *t = mon__tls_get();
  int set = make_set(1);
  if (set < 0) {
    SAY("mon: this machine exposes no PAPI_TOT_CYC/PAPI_TOT_INS "
                 "counters; regions carry no hardware counters");
    return;
  }
  if (t)
    t->papi_set = set;
  SAY("mon: %d PAPI counter(s) per region", nev);
}

int mon__papi_nevents(void) { return nev; }

const char *mon__papi_event_name(int i) {
  for (int k = 0, j = 0; k < 2; k++)
    if (ev_ok[k] && j++ == i)
      return ev_names[k];
  return NULL;
}

void mon__papi_read(mon__tls_t *t, long long v[4]) {
  memset(v, 0, 4 * sizeof *v);
  if (!nev)
    return;
  if (t->papi_set < 0) {
    /* -2: tried on this thread and failed; do not retry on every region. */
    if (t->papi_set == -2)
      return;
    PAPI_register_thread();
    t->papi_set = make_set(0);
    if (t->papi_set < 0) {
      t->papi_set = -2;
      return;
    }
  }
  PAPI_read(t->papi_set, v);
}

void mon__papi_thread_free(mon__tls_t *t) {
  if (t->papi_set >= 0) {
    long long v[4];
    PAPI_stop(t->papi_set, v);
    PAPI_cleanup_eventset(t->papi_set);
    PAPI_destroy_eventset(&t->papi_set);
  }
  t->papi_set = -1;
}

#else /* !BALLAST_HAVE_PAPI */

#include <string.h>

void mon__papi_init(void) {
  if (ballast__world_rank() <= 0)
    BALLAST_INFO("mon: built without PAPI; regions carry no hardware counters");
}
int mon__papi_nevents(void) { return 0; }
const char *mon__papi_event_name(int i) {
  (void)i;
  return NULL;
}
void mon__papi_read(mon__tls_t *t, long long v[4]) {
  (void)t;
  memset(v, 0, 4 * sizeof *v);
}
void mon__papi_thread_free(mon__tls_t *t) { t->papi_set = -1; }

#endif
