/* The table of every BALLAST_* environment variable and its one parser
 * (see env.h for how to add a variable). */
#include "common/env.h"

#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/common_internal.h"

extern char **environ;

/* One row per variable, in the README's order. Bounds that protect memory:
 * BALLAST_REPORT_TOP (regions packed into the report's reductions) and
 * BALLAST_LB_WINDOW (a window of step times on every rank). */
static const ballast__env_t table[] = {
    {"BALLAST_VERBOSE", BALLAST__ENV_INT, 0, 3, 0, NULL, "common"},
    {"BALLAST_MONITOR", BALLAST__ENV_BOOL, 0, 0, 0, NULL, "mon"},
    {"BALLAST_REPORT", BALLAST__ENV_ENUM, 0, 0, 0, "none,terse,full", "mon"},
    {"BALLAST_REPORT_TOP", BALLAST__ENV_INT, 1, 1000, 0, NULL, "mon"},
    {"BALLAST_REGION_CPU", BALLAST__ENV_BOOL, 0, 0, 0, NULL, "mon"},
    {"BALLAST_PROFILE", BALLAST__ENV_STRING, 0, 0, 0, NULL, "mon"},
    {"BALLAST_CUBE", BALLAST__ENV_STRING, 0, 0, 0, NULL, "mon (Cube4 profile)"},
    {"BALLAST_MPIT", BALLAST__ENV_STRING, 0, 0, 0, NULL, "mon (MPI_T)"},
    {"BALLAST_REPEAT", BALLAST__ENV_STRING, 0, 0, 0, NULL, "mon (repeated regions)"},
    {"BALLAST_REPEAT_KEEP", BALLAST__ENV_INT, 16, 16777216, 0, NULL, "mon (repeated regions)"},
    {"BALLAST_REPEAT_REDUCE", BALLAST__ENV_INT, 0, 65536, 0, NULL, "mon (repeated regions)"},
    {"BALLAST_REPEAT_WARMUP_MIN", BALLAST__ENV_INT, 2, 1000000, 0, NULL, "mon (repeated regions)"},
    {"BALLAST_REPEAT_WARMUP_DROP", BALLAST__ENV_DOUBLE, 0, 1, 1, NULL, "mon (repeated regions)"},
    {"BALLAST_REPEAT_SETTLE", BALLAST__ENV_INT, 3, 1000000, 0, NULL, "mon (repeated regions)"},
    {"BALLAST_REPEAT_WARMUP_MAX", BALLAST__ENV_INT, 0, 100000000, 0, NULL, "mon (repeated regions)"},
    {"BALLAST_REPEAT_OUTLIER", BALLAST__ENV_DOUBLE, 1, 1e6, 1, NULL, "mon (repeated regions)"},
    {"BALLAST_LB", BALLAST__ENV_ENUM, 0, 0, 0, "off,explicit,auto,0,1", "lb"},
    {"BALLAST_LB_THRESHOLD", BALLAST__ENV_DOUBLE, 1, 1e6, 0, NULL, "lb"},
    {"BALLAST_LB_WINDOW", BALLAST__ENV_INT, 3, 10000, 0, NULL, "lb"},
    {"BALLAST_LB_WARMUP", BALLAST__ENV_INT, 0, 1000000, 0, NULL, "lb"},
    {"BALLAST_LB_HORIZON", BALLAST__ENV_INT, 1, 1000000000, 0, NULL, "lb"},
    {"BALLAST_LB_OUTLIER", BALLAST__ENV_DOUBLE, 1, 1e6, 1, NULL, "lb"},
    {"BALLAST_LB_RECORD", BALLAST__ENV_STRING, 0, 0, 0, NULL, "lb (record)"},
    {"BALLAST_LB_RECORD_MAX", BALLAST__ENV_INT, 1, 1048576, 0, NULL, "lb (record)"},
    {"BALLAST_LB_WARMSTART", BALLAST__ENV_STRING, 0, 0, 0, NULL, "lb"},
    {"BALLAST_LB_TRANSPORT", BALLAST__ENV_ENUM, 0, 0, 0, "auto,batch,read", "lb (migration)"},
    {"BALLAST_HW_LAYOUT", BALLAST__ENV_STRING, 0, 0, 0, NULL, "map"},
    {"BALLAST_REORDER", BALLAST__ENV_BOOL, 0, 0, 0, NULL, "mon (topology reordering)"},
    {"BALLAST_SKIP_SANITIZE", BALLAST__ENV_STRING, 0, 0, 0, NULL, "scripts/test.sh"},
    /* Families validated by their own modules. */
    {"BALLAST_PROFILE_", BALLAST__ENV_FAMILY, 0, 0, 0, NULL, "mon (crash profiles)"},
    {"BALLAST_TOOLS", BALLAST__ENV_FAMILY, 0, 0, 0, NULL, "tool dispatch"},
    {"BALLAST_HTML", BALLAST__ENV_FAMILY, 0, 0, 0, NULL, "HTML report"},
    {"BALLAST_TRACE_", BALLAST__ENV_FAMILY, 0, 0, 0, NULL, "trace writers"},
    {"BALLAST_ASSERT_", BALLAST__ENV_FAMILY, 0, 0, 0, NULL, "assert"},
};

