/* 100 load-balancing contexts at once, 2 ranks: every one is in the
 * report's totals and has its series in the profile (no fixed-size table of
 * contexts drops the 65th); after half of them are destroyed the report
 * still counts all 100 and their calls. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ballast/mon.h>
#include <ballast/rta.h>

#include "test_util.h"

#define NCTX 100
#define CALLS 3

static int me, np;
static char profile[256];

static rta_lb_context_t *define(int i, rta_task_t **root) {
  char rootname[32], name[16];
  snprintf(rootname, sizeof rootname, "many%03d", i);
  snprintf(name, sizeof name, "t%d", me);
  const char *rn = rootname, *nm = name;
  rta_task_params_t p = RTA_TASK_PARAMS_INIT;
  CHECK_EQ(rta_task_define(NULL, 1, &rn, &p, root), 0);
  CHECK_EQ(rta_task_define(*root, 1, &nm, &p, NULL), 0);
  rta_lb_config_t cfg;
  rta_lb_config_init(&cfg);
  cfg.use_env = 0;
  cfg.policy.mode = RTA_POLICY_EXPLICIT;
  rta_lb_context_t *ctx;
  MPI_Comm comm;
  CHECK_EQ(rta_lb_create(MPI_COMM_WORLD, *root, &cfg, &ctx, &comm), 0);
  return ctx;
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

/* The profile's load_balancing member counts \a ncalls calls of NCTX
 * contexts, and its series lists the root of every live context (every
 * \a step-th from the \a first) and says how many destroyed ones it let go
 * (it keeps the last 16 destroyed ones). */
static void check_profile(long long ncalls, int first, int step, int dropped) {
  CHECK_EQ(mon_profile_write(profile), 0);
  MPI_Barrier(MPI_COMM_WORLD);
  if (me == 0) {
    char *text = slurp(profile);
    char want[128];
    snprintf(want, sizeof want, "\"load_balancing\":{\"contexts\":%d,\"calls\":%lld,",
             NCTX, ncalls);
    CHECK(strstr(text, want) != NULL);
    for (int i = first; i < NCTX; i += step) {
      snprintf(want, sizeof want, "{\"root\":\"many%03d\",", i);
      CHECK(strstr(text, want) != NULL);
    }
    snprintf(want, sizeof want, "\"contexts_dropped\":%d}", dropped);
    CHECK(strstr(text, want) != NULL);
    free(text);
    remove(profile);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  int pid = (int)getpid();
  MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
  snprintf(profile, sizeof profile, "/tmp/ballast_lbmany_%d.json", pid);
  rta_lb_context_t *ctx[NCTX];
  rta_task_t *root[NCTX];
  for (int i = 0; i < NCTX; i++)
    ctx[i] = define(i, &root[i]);
  for (int c = 0; c < CALLS; c++)
    for (int i = 0; i < NCTX; i++) {
      MPI_Comm comm = rta_lb_comm(ctx[i]);
      CHECK_EQ(rta_lb_perform(ctx[i], &comm), 0);
    }
  for (int i = 0; i < NCTX; i++) {
    rta_lb_stats_t st;
    CHECK_EQ(rta_lb_stats(ctx[i], &st), 0);
    CHECK_EQ(st.calls, CALLS);
  }
  check_profile((long long)NCTX * CALLS, 0, 1, 0);
  TEST_PASS("lb_many: 100 live contexts, all in the report and the series");
  for (int i = 0; i < NCTX; i += 2) {
    CHECK_EQ(rta_lb_destroy(ctx[i]), 0);
    CHECK_EQ(rta_task_remove(root[i]), 0);
  }
  check_profile((long long)NCTX * CALLS, 1, 2, NCTX / 2 - 16);
  TEST_PASS("lb_many: half destroyed, the report still counts all 100");
  for (int i = 1; i < NCTX; i += 2) {
    CHECK_EQ(rta_lb_destroy(ctx[i]), 0);
    CHECK_EQ(rta_task_remove(root[i]), 0);
  }
  MPI_Finalize();
  return 0;
}
