/* The task tree: construction (parallel siblings vs sequences), lookup,
 * begin/end nesting, removal, callback inheritance, and every bad-input path
 * with its exact code. */
#include <ballast/pia.h>
#include <ballast/rta.h>

#include "test_util.h"

static int fake_size(rta_task_t *t, size_t *len, void *user) {
  (void)t;
  (void)user;
  *len = 0;
  return 0;
}

static void test_construction(void) {
  rta_task_t *root, *s0[3], *s1[2], *blocks[20];
  const char *rn[] = {"md"};
  CHECK_EQ(rta_task_define(NULL, 1, rn, NULL, &root), 0);
  CHECK_STREQ(rta_task_key(root), "md");
  CHECK(rta_task_parent(root) == NULL);
  CHECK_EQ(rta_task_stage(root), BALLAST_ENOTFOUND); /* a root has no stage */
  CHECK_EQ(rta_task_stage(NULL), BALLAST_EINVAL);
  CHECK_EQ(rta_task_nchildren(NULL), BALLAST_EINVAL);
  CHECK_EQ(rta_task_nstages(NULL), BALLAST_EINVAL);
  CHECK_EQ(rta_task_narrays(NULL), BALLAST_EINVAL);

  /* One call: parallel siblings of stage 0; a second call: stage 1. */
  const char *n0[] = {"forces", "halo", "io"};
  const char *n1[] = {"integrate", "reduce"};
  CHECK_EQ(rta_task_define(root, 3, n0, NULL, s0), 0);
  CHECK_EQ(rta_task_define(root, 2, n1, NULL, s1), 0);
  CHECK_EQ(rta_task_nstages(root), 2);
  CHECK_EQ(rta_task_nchildren(root), 5);
  for (int i = 0; i < 3; i++) {
    CHECK_EQ(rta_task_stage(s0[i]), 0);
    CHECK(rta_task_parent(s0[i]) == root);
    CHECK(rta_task_child(root, i) == s0[i]);
  }
  for (int i = 0; i < 2; i++) {
    CHECK_EQ(rta_task_stage(s1[i]), 1);
    CHECK(rta_task_child(root, 3 + i) == s1[i]);
  }
  CHECK(rta_task_child(root, 5) == NULL);
  CHECK(rta_task_child(root, -1) == NULL);
  CHECK_STREQ(rta_task_key(s0[0]), "md/forces");
  CHECK_STREQ(rta_task_name(s0[0]), "forces");
  CHECK_STREQ(rta_task_key(s1[1]), "md/reduce");

  /* Twenty blocks under md/forces, with parameters and partners. */
  char names[20][16], pkeys[20][2][32];
  const char *np[20];
  rta_comm_est_t comm[20][2];
  rta_task_params_t params[20];
  for (int i = 0; i < 20; i++) {
    snprintf(names[i], sizeof names[i], "block_%d", i);
    np[i] = names[i];
    rta_task_params_t p = RTA_TASK_PARAMS_INIT;
    p.est_work = i;
    p.state_size = 1000 + (size_t)i;
    /* Declared out of key order on purpose: rta sorts its copy. */
    snprintf(pkeys[i][0], 32, "md/forces/block_%d", (i + 1) % 20);
    snprintf(pkeys[i][1], 32, "md/forces/block_%d", (i + 19) % 20);
    comm[i][0] = (rta_comm_est_t){pkeys[i][0], 10.0 * i};
    comm[i][1] = (rta_comm_est_t){pkeys[i][1], 5.0};
    p.ncomm = 2;
    p.comm = comm[i];
    params[i] = p;
  }
  CHECK_EQ(rta_task_define(s0[0], 20, np, params, blocks), 0);
  CHECK_EQ(rta_task_nstages(s0[0]), 1);

  rta_task_t *t = NULL;
  CHECK_EQ(rta_task_find("md/forces/block_17", &t), 0);
  CHECK(t == blocks[17]);
  const rta_task_params_t *pp = rta_task_params(t);
  CHECK_DGE(pp->est_work, 17);
  CHECK_DLE(pp->est_work, 17);
  CHECK_EQ(pp->state_size, 1017);
  CHECK_EQ(pp->ncomm, 2);
  CHECK(pp->comm != comm[17]); /* rta's own copy */
  CHECK_STREQ(pp->comm[0].key, "md/forces/block_16");
  CHECK_STREQ(pp->comm[1].key, "md/forces/block_18");
  CHECK_EQ(pp->nprocs, 1);
  /* The application's key strings may go away: rta copied them. */
  memset(pkeys, 0, sizeof pkeys);
  CHECK_STREQ(rta_task_params(blocks[3])->comm[0].key, "md/forces/block_2");

  CHECK_EQ(rta_task_find("md", &t), 0);
  CHECK(t == root);
  CHECK_EQ(rta_task_find("md/nothing", &t), BALLAST_ENOTFOUND);
  CHECK(t == NULL);
  CHECK_EQ(rta_task_find("md/forces/block_20", &t), BALLAST_ENOTFOUND);

  int x = 42;
  rta_task_set_data(blocks[3], &x);
  CHECK(rta_task_data(blocks[3]) == &x);
  CHECK(rta_task_data(blocks[4]) == NULL);
  TEST_PASS("task_tree: construction and lookup");
}

