/*
 * mon's life cycle: configuration from the environment at MPI_Init, the end
 * of the run at MPI_Finalize (open regions closed, report, profile), teardown
 * at process exit, and the warn-once helper every part of mon uses for bad
 * input.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common_internal.h"
#include "mon/mon_core.h"
#include "tool/tool_internal.h"

#undef uthash_fatal
#define uthash_fatal(msg) abort()
#include <uthash.h>

int mon__state = MON__OFF;
mon__config_t mon__cfg = {.report = MON__REPORT_TERSE, .top = 5, .region_cpu = 1};

static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
static int init_done;

/* ---- warn once ------------------------------------------------------------------- */

#define WARN_KEYS_MAX 1024

typedef struct {
  UT_hash_handle hh;
  char key[];
} warned_t;

static pthread_mutex_t warn_lock = PTHREAD_MUTEX_INITIALIZER;
static warned_t *warned;
static unsigned warned_n;

void mon__warn_once(const char *kind, const char *name, const char *fmt, ...) {
  char key[2 * MON__NAME_MAX + 64];
  int klen = snprintf(key, sizeof key, "%s:%s", kind, name ? name : "");
  if (klen < 0)
    return;
  if ((size_t)klen >= sizeof key)
    klen = (int)sizeof key - 1;
  int say = 0, last = 0;
  pthread_mutex_lock(&warn_lock);
  warned_t *w = NULL;
  HASH_FIND(hh, warned, key, (unsigned)klen, w);
  if (!w && warned_n <= WARN_KEYS_MAX) {
    if (warned_n == WARN_KEYS_MAX) {
      last = 1;
      warned_n++;
    } else if ((w = malloc(sizeof *w + (size_t)klen + 1))) {
      memcpy(w->key, key, (size_t)klen + 1);
      HASH_ADD(hh, warned, key, (unsigned)klen, w);
      warned_n++;
      say = 1;
    }
  }
  pthread_mutex_unlock(&warn_lock);
  if (say) {
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    BALLAST_WARN("%s", msg);
  } else if (last) {
    BALLAST_WARN("mon: %d distinct problems reported; further ones are not",
                 WARN_KEYS_MAX);
  }
}

static void warned_free(void) {
  pthread_mutex_lock(&warn_lock);
  warned_t *w, *tmp;
  HASH_ITER(hh, warned, w, tmp) {
    HASH_DEL(warned, w);
    free(w);
  }
  warned_n = 0;
  pthread_mutex_unlock(&warn_lock);
}

/* ---- configuration ------------------------------------------------------------------- */

static void read_env(void) {
  const char *s = getenv("BALLAST_MONITOR");
  mon__cfg.disabled = s && (strcmp(s, "0") == 0 || strcmp(s, "off") == 0 ||
                            strcmp(s, "no") == 0 || strcmp(s, "false") == 0);
  s = getenv("BALLAST_REPORT");
  mon__cfg.report = MON__REPORT_TERSE;
  if (s && *s) {
    if (strcmp(s, "none") == 0)
      mon__cfg.report = MON__REPORT_NONE;
    else if (strcmp(s, "full") == 0)
      mon__cfg.report = MON__REPORT_FULL;
    else if (strcmp(s, "terse") != 0)
      BALLAST_WARN("mon: BALLAST_REPORT=%s is not none, terse or full; using terse", s);
  }
  s = getenv("BALLAST_REPORT_TOP");
  mon__cfg.top = 5;
  if (s && *s) {
    int n = atoi(s);
    if (n >= 1 && n <= 1000)
      mon__cfg.top = n;
    else
      BALLAST_WARN("mon: BALLAST_REPORT_TOP=%s is not in 1..1000; using 5", s);
  }
  s = getenv("BALLAST_REGION_CPU");
  mon__cfg.region_cpu = !(s && strcmp(s, "0") == 0);
  s = getenv("BALLAST_PROFILE");
  mon__cfg.profile = (s && *s) ? s : NULL;
}

