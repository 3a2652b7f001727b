/*
 * MPI_Pcontrol for the generated wrapper, and the wrappers' teardown.
 *
 * MPI_Pcontrol(level, ...) is MPI's hook for profiling tools. Following IPM,
 * ballast gives it regions: MPI_Pcontrol(1, "name") enters region "name" and
 * MPI_Pcontrol(-1, "name") leaves it (mon_region_begin / mon_region_end, with
 * their checks and warnings for bad names and mismatched ends). MPI's own
 * levels 0 ("profiling off") and 2 ("flush") are accepted and do nothing:
 * monitoring is switched off with BALLAST_MONITOR=0 instead. Any other level
 * draws one warning per process. MPI requires MPI_Pcontrol to be harmless,
 * so it always returns MPI_SUCCESS, whatever the region calls returned.
 */
#include "common/common_internal.h"
#include "mon/wrap_internal.h"

static int warned_level;

void mon__w_pcontrol_region(int level, const char *name) {
  if (level == 1)
    mon_region_begin(name);
  else if (level == -1)
    mon_region_end(name);
  else if (level != 0 && level != 2 &&
           !__atomic_exchange_n(&warned_level, 1, __ATOMIC_RELAXED))
    BALLAST_WARN("mon: MPI_Pcontrol level %d is not one of 1 (region begin), -1 "
                 "(region end), 0, 2: ignored (warned once)", level);
}

void mon__w_pcontrol_pass(int level, const char *name) {
  /* Pass the call on, for a profiling layer below ballast. */
  if (level == 1 || level == -1)
    PMPI_Pcontrol(level, name);
  else
    PMPI_Pcontrol(level);
}

int mon__w_pcontrol(int level, const char *name, uint64_t *ticks) {
  mon__w_pcontrol_region(level, name);
  uint64_t t0 = ticks ? mon__ticks() : 0;
  mon__w_pcontrol_pass(level, name);
  if (ticks)
    *ticks = mon__ticks() - t0;
  return MPI_SUCCESS;
}

void mon__wrap_finalize(void) {
  ballast__mpi_state_set(2); /* PMPI_Finalize follows: the guard says so */
  mon__wrap_requests_finalize();
  mon__wrap_comm_finalize();
}
