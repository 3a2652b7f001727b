/* MPI time and traffic attributed to regions, with known MPI calls through
 * the PMPI wrappers (2 ranks): per-(activity, region) counts and bytes, the
 * partner matrix per region, inclusive MPI time, a region without MPI calls
 * having none, and the library's own traffic kept apart. */
#include <ballast/mon.h>
#include <string.h>

#include "common/common_internal.h"
#include "mon/mon_acts.h"
#include "mon/mon_internal.h"
#include "test_util.h"

#define NBAR 10
#define NSR 5
#define BYTES 1000

static mon__actstats_t act(int a, int region) {
  mon__actstats_t s = {0, 0, 0.0, INFINITY, 0.0};
  CHECK_EQ(mon__act_read(a, region, &s), 0);
  return s;
}

static mon__regstats_t reg(int id) {
  mon__regstats_t s;
  CHECK_EQ(mon__region_read(id, &s), 0);
  return s;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK_EQ(size, 2);
  int other = 1 - rank;
  char sbuf[BYTES], rbuf[BYTES];
  memset(sbuf, rank, sizeof sbuf);
  uint64_t bar0 = act(MON_ACT_MPI_Barrier, -1).ncalls;

  CHECK_EQ(mon_region_begin("comm"), 0);
  CHECK_EQ(mon_region_begin("barriers"), 0);
  for (int i = 0; i < NBAR; i++)
    MPI_Barrier(MPI_COMM_WORLD);
  CHECK_EQ(mon_region_end("barriers"), 0);
  CHECK_EQ(mon_region_begin("ring"), 0);
  for (int i = 0; i < NSR; i++)
    MPI_Sendrecv(sbuf, BYTES, MPI_CHAR, other, 1, rbuf, BYTES, MPI_CHAR, MPI_ANY_SOURCE,
                 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  CHECK_EQ(mon_region_end("ring"), 0);
  CHECK_EQ(mon_region_end("comm"), 0);
  CHECK_EQ(mon_region_begin("compute"), 0);
  volatile double x = 0;
  for (int i = 0; i < 100000; i++)
    x += i * 1e-9;
  CHECK_EQ(mon_region_end("compute"), 0);

  /* the library's own traffic is kept apart */
  ballast__lib_begin();
  MPI_Barrier(MPI_COMM_WORLD);
  ballast__lib_end();

  int comm = mon__region_find_child(0, "comm");
  int bars = mon__region_find_child(comm, "barriers");
  int ring = mon__region_find_child(comm, "ring");
  int comp = mon__region_find_child(0, "compute");
  CHECK(comm > 0 && bars > 0 && ring > 0 && comp > 0);

  CHECK_EQ(act(MON_ACT_MPI_Barrier, bars).ncalls, NBAR);
  CHECK_EQ(act(MON_ACT_MPI_Barrier, ring).ncalls, 0);
  CHECK_EQ(act(MON_ACT_MPI_Barrier, comm).ncalls, 0); /* per region: "self" */
  CHECK_EQ(act(MON_ACT_MPI_Barrier, -1).ncalls - bar0, NBAR);
  mon__actstats_t sr = act(MON_ACT_MPI_Sendrecv, ring);
  CHECK_EQ(sr.ncalls, NSR);
  CHECK_EQ(sr.nbytes, 2 * NSR * BYTES); /* sent + received */
  CHECK_DGT(sr.tsum, 0.0);
  CHECK_DLE(sr.tmin, sr.tmax);
  CHECK_EQ(act(MON_GRP_COLL, bars).ncalls, NBAR);
  CHECK_EQ(act(MON_GRP_P2P, ring).ncalls, NSR);

  mon__partner_t p;
  CHECK_EQ(mon__partner_read(ring, other, &p), 0);
  CHECK_EQ(p.bytes, NSR * BYTES);
  CHECK_EQ(p.msgs, NSR);
  CHECK_EQ(p.rbytes, NSR * BYTES);
  CHECK_EQ(p.rmsgs, NSR);
  CHECK_EQ(mon__partner_read(bars, other, &p), 0);
  CHECK_EQ(p.msgs + p.rmsgs, 0);
  CHECK_EQ(mon__partner_read(-1, rank, &p), 0);
  CHECK_EQ(p.msgs + p.rmsgs, 0);

  mon__regstats_t rc = reg(comm), rb = reg(bars), rr = reg(ring), rp = reg(comp);
  /* inclusive MPI time: "comm" makes no call itself, so it is its children's */
  CHECK_DGT(rb.mtime, 0.0);
  CHECK_DGT(rr.mtime, 0.0);
  CHECK_NEAR(rc.mtime, rb.mtime + rr.mtime, 1e-9);
  CHECK_DLE(rb.mtime, rb.wtime);
  CHECK_DLE(rc.mtime, rc.wtime);
  CHECK_DLE(rb.wtime + rr.wtime, rc.wtime);
  CHECK_EQ(rp.mtime, 0.0);
  CHECK_DGT(rp.wtime, 0.0);
  CHECK_DGE(reg(0).mtime, rc.mtime);
  CHECK_EQ(rc.count, 1);

  TEST_PASS("mon_mpitime");
  MPI_Finalize();
  return 0;
}
