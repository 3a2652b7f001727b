/* Failures are clear and harmless: BALLAST_TOOLS names a missing .so, a
 * bundled name that does not exist, a tool of interface version 2 only, a
 * .so without an init, a tool whose init fails and one that declines,
 * around tt_a.so that works. Each broken tool gives exactly one warning
 * naming it and saying what was wrong; the declining one is quiet; tt_a
 * still gets its events; the run goes on. stderr is captured in a file. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ballast.h>

#include "test_util.h"
#include "tt.h"

static long notes;

void tt_note(int tool, int ev, const void *e);
void tt_note(int tool, int ev, const void *e) {
  (void)e;
  CHECK_EQ(tool, 0);
  notes += ev == TT_MPI_EXIT;
}

/* Lines of \a log that contain both \a a and \a b. */
static int lines_with(const char *log, const char *a, const char *b) {
  int n = 0;
  for (const char *p = log; *p;) {
    const char *e = strchr(p, '\n');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    char line[2048];
    snprintf(line, sizeof line, "%.*s", (int)len, p);
    n += strstr(line, a) && strstr(line, b);
    p += len + (e != NULL);
  }
  return n;
}

int main(int argc, char **argv) {
  const char *tools = getenv("BALLAST_TOOLS");
  CHECK(tools != NULL);
  char path[] = "/tmp/ballast_tool_failuresXXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  fflush(stderr);
  int saved = dup(2);
  dup2(fd, 2);
  MPI_Init(&argc, &argv);
  MPI_Barrier(MPI_COMM_WORLD);
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  static char log[1 << 16];
  ssize_t n = pread(fd, log, sizeof log - 1, 0);
  close(fd);
  unlink(path);
  CHECK(n >= 0);
  log[n] = 0;
  fputs(log, stderr); /* for the ctest log */
  CHECK_EQ(lines_with(log, "tt_missing.so\"", "cannot be loaded"), 1);
  CHECK_EQ(lines_with(log, "tt_missing.so", ""), 1);
  CHECK_EQ(lines_with(log, "\"nosuchtool\"", "no such bundled tool"), 1);
  CHECK_EQ(lines_with(log, "tt_v2.so\"", "version 2"), 1);
  CHECK_EQ(lines_with(log, "tt_v2.so", "ballast_tool_init_v2"), 1);
  CHECK_EQ(lines_with(log, "tt_noinit.so\"", "exports no ballast_tool_init_v1"), 1);
  CHECK_EQ(lines_with(log, "tt_err.so\"", "returned -7"), 1);
  CHECK_EQ(lines_with(log, "tt_decline.so", ""), 0);
  CHECK_EQ(lines_with(log, "tt_a.so", ""), 0);
  CHECK_EQ(lines_with(log, "ballast", "tool"), 5); /* nothing else */
  CHECK(notes >= 1); /* tt_a attached and sees the barrier */
  printf("PASS tool_failures\n");
  MPI_Finalize(); /* tt_err's and tt_decline's finalize callbacks abort if called */
  return 0;
}
