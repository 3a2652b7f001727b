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
#include "common/env.h"
#include "mon/wrap_internal.h"
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

/* Every variable through common's parser: a bad value is named once (rank
 * 0) and the default stays. */
static void read_env(void) {
  int v = 1;
  ballast__env_bool("BALLAST_MONITOR", &v);
  mon__cfg.disabled = !v;
  v = MON__REPORT_TERSE;
  static const int report_of[] = {MON__REPORT_NONE, MON__REPORT_TERSE, MON__REPORT_FULL};
  int choice;
  if (ballast__env_enum("BALLAST_REPORT", &choice) == 1)
    v = report_of[choice];
  mon__cfg.report = v;
  mon__cfg.top = 5;
  ballast__env_int("BALLAST_REPORT_TOP", &mon__cfg.top);
  mon__cfg.region_cpu = 1;
  ballast__env_bool("BALLAST_REGION_CPU", &mon__cfg.region_cpu);
  mon__cfg.profile = ballast__env_string("BALLAST_PROFILE");
  mon__cfg.cube = ballast__env_string("BALLAST_CUBE");
}

/* The raw arguments, NUL-separated, into mon__cfg.argv: the kernel's copy
 * (exact even when MPI_Init(NULL, NULL) or the program changed argv), else
 * MPI_Init's argv. */
static void read_args(int *argc, char ***argv) {
  char *buf = mon__cfg.argv;
  size_t cap = sizeof mon__cfg.argv, n = 0;
  FILE *f = fopen("/proc/self/cmdline", "r");
  if (f) {
    n = fread(buf, 1, cap, f);
    /* More than the buffer holds: keep whole arguments only. */
    mon__cfg.args_cut = n == cap && fgetc(f) != EOF;
    fclose(f);
  }
  if (n == 0 && argc && argv && *argv) {
    for (int i = 0; i < *argc && (*argv)[i]; i++) {
      size_t l = strlen((*argv)[i]) + 1;
      if (n + l > cap) {
        mon__cfg.args_cut = 1;
        break;
      }
      memcpy(buf + n, (*argv)[i], l);
      n += l;
    }
  }
  if (mon__cfg.args_cut || (n > 0 && buf[n - 1] != 0)) {
    while (n > 0 && buf[n - 1] != 0)
      n--; /* drop the cut argument */
    mon__cfg.args_cut = 1;
  }
  mon__cfg.args_len = n;
}

/* The command line as one printable line: arguments escaped (control
 * characters, bytes that are not UTF-8, spaces and quotes inside an
 * argument), separated by single spaces. */
static void read_command(int *argc, char ***argv) {
  read_args(argc, argv);
  char *out = mon__cfg.command;
  size_t cap = sizeof mon__cfg.command, o = 0;
  out[0] = 0;
  for (size_t i = 0; i < mon__cfg.args_len; i += strlen(mon__cfg.argv + i) + 1) {
    const char *arg = mon__cfg.argv + i;
    if (o + 8 >= cap)
      break;
    if (o)
      out[o++] = ' ';
    if (!*arg) {
      memcpy(out + o, "''", 3);
      o += 2;
      continue;
    }
    o += (size_t)ballast__escape(arg, " \"'", out + o, (int)(cap - o - 4));
  }
  if (mon__cfg.args_cut || o + 8 >= cap)
    snprintf(out + o, cap - o, " ...");
}

static void teardown(void) {
  if (MON__LD(&mon__state) == MON__ON) {
    /* exit() without MPI_Finalize: other threads may still record, so
     * nothing is freed; this rank's part keeps what was measured. */
    mon__fault_write("exit without MPI_Finalize");
    return;
  }
  MON__ST(&mon__state, MON__OFF);
  mon__tls_free_all();
  mon__reps_free();
  mon__mpit_free();
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
  ballast__mpi_state_set(1); /* PMPI_Init succeeded: the entry points' guard */
  ballast__env_check();
  read_env();
  if (mon__cfg.disabled) {
    pthread_mutex_unlock(&init_lock);
    tool__start(); /* task and lb events still flow */
    return;
  }
  read_command(argc, argv);
  mon__clock_init();
  mon__acts_init();
  mon__regions_init();
  mon__reps_init();
  mon__mpit_init();
  mon__papi_init();
  mon__region_extras_update(); /* after the CPU clock, MPI_T and PAPI choices */
  mon__html_init();
  mon__tls_get(); /* the initialising thread is thread 0 */
  mon__cfg.t_fin = 0;
  mon__cfg.t_init = mon__ticks();
  atexit(teardown);
  MON__STREL(&mon__state, MON__ON);
  mon__fault_init();
  pthread_mutex_unlock(&init_lock);
  /* Tools load once monitoring runs, so their init may call pia; their
   * events' clock is mon's. */
  tool__set_clock(mon__now_ns);
  tool__set_comm_ranks(mon__w_comm_ranks);
  tool__set_dist(mon__tool_dist);
  tool__set_mpit(mon__mpit_count, mon__tool_mpit_region);
  tool__start();
}

int mon__active(void) { return MON__LD(&mon__state) == MON__ON; }

void mon__finalize(void) {
  pthread_mutex_lock(&init_lock);
  if (MON__LD(&mon__state) != MON__ON) {
    pthread_mutex_unlock(&init_lock);
    tool__finalize();
    return;
  }
  mon__regions_close_all();
  MON__ST(&mon__cfg.cpu_fin_ns, mon__process_cpu_ns());
  MON__ST(&mon__cfg.t_fin, mon__ticks());
  /* From here on the wrappers only call PMPI; the figures are final. */
  MON__STREL(&mon__state, MON__DONE);
  pthread_mutex_unlock(&init_lock);
  /* This rank's part, final figures, before the collectives below: a rank
   * that leaves the job now (or dies) costs no other rank its data. It is
   * removed once the job's profile is written (mon__fault_finalize). */
  mon__fault_write("MPI_Finalize");
  /* The repeated regions' last cross-rank batches (collective): after the
   * part, so a rank that left without MPI_Finalize costs no other its part. */
  mon__reps_finalize();
  /* Tools see the end before the report (and may add to it), with the
   * figures final and MPI usable. */
  tool__finalize();
  if (mon__cfg.report != MON__REPORT_NONE)
    mon__report(mon__cfg.report);
  int prc = mon__cfg.profile ? mon__profile_write(mon__cfg.profile) : 0;
  /* After the JSON profile: a Cube archive that cannot be written costs
   * one line on rank 0, never the profile. */
  if (mon__cfg.cube && *mon__cfg.cube)
    mon__cube_write(mon__cfg.cube);
  mon__fault_finalize(prc);
  mon__html_finalize(prc);
  /* Before PMPI_Finalize: Open MPI 4.1.4 crashes in MPI_T_finalize after. */
  mon__mpit_finalize();
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
