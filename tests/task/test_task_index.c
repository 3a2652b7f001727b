/* The index of tasks by key (task_index.c): thousands of seeded random
 * definitions and removals, in batches as a remap does them and one by
 * one, checked after each against the set that must exist: every live key
 * found and the right task, every removed key not found and free to define
 * again, the count right, iteration visiting every task exactly once; a
 * reset empties it. Backward-shift deletion is exercised by the runs of
 * neighbouring slots that thousands of keys make in a half-full table.
 * Then tasks whose records come from slabs (task__slab_open), some
 * with an array registered, are removed one by one in random order. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ballast/rta.h>

#include "common/util.h"
#include "task/task_internal.h"
#include "test_util.h"

enum { N = 6000, ROUNDS = 12 };

static rta_task_t *root, *live[N]; /* live[i]: task "r/k<i>" or NULL */

static void key_of(int i, char *buf, size_t n) { snprintf(buf, n, "r/k%d", i); }

/* A cost window restored on a task (an arrival's, in the room its slab
 * record has for one) reads back the same, also after the window's size
 * changed (then allocated) and when restored again; \a salt varies it. */
static void check_window(rta_task_t *t, int i, int salt) {
  double s[12], o[16];
  long long total = 0;
  for (int k = 0; k < 12; k++)
    s[k] = i + k + 0.5 * salt;
  for (int pass = 0; pass < 2; pass++) {
    int w = pass == 0 ? 10 : 4 + salt;
    CHECK_EQ(rta_cost_set_window(w), 0);
    CHECK_EQ(task__cost_restore(t, s, 12, 40 + pass), 0);
    CHECK_EQ(task__cost_export(t, o, 16, &total), w);
    CHECK_EQ(total, 40 + pass);
    for (int k = 0; k < w; k++)
      CHECK(o[k] == s[12 - w + k]);
    rta_task_cost_t c;
    CHECK_EQ(rta_task_cost(t, &c), 0);
    CHECK_EQ(c.nsteps, w);
    CHECK(c.last_time == s[11]);
  }
  CHECK_EQ(rta_cost_set_window(10), 0);
}

/* Tasks with keys longer than the record holds in its hot part (the key
 * after it), from slabs and alone, with cost windows: found by key, named,
 * removed. */
static void check_long_keys(void) {
  enum { M = 40 };
  rta_task_t *t[M];
  for (int i = 0; i < M; i++) {
    if (i == M / 2)
      task__slab_open();
    char name[48], key[64];
    snprintf(name, sizeof name, "a_task_with_a_long_name_%d", i);
    const char *nm = name;
    CHECK_EQ(rta_task_define(root, 1, &nm, NULL, &t[i]), 0);
    check_window(t[i], i, i % 3);
    snprintf(key, sizeof key, "r/%s", name);
    rta_task_t *f = NULL;
    CHECK_EQ(rta_task_find(key, &f), 0);
    CHECK(f == t[i]);
    CHECK(strcmp(rta_task_key(t[i]), key) == 0);
    CHECK(strcmp(rta_task_name(t[i]), name) == 0);
  }
  task__slab_close();
  for (int i = 0; i < M; i++)
    CHECK_EQ(rta_task_remove(t[(i * 7) % M]), 0);
}

