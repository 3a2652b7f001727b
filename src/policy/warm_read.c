/*
 * Warm start's table (policy.h): an earlier run of the same task tree read
 * into key -> (slot, seconds per step), from one of two sources:
 * - a load-balancing record (policy.h): each task's last slot and mean
 *   measured cost, through the record's reader;
 * - a job profile (BALLAST_PROFILE; mon's JSON): the context's last task map
 *   from "lb_series" (keys carried over from earlier maps when a map omits
 *   them), and each task's time per step from the ranks' region data (a
 *   task is clocked as a region named by its key: wall minus MPI time, capped
 *   by CPU time, over its count, summed over ranks).
 * No MPI and no task runtime: lb applies the table to a context (lb_warm.c).
 */
#include "policy/policy.h"

#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common_internal.h"

#define MAX_DEPTH 64
#define MAX_FILE (1LL << 30)

/* One task of the earlier run. */
typedef struct {
  char *key;
  int slot;    /* where it ran last; -1: not known */
  double cost; /* seconds per step; 0: not known */
  long long count;
} row_t;

struct policy__warm {
  int64_t n;
  row_t *rows; /* sorted by key */
};

/* ---- a small JSON reader (the profile is ballast's own output) ------------ */

typedef struct jv {
  char type; /* 'o' object, 'a' array, 's' string, 'n' number, 'b' bool, 'z' null */
  double num;
  char *str;
  int n, cap;
  char **keys;      /* objects: n member names */
  struct jv *items; /* objects and arrays: n values */
} jv_t;

typedef struct {
  const char *p, *end;
  int bad;
} jp_t;

static void jv_free(jv_t *v) {
  for (int i = 0; i < v->n; i++) {
    if (v->keys)
      free(v->keys[i]);
    jv_free(&v->items[i]);
  }
  free(v->keys);
  free(v->items);
  free(v->str);
}

static void ws(jp_t *j) {
  while (j->p < j->end && isspace((unsigned char)*j->p))
    j->p++;
}

/* Four hex digits at j->p as a number, -1 when they are not. */
static long hex4(jp_t *j) {
  long u = 0;
  if (j->end - j->p < 4)
    return -1;
  for (int k = 0; k < 4; k++) {
    int c = (unsigned char)*j->p++, d = c >= '0' && c <= '9'   ? c - '0'
                                       : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                       : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                                              : -1;
    if (d < 0)
      return -1;
    u = u * 16 + d;
  }
  return u;
}

/* The code point of a \u escape (j->p after the 'u'), a surrogate pair
 * joined (Python's json, which ballast-profile-merge writes with, escapes
 * every non-ASCII character so, and those beyond U+FFFF as pairs); -1 for
 * a malformed one, a lone surrogate or U+0000 (a key cannot hold it). */
static long jescape_u(jp_t *j) {
  long u = hex4(j);
  if (u >= 0xDC00 && u <= 0xDFFF)
    return -1;
  if (u >= 0xD800 && u <= 0xDBFF) {
    if (j->end - j->p < 6 || j->p[0] != '\\' || j->p[1] != 'u')
      return -1;
    j->p += 2;
    long lo = hex4(j);
    if (lo < 0xDC00 || lo > 0xDFFF)
      return -1;
    u = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
  }
  return u > 0 ? u : -1;
}

/* Code point \a u as UTF-8 into \a out; its length (1-4). */
static int utf8_put(long u, char *out) {
  if (u < 0x80) {
    out[0] = (char)u;
    return 1;
  }
  if (u < 0x800) {
    out[0] = (char)(0xC0 | (u >> 6));
    out[1] = (char)(0x80 | (u & 0x3F));
    return 2;
  }
  if (u < 0x10000) {
    out[0] = (char)(0xE0 | (u >> 12));
    out[1] = (char)(0x80 | ((u >> 6) & 0x3F));
    out[2] = (char)(0x80 | (u & 0x3F));
    return 3;
  }
  out[0] = (char)(0xF0 | (u >> 18));
  out[1] = (char)(0x80 | ((u >> 12) & 0x3F));
  out[2] = (char)(0x80 | ((u >> 6) & 0x3F));
  out[3] = (char)(0x80 | (u & 0x3F));
  return 4;
}

