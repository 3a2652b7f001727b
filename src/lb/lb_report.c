/* Load balancing's section of mon's end-of-run report and profile: remaps,
 * tasks and bytes moved, time mapping and migrating, imbalance before and
 * after. The figures of a destroyed context are kept (folded into `done`),
 * so a program that destroys its contexts before MPI_Finalize still reports
 * them. */
#include "lb/lb_internal.h"

#include <stdio.h>
#include <stdlib.h>

#include "common/common_internal.h"
#include "mon/mon_hooks.h"

#define MAX_LIVE 64

static rta_lb_context_t *live[MAX_LIVE];
static int nlive, registered, ncontexts;
static rta_lb_stats_t done;

static void fold(rta_lb_stats_t *a, const rta_lb_stats_t *s) {
  a->calls += s->calls;
  a->steps += s->steps;
  a->remaps += s->remaps;
  a->failed_remaps += s->failed_remaps;
  a->tasks_moved += s->tasks_moved;
  a->bytes_moved += s->bytes_moved;
  a->seconds_mapping += s->seconds_mapping;
  a->seconds_migrating += s->seconds_migrating;
  a->seconds_deciding += s->seconds_deciding;
  /* Imbalances: the latest context's figures (one context is the usual case). */
  if (s->imbalance_first > 0) {
    if (a->imbalance_first == 0)
      a->imbalance_first = s->imbalance_first;
    a->imbalance_last = s->imbalance_last;
  }
  if (s->imbalance_before > 0) {
    a->imbalance_before = s->imbalance_before;
    a->imbalance_predicted = s->imbalance_predicted;
    a->imbalance_after = s->imbalance_after;
  }
}

static rta_lb_stats_t total(void) {
  rta_lb_stats_t t = done;
  for (int i = 0; i < nlive; i++) {
    rta_lb_stats_t s;
    rta_lb_stats(live[i], &s);
    fold(&t, &s);
  }
  return t;
}

static void report(FILE *f, void *user) {
  (void)user;
  rta_lb_stats_t t = total();
  fprintf(f, "#\n# load balancing (%d context%s)\n", ncontexts, ncontexts == 1 ? "" : "s");
  fprintf(f, "# lb calls   : %lld (%lld judged steps)\n", t.calls, t.steps);
  fprintf(f, "# remaps     : %lld done, %lld rolled back\n", t.remaps, t.failed_remaps);
  fprintf(f, "# moved      : %lld tasks, %.0f bytes\n", t.tasks_moved, t.bytes_moved);
  fprintf(f, "# lb time (s): %.6f mapping, %.6f migrating\n", t.seconds_mapping,
          t.seconds_migrating);
  fprintf(f, "# imbalance  : first %.3f, last %.3f; last remap: before %.3f, "
          "predicted %.3f, after %.3f\n", t.imbalance_first, t.imbalance_last,
          t.imbalance_before, t.imbalance_predicted, t.imbalance_after);
}

static char *json(void *user) {
  (void)user;
  rta_lb_stats_t t = total();
  char *s = ballast__malloc(512);
  if (s)
    snprintf(s, 512,
             "{\"contexts\":%d,\"calls\":%lld,\"steps\":%lld,\"remaps\":%lld,"
             "\"failed_remaps\":%lld,\"tasks_moved\":%lld,\"bytes_moved\":%.0f,"
             "\"seconds_mapping\":%.9g,\"seconds_migrating\":%.9g,"
             "\"imbalance_first\":%.6g,\"imbalance_last\":%.6g,"
             "\"imbalance_before\":%.6g,\"imbalance_predicted\":%.6g,"
             "\"imbalance_after\":%.6g}",
             ncontexts, t.calls, t.steps, t.remaps, t.failed_remaps, t.tasks_moved,
             t.bytes_moved, t.seconds_mapping, t.seconds_migrating,
             t.imbalance_first, t.imbalance_last, t.imbalance_before,
             t.imbalance_predicted, t.imbalance_after);
  return s;
}

void rta__lb_report_add(rta_lb_context_t *ctx) {
  if (!registered) {
    mon__section_t s = {.name = "load_balancing", .report = report, .json = json};
    registered = mon__report_add_section(&s) == 0;
  }
  ncontexts++;
  if (nlive < MAX_LIVE)
    live[nlive++] = ctx;
}

void rta__lb_report_remove(rta_lb_context_t *ctx) {
  for (int i = 0; i < nlive; i++)
    if (live[i] == ctx) {
      rta_lb_stats_t s;
      rta_lb_stats(ctx, &s);
      fold(&done, &s);
      live[i] = live[--nlive];
      return;
    }
}