static void test_bad_define(void) {
  rta_task_t *root, *t;
  CHECK_EQ(rta_task_find("md", &root), 0);
  char longname[300];
  memset(longname, 'x', sizeof longname - 1);
  longname[sizeof longname - 1] = 0;
  const char *ok[] = {"fine"};
  const char *nul[] = {NULL};
  const char *empty[] = {""};
  const char *slash[] = {"a/b"};
  const char *dup[] = {"forces"};
  const char *twice[] = {"x", "x"};
  const char *toolong[] = {longname};
  const char *half[] = {"ok1", ""};

  CHECK_EQ(rta_task_define(root, 0, ok, NULL, NULL), BALLAST_EINVAL);
  CHECK_EQ(rta_task_define(root, -3, ok, NULL, NULL), BALLAST_EINVAL);
  CHECK_EQ(rta_task_define(root, 1, NULL, NULL, NULL), BALLAST_EINVAL);
  CHECK_EQ(rta_task_define(root, 1, nul, NULL, NULL), BALLAST_EINVAL);
  CHECK_EQ(rta_task_define(root, 1, empty, NULL, NULL), BALLAST_EINVAL);
  CHECK_EQ(rta_task_define(root, 1, slash, NULL, NULL), BALLAST_EINVAL);
  CHECK_EQ(rta_task_define(root, 1, dup, NULL, NULL), BALLAST_EEXIST);
  CHECK_EQ(rta_task_define(root, 2, twice, NULL, NULL), BALLAST_EEXIST);
  CHECK_EQ(rta_task_find("md/x", &t), BALLAST_ENOTFOUND);
  CHECK_EQ(rta_task_define(root, 1, toolong, NULL, NULL), BALLAST_ENAMETOOLONG);
  /* A name that fits alone but not under its parent's key. */
  longname[RTA_KEY_MAX - 2] = 0; /* "md/" + 253 chars = 256 > 255 */
  CHECK_EQ(rta_task_define(root, 1, toolong, NULL, NULL), BALLAST_ENAMETOOLONG);
  /* A root key of exactly RTA_KEY_MAX bytes is fine, one more is not. */
  memset(longname, 'x', RTA_KEY_MAX + 1);
  longname[RTA_KEY_MAX + 1] = 0;
  CHECK_EQ(rta_task_define(NULL, 1, toolong, NULL, &t), BALLAST_ENAMETOOLONG);
  longname[RTA_KEY_MAX] = 0;
  CHECK_EQ(rta_task_define(NULL, 1, toolong, NULL, &t), 0);
  CHECK_EQ(strlen(rta_task_key(t)), RTA_KEY_MAX);
  CHECK_EQ(rta_task_find(longname, &t), 0);
  CHECK_EQ(rta_task_remove(t), 0);
  /* All or nothing. */
  CHECK_EQ(rta_task_define(root, 2, half, NULL, NULL), BALLAST_EINVAL);
  CHECK_EQ(rta_task_find("md/ok1", &t), BALLAST_ENOTFOUND);
  const char *rdup[] = {"md"};
  CHECK_EQ(rta_task_define(NULL, 1, rdup, NULL, NULL), BALLAST_EEXIST);

  /* Bad parameters, one field at a time. */
  rta_task_params_t p = RTA_TASK_PARAMS_INIT;
  p.nprocs = 0;
  CHECK_EQ(rta_task_define(root, 1, ok, &p, NULL), BALLAST_EINVAL);
  p = (rta_task_params_t)RTA_TASK_PARAMS_INIT;
  p.est_work = -1;
  CHECK_EQ(rta_task_define(root, 1, ok, &p, NULL), BALLAST_EINVAL);
  p.est_work = NAN;
  CHECK_EQ(rta_task_define(root, 1, ok, &p, NULL), BALLAST_EINVAL);
  p = (rta_task_params_t)RTA_TASK_PARAMS_INIT;
  p.ncomm = 1;
  CHECK_EQ(rta_task_define(root, 1, ok, &p, NULL), BALLAST_EINVAL);
  p.ncomm = -1;
  CHECK_EQ(rta_task_define(root, 1, ok, &p, NULL), BALLAST_EINVAL);
  rta_comm_est_t c[2] = {{NULL, 1}, {"md/halo", 1}};
  p.ncomm = 1;
  p.comm = c;
  CHECK_EQ(rta_task_define(root, 1, ok, &p, NULL), BALLAST_EINVAL);
  c[0].key = "";
  CHECK_EQ(rta_task_define(root, 1, ok, &p, NULL), BALLAST_EINVAL);
  memset(longname, 'y', 299);
  longname[299] = 0;
  c[0].key = longname;
  CHECK_EQ(rta_task_define(root, 1, ok, &p, NULL), BALLAST_ENAMETOOLONG);
  c[0].key = "md/fine"; /* itself */
  CHECK_EQ(rta_task_define(root, 1, ok, &p, NULL), BALLAST_EINVAL);
  c[0].key = "md/halo";
  c[0].bytes = -5;
  CHECK_EQ(rta_task_define(root, 1, ok, &p, NULL), BALLAST_EINVAL);
  c[0].bytes = INFINITY;
  CHECK_EQ(rta_task_define(root, 1, ok, &p, NULL), BALLAST_EINVAL);
  c[0].bytes = 8;
  p.ncomm = 2; /* md/halo twice */
  CHECK_EQ(rta_task_define(root, 1, ok, &p, NULL), BALLAST_EINVAL);
  CHECK_EQ(rta_task_find("md/fine", &t), BALLAST_ENOTFOUND);
  CHECK_EQ(rta_task_nchildren(root), 5);
  CHECK_EQ(rta_task_nstages(root), 2);

  /* Bad lookups. */
  CHECK_EQ(rta_task_find(NULL, &t), BALLAST_EINVAL);
  CHECK_EQ(rta_task_find("", &t), BALLAST_EINVAL);
  CHECK_EQ(rta_task_find("md", NULL), BALLAST_EINVAL);
  memset(longname, 'z', 299);
  longname[299] = 0;
  CHECK_EQ(rta_task_find(longname, &t), BALLAST_ENAMETOOLONG);
  TEST_PASS("task_tree: bad definitions and lookups");
}

