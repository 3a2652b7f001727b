/* The wrappers never fail into the application: MPI's return codes pass
 * through unchanged (errors included, with MPI_ERRORS_RETURN), a failed call
 * is counted with no bytes, and with monitoring off (run with argument "off"
 * and BALLAST_MONITOR=0) the wrappers only call PMPI and record nothing while
 * the program's MPI results stay right. */
#include "monwrap_util.h"
#include "mon/wrap_internal.h"

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int off = argc > 1 && strcmp(argv[1], "off") == 0;
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK_EQ(size, 2);
  CHECK_EQ(mon__active(), !off);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

  mw_act_t send = mw_act("MPI_Send"), all = mw_act("MPI_ALL");
  int buf[4] = {1, 2, 3, 4};
  int rc = MPI_Send(buf, 4, MPI_INT, 99, 0, MPI_COMM_WORLD); /* no rank 99 */
  int prc = PMPI_Send(buf, 4, MPI_INT, 99, 0, MPI_COMM_WORLD);
  CHECK_NE(rc, MPI_SUCCESS);
  CHECK_EQ(rc, prc);
  rc = MPI_Send(buf, 4, MPI_DATATYPE_NULL, 1 - rank, 0, MPI_COMM_WORLD);
  CHECK_NE(rc, MPI_SUCCESS);
  CHECK_ACT("MPI_Send", send, off ? 0 : 2, 0);

  /* real traffic still works, and is counted only when monitoring is on */
  int sum = 0;
  CHECK_EQ(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_SUCCESS);
  CHECK_EQ(sum, 1);
  const char *nb = rank == 0 ? "MPI_Isend" : "MPI_Irecv";
  mw_act_t nb0 = mw_act(nb);
  MPI_Request rq;
  int got[4] = {0};
  if (rank == 0)
    MPI_Isend(buf, 4, MPI_INT, 1, 5, MPI_COMM_WORLD, &rq);
  else
    MPI_Irecv(got, 4, MPI_INT, 0, 5, MPI_COMM_WORLD, &rq);
  MPI_Status st;
  CHECK_EQ(MPI_Wait(&rq, &st), MPI_SUCCESS);
  if (rank == 1) {
    CHECK_EQ(got[3], 4);
    CHECK_EQ(st.MPI_SOURCE, 0);
  }
  if (off) {
    CHECK_EQ(mw_act("MPI_ALL").calls, all.calls);
    CHECK_EQ(mon__wreq_tracked(), 0);
  } else {
    CHECK_ACT(nb, nb0, 1, 16);
  }
  TEST_PASS(off ? "monwrap_off" : "monwrap_errors");
  MPI_Finalize();
  return 0;
}
