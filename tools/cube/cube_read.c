/* Cube4 reader (see cube_read.h): the ustar archive's members, anchor.xml,
 * the metric indexes, and rows read with pread. Written from the format as
 * CubeLib's writer (cubew) produces it; no CubeLib code. */
#define _GNU_SOURCE
#include "cube_read.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ballast/common.h>

#include "cube_xml.h"

typedef struct {
  char name[256];
  uint64_t off, size;
} member_t;

typedef struct {
  member_t *m;
  int n, cap;
} members_t;

static int errf(char *err, size_t errlen, int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, errlen, fmt, ap);
  va_end(ap);
  return code;
}

/* pread until done: 0, or -1 at end of file or an error (errno set). */
static int pread_all(int fd, void *buf, size_t n, uint64_t off) {
  char *p = buf;
  while (n > 0) {
    size_t chunk = n > ((size_t)1 << 30) ? ((size_t)1 << 30) : n;
    ssize_t r = pread(fd, p, chunk, (off_t)off);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      if (r == 0) errno = 0;
      return -1;
    }
    p += r;
    off += (uint64_t)r;
    n -= (size_t)r;
  }
  return 0;
}

/* ------------------------------------------------------------------ */
/* ustar archive                                                       */
/* ------------------------------------------------------------------ */

/* A numeric header field: octal digits (space or NUL terminated), or the
 * GNU base-256 form (high bit of the first byte) for sizes above 8 GiB. */
static int tar_number(const unsigned char *f, int len, uint64_t *out) {
  uint64_t v = 0;
  if (f[0] & 0x80) {
    if (f[0] != 0x80) return -1; /* negative or too large */
    for (int i = 1; i < len; i++) {
      if (v >> 55) return -1;
      v = (v << 8) | f[i];
    }
    *out = v;
    return 0;
  }
  int i = 0, digits = 0;
  while (i < len && f[i] == ' ') i++;
  for (; i < len && f[i] >= '0' && f[i] <= '7'; i++, digits++) {
    if (v >> 60) return -1;
    v = v * 8 + (uint64_t)(f[i] - '0');
  }
  for (; i < len; i++)
    if (f[i] != ' ' && f[i] != '\0') return -1;
  if (!digits) return -1;
  *out = v;
  return 0;
}

static int all_zero(const unsigned char *b, int n) {
  for (int i = 0; i < n; i++)
    if (b[i]) return 0;
  return 1;
}

static int tar_header(const unsigned char *h, uint64_t pos, member_t *m,
                      char *type, char *err, size_t errlen) {
  uint64_t sum = 0, want;
  for (int i = 0; i < 512; i++) sum += (i >= 148 && i < 156) ? ' ' : h[i];
  if (tar_number(h + 148, 8, &want) || want != sum)
    return errf(err, errlen, BALLAST_EPARSE,
                "not a ustar archive: bad header checksum at offset %" PRIu64,
                pos);
  if (tar_number(h + 124, 12, &m->size))
    return errf(err, errlen, BALLAST_EPARSE,
                "bad member size field at archive offset %" PRIu64, pos);
  char name[101], prefix[156];
  memcpy(name, h, 100);
  name[100] = '\0';
  prefix[0] = '\0';
  if (memcmp(h + 257, "ustar", 5) == 0 && h[345]) {
    memcpy(prefix, h + 345, 155);
    prefix[155] = '\0';
  }
  if (prefix[0]) snprintf(m->name, sizeof m->name, "%s/%s", prefix, name);
  else snprintf(m->name, sizeof m->name, "%s", name);
  /* "./anchor.xml" and "anchor.xml" are the same member. */
  if (strncmp(m->name, "./", 2) == 0) memmove(m->name, m->name + 2, strlen(m->name) - 1);
  m->off = pos + 512;
  *type = (char)h[156];
  return 0;
}

