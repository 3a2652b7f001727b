/* Warm start's table (policy__warm_read), single process, no MPI: a profile
 * as ballast-profile-merge writes one (Python's json: every non-ASCII
 * character \uXXXX, beyond U+FFFF a surrogate pair) gives back the tasks'
 * UTF-8 keys with their last slot and time per step; the root is matched
 * after decoding too; a lone surrogate, a cut pair or bad hex is a
 * malformed file (EPARSE), another root a mismatch (EMISMATCH). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ballast/rta.h>

#include "policy/policy.h"
#include "test_util.h"

static const char *tmp = "warm_read.tmp.json";

/* A profile of one context over \a root on 2 ranks whose task map holds
 * \a k0, \a k1, \a k2 (JSON string bodies, escapes as written) on ranks 1,
 * 0, 1, and whose region \a k0 took 0.4 s over 100 steps. */
static int read_profile(const char *root, const char *k0, const char *k1,
                        const char *k2, policy__warm_t **w) {
  FILE *f = fopen(tmp, "w");
  CHECK(f != NULL);
  fprintf(f, "{\"ballast_profile\": {\"version\": 1, \"lb_series\": {\"contexts\": "
          "[{\"root\": \"%s\", \"ranks\": 2, \"task_map\": {\"snapshots\": "
          "[{\"step\": 0, \"detail\": true, \"keys\": [\"%s\", \"%s\", \"%s\"], "
          "\"owner\": [1, 0, 1]}]}}]}, \"ranks_data\": [{\"rank\": 0, \"regions\": "
          "[{\"name\": \"%s\", \"wtime\": 0.4, \"mtime\": 0.0, \"cputime\": 0.4, "
          "\"count\": 100}]}]}}\n", root, k0, k1, k2, k0);
  CHECK_EQ(fclose(f), 0);
  char why[256] = "";
  int rc = policy__warm_read(tmp, "md", 2, w, why, sizeof why);
  CHECK(rc == 0 ? *w != NULL : *w == NULL);
  return rc;
}

static void expect(const policy__warm_t *w, const char *key, int slot, double cost) {
  int s = -2;
  double c = -1;
  CHECK_EQ(policy__warm_find(w, key, &s, &c), 1);
  CHECK_EQ(s, slot);
  CHECK_NEAR(c, cost, 1e-12);
}

int main(void) {
  policy__warm_t *w = NULL;
  /* As Python writes "md/blöck_ü", "md/🚀", "md/块_7"; the root "md" as "m\u0064". */
  CHECK_EQ(read_profile("m\\u0064", "md/bl\\u00f6ck_\\u00fc", "md/\\ud83d\\ude80",
                        "md/\\u5757_7", &w), 0);
  CHECK_EQ(policy__warm_ntasks(w), 3);
  expect(w, "md/bl\xc3\xb6" "ck_\xc3\xbc", 1, 0.004);
  expect(w, "md/\xf0\x9f\x9a\x80", 0, 0.0);
  expect(w, "md/\xe5\x9d\x97_7", 1, 0.0);
  int s;
  double c;
  CHECK_EQ(policy__warm_find(w, "md/bl", &s, &c), 0); /* no key cut at the escape */
  policy__warm_free(w);
  TEST_PASS("warm_read: \\u escapes and surrogate pairs decode to the tasks' UTF-8 keys");

  CHECK_EQ(read_profile("md", "md/\\ud83d", "md/b", "md/c", &w), BALLAST_EPARSE);
  CHECK_EQ(read_profile("md", "md/\\ude80", "md/b", "md/c", &w), BALLAST_EPARSE);
  CHECK_EQ(read_profile("md", "md/\\ud83d\\u0041", "md/b", "md/c", &w), BALLAST_EPARSE);
  CHECK_EQ(read_profile("md", "md/\\u00g6", "md/b", "md/c", &w), BALLAST_EPARSE);
  CHECK_EQ(read_profile("md", "md/\\u0000", "md/b", "md/c", &w), BALLAST_EPARSE);
  CHECK_EQ(read_profile("md", "md/\\u00f", "md/b", "md/c", &w), BALLAST_EPARSE);
  CHECK_EQ(read_profile("other", "md/a", "md/b", "md/c", &w), BALLAST_EMISMATCH);
  policy__warm_free(NULL);
  TEST_PASS("warm_read: lone or cut surrogates, bad hex and U+0000 are malformed; "
            "another root is refused");
  remove(tmp);
  return 0;
}
