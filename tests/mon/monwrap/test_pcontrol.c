/* MPI_Pcontrol as a region interface: 1 enters, -1 leaves, regions nest and
 * carry the MPI activity made inside them; levels 0 and 2 are accepted and do
 * nothing; an unknown level and a mismatched end return MPI_SUCCESS (MPI
 * requires MPI_Pcontrol to be harmless) and leave the region stack as it was.
 * Also: partners across an intercommunicator are the remote world ranks. */
#include "monwrap_util.h"

static int rank, peer;

static void pcontrol(void) {
  int base = mon__region_current();
  mw_act_t pc = mw_act("MPI_Pcontrol");
  CHECK_EQ(MPI_Pcontrol(1, "outer"), MPI_SUCCESS);
  int outer = mon__region_current();
  CHECK_NE(outer, base);
  CHECK_STREQ(mon__region_name(outer), "outer");
  CHECK_EQ(MPI_Pcontrol(1, "inner"), MPI_SUCCESS);
  int inner = mon__region_current();
  CHECK_EQ(mon__region_parent(inner), outer);

  /* known traffic inside "inner": 3 sends of 40 bytes, or 3 receives */
  int buf[10] = {0};
  for (int i = 0; i < 3; i++) {
    if (rank == 0)
      MPI_Send(buf, 10, MPI_INT, 1, 0, MPI_COMM_WORLD);
    else
      MPI_Recv(buf, 10, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  /* harmless levels and a mismatched end: nothing moves */
  CHECK_EQ(MPI_Pcontrol(0), MPI_SUCCESS);
  CHECK_EQ(MPI_Pcontrol(2), MPI_SUCCESS);
  CHECK_EQ(MPI_Pcontrol(7, "whatever"), MPI_SUCCESS);
  CHECK_EQ(MPI_Pcontrol(-1, "outer"), MPI_SUCCESS); /* not the innermost */
  CHECK_EQ(mon__region_current(), inner);
  CHECK_EQ(MPI_Pcontrol(-1, "inner"), MPI_SUCCESS);
  CHECK_EQ(mon__region_current(), outer);
  CHECK_EQ(MPI_Pcontrol(-1, "outer"), MPI_SUCCESS);
  CHECK_EQ(mon__region_current(), base);
  CHECK_EQ(MPI_Pcontrol(-1, "outer"), MPI_SUCCESS); /* end without begin */
  CHECK_EQ(mon__region_current(), base);
  CHECK_ACT("MPI_Pcontrol", pc, 9, 0);

  mon__regstats_t rs;
  memset(&rs, 0, sizeof rs);
  CHECK_EQ(mon__region_read(inner, &rs), 0);
  CHECK_EQ(rs.count, 1);
  CHECK_DGT(rs.mtime, 0.0);
  CHECK_DGE(rs.wtime, rs.mtime);
  const char *act = rank == 0 ? "MPI_Send" : "MPI_Recv";
  mon__actstats_t as;
  memset(&as, 0, sizeof as);
  as.tmin = INFINITY;
  CHECK_EQ(mon__act_read(mon__act_find(act), inner, &as), 0);
  CHECK_EQ(as.ncalls, 3);
  CHECK_EQ(as.nbytes, 120);
  mon__partner_t pr;
  CHECK_EQ(mon__partner_read(inner, peer, &pr), 0);
  CHECK_EQ(rank == 0 ? pr.bytes : pr.rbytes, 120);
}

static void intercomm(void) {
  /* two groups of one rank each, bridged by an intercommunicator */
  MPI_Comm half, inter;
  MPI_Comm_split(MPI_COMM_WORLD, rank, 0, &half);
  MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, peer, 99, &inter);
  mon__partner_t p = mw_partner(peer);
  char buf[16] = {0};
  if (rank == 0)
    MPI_Send(buf, 16, MPI_CHAR, 0, 1, inter); /* remote rank 0 = world 1 */
  else
    MPI_Recv(buf, 16, MPI_CHAR, MPI_ANY_SOURCE, 1, inter, MPI_STATUS_IGNORE);
  if (rank == 0)
    CHECK_PARTNER(1, p, 16, 1, 0, 0);
  else
    CHECK_PARTNER(0, p, 0, 0, 16, 1);
  /* a rooted collective across it: root MPI_ROOT sends, the other side receives */
  mw_act_t bc = mw_act("MPI_Bcast");
  int v = 5;
  MPI_Bcast(&v, 1, MPI_INT, rank == 0 ? MPI_ROOT : 0, inter);
  CHECK_ACT("MPI_Bcast", bc, 1, 4);
  CHECK_EQ(v, 5);
  MPI_Comm_free(&inter);
  MPI_Comm_free(&half);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK_EQ(size, 2);
  peer = 1 - rank;
  pcontrol();
  MPI_Barrier(MPI_COMM_WORLD);
  intercomm();
  TEST_PASS("monwrap_pcontrol");
  MPI_Finalize();
  return 0;
}
