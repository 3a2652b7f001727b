/* Misuse of load balancing, on 2 ranks: each case returns the same code on
 * every rank, and the warning on every rank says what happened.
 *  - a context over a root with no leaf task: BALLAST_ENOTFOUND;
 *  - a task defined on both ranks with different est_work: BALLAST_EMISMATCH,
 *    the warning names the task, the ranks and the parameter;
 *  - rta_lb_perform while rank 1 has a task open: BALLAST_ESTATE on both
 *    ranks, the warning names rank 1 (and rank 1's names the task).
 * The warnings are read back from stderr, redirected to a file per rank. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ballast/rta.h>

#include "test_util.h"

static int me, saved_fd = -1;
static char logpath[256];

static void capture(void) {
  fflush(stderr);
  snprintf(logpath, sizeof logpath, "misuse_lb_rank%d.log", me);
  int fd = open(logpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  CHECK(fd >= 0);
  saved_fd = dup(2);
  dup2(fd, 2);
  close(fd);
}

/* Restores stderr; returns what was written meanwhile (static buffer). */
static const char *captured(void) {
  static char buf[8192];
  fflush(stderr);
  dup2(saved_fd, 2);
  close(saved_fd);
  FILE *f = fopen(logpath, "r");
  CHECK(f != NULL);
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  buf[n] = 0;
  fclose(f);
  unlink(logpath);
  return buf;
}

#define CHECK_HAS(text, sub)                                                  \
  do {                                                                        \
    if (!strstr((text), (sub))) {                                             \
      fprintf(stderr, "expected \"%s\" in the log:\n%s\n", (sub), (text));    \
      CHECK(strstr((text), (sub)) != NULL);                                   \
    }                                                                         \
  } while (0)

static rta_task_t *root_named(const char *name) {
  rta_task_t *r = NULL;
  CHECK_EQ(rta_task_define(NULL, 1, &name, NULL, &r), 0);
  return r;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int np;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  CHECK_EQ(np, 2);
  rta_lb_context_t *ctx = NULL;
  MPI_Comm app;

  /* 1. No leaf under the root. */
  rta_task_t *bare = root_named("bare");
  capture();
  int rc = rta_lb_create(MPI_COMM_WORLD, bare, NULL, &ctx, &app);
  const char *log = captured();
  CHECK_EQ(rc, BALLAST_ENOTFOUND);
  CHECK(ctx == NULL);
  if (me == 0)
    CHECK_HAS(log, "no leaf task under \"bare\"");

  /* 2. One inner task, different est_work on the two ranks. */
  rta_task_t *r2 = root_named("mm");
  rta_task_params_t p = RTA_TASK_PARAMS_INIT;
  p.est_work = me ? 2.5 : 1.0;
  const char *mid = "mid";
  rta_task_t *m = NULL;
  CHECK_EQ(rta_task_define(r2, 1, &mid, &p, &m), 0);
  const char *leaf = me ? "b" : "a";
  CHECK_EQ(rta_task_define(m, 1, &leaf, NULL, NULL), 0);
  capture();
  rc = rta_lb_create(MPI_COMM_WORLD, r2, NULL, &ctx, &app);
  log = captured();
  CHECK_EQ(rc, BALLAST_EMISMATCH);
  CHECK_HAS(log, "task \"mm/mid\" is defined with different parameters on ranks 0 and 1");
  CHECK_HAS(log, "est_work (1 against 2.5)");
  CHECK(strstr(ballast_strerror(BALLAST_EMISMATCH), "disagree") != NULL);

  /* 3. A task open on rank 1 when balancing is called. */
  rta_task_t *r3 = root_named("ok");
  char name[8];
  snprintf(name, sizeof name, "t%d", me);
  const char *nm = name;
  rta_task_t *t = NULL;
  CHECK_EQ(rta_task_define(r3, 1, &nm, NULL, &t), 0);
  rta_lb_config_t cfg;
  rta_lb_config_init(&cfg);
  cfg.policy.mode = RTA_POLICY_EXPLICIT;
  cfg.use_env = 0;
  CHECK_EQ(rta_lb_create(MPI_COMM_WORLD, r3, &cfg, &ctx, &app), 0);
  if (me == 1)
    CHECK_EQ(rta_task_begin(t), 0);
  capture();
  rc = rta_lb_perform(ctx, NULL);
  log = captured();
  CHECK_EQ(rc, BALLAST_ESTATE);
  /* Rank 1 knows at once; rank 0 learns it from the step's reduction. */
  CHECK_HAS(log, me == 0 ? "a task was still open on rank 1"
                         : "load balancing called while a task is open");
  if (me == 1) {
    CHECK_HAS(log, "task \"ok/t1\" still open");
    CHECK_EQ(rta_task_end(t), 0);
  }
  /* Closed again: balancing works. */
  CHECK_EQ(rta_lb_perform(ctx, NULL), 0);
  CHECK_EQ(rta_lb_destroy(ctx), 0);
  CHECK_EQ(rta_reset(), 0);
  if (me == 0)
    printf("misuse_lb: no leaf, parameter mismatch, open task: same code and a "
           "message on every rank\n");
  MPI_Finalize();
  return 0;
}