static int tar_list(int fd, uint64_t fsize, members_t *ms, char *err,
                    size_t errlen) {
  unsigned char h[512];
  uint64_t pos = 0;
  for (;;) {
    if (pos + 512 > fsize) {
      if (pos == fsize && ms->n > 0) return 0; /* no end blocks: accepted */
      return errf(err, errlen, BALLAST_EPARSE,
                  "truncated archive: header at offset %" PRIu64
                  " beyond the file's %" PRIu64 " bytes", pos, fsize);
    }
    if (pread_all(fd, h, 512, pos))
      return errf(err, errlen, BALLAST_EIO, "reading the archive: %s",
                  errno ? strerror(errno) : "unexpected end of file");
    if (all_zero(h, 512)) {
      if (ms->n == 0)
        return errf(err, errlen, BALLAST_EPARSE, "empty archive");
      return 0;
    }
    member_t m;
    char type = 0;
    int rc = tar_header(h, pos, &m, &type, err, errlen);
    if (rc) return rc;
    if (m.size > fsize || m.off > fsize - m.size)
      return errf(err, errlen, BALLAST_EPARSE,
                  "truncated archive: member '%s' of %" PRIu64
                  " bytes runs past the end of the file", m.name, m.size);
    if (type == '0' || type == '\0' || type == '7') {
      if (ms->n == ms->cap) {
        int nc = ms->cap ? ms->cap * 2 : 16;
        member_t *nm = realloc(ms->m, (size_t)nc * sizeof *nm);
        if (!nm) return errf(err, errlen, BALLAST_ENOMEM, "out of memory");
        ms->m = nm;
        ms->cap = nc;
      }
      ms->m[ms->n++] = m;
    }
    pos = m.off + (m.size + 511) / 512 * 512;
  }
}

static const member_t *member(const members_t *ms, const char *name) {
  /* The last one wins, as when an archive is appended to. */
  for (int i = ms->n - 1; i >= 0; i--)
    if (strcmp(ms->m[i].name, name) == 0) return &ms->m[i];
  return NULL;
}

/* ------------------------------------------------------------------ */
/* anchor.xml                                                          */
/* ------------------------------------------------------------------ */

static int parse_i64(const char *s, int64_t *out) {
  if (!s) return -1;
  while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r') s++;
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (end == s || errno) return -1;
  while (*end == ' ' || *end == '\t' || *end == '\n' || *end == '\r') end++;
  if (*end) return -1;
  *out = v;
  return 0;
}

static char *xstrdup(const char *s) {
  return strdup(s ? s : "");
}

/* Trims surrounding white space in place (element text of names). */
static char *trim(char *s) {
  char *e = s + strlen(s);
  while (*s == ' ' || *s == '\n' || *s == '\t' || *s == '\r') s++;
  while (e > s && (e[-1] == ' ' || e[-1] == '\n' || e[-1] == '\t' || e[-1] == '\r')) e--;
  *e = '\0';
  return s;
}

static char *dup_trimmed(const char *s) {
  char *d = xstrdup(s);
  if (!d) return NULL;
  char *t = trim(d);
  if (t != d) memmove(d, t, strlen(t) + 1);
  return d;
}

static int metric_type(const cx_node_t *x, cube_metric_t *m, char *err,
                       size_t errlen) {
  const char *t = cx_attr(x, "type");
  if (!t || strcmp(t, "EXCLUSIVE") == 0) m->kind = CUBE_EXCLUSIVE;
  else if (strcmp(t, "INCLUSIVE") == 0) m->kind = CUBE_INCLUSIVE;
  else if (strcmp(t, "SIMPLE") == 0) m->kind = CUBE_SIMPLE;
  else if (strcmp(t, "POSTDERIVED") == 0 || strcmp(t, "PREDERIVED_INCLUSIVE") == 0 ||
           strcmp(t, "PREDERIVED_EXCLUSIVE") == 0)
    m->kind = CUBE_DERIVED;
  else
    return errf(err, errlen, BALLAST_EPARSE,
                "anchor.xml line %d: metric '%s' has unknown type '%s'",
                x->line, m->uniq_name, t);
  static const struct { const char *n; cube_dtype_t d; cube_agg_t a; } dts[] = {
    {"DOUBLE", CUBE_DT_DOUBLE, CUBE_AGG_SUM},
    {"UINT64", CUBE_DT_UINT64, CUBE_AGG_SUM},
    {"INT64", CUBE_DT_INT64, CUBE_AGG_SUM},
    {"INTEGER", CUBE_DT_INT64, CUBE_AGG_SUM},
    {"MINDOUBLE", CUBE_DT_MINDOUBLE, CUBE_AGG_MIN},
    {"MAXDOUBLE", CUBE_DT_MAXDOUBLE, CUBE_AGG_MAX}};
  for (size_t i = 0; i < sizeof dts / sizeof dts[0]; i++)
    if (strcmp(m->dtype_name, dts[i].n) == 0) {
      m->dtype = dts[i].d;
      m->agg = dts[i].a;
      return 0;
    }
  if (m->kind == CUBE_DERIVED) return 0; /* never read */
  return errf(err, errlen, BALLAST_ENOTSUP,
              "anchor.xml line %d: metric '%s' has data type '%s', which "
              "ballast-cube does not read (DOUBLE, UINT64, INT64, INTEGER, "
              "MINDOUBLE, MAXDOUBLE)", x->line, m->uniq_name, m->dtype_name);
}

