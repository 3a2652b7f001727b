/* A test tool that registers every event and passes each one to the test
 * program's tt_note() (found with dlsym; without it the tool declines).
 * Built twice: tt_a.so (TT_ID 0) and tt_b.so (TT_ID 1). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <string.h>

#include "tt.h"

static tt_note_fn note;

#define CB(name, EV, type)                                  \
  static void name(const type *e, void *ud) {               \
    (void)ud;                                               \
    note(TT_ID, EV, e);                                     \
  }
CB(mpi_enter, TT_MPI_ENTER, ballast_tool_mpi_enter_t)
CB(mpi_exit, TT_MPI_EXIT, ballast_tool_mpi_exit_t)
CB(region_enter, TT_REGION_ENTER, ballast_tool_region_t)
CB(region_exit, TT_REGION_EXIT, ballast_tool_region_t)
CB(task_begin, TT_TASK_BEGIN, ballast_tool_task_t)
CB(task_end, TT_TASK_END, ballast_tool_task_t)
CB(lb_decision, TT_LB_DECISION, ballast_tool_lb_decision_t)
CB(remap_begin, TT_REMAP_BEGIN, ballast_tool_remap_begin_t)
CB(remap_end, TT_REMAP_END, ballast_tool_remap_end_t)
CB(task_move, TT_TASK_MOVE, ballast_tool_task_move_t)
CB(finalize, TT_FINALIZE, ballast_tool_finalize_t)
CB(mpi_complete, TT_MPI_COMPLETE, ballast_tool_mpi_complete_t)

int ballast_tool_init_v1(const ballast_tool_api_v1_t *api, ballast_tool_t *tool) {
  void *sym = dlsym(RTLD_DEFAULT, "tt_note");
  if (!sym)
    return 1;
  memcpy(&note, &sym, sizeof note);
  if (api->version != BALLAST_TOOL_VERSION || api->size < (int)sizeof *api ||
      api->size < BALLAST_TOOL_API_V1_1_SIZE)
    return -1;
  note(TT_ID, TT_API, api);
  int rc = api->on_mpi_enter(tool, mpi_enter, NULL) | api->on_mpi_exit(tool, mpi_exit, NULL) |
           api->on_region_enter(tool, region_enter, NULL) |
           api->on_region_exit(tool, region_exit, NULL) |
           api->on_task_begin(tool, task_begin, NULL) | api->on_task_end(tool, task_end, NULL) |
           api->on_lb_decision(tool, lb_decision, NULL) |
           api->on_remap_begin(tool, remap_begin, NULL) |
           api->on_remap_end(tool, remap_end, NULL) | api->on_task_move(tool, task_move, NULL) |
           api->on_finalize(tool, finalize, NULL) |
           api->on_mpi_complete(tool, mpi_complete, NULL);
  /* A second registration of one event is refused. */
  if (api->on_finalize(tool, finalize, NULL) != BALLAST_EEXIST)
    return -2;
  return rc ? -3 : 0;
}
