/* A multiple-completion call that fails for one request (MPI_ERR_IN_STATUS
 * under MPI_ERRORS_RETURN) still completes the others: their bytes are
 * accounted and they stop being tracked. Here a receive posted too short
 * for its message fails with MPI_ERR_TRUNCATE inside MPI_Waitall /
 * MPI_Waitsome, next to a receive that succeeds: the good one is credited,
 * the failed one credits nothing, and neither stays tracked. */
#include "monwrap/monwrap_util.h"
#include "mon/wrap_internal.h"

static void exchange(int rank, int use_some) {
  int a[4] = {1, 2, 3, 4}, b[8] = {0}, ra[4] = {0}, rb[2];
  if (rank == 1) {
    MPI_Send(a, 4, MPI_INT, 0, 1, MPI_COMM_WORLD);
    MPI_Send(b, 8, MPI_INT, 0, 2, MPI_COMM_WORLD);
    return;
  }
  mw_act_t before = mw_act("MPI_Irecv");
  long tracked = mon__wreq_tracked();
  MPI_Request rq[2];
  MPI_Status st[2];
  MPI_Irecv(ra, 4, MPI_INT, 1, 1, MPI_COMM_WORLD, &rq[0]);
  MPI_Irecv(rb, 2, MPI_INT, 1, 2, MPI_COMM_WORLD, &rq[1]); /* too short */
  int ok_seen = 0, failed_seen = 0;
  if (!use_some) {
    CHECK_EQ(MPI_Waitall(2, rq, st), MPI_ERR_IN_STATUS);
    CHECK_EQ(st[0].MPI_ERROR, MPI_SUCCESS);
    CHECK_NE(st[1].MPI_ERROR, MPI_SUCCESS);
    CHECK_NE(st[1].MPI_ERROR, MPI_ERR_PENDING);
    ok_seen = failed_seen = 1;
  } else {
    while (!ok_seen || !failed_seen) {
      int n, idx[2];
      int rc = MPI_Waitsome(2, rq, &n, idx, st);
      CHECK(rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS);
      for (int k = 0; k < n; k++) {
        if (idx[k] == 0)
          ok_seen = 1;
        else
          failed_seen = 1;
        if (rc == MPI_ERR_IN_STATUS)
          CHECK_EQ(st[k].MPI_ERROR == MPI_SUCCESS, idx[k] == 0);
      }
    }
  }
  CHECK_EQ(ra[0] + ra[1] + ra[2] + ra[3], 10);
  /* the failed request, if MPI kept it, is the caller's to free */
  if (rq[1] != MPI_REQUEST_NULL)
    MPI_Request_free(&rq[1]);
  mw_act_t after = mw_act("MPI_Irecv");
  CHECK_EQ(after.calls - before.calls, 2);
  /* the good receive; the failed one credits nothing (its status may give
   * the incoming size, not what reached the buffer) */
  CHECK_EQ(after.bytes - before.bytes, 16);
  CHECK_EQ(mon__wreq_tracked(), tracked);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK_EQ(size, 2);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  exchange(rank, 0);
  MPI_Barrier(MPI_COMM_WORLD);
  exchange(rank, 1);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  if (rank == 0)
    printf("completions inside MPI_ERR_IN_STATUS are accounted\n");
  MPI_Finalize();
  return 0;
}