static void read_command(int *argc, char ***argv) {
  mon__cfg.command[0] = 0;
  if (argc && argv && *argv && *argc > 0 && (*argv)[0]) {
    snprintf(mon__cfg.command, sizeof mon__cfg.command, "%s", (*argv)[0]);
    return;
  }
  /* MPI_Init(NULL, NULL): the kernel knows the command. */
  FILE *f = fopen("/proc/self/cmdline", "r");
  if (f) {
    size_t n = fread(mon__cfg.command, 1, sizeof mon__cfg.command - 1, f);
    mon__cfg.command[n] = 0;
    fclose(f);
  }
}

static void teardown(void) {
  if (MON__LD(&mon__state) == MON__ON)
    return; /* exit() without MPI_Finalize: other threads may still record */
  MON__ST(&mon__state, MON__OFF);
  mon__tls_free_all();
  mon__regions_free();
  warned_free();
}

void mon__init(int *argc, char ***argv) {
  pthread_mutex_lock(&init_lock);
  if (init_done) {
    pthread_mutex_unlock(&init_lock);
    return;
  }
  init_done = 1;
  read_env();
  if (mon__cfg.disabled) {
    pthread_mutex_unlock(&init_lock);
    ballast__tool_start(); /* task and lb events still flow */
    return;
  }
  read_command(argc, argv);
  mon__clock_init();
  mon__acts_init();
  mon__regions_init();
  mon__papi_init();
  mon__tls_get(); /* the initialising thread is thread 0 */
  mon__cfg.t_fin = 0;
  mon__cfg.t_init = mon__ticks();
  atexit(teardown);
  MON__STREL(&mon__state, MON__ON);
  pthread_mutex_unlock(&init_lock);
  /* Tools load once monitoring runs, so their init may call pia; their
   * events' clock is mon's. */
  ballast__tool_set_clock(mon__now_ns);
  ballast__tool_start();
}

int mon__active(void) { return MON__LD(&mon__state) == MON__ON; }

void mon__finalize(void) {
  pthread_mutex_lock(&init_lock);
  if (MON__LD(&mon__state) != MON__ON) {
    pthread_mutex_unlock(&init_lock);
    ballast__tool_finalize();
    return;
  }
  mon__regions_close_all();
  MON__ST(&mon__cfg.cpu_fin_ns, mon__process_cpu_ns());
  MON__ST(&mon__cfg.t_fin, mon__ticks());
  /* From here on the wrappers only call PMPI; the figures are final. */
  MON__STREL(&mon__state, MON__DONE);
  pthread_mutex_unlock(&init_lock);
  /* Tools see the end before the report (and may add to it), with the
   * figures final and MPI usable. */
  ballast__tool_finalize();
  if (mon__cfg.report != MON__REPORT_NONE)
    mon__report(mon__cfg.report);
  if (mon__cfg.profile)
    mon__profile_write(mon__cfg.profile);
}

/* Shared checks of the public collective calls: 0 when they may run. */
int mon__collective_ok(void) {
  if (mon__cfg.disabled)
    return BALLAST_EDISABLED;
  int init = 0, fin = 0;
  PMPI_Initialized(&init);
  PMPI_Finalized(&fin);
  if (!init || fin || !mon__cfg.t_init)
    return BALLAST_ESTATE;
  return 0;
}

int mon_report(int level) {
  if (level != MON_REPORT_TERSE && level != MON_REPORT_FULL)
    return BALLAST_EINVAL;
  int rc = mon__collective_ok();
  if (rc)
    return rc;
  return mon__report(level == MON_REPORT_FULL ? MON__REPORT_FULL : MON__REPORT_TERSE);
}

int mon_profile_write(const char *path) {
  if (!path)
    return BALLAST_EINVAL;
  int rc = mon__collective_ok();
  if (rc)
    return rc;
  return mon__profile_write(path);
}
