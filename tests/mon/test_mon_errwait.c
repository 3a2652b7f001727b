/* A single-completion call that fails (MPI_Wait, MPI_Test, MPI_Waitany under
 * MPI_ERRORS_RETURN) and frees the request must stop tracking it: Open MPI
 * frees a receive that failed with MPI_ERR_TRUNCATE and sets the handle to
 * MPI_REQUEST_NULL, and an entry left behind would be consumed by the next
 * request that reuses the handle. */
#include "monwrap/monwrap_util.h"
#include "mon/wrap_internal.h"

enum { WAIT, TEST, WAITANY };

static void failing(int rank, int how) {
  int b[8] = {0}, rb[2];
  if (rank == 1) {
    MPI_Send(b, 8, MPI_INT, 0, 2, MPI_COMM_WORLD);
    return;
  }
  long tracked = mon__wreq_tracked();
  mw_act_t before = mw_act("MPI_Irecv");
  MPI_Request r;
  MPI_Irecv(rb, 2, MPI_INT, 1, 2, MPI_COMM_WORLD, &r); /* too short */
  int rc = MPI_SUCCESS, flag = 0, idx;
  if (how == WAIT) {
    rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
  } else if (how == TEST) {
    while (rc == MPI_SUCCESS && !flag)
      rc = MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
  } else {
    rc = MPI_Waitany(1, &r, &idx, MPI_STATUS_IGNORE);
  }
  CHECK_NE(rc, MPI_SUCCESS);
  if (r != MPI_REQUEST_NULL)
    MPI_Request_free(&r); /* an MPI that keeps it: the caller frees it */
  CHECK_EQ(mon__wreq_tracked(), tracked);
  mw_act_t after = mw_act("MPI_Irecv");
  CHECK_EQ(after.calls - before.calls, 1);
  CHECK_EQ(after.bytes - before.bytes, 0);
}

static void good(int rank) {
  int a[4] = {1, 2, 3, 4}, ra[4];
  if (rank == 1) {
    MPI_Send(a, 4, MPI_INT, 0, 1, MPI_COMM_WORLD);
    return;
  }
  long tracked = mon__wreq_tracked();
  mw_act_t before = mw_act("MPI_Irecv");
  MPI_Request r;
  MPI_Irecv(ra, 4, MPI_INT, 1, 1, MPI_COMM_WORLD, &r);
  CHECK_EQ(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_SUCCESS);
  CHECK_EQ(mon__wreq_tracked(), tracked);
  mw_act_t after = mw_act("MPI_Irecv");
  CHECK_EQ(after.bytes - before.bytes, 16);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK_EQ(size, 2);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  for (int how = WAIT; how <= WAITANY; how++) {
    failing(rank, how);
    good(rank); /* likely on the freed handle */
    MPI_Barrier(MPI_COMM_WORLD);
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  if (rank == 0)
    printf("failed single completions are untracked\n");
  MPI_Finalize();
  return 0;
}
