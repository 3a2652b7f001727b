/* Reading rows of a Cube4 metric with pread, and finding metrics and call
 * paths by name (see cube_read.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ballast/common.h>

#include "cube_read.h"

typedef struct {
  int64_t row;  /* row in the file, -1: none */
  int64_t slot; /* position in the caller's output */
} want_t;

static int cmp_want(const void *a, const void *b) {
  const want_t *x = a, *y = b;
  if (x->row != y->row) return (x->row > y->row) - (x->row < y->row);
  return (x->slot > y->slot) - (x->slot < y->slot);
}

static int pread_full(int fd, void *buf, size_t n, uint64_t off) {
  char *p = buf;
  while (n > 0) {
    size_t chunk = n > ((size_t)1 << 30) ? ((size_t)1 << 30) : n;
    ssize_t r = pread(fd, p, chunk, (off_t)off);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      if (r == 0) errno = EIO;
      return -1;
    }
    p += r;
    off += (uint64_t)r;
    n -= (size_t)r;
  }
  return 0;
}

/* Converts n raw 8-byte values in place to double. */
static void convert(const cube_metric_t *m, double *v, int64_t n) {
  uint64_t *u = (uint64_t *)(void *)v;
  if (m->swap)
    for (int64_t i = 0; i < n; i++) u[i] = __builtin_bswap64(u[i]);
  if (m->dtype == CUBE_DT_UINT64) {
    for (int64_t i = 0; i < n; i++) v[i] = (double)u[i];
  } else if (m->dtype == CUBE_DT_INT64) {
    for (int64_t i = 0; i < n; i++) {
      int64_t s;
      memcpy(&s, &u[i], 8);
      v[i] = (double)s;
    }
  }
}

int cube_read_rows(const cube_t *c, int m, const int32_t *cnodes, int64_t n,
                   double *out, char *err, size_t errlen) {
  if (m < 0 || m >= c->nmetric || !c->metric[m].has_data) {
    snprintf(err, errlen, "metric %d has no data in %s", m, c->path);
    return BALLAST_EINVAL;
  }
  const cube_metric_t *mt = &c->metric[m];
  want_t *w = malloc((size_t)(n > 0 ? n : 1) * sizeof *w);
  if (!w) {
    snprintf(err, errlen, "out of memory");
    return BALLAST_ENOMEM;
  }
  for (int64_t i = 0; i < n; i++) {
    if (cnodes[i] < 0 || cnodes[i] >= c->ncnode) {
      free(w);
      snprintf(err, errlen, "cnode index %d out of range", (int)cnodes[i]);
      return BALLAST_EINVAL;
    }
    w[i].row = mt->row_of[cnodes[i]];
    w[i].slot = i;
  }
  qsort(w, (size_t)n, sizeof *w, cmp_want);
  size_t rowbytes = (size_t)c->nloc * 8;
  int64_t i = 0;
  while (i < n) {
    double *dst = out + w[i].slot * c->nloc;
    if (w[i].row < 0) {
      memset(dst, 0, rowbytes);
      i++;
      continue;
    }
    /* One pread for a run of consecutive rows landing consecutively. */
    int64_t j = i + 1;
    while (j < n && w[j].row == w[j - 1].row + 1 && w[j].slot == w[j - 1].slot + 1) j++;
    size_t bytes = (size_t)(j - i) * rowbytes;
    if (pread_full(c->fd, dst, bytes, mt->data_off + (uint64_t)w[i].row * rowbytes)) {
      snprintf(err, errlen, "%s: reading rows of metric '%s': %s", c->path, mt->uniq_name,
               strerror(errno));
      free(w);
      return BALLAST_EIO;
    }
    convert(mt, dst, (j - i) * c->nloc);
    i = j;
  }
  free(w);
  return 0;
}

int cube_find_metric(const cube_t *c, const char *name) {
  for (int i = 0; i < c->nmetric; i++)
    if (strcmp(c->metric[i].uniq_name, name) == 0) return i;
  for (int i = 0; i < c->nmetric; i++)
    if (strcmp(c->metric[i].disp_name, name) == 0) return i;
  return -1;
}

static int64_t child_named(const cube_t *c, int64_t parent, const char *name,
                           size_t len) {
  if (parent < 0) {
    for (int64_t i = 0; i < c->ncnode; i++)
      if (c->parent[i] < 0 && strlen(c->region_name[c->region[i]]) == len &&
          memcmp(c->region_name[c->region[i]], name, len) == 0)
        return i;
    return -1;
  }
  for (int64_t k = c->child_start[parent]; k < c->child_start[parent + 1]; k++) {
    const char *rn = c->region_name[c->region[c->child[k]]];
    if (strlen(rn) == len && memcmp(rn, name, len) == 0) return c->child[k];
  }
  return -1;
}

int64_t cube_find_cnode(const cube_t *c, const char *spec) {
  if (strncmp(spec, "id:", 3) == 0) {
    char *end;
    errno = 0;
    long long id = strtoll(spec + 3, &end, 10);
    if (end == spec + 3 || *end || errno) return -1;
    for (int64_t i = 0; i < c->ncnode; i++)
      if (c->cnode_id[i] == id) return i;
    return -1;
  }
  int64_t cur = -1;
  const char *p = spec;
  for (;;) {
    const char *slash = strchr(p, '/');
    size_t len = slash ? (size_t)(slash - p) : strlen(p);
    cur = child_named(c, cur, p, len);
    if (cur < 0 || !slash) return cur;
    p = slash + 1;
  }
}

void cube_cnode_path(const cube_t *c, int64_t i, char *buf, size_t len) {
  /* Built from the leaf up, then written root first. */
  int32_t depth = c->depth[i];
  int64_t *up = malloc(((size_t)depth + 1) * sizeof *up);
  if (!up || len == 0) {
    if (len) snprintf(buf, len, "id:%" PRId64, c->cnode_id[i]);
    free(up);
    return;
  }
  for (int64_t x = i, k = depth; x >= 0; x = c->parent[x], k--) up[k] = x;
  size_t at = 0;
  buf[0] = '\0';
  for (int32_t k = 0; k <= depth && at < len; k++) {
    int w = snprintf(buf + at, len - at, "%s%s", k ? "/" : "", c->region_name[c->region[up[k]]]);
    if (w < 0) break;
    at += (size_t)w;
  }
  free(up);
}

size_t cube_meta_bytes(const cube_t *c) {
  size_t b = sizeof *c + (size_t)c->nmetric * sizeof(cube_metric_t);
  b += (size_t)c->ncnode * (8 + 4 + 4 + 4 + 8 + 4 + 8);
  for (int i = 0; i < c->nmetric; i++)
    if (c->metric[i].row_of) b += (size_t)c->ncnode * 8;
  b += (size_t)c->nloc * (8 * 3 + sizeof(char *));
  for (int64_t i = 0; i < c->nloc; i++) b += strlen(c->loc_name[i]) + 1;
  for (int i = 0; i < c->nregion; i++) b += strlen(c->region_name[i]) + 1 + 16;
  return b;
}