/* A string at j->p (after the quote), escapes decoded; \uXXXX (and
 * surrogate pairs) become UTF-8, so keys written escaped (as
 * ballast-profile-merge writes every non-ASCII character) match the task
 * keys. NULL (j->bad set, or no memory) for a malformed one. */
static char *jstring(jp_t *j) {
  size_t cap = 16, len = 0;
  char *s = ballast__malloc(cap);
  while (s && j->p < j->end && *j->p != '"') {
    char c[4] = {*j->p++};
    int n = 1;
    if (c[0] == '\\' && j->p < j->end) {
      c[0] = *j->p++;
      if (c[0] == 'n') c[0] = '\n';
      else if (c[0] == 't') c[0] = '\t';
      else if (c[0] == 'r') c[0] = '\r';
      else if (c[0] == 'b') c[0] = '\b';
      else if (c[0] == 'f') c[0] = '\f';
      else if (c[0] == 'u') {
        long u = jescape_u(j);
        if (u < 0) {
          j->bad = 1;
          break;
        }
        n = utf8_put(u, c);
      }
    }
    if (len + (size_t)n + 1 > cap) {
      char *t = ballast__realloc(s, cap *= 2);
      if (!t) {
        free(s);
        return NULL;
      }
      s = t;
    }
    memcpy(s + len, c, (size_t)n);
    len += (size_t)n;
  }
  if (!s || j->bad || j->p >= j->end) {
    free(s);
    j->bad = 1;
    return NULL;
  }
  j->p++;
  s[len] = 0;
  return s;
}

static int jvalue(jp_t *j, jv_t *v, int depth);

/* Appends a member (object: \a key owned) or item; 0 or -1. */
static int jpush(jv_t *v, char *key, jv_t *item) {
  if (v->n == v->cap) {
    int cap = v->cap ? 2 * v->cap : 4;
    jv_t *it = ballast__realloc(v->items, (size_t)cap * sizeof *it);
    if (!it)
      return -1;
    v->items = it;
    if (v->type == 'o') {
      char **k = ballast__realloc(v->keys, (size_t)cap * sizeof *k);
      if (!k)
        return -1;
      v->keys = k;
    }
    v->cap = cap;
  }
  if (v->type == 'o')
    v->keys[v->n] = key;
  v->items[v->n++] = *item;
  return 0;
}

/* The members of an object or items of an array, after its bracket. */
static int jcompound(jp_t *j, jv_t *v, int depth) {
  char close = v->type == 'o' ? '}' : ']';
  ws(j);
  if (j->p < j->end && *j->p == close) {
    j->p++;
    return 0;
  }
  for (;;) {
    char *key = NULL;
    ws(j);
    if (v->type == 'o') {
      if (j->p >= j->end || *j->p != '"')
        return j->bad = 1, -1;
      j->p++;
      if (!(key = jstring(j)))
        return -1;
      ws(j);
      if (j->p >= j->end || *j->p++ != ':') {
        free(key);
        return j->bad = 1, -1;
      }
    }
    jv_t item;
    if (jvalue(j, &item, depth + 1) || jpush(v, key, &item)) {
      if (!j->bad)
        jv_free(&item);
      free(key);
      return j->bad = 1, -1;
    }
    ws(j);
    if (j->p < j->end && *j->p == ',') {
      j->p++;
      continue;
    }
    if (j->p < j->end && *j->p == close) {
      j->p++;
      return 0;
    }
    return j->bad = 1, -1;
  }
}

