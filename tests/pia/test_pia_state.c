/* PIA's documented codes outside a monitored run (pia.h):
 *  - partner queries return BALLAST_ESTATE after MPI_Finalize, also when an
 *    earlier query during the run had already looked the world size up;
 *  - with monitoring off ("off" argument, BALLAST_MONITOR=0) no region
 *    exists: the empty path ("" or "/", region 0) is BALLAST_ENOTFOUND like
 *    every other region lookup;
 *  - before MPI_Init and after MPI_Finalize every query is BALLAST_ESTATE
 *    (common.h). */
#include <ballast.h>

#include "test_util.h"

static void no_regions(int code) {
  pia_regdata_t r;
  CHECK_EQ(pia_region_data(PIA_REGION_MAIN, &r), code);
  CHECK_EQ(pia_region_find_by_path(""), code);
  CHECK_EQ(pia_region_find_by_path("/"), code);
}

int main(int argc, char **argv) {
  int off = argc > 1 && strcmp(argv[1], "off") == 0;
  no_regions(BALLAST_ESTATE); /* before MPI_Init */
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK_EQ(size, 2);
  int peer = 1 - rank;
  if (off) {
    no_regions(BALLAST_ENOTFOUND);
  } else {
    CHECK_EQ(pia_region_find_by_path(""), PIA_REGION_MAIN);
    CHECK_EQ(pia_region_find_by_path("/"), PIA_REGION_MAIN);
  }

  int buf[8] = {0};
  if (rank == 0)
    MPI_Send(buf, 8, MPI_INT, peer, 3, MPI_COMM_WORLD);
  else
    MPI_Recv(buf, 8, MPI_INT, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  pia_partnerdata_t p, v[2];
  CHECK_EQ(pia_partner_data(peer, PIA_REGION_ALL, &p), 0);
  CHECK_EQ(rank == 0 ? p.nbytes : p.rbytes, off ? 0 : 32);
  CHECK_EQ(pia_partner_volumes(2, PIA_REGION_ALL, v), 0);
  CHECK_EQ(rank == 0 ? v[peer].nbytes : v[peer].rbytes, off ? 0 : 32);

  MPI_Finalize();
  memset(&p, 0x5a, sizeof p);
  pia_partnerdata_t keep = p;
  CHECK_EQ(pia_partner_data(peer, PIA_REGION_ALL, &p), BALLAST_ESTATE);
  CHECK_EQ(pia_partner_volumes(1, PIA_REGION_ALL, &p), BALLAST_ESTATE);
  CHECK(memcmp(&p, &keep, sizeof p) == 0);
  no_regions(BALLAST_ESTATE);
  printf("rank %d: pia state codes ok (%s)\n", rank, off ? "monitoring off" : "monitoring on");
  return 0;
}
