/* A seeded, deterministic mutation fuzzer of the inputs the mapping engine
 * reads: .grf graphs, SCOTCH architecture files, hwloc synthetic strings
 * and hwloc XML files. Each iteration takes a valid input, applies one to
 * four mutations (byte flips, inserted separators and NUL bytes, deleted
 * and duplicated ranges, numbers swapped for boundary values, truncation)
 * and hands it to the loader; what loads is then used (a .grf is saved and
 * read back, a machine maps a small stencil). The run fails on a crash, a
 * sanitizer report, an iteration over ITER_SECONDS, or a loader that
 * accepts what it then cannot use.
 *
 *   fuzz_map [SEED [ITERATIONS [SECONDS]]]   (defaults 1, 4000, 25)
 *
 * Iteration i depends on SEED and i only: "fuzz_map SEED i+1" with
 * FUZZ_FROM=i replays the one that failed (its number is printed). */
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <hwloc.h>

#include <ballast/rta_map.h>

#include "test_util.h"

#define ITER_SECONDS 20

static volatile sig_atomic_t cur_iter = -1;

static uint64_t rng_state;
static uint64_t rnd(void) {
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
static size_t rndn(size_t n) { return n ? (size_t)(rnd() % n) : 0; }

static void on_alarm(int sig) {
  (void)sig;
  char m[96];
  int n = snprintf(m, sizeof m, "FAIL: iteration %d ran over %d s (a hang)\n",
                   (int)cur_iter, ITER_SECONDS);
  if (write(2, m, (size_t)n) < 0)
    _exit(3);
  _exit(2);
}

/* A crash or a failed CHECK (abort) names the iteration to replay. */
static void on_fatal(int sig) {
  char m[96];
  int n = snprintf(m, sizeof m, "FAIL: fatal signal %d at iteration %d "
                   "(replay with FUZZ_FROM)\n", sig, (int)cur_iter);
  if (write(2, m, (size_t)n) < 0)
    _exit(3);
  signal(sig, SIG_DFL);
  raise(sig);
}

/* ---- the valid inputs mutations start from ---------------------------- */

static const char *const grf_seeds[] = {
    "0\n4 8\n0 000\n2 1 3\n2 0 2\n2 1 3\n2 0 2\n",
    "0\n4 8\n1 011\n5 2 10 2 1 4\n5 2 10 1 1 3\n1 2 1 2 10 4\n1 2 1 1 10 3\n",
    "0\n3 4\n0 111\n10 1 2 5 11 20\n11 0 1 5 10\n12 3 1 5 10\n",
    "0\n3 4\n0 011\n0 1 9007199254740992 1\n7 2 9007199254740992 0 0 2\n"
    "9007199254740992 1 0 1\n",
    "0\n2 0\n0 000\n0\n0\n",
};
static const char *const arch_seeds[] = {
    "cmplt 4\n", "cmpltw 3 1 2 3\n", "hcub 2\n", "tleaf 2 2 10 2 1\n",
    "ltleaf 2 2 10 2 1 2 1 0\n", "mesh2D 2 2\n", "mesh3D 2 1 2\n",
    "torus2D 2 2\n", "torus3D 2 2 1\n", "meshXD 3 2 1 2\n", "torusXD 2 2 2\n",
    "sub 2 3 1 cmplt 4\n", "sub 3 0 5 7 hcub 3\n",
    "sub 2 0 1 sub 3 0 5 7 tleaf 2 2 10 4 1\n",
};
static const char *const synth_seeds[] = {
    "pack:2 core:4", "core:8", "pack:2 numa:1 core:2 pu:2", "2 2 2",
    "pack:2 [numa] core:2", "pack:2(indexes=0,1) core:2",
};
static char *xml_seed; /* exported by hwloc at start-up */

static const char *const numbers[] = {
    "0", "-1", "1", "2", "3", "7", "2147483647", "2147483648", "-2147483648",
    "4294967296", "9007199254740993", "9223372036854775807",
    "99999999999999999999", "1000000", "1048576", "4096", "4097", "65536",
    "nan", "inf", "1e9", "0x10", "", "+", "-",
};

/* ---- mutations ------------------------------------------------------- */

typedef struct {
  char *b;
  size_t n, cap;
} buf_t;

static void buf_set(buf_t *x, const char *s, size_t n) {
  if (n + 64 > x->cap) {
    x->cap = 2 * n + 64;
    x->b = realloc(x->b, x->cap);
    CHECK(x->b != NULL);
  }
  memcpy(x->b, s, n);
  x->n = n;
}

/* Replaces [at, at+len) by \a s of \a sn bytes. */
static void buf_splice(buf_t *x, size_t at, size_t len, const char *s,
                       size_t sn) {
  if (x->n - len + sn + 64 > x->cap) {
    x->cap = 2 * (x->n + sn) + 64;
    x->b = realloc(x->b, x->cap);
    CHECK(x->b != NULL);
  }
  memmove(x->b + at + sn, x->b + at + len, x->n - at - len);
  memcpy(x->b + at, s, sn);
  x->n = x->n - len + sn;
}

/* The extent of the number (or word) around \a at. */
static void token_at(const buf_t *x, size_t at, size_t *s, size_t *e) {
  *s = *e = at;
  while (*s > 0 && !strchr(" \t\n\"<>=", x->b[*s - 1]))
    (*s)--;
  while (*e < x->n && !strchr(" \t\n\"<>=", x->b[*e]))
    (*e)++;
}

static void mutate(buf_t *x) {
  static const char seps[] = " \n\t\0-:x,(\"<>/";
  int k = 1 + (int)rndn(4);
  for (int m = 0; m < k; m++) {
    size_t at = rndn(x->n + 1);
    switch (rndn(7)) {
    case 0: /* flip a byte */
      if (x->n)
        x->b[rndn(x->n)] ^= (char)(1u << rndn(8));
      break;
    case 1: { /* insert a separator, a NUL or a sign */
      char c = seps[rndn(sizeof seps - 1)];
      buf_splice(x, at, 0, &c, 1);
      break;
    }
    case 2: /* delete a range */
      buf_splice(x, at, rndn(x->n - at < 16 ? x->n - at + 1 : 16), "", 0);
      break;
    case 3: { /* duplicate a range */
      size_t len = rndn(x->n - at < 32 ? x->n - at + 1 : 32);
      char tmp[32];
      memcpy(tmp, x->b + at, len);
      buf_splice(x, at, 0, tmp, len);
      break;
    }
    case 4:
    case 5: { /* a number swapped for a boundary value */
      size_t s, e;
      token_at(x, at < x->n ? at : (x->n ? x->n - 1 : 0), &s, &e);
      const char *v = numbers[rndn(sizeof numbers / sizeof *numbers)];
      buf_splice(x, s, e - s, v, strlen(v));
      break;
    }
    default: /* truncate */
      x->n = at;
    }
  }
}

/* ---- targets --------------------------------------------------------- */

static rta_graph_t *small_graph(void) {
  rta_graph_t *g = NULL;
  CHECK_EQ(rta_graph_stencil3d(4, 4, 1, 7, 4.0, 0.0, &g), 0);
  return g;
}

/* A machine that loaded must map (twophase uses SCOTCH on the network). */
static void use_machine(rta_hw_t *hw, rta_graph_t *g) {
  if (rta_hw_nslots(hw) > 4096)
    return;
  int64_t slot[16];
  rta_map_quality_t q;
  int rc = rta_map_graph_ex(g, hw, RTA_MAP_TWOPHASE, NULL, NULL, slot, &q);
  CHECK_EQ(rc, 0);
  for (int v = 0; v < 16; v++)
    CHECK(slot[v] >= 0 && slot[v] < rta_hw_nslots(hw));
}

static void fuzz_grf(buf_t *x) {
  FILE *f = fmemopen(x->b, x->n ? x->n : 1, "r");
  CHECK(f != NULL);
  if (!x->n)
    fgetc(f); /* an empty file */
  rta_graph_t *g = NULL;
  int rc = rta_graph_load_grf(f, "fuzz.grf", &g);
  fclose(f);
  CHECK((rc == 0) == (g != NULL));
  if (rc)
    return;
  /* What loads saves and reads back to the same graph. */
  char *out = NULL;
  size_t on = 0;
  FILE *w = open_memstream(&out, &on);
  CHECK(w != NULL);
  rc = rta_graph_save_grf(g, w);
  fclose(w);
  CHECK_EQ(rc, 0);
  FILE *r = fmemopen(out, on, "r");
  rta_graph_t *h = NULL;
  CHECK_EQ(rta_graph_load_grf(r, "saved.grf", &h), 0);
  fclose(r);
  CHECK_EQ(rta_graph_nvert(h), rta_graph_nvert(g));
  CHECK_EQ(rta_graph_nedges(h), rta_graph_nedges(g));
  rta_graph_destroy(h);
  free(out);
  rta_graph_destroy(g);
}

static void fuzz_file_machine(buf_t *x, const char *path, int is_arch,
                              rta_graph_t *g) {
  /* A new file, not the last one truncated: ext4 writes a file truncated
   * and rewritten out to disk at its close (auto_da_alloc). */
  remove(path);
  FILE *f = fopen(path, "wb");
  CHECK(f != NULL);
  CHECK_EQ(fwrite(x->b, 1, x->n, f), x->n);
  CHECK_EQ(fclose(f), 0);
  rta_hw_t *hw = NULL;
  int rc = is_arch ? rta_hw_create_sim(0, "core:2", path, NULL, &hw)
                   : rta_hw_create_sim(2, path, NULL, NULL, &hw);
  CHECK((rc == 0) == (hw != NULL));
  if (!rc)
    use_machine(hw, g);
  rta_hw_destroy(hw);
}

static void fuzz_synthetic(buf_t *x, rta_graph_t *g) {
  char s[512];
  size_t n = x->n < sizeof s - 1 ? x->n : sizeof s - 1;
  memcpy(s, x->b, n);
  s[n] = 0;
  if (!s[0] || s[0] == '/' || s[0] == '.' || strstr(s, ".xml"))
    return; /* would be read as a file name or the local machine */
  rta_hw_t *hw = NULL;
  int rc = rta_hw_create_sim(2, s, NULL, NULL, &hw);
  CHECK((rc == 0) == (hw != NULL));
  if (!rc)
    use_machine(hw, g);
  rta_hw_destroy(hw);
}

static char *export_xml(void) {
  hwloc_topology_t t;
  CHECK(hwloc_topology_init(&t) == 0);
  CHECK(hwloc_topology_set_synthetic(t, "pack:2 core:2 pu:1") == 0);
  CHECK(hwloc_topology_load(t) == 0);
  char *xml;
  int len;
  CHECK(hwloc_topology_export_xmlbuffer(t, &xml, &len, 0) == 0);
  char *copy = strdup(xml);
  hwloc_free_xmlbuffer(t, xml);
  hwloc_topology_destroy(t);
  return copy;
}

/* The mapping options the library refuses rather than pass to SCOTCH. */
static void check_options(rta_hw_t *hw, rta_graph_t *g) {
  const double bad[] = {INFINITY, -INFINITY, NAN, -1.0};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    rta_map_options_t mo;
    rta_map_options_init(&mo);
    mo.balrat = bad[i];
    int64_t slot[16];
    CHECK_EQ(rta_map_graph_ex(g, hw, RTA_MAP_TWOPHASE, NULL, &mo, slot, NULL),
             BALLAST_EINVAL);
    rta_map_options_init(&mo);
    mo.steps_between_remaps = bad[i];
    CHECK_EQ(rta_map_graph_ex(g, hw, RTA_MAP_TWOPHASE, NULL, &mo, slot, NULL),
             BALLAST_EINVAL);
  }
}

