/* ballast-cube's queries (see cube_query.h and README.md). Every rank
 * parses the same line the same way, so a refusal is the same everywhere
 * without communication; the values are computed by the server's
 * collective passes and printed by rank 0. */
#define _GNU_SOURCE
#include "cube_query.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <ballast/common.h>

#define MAXTOK 16

typedef struct {
  int ntok;
  char *tok[MAXTOK];
  char buf[4096];
} toks_t;

/* Splits on blanks; "..." quotes a token with blanks inside. */
static int tokenize(const char *line, toks_t *t, char *err, size_t errlen) {
  size_t n = strlen(line);
  if (n >= sizeof t->buf) {
    snprintf(err, errlen, "query longer than %zu characters", sizeof t->buf - 1);
    return -1;
  }
  memcpy(t->buf, line, n + 1);
  t->ntok = 0;
  char *p = t->buf;
  for (;;) {
    while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n') p++;
    if (!*p || *p == '#') return 0;
    if (t->ntok == MAXTOK) {
      snprintf(err, errlen, "too many words");
      return -1;
    }
    if (*p == '"') {
      char *q = strchr(p + 1, '"');
      if (!q) {
        snprintf(err, errlen, "unterminated quote");
        return -1;
      }
      *q = '\0';
      t->tok[t->ntok++] = p + 1;
      p = q + 1;
      continue;
    }
    t->tok[t->ntok++] = p;
    while (*p && *p != ' ' && *p != '\t' && *p != '\r' && *p != '\n') p++;
    if (*p) *p++ = '\0';
  }
}

static int64_t loc_index(const cube_t *c, int64_t id) {
  int64_t lo = 0, hi = c->nloc - 1;
  while (lo <= hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (c->loc_id[mid] == id) return mid;
    if (c->loc_id[mid] < id) lo = mid + 1; else hi = mid - 1;
  }
  return -1;
}

static int parse_num(const char *s, int64_t *v) {
  char *end;
  errno = 0;
  long long x = strtoll(s, &end, 10);
  if (end == s || errno || x < 0) return -1;
  *v = x;
  return (int)(end - s);
}

/* "@3,5-9": location ids, single or ranges. */
static int parse_sel(const cube_t *c, const char *s, sel_t *sel, char *err, size_t errlen) {
  int64_t cap = 16;
  sel->n = 0;
  sel->idx = malloc((size_t)cap * sizeof *sel->idx);
  const char *p = s + 1;
  while (sel->idx) {
    int64_t a, b;
    int k = parse_num(p, &a);
    if (k < 0) break;
    p += k;
    b = a;
    if (*p == '-') {
      if ((k = parse_num(p + 1, &b)) < 0 || b < a) break;
      p += k + 1;
    }
    if (b - a > c->nloc) break;
    for (int64_t id = a; id <= b; id++) {
      int64_t ix = loc_index(c, id);
      if (ix < 0) {
        snprintf(err, errlen, "no location with id %" PRId64, id);
        return -1;
      }
      if (sel->n == cap) {
        int64_t *ni = realloc(sel->idx, (size_t)(cap *= 2) * sizeof *ni);
        if (!ni) { snprintf(err, errlen, "out of memory"); return -1; }
        sel->idx = ni;
      }
      sel->idx[sel->n++] = ix;
    }
    if (*p == '\0') return 0;
    if (*p++ != ',') break;
  }
  snprintf(err, errlen, "bad location list '%s' (expected @ID,ID-ID,...)", s);
  return -1;
}

typedef struct {
  const char *verb; /* incl, excl, locs */
  int m;
  int64_t x;
  int inclusive, per_loc;
  sel_t sel;
} valq_t;

/* verb METRIC PATH [incl|excl] [@LOCS] from tok[at]. */
static int parse_value(const srv_t *s, toks_t *t, int at, valq_t *q, char *err, size_t errlen) {
  const cube_t *c = s->c;
  q->verb = t->tok[at];
  q->sel.n = -1;
  q->sel.idx = NULL;
  q->per_loc = strcmp(q->verb, "locs") == 0;
  q->inclusive = strcmp(q->verb, "excl") != 0;
  if (t->ntok - at < 3) {
    snprintf(err, errlen, "%s needs a metric and a call path", q->verb);
    return -1;
  }
  if ((q->m = cube_find_metric(c, t->tok[at + 1])) < 0) {
    snprintf(err, errlen, "no metric '%s'", t->tok[at + 1]);
    return -1;
  }
  if ((q->x = cube_find_cnode(c, t->tok[at + 2])) < 0) {
    snprintf(err, errlen, "no call path '%s'", t->tok[at + 2]);
    return -1;
  }
  for (int i = at + 3; i < t->ntok; i++) {
    if (t->tok[i][0] == '@' && q->sel.n < 0) {
      if (parse_sel(c, t->tok[i], &q->sel, err, errlen)) return -1;
    } else if (q->per_loc && (strcmp(t->tok[i], "incl") == 0 || strcmp(t->tok[i], "excl") == 0)) {
      q->inclusive = strcmp(t->tok[i], "incl") == 0;
    } else {
      snprintf(err, errlen, "unexpected '%s'", t->tok[i]);
      return -1;
    }
  }
  return 0;
}

