/* The end-of-run report lists regions by their path from the root, which
 * every rank resolves to its own region ids. Regions nested deeper than any
 * fixed limit must keep their whole path: a truncated one resolves to an
 * ancestor, and the report prints the ancestor's figures under the deep
 * region's row.
 *
 * Nest "deep" 300 levels, then leave and re-enter the 20 innermost: levels
 * 1..280 are left once per rank, levels 281..300 twice. With 2 ranks and
 * every region listed (BALLAST_REPORT_TOP=1000), the full report's region
 * rows must show [count] 2 for 280 rows and 4 for 20 rows. */
#include <ballast.h>

#include "mon/report_capture.h"
#include "test_util.h"

#define DEPTH 300
#define REDO 20

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK_EQ(size, 2);
  for (int i = 0; i < DEPTH; i++)
    CHECK_EQ(mon_region_begin("deep"), 0);
  for (int i = 0; i < REDO; i++)
    CHECK_EQ(mon_region_end("deep"), 0);
  for (int i = 0; i < REDO; i++)
    CHECK_EQ(mon_region_begin("deep"), 0);
  for (int i = 0; i < DEPTH; i++)
    CHECK_EQ(mon_region_end("deep"), 0);
  CHECK_EQ(pia_region_count(), DEPTH + 1);

  FILE *f = report_capture(MON_REPORT_FULL);
  if (rank == 0) {
    char line[4096];
    int in_regions = 0, rows = 0, twos = 0, fours = 0;
    while (fgets(line, sizeof line, f)) {
      if (strncmp(line, "# region ", 9) == 0) {
        in_regions = 1;
        continue;
      }
      if (!in_regions)
        continue;
      if (strncmp(line, "# deep", 6) != 0)
        break; /* end of the region table */
      double count, w, lo, hi, mpi, pct;
      char *p = strchr(line, ' ');
      p = strchr(p + 1, ' '); /* past "# <path>" (no space in the path) */
      CHECK(p != NULL);
      CHECK_EQ(sscanf(p, "%lf %lf %lf %lf %lf %lf", &count, &w, &lo, &hi, &mpi, &pct), 6);
      rows++;
      twos += count == 2.0;
      fours += count == 4.0;
    }
    fclose(f);
    CHECK_EQ(rows, DEPTH);
    CHECK_EQ(fours, REDO);
    CHECK_EQ(twos, DEPTH - REDO);
    printf("deep regions: %d rows, %d with count 4\n", rows, fours);
  }
  MPI_Finalize();
  return 0;
}