/* --save-grf's cases: a weight near 2^63 or fractional is refused before a
 * byte is written; zeros are written as zeros; a directory is a read
 * error, not an empty file. */
static void check_grf_edges(void) {
  rta_graph_t *g = NULL;
  CHECK_EQ(rta_graph_create(3, &g), 0);
  CHECK_EQ(rta_graph_set_vertex(g, 0, 0.0, 0.0), 0);
  CHECK_EQ(rta_graph_add_edge(g, 0, 1, 0.0), 0);
  CHECK_EQ(rta_graph_add_edge(g, 1, 2, 9007199254740992.0), 0);
  char *out = NULL;
  size_t on = 0;
  FILE *w = open_memstream(&out, &on);
  CHECK_EQ(rta_graph_save_grf(g, w), 0);
  fclose(w);
  CHECK(strcmp(out, "0\n3 4\n0 011\n0 1 0 1\n1 2 0 0 9007199254740992 2\n"
                    "1 1 9007199254740992 1\n") == 0);
  free(out);
  const double bad[] = {9.2e18, 0.5, 9007199254740994.0};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    CHECK_EQ(rta_graph_set_vertex(g, 2, bad[i], 0.0), 0);
    out = NULL;
    w = open_memstream(&out, &on);
    CHECK_EQ(rta_graph_save_grf(g, w), BALLAST_ERANGE);
    fclose(w);
    CHECK_EQ(on, 0);
    free(out);
  }
  rta_graph_destroy(g);
  FILE *d = fopen("/tmp", "r");
  if (d) {
    g = NULL;
    CHECK_EQ(rta_graph_load_grf(d, "/tmp", &g), BALLAST_EIO);
    CHECK(g == NULL);
    fclose(d);
  }
}

