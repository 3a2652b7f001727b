/* The tools interface's load-balancing events (ballast/tool.h: lb_decision,
 * remap_begin, remap_end), raised by a listener of lb's contexts
 * (lb_events.c) as the record, the report and the series are: lb's core
 * never calls the tools interface for them. Every event costs one test of
 * the tools' event mask when no tool listens. The per-task task_move event
 * stays with the move (lb_move.c), which alone knows each task's way.
 *
 * Pairing: every remap_begin a tool sees is followed by one remap_end of
 * the same context and step: committed, rolled back (whatever failed, the
 * mapping included) or dropped by the policy before anything moved. */
#include "lb/lb_internal.h"

#include "tool/tool_internal.h"

static void tool_step(rta_lb_context_t *ctx, const lb__step_t *ev) {
  if (!TOOL__ON(TOOL__EV_LB_DECISION))
    return;
  const rta_decision_t *d = ev->d;
  ballast_tool_lb_decision_t e = {
      .t_ns = tool__now(), .context = ctx->root_key, .step = (long)d->step,
      .imbalance = d->imbalance, .predicted_gain_s = d->predicted_gain,
      .remap_cost_s = d->remap_cost,
      .verdict = d->remap ? BALLAST_TOOL_REMAP : BALLAST_TOOL_KEEP,
      .reason = rta_reason_name(d->reason), .slowest = d->slowest,
      .persistent = d->persistent, .noise = d->noise};
  tool__emit_lb_decision(&e);
}

static void tool_remap_begun(rta_lb_context_t *ctx) {
  if (!TOOL__ON(TOOL__EV_REMAP_BEGIN))
    return;
  ballast_tool_remap_begin_t e = {.t_ns = tool__now(), .context = ctx->root_key,
                                  .step = (long)ctx->last.step,
                                  .strategy = rta_strategy_name(ctx->cfg.strategy)};
  tool__emit_remap_begin(&e);
}

static void tool_remap_ended(rta_lb_context_t *ctx, const lb__remap_end_t *ev) {
  if (!TOOL__ON(TOOL__EV_REMAP_END))
    return;
  ballast_tool_remap_end_t e = {.t_ns = tool__now(), .context = ctx->root_key,
                                .step = (long)ev->d->step,
                                .strategy = rta_strategy_name(ctx->cfg.strategy)};
  if (!ev->dropped) { /* a dropped candidate moved nothing and cost nothing */
    int ok = ev->rc == 0;
    e.tasks_moved = ok ? ev->tasks : 0;
    e.bytes_moved = ok ? (uint64_t)ev->cost->bytes : 0;
    e.mapping_s = ev->cost->mapping;
    e.migration_s = ev->cost->migration;
    e.committed = ok;
  }
  tool__emit_remap_end(&e);
}

const lb__listener_t lb__tool_listener = {
    .name = "tools interface",
    .step = tool_step,
    .remap_begun = tool_remap_begun,
    .remap_ended = tool_remap_ended,
};