/* A value as printed: %.17g, or "none" for a MIN/MAX metric's no value. */
static const char *val_str(const cube_metric_t *m, double v, char buf[32]) {
  if (cube_no_value(m, v))
    return "none";
  snprintf(buf, 32, "%.17g", v);
  return buf;
}

static int64_t qwidth(const srv_t *s, const valq_t *q) {
  return q->per_loc ? (q->sel.n < 0 ? s->c->nloc : q->sel.n) : 1;
}

static int run_value(srv_t *s, toks_t *t, FILE *out, char *err, size_t errlen) {
  valq_t q;
  int rc = parse_value(s, t, 0, &q, err, errlen);
  if (rc) { free(q.sel.idx); return 1; }
  int64_t w = qwidth(s, &q);
  double *v = malloc((size_t)(w ? w : 1) * sizeof *v);
  rc = v ? srv_value(s, q.m, q.x, q.inclusive, &q.sel, q.per_loc, v, err, errlen) : BALLAST_ENOMEM;
  if (!rc && s->rank == 0) {
    const cube_metric_t *mt = &s->c->metric[q.m];
    char b0[32];
    if (!q.per_loc) fprintf(out, "value %s\n", val_str(mt, v[0], b0));
    for (int64_t k = 0; q.per_loc && k < w; k++)
      fprintf(out, "loc %" PRId64 " %s\n", s->c->loc_id[q.sel.n < 0 ? k : q.sel.idx[k]],
              val_str(mt, v[k], b0));
  }
  free(v);
  free(q.sel.idx);
  return rc ? 1 : 0;
}

static int run_top(srv_t *s, toks_t *t, FILE *out, char *err, size_t errlen) {
  int64_t k = 0;
  if (t->ntok < 3 || t->ntok > 4 || parse_num(t->tok[1], &k) != (int)strlen(t->tok[1]) ||
      k < 1 || k > 1000000) {
    snprintf(err, errlen, "usage: top K METRIC [incl|excl] (K from 1 to 1000000)");
    return 1;
  }
  int m = cube_find_metric(s->c, t->tok[2]);
  int incl = t->ntok == 4 ? strcmp(t->tok[3], "incl") == 0 : 0;
  if (m < 0 || (t->ntok == 4 && !incl && strcmp(t->tok[3], "excl") != 0)) {
    snprintf(err, errlen, m < 0 ? "no metric '%s'" : "expected incl or excl, not '%s'",
             m < 0 ? t->tok[2] : t->tok[3]);
    return 1;
  }
  int64_t *cn = malloc((size_t)k * sizeof *cn);
  double *v = malloc((size_t)k * sizeof *v);
  int n = 0, rc = (cn && v) ? srv_top(s, m, incl, (int)k, cn, v, &n, err, errlen) : BALLAST_ENOMEM;
  char path[2048];
  for (int i = 0; !rc && s->rank == 0 && i < n; i++) {
    cube_cnode_path(s->c, cn[i], path, sizeof path);
    fprintf(out, "top %d %.17g %s\n", i + 1, v[i], path);
  }
  free(cn);
  free(v);
  return rc ? 1 : 0;
}

/* B's value for A's query: the same metric (uniq_name) and call path
 * (region names); what B lacks counts as 0, as in cube_diff. */
static int diff_b(srv_t *a, srv_t *b, const valq_t *q, double *vb, int64_t w, char *err,
                  size_t errlen) {
  char path[4096];
  for (int64_t l = 0; l < w; l++) vb[l] = 0;
  int mb = cube_find_metric(b->c, a->c->metric[q->m].uniq_name);
  cube_cnode_path(a->c, q->x, path, sizeof path);
  int64_t xb = cube_find_cnode(b->c, path);
  if (mb < 0 || xb < 0 || !b->c->metric[mb].has_data) return 0;
  return srv_value(b, mb, xb, q->inclusive, &q->sel, q->per_loc, vb, err, errlen);
}

