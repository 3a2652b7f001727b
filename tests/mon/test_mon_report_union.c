/* The report's regions are chosen across ranks up a binomial tree that
 * merges the ranks' regions by path: with 5 ranks (not a power of two),
 * each rank's own region ("only_r<rank>" under "common"), a region of the
 * odd ranks and one every rank enters reach the full report once each,
 * with their counts summed over the ranks that have them; terse with
 * BALLAST_REPORT_TOP=2 lists the two largest by summed wall time. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <ballast.h>

#include "mon/report_capture.h"
#include "test_util.h"

static void spin(double s) {
  double t0 = MPI_Wtime();
  while (MPI_Wtime() - t0 < s) {
  }
}

/* Rows of the report's region table: path, count and wall time. */
static int rows(FILE *f, char names[][64], double *count, double *wall, int max) {
  char line[1024];
  int in = 0, n = 0;
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, "# region ", 9) == 0) {
      in = 1;
      continue;
    }
    if (!in)
      continue;
    if (strncmp(line, "# ", 2) != 0 || line[2] == ' ' || line[2] == '\n' || n == max)
      break;
    CHECK_EQ(sscanf(line + 2, "%63s %lf %lf", names[n], &count[n], &wall[n]), 3);
    n++;
  }
  return n;
}

/* The own region of largest wall time in the full report (rank 0). */
static char best[64];
static double best_wall;

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK_EQ(size, 5);
  char own[32];
  snprintf(own, sizeof own, "only_r%d", rank);
  CHECK_EQ(mon_region_begin("common"), 0);
  CHECK_EQ(mon_region_begin(own), 0);
  spin(0.002 * (rank + 1));
  CHECK_EQ(mon_region_end(own), 0);
  CHECK_EQ(mon_region_end("common"), 0);
  if (rank % 2) {
    CHECK_EQ(mon_region_begin("odd"), 0);
    CHECK_EQ(mon_region_begin("odd"), 0); /* odd/odd */
    CHECK_EQ(mon_region_end("odd"), 0);
    CHECK_EQ(mon_region_end("odd"), 0);
  }
  FILE *f = report_capture(MON_REPORT_FULL);
  if (rank == 0) {
    char names[32][64];
    double count[32], wall[32];
    int n = rows(f, names, count, wall, 32);
    fclose(f);
    CHECK_EQ(n, 5 + 3); /* common, 5 x common/only_rK, odd, odd/odd */
    int seen[5] = {0}, common = 0, odd = 0, oddodd = 0;
    best_wall = -1;
    for (int i = 0; i < n; i++) {
      int k;
      if (sscanf(names[i], "common/only_r%d", &k) == 1 && k >= 0 && k < 5) {
        seen[k]++;
        if (wall[i] > best_wall) {
          best_wall = wall[i];
          snprintf(best, sizeof best, "%.63s", names[i]);
        }
        CHECK_EQ(count[i], 1.0);
      } else if (!strcmp(names[i], "common")) {
        common++;
        CHECK_EQ(count[i], 5.0);
      } else if (!strcmp(names[i], "odd")) {
        odd++;
        CHECK_EQ(count[i], 2.0);
      } else if (!strcmp(names[i], "odd/odd")) {
        oddodd++;
        CHECK_EQ(count[i], 2.0);
      } else {
        CHECK(!"an unexpected row");
      }
    }
    for (int k = 0; k < 5; k++)
      CHECK_EQ(seen[k], 1);
    CHECK_EQ(common + odd + oddodd, 3);
  }
  /* terse, the 2 largest by summed wall time (BALLAST_REPORT_TOP=2 from
   * the test's environment): common, then the own region the full report
   * showed largest (the spins are 2-10 ms, but a loaded machine decides) */
  f = report_capture(MON_REPORT_TERSE);
  if (rank == 0) {
    char names[8][64];
    double count[8], wall[8];
    int n = rows(f, names, count, wall, 8);
    fclose(f);
    CHECK_EQ(n, 2);
    CHECK_STREQ(names[0], "common");
    CHECK_STREQ(names[1], best);
  }
  MPI_Finalize();
  TEST_PASS("mon_report_union");
  return 0;
}