static int read_metrics(cube_t *c, cx_node_t *metrics, char *err,
                        size_t errlen) {
  int cap = 0;
  for (cx_node_t *x = metrics ? metrics->first : NULL; x; x = cx_next(x, metrics)) {
    if (strcmp(x->name, "metric") != 0) continue;
    if (c->nmetric == cap) {
      cap = cap ? cap * 2 : 8;
      cube_metric_t *nm = realloc(c->metric, (size_t)cap * sizeof *nm);
      if (!nm) return errf(err, errlen, BALLAST_ENOMEM, "out of memory");
      c->metric = nm;
    }
    cube_metric_t *m = &c->metric[c->nmetric];
    memset(m, 0, sizeof *m);
    c->nmetric++;
    m->parent = -1;
    for (cx_node_t *p = x->parent; p && p != metrics; p = p->parent)
      if (strcmp(p->name, "metric") == 0) {
        m->parent = (int)p->user - 1;
        break;
      }
    x->user = c->nmetric;
    if (parse_i64(cx_attr(x, "id"), &m->id) || m->id < 0)
      return errf(err, errlen, BALLAST_EPARSE,
                  "anchor.xml line %d: metric without a valid id", x->line);
    m->uniq_name = dup_trimmed(cx_child_text(x, "uniq_name"));
    m->disp_name = dup_trimmed(cx_child_text(x, "disp_name"));
    m->dtype_name = dup_trimmed(cx_child_text(x, "dtype"));
    m->uom = dup_trimmed(cx_child_text(x, "uom"));
    if (!m->uniq_name || !m->disp_name || !m->dtype_name || !m->uom)
      return errf(err, errlen, BALLAST_ENOMEM, "out of memory");
    if (!m->uniq_name[0])
      return errf(err, errlen, BALLAST_EPARSE,
                  "anchor.xml line %d: metric %" PRId64 " has no uniq_name",
                  x->line, m->id);
    for (int i = 0; i < c->nmetric - 1; i++)
      if (c->metric[i].id == m->id)
        return errf(err, errlen, BALLAST_EPARSE,
                    "anchor.xml line %d: metric id %" PRId64 " used twice",
                    x->line, m->id);
    int rc = metric_type(x, m, err, errlen);
    if (rc) return rc;
  }
  if (c->nmetric == 0)
    return errf(err, errlen, BALLAST_EPARSE, "anchor.xml: no metrics");
  return 0;
}

typedef struct {
  int64_t id;
  int64_t idx;
} idpair_t;

static int cmp_idpair(const void *a, const void *b) {
  const idpair_t *x = a, *y = b;
  return (x->id > y->id) - (x->id < y->id);
}

static int64_t lookup(const idpair_t *v, int64_t n, int64_t id) {
  int64_t lo = 0, hi = n - 1;
  while (lo <= hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (v[mid].id == id) return v[mid].idx;
    if (v[mid].id < id) lo = mid + 1; else hi = mid - 1;
  }
  return -1;
}

