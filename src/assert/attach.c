/* Where assertions attach to the run: the assertion file
 * (BALLAST_ASSERT_FILE) and the tools interface. The layer attaches itself as
 * a tool (ballast_tool_attach) when the first assertion is created or, with
 * an assertion file, from a constructor, so a program without assertions
 * registers nothing and pays nothing. Through the tool it sees every region
 * entry and exit and the finalize event, where the whole-run assertions are
 * checked and the results reduced over the ranks for the report. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ballast/tool.h>

#include "assert/assert_internal.h"
#include "common/common_internal.h"

/* Exit status of a run with BALLAST_ASSERT_ACTION=exit and a failure. */
#define EXIT_FAILED_ASSERTION 3

static int attached, file_loaded;

static void on_region_enter(const ballast_tool_region_t *ev, void *user) {
  (void)user;
  assert__region_enter(ev->id, ev->name);
}

static void on_region_exit(const ballast_tool_region_t *ev, void *user) {
  (void)user;
  assert__region_exit(ev->id, ev->name);
}

static void exit_failed(void) {
  fflush(NULL);
  _exit(EXIT_FAILED_ASSERTION);
}

static void on_finalize(const ballast_tool_finalize_t *ev, void *user) {
  (void)ev;
  (void)user;
  assert__run_checks();
  long long failed = assert__finalize_reduce();
  assert__scope_teardown();
  assert__mpi_teardown();
  /* Registered last, so it runs first at exit: after MPI_Finalize returned
   * and the program ended normally, the status says an assertion failed. */
  if (failed > 0 && assert__action_exit())
    atexit(exit_failed);
}

static int tool_init(const ballast_tool_api_v1_t *api, ballast_tool_t *tool) {
  int rc = api->on_region_enter(tool, on_region_enter, NULL);
  if (!rc)
    rc = api->on_region_exit(tool, on_region_exit, NULL);
  if (!rc)
    rc = api->on_finalize(tool, on_finalize, NULL);
  if (rc)
    return rc;
  const char *path = getenv("BALLAST_ASSERT_FILE");
  if (path && *path && !__atomic_exchange_n(&file_loaded, 1, __ATOMIC_ACQ_REL))
    assert__file_load(path);
  return 0;
}

void assert__attach_need(void) {
  if (__atomic_exchange_n(&attached, 1, __ATOMIC_ACQ_REL))
    return;
  int rc = ballast_tool_attach("ballast-assert", tool_init);
  if (rc < 0)
    BALLAST_WARN("assert: cannot attach to the tools interface (%s): regions and the "
                 "whole run are not checked, nothing is reported", ballast_strerror(rc));
}

/* An assertion file makes the layer attach before MPI_Init, with no call
 * from the program (LD_PRELOAD). */
__attribute__((constructor)) static void assert_file_ctor(void) {
  const char *path = getenv("BALLAST_ASSERT_FILE");
  if (path && *path)
    assert__attach_need();
}

/* ---- the assertion file ------------------------------------------------------ */

static char *trim(char *s) {
  while (isspace((unsigned char)*s))
    s++;
  char *e = s + strlen(s);
  while (e > s && isspace((unsigned char)e[-1]))
    *--e = 0;
  return s;
}

/* One line: "[remap] [good] TARGET: EXPR". 1 created, 0 blank or comment, negative
 * error (reported). */
static int file_line(const char *path, int ln, char *line) {
  line[strcspn(line, "\r\n")] = 0;
  char *s = trim(line);
  if (!*s || *s == '#')
    return 0;
  pia_assert_options_t o;
  pia_assert_options_init(&o);
  o.file = path;
  o.line = ln;
  for (;;) {
    if (!strncmp(s, "remap", 5) && isspace((unsigned char)s[5])) {
      o.flags |= PIA_ASSERT_REMAP;
      s = trim(s + 5);
    } else if (!strncmp(s, "good", 4) && isspace((unsigned char)s[4])) {
      o.flags |= PIA_ASSERT_GOOD;
      s = trim(s + 4);
    } else {
      break;
    }
  }
  char *colon = strchr(s, ':');
  if (!colon) {
    BALLAST_WARN("assert: %s:%d: expected 'REGION: EXPRESSION' or '*: EXPRESSION'; "
                 "line skipped", path, ln);
    return BALLAST_EPARSE;
  }
  /* The expression keeps its place in the line (blanks before it), so the
   * column and caret of an error point into the line as written. */
  size_t off = (size_t)(colon + 1 - line);
  char *expr = ballast__strdup(line);
  if (!expr)
    return BALLAST_ENOMEM;
  memset(expr, ' ', off);
  o.expr = expr;
  *colon = 0;
  o.region = trim(s);
  if (!*o.region) {
    BALLAST_WARN("assert: %s:%d: no region name before ':' (use * for the whole run); "
                 "line skipped", path, ln);
    free(expr);
    return BALLAST_EPARSE;
  }
  char msg[1024];
  int rc = assert__create(&o, msg, sizeof msg);
  if (rc < 0) {
    /* The message quotes the blanked copy: show the line's own start. */
    char *quote = strchr(msg, '\n');
    *colon = ':';
    if (quote && off < 200 && strlen(quote) > off + 3)
      memcpy(quote + 3, line, off);
    BALLAST_WARN("assert: %s:%d: %s; line skipped", path, ln,
                 msg[0] ? msg : ballast_strerror(rc));
  }
  free(expr);
  return rc < 0 ? rc : 1;
}

int assert__file_load(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) {
    BALLAST_WARN("assert: cannot open BALLAST_ASSERT_FILE=%s", path);
    return BALLAST_EIO;
  }
  char line[4096];
  int n = 0, bad = 0;
  for (int ln = 1; fgets(line, sizeof line, f); ln++) {
    int rc = file_line(path, ln, line);
    n += rc > 0;
    bad += rc < 0;
  }
  fclose(f);
  BALLAST_DEBUG("assert: %s: %d assertion(s), %d line(s) skipped", path, n, bad);
  return bad ? BALLAST_EPARSE : n;
}
