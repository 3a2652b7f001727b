/* BALLAST_MONITOR=0 (set by ctest): the wrappers only call PMPI, nothing is
 * recorded, region calls succeed and do nothing, MPI_Finalize prints no report. */
#include <ballast/mon.h>

#include "mon/mon_acts.h"
#include "mon/mon_internal.h"
#include "test_util.h"

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  CHECK(!mon__active());
  CHECK(mon__enter() == NULL);
  int rank, v = 1, sum = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  CHECK_EQ(mon_region_begin("r"), 0);
  MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK_EQ(mon_region_end("r"), 0);
  CHECK_EQ(mon_region_end("never"), 0); /* not even checked: monitoring is off */
  CHECK_EQ(mon_region_begin(NULL), BALLAST_EINVAL); /* arguments still are */
  CHECK_EQ(sum, 2);
  mon__actstats_t s = {0, 0, 0.0, INFINITY, 0.0};
  CHECK_EQ(mon__act_read(MON_GRP_ALL, -1, &s), 0);
  CHECK_EQ(s.ncalls, 0);
  CHECK_EQ(s.nbytes, 0);
  CHECK_EQ(mon__sig_count(), 0);
  CHECK_EQ(mon__region_count(), 0);
  CHECK_EQ(mon_report(MON_REPORT_TERSE), BALLAST_EDISABLED);
  TEST_PASS("mon_off");
  MPI_Finalize();
  return 0;
}