static int read_regions(cube_t *c, cx_node_t *program, idpair_t **byid,
                        char *err, size_t errlen) {
  int n = 0;
  for (cx_node_t *x = program->first; x; x = x->next)
    if (strcmp(x->name, "region") == 0) n++;
  c->region_id = calloc((size_t)n + 1, sizeof *c->region_id);
  c->region_name = calloc((size_t)n + 1, sizeof *c->region_name);
  *byid = calloc((size_t)n + 1, sizeof **byid);
  if (!c->region_id || !c->region_name || !*byid)
    return errf(err, errlen, BALLAST_ENOMEM, "out of memory");
  for (cx_node_t *x = program->first; x; x = x->next) {
    if (strcmp(x->name, "region") != 0) continue;
    int i = c->nregion;
    if (parse_i64(cx_attr(x, "id"), &c->region_id[i]))
      return errf(err, errlen, BALLAST_EPARSE,
                  "anchor.xml line %d: region without a valid id", x->line);
    c->region_name[i] = dup_trimmed(cx_child_text(x, "name"));
    if (!c->region_name[i]) return errf(err, errlen, BALLAST_ENOMEM, "out of memory");
    c->nregion++;
    (*byid)[i].id = c->region_id[i];
    (*byid)[i].idx = i;
  }
  qsort(*byid, (size_t)c->nregion, sizeof **byid, cmp_idpair);
  for (int i = 1; i < c->nregion; i++)
    if ((*byid)[i].id == (*byid)[i - 1].id)
      return errf(err, errlen, BALLAST_EPARSE,
                  "anchor.xml: region id %" PRId64 " used twice", (*byid)[i].id);
  return 0;
}

static int alloc_cnodes(cube_t *c, int64_t n) {
  c->cnode_id = calloc((size_t)n + 1, sizeof *c->cnode_id);
  c->parent = calloc((size_t)n + 1, sizeof *c->parent);
  c->region = calloc((size_t)n + 1, sizeof *c->region);
  c->depth = calloc((size_t)n + 1, sizeof *c->depth);
  c->child_start = calloc((size_t)n + 2, sizeof *c->child_start);
  c->child = calloc((size_t)n + 1, sizeof *c->child);
  c->subtree = calloc((size_t)n + 1, sizeof *c->subtree);
  return (c->cnode_id && c->parent && c->region && c->depth && c->child_start &&
          c->child && c->subtree) ? 0 : -1;
}

/* Children lists (CSR, document order) and subtree sizes. */
static void link_cnodes(cube_t *c) {
  int64_t n = c->ncnode;
  for (int64_t i = 0; i < n; i++)
    if (c->parent[i] >= 0) c->child_start[c->parent[i] + 1]++;
  for (int64_t i = 0; i < n; i++) c->child_start[i + 1] += c->child_start[i];
  int64_t *fill = c->subtree; /* borrowed as a cursor, then recomputed */
  for (int64_t i = 0; i < n; i++) fill[i] = c->child_start[i];
  for (int64_t i = 0; i < n; i++)
    if (c->parent[i] >= 0) c->child[fill[c->parent[i]]++] = (int32_t)i;
  for (int64_t i = 0; i < n; i++) c->subtree[i] = 1;
  /* Document order is depth first: a child comes after its parent. */
  for (int64_t i = n - 1; i >= 0; i--)
    if (c->parent[i] >= 0) c->subtree[c->parent[i]] += c->subtree[i];
  c->nroot = 0;
  for (int64_t i = 0; i < n; i++)
    if (c->parent[i] < 0) c->nroot++;
}

