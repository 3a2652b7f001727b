/* Checks a SCOTCH target architecture file before SCOTCH reads it.
 *
 * SCOTCH 7.0.3 trusts its architecture files: "cmplt 0", "hcub 0",
 * "mesh2D 0 0", a "sub" over terminals that do not exist or an "ltleaf"
 * permutation with a repeated entry crash or corrupt it; sizes that
 * overflow its 32-bit numbers come out as "no terminal"; trailing text is
 * ignored. So ballast parses the grammar it accepts itself, recursively
 * for "sub", and hands SCOTCH only files that passed, naming the file, the
 * line and the value of the first problem otherwise.
 *
 * Accepted (names case-insensitive, as SCOTCH's): cmplt N, cmpltw N w..,
 * hcub D, tleaf L (size cost)*L, ltleaf L (size cost)*L P perm*P,
 * mesh2D/torus2D X Y, mesh3D/torus3D X Y Z, meshXD/torusXD D d*D,
 * sub N t*N ARCH. Variable-sized (varcmplt, varhcub) and decomposition-
 * defined (deco, dist) architectures are refused: ballast needs a fixed
 * number of nodes and cannot check the latter's matrices. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "common/common_internal.h"
#include "map/map_internal.h"

/* An architecture file longer than this is not a network description. */
#define ARCH_MAX_BYTES (64L << 20)
/* "sub" inside "sub" inside ...: deeper is a fuzzer, not a machine. */
#define ARCH_MAX_DEPTH 8
/* SCOTCH's meshXD/torusXD limit (ARCHMESHDIMNMAX). */
#define ARCH_MAX_DIMS 5

typedef struct {
  const char *path;
  const char *buf;
  size_t len, pos;
  int line;      /* line of the last token read */
  char tok[64];  /* the last token, for messages */
} ac_t;

