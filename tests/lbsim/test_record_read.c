/* Reading load-balancing records: the synthetic record (synthetic.rec, its
 * path in argv[1]) parses to the values it holds; malformed, truncated,
 * foreign-version and missing records give a negative code and a warning
 * naming the line, never a crash (every cut of the file is tried); every
 * allocation of a read may fail and gives BALLAST_ENOMEM with nothing lost
 * (run under the sanitizers); the hardware model's text form reads back the
 * same model. Single process, no MPI. */
#include <stdlib.h>
#include <string.h>

#include <ballast/rta.h>

#include "common/util.h"
#include "policy/policy.h"
#include "map/map_internal.h"
#include "test_util.h"
#include "test_hw.h"

static char *text;  /* the synthetic record */
static size_t ntext;
static const char *tmp = "record_read.tmp";

static int read_text(const char *t, size_t n) {
  FILE *f = fopen(tmp, "w");
  CHECK(f != NULL);
  CHECK_EQ(fwrite(t, 1, n, f), n);
  CHECK_EQ(fclose(f), 0);
  policy__t *r = NULL;
  int rc = policy__open(tmp, &r);
  CHECK(rc == 0 ? r != NULL : r == NULL);
  policy__close(r);
  return rc;
}

/* The synthetic record with line \a n (0-based) replaced by \a line. */
static int read_with_line(int n, const char *line) {
  char *out = malloc(ntext + strlen(line) + 2);
  size_t o = 0;
  int k = 0;
  for (const char *p = text; *p;) {
    const char *e = strchr(p, '\n');
    size_t len = (size_t)(e - p) + 1;
    if (k++ == n) {
      o += (size_t)sprintf(out + o, "%s\n", line);
    } else {
      memcpy(out + o, p, len);
      o += len;
    }
    p += len;
  }
  int rc = read_text(out, o);
  free(out);
  return rc;
}

static void test_good(const char *path) {
  policy__t *r;
  CHECK_EQ(policy__open(path, &r), 0);
  CHECK_STREQ(r->root, "s");
  CHECK_EQ(r->ranks, 2);
  CHECK_EQ((int)r->strategy, (int)RTA_MAP_BLOCK);
  CHECK_EQ(r->policy.window, 3);
  CHECK_NEAR(r->policy.threshold, 1.1, 1e-15);
  CHECK_EQ(rta_hw_nslots(r->hw), 2);
  CHECK_EQ(r->nkeys, 4);
  CHECK_STREQ(r->keys[3], "s/t 3");
  CHECK_EQ(r->ngraphs, 1);
  CHECK_EQ(r->graphs[0].n, 4);
  CHECK_EQ(r->graphs[0].xadj[4], 1);
  CHECK_EQ(r->graphs[0].adj[0], 2);
  CHECK_NEAR(r->graphs[0].adjw[0], 2000, 0);
  CHECK_EQ(r->nsteps, 40);
  CHECK_EQ(r->ndecisions, 40);
  CHECK_EQ(r->ncostrows, 80);
  CHECK_EQ(r->nevents, 80);
  CHECK_NEAR(r->steps[39].times[0], 0.004, 0);
  CHECK_EQ(r->closed, 1);
  policy__task_t t;
  CHECK_EQ(policy__task(r, "s/t0", &t), 0);
  CHECK_NEAR(t.work, 0.003, 0);
  CHECK_EQ(t.slot, 0);
  CHECK_EQ(t.ncosts, 40);
  CHECK_NEAR(t.mean_cost, 0.003, 1e-15);
  CHECK_EQ(policy__task(r, "s/t 3", &t), 0);
  CHECK_EQ(t.slot, 1);
  CHECK_EQ(policy__task(r, "s/t4", &t), BALLAST_ENOTFOUND);
  const char *keys[] = {"s/t 3", "s/t0", "s/t1", "s/t2"};
  /* the hash is over the graph's vertex order (the mapping's sorted keys) */
  const char *order[] = {"s/t0", "s/t1", "s/t2", "s/t 3"};
  CHECK(policy__tree_hash(r, 0) == policy__keys_hash(order, 4));
  CHECK(policy__tree_hash(r, 0) != policy__keys_hash(keys, 4));
  CHECK_EQ(policy__last_graph(r), 0);
  policy__close(r);
  TEST_PASS("lbsim_records: the synthetic record reads back its values");
}

