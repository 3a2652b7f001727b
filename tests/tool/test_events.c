/* Two tools loaded together (BALLAST_TOOLS=tt_a.so:tt_b.so) both see every
 * event type, in load order (tt_a, then tt_b, with the same event struct);
 * mpi_exit's t_begin_ns is exactly its mpi_enter's t_ns (with tt_a loaded
 * before tt_b, the order in which a drift would show); comm_id and tag are the
 * call's, mpi_complete gives each completed message (tag, source, size from
 * the status) inside the call that completed it, api->comm_ranks the
 * members; a task's events enclose its region's and MPI_Pcontrol's events
 * lie inside the region it names;
 * the MPI events' counts and bytes equal ballast's own (pia) for the same
 * run; MPI, region, task, lb decision, remap and task move events carry the
 * exact expected values on a small explicit load-balancing run (2 ranks);
 * finalize comes once, after which nothing is raised. */
#include <stdlib.h>
#include <string.h>

#include <ballast.h>

#include "test_util.h"
#include "tt.h"

#define MAXACT 1024
#define MAXLOG 64

static int me;
static long counts[2][TT_NEV];
static int last_tool = 1, last_ev = -1;
static const void *last_ptr;
/* tt_a's view */
static long exits_app[MAXACT], enters_app[MAXACT];
static unsigned long long bytes_app;
static ballast_tool_mpi_exit_t last_exit[MAXACT];
static ballast_tool_mpi_enter_t last_enter;
static int open_depth, after_finalize;
static char region_log[MAXLOG][64];
static int region_depths[MAXLOG], region_ids[MAXLOG], nregion_log;
static char task_keys[MAXLOG][32];
static int ntask_keys, task_open;
static ballast_tool_lb_decision_t decision;
static char decision_ctx[32], decision_reason[32];
static ballast_tool_remap_begin_t rbegin;
static ballast_tool_remap_end_t rend;
static long remap_seq; /* 1 after begin, 2 after end: begin comes first */
static const ballast_tool_api_v1_t *api_tab;
static int in_call; /* between an mpi_enter and its mpi_exit */
static ballast_tool_mpi_complete_t completes[MAXLOG];
static int ncompletes;
static unsigned long long complete_bytes[MAXACT];
/* Region, task and MPI events in order while seq_on is set. */
static char seq_log[MAXLOG][48];
static int nseq, seq_on;
static void seq(char what, const char *name) {
  if (seq_on && nseq < MAXLOG)
    snprintf(seq_log[nseq++], 48, "%c%s", what, name);
}
static ballast_tool_task_move_t moves[MAXLOG];
static char move_keys[MAXLOG][32];
static int nmoves;

static void on_mpi(int ev, const void *e) {
  if (ev == TT_MPI_COMPLETE) {
    const ballast_tool_mpi_complete_t *c = e;
    CHECK(c->fn >= 0 && c->fn < MAXACT);
    /* Inside the call that completed it (MPI_Request_free: before it). */
    CHECK(in_call || strstr(c->name, "_init") != NULL);
    if (!c->lib) {
      complete_bytes[c->fn] += c->bytes;
      if (ncompletes < MAXLOG)
        completes[ncompletes++] = *c;
    }
    return;
  }
  if (ev == TT_MPI_ENTER) {
    const ballast_tool_mpi_enter_t *m = e;
    CHECK(m->fn >= 0 && m->fn < MAXACT);
    CHECK(!in_call);
    in_call = 1;
    seq('>', m->name);
    last_enter = *m;
    if (!m->lib)
      enters_app[m->fn]++;
    return;
  }
  const ballast_tool_mpi_exit_t *m = e;
  CHECK(m->fn >= 0 && m->fn < MAXACT);
  /* Calls do not nest on one thread: the exit belongs to the last enter. */
  CHECK_EQ(m->fn, last_enter.fn);
  CHECK_STREQ(m->name, last_enter.name);
  CHECK_EQ(m->comm_size, last_enter.comm_size);
  CHECK_EQ(m->lib, last_enter.lib);
  CHECK_EQ(m->t_begin_ns, last_enter.t_ns); /* the same reading of the clock */
  CHECK(m->t_ns >= m->t_begin_ns);
  CHECK_EQ(m->comm_id, last_enter.comm_id);
  /* A blocking receive's exit has the message's tag, else the call's. */
  CHECK(m->tag == last_enter.tag || !strcmp(m->name, "MPI_Recv") || !strcmp(m->name, "MPI_Mrecv"));
  CHECK(in_call);
  in_call = 0;
  seq('<', m->name);
  if (!m->lib) {
    exits_app[m->fn]++;
    bytes_app += m->bytes;
    last_exit[m->fn] = *m;
  }
}

