/* Seeded mutation fuzz of ballast-cube's Cube4 reader (tools/cube), in
 * process: a valid .cubex is mutated (bytes overwritten, mostly in the
 * headers and anchor.xml; runs copied; the file cut short), opened, and when
 * it opens, every row of every metric is read. Each outcome must be 0, or a
 * negative BALLAST_E* code with a message; never a crash (the sanitizer
 * build runs it too) or a hang (bounded by time).
 *
 *   cube_fuzz VALID.cubex ITERATIONS SEED MAX_SECONDS TMPFILE */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ballast/common.h>

#include "cube_read.h"
#include "test_util.h"

static uint64_t rng(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

static void mutate(unsigned char *b, size_t *n, uint64_t *s) {
  int k = 1 + (int)(rng(s) % 4);
  for (int i = 0; i < k && *n > 0; i++) {
    int what = (int)(rng(s) % 10);
    size_t lim = (rng(s) % 4) ? (*n < 8192 ? *n : 8192) : *n; /* headers, anchor */
    size_t at = (size_t)(rng(s) % lim);
    if (what < 6) {
      static const char pick[] = "<>/\"'=&;# 0123456789-.x\n";
      b[at] = (rng(s) % 2) ? (unsigned char)rng(s) : (unsigned char)pick[rng(s) % (sizeof pick - 1)];
    } else if (what < 8) {
      size_t from = (size_t)(rng(s) % *n), len = (size_t)(rng(s) % 64);
      if (from + len > *n) len = *n - from;
      if (at + len > *n) len = *n - at;
      memmove(b + at, b + from, len);
    } else if (what == 8) {
      *n = at; /* cut */
    } else {
      memset(b + at, 0, (*n - at) < 512 ? (*n - at) : 512);
    }
  }
}

static int read_all(const cube_t *c, char *err) {
  int32_t *all = malloc((size_t)c->ncnode * sizeof *all);
  double *rows = malloc((size_t)c->ncnode * (size_t)c->nloc * sizeof *rows);
  int rc = (all && rows) ? 0 : BALLAST_ENOMEM;
  for (int64_t i = 0; !rc && i < c->ncnode; i++) all[i] = (int32_t)(c->ncnode - 1 - i);
  for (int m = 0; !rc && m < c->nmetric; m++)
    if (c->metric[m].has_data) rc = cube_read_rows(c, m, all, c->ncnode, rows, err, CUBE_ERRLEN);
  free(all);
  free(rows);
  return rc;
}

int main(int argc, char **argv) {
  if (argc != 6) {
    fprintf(stderr, "usage: cube_fuzz VALID.cubex ITERATIONS SEED MAX_SECONDS TMPFILE\n");
    return 2;
  }
  FILE *f = fopen(argv[1], "rb");
  CHECK(f != NULL);
  fseek(f, 0, SEEK_END);
  size_t n0 = (size_t)ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *orig = malloc(n0), *buf = malloc(n0);
  CHECK(orig && buf && fread(orig, 1, n0, f) == n0);
  fclose(f);
  long iters = atol(argv[2]);
  uint64_t seed = strtoull(argv[3], NULL, 10) | 1;
  double limit = atof(argv[4]);
  char err[CUBE_ERRLEN];
  cube_t *c = NULL;
  /* The unmutated file opens and reads. */
  CHECK_EQ(cube_open(argv[1], &c, err, sizeof err), 0);
  CHECK_EQ(read_all(c, err), 0);
  cube_close(c);
  long opened = 0, refused = 0, i;
  time_t t0 = time(NULL);
  for (i = 0; i < iters && difftime(time(NULL), t0) < limit; i++) {
    size_t n = n0;
    memcpy(buf, orig, n0);
    mutate(buf, &n, &seed);
    /* A new file each time, not the last one truncated: ext4 writes a file
     * truncated and rewritten out to disk at its close (auto_da_alloc),
     * milliseconds an iteration that were most of this test's time. */
    remove(argv[5]);
    FILE *o = fopen(argv[5], "wb");
    CHECK(o != NULL);
    CHECK(fwrite(buf, 1, n, o) == n);
    CHECK(fclose(o) == 0);
    err[0] = '\0';
    int rc = cube_open(argv[5], &c, err, sizeof err);
    if (rc == 0) {
      rc = read_all(c, err);
      cube_close(c);
      CHECK(rc == 0 || (rc < 0 && err[0]));
      opened++;
    } else {
      CHECK(rc < 0 && c == NULL);
      if (!err[0]) {
        fprintf(stderr, "iteration %ld: code %d without a message\n", i, rc);
        return 1;
      }
      refused++;
    }
  }
  printf("cube_fuzz: %ld mutated archives: %ld opened and read, %ld refused with a message\n",
         i, opened, refused);
  CHECK(i >= 100 && refused > 0);
  remove(argv[5]);
  free(orig);
  free(buf);
  TEST_PASS("cube_fuzz");
  return 0;
}
