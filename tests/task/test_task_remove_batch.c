/* task__remove_tasks: removing many tasks at once leaves the same tree as
 * removing them one by one (children in definition order, subtrees gone,
 * keys free to define again), whatever the listing order, with duplicates,
 * NULL entries and tasks listed under listed ancestors; an open task makes
 * it BALLAST_ESTATE with nothing removed. */
#include <stdio.h>

#include <ballast/rta.h>

#include "task/task_internal.h"
#include "test_util.h"

enum { NC = 10, NG = 3 };

static rta_task_t *root, *kids[NC], *grand[NC][NG];

static void build(void) {
  const char *rn[] = {"r"};
  CHECK_EQ(rta_task_define(NULL, 1, rn, NULL, &root), 0);
  char names[NC][8];
  const char *np[NC];
  for (int i = 0; i < NC; i++) {
    snprintf(names[i], sizeof names[i], "c%d", i);
    np[i] = names[i];
  }
  CHECK_EQ(rta_task_define(root, NC, np, NULL, kids), 0);
  const char *gn[NG] = {"g0", "g1", "g2"};
  for (int i = 0; i < NC; i++)
    CHECK_EQ(rta_task_define(kids[i], NG, gn, NULL, grand[i]), 0);
}

static int exists(const char *key) {
  rta_task_t *t = NULL;
  return rta_task_find(key, &t) == 0;
}

/* Root's children are exactly the kids not in gone[], in order. */
static void check_children(const int *gone) {
  int k = 0;
  for (int i = 0; i < NC; i++) {
    char key[16];
    snprintf(key, sizeof key, "r/c%d", i);
    if (gone[i]) {
      CHECK(!exists(key));
      snprintf(key, sizeof key, "r/c%d/g1", i);
      CHECK(!exists(key)); /* the subtree went with it */
      continue;
    }
    CHECK(exists(key));
    CHECK(rta_task_child(root, k) == kids[i]);
    k++;
  }
  CHECK_EQ(rta_task_nchildren(root), k);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);

  /* Mixed list: a duplicate, a NULL, a grandchild listed before its
   * parent and one after it, a lone grandchild. */
  build();
  rta_task_t *v[] = {grand[3][1], kids[3], NULL, kids[7], kids[3],
                     kids[0],     grand[7][2], grand[5][0], kids[9]};
  CHECK_EQ(task__remove_tasks(v, (int)(sizeof v / sizeof *v)), 0);
  int gone[NC] = {0};
  gone[0] = gone[3] = gone[7] = gone[9] = 1;
  check_children(gone);
  CHECK_EQ(rta_task_nchildren(kids[5]), NG - 1);
  CHECK(rta_task_child(kids[5], 0) == grand[5][1]);
  CHECK(rta_task_child(kids[5], 1) == grand[5][2]);
  CHECK(!exists("r/c5/g0"));
  CHECK(exists("r/c5/g1"));
  /* The marks are cleared on survivors: a second batch works the same. */
  rta_task_t *w[] = {kids[1], kids[8]};
  CHECK_EQ(task__remove_tasks(w, 2), 0);
  gone[1] = gone[8] = 1;
  check_children(gone);
  CHECK_EQ(task__remove_tasks(NULL, 0), 0);
  /* The keys can be defined again. */
  const char *again[] = {"c3"};
  rta_task_t *c3;
  CHECK_EQ(rta_task_define(root, 1, again, NULL, &c3), 0);
  CHECK(exists("r/c3"));
  CHECK(rta_task_child(root, rta_task_nchildren(root) - 1) == c3);
  CHECK_EQ(rta_reset(), 0);

  /* An open task (or one under a listed task): nothing removed. */
  build();
  CHECK_EQ(rta_task_begin(kids[2]), 0);
  CHECK_EQ(rta_task_begin(grand[2][0]), 0);
  rta_task_t *x[] = {kids[4], kids[2]};
  CHECK_EQ(task__remove_tasks(x, 2), BALLAST_ESTATE);
  CHECK_EQ(rta_task_nchildren(root), NC);
  CHECK(exists("r/c4"));
  CHECK_EQ(rta_task_end(grand[2][0]), 0);
  CHECK_EQ(rta_task_end(kids[2]), 0);
  CHECK_EQ(task__remove_tasks(x, 2), 0);
  int gone2[NC] = {0};
  gone2[2] = gone2[4] = 1;
  check_children(gone2);
  CHECK_EQ(rta_reset(), 0);

  TEST_PASS("task_remove_batch: batch removal = one-by-one removal");
  MPI_Finalize();
  return 0;
}