static void on_other(int ev, const void *e) {
  switch (ev) {
  case TT_REGION_ENTER:
  case TT_REGION_EXIT: {
    const ballast_tool_region_t *r = e;
    if (ev == TT_REGION_ENTER)
      CHECK_EQ(r->depth, ++open_depth);
    else
      CHECK_EQ(r->depth, open_depth--);
    seq(ev == TT_REGION_ENTER ? '+' : '-', r->name);
    if (nregion_log < MAXLOG) {
      snprintf(region_log[nregion_log], 64, "%c%s", ev == TT_REGION_ENTER ? '+' : '-',
               r->name);
      region_depths[nregion_log] = r->depth;
      region_ids[nregion_log++] = r->id;
    }
    break;
  }
  case TT_TASK_BEGIN:
  case TT_TASK_END: {
    const ballast_tool_task_t *t = e;
    seq(ev == TT_TASK_BEGIN ? 'B' : 'E', t->key);
    if (ev == TT_TASK_BEGIN) {
      CHECK_EQ(task_open, 0);
      task_open = 1;
      if (ntask_keys < MAXLOG)
        snprintf(task_keys[ntask_keys++], 32, "%s", t->key);
    } else {
      CHECK_EQ(task_open, 1);
      CHECK_STREQ(t->key, task_keys[ntask_keys - 1]);
      task_open = 0;
    }
    break;
  }
  case TT_LB_DECISION:
    decision = *(const ballast_tool_lb_decision_t *)e;
    snprintf(decision_ctx, sizeof decision_ctx, "%s", decision.context);
    snprintf(decision_reason, sizeof decision_reason, "%s", decision.reason);
    break;
  case TT_REMAP_BEGIN:
    CHECK_EQ(remap_seq, 0);
    remap_seq = 1;
    rbegin = *(const ballast_tool_remap_begin_t *)e;
    CHECK_STREQ(rbegin.context, "tl");
    break;
  case TT_REMAP_END:
    CHECK_EQ(remap_seq, 1);
    remap_seq = 2;
    rend = *(const ballast_tool_remap_end_t *)e;
    CHECK_STREQ(rend.strategy, rbegin.strategy);
    CHECK_STREQ(rend.context, rbegin.context);
    CHECK_EQ(rend.step, rbegin.step); /* the end of the remap that began */
    break;
  case TT_TASK_MOVE:
    CHECK_EQ(remap_seq, 1); /* between begin and end */
    CHECK(nmoves < MAXLOG);
    moves[nmoves] = *(const ballast_tool_task_move_t *)e;
    snprintf(move_keys[nmoves], 32, "%s", moves[nmoves].key);
    nmoves++;
    break;
  case TT_FINALIZE:
    CHECK_EQ(open_depth, 0); /* regions left open were closed before it */
    after_finalize = 1;
    break;
  }
}