static int read_cnodes(cube_t *c, cx_node_t *program, char *err, size_t errlen) {
  idpair_t *regs = NULL;
  int rc = read_regions(c, program, &regs, err, errlen);
  if (rc) goto out;
  int64_t n = 0;
  for (cx_node_t *x = program->first; x; x = cx_next(x, program))
    if (strcmp(x->name, "cnode") == 0) n++;
  if (n == 0) {
    rc = errf(err, errlen, BALLAST_EPARSE, "anchor.xml: no call paths (cnode)");
    goto out;
  }
  if (n > INT32_MAX - 2 || alloc_cnodes(c, n)) {
    rc = errf(err, errlen, BALLAST_ENOMEM, "out of memory for %" PRId64 " cnodes", n);
    goto out;
  }
  for (cx_node_t *x = program->first; x; x = cx_next(x, program)) {
    if (strcmp(x->name, "cnode") != 0) continue;
    int64_t i = c->ncnode++, callee;
    x->user = i + 1;
    c->parent[i] = -1;
    for (cx_node_t *p = x->parent; p && p != program; p = p->parent)
      if (strcmp(p->name, "cnode") == 0) {
        c->parent[i] = (int32_t)(p->user - 1);
        break;
      }
    c->depth[i] = c->parent[i] < 0 ? 0 : c->depth[c->parent[i]] + 1;
    if (parse_i64(cx_attr(x, "id"), &c->cnode_id[i]) ||
        parse_i64(cx_attr(x, "calleeId"), &callee)) {
      rc = errf(err, errlen, BALLAST_EPARSE,
                "anchor.xml line %d: cnode without a valid id or calleeId", x->line);
      goto out;
    }
    int64_t r = lookup(regs, c->nregion, callee);
    if (r < 0) {
      rc = errf(err, errlen, BALLAST_EPARSE,
                "anchor.xml line %d: cnode %" PRId64 " calls region %" PRId64
                ", which is not defined", x->line, c->cnode_id[i], callee);
      goto out;
    }
    c->region[i] = (int32_t)r;
  }
  link_cnodes(c);
out:
  free(regs);
  return rc;
}

static int is_location(const char *n) {
  return strcmp(n, "location") == 0 || strcmp(n, "thread") == 0;
}

static int is_group(const char *n) {
  return strcmp(n, "locationgroup") == 0 || strcmp(n, "process") == 0;
}

/* Score-P and ballast write the system tree's ids as "Id"; older writers
 * (and the metrics and call tree everywhere) as "id". */
static const char *sys_id(const cx_node_t *x) {
  const char *v = cx_attr(x, "Id");
  return v ? v : cx_attr(x, "id");
}

static int read_system(cube_t *c, cx_node_t *sys, char *err, size_t errlen) {
  int64_t n = 0;
  for (cx_node_t *x = sys->first; x; x = cx_next(x, sys))
    if (is_location(x->name)) n++;
  if (n == 0) return errf(err, errlen, BALLAST_EPARSE, "anchor.xml: no locations");
  idpair_t *ord = calloc((size_t)n, sizeof *ord);
  int64_t *id = calloc((size_t)n, sizeof *id), *rank = calloc((size_t)n, sizeof *rank),
          *thr = calloc((size_t)n, sizeof *thr);
  char **name = calloc((size_t)n, sizeof *name);
  c->loc_id = calloc((size_t)n, sizeof *c->loc_id);
  c->loc_rank = calloc((size_t)n, sizeof *c->loc_rank);
  c->loc_thread = calloc((size_t)n, sizeof *c->loc_thread);
  c->loc_name = calloc((size_t)n, sizeof *c->loc_name);
  int rc = 0;
  if (!ord || !id || !rank || !thr || !name || !c->loc_id || !c->loc_rank ||
      !c->loc_thread || !c->loc_name) {
    rc = errf(err, errlen, BALLAST_ENOMEM, "out of memory");
    goto out;
  }
  c->nloc = n; /* so that cube_close() frees what is placed below */
  int64_t k = 0;
  for (cx_node_t *x = sys->first; x; x = cx_next(x, sys)) {
    if (!is_location(x->name)) continue;
    if (parse_i64(sys_id(x), &id[k]) || id[k] < 0) {
      rc = errf(err, errlen, BALLAST_EPARSE,
                "anchor.xml line %d: location without a valid id", x->line);
      goto out;
    }
    if (parse_i64(cx_child_text(x, "rank"), &thr[k])) thr[k] = 0;
    rank[k] = -1;
    if (x->parent && is_group(x->parent->name) &&
        parse_i64(cx_child_text(x->parent, "rank"), &rank[k]))
      rank[k] = -1;
    name[k] = dup_trimmed(cx_child_text(x, "name"));
    if (!name[k]) {
      rc = errf(err, errlen, BALLAST_ENOMEM, "out of memory");
      goto out;
    }
    ord[k].id = id[k];
    ord[k].idx = k;
    k++;
  }
  qsort(ord, (size_t)n, sizeof *ord, cmp_idpair);
  for (int64_t i = 0; i < n; i++) {
    if (i > 0 && ord[i].id == ord[i - 1].id) {
      rc = errf(err, errlen, BALLAST_EPARSE,
                "anchor.xml: location id %" PRId64 " used twice", ord[i].id);
      goto out;
    }
    int64_t j = ord[i].idx;
    c->loc_id[i] = id[j];
    c->loc_rank[i] = rank[j];
    c->loc_thread[i] = thr[j];
    c->loc_name[i] = name[j];
    name[j] = NULL;
  }
out:
  for (int64_t i = 0; name && i < n; i++) free(name[i]);
  free(ord); free(id); free(rank); free(thr); free(name);
  return rc;
}

