/* Received bytes from a status, for any MPI library (selected by
 * wrappers.cmake when the library has no faster way, see ompi.c). */
#include "mon/wrap_internal.h"

uint64_t mon__w_rbytes(const MPI_Status *st) {
  MPI_Count n = 0;
  /* MPI_BYTE makes the element count the byte count, whatever the receive's
   * datatype, and the _x form does not overflow at 2 GiB. */
  if (st == NULL || PMPI_Get_elements_x(st, MPI_BYTE, &n) != MPI_SUCCESS || n < 0)
    return 0;
  return (uint64_t)n;
}
