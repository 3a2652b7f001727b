/*
 * count: a minimal ballast tool, to copy when starting your own.
 *
 * It counts every event by type (and MPI calls and bytes per function) and,
 * at the end of the run, sums the counts over the ranks and prints one
 * table on rank 0. Run any ballast program with it:
 *
 *   BALLAST_TOOLS=count mpiexec -n 4 ./my_program        (the installed plugin)
 *   BALLAST_TOOLS=/path/to/count.so mpiexec -n 4 ./my_program
 *
 * What a tool needs (ballast/tool.h is the spec):
 *  - one exported function, ballast_tool_init_v1, that registers callbacks
 *    for the events it wants and returns 0 (attach), > 0 (decline quietly)
 *    or < 0 (error: ballast warns and runs without it);
 *  - callbacks that are thread safe (they run on the thread of the event,
 *    possibly on several at once) and cheap (they run inside MPI calls);
 *  - no MPI calls from callbacks, except in the finalize callback, where
 *    MPI is still usable and every rank takes part, so collectives work.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <ballast/tool.h>

enum { MPI_CALLS, REGIONS, TASKS, DECISIONS, REMAPS, MOVES, NKIND };
static const char *kind_name[NKIND] = {"MPI calls", "regions entered", "task steps",
                                       "lb decisions", "remaps", "tasks moved"};

#define MAXFN 512 /* activity ids of MPI functions are below this */

/* Relaxed atomic adds: callbacks may run on several threads at once. */
static unsigned long long counts[NKIND];
static unsigned long long fn_calls[MAXFN], fn_bytes[MAXFN];
static const char *fn_name[MAXFN];
static const ballast_tool_api_v1_t *api;

#define ADD(p, v) __atomic_fetch_add((p), (v), __ATOMIC_RELAXED)

static void on_mpi_exit(const ballast_tool_mpi_exit_t *ev, void *ud) {
  (void)ud;
  if (ev->lib) /* ballast's own traffic: not the application's */
    return;
  ADD(&counts[MPI_CALLS], 1);
  if (ev->fn >= 0 && ev->fn < MAXFN) {
    fn_name[ev->fn] = ev->name; /* a static string */
    ADD(&fn_calls[ev->fn], 1);
    ADD(&fn_bytes[ev->fn], ev->bytes);
  }
}

static void on_region(const ballast_tool_region_t *ev, void *ud) {
  (void)ev, (void)ud;
  ADD(&counts[REGIONS], 1);
}
static void on_task(const ballast_tool_task_t *ev, void *ud) {
  (void)ev, (void)ud;
  ADD(&counts[TASKS], 1);
}
static void on_decision(const ballast_tool_lb_decision_t *ev, void *ud) {
  (void)ev, (void)ud;
  ADD(&counts[DECISIONS], 1);
}
static void on_remap(const ballast_tool_remap_end_t *ev, void *ud) {
  (void)ud;
  ADD(&counts[REMAPS], ev->committed ? 1 : 0);
}
static void on_move(const ballast_tool_task_move_t *ev, void *ud) {
  (void)ud;
  /* Raised on both ranks of a move: count it where it leaves. */
  if (ev->from == api->world_rank())
    ADD(&counts[MOVES], 1);
}

/* Sums over ranks (MPI is usable here) and prints on rank 0. */
static void on_finalize(const ballast_tool_finalize_t *ev, void *ud) {
  (void)ev, (void)ud;
  static unsigned long long sum[NKIND], fsum[2 * MAXFN], mine[2 * MAXFN];
  int rank = api->world_rank();
  for (int i = 0; i < MAXFN; i++) {
    mine[i] = fn_calls[i];
    mine[MAXFN + i] = fn_bytes[i];
  }
  MPI_Reduce(counts, sum, NKIND, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  MPI_Reduce(mine, fsum, 2 * MAXFN, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank != 0)
    return;
  printf("count: events of %d rank(s)\n", api->world_size());
  printf("count: %-24s %14s\n", "event", "count");
  for (int k = 0; k < NKIND; k++)
    printf("count: %-24s %14llu\n", kind_name[k], sum[k]);
  printf("count: %-24s %14s %16s\n", "MPI function", "calls", "bytes");
  for (int i = 0; i < MAXFN; i++)
    if (fsum[i] > 0)
      printf("count: %-24s %14llu %16llu\n", fn_name[i] ? fn_name[i] : "(other rank)",
             fsum[i], fsum[MAXFN + i]);
  fflush(stdout);
}

int ballast_tool_init_v1(const ballast_tool_api_v1_t *a, ballast_tool_t *tool) {
  api = a;
  /* Registration fails only for bad arguments or after the end of the run. */
  if (a->on_mpi_exit(tool, on_mpi_exit, NULL) || a->on_region_enter(tool, on_region, NULL) ||
      a->on_task_begin(tool, on_task, NULL) || a->on_lb_decision(tool, on_decision, NULL) ||
      a->on_remap_end(tool, on_remap, NULL) || a->on_task_move(tool, on_move, NULL) ||
      a->on_finalize(tool, on_finalize, NULL))
    return -1;
  return 0;
}