static int jvalue(jp_t *j, jv_t *v, int depth) {
  memset(v, 0, sizeof *v);
  ws(j);
  if (j->p >= j->end || depth > MAX_DEPTH)
    return j->bad = 1, -1;
  char c = *j->p;
  if (c == '{' || c == '[') {
    j->p++;
    v->type = c == '{' ? 'o' : 'a';
    if (jcompound(j, v, depth)) {
      jv_free(v);
      memset(v, 0, sizeof *v);
      return j->bad = 1, -1;
    }
    return 0;
  }
  if (c == '"') {
    j->p++;
    v->type = 's';
    return (v->str = jstring(j)) ? 0 : (j->bad = 1, -1);
  }
  static const char *words[] = {"true", "false", "null"};
  for (int w = 0; w < 3; w++) {
    size_t l = strlen(words[w]);
    if ((size_t)(j->end - j->p) >= l && !strncmp(j->p, words[w], l)) {
      j->p += l;
      v->type = w < 2 ? 'b' : 'z';
      v->num = w == 0;
      return 0;
    }
  }
  char *e;
  v->type = 'n';
  v->num = strtod(j->p, &e);
  if (e == j->p || e > j->end)
    return j->bad = 1, -1;
  j->p = e;
  return 0;
}

static const jv_t *jget(const jv_t *o, const char *key) {
  if (!o || o->type != 'o')
    return NULL;
  for (int i = 0; i < o->n; i++)
    if (!strcmp(o->keys[i], key))
      return &o->items[i];
  return NULL;
}

static double jnum(const jv_t *o, const char *key, double dflt) {
  const jv_t *v = jget(o, key);
  return v && v->type == 'n' ? v->num : dflt;
}

/* A number as a rank or count: -1 unless a whole number in 0..INT_MAX. */
static int jint(double x) {
  return x >= 0 && x <= (double)INT_MAX && x == floor(x) ? (int)x : -1;
}

/* ---- the table ------------------------------------------------------------- */

void policy__warm_free(policy__warm_t *w) {
  if (!w)
    return;
  for (int64_t i = 0; i < w->n; i++)
    free(w->rows[i].key);
  free(w->rows);
  free(w);
}

static policy__warm_t *warm_alloc(int64_t n) {
  policy__warm_t *w = ballast__calloc(1, sizeof *w);
  if (w && !(w->rows = ballast__calloc((size_t)(n ? n : 1), sizeof *w->rows))) {
    free(w);
    return NULL;
  }
  return w;
}

/* Appends a row (key copied); 0 or BALLAST_ENOMEM. Room for it exists. */
static int warm_add(policy__warm_t *w, const char *key, int slot, double cost) {
  row_t *r = &w->rows[w->n];
  if (!(r->key = ballast__strdup(key)))
    return BALLAST_ENOMEM;
  r->slot = slot;
  r->cost = cost;
  w->n++;
  return 0;
}

static int row_cmp(const void *a, const void *b) {
  return strcmp(((const row_t *)a)->key, ((const row_t *)b)->key);
}

static row_t *warm_find(const policy__warm_t *w, const char *key) {
  row_t k = {.key = (char *)key};
  return bsearch(&k, w->rows, (size_t)w->n, sizeof *w->rows, row_cmp);
}

/* ---- from a record ----------------------------------------------------------- */

static int from_record(const char *root, int size, const char *path, policy__warm_t **out,
                       char *why, size_t nwhy) {
  policy__t *r;
  int rc = policy__open(path, &r);
  if (rc) {
    snprintf(why, nwhy, "not a readable load-balancing record (%s)", ballast_err_name(rc));
    return rc;
  }
  if (strcmp(r->root, root) || r->ranks != size) {
    snprintf(why, nwhy, "it records root \"%s\" on %d ranks, this context is \"%s\" "
             "on %d ranks (another task tree)", r->root, r->ranks, root, size);
    policy__close(r);
    return BALLAST_EMISMATCH;
  }
  policy__warm_t *w = warm_alloc(r->nkeys);
  rc = w ? 0 : BALLAST_ENOMEM;
  for (int64_t k = 0; !rc && k < r->nkeys; k++) {
    policy__task_t t;
    if (policy__task(r, r->keys[k], &t) == 0)
      rc = warm_add(w, r->keys[k], t.nprocs == 1 ? t.slot : -1, t.mean_cost);
  }
  policy__close(r);
  if (rc) {
    policy__warm_free(w);
    return rc;
  }
  qsort(w->rows, (size_t)w->n, sizeof *w->rows, row_cmp);
  *out = w;
  return 0;
}