int main(int argc, char **argv) {
  uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 10) : 1;
  long iters = argc > 2 ? atol(argv[2]) : 4000;
  double budget = argc > 3 ? atof(argv[3]) : 25;
  long from = getenv("FUZZ_FROM") ? atol(getenv("FUZZ_FROM")) : 0;
  char dir[] = "/tmp/ballast_fuzz_XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  char arch_path[64], xml_path[64];
  snprintf(arch_path, sizeof arch_path, "%s/a.tgt", dir);
  snprintf(xml_path, sizeof xml_path, "%s/n.xml", dir);
  signal(SIGALRM, on_alarm);
  const int fatal[] = {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL};
  for (size_t k = 0; k < sizeof fatal / sizeof *fatal; k++)
    signal(fatal[k], on_fatal);
  xml_seed = export_xml();
  rta_graph_t *g = small_graph();
  rta_hw_t *hw = NULL;
  CHECK_EQ(rta_hw_create_sim(2, "core:2", NULL, NULL, &hw), 0);
  check_options(hw, g);
  check_grf_edges();
  rta_hw_destroy(hw);

  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  long done = 0, counts[4] = {0};
  buf_t x = {0};
  for (long i = from; i < iters; i++) {
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if ((double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec) >
        budget)
      break;
    rng_state = seed * 0x100000001b3ull + (uint64_t)i;
    cur_iter = (sig_atomic_t)i;
    alarm(ITER_SECONDS);
    int target = (int)rndn(4);
    const char *s = target == 0   ? grf_seeds[rndn(sizeof grf_seeds / sizeof *grf_seeds)]
                    : target == 1 ? arch_seeds[rndn(sizeof arch_seeds / sizeof *arch_seeds)]
                    : target == 2 ? synth_seeds[rndn(sizeof synth_seeds / sizeof *synth_seeds)]
                                  : xml_seed;
    buf_set(&x, s, strlen(s));
    mutate(&x);
    if (getenv("FUZZ_VERBOSE"))
      fprintf(stderr, "iteration %ld target %d: %.*s\n", i, target,
              (int)(x.n < 200 ? x.n : 200), x.b);
    if (target == 0)
      fuzz_grf(&x);
    else if (target == 1)
      fuzz_file_machine(&x, arch_path, 1, g);
    else if (target == 2)
      fuzz_synthetic(&x, g);
    else
      fuzz_file_machine(&x, xml_path, 0, g);
    alarm(0);
    counts[target]++;
    done++;
  }
  printf("fuzz_map: seed %llu, %ld iterations (%ld .grf, %ld arch, %ld "
         "synthetic, %ld XML) without a crash, a hang or a sanitizer report\n",
         (unsigned long long)seed, done, counts[0], counts[1], counts[2],
         counts[3]);
  /* A loaded machine slows the run, never below this many. */
  CHECK(done >= 100 || from > 0 || iters < 100);
  remove(arch_path);
  remove(xml_path);
  rmdir(dir);
  free(x.b);
  free(xml_seed);
  rta_graph_destroy(g);
  TEST_PASS("fuzz_map");
}
