/* The table of listeners of load balancing (lb_internal.h): the record
 * writer, the series, the report and the tools interface's events attach
 * to it, and lb.c raises each
 * event of a context's life through it, in a loop, as the tools interface
 * raises events to tools. The table grows as listeners attach; nothing in
 * it is bounded by a fixed size. It lives as long as the process (a
 * context destroyed at exit still reaches its listeners). */
#include "lb/lb_internal.h"

#include <stdlib.h>
#include <string.h>

#include "common/common_internal.h"

/* The table starts in static room for the built-in listeners, so that
 * attaching them cannot fail (a failure would hide this run's contexts from
 * the record, the series and the report); more listeners grow it. */
enum { ROOM = 8 };
static const lb__listener_t *room[ROOM];
static const lb__listener_t **table = room;
static int nlisteners, caplisteners = ROOM, builtin_done;

int lb__listen(const lb__listener_t *l) {
  if (!l)
    return BALLAST_EINVAL;
  for (int i = 0; i < nlisteners; i++)
    if (table[i] == l)
      return BALLAST_EEXIST;
  if (nlisteners == caplisteners) {
    int cap = 2 * caplisteners;
    const lb__listener_t **t =
        ballast__realloc(table == room ? NULL : table, (size_t)cap * sizeof *t);
    if (!t)
      return BALLAST_ENOMEM;
    if (table == room)
      memcpy(t, room, sizeof room);
    table = t;
    caplisteners = cap;
  }
  table[nlisteners++] = l;
  return 0;
}

/* The built-in listeners, attached once before the first event, in this
 * order: the record first (it was started before the rest of a
 * definition's bookkeeping, and its start's time counts in the definition's). */
static void attach_builtin(void) {
  static const lb__listener_t *const builtin[] = {
      &lb__record_listener, &lb__report_listener, &lb__series_listener,
      &lb__tool_listener};
  _Static_assert(sizeof builtin / sizeof *builtin <= ROOM, "room for the built-in listeners");
  if (builtin_done)
    return;
  builtin_done = 1;
  for (size_t i = 0; i < sizeof builtin / sizeof *builtin; i++)
    (void)lb__listen(builtin[i]); /* in the static room: cannot fail */
}

/* Every listener that has \a event, in order. The listeners' MPI calls
 * (the record's gathers, the series' reductions) are ballast's own
 * traffic, never the application's, whatever the caller's section. */
#define EACH(event, ...)                                                   \
  do {                                                                     \
    attach_builtin();                                                      \
    ballast__lib_begin();                                                  \
    for (int i_ = 0; i_ < nlisteners; i_++)                                \
      if (table[i_]->event)                                                \
        table[i_]->event(__VA_ARGS__);                                     \
    ballast__lib_end();                                                    \
  } while (0)

int lb__wants_graph(const rta_lb_context_t *ctx) {
  attach_builtin();
  for (int i = 0; i < nlisteners; i++)
    if (table[i]->wants_graph && table[i]->wants_graph(ctx))
      return 1;
  return 0;
}

void lb__emit_defined(rta_lb_context_t *ctx, const lb__defined_t *ev) {
  EACH(defined, ctx, ev);
}
void lb__emit_step(rta_lb_context_t *ctx, const lb__step_t *ev) {
  EACH(step, ctx, ev);
}
void lb__emit_remap_begun(rta_lb_context_t *ctx) { EACH(remap_begun, ctx); }
void lb__emit_mapped(rta_lb_context_t *ctx, const lb__mapped_t *ev) {
  EACH(mapped, ctx, ev);
}
void lb__emit_judged(rta_lb_context_t *ctx, const lb__judged_t *ev) {
  EACH(judged, ctx, ev);
}
void lb__emit_remap_ended(rta_lb_context_t *ctx, const lb__remap_end_t *ev) {
  EACH(remap_ended, ctx, ev);
}
void lb__emit_destroyed(rta_lb_context_t *ctx) { EACH(destroyed, ctx); }
