/* Received bytes from a status, Open MPI: the status carries them in
 * _ucount, which is what MPI_Get_elements_x(status, MPI_BYTE) returns after
 * its argument checks. Reading the field saves those checks on every
 * receive. wrappers.cmake selects this file only when a test program proves
 * the field exists (Open MPI 1.7 to 5.x); generic.c otherwise. */
#include "mon/wrap_internal.h"

uint64_t mon__w_rbytes(const MPI_Status *st) {
  return st != NULL ? (uint64_t)st->_ucount : 0;
}