static int run_diff(srv_t *a, srv_t *b, toks_t *t, FILE *out, char *err, size_t errlen) {
  if (!b) {
    snprintf(err, errlen, "diff needs a second profile (ballast-cube A.cubex B.cubex)");
    return 1;
  }
  if (t->ntok < 2 || (strcmp(t->tok[1], "incl") && strcmp(t->tok[1], "excl") &&
                      strcmp(t->tok[1], "locs"))) {
    snprintf(err, errlen, "usage: diff incl|excl|locs METRIC PATH ...");
    return 1;
  }
  valq_t q;
  if (parse_value(a, t, 1, &q, err, errlen)) { free(q.sel.idx); return 1; }
  if (q.per_loc && a->c->nloc != b->c->nloc) {
    snprintf(err, errlen, "per-location diff needs the same locations (%" PRId64 " and %"
             PRId64 ")", a->c->nloc, b->c->nloc);
    free(q.sel.idx);
    return 1;
  }
  int64_t w = qwidth(a, &q);
  double *va = malloc((size_t)(2 * w + 1) * sizeof *va), *vb = va ? va + w : NULL;
  int rc = va ? srv_value(a, q.m, q.x, q.inclusive, &q.sel, q.per_loc, va, err, errlen)
              : BALLAST_ENOMEM;
  if (!rc) rc = diff_b(a, b, &q, vb, w, err, errlen);
  const cube_metric_t *mt = &a->c->metric[q.m];
  for (int64_t k = 0; !rc && a->rank == 0 && k < w; k++) {
    /* a side without a value prints none, and so does the difference */
    char ba[32], bb[32], bd[32];
    int none = cube_no_value(mt, va[k]) || cube_no_value(mt, vb[k]);
    const char *d = none ? "none" : val_str(mt, va[k] - vb[k], bd);
    if (q.per_loc)
      fprintf(out, "loc %" PRId64 " %s %s %s\n", a->c->loc_id[q.sel.n < 0 ? k : q.sel.idx[k]],
              val_str(mt, va[k], ba), val_str(mt, vb[k], bb), d);
    else
      fprintf(out, "diff %s %s %s\n", val_str(mt, va[0], ba), val_str(mt, vb[0], bb), d);
  }
  free(va);
  free(q.sel.idx);
  return rc ? 1 : 0;
}

static int run_mem(srv_t *s, FILE *out) {
  long mine[4] = {srv_vmhwm_kib(), (long)s->row_bytes, (long)cube_meta_bytes(s->c),
                  (long)s->nown};
  long *all = s->rank == 0 ? malloc((size_t)s->size * sizeof mine) : NULL;
  MPI_Gather(mine, 4, MPI_LONG, all, 4, MPI_LONG, 0, s->comm);
  for (int r = 0; all && r < s->size; r++)
    fprintf(out, "mem rank %d vmhwm_kib %ld rows_bytes %ld meta_bytes %ld owned %ld\n", r,
            all[4 * r], all[4 * r + 1], all[4 * r + 2], all[4 * r + 3]);
  free(all);
  return 0;
}

static int run_rebalance(srv_t *s, toks_t *t, FILE *out, char *err, size_t errlen) {
  if (t->ntok != 1) {
    snprintf(err, errlen, "usage: rebalance");
    return 1;
  }
  int64_t moved = 0;
  double before = 0, after = 0;
  int rc = srv_rebalance(s, 1, &moved, &before, &after, err, errlen);
  if (rc < 0) return rc; /* the profile's state is unknown: end the session */
  if (s->rank == 0)
    fprintf(out, "rebalance moved %" PRId64 " cnodes, query cost max/mean %.3f -> %.3f\n",
            moved, before, after);
  return 0;
}

int query_run(srv_t *a, srv_t *b, const char *line, FILE *out) {
  char err[CUBE_ERRLEN] = "";
  toks_t t;
  int rc;
  if (tokenize(line, &t, err, sizeof err)) rc = 1;
  else if (t.ntok == 0) return 0;
  else if (!strcmp(t.tok[0], "incl") || !strcmp(t.tok[0], "excl") || !strcmp(t.tok[0], "locs"))
    rc = run_value(a, &t, out, err, sizeof err);
  else if (!strcmp(t.tok[0], "top")) rc = run_top(a, &t, out, err, sizeof err);
  else if (!strcmp(t.tok[0], "diff")) rc = run_diff(a, b, &t, out, err, sizeof err);
  else if (!strcmp(t.tok[0], "mem")) rc = run_mem(a, out);
  else if (!strcmp(t.tok[0], "rebalance")) rc = run_rebalance(a, &t, out, err, sizeof err);
  else {
    snprintf(err, sizeof err, "unknown query '%s' (incl, excl, locs, top, diff, mem, rebalance)", t.tok[0]);
    rc = 1;
  }
  if (rc && a->rank == 0) fprintf(out, "error %s\n", err[0] ? err : "query failed");
  return rc;
}
