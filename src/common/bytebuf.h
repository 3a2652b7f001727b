/*
 * The library's wire codec (private): a growable writer, a bounds-checked
 * reader, and the field formats every record exchanged between ranks uses
 * (task records of the tree map, task descriptors of migration): integers
 * and doubles in the host's representation (every rank runs the same
 * binary), strings NUL-terminated.
 *
 * Writer: a failed allocation sets oom and every later put does nothing, so
 * a record is written without checks and oom tested once at the end. Its
 * memory comes from ballast__realloc (the allocation hook of util.h sees it).
 * Reader: reading past the end sets bad and yields zeros (strings: ""), so a
 * record is read without checks and bad tested once at the end.
 */
#ifndef BALLAST_BYTEBUF_H
#define BALLAST_BYTEBUF_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"

typedef struct {
  unsigned char *p; /* owned; free() it */
  size_t n, cap;
  int oom;
} ballast__wbuf_t;

static inline void ballast__wput(ballast__wbuf_t *b, const void *src, size_t len) {
  if (b->oom)
    return;
  if (b->n + len > b->cap) {
    size_t cap = b->cap ? b->cap * 2 : 512;
    while (cap < b->n + len)
      cap *= 2;
    unsigned char *p = ballast__realloc(b->p, cap);
    if (!p) {
      b->oom = 1;
      return;
    }
    b->p = p;
    b->cap = cap;
  }
  memcpy(b->p + b->n, src, len);
  b->n += len;
}

static inline void ballast__put_i32(ballast__wbuf_t *b, int32_t v) {
  ballast__wput(b, &v, sizeof v);
}
static inline void ballast__put_i64(ballast__wbuf_t *b, int64_t v) {
  ballast__wput(b, &v, sizeof v);
}
static inline void ballast__put_f64(ballast__wbuf_t *b, double v) {
  ballast__wput(b, &v, sizeof v);
}
static inline void ballast__put_str(ballast__wbuf_t *b, const char *s) {
  ballast__wput(b, s, strlen(s) + 1);
}

typedef struct {
  const unsigned char *p, *end;
  int bad;
} ballast__rbuf_t;

static inline void ballast__rget(ballast__rbuf_t *r, void *dst, size_t len) {
  if (r->bad || (size_t)(r->end - r->p) < len) {
    r->bad = 1;
    memset(dst, 0, len);
    return;
  }
  memcpy(dst, r->p, len);
  r->p += len;
}

static inline int32_t ballast__get_i32(ballast__rbuf_t *r) {
  int32_t v;
  ballast__rget(r, &v, sizeof v);
  return v;
}
static inline int64_t ballast__get_i64(ballast__rbuf_t *r) {
  int64_t v;
  ballast__rget(r, &v, sizeof v);
  return v;
}
static inline double ballast__get_f64(ballast__rbuf_t *r) {
  double v;
  ballast__rget(r, &v, sizeof v);
  return v;
}
/* A string of the record: a pointer into the reader's memory, valid as long
 * as that memory is. */
static inline const char *ballast__get_str(ballast__rbuf_t *r) {
  if (r->bad)
    return "";
  const unsigned char *z = memchr(r->p, 0, (size_t)(r->end - r->p));
  if (!z) {
    r->bad = 1;
    return "";
  }
  const char *s = (const char *)r->p;
  r->p = z + 1;
  return s;
}

#endif
