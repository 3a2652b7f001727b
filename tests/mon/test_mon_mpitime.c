/* MPI time and traffic attributed to regions, with known MPI calls through
 * the PMPI wrappers (2 ranks): per-(activity, region) counts and bytes, the
 * partner matrix per region, inclusive MPI time, a region without MPI calls
 * having none, and the library's own traffic kept apart: ballast's own calls
 * (made between ballast__lib_begin/end, as agree.c and pia do) land in the
 * library's figures and never in the application's, and mon's report
 * collectives land in neither. */
#include <ballast/mon.h>
#include <ballast/pia.h>
#include <string.h>

#include "common/common_internal.h"
#include "mon/mon_acts.h"
#include "mon/mon_core.h"
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

static uint64_t lib_calls(int a) {
  mon__agg_t l;
  mon__lib_read(a, &l);
  return l.ncalls;
}

/* Calls ballast makes for itself: counted as the library's, not the
 * application's, whichever region is open. */
static void check_library_traffic(void) {
  int bar_lib = (int)lib_calls(MON_ACT_MPI_Barrier);
  CHECK_EQ(bar_lib, 1); /* the bracketed barrier above */
  uint64_t app_ar = act(MON_ACT_MPI_Allreduce, -1).ncalls;
  uint64_t app_sz = act(MON_ACT_MPI_Comm_size, -1).ncalls;
  uint64_t app_rk = act(MON_ACT_MPI_Comm_rank, -1).ncalls;
  uint64_t lib_ar = lib_calls(MON_ACT_MPI_Allreduce);
  uint64_t lib_sz = lib_calls(MON_ACT_MPI_Comm_size);
  uint64_t lib_rk = lib_calls(MON_ACT_MPI_Comm_rank);
  CHECK_EQ(mon_region_begin("lib"), 0);
  int who = 0, code = 0;
  /* the agreement helper: one MPI_Comm_rank, one MPI_Allreduce */
  CHECK_EQ(ballast__agree(MPI_COMM_WORLD, 0, &who, &code), 0);
  CHECK_EQ(who, -1);
  /* pia's first query asks MPI for the world size, on the application's
   * behalf but as the library's traffic */
  pia_partnerdata_t pd[2];
  CHECK_EQ(pia_partner_volumes(2, PIA_REGION_ALL, pd), 0);
  CHECK_EQ(mon_region_end("lib"), 0);
  int lib = mon__region_find_child(0, "lib");
  CHECK_GT(lib, 0);
  CHECK_EQ(lib_calls(MON_ACT_MPI_Allreduce) - lib_ar, 1);
  CHECK_EQ(lib_calls(MON_ACT_MPI_Comm_rank) - lib_rk, 1);
  CHECK_EQ(lib_calls(MON_ACT_MPI_Comm_size) - lib_sz, 1);
  CHECK_EQ(act(MON_ACT_MPI_Allreduce, -1).ncalls, app_ar);
  CHECK_EQ(act(MON_ACT_MPI_Comm_size, -1).ncalls, app_sz);
  CHECK_EQ(act(MON_ACT_MPI_Comm_rank, -1).ncalls, app_rk);
  CHECK_EQ(act(MON_GRP_ALL, lib).ncalls, 0);
  CHECK_EQ(reg(lib).mtime, 0.0);

  /* mon's report collectives (PMPI) are counted nowhere */
  uint64_t app_all = act(MON_GRP_ALL, -1).ncalls;
  uint64_t lib_bc = lib_calls(MON_ACT_MPI_Bcast), lib_red = lib_calls(MON_ACT_MPI_Reduce);
  lib_ar = lib_calls(MON_ACT_MPI_Allreduce);
  CHECK_EQ(mon_report(MON_REPORT_TERSE), 0);
  CHECK_EQ(act(MON_GRP_ALL, -1).ncalls, app_all);
  CHECK_EQ(lib_calls(MON_ACT_MPI_Bcast), lib_bc);
  CHECK_EQ(lib_calls(MON_ACT_MPI_Reduce), lib_red);
  CHECK_EQ(lib_calls(MON_ACT_MPI_Allreduce), lib_ar);
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

  check_library_traffic();

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
