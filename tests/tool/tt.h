/* Shared by the test tools (tt_tool.c, built as tt_a.so and tt_b.so) and the
 * test programs: the programs export tt_note(), and the tools find it with
 * dlsym(RTLD_DEFAULT) and pass it every event they receive, so the program
 * can check counts, values and the order in which the tools were called. */
#ifndef BALLAST_TT_H
#define BALLAST_TT_H

#include <ballast/tool.h>

enum {
  TT_MPI_ENTER, TT_MPI_EXIT, TT_REGION_ENTER, TT_REGION_EXIT, TT_TASK_BEGIN, TT_TASK_END,
  TT_LB_DECISION, TT_REMAP_BEGIN, TT_REMAP_END, TT_TASK_MOVE, TT_FINALIZE, TT_MPI_COMPLETE,
  TT_NEV,
  TT_API = 100 /* from the init: e is the api table (not an event) */
};

/** Called by tool \a tool (0 for tt_a, 1 for tt_b) with event \a ev's struct. */
typedef void (*tt_note_fn)(int tool, int ev, const void *e);

#endif
