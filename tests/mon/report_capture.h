/* Tests that read the end-of-run report: mon_report() prints on rank 0's
 * stdout, so rank 0 points stdout at a temporary file for the call. */
#ifndef BALLAST_TEST_REPORT_CAPTURE_H
#define BALLAST_TEST_REPORT_CAPTURE_H

#include <ballast/mon.h>
#include <stdio.h>
#include <unistd.h>

#include "test_util.h"

/* Collective: runs mon_report(level). Rank 0 gets the report as a file read
 * from its start (fclose removes it); the other ranks get NULL. */
static FILE *report_capture(int level) {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  FILE *f = NULL;
  int saved = -1;
  if (rank == 0) {
    f = tmpfile();
    CHECK(f != NULL);
    fflush(stdout);
    saved = dup(1);
    CHECK_GE(saved, 0);
    CHECK_GE(dup2(fileno(f), 1), 0);
  }
  CHECK_EQ(mon_report(level), 0);
  if (rank == 0) {
    fflush(stdout);
    CHECK_GE(dup2(saved, 1), 0);
    close(saved);
    rewind(f);
  }
  return f;
}

#endif
