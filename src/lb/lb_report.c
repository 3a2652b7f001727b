/* Load balancing's section of mon's end-of-run report and profile: remaps,
 * tasks and bytes moved, time mapping and migrating, imbalance before and
 * after. The figures of a destroyed context are kept (folded into `done`),
 * so a program that destroys its contexts before MPI_Finalize still reports
 * them. A listener of the registry (lb_events.c): the live contexts are
 * read from the registry itself, however many there are. */
#include "lb/lb_internal.h"

#include <stdio.h>
#include <stdlib.h>

#include "common/common_internal.h"
#include "mon/mon_hooks.h"

static int registered, ncontexts;
static rta_lb_stats_t done;

/* What the automatic policy saw in the windows it judged, every context
 * summed (rta_policy.h, step 4): its verdicts and the noise it named. */
static struct {
  long long judged, balanced, unconfirmed, noise, persistent;
  long long outliers, machine, warmup_end;
} seen;

static void report_step(rta_lb_context_t *ctx, const lb__step_t *ev) {
  (void)ctx;
  const rta_decision_t *d = ev->d;
  if (d->warmup_end > 0 && !seen.warmup_end)
    seen.warmup_end = d->warmup_end;
  if (d->imbalance <= 0 || d->reason == RTA_REASON_EXPLICIT)
    return;
  seen.judged++;
  seen.balanced += d->reason == RTA_REASON_BALANCED;
  seen.unconfirmed += d->reason == RTA_REASON_UNCONFIRMED;
  seen.noise += d->reason == RTA_REASON_NOISE;
  seen.persistent += d->persistent >= 2;
  seen.outliers += (d->noise & RTA_NOISE_OUTLIERS) != 0;
  seen.machine += (d->noise & RTA_NOISE_MACHINE) != 0;
}

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
  /* the last remap's figures, measured or not (a remap from est_work before
   * the first measurement has no measured imbalance before it: 0) */
  if (s->remaps > 0 || s->imbalance_before > 0) {
    a->imbalance_before = s->imbalance_before;
    a->imbalance_predicted = s->imbalance_predicted;
    a->imbalance_after = s->imbalance_after;
  }
}

static rta_lb_stats_t total(void) {
  rta_lb_stats_t t = done;
  /* Oldest first, as the contexts were defined (the registry lists the
   * newest first): the imbalances are the latest context's. */
  int n = 0;
  for (const rta_lb_context_t *c = lb__contexts(); c; c = c->next)
    n++;
  const rta_lb_context_t **v = ballast__malloc((size_t)(n ? n : 1) * sizeof *v);
  int k = 0;
  for (const rta_lb_context_t *c = lb__contexts(); c; c = c->next, k++) {
    rta_lb_stats_t s;
    if (v)
      v[n - 1 - k] = c;
    else if (rta_lb_stats(c, &s) == 0) /* no memory: newest first */
      fold(&t, &s);
  }
  for (int i = 0; v && i < n; i++) {
    rta_lb_stats_t s;
    rta_lb_stats(v[i], &s);
    fold(&t, &s);
  }
  free(v);
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
  char before[48], after[32];
  if (t.imbalance_before > 0)
    snprintf(before, sizeof before, "%.3f", t.imbalance_before);
  else
    snprintf(before, sizeof before, "%s", t.remaps ? "not measured" : "-");
  if (t.imbalance_after > 0)
    snprintf(after, sizeof after, "%.3f", t.imbalance_after);
  else
    snprintf(after, sizeof after, "%s", t.remaps ? "not judged yet" : "-");
  fprintf(f, "# imbalance  : first %.3f, last %.3f; last remap: before %s, "
          "predicted %.3f, after %s\n", t.imbalance_first, t.imbalance_last, before,
          t.imbalance_predicted, after);
  fprintf(f, "# windows    : %lld judged: %lld balanced, %lld imbalanced once "
          "(unconfirmed), %lld noise (the slowest rank moved), %lld persistent "
          "imbalance; outliers left out in %lld, every rank slower in %lld; "
          "warm-up over at step %lld\n", seen.judged, seen.balanced, seen.unconfirmed,
          seen.noise, seen.persistent, seen.outliers, seen.machine, seen.warmup_end);
}

static char *json(void *user) {
  (void)user;
  rta_lb_stats_t t = total();
  char *s = ballast__malloc(768);
  if (s)
    snprintf(s, 768,
             "{\"contexts\":%d,\"calls\":%lld,\"steps\":%lld,\"remaps\":%lld,"
             "\"failed_remaps\":%lld,\"tasks_moved\":%lld,\"bytes_moved\":%.0f,"
             "\"seconds_mapping\":%.9g,\"seconds_migrating\":%.9g,"
             "\"imbalance_first\":%.6g,\"imbalance_last\":%.6g,"
             "\"imbalance_before\":%.6g,\"imbalance_predicted\":%.6g,"
             "\"imbalance_after\":%.6g,\"windows\":{\"judged\":%lld,"
             "\"balanced\":%lld,\"unconfirmed\":%lld,\"noise\":%lld,"
             "\"persistent\":%lld,\"outliers\":%lld,\"machine\":%lld,"
             "\"warmup_end\":%lld}}",
             ncontexts, t.calls, t.steps, t.remaps, t.failed_remaps, t.tasks_moved,
             t.bytes_moved, t.seconds_mapping, t.seconds_migrating,
             t.imbalance_first, t.imbalance_last, t.imbalance_before,
             t.imbalance_predicted, t.imbalance_after, seen.judged, seen.balanced,
             seen.unconfirmed, seen.noise, seen.persistent, seen.outliers, seen.machine,
             seen.warmup_end);
  return s;
}

static void report_defined(rta_lb_context_t *ctx, const lb__defined_t *ev) {
  (void)ctx;
  (void)ev;
  if (!registered) {
    mon__section_t s = {.name = "load_balancing", .report = report, .json = json};
    registered = mon__report_add_section(&s) == 0;
  }
  ncontexts++;
}

/* Its figures stay in the report once it is gone. */
static void report_destroyed(rta_lb_context_t *ctx) {
  rta_lb_stats_t s;
  rta_lb_stats(ctx, &s);
  fold(&done, &s);
}

const lb__listener_t lb__report_listener = {
    .name = "report", .defined = report_defined, .step = report_step,
    .destroyed = report_destroyed};
