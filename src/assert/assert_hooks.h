/*
 * What the assertion layer offers the layers above it (load balancing): the
 * remap that failing assertions marked PIA_ASSERT_REMAP request. This header
 * is the whole of the assertion layer that lb includes.
 */
#ifndef BALLAST_ASSERT_HOOKS_H
#define BALLAST_ASSERT_HOOKS_H

#include <mpi.h>

/**
 * Whether a remap was requested on any rank of \a comm since the last call:
 * 1 yes, 0 no, BALLAST_EMPI when the agreement failed. Consumes this rank's
 * request. Costs nothing (no communication) while no assertion with
 * PIA_ASSERT_REMAP exists; once one does (on every rank: the file's or ones
 * created on all ranks), collective over \a comm, library traffic.
 */
int assert__remap_agree(MPI_Comm comm);

#endif
