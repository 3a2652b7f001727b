/**
 * \file ballast/mon.h
 * \brief Mon-C: ballast's monitoring module (regions, reports).
 */
#ifndef BALLAST_MON_H
#define BALLAST_MON_H

#include <mpi.h>
#include <ballast/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/** \brief Enter the named region (nested). \return 0 or a negative BALLAST_E* code. */
BALLAST_API int mon_region_begin(const char *name);
/** \brief Leave the named region. \return 0, or BALLAST_EMISMATCH when it is not the innermost. */
BALLAST_API int mon_region_end(const char *name);

#ifdef __cplusplus
}
#endif
#endif
