/* Warm start with non-ASCII task keys, 2 ranks. A cold run of a tree whose
 * heavy tasks ("md/blöck_ü", a CJK key, an emoji key, ...) all start on rank
 * 0 balances and writes its profile; rank 0 rewrites it as
 * ballast-profile-merge writes a profile (Python's json.dump: every
 * non-ASCII character as \uXXXX, those beyond U+FFFF as a surrogate pair).
 * The same tree warm-started from that file has every task's cost seeded
 * and its first load-balancing call puts every task where it ended: the
 * escaped keys were read back as the tasks' UTF-8 keys. A lone surrogate
 * in the file is malformed (EPARSE). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ballast/mon.h>
#include <ballast/rta.h>

#include "cpu_spin.h"
#include "test_util.h"

#define NT 8
/* The first half heavy and on rank 0; keys as Python's json escapes them
 * are checked in the rewritten file. */
static const char *names[NT] = {"blöck_ü", "块_7", "🚀", "ĳ_ünï", "a4", "a5", "a6", "a7"};
static const char *escaped[] = {"\"md/bl\\u00f6ck_\\u00fc\"", "\"md/\\u5757_7\"",
                                "\"md/\\ud83d\\ude80\"", "\"md/\\u0133_\\u00fcn\\u00ef\""};
static int me, np;
static char profile[256], merged[256], lone[256];
static int final_owner[NT];

static double work_of(int id) { return id < NT / 2 ? 4.0 : 1.0; }

static int id_of(const char *name) {
  for (int i = 0; i < NT; i++)
    if (!strcmp(names[i], name))
      return i;
  return -1;
}

static rta_task_t *setup(void) {
  rta_task_t *root;
  const char *rootname = "md";
  rta_task_params_t rp = RTA_TASK_PARAMS_INIT;
  CHECK_EQ(rta_task_define(NULL, 1, &rootname, &rp, &root), 0);
  for (int id = 0; id < NT; id++) {
    if ((id < NT / 2 ? 0 : 1 + id % (np - 1)) != me)
      continue;
    rta_task_params_t p = RTA_TASK_PARAMS_INIT;
    p.est_work = 1.0;
    CHECK_EQ(rta_task_define(root, 1, &names[id], &p, NULL), 0);
  }
  return root;
}

static rta_lb_context_t *context(rta_task_t *root) {
  rta_lb_config_t cfg;
  rta_lb_config_init(&cfg);
  cfg.use_env = 0;
  cfg.policy.mode = RTA_POLICY_AUTO;
  cfg.policy.warmup = 2;
  cfg.policy.window = 4;
  cfg.policy.threshold = 1.3;
  rta_lb_context_t *ctx;
  MPI_Comm comm;
  CHECK_EQ(rta_lb_create(MPI_COMM_WORLD, root, &cfg, &ctx, &comm), 0);
  return ctx;
}

static rta_decision_t step(rta_lb_context_t *ctx) {
  for (int i = 0; i < rta_lb_nlocal(ctx); i++) {
    rta_task_t *t = rta_lb_local_task(ctx, i);
    int id = id_of(rta_task_name(t));
    CHECK_GE(id, 0);
    CHECK_EQ(rta_task_begin(t), 0);
    cpu_spin(0.001 * work_of(id));
    CHECK_EQ(rta_task_end(t), 0);
  }
  MPI_Comm comm = rta_lb_comm(ctx);
  CHECK_EQ(rta_lb_perform(ctx, &comm), 0);
  rta_decision_t d;
  CHECK_EQ(rta_lb_last_decision(ctx, &d), 0);
  return d;
}

static int owner_of(rta_lb_context_t *ctx, int id) {
  char key[64];
  snprintf(key, sizeof key, "md/%s", names[id]);
  int r = -1;
  CHECK_EQ(rta_lb_task_owner(ctx, key, &r), 0);
  return r;
}

/* Copies \a in to \a out with every non-ASCII character escaped as
 * Python's json.dump (ensure_ascii) escapes it; the number of escapes. */