static int read_anchor(cube_t *c, const members_t *ms, char *err, size_t errlen) {
  const member_t *a = member(ms, "anchor.xml");
  if (!a) return errf(err, errlen, BALLAST_EPARSE, "no anchor.xml in the archive");
  if (a->size > ((uint64_t)1 << 32))
    return errf(err, errlen, BALLAST_ERANGE, "anchor.xml of %" PRIu64 " bytes is too large", a->size);
  char *buf = malloc(a->size + 1);
  if (!buf) return errf(err, errlen, BALLAST_ENOMEM, "out of memory for anchor.xml");
  if (pread_all(c->fd, buf, a->size, a->off)) {
    free(buf);
    return errf(err, errlen, BALLAST_EIO, "reading anchor.xml: %s", strerror(errno));
  }
  cx_node_t *root;
  int rc = cx_parse(buf, a->size, &root, err, errlen) ? BALLAST_EPARSE : 0;
  free(buf);
  if (rc) return rc;
  const char *v = cx_attr(root, "version");
  if (strcmp(root->name, "cube") != 0) {
    rc = errf(err, errlen, BALLAST_EPARSE, "anchor.xml: document element is <%s>, not <cube>", root->name);
  } else if (!v || strlen(v) != 3 || v[0] != '4' || v[1] != '.' || v[2] < '0' || v[2] > '9') {
    rc = errf(err, errlen, BALLAST_ENOTSUP,
              "anchor.xml: Cube format version '%s' is not supported (4.0 to 4.9)",
              v ? v : "(none)");
  } else {
    snprintf(c->version, sizeof c->version, "%s", v);
    cx_node_t *program = cx_child(root, "program"), *sys = cx_child(root, "system");
    if (!program || !sys)
      rc = errf(err, errlen, BALLAST_EPARSE, "anchor.xml: no <%s> element",
                program ? "system" : "program");
    if (!rc) rc = read_metrics(c, cx_child(root, "metrics"), err, errlen);
    if (!rc) rc = read_cnodes(c, program, err, errlen);
    if (!rc) rc = read_system(c, sys, err, errlen);
  }
  cx_free(root);
  return rc;
}

/* ------------------------------------------------------------------ */
/* Metric indexes                                                      */
/* ------------------------------------------------------------------ */

/* pos[i] = the position of cnode i in the metric's row enumeration. */
static int enumerate(const cube_t *c, cube_kind_t kind, int64_t *pos) {
  int64_t n = c->ncnode;
  if (kind == CUBE_EXCLUSIVE) {
    for (int64_t i = 0; i < n; i++) pos[i] = i; /* document order = depth first */
    return 0;
  }
  if (kind == CUBE_SIMPLE) {
    idpair_t *v = malloc((size_t)n * sizeof *v);
    if (!v) return -1;
    for (int64_t i = 0; i < n; i++) { v[i].id = c->cnode_id[i]; v[i].idx = i; }
    qsort(v, (size_t)n, sizeof *v, cmp_idpair);
    for (int64_t i = 0; i < n; i++) pos[v[i].idx] = i;
    free(v);
    return 0;
  }
  /* INCLUSIVE: per root, the root, then all children of a node, then each
   * child recursively: a depth-first walk that numbers a node's children
   * when it visits the node. */
  int32_t *stack = malloc((size_t)n * sizeof *stack);
  if (!stack) return -1;
  int64_t next = 0;
  for (int64_t r = 0; r < n; r++) {
    if (c->parent[r] >= 0) continue;
    pos[r] = next++;
    int64_t sp = 0;
    stack[sp++] = (int32_t)r;
    while (sp > 0) {
      int32_t x = stack[--sp];
      for (int64_t k = c->child_start[x]; k < c->child_start[x + 1]; k++)
        pos[c->child[k]] = next++;
      for (int64_t k = c->child_start[x + 1] - 1; k >= c->child_start[x]; k--)
        stack[sp++] = c->child[k];
    }
  }
  free(stack);
  return 0;
}