static void test_bad(void) {
  CHECK_EQ(read_text("", 0), BALLAST_EPARSE);
  CHECK_EQ(read_text("not a record\n", 13), BALLAST_EPARSE);
  CHECK_EQ(read_with_line(0, "ballast-lbrecord 1"), BALLAST_EPARSE);  /* an older version */
  CHECK_EQ(read_with_line(0, "ballast-lbrecord x"), BALLAST_EPARSE);
  CHECK_EQ(read_with_line(1, "C s 0 0 block tasks 0 0"), BALLAST_EPARSE); /* 0 ranks */
  CHECK_EQ(read_with_line(1, "C s 2 0 nosuch tasks 0 0"), BALLAST_EPARSE);
  CHECK_EQ(read_with_line(2, "P auto 0 2 1.1 2 100 0"), BALLAST_EPARSE); /* window 2 */
  CHECK_EQ(read_with_line(3, "H 1 2 1 16 flat 1 2 1 2 1 Core 0 -1 0 0 0 5"),
           BALLAST_EPARSE); /* a core the node lacks */
  CHECK_EQ(read_with_line(3, "H 1 2"), BALLAST_EPARSE);
  CHECK_EQ(read_with_line(7, "K 3 s/t%2"), BALLAST_EPARSE);   /* cut escape */
  CHECK_EQ(read_with_line(7, "K 5 s/t3"), BALLAST_EPARSE);    /* ids must count up */
  CHECK_EQ(read_with_line(8, "G 0 0 5"), BALLAST_EPARSE);     /* 4 V lines follow */
  CHECK_EQ(read_with_line(9, "V 9 1 0 0.003 1000"), BALLAST_EPARSE); /* unknown key */
  CHECK_EQ(read_with_line(9, "V 0 1 0 -1 1000"), BALLAST_EPARSE);
  CHECK_EQ(read_with_line(13, "E 0 0 2000"), BALLAST_EPARSE);  /* v must exceed u */
  CHECK_EQ(read_with_line(14, "T 1 0.005 0.004"), BALLAST_EPARSE); /* one time short */
  CHECK_EQ(read_with_line(14, "T 1 0.005 0.004 nan"), BALLAST_EPARSE);
  CHECK_EQ(read_with_line(15, "D 1 0 sideways 0 0 0 0 0 0 0"), BALLAST_EPARSE);
  CHECK_EQ(read_with_line(15, "Y 1 2 3"), BALLAST_EPARSE);    /* unknown line type */
  /* version 2's lines: a warm-start decision, a candidate, a measured remap */
  CHECK_EQ(read_with_line(15, "D 1 1 warm-start 0 0 0 0 0 0 2"), 0);
  CHECK_EQ(read_with_line(15, "D 1 1 warm-start 0 0 0 0 0 0 3"), BALLAST_EPARSE);
  CHECK_EQ(read_with_line(15, "J 1 1 1 0x1.8p+0 0x1p+0 2 0x1p+11 0x1p-10 1 imbalanced "
                              "0x1p-4 0x1p-8 0x1p+0 2"), 0);
  CHECK_EQ(read_with_line(15, "J 1 1 1 1.5 1 2 2048 0.001 0 sideways 0 0 1 2"),
           BALLAST_EPARSE);
  CHECK_EQ(read_with_line(15, "J 1 1 2 1.5 1 2 2048 0.001 0 nothing-moves 0 0 1 2"),
           BALLAST_EPARSE); /* judged is 0 or 1 */
  CHECK_EQ(read_with_line(15, "J 1 1 1 1.5 1 -2 2048 0.001 0 backoff 0 0 1 2"),
           BALLAST_EPARSE); /* negative tasks */
  CHECK_EQ(read_with_line(15, "R 1 1 0 0 0 0 0x1p-10 0 7 0"), 0);
  CHECK_EQ(read_with_line(15, "R 10 1 1 0 6 0 0.01 0.001 0.011"), BALLAST_EPARSE); /* v1 */
  CHECK_EQ(read_with_line(15, "X 0.01 0.001 2048 1"), 0);
  CHECK_EQ(read_with_line(15, "X 0.011"), BALLAST_EPARSE); /* version 1's X */
  CHECK_EQ(read_with_line(15, "X 0.01 0.001 2048 2"), BALLAST_EPARSE);
  CHECK_EQ(read_with_line(15, "T1 0.005 0.004 0.002"), BALLAST_EPARSE);
  CHECK_EQ(read_with_line(15, "T 1 0.005 0.004 0.002 7"), BALLAST_EPARSE); /* extra */
  policy__t *r = (policy__t *)1;
  CHECK_EQ(policy__open("/nonexistent-dir/x.rec", &r), BALLAST_EIO);
  CHECK(r == NULL);
  CHECK_EQ(policy__open(NULL, &r), BALLAST_EINVAL);
  /* every cut: a whole-line prefix may read, a cut inside a line never does */
  int ok = 0, refused = 0;
  for (size_t n = 0; n < ntext; n += 3) {
    int rc = read_text(text, n);
    int whole = n > 0 && text[n - 1] == '\n';
    if (!whole)
      CHECK_EQ(rc, BALLAST_EPARSE);
    else
      CHECK(rc == 0 || rc == BALLAST_EPARSE);
    ok += rc == 0;
    refused += rc != 0;
  }
  CHECK_GT(ok, 0);
  CHECK_GT(refused, 0);
  TEST_PASS("lbsim_records: malformed, truncated, foreign and missing records refused");
}