static int escape_file(const char *in, const char *out) {
  FILE *f = fopen(in, "rb"), *g = fopen(out, "wb");
  CHECK(f != NULL && g != NULL);
  int c, n = 0;
  while ((c = fgetc(f)) != EOF) {
    if (c < 0x80) {
      fputc(c, g);
      continue;
    }
    int more = c >= 0xF0 ? 3 : c >= 0xE0 ? 2 : 1;
    long u = c & (0x3F >> more);
    for (int k = 0; k < more; k++)
      u = (u << 6) | (fgetc(f) & 0x3F);
    if (u >= 0x10000) {
      u -= 0x10000;
      fprintf(g, "\\u%04lx\\u%04lx", 0xD800 + (u >> 10), 0xDC00 + (u & 0x3FF));
    } else {
      fprintf(g, "\\u%04lx", u);
    }
    n++;
  }
  fclose(f);
  fclose(g);
  return n;
}

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  CHECK(f != NULL);
  fseek(f, 0, SEEK_END);
  long len = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = malloc((size_t)len + 1);
  CHECK(s != NULL);
  CHECK_EQ((long)fread(s, 1, (size_t)len, f), len);
  s[len] = 0;
  fclose(f);
  return s;
}

static void cold_run(void) {
  rta_task_t *root = setup();
  rta_lb_context_t *ctx = context(root);
  for (int s = 0; s < 14; s++)
    step(ctx);
  rta_lb_stats_t st;
  CHECK_EQ(rta_lb_stats(ctx, &st), 0);
  CHECK_GE(st.remaps, 1);
  int on0 = 0;
  for (int id = 0; id < NT; id++) {
    final_owner[id] = owner_of(ctx, id);
    on0 += final_owner[id] == 0 && id < NT / 2;
  }
  CHECK_LT(on0, NT / 2); /* some heavy non-ASCII task moved */
  CHECK_EQ(rta_lb_destroy(ctx), 0);
  CHECK_EQ(rta_task_remove(root), 0);
  CHECK_EQ(mon_profile_write(profile), 0);
  MPI_Barrier(MPI_COMM_WORLD);
  if (me == 0) {
    CHECK_GT(escape_file(profile, merged), 0);
    char *text = slurp(merged);
    for (size_t i = 0; i < sizeof escaped / sizeof *escaped; i++)
      CHECK(strstr(text, escaped[i]) != NULL);
    for (size_t i = 0; text[i]; i++)
      CHECK_LT((unsigned char)text[i], 0x80);
    /* The emoji's pair cut in half: a lone high surrogate. */
    char *p = strstr(text, "\\ud83d\\ude80");
    memcpy(p + 6, "\\u0041", 6);
    FILE *f = fopen(lone, "wb");
    CHECK(f != NULL);
    fputs(text, f);
    fclose(f);
    free(text);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  TEST_PASS("lbwarm_utf8: cold run balanced; its profile rewritten with \\u escapes");
}

static void warm_run(void) {
  rta_task_t *root = setup();
  rta_lb_context_t *ctx = context(root);
  CHECK_EQ(rta_lb_warm_start(ctx, merged), 0);
  for (int i = 0; i < rta_lb_nlocal(ctx); i++) {
    rta_task_cost_t c;
    rta_task_t *t = rta_lb_local_task(ctx, i);
    CHECK_EQ(rta_task_cost(t, &c), 0);
    CHECK_EQ(c.measured, 1); /* found by its key among the profile's regions */
    CHECK_NEAR(c.avg_time, 0.001 * work_of(id_of(rta_task_name(t))), 0.0012);
  }
  rta_decision_t d = step(ctx);
  CHECK_EQ(d.remap, 1);
  CHECK_EQ((int)d.reason, (int)RTA_REASON_WARM_START);
  for (int id = 0; id < NT; id++)
    CHECK_EQ(owner_of(ctx, id), final_owner[id]);
  CHECK_EQ(rta_lb_warm_start(ctx, lone), BALLAST_EPARSE);
  CHECK_EQ(rta_lb_destroy(ctx), 0);
  CHECK_EQ(rta_task_remove(root), 0);
  TEST_PASS("lbwarm_utf8: non-ASCII keys seeded and placed from the escaped profile");
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  int pid = (int)getpid();
  MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
  snprintf(profile, sizeof profile, "/tmp/ballast_lbwarm8_%d.json", pid);
  snprintf(merged, sizeof merged, "/tmp/ballast_lbwarm8_%d_merged.json", pid);
  snprintf(lone, sizeof lone, "/tmp/ballast_lbwarm8_%d_lone.json", pid);
  cold_run();
  warm_run();
  MPI_Barrier(MPI_COMM_WORLD);
  if (me == 0) {
    remove(profile);
    remove(merged);
    remove(lone);
  }
  MPI_Finalize();
  return 0;
}
