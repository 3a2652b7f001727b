/* The table of listeners of load balancing (lb_events.c), 2 ranks: a
 * listener attached beside the built-in ones (record, series, report) hears
 * every event of a context's life in order, with the values lb has: the
 * definition (with the task graph it asked for), each judged step, and per
 * explicit remap begun, mapped (graph, mapping and slots), judged and ended
 * (committed, not dropped); then the destruction. Attaching it twice is
 * BALLAST_EEXIST. */
#include <stdio.h>
#include <string.h>

#include <ballast/rta.h>

#include "lb/lb_internal.h"
#include "test_util.h"

#define STEPS 3
static int me, np;
static rta_lb_context_t *seen_ctx;
static char seq[64];
static int nseq, graphs, steps_closed;

static void note(rta_lb_context_t *ctx, char c) {
  CHECK(ctx == seen_ctx || (c == 'D' && !seen_ctx));
  if (nseq < (int)sizeof seq - 1)
    seq[nseq++] = c;
}
static int wants(const rta_lb_context_t *ctx) {
  (void)ctx;
  return 1;
}
static void defined(rta_lb_context_t *ctx, const lb__defined_t *ev) {
  CHECK(lb__contexts() == ctx); /* in the registry, newest first */
  graphs += ev->graph != NULL;
  note(ctx, 'D');
  seen_ctx = ctx;
}
static void step(rta_lb_context_t *ctx, const lb__step_t *ev) {
  CHECK_EQ(ev->d->remap, 1);
  CHECK_EQ((int)ev->d->reason, (int)RTA_REASON_EXPLICIT);
  steps_closed += ev->closed;
  note(ctx, 's');
}
static void begun(rta_lb_context_t *ctx) { note(ctx, 'b'); }
static void mapped(rta_lb_context_t *ctx, const lb__mapped_t *ev) {
  CHECK(ev->m != NULL && ev->slot != NULL);
  CHECK_EQ(rta_mapping_ntasks(ev->m), 2 * np); /* the leaves */
  graphs += ev->graph != NULL;
  note(ctx, 'm');
}
static void judged(rta_lb_context_t *ctx, const lb__judged_t *ev) {
  CHECK_EQ(ev->judged, 1);
  CHECK_EQ(ev->d->remap, 1); /* explicit remaps are never dropped */
  note(ctx, 'j');
}
static void ended(rta_lb_context_t *ctx, const lb__remap_end_t *ev) {
  CHECK_EQ(ev->rc, 0);
  CHECK_EQ(ev->dropped, 0);
  CHECK_EQ(ev->cost->committed, 1);
  note(ctx, 'e');
}
static void destroyed(rta_lb_context_t *ctx) {
  note(ctx, 'X');
  seen_ctx = NULL;
}

static const lb__listener_t counter = {
    .name = "test", .wants_graph = wants, .defined = defined, .step = step,
    .remap_begun = begun, .mapped = mapped, .judged = judged, .remap_ended = ended,
    .destroyed = destroyed};

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  CHECK_EQ(lb__listen(&counter), 0);
  CHECK_EQ(lb__listen(&counter), BALLAST_EEXIST);
  CHECK_EQ(lb__listen(NULL), BALLAST_EINVAL);

  rta_task_t *root;
  const char *rn = "listen";
  rta_task_params_t p = RTA_TASK_PARAMS_INIT;
  CHECK_EQ(rta_task_define(NULL, 1, &rn, &p, &root), 0);
  for (int k = 0; k < 2; k++) {
    char name[16];
    snprintf(name, sizeof name, "t%d_%d", me, k);
    const char *nm = name;
    CHECK_EQ(rta_task_define(root, 1, &nm, &p, NULL), 0);
  }
  rta_lb_config_t cfg;
  rta_lb_config_init(&cfg);
  cfg.use_env = 0;
  cfg.policy.mode = RTA_POLICY_EXPLICIT;
  cfg.strategy = RTA_MAP_RANDOM;
  rta_lb_context_t *ctx;
  MPI_Comm comm;
  CHECK_EQ(rta_lb_create(MPI_COMM_WORLD, root, &cfg, &ctx, &comm), 0);
  CHECK(seen_ctx == ctx);
  for (int s = 0; s < STEPS; s++) {
    comm = rta_lb_comm(ctx);
    CHECK_EQ(rta_lb_perform(ctx, &comm), 0);
  }
  rta_lb_stats_t st;
  CHECK_EQ(rta_lb_stats(ctx, &st), 0);
  CHECK_EQ(st.remaps, STEPS);
  CHECK_EQ(rta_lb_destroy(ctx), 0);
  CHECK(lb__contexts() == NULL);
  seq[nseq] = 0;
  CHECK_STREQ(seq, "DsbmjesbmjesbmjeX");
  CHECK_EQ(graphs, 1 + STEPS); /* it asked for the graphs: it got each one */
  CHECK_EQ(steps_closed, STEPS); /* each call closed the cost model's step */
  CHECK_EQ(rta_task_remove(root), 0);
  TEST_PASS("lb_listen: a listener hears D s b m j e (x3) X with lb's values");
  MPI_Finalize();
  return 0;
}