#define NROWS ((int)(sizeof table / sizeof table[0]))

static char warned[NROWS];
static int checked;

static int row_of(const char *name) {
  for (int i = 0; i < NROWS; i++)
    if (table[i].kind != BALLAST__ENV_FAMILY && !strcmp(table[i].name, name))
      return i;
  return -1;
}

/* The index of \a s among the comma-separated \a list (any case), or -1. */
static int choice_index(const char *list, const char *s) {
  size_t n = strlen(s);
  int idx = 0;
  for (const char *p = list; *p; idx++) {
    const char *e = strchr(p, ',');
    size_t l = e ? (size_t)(e - p) : strlen(p);
    if (l == n && !strncasecmp(p, s, n))
      return idx;
    if (!e)
      break;
    p = e + 1;
  }
  return -1;
}

static int parse_bool(const char *s, double *num) {
  int i = choice_index("0,off,no,false,1,on,yes,true", s);
  if (i < 0)
    return 0;
  *num = i >= 4;
  return 1;
}

static int parse_number(const ballast__env_t *r, const char *s, double *num,
                        char *why, int whylen) {
  char *end;
  errno = 0;
  double d;
  if (r->kind == BALLAST__ENV_INT) {
    long long v = strtoll(s, &end, 10);
    d = (double)v;
    if (errno == ERANGE)
      d = v < 0 ? -INFINITY : INFINITY;
  } else {
    d = strtod(s, &end);
  }
  /* strtod skips leading spaces; a trailing one is junk too. */
  if (end == s || isspace((unsigned char)*s) || *end || isnan(d)) {
    snprintf(why, (size_t)whylen, "is not %s", r->kind == BALLAST__ENV_INT
                                                    ? "an integer" : "a number");
    return 0;
  }
  if (d < r->lo || d > r->hi || (r->lo_open && d == r->lo)) {
    if (r->kind == BALLAST__ENV_INT)
      snprintf(why, (size_t)whylen, "is out of range (%.0f..%.0f)", r->lo, r->hi);
    else
      snprintf(why, (size_t)whylen, "is out of range (%s %g, at most %g)",
               r->lo_open ? "above" : "at least", r->lo, r->hi);
    return 0;
  }
  *num = d;
  return 1;
}

static int parse_row(const ballast__env_t *r, const char *s, double *num,
                     char *why, int whylen) {
  switch (r->kind) {
  case BALLAST__ENV_BOOL:
    if (parse_bool(s, num))
      return 1;
    snprintf(why, (size_t)whylen, "is not a boolean (1/0, on/off, yes/no, true/false)");
    return 0;
  case BALLAST__ENV_INT:
  case BALLAST__ENV_DOUBLE:
    return parse_number(r, s, num, why, whylen);
  case BALLAST__ENV_ENUM: {
    int i = choice_index(r->choices, s);
    if (i >= 0) {
      *num = i;
      return 1;
    }
    snprintf(why, (size_t)whylen, "is not one of %s", r->choices);
    return 0;
  }
  case BALLAST__ENV_STRING:
  case BALLAST__ENV_FAMILY:
    break;
  }
  *num = 0;
  return 1;
}

int ballast__env_parse(const char *name, const char *s, double *num, char *why,
                       int whylen) {
  int i = row_of(name);
  if (i < 0) {
    snprintf(why, (size_t)whylen, "is not a ballast variable");
    return 0;
  }
  return parse_row(&table[i], s, num, why, whylen);
}

/* Rank 0 (or any process outside MPI) says it, once per variable. */
static void warn_bad(int i, const char *s, const char *why) {
  if (__atomic_exchange_n(&warned[i], 1, __ATOMIC_RELAXED))
    return;
  if (ballast__world_rank() > 0)
    return;
  char v[96];
  ballast__escape(s, "\"", v, sizeof v);
  BALLAST_WARN("%s=\"%s\" %s; ignored (the default or the program's setting applies)",
               table[i].name, v, why);
}