static void check_all(void) {
  int64_t n = 1; /* root */
  for (int i = 0; i < N; i++) {
    char key[32];
    key_of(i, key, sizeof key);
    rta_task_t *t = NULL;
    int rc = rta_task_find(key, &t);
    if (live[i]) {
      CHECK_EQ(rc, 0);
      CHECK(t == live[i]);
      n++;
    } else {
      CHECK_EQ(rc, BALLAST_ENOTFOUND);
    }
  }
  CHECK_EQ(task__count(), n);
  int64_t seen = 0;
  for (rta_task_t *t = task__first(); t; t = task__next(t)) {
    CHECK(t->doomed == 0);
    t->doomed = 1; /* visited: a second visit would fail the check above */
    seen++;
  }
  CHECK_EQ(seen, n);
  for (rta_task_t *t = task__first(); t; t = task__next(t))
    t->doomed = 0;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  const char *rn[] = {"r"};
  CHECK_EQ(rta_task_define(NULL, 1, rn, NULL, &root), 0);
  uint64_t seed = 18;
  for (int round = 0; round < ROUNDS; round++) {
    /* Define about half of the missing keys, in one call (a batch) on even
     * rounds, one at a time (as arrivals are adopted) on odd ones. */
    const char **names = malloc(N * sizeof *names);
    char (*buf)[16] = malloc(N * sizeof *buf);
    int *idx = malloc(N * sizeof *idx), n = 0;
    for (int i = 0; i < N; i++)
      if (!live[i] && ballast__splitmix64(seed++) % 2) {
        snprintf(buf[n], sizeof buf[n], "k%d", i);
        names[n] = buf[n];
        idx[n++] = i;
      }
    if (round % 2 == 0 && n > 0) {
      rta_task_t **out = malloc((size_t)n * sizeof *out);
      CHECK_EQ(rta_task_define(root, n, names, NULL, out), 0);
      for (int j = 0; j < n; j++)
        live[idx[j]] = out[j];
      free(out);
    } else {
      for (int j = 0; j < n; j++)
        CHECK_EQ(rta_task_define(root, 1, &names[j], NULL, &live[idx[j]]), 0);
    }
    /* A key defined twice is refused. */
    if (n > 0)
      CHECK_EQ(rta_task_define(root, 1, &names[0], NULL, NULL), BALLAST_EEXIST);
    check_all();
    /* Remove about a third of the live ones, in one batch or one by one. */
    rta_task_t **gone = malloc(N * sizeof *gone);
    int ng = 0;
    for (int i = 0; i < N; i++)
      if (live[i] && ballast__splitmix64(seed++) % 3 == 0) {
        gone[ng++] = live[i];
        live[i] = NULL;
      }
    if (round % 3 == 0)
      CHECK_EQ(task__remove_tasks(gone, ng), 0);
    else
      for (int j = 0; j < ng; j++)
        CHECK_EQ(rta_task_remove(gone[j]), 0);
    check_all();
    free(gone);
    free(names);
    free(buf);
    free(idx);
  }
  /* Records carved from slabs (as a remap's arrivals are) outlive the
   * slabs' closing, are freed one by one in any order, some with arrays
   * registered (the first array's record lives in the task), and mix with
   * records allocated alone; the sanitizer build checks every free. */
  for (int round = 0; round < 3; round++) {
    task__slab_open();
    for (int i = 0; i < N; i += 2)
      if (!live[i]) {
        char name[16];
        snprintf(name, sizeof name, "k%d", i);
        const char *nm = name;
        CHECK_EQ(rta_task_define(root, 1, &nm, NULL, &live[i]), 0);
        CHECK(strcmp(rta_task_name(live[i]), name) == 0);
        if (i % 5 == 0)
          check_window(live[i], i, round);
        if (i % 3 == 0) {
          static double vals[N], *arr[N];
          int64_t one = 1;
          arr[i] = &vals[i];
          CHECK_EQ(rta_task_array_register(live[i], (void **)&arr[i],
                                      rta_type_elem(RTA_DOUBLE), 1, &one), 0);
          CHECK_EQ(rta_task_narrays(live[i]), 1);
        }
      }
    task__slab_close();
    check_all();
    for (int i = 0; i < N; i++)
      if (live[i] && ballast__splitmix64(seed++) % 2) {
        CHECK_EQ(rta_task_remove(live[i]), 0);
        live[i] = NULL;
      }
    check_all();
  }
  check_long_keys();
  check_all();
  CHECK_EQ(rta_reset(), 0);
  CHECK_EQ(task__count(), 0);
  CHECK(task__first() == NULL);
  rta_task_t *t = NULL;
  CHECK_EQ(rta_task_find("r", &t), BALLAST_ENOTFOUND);
  CHECK_EQ(rta_task_define(NULL, 1, rn, NULL, &root), 0); /* usable again */
  CHECK_EQ(rta_task_find("r", &t), 0);
  CHECK(t == root);
  CHECK_EQ(rta_reset(), 0);
  printf("task index: %d rounds of %d keys checked\n", ROUNDS, N);
  MPI_Finalize();
  return 0;
}