static uint32_t rd32(const unsigned char *p, int swap) {
  uint32_t v;
  memcpy(&v, p, 4);
  return swap ? __builtin_bswap32(v) : v;
}

static int read_index(cube_t *c, cube_metric_t *m, const member_t *ix,
                      int64_t *pos, char *err, size_t errlen) {
  unsigned char h[22];
  const char *nm = m->uniq_name;
  if (ix->size < 18 || pread_all(c->fd, h, 18, ix->off) || memcmp(h, "CUBEX.INDEX", 11) != 0)
    return errf(err, errlen, BALLAST_EPARSE,
                "metric '%s': %" PRId64 ".index does not begin with CUBEX.INDEX", nm, m->id);
  uint32_t endian = rd32(h + 11, 0);
  if (endian == 0x01000000u) m->swap = 1;
  else if (endian != 1)
    return errf(err, errlen, BALLAST_EPARSE, "metric '%s': bad endianness mark %u", nm, endian);
  uint16_t ver;
  memcpy(&ver, h + 15, 2);
  if (ver != 0)
    return errf(err, errlen, BALLAST_ENOTSUP, "metric '%s': index version %u is not supported", nm,
                (unsigned)(m->swap ? __builtin_bswap16(ver) : ver));
  int64_t n = c->ncnode;
  if (enumerate(c, m->kind, pos)) return errf(err, errlen, BALLAST_ENOMEM, "out of memory");
  m->row_of = malloc((size_t)n * sizeof *m->row_of);
  if (!m->row_of) return errf(err, errlen, BALLAST_ENOMEM, "out of memory");
  if (h[17] == 3) { /* dense */
    for (int64_t i = 0; i < n; i++) m->row_of[i] = pos[i];
    m->nrows = n;
    return 0;
  }
  if (h[17] != 1)
    return errf(err, errlen, BALLAST_ENOTSUP, "metric '%s': index format %u is not supported "
                "(3 dense, 1 sparse)", nm, h[17]);
  if (ix->size < 22 || pread_all(c->fd, h + 18, 4, ix->off + 18))
    return errf(err, errlen, BALLAST_EPARSE, "metric '%s': truncated sparse index", nm);
  uint32_t cnt = rd32(h + 18, m->swap);
  if (cnt > (uint64_t)n || ix->size != 22 + 4 * (uint64_t)cnt)
    return errf(err, errlen, BALLAST_EPARSE, "metric '%s': sparse index of %u rows in %" PRIu64
                " bytes for %" PRId64 " cnodes", nm, cnt, ix->size, n);
  unsigned char *raw = malloc(4 * (size_t)cnt + 1);
  int64_t *row_at = malloc((size_t)n * sizeof *row_at);
  int rc = 0;
  if (!raw || !row_at) rc = errf(err, errlen, BALLAST_ENOMEM, "out of memory");
  else if (pread_all(c->fd, raw, 4 * (size_t)cnt, ix->off + 22))
    rc = errf(err, errlen, BALLAST_EIO, "metric '%s': reading the index", nm);
  for (int64_t i = 0; !rc && i < n; i++) row_at[i] = -1;
  for (uint32_t k = 0; !rc && k < cnt; k++) {
    uint32_t p = rd32(raw + 4 * (size_t)k, m->swap);
    if (p >= (uint64_t)n || row_at[p] >= 0)
      rc = errf(err, errlen, BALLAST_EPARSE, "metric '%s': sparse index entry %u is %u "
                "(out of range or repeated)", nm, k, p);
    else row_at[p] = k;
  }
  for (int64_t i = 0; !rc && i < n; i++) m->row_of[i] = row_at[pos[i]];
  m->nrows = cnt;
  free(raw);
  free(row_at);
  return rc;
}

