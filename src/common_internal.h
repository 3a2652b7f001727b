/* Internal helpers shared by the modules; never installed. */
#ifndef BALLAST_COMMON_INTERNAL_H
#define BALLAST_COMMON_INTERNAL_H

#include <ballast/common.h>

/** Current verbosity (BALLAST_VERBOSE, read once). */
int ballast__log_level(void);
/** MPI_COMM_WORLD rank through PMPI, or -1 outside MPI_Init/Finalize. */
int ballast__world_rank(void);

#define BALLAST_ERROR(...) ballast_log(BALLAST_LOG_ERROR, __VA_ARGS__)
#define BALLAST_WARN(...) ballast_log(BALLAST_LOG_WARN, __VA_ARGS__)
#define BALLAST_INFO(...) ballast_log(BALLAST_LOG_INFO, __VA_ARGS__)
#define BALLAST_DEBUG(...) ballast_log(BALLAST_LOG_DEBUG, __VA_ARGS__)

#endif