/* The value of the variable of row \a i: 0 unset, 1 valid, BALLAST_EINVAL. */
static int read_row(const char *name, ballast__env_kind_t kind, double *num) {
  int i = row_of(name);
  assert(i >= 0 && table[i].kind == kind);
  if (i < 0 || table[i].kind != kind)
    return BALLAST_EINVAL; /* a reader of a variable not in the table */
  const char *s = getenv(name);
  if (!s || !*s)
    return 0;
  char why[128];
  if (!parse_row(&table[i], s, num, why, sizeof why)) {
    warn_bad(i, s, why);
    return BALLAST_EINVAL;
  }
  return 1;
}

/* The readers whose values are ints (a boolean, an integer, a choice). */
static int read_int(const char *name, ballast__env_kind_t kind, int *out) {
  double d;
  int rc = read_row(name, kind, &d);
  if (rc == 1)
    *out = (int)d;
  return rc;
}

int ballast__env_bool(const char *name, int *out) {
  return read_int(name, BALLAST__ENV_BOOL, out);
}

int ballast__env_int(const char *name, int *out) {
  return read_int(name, BALLAST__ENV_INT, out);
}

int ballast__env_enum(const char *name, int *out) {
  return read_int(name, BALLAST__ENV_ENUM, out);
}

int ballast__env_double(const char *name, double *out) {
  return read_row(name, BALLAST__ENV_DOUBLE, out); /* writes only a valid value */
}

const char *ballast__env_string(const char *name) {
  double d;
  return read_row(name, BALLAST__ENV_STRING, &d) == 1 ? getenv(name) : NULL;
}

int ballast__env_verbosity(void) {
  const char *s = getenv("BALLAST_VERBOSE");
  double d;
  char why[128];
  if (!s || !*s || !parse_row(&table[row_of("BALLAST_VERBOSE")], s, &d, why, sizeof why))
    return BALLAST_LOG_WARN;
  return (int)d;
}

/* Is \a name (up to its '=') a variable of the table or of a family? */
static int known(const char *name, size_t len) {
  for (int i = 0; i < NROWS; i++) {
    size_t l = strlen(table[i].name);
    if (table[i].kind == BALLAST__ENV_FAMILY ? len >= l && !strncmp(name, table[i].name, l)
                                             : len == l && !strncmp(name, table[i].name, l))
      return 1;
  }
  return 0;
}

/* Levenshtein distance of two short names (bounded by 64 characters). */
static int distance(const char *a, size_t la, const char *b) {
  size_t lb = strlen(b);
  if (la > 63 || lb > 63)
    return 99;
  int row[64];
  for (size_t j = 0; j <= lb; j++)
    row[j] = (int)j;
  for (size_t i = 1; i <= la; i++) {
    int diag = row[0];
    row[0] = (int)i;
    for (size_t j = 1; j <= lb; j++) {
      int up = row[j];
      int best = diag + (a[i - 1] != b[j - 1]);
      if (up + 1 < best)
        best = up + 1;
      if (row[j - 1] + 1 < best)
        best = row[j - 1] + 1;
      row[j] = best;
      diag = up;
    }
  }
  return row[lb];
}

static void warn_unknown(const char *name, size_t len) {
  const char *best = NULL;
  int bd = 4; /* suggest only a close name */
  for (int i = 0; i < NROWS; i++) {
    if (table[i].kind == BALLAST__ENV_FAMILY)
      continue;
    int d = distance(name, len, table[i].name);
    if (d < bd)
      bd = d, best = table[i].name;
  }
  char v[96];
  char raw[80];
  snprintf(raw, sizeof raw, "%.*s", (int)(len < sizeof raw ? len : sizeof raw - 1), name);
  ballast__escape(raw, NULL, v, sizeof v);
  if (best)
    BALLAST_WARN("%s is not a ballast variable; ignored (did you mean %s?)", v, best);
  else
    BALLAST_WARN("%s is not a ballast variable; ignored (the README lists them)", v);
}

void ballast__env_check(void) {
  if (__atomic_exchange_n(&checked, 1, __ATOMIC_RELAXED))
    return;
  for (int i = 0; i < NROWS; i++) {
    const char *s = getenv(table[i].name);
    double d;
    char why[128];
    if (table[i].kind != BALLAST__ENV_FAMILY && s && *s &&
        !parse_row(&table[i], s, &d, why, sizeof why))
      warn_bad(i, s, why);
  }
  if (ballast__world_rank() > 0)
    return;
  for (char **e = environ; e && *e; e++) {
    if (strncmp(*e, "BALLAST_", 8))
      continue;
    const char *eq = strchr(*e, '=');
    size_t len = eq ? (size_t)(eq - *e) : strlen(*e);
    if (!known(*e, len))
      warn_unknown(*e, len);
  }
}