void tt_note(int tool, int ev, const void *e);
void tt_note(int tool, int ev, const void *e) {
  CHECK(tool == 0 || tool == 1);
  if (ev == TT_API) { /* from the tools' init, inside MPI_Init */
    api_tab = e;
    return;
  }
  CHECK(ev >= 0 && ev < TT_NEV);
  /* Load order: tt_a then tt_b, for every event, with the same struct. */
  if (tool == 1) {
    CHECK_EQ(last_tool, 0);
    CHECK_EQ(last_ev, ev);
    CHECK(last_ptr == e);
  } else {
    CHECK_EQ(last_tool, 1);
    CHECK(!after_finalize); /* nothing after finalize */
  }
  last_tool = tool;
  last_ev = ev;
  last_ptr = e;
  counts[tool][ev]++;
  if (tool == 1)
    return;
  if (ev == TT_MPI_ENTER || ev == TT_MPI_EXIT || ev == TT_MPI_COMPLETE)
    on_mpi(ev, e);
  else
    on_other(ev, e);
}

static int act(const char *name) {
  int a = pia_activity_find(name);
  CHECK(a >= 0 && a < MAXACT);
  return a;
}

static void test_mpi_values(void) {
  int buf[100] = {0};
  double d[50] = {0};
  MPI_Request rq;
  if (me == 0) {
    MPI_Send(buf, 100, MPI_INT, 1, 7, MPI_COMM_WORLD);
    const ballast_tool_mpi_exit_t *x = &last_exit[act("MPI_Send")];
    CHECK_EQ(x->bytes, 400);
    CHECK_EQ(x->partner, 1);
    CHECK_EQ(x->comm_size, 2);
    CHECK_EQ(x->ret, MPI_SUCCESS);
    CHECK_STREQ(x->name, "MPI_Send");
    CHECK_EQ(x->tag, 7);
    CHECK_EQ(x->comm_id, 0); /* MPI_COMM_WORLD */
    MPI_Isend(d, 50, MPI_DOUBLE, 1, 8, MPI_COMM_WORLD, &rq);
    x = &last_exit[act("MPI_Isend")];
    CHECK_EQ(x->bytes, 0);
    CHECK_EQ(x->posted_bytes, 400);
    CHECK_EQ(x->partner, 1);
    CHECK_EQ(x->tag, 8);
  } else {
    MPI_Recv(buf, 100, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    const ballast_tool_mpi_exit_t *x = &last_exit[act("MPI_Recv")];
    CHECK_EQ(x->bytes, 400);
    CHECK_EQ(x->partner, 0);
    CHECK_EQ(x->tag, 7); /* the message's, not MPI_ANY_TAG */
    CHECK_EQ(last_enter.tag, MPI_ANY_TAG);
    MPI_Irecv(d, 50, MPI_DOUBLE, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &rq);
    x = &last_exit[act("MPI_Irecv")];
    CHECK_EQ(x->bytes, 0);
    CHECK_EQ(x->posted_bytes, 0);
    CHECK_EQ(x->tag, MPI_ANY_TAG); /* as posted */
  }
  int c0 = ncompletes;
  MPI_Wait(&rq, MPI_STATUS_IGNORE);
  const ballast_tool_mpi_exit_t *w = &last_exit[act("MPI_Wait")];
  CHECK_EQ(w->bytes, 400); /* the completed send or receive, as ballast credits it */
  CHECK_EQ(w->partner, 1 - me);
  CHECK_EQ(w->comm_size, 0);
  CHECK_EQ(w->comm_id, -1); /* a wait names no communicator */
  /* The one message completed, with the tag and source of its status, at
   * the wait's return; credited to the function that posted it. */
  CHECK_EQ(ncompletes, c0 + 1);
  const ballast_tool_mpi_complete_t *c = &completes[c0];
  CHECK_EQ(c->recv, me == 1);
  CHECK_EQ(c->fn, act(me == 1 ? "MPI_Irecv" : "MPI_Isend"));
  CHECK_EQ(c->tag, 8);
  CHECK_EQ(c->partner, 1 - me);
  CHECK_EQ(c->bytes, 400);
  CHECK_EQ(c->comm_id, 0);
  CHECK_EQ(c->t_ns, w->t_ns);
  int s = 1, r = 0;
  MPI_Sendrecv(&s, 1, MPI_INT, 1 - me, 9 + me, buf, 3, MPI_INT, 1 - me, 10 - me,
               MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  CHECK_EQ(last_exit[act("MPI_Sendrecv")].bytes, 8); /* both halves */
  CHECK_EQ(last_exit[act("MPI_Sendrecv")].tag, 9 + me); /* its send tag */
  CHECK_EQ(ncompletes, c0 + 2); /* the receive half */
  CHECK_EQ(completes[c0 + 1].recv, 1);
  CHECK_EQ(completes[c0 + 1].tag, 10 - me);
  CHECK_EQ(completes[c0 + 1].bytes, 4);
  CHECK_EQ(completes[c0 + 1].partner, 1 - me);
  CHECK_EQ(completes[c0 + 1].fn, act("MPI_Sendrecv"));
  MPI_Allreduce(&s, &r, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  CHECK_EQ(last_exit[act("MPI_Allreduce")].comm_size, 2);
  CHECK_EQ(last_exit[act("MPI_Allreduce")].partner, -1);
  CHECK_EQ(last_exit[act("MPI_Allreduce")].tag, -1);
  MPI_Comm half;
  MPI_Comm_split(MPI_COMM_WORLD, me, 0, &half);
  MPI_Barrier(half);
  const ballast_tool_mpi_exit_t *b = &last_exit[act("MPI_Barrier")];
  CHECK_EQ(b->comm_size, 1);
  int id = b->comm_id, ranks[4] = {-1, -1, -1, -1};
  CHECK(id > 0);
  CHECK(api_tab != NULL && api_tab->size >= BALLAST_TOOL_API_V1_1_SIZE);
  CHECK_EQ(api_tab->comm_ranks(id, ranks, 4), 1);
  CHECK_EQ(ranks[0], me);
  CHECK_EQ(api_tab->comm_ranks(0, ranks, 4), 2);
  CHECK(ranks[0] == 0 && ranks[1] == 1);
  CHECK_EQ(api_tab->comm_ranks(0, NULL, 0), 2);
  CHECK_EQ(api_tab->comm_ranks(0, NULL, 1), BALLAST_EINVAL);
  CHECK_EQ(api_tab->comm_ranks(1 << 30, ranks, 4), BALLAST_ENOTFOUND);
  MPI_Comm_free(&half);
  CHECK_EQ(api_tab->comm_ranks(id, ranks, 4), BALLAST_ENOTFOUND); /* freed */
  MPI_Comm again;
  MPI_Comm_split(MPI_COMM_WORLD, me, 0, &again);
  MPI_Barrier(again);
  CHECK(last_exit[act("MPI_Barrier")].comm_id > id); /* ids are never reused */
  MPI_Comm_free(&again);
  TEST_PASS("tool: MPI events carry bytes, partner (world rank), sizes, comm_id and tag; "
            "mpi_complete and comm_ranks");
}

static void test_regions(void) {
  int n0 = nregion_log;
  CHECK_EQ(mon_region_begin("r_api"), 0);
  CHECK_EQ(mon_region_begin("r_ipm"), 0);
  seq_on = 1;
  nseq = 0;
  MPI_Pcontrol(1, "r_pc");
  MPI_Pcontrol(-1, "r_pc");
  seq_on = 0;
  /* The region changes before each call's events: the first call lies
   * inside the region, the second after it. */
  static const char *pc[] = {"+r_pc", ">MPI_Pcontrol", "<MPI_Pcontrol", "-r_pc",
                             ">MPI_Pcontrol", "<MPI_Pcontrol"};
  CHECK_EQ(nseq, 6);
  for (int i = 0; i < 6; i++)
    CHECK_STREQ(seq_log[i], pc[i]);
  CHECK_EQ(mon_region_end("r_ipm"), 0);
  CHECK_EQ(mon_region_end("r_api"), 0);
  static const char *want[] = {"+r_api", "+r_ipm", "+r_pc", "-r_pc", "-r_ipm", "-r_api"};
  static const int depth[] = {1, 2, 3, 3, 2, 1};
  CHECK_EQ(nregion_log - n0, 6);
  for (int i = 0; i < 6; i++) {
    CHECK_STREQ(region_log[n0 + i], want[i]);
    CHECK_EQ(region_depths[n0 + i], depth[i]);
    CHECK_EQ(region_ids[n0 + i], pia_region_find(want[i] + 1));
  }
  TEST_PASS("tool: the three region APIs raise region events with names, ids, depths");
}

#define NT 4
#define NV 8

/* The tasks' state is their registered array alone; an arriving task needs
 * an unpack callback all the same. */
static int no_size(rta_task_t *t, size_t *len, void *u) {
  (void)t, (void)u;
  *len = 0;
  return 0;
}
static int no_pack(rta_task_t *t, void *buf, size_t len, void *u) {
  (void)t, (void)buf, (void)len, (void)u;
  return 0;
}
static double *arrays[NT]; /* each task's array, registered through its slot */
static int no_unpack(rta_task_t *t, const void *buf, size_t len, void *u) {
  (void)buf, (void)len, (void)u;
  int64_t z = 0; /* rta adopts the array that arrived */
  return rta_task_array_register(t, (void **)&arrays[atoi(rta_task_name(t) + 1)],
                            rta_type_elem(RTA_DOUBLE), 1, &z);
}

static void test_lb(void) {
  const char *rn = "tl";
  rta_task_t *root;
  rta_task_params_t rp = RTA_TASK_PARAMS_INIT;
  rp.serial.size = no_size;
  rp.serial.pack = no_pack;
  rp.serial.unpack = no_unpack;
  CHECK_EQ(rta_task_define(NULL, 1, &rn, &rp, &root), 0);
  if (me == 0) /* every task on rank 0: the remap moves some to rank 1 */
    for (int i = 0; i < NT; i++) {
      char name[8];
      snprintf(name, sizeof name, "t%d", i);
      const char *nm = name;
      rta_task_params_t p = RTA_TASK_PARAMS_INIT;
      p.est_work = 1.0;
      rta_task_t *t;
      CHECK_EQ(rta_task_define(root, 1, &nm, &p, &t), 0);
      int64_t dims = NV;
      arrays[i] = calloc(NV, sizeof(double)); /* rta owns it once registered */
      CHECK_EQ(rta_task_array_register(t, (void **)&arrays[i], rta_type_elem(RTA_DOUBLE), 1, &dims),
               0);
    }
  rta_lb_config_t cfg;
  rta_lb_config_init(&cfg);
  cfg.use_env = 0;
  cfg.policy.mode = RTA_POLICY_EXPLICIT;
  rta_lb_context_t *ctx;
  MPI_Comm comm;
  CHECK_EQ(rta_lb_create(MPI_COMM_WORLD, root, &cfg, &ctx, &comm), 0);
  int k0 = ntask_keys;
  for (int i = 0; i < rta_lb_nlocal(ctx); i++) {
    rta_task_t *t = rta_lb_local_task(ctx, i);
    seq_on = 1;
    nseq = 0;
    CHECK_EQ(rta_task_begin(t), 0);
    CHECK_EQ(rta_task_end(t), 0);
    seq_on = 0;
    CHECK_STREQ(task_keys[k0 + i], rta_task_key(t));
    /* The task's events enclose its region's. */
    CHECK_EQ(nseq, 4);
    CHECK(seq_log[0][0] == 'B' && seq_log[1][0] == '+' && seq_log[2][0] == '-' &&
          seq_log[3][0] == 'E');
    for (int k = 0; k < 4; k++)
      CHECK_STREQ(seq_log[k] + 1, rta_task_key(t));
  }
  CHECK_EQ(ntask_keys - k0, me == 0 ? NT : 0);
  long dec0 = counts[0][TT_LB_DECISION];
  CHECK_EQ(rta_lb_perform(ctx, &comm), 0);
  rta_decision_t d;
  rta_lb_stats_t st;
  CHECK_EQ(rta_lb_last_decision(ctx, &d), 0);
  CHECK_EQ(rta_lb_stats(ctx, &st), 0);
  CHECK_EQ(counts[0][TT_LB_DECISION], dec0 + 1);
  CHECK_STREQ(decision_ctx, "tl");
  CHECK_STREQ(decision_reason, "explicit");
  CHECK_EQ(decision.verdict, BALLAST_TOOL_REMAP);
  CHECK_EQ(decision.step, (long)d.step);
  CHECK(decision.imbalance == d.imbalance);
  CHECK(decision.predicted_gain_s == d.predicted_gain);
  CHECK_EQ(decision.slowest, d.slowest);
  CHECK_EQ(decision.persistent, d.persistent);
  CHECK_EQ(decision.noise, d.noise);
  CHECK_EQ(remap_seq, 2);
  CHECK_EQ(rbegin.step, (long)d.step);
  CHECK_STREQ(rbegin.strategy, rta_strategy_name(cfg.strategy));
  CHECK_EQ(rend.committed, 1);
  CHECK_EQ(rend.tasks_moved, st.tasks_moved);
  CHECK(rend.bytes_moved == (uint64_t)st.bytes_moved);
  CHECK(rend.mapping_s > 0 && rend.mapping_s <= st.seconds_mapping);
  CHECK_EQ(rend.tasks_moved, NT / 2); /* four equal tasks over two ranks */
  /* Each move is raised on both of its ranks, with world ranks and bytes. */
  long out = 0, in = 0;
  unsigned long long out_bytes = 0;
  for (int i = 0; i < nmoves; i++) {
    int owner = -1;
    CHECK_EQ(rta_lb_task_owner(ctx, move_keys[i], &owner), 0);
    CHECK_EQ(moves[i].to, owner);
    CHECK_EQ(moves[i].from, 0);
    CHECK_EQ(moves[i].to, 1);
    CHECK(moves[i].bytes >= NV * sizeof(double));
    out += moves[i].from == me;
    in += moves[i].to == me;
    out_bytes += moves[i].from == me ? moves[i].bytes : 0;
  }
  CHECK_EQ(me == 0 ? out : in, NT / 2);
  CHECK_EQ(me == 0 ? in : out, 0);
  unsigned long long all_bytes = 0;
  MPI_Allreduce(&out_bytes, &all_bytes, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  CHECK_EQ(all_bytes, rend.bytes_moved);
  CHECK_EQ(rta_lb_destroy(ctx), 0);
  CHECK_EQ(rta_task_remove(root), 0);
  TEST_PASS("tool: lb decision, remap begin/end and task moves with exact values");
}

/* The tools' MPI counts and bytes equal pia's for every function (MPI_Init
 * and MPI_Finalize raise none: tools load after the one, finalize replaces
 * the other). No MPI call between here and the reads. */
static void test_counts(void) {
  int n = pia_activity_count();
  CHECK(n > 0 && n < MAXACT);
  long checked = 0;
  for (int a = 0; a < n; a++) {
    const char *name = pia_activity_name(a);
    if (strcmp(name, "MPI_Init") == 0 || strcmp(name, "MPI_Init_thread") == 0 ||
        strcmp(name, "MPI_Finalize") == 0 || strcmp(name, "MPI_P2P") == 0 ||
        strcmp(name, "MPI_COLL") == 0 || strcmp(name, "MPI_RMA") == 0 ||
        strcmp(name, "MPI_IO") == 0 || strcmp(name, "MPI_ALL") == 0)
      continue;
    pia_actdata_t ad;
    pia_actdata_init(&ad);
    CHECK_EQ(pia_activity_data(a, &ad), 0);
    if (ad.ncalls != exits_app[a] || enters_app[a] != exits_app[a])
      fprintf(stderr, "%s: pia %lld, enters %ld, exits %ld\n", name, ad.ncalls,
              enters_app[a], exits_app[a]);
    CHECK_EQ(ad.ncalls, exits_app[a]);
    CHECK_EQ(enters_app[a], exits_app[a]);
    checked += exits_app[a];
  }
  pia_actdata_t all;
  pia_actdata_init(&all);
  CHECK_EQ(pia_activity_data(act("MPI_ALL"), &all), 0);
  CHECK_EQ((unsigned long long)all.nbytes, bytes_app);
  CHECK(checked > 10);
  /* pia credits a nonblocking receive's bytes to MPI_Irecv, mpi_exit to the
   * wait: mpi_complete's fn gives pia's figure (tool.h, pia.h). */
  pia_actdata_t ir;
  pia_actdata_init(&ir);
  CHECK_EQ(pia_activity_data(act("MPI_Irecv"), &ir), 0);
  CHECK_EQ((unsigned long long)ir.nbytes, complete_bytes[act("MPI_Irecv")]);
  CHECK_EQ(last_exit[act("MPI_Irecv")].bytes, 0);
  for (int ev = 0; ev < TT_NEV; ev++) {
    if (ev == TT_FINALIZE)
      continue;
    CHECK(counts[0][ev] > 0 || (ev == TT_TASK_BEGIN || ev == TT_TASK_END) ||
          (ev == TT_TASK_MOVE));
    CHECK_EQ(counts[0][ev], counts[1][ev]);
  }
  TEST_PASS("tool: both tools saw every event; MPI counts and bytes equal pia's");
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  int np;
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  CHECK_EQ(np, 2);
  test_mpi_values();
  test_regions();
  test_lb();
  test_counts();
  mon_region_begin("left_open"); /* closed at MPI_Finalize, before finalize */
  /* A task left open inside it: MPI_Finalize leaves the task's region, ends
   * the task, then leaves "left_open": nested, innermost first. */
  rta_task_t *root = NULL, *open_task = NULL;
  rta_task_params_t p = RTA_TASK_PARAMS_INIT;
  const char *rn = "fin", *tn = "t";
  CHECK_EQ(rta_task_define(NULL, 1, &rn, &p, &root), 0);
  CHECK_EQ(rta_task_define(root, 1, &tn, &p, &open_task), 0);
  CHECK_EQ(rta_task_begin(open_task), 0);
  long rx = counts[0][TT_REGION_EXIT], te = counts[0][TT_TASK_END];
  nseq = 0;
  seq_on = 1;
  MPI_Finalize();
  seq_on = 0;
  CHECK_EQ(counts[0][TT_FINALIZE], 1);
  CHECK_EQ(counts[1][TT_FINALIZE], 1);
  CHECK_EQ(counts[0][TT_REGION_EXIT], rx + 2);
  CHECK_EQ(counts[0][TT_TASK_END], te + 1);
  int nrt = 0; /* the region and task events among them (ballast's own MPI calls aside) */
  for (int k = 0; k < nseq; k++)
    if (strchr("+-BE", seq_log[k][0]))
      memmove(seq_log[nrt++], seq_log[k], sizeof seq_log[k]);
  CHECK_EQ(nrt, 3);
  CHECK_STREQ(seq_log[0], "-fin/t");
  CHECK_STREQ(seq_log[1], "Efin/t");
  CHECK_STREQ(seq_log[2], "-left_open");
  /* rank 1 got the tasks moved, rank 0 began them: every type on some rank */
  CHECK(counts[0][TT_TASK_MOVE] > 0);
  if (me == 0)
    CHECK(counts[0][TT_TASK_BEGIN] == NT + 1 && counts[0][TT_TASK_END] == NT + 1);
  printf("PASS tool_events rank %d\n", me);
  return 0;
}