/* ---- from a profile ------------------------------------------------------------ */

/* The last context of "lb_series" over this root and number of ranks. */
static const jv_t *profile_context(const jv_t *prof, const char *root_key, int size,
                                   char *why, size_t nwhy) {
  const jv_t *cs = jget(jget(prof, "lb_series"), "contexts"), *found = NULL;
  size_t used = (size_t)snprintf(why, nwhy, "it holds no load-balancing context over root "
                                 "\"%s\" on %d ranks (another task tree; it has:",
                                 root_key, size);
  for (int i = 0; cs && cs->type == 'a' && i < cs->n; i++) {
    const jv_t *c = &cs->items[i], *root = jget(c, "root");
    if (!root || root->type != 's')
      continue;
    if (!strcmp(root->str, root_key) && jint(jnum(c, "ranks", -1)) == size)
      found = c;
    if (used < nwhy)
      used += (size_t)snprintf(why + used, nwhy - used, " \"%s\" on %d ranks", root->str,
                               jint(jnum(c, "ranks", -1)));
  }
  if (used < nwhy)
    snprintf(why + used, nwhy - used, "%s)", cs && cs->n ? "" : " none");
  return found;
}

/* Keys and owners of the context's last task map (keys carried over from
 * the earlier maps that wrote them). */
static int profile_map(const jv_t *c, policy__warm_t **out, char *why, size_t nwhy) {
  const jv_t *snaps = jget(jget(c, "task_map"), "snapshots"), *keys = NULL, *last = NULL;
  for (int i = 0; snaps && snaps->type == 'a' && i < snaps->n; i++) {
    const jv_t *k = jget(&snaps->items[i], "keys");
    if (k && k->type == 'a')
      keys = k;
    last = &snaps->items[i];
  }
  const jv_t *owner = jget(last, "owner"), *detail = jget(last, "detail");
  if (!last || !detail || !detail->num) {
    snprintf(why, nwhy, "its last task map is %s (a profile keeps per-task maps up to "
             "4,096 tasks; use a load-balancing record)", last ? "binned" : "missing");
    return BALLAST_ENOTSUP;
  }
  if (!keys || !owner || owner->type != 'a' || owner->n != keys->n) {
    snprintf(why, nwhy, "its last task map has no keys or owners of its size");
    return BALLAST_EPARSE;
  }
  policy__warm_t *w = warm_alloc(keys->n);
  int rc = w ? 0 : BALLAST_ENOMEM;
  for (int i = 0; !rc && i < keys->n; i++)
    if (keys->items[i].type == 's' && owner->items[i].type == 'n')
      rc = warm_add(w, keys->items[i].str, jint(owner->items[i].num), 0);
  if (rc) {
    policy__warm_free(w);
    return rc;
  }
  qsort(w->rows, (size_t)w->n, sizeof *w->rows, row_cmp);
  *out = w;
  return 0;
}

/* Each task's seconds per step from the regions named by its key, over
 * every rank: wall minus MPI time, capped by CPU time, over the count. */