static void test_alloc(void) {
  int n = 1;
  for (;; n++) {
    ballast__alloc_fail_after(n);
    int rc = read_text(text, ntext);
    ballast__alloc_fail_after(0);
    if (rc == 0)
      break;
    CHECK_EQ(rc, BALLAST_ENOMEM);
  }
  CHECK_GT(n, 10);
  TEST_PASS("lbsim_records: every failed allocation of a read is BALLAST_ENOMEM");
}

static void test_hw_text(void) {
  rta_hw_t *a, *b;
  CHECK_EQ(rta_hw_create_sim(3, "pack:2 core:2", NULL, NULL, &a), 0);
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  CHECK_EQ(map__hw_to_text(a, f), 0);
  CHECK_EQ(fclose(f), 0);
  char why[160];
  CHECK_EQ(map__hw_from_text(buf, &b, why, sizeof why), 0);
  CHECK_EQ(rta_hw_nslots(b), 12);
  CHECK_EQ(rta_hw_nnodes(b), 3);
  for (int i = 0; i < 12; i++)
    for (int j = 0; j < 12; j++)
      CHECK_NEAR(slot_dist(a, i, j), slot_dist(b, i, j), 0);
  rta_hw_destroy(a);
  rta_hw_destroy(b);
  free(buf);
  /* measured links: read back as measured, the distances follow them */
  const char *m = "H 2 2 1 16 measured 1 1 0 0 0 0 1 0 0 1 0 0 0x1p-20 0x1p-20 0 "
                  "inf 0x1p+30 0x1p+31 inf";
  CHECK_EQ(map__hw_from_text(m, &b, why, sizeof why), 0);
  double lat, bw;
  CHECK_EQ(rta_hw_link(b, 0, 1, &lat, &bw), 0);
  CHECK_NEAR(lat, 0x1p-20, 0);
  CHECK_NEAR(bw, 0x1p+30, 0);
  CHECK_DGT(node_dist(b, 0, 1), 0);
  rta_hw_destroy(b);
  CHECK_EQ(map__hw_from_text("H 2 2 1 16 measured 1 1 0 0 0 0 1 0 0 1 0 0 0x1p-20", &b, why,
                             sizeof why), BALLAST_EPARSE);
  CHECK(strstr(why, "links") != NULL);
  TEST_PASS("lbsim_records: the hardware model's text form reads back the same model");
}

int main(int argc, char **argv) {
  CHECK(argc > 1);
  FILE *f = fopen(argv[1], "r");
  CHECK(f != NULL);
  text = malloc(1 << 20);
  ntext = fread(text, 1, (1 << 20) - 1, f);
  text[ntext] = '\0';
  fclose(f);
  test_good(argv[1]);
  test_bad();
  test_alloc();
  test_hw_text();
  remove(tmp);
  free(text);
  return 0;
}
