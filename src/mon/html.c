/*
 * The run's context in the profile, and BALLAST_HTML: the report page written
 * at the end of a run.
 *
 * The profile member "run" (rank 0: ballast and MPI versions, the date, the
 * BALLAST_* settings) and each rank's "run" member (its host and process id)
 * let a report say where and how the job ran; ranks on one host are a node.
 *
 * BALLAST_HTML=path. The page is drawn by the ballast-report command (Python,
 * standard library) from the profile, not by a second writer in C: one
 * renderer serves both the command and the run, and the page can be redrawn
 * from any profile later. At MPI_Finalize every rank takes part in writing
 * the profile (BALLAST_PROFILE's file when that is set, else a temporary
 * file); after PMPI_Finalize, rank 0 runs `python3 ballast-report PROFILE
 * -o path` and waits for it, so the other ranks are not held and no MPI
 * state is live in the child. ballast-report is found beside the library
 * that holds this code (dladdr: PREFIX/lib -> PREFIX/bin), else in the
 * source tree it was built from. Without python3, or when ballast-report
 * fails, rank 0 warns, keeps the profile and says how to draw the page
 * later; the run itself never fails for it.
 */
#define _GNU_SOURCE /* dladdr */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/common_internal.h"
#include "common/json.h"
#include "mon/mon_core.h"

extern char **environ;

static const char *html_path; /* BALLAST_HTML, NULL when unset */
static char profile_path[PATH_MAX];
static int is_temp, have_profile;

/* ---- the "run" member ------------------------------------------------------- */


static char *run_json(void *user) {
  (void)user;
  char lib[MPI_MAX_LIBRARY_VERSION_STRING] = "";
  ballast__text_t t;
  FILE *f = ballast__text_open(&t);
  if (!f)
    return NULL;
  int n = 0;
  PMPI_Get_library_version(lib, &n);
  lib[strcspn(lib, "\n,")] = 0; /* the first line names it */
  char date[32] = "";
  time_t now = time(NULL);
  struct tm tm;
  if (gmtime_r(&now, &tm))
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tm);
  fprintf(f, "{\"ballast\":");
  ballast__json_str(f, ballast_version());
  fprintf(f, ",\"mpi\":");
  ballast__json_str(f, lib);
  fprintf(f, ",\"date\":\"%s\",\"settings\":{", date);
  int first = 1;
  for (char **e = environ; e && *e; e++) {
    const char *eq = strchr(*e, '=');
    if (strncmp(*e, "BALLAST_", 8) || !eq)
      continue;
    fprintf(f, "%s\"%.*s\":", first ? "" : ",", (int)(eq - *e), *e);
    ballast__json_str(f, eq + 1);
    first = 0;
  }
  fprintf(f, "}}");
  return ballast__text_close(&t);
}

static char *run_rank_json(void *user) {
  (void)user;
  char host[256] = "";
  if (gethostname(host, sizeof host - 1) != 0)
    snprintf(host, sizeof host, "?");
  ballast__text_t t;
  FILE *f = ballast__text_open(&t);
  if (!f)
    return NULL;
  fprintf(f, "{\"host\":");
  ballast__json_str(f, host);
  fprintf(f, ",\"pid\":%ld}", (long)getpid());
  return ballast__text_close(&t);
}

void mon__html_init(void) {
  mon__section_t s = {.name = "run", .json = run_json, .rank_json = run_rank_json};
  if (mon__report_add_section(&s) != 0)
    BALLAST_WARN("mon: no room for the profile's \"run\" member");
  const char *h = getenv("BALLAST_HTML");
  html_path = h && *h ? h : NULL;
}

/* ---- BALLAST_HTML -------------------------------------------------------------- */

void mon__html_finalize(int profile_rc) {
  if (!html_path)
    return;
  int rank = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  /* The same choice on every rank: the profile write is collective. */
  if (mon__cfg.profile) {
    have_profile = rank == 0 && profile_rc == 0;
    snprintf(profile_path, sizeof profile_path, "%s", mon__cfg.profile);
    return;
  }
  if (rank == 0) {
    const char *dir = getenv("TMPDIR");
    snprintf(profile_path, sizeof profile_path, "%s/ballast-profile-XXXXXX.json",
             dir && *dir ? dir : "/tmp");
    int fd = mkstemps(profile_path, 5);
    if (fd < 0) /* write it beside the page instead */
      snprintf(profile_path, sizeof profile_path, "%s.profile.json", html_path);
    else
      close(fd);
    is_temp = 1;
  }
  int rc = mon__profile_write(profile_path);
  have_profile = rank == 0 && rc == 0;
  if (rank == 0 && rc != 0) {
    BALLAST_WARN("mon: BALLAST_HTML: the profile could not be written (%s); no page",
                 ballast_err_name(rc));
    if (is_temp)
      unlink(profile_path);
  }
}

/* ballast-report beside the library (PREFIX/lib -> PREFIX/bin), else in the
 * source tree this library was built from. 0 and \a out, or -1. */
static int find_report(char *out, size_t n) {
  Dl_info info;
  if (dladdr((void *)mon__html_finalize, &info) && info.dli_fname) {
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", info.dli_fname);
    char *slash = strrchr(dir, '/');
    if (slash) {
      *slash = 0;
      int len = snprintf(out, n, "%s/%s/ballast-report", dir, BALLAST_LIB_TO_BIN);
      if (len > 0 && (size_t)len < n && access(out, R_OK) == 0)
        return 0;
    }
  }
  snprintf(out, n, "%s", BALLAST_REPORT_SOURCE);
  return access(out, R_OK) == 0 ? 0 : -1;
}

/* The environment without LD_PRELOAD: python3 needs no preloaded ballast. */
static char **child_env(void) {
  size_t n = 0;
  while (environ && environ[n])
    n++;
  char **e = malloc((n + 1) * sizeof *e);
  size_t k = 0;
  for (size_t i = 0; e && i < n; i++)
    if (strncmp(environ[i], "LD_PRELOAD=", 11))
      e[k++] = environ[i];
  if (e)
    e[k] = NULL;
  return e;
}

static void keep_note(void) {
  BALLAST_WARN("mon: BALLAST_HTML: the profile is kept at %s; draw the page later with "
               "`ballast-report %s -o %s`", profile_path, profile_path, html_path);
}

void mon__after_finalize(void) {
  if (!html_path || !have_profile)
    return;
  have_profile = 0;
  char script[PATH_MAX];
  if (find_report(script, sizeof script) != 0) {
    BALLAST_WARN("mon: BALLAST_HTML: ballast-report is neither installed beside "
                 "libballast nor in %s; no page written", BALLAST_REPORT_SOURCE);
    keep_note();
    return;
  }
  BALLAST_INFO("mon: BALLAST_HTML: drawing %s with %s", html_path, script);
  char *argv[] = {"python3", script, profile_path, "-o", (char *)html_path, NULL};
  char **env = child_env();
  pid_t pid;
  int err = env ? posix_spawnp(&pid, "python3", NULL, NULL, argv, env) : ENOMEM;
  free(env);
  if (err) {
    BALLAST_WARN("mon: BALLAST_HTML: cannot run python3 (%s)%s; no page written to %s",
                 strerror(err), err == ENOENT ? ": it is not in PATH" : "", html_path);
    keep_note();
    return;
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
    ;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    BALLAST_WARN("mon: BALLAST_HTML: ballast-report failed (%s %d); no page written to %s",
                 WIFEXITED(status) ? "exit status" : "signal",
                 WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), html_path);
    keep_note();
    return;
  }
  if (is_temp)
    unlink(profile_path);
}