static void profile_costs(const jv_t *prof, policy__warm_t *w) {
  const jv_t *ranks = jget(prof, "ranks_data");
  double *sum = ballast__calloc((size_t)(w->n ? w->n : 1), sizeof *sum);
  if (!sum)
    return; /* the map alone still serves */
  for (int r = 0; ranks && ranks->type == 'a' && r < ranks->n; r++) {
    const jv_t *regs = jget(&ranks->items[r], "regions");
    for (int i = 0; regs && regs->type == 'a' && i < regs->n; i++) {
      const jv_t *g = &regs->items[i], *name = jget(g, "name");
      row_t *row = name && name->type == 's' ? warm_find(w, name->str) : NULL;
      if (!row)
        continue;
      double t = jnum(g, "wtime", 0) - jnum(g, "mtime", 0), cpu = jnum(g, "cputime", 0);
      if (cpu > 0 && cpu < t)
        t = cpu;
      sum[row - w->rows] += t > 0 ? t : 0;
      double cnt = jnum(g, "count", 0);
      row->count += cnt > 0 && cnt < 1e18 ? (long long)cnt : 0;
    }
  }
  for (int64_t i = 0; i < w->n; i++)
    w->rows[i].cost = w->rows[i].count > 0 ? sum[i] / (double)w->rows[i].count : 0;
  free(sum);
}

/* The whole file in memory (NUL-terminated). */
static int slurp(const char *path, char **text, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return BALLAST_EIO;
  char *b = NULL;
  size_t n = 0, cap = 0;
  int rc = 0;
  for (;;) {
    if (n + 65536 + 1 > cap) {
      if ((long long)cap > MAX_FILE) {
        rc = BALLAST_ETOOBIG;
        break;
      }
      char *t = ballast__realloc(b, cap = 2 * cap + 65536 + 1);
      if (!t) {
        rc = BALLAST_ENOMEM;
        break;
      }
      b = t;
    }
    size_t got = fread(b + n, 1, cap - n - 1, f);
    n += got;
    if (got == 0)
      break;
  }
  if (!rc && ferror(f))
    rc = BALLAST_EIO;
  fclose(f);
  if (rc) {
    free(b);
    return rc;
  }
  b[n] = 0;
  *text = b;
  *len = n;
  return 0;
}

static int from_profile(const char *root, int size, const char *text, size_t len,
                        policy__warm_t **out, char *why, size_t nwhy) {
  jp_t j = {text, text + len, 0};
  jv_t doc;
  if (jvalue(&j, &doc, 0)) {
    snprintf(why, nwhy, "neither a load-balancing record nor a JSON profile (malformed "
             "JSON near byte %lld)", (long long)(j.p - text));
    return BALLAST_EPARSE;
  }
  const jv_t *prof = jget(&doc, "ballast_profile");
  int rc = 0;
  const jv_t *c = NULL;
  if (!prof) {
    snprintf(why, nwhy, "a JSON file but not a ballast profile (no \"ballast_profile\")");
    rc = BALLAST_EPARSE;
  } else if (!(c = profile_context(prof, root, size, why, nwhy)))
    rc = BALLAST_EMISMATCH;
  if (!rc && !(rc = profile_map(c, out, why, nwhy)))
    profile_costs(prof, *out);
  jv_free(&doc);
  return rc;
}


/* ---- the table's readers ------------------------------------------------------ */

int policy__warm_read(const char *path, const char *root, int size, policy__warm_t **out,
                      char *why, size_t nwhy) {
  *out = NULL;
  char *text = NULL;
  size_t len = 0;
  int rc = slurp(path, &text, &len);
  if (rc) {
    snprintf(why, nwhy, "%s", rc == BALLAST_EIO ? "cannot open or read it"
                              : rc == BALLAST_ETOOBIG ? "larger than 1 GiB" : "no memory to read it");
    return rc;
  }
  size_t ml = strlen(POLICY__MAGIC);
  if (len >= ml && !memcmp(text, POLICY__MAGIC, ml))
    rc = from_record(root, size, path, out, why, nwhy);
  else
    rc = from_profile(root, size, text, len, out, why, nwhy);
  free(text);
  return rc;
}

int policy__warm_find(const policy__warm_t *w, const char *key, int *slot, double *cost) {
  const row_t *row = w ? warm_find(w, key) : NULL;
  if (!row)
    return 0;
  *slot = row->slot;
  *cost = row->cost;
  return 1;
}

int64_t policy__warm_ntasks(const policy__warm_t *w) { return w ? w->n : 0; }