static void test_begin_end(void) {
  rta_task_t *forces;
  CHECK_EQ(rta_task_find("md/forces", &forces), 0);
  CHECK(rta_task_current() == NULL);
  rta_task_t *tmd, *halo;
  CHECK_EQ(rta_task_find("md", &tmd), 0);
  CHECK_EQ(rta_task_find("md/halo", &halo), 0);
  CHECK_EQ(rta_task_begin(tmd), 0);
  CHECK_EQ(rta_task_begin(forces), 0);
  CHECK(rta_task_current() == forces);
  CHECK_EQ(rta_task_begin(forces), BALLAST_ESTATE); /* already open */
  CHECK_EQ(rta_task_end(tmd), BALLAST_EMISMATCH);    /* not innermost */
  CHECK(rta_task_current() == forces);              /* unchanged */
  CHECK_EQ(rta_step(), BALLAST_ESTATE);             /* tasks open */
  CHECK_EQ(rta_task_remove(forces), BALLAST_ESTATE);
  CHECK_EQ(rta_task_end(forces), 0);
  CHECK_EQ(rta_task_end(forces), BALLAST_EMISMATCH); /* not open */
  CHECK_EQ(rta_task_end(halo), BALLAST_EMISMATCH);   /* never begun */
  CHECK_EQ(rta_task_end(tmd), 0);
  CHECK(rta_task_current() == NULL);
  CHECK_EQ(rta_task_end(tmd), BALLAST_EMISMATCH);
  CHECK_EQ(rta_task_begin(NULL), BALLAST_EINVAL);
  CHECK_EQ(rta_task_end(NULL), BALLAST_EINVAL);

  /* Handle form, many times, nested three deep. */
  rta_task_t *b0;
  CHECK_EQ(rta_task_find("md/forces/block_0", &b0), 0);
  for (int i = 0; i < 1000; i++) {
    CHECK_EQ(rta_task_begin(forces), 0);
    CHECK_EQ(rta_task_begin(b0), 0);
    CHECK_EQ(rta_task_end(b0), 0);
    CHECK_EQ(rta_task_end(forces), 0);
  }
  CHECK_EQ(rta_task_end(b0), BALLAST_EMISMATCH);
  CHECK(rta_task_current() == NULL);

  /* Tasks are mon regions named by their keys, nested as they ran. */
  pia_regid_t top = pia_region_find_child(PIA_REGION_MAIN, "md/forces");
  CHECK_GE(top, 0);
  pia_regid_t in = pia_region_find_child(top, "md/forces/block_0");
  CHECK_GE(in, 0);
  pia_regdata_t rd;
  CHECK_EQ(pia_region_data(top, &rd), 0);
  CHECK_EQ(rd.count, 1000);
  CHECK_EQ(pia_region_data(in, &rd), 0);
  CHECK_EQ(rd.count, 1000);
  pia_regid_t md = pia_region_find_child(PIA_REGION_MAIN, "md");
  CHECK_GE(md, 0);
  CHECK_GE(pia_region_find_child(md, "md/forces"), 0);

  /* An application region left open inside a task keeps the task open. */
  CHECK_EQ(rta_task_begin(forces), 0);
  CHECK_EQ(mon_region_begin("inner"), 0);
  CHECK_EQ(rta_task_end(forces), BALLAST_EMISMATCH);
  CHECK(rta_task_current() == forces);
  CHECK_EQ(mon_region_end("inner"), 0);
  CHECK_EQ(rta_task_end(forces), 0);
  CHECK(rta_task_current() == NULL);
  TEST_PASS("task_tree: begin/end nesting");
}

