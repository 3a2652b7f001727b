/* The one way rta's collective steps agree on failure. */
#include <limits.h>

#include "common/common_internal.h"

int ballast__agree(MPI_Comm comm, int err, int *who, int *code) {
  int rank = 0;
  ballast__lib_begin();
  MPI_Comm_rank(comm, &rank);
  /* MINLOC on (rank if failed, else INT_MAX) picks the lowest failing rank
   * and carries its code along as the "index". */
  struct {
    int val, idx;
  } in = {err ? rank : INT_MAX, err}, out;
  int w = -1, c = 0;
  if (MPI_Allreduce(&in, &out, 1, MPI_2INT, MPI_MINLOC, comm) != MPI_SUCCESS) {
    w = rank;
    c = BALLAST_EMPI;
  } else if (out.val != INT_MAX) {
    w = out.val;
    c = out.idx;
  }
  ballast__lib_end();
  if (who)
    *who = w;
  if (code)
    *code = c;
  if (w < 0)
    return 0;
  if (c == BALLAST_EMPI && w == rank && !err)
    return BALLAST_EMPI;
  return err ? err : BALLAST_EREMOTE;
}