static int ac_fail(ac_t *a, const char *fmt, ...) {
  char m[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(m, sizeof m, fmt, ap);
  va_end(ap);
  BALLAST_WARN("'%s' is not a valid SCOTCH architecture file: line %d: %s",
               a->path, a->line, m);
  return BALLAST_EPARSE;
}

/* The next whitespace-separated token into a->tok: 1, 0 at the end of the
 * file, or an error (a token too long to be a number or a name). */
static int ac_next(ac_t *a) {
  while (a->pos < a->len && strchr(" \t\r\n\v\f", a->buf[a->pos])) {
    if (a->buf[a->pos] == '\n')
      a->line++;
    a->pos++;
  }
  if (a->pos == a->len)
    return 0;
  size_t n = 0;
  while (a->pos < a->len && !strchr(" \t\r\n\v\f", a->buf[a->pos])) {
    if (n + 1 >= sizeof a->tok)
      return ac_fail(a, "token '%.20s...' is too long", a->buf + a->pos - n);
    a->tok[n++] = a->buf[a->pos++];
  }
  a->tok[n] = 0;
  return 1;
}

/* An integer field in lo..hi. */
static int ac_int(ac_t *a, const char *what, int64_t lo, int64_t hi,
                  int64_t *v) {
  int rc = ac_next(a);
  if (rc < 0)
    return rc;
  if (rc == 0)
    return ac_fail(a, "the file ends where %s was expected", what);
  char *end;
  errno = 0;
  long long x = strtoll(a->tok, &end, 10);
  if (end == a->tok || *end)
    return ac_fail(a, "%s '%s' is not an integer", what, a->tok);
  if (errno == ERANGE || x < lo || x > hi)
    return ac_fail(a, "%s %s out of range %lld..%lld", what, a->tok,
                   (long long)lo, (long long)hi);
  *v = x;
  return 0;
}

/* Multiplies the terminal count, refusing what SCOTCH's numbers and
 * ballast's node ids cannot hold. */
static int ac_mul(ac_t *a, int64_t *n, int64_t f, const char *what) {
  if (f > MAP__ARCH_MAX_TERMS || *n * f > MAP__ARCH_MAX_TERMS)
    return ac_fail(a, "%s give more than %d terminals (at value %s)", what,
                   MAP__ARCH_MAX_TERMS, a->tok);
  *n *= f;
  return 0;
}

static int ac_arch(ac_t *a, int depth, int64_t *nterm);

/* tleaf and ltleaf: levels, then (size, link cost) per level, top down. */
static int ac_tleaf(ac_t *a, int labelled, int64_t *nterm) {
  int64_t nl, sz[32], x;
  int rc;
  if ((rc = ac_int(a, "the tleaf level count", 1, 32, &nl)))
    return rc;
  *nterm = 1;
  for (int l = 0; l < nl; l++) {
    if ((rc = ac_int(a, "a tleaf level size", 2, MAP__ARCH_MAX_TERMS, &sz[l])) ||
        (rc = ac_mul(a, nterm, sz[l], "the tleaf level sizes")) ||
        (rc = ac_int(a, "a tleaf link cost", 1, MAP__ARCH_MAX_VALUE, &x)))
      return rc;
  }
  if (!labelled)
    return 0;
  int64_t np;
  if ((rc = ac_int(a, "the ltleaf permutation size", 1, *nterm, &np)))
    return rc;
  /* SCOTCH permutes within blocks of the lowest levels: the size must be
   * 1 or the product of the last few level sizes. */
  int64_t p = 1;
  for (int l = (int)nl - 1; l >= 0 && p < np; l--)
    p *= sz[l];
  if (p != np)
    return ac_fail(a, "ltleaf permutation size %lld is not the size of the "
                   "lowest levels (1, %lld, ...)", (long long)np,
                   (long long)sz[nl - 1]);
  unsigned char *seen = ballast__calloc((size_t)np, 1);
  if (!seen)
    return BALLAST_ENOMEM;
  for (int64_t i = 0; i < np && !rc; i++) {
    rc = ac_int(a, "an ltleaf permutation entry", 0, np - 1, &x);
    if (!rc && seen[x]++)
      rc = ac_fail(a, "ltleaf permutation entry %lld appears twice",
                   (long long)x);
  }
  free(seen);
  return rc;
}

/* mesh and torus: \a nd dimensions, or the count first when nd is 0. */
static int ac_mesh(ac_t *a, int64_t nd, int64_t *nterm) {
  int rc;
  if (nd == 0 && (rc = ac_int(a, "the dimension count", 1, ARCH_MAX_DIMS, &nd)))
    return rc;
  *nterm = 1;
  for (int64_t d = 0; d < nd; d++) {
    int64_t x;
    if ((rc = ac_int(a, "a dimension", 1, MAP__ARCH_MAX_TERMS, &x)) ||
        (rc = ac_mul(a, nterm, x, "the dimensions")))
      return rc;
  }
  return 0;
}

/* cmpltw: N, then N weights (the terminals' relative power). */
static int ac_cmpltw(ac_t *a, int64_t *nterm) {
  int rc;
  if ((rc = ac_int(a, "the cmpltw size", 1, MAP__ARCH_MAX_TERMS, nterm)))
    return rc;
  int64_t sum = 0, w;
  for (int64_t i = 0; i < *nterm; i++) {
    if ((rc = ac_int(a, "a cmpltw weight", 1, MAP__ARCH_MAX_VALUE, &w)))
      return rc;
    sum += w;
  }
  if (sum > INT32_MAX / 2)
    return ac_fail(a, "the cmpltw weights add up to %lld, above 2^30",
                   (long long)sum);
  return 0;
}

/* sub: N terminals of the architecture that follows, all distinct. */
static int ac_sub(ac_t *a, int depth, int64_t *nterm) {
  int rc;
  if ((rc = ac_int(a, "the sub terminal count", 1, MAP__ARCH_MAX_TERMS, nterm)))
    return rc;
  int64_t *t = ballast__malloc((size_t)*nterm * sizeof *t);
  if (!t)
    return BALLAST_ENOMEM;
  for (int64_t i = 0; i < *nterm && !rc; i++)
    rc = ac_int(a, "a sub terminal", 0, MAP__ARCH_MAX_TERMS - 1, &t[i]);
  int line = a->line;
  int64_t inner = 0;
  if (!rc)
    rc = ac_arch(a, depth + 1, &inner);
  unsigned char *seen = rc ? NULL : ballast__calloc((size_t)inner, 1);
  if (!rc && !seen)
    rc = BALLAST_ENOMEM;
  int end_line = a->line;
  a->line = line;
  for (int64_t i = 0; i < *nterm && !rc; i++) {
    if (t[i] >= inner)
      rc = ac_fail(a, "sub terminal %lld does not exist: the architecture "
                   "inside has %lld terminals", (long long)t[i],
                   (long long)inner);
    else if (seen[t[i]]++)
      rc = ac_fail(a, "sub terminal %lld listed twice", (long long)t[i]);
  }
  a->line = end_line;
  free(seen);
  free(t);
  return rc;
}

/* One architecture: its name and its fields; \a nterm its terminals. */
static int ac_arch(ac_t *a, int depth, int64_t *nterm) {
  int rc = ac_next(a);
  if (rc < 0)
    return rc;
  if (rc == 0)
    return ac_fail(a, "the file ends where an architecture name was expected");
  if (depth > ARCH_MAX_DEPTH)
    return ac_fail(a, "sub nested more than %d deep", ARCH_MAX_DEPTH);
  char name[sizeof a->tok];
  memcpy(name, a->tok, sizeof name);
  int64_t x;
  if (!strcasecmp(name, "cmplt"))
    return ac_int(a, "the cmplt size", 1, MAP__ARCH_MAX_TERMS, nterm);
  if (!strcasecmp(name, "cmpltw"))
    return ac_cmpltw(a, nterm);
  if (!strcasecmp(name, "hcub")) {
    if ((rc = ac_int(a, "the hcub dimension", 1, 20, &x)))
      return rc;
    *nterm = (int64_t)1 << x;
    return 0;
  }
  if (!strcasecmp(name, "tleaf") || !strcasecmp(name, "ltleaf"))
    return ac_tleaf(a, name[0] == 'l' || name[0] == 'L', nterm);
  if (!strcasecmp(name, "mesh2D") || !strcasecmp(name, "torus2D"))
    return ac_mesh(a, 2, nterm);
  if (!strcasecmp(name, "mesh3D") || !strcasecmp(name, "torus3D"))
    return ac_mesh(a, 3, nterm);
  if (!strcasecmp(name, "meshXD") || !strcasecmp(name, "torusXD"))
    return ac_mesh(a, 0, nterm);
  if (!strcasecmp(name, "sub"))
    return ac_sub(a, depth, nterm);
  if (!strcasecmp(name, "varcmplt") || !strcasecmp(name, "varhcub") ||
      !strcasecmp(name, "deco") || !strcasecmp(name, "dist"))
    return ac_fail(a, "architecture '%s' is not accepted: ballast needs a "
                   "fixed number of nodes it can check (cmplt, cmpltw, hcub, "
                   "tleaf, ltleaf, mesh2D/3D/XD, torus2D/3D/XD, sub)", name);
  return ac_fail(a, "unknown architecture '%s' (expected e.g. \"cmplt 32\", "
                 "\"tleaf 2 4 10 8 1\", \"torus3D 4 4 2\")", name);
}

/* The whole file into memory (bounded), NUL bytes refused. */
static int ac_read(ac_t *a, FILE *f, char **buf) {
  struct stat st;
  if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode))
    return ac_fail(a, "it is a directory");
  size_t cap = 4096, n = 0;
  char *b = ballast__malloc(cap);
  if (!b)
    return BALLAST_ENOMEM;
  for (;;) {
    if (n == cap) {
      if (cap >= (size_t)ARCH_MAX_BYTES) {
        free(b);
        return ac_fail(a, "the file is larger than %ld MiB",
                       ARCH_MAX_BYTES >> 20);
      }
      char *nb = ballast__realloc(b, cap * 2);
      if (!nb) {
        free(b);
        return BALLAST_ENOMEM;
      }
      b = nb;
      cap *= 2;
    }
    size_t got = fread(b + n, 1, cap - n, f);
    n += got;
    if (got == 0)
      break;
  }
  if (ferror(f)) {
    free(b);
    return ac_fail(a, "read error: %s", strerror(errno));
  }
  const char *nul = memchr(b, 0, n);
  if (nul) {
    long off = (long)(nul - b);
    for (const char *p = b; p < nul; p++)
      a->line += *p == '\n';
    free(b);
    return ac_fail(a, "a NUL byte at offset %ld", off);
  }
  a->buf = *buf = b;
  a->len = n;
  return 0;
}

int map__arch_check(FILE *f, const char *path, int64_t *nterm) {
  ac_t a = {.path = path, .line = 1};
  char *buf = NULL;
  int rc = ac_read(&a, f, &buf);
  if (!rc)
    rc = ac_arch(&a, 0, nterm);
  if (!rc && (rc = ac_next(&a)) > 0)
    rc = ac_fail(&a, "unexpected '%s' after the architecture", a.tok);
  free(buf);
  return rc;
}
