/*
 * ballast-trace-merge: merge the per-rank parts of a Perfetto trace that a
 * run left behind (it died before MPI_Finalize, or BALLAST_TRACE_KEEP_PARTS
 * kept them). Usage: ballast-trace-merge TRACE.json [--remove-parts]
 * reads TRACE.json.part0 .. .part<P-1> and writes TRACE.json. Exit status 0
 * on success, 1 on a bad command line, 2 when the parts cannot be merged
 * (the message names the file and the problem).
 */
#include "perfetto_merge.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static int usage(void) {
  fprintf(stderr,
          "usage: ballast-trace-merge TRACE.json [--remove-parts]\n"
          "  merges TRACE.json.part0 .. TRACE.json.part<P-1> (written by the Perfetto\n"
          "  writer, libballast_trace_perfetto.so) into TRACE.json\n");
  return 1;
}

int main(int argc, char **argv) {
  const char *out = NULL;
  int remove_parts = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--remove-parts") == 0) remove_parts = 1;
    else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) return usage();
    else if (argv[i][0] == '-' || out) {
      fprintf(stderr, "ballast-trace-merge: unexpected argument '%s'\n", argv[i]);
      return usage();
    } else out = argv[i];
  }
  if (!out) return usage();
  char err[512] = "";
  uint64_t n = 0;
  int rc = perfetto_merge(out, 0, remove_parts, &n, err, sizeof err);
  if (rc) {
    fprintf(stderr, "ballast-trace-merge: %s\n", err);
    return 2;
  }
  printf("ballast-trace-merge: %s: %" PRIu64 " events\n", out, n);
  return 0;
}