static void test_serial_and_remove(void) {
  static const char *names[] = {"app"};
  rta_task_params_t p = RTA_TASK_PARAMS_INIT;
  int user = 7;
  p.serial.size = fake_size;
  p.user = &user;
  rta_task_t *app, *kid, *md, *t;
  CHECK_EQ(rta_task_define(NULL, 1, names, &p, &app), 0);
  const char *kn[] = {"kid"};
  CHECK_EQ(rta_task_define(app, 1, kn, NULL, &kid), 0);
  rta_serial_t ops;
  void *u = NULL;
  CHECK_EQ(rta_task_serial(kid, &ops, &u), 0); /* inherited */
  CHECK(ops.size == fake_size);
  CHECK(u == &user);
  CHECK_EQ(rta_task_find("md", &md), 0);
  CHECK_EQ(rta_task_serial(md, &ops, &u), BALLAST_ENOTFOUND);
  CHECK_EQ(rta_task_serial(NULL, &ops, &u), BALLAST_EINVAL);

  /* Removing a subtree forgets every key in it. */
  rta_task_t *forces;
  CHECK_EQ(rta_task_find("md/forces", &forces), 0);
  CHECK_EQ(rta_task_remove(forces), 0);
  CHECK_EQ(rta_task_find("md/forces/block_3", &t), BALLAST_ENOTFOUND);
  CHECK_EQ(rta_task_find("md/forces", &t), BALLAST_ENOTFOUND);
  CHECK_EQ(rta_task_nchildren(md), 4);
  CHECK_STREQ(rta_task_key(rta_task_child(md, 0)), "md/halo");
  CHECK_EQ(rta_task_remove(NULL), BALLAST_EINVAL);
  /* The key can be defined again. */
  const char *fn[] = {"forces"};
  CHECK_EQ(rta_task_define(md, 1, fn, NULL, &t), 0);
  CHECK_EQ(rta_task_stage(t), 2);

  CHECK_EQ(rta_reset(), 0);
  CHECK_EQ(rta_task_find("md", &t), BALLAST_ENOTFOUND);
  CHECK_EQ(rta_task_find("app/kid", &t), BALLAST_ENOTFOUND);
  TEST_PASS("task_tree: callbacks, removal, reset");
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  test_construction();
  test_bad_define();
  test_begin_end();
  test_serial_and_remove();
  MPI_Finalize();
  return 0;
}