static int read_indexes(cube_t *c, const members_t *ms, char *err, size_t errlen) {
  int64_t *pos = malloc((size_t)c->ncnode * sizeof *pos);
  if (!pos) return errf(err, errlen, BALLAST_ENOMEM, "out of memory");
  int rc = 0;
  for (int i = 0; !rc && i < c->nmetric; i++) {
    cube_metric_t *m = &c->metric[i];
    char iname[64], dname[64];
    snprintf(iname, sizeof iname, "%" PRId64 ".index", m->id);
    snprintf(dname, sizeof dname, "%" PRId64 ".data", m->id);
    const member_t *ix = member(ms, iname), *dx = member(ms, dname);
    if (m->kind == CUBE_DERIVED || (!ix && !dx)) continue; /* no values */
    if (!ix || !dx) {
      rc = errf(err, errlen, BALLAST_EPARSE, "metric '%s': %s without %s", m->uniq_name,
                ix ? iname : dname, ix ? dname : iname);
      break;
    }
    rc = read_index(c, m, ix, pos, err, errlen);
    if (rc) break;
    char mark[10];
    uint64_t want = 10 + (uint64_t)m->nrows * (uint64_t)c->nloc * 8;
    if (dx->size < 10 || pread_all(c->fd, mark, 10, dx->off) || memcmp(mark, "CUBEX.DATA", 10) != 0)
      rc = errf(err, errlen, BALLAST_EPARSE, "metric '%s': %s does not begin with CUBEX.DATA",
                m->uniq_name, dname);
    else if (dx->size != want)
      rc = errf(err, errlen, BALLAST_EPARSE, "metric '%s': %s holds %" PRIu64 " bytes, expected %"
                PRIu64 " (%" PRId64 " rows x %" PRId64 " locations x 8; compressed data is not "
                "supported)", m->uniq_name, dname, dx->size, want, m->nrows, c->nloc);
    m->data_off = dx->off + 10;
    m->has_data = !rc;
  }
  free(pos);
  return rc;
}

int cube_open(const char *path, cube_t **out, char *err, size_t errlen) {
  *out = NULL;
  cube_t *c = calloc(1, sizeof *c);
  if (!c) return errf(err, errlen, BALLAST_ENOMEM, "out of memory");
  c->fd = open(path, O_RDONLY | O_CLOEXEC);
  c->path = strdup(path);
  members_t ms = {0};
  struct stat st;
  int rc;
  if (c->fd < 0) rc = errf(err, errlen, BALLAST_EIO, "%s: %s", path, strerror(errno));
  else if (fstat(c->fd, &st) || !S_ISREG(st.st_mode))
    rc = errf(err, errlen, BALLAST_EIO, "%s: not a regular file", path);
  else rc = tar_list(c->fd, (uint64_t)st.st_size, &ms, err, errlen);
  if (!rc) rc = read_anchor(c, &ms, err, errlen);
  if (!rc) rc = read_indexes(c, &ms, err, errlen);
  free(ms.m);
  if (rc) {
    /* Prefix the file name once, for a message that stands alone. */
    char tmp[CUBE_ERRLEN];
    snprintf(tmp, sizeof tmp, "%s", err);
    if (strncmp(tmp, path, strlen(path)) != 0) snprintf(err, errlen, "%s: %s", path, tmp);
    cube_close(c);
    return rc;
  }
  *out = c;
  return 0;
}

void cube_close(cube_t *c) {
  if (!c) return;
  if (c->fd >= 0) close(c->fd);
  for (int i = 0; i < c->nmetric; i++) {
    cube_metric_t *m = &c->metric[i];
    free(m->uniq_name); free(m->disp_name); free(m->dtype_name); free(m->uom);
    free(m->row_of);
  }
  free(c->metric);
  for (int i = 0; i < c->nregion; i++) free(c->region_name[i]);
  free(c->region_name); free(c->region_id);
  free(c->cnode_id); free(c->parent); free(c->region); free(c->depth);
  free(c->child_start); free(c->child); free(c->subtree);
  for (int64_t i = 0; c->loc_name && i < c->nloc; i++) free(c->loc_name[i]);
  free(c->loc_name); free(c->loc_id); free(c->loc_rank); free(c->loc_thread);
  free(c->path);
  free(c);
}
