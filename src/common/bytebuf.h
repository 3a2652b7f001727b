/*
 * rta's byte buffers (private): a growable writer and a bounds-checked
 * reader for the records rta exchanges between ranks (task records in the
 * tree map, task descriptors in migration). Each user adds its own field
 * formats on top (strings length-prefixed or NUL-terminated).
 *
 * Writer: a failed allocation sets oom and every later put does nothing, so
 * a record is written without checks and oom tested once at the end.
 * Reader: reading past the end sets bad and yields zeros, so a record is
 * read without checks and bad tested once at the end.
 */
#ifndef BALLAST_RTA_BYTEBUF_H
#define BALLAST_RTA_BYTEBUF_H

#include <stdlib.h>
#include <string.h>

typedef struct {
  unsigned char *p; /* owned; free() it */
  size_t n, cap;
  int oom;
} rta__wbuf_t;

static inline void rta__wput(rta__wbuf_t *b, const void *src, size_t len) {
  if (b->oom)
    return;
  if (b->n + len > b->cap) {
    size_t cap = b->cap ? b->cap * 2 : 512;
    while (cap < b->n + len)
      cap *= 2;
    unsigned char *p = realloc(b->p, cap);
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

typedef struct {
  const unsigned char *p, *end;
  int bad;
} rta__rbuf_t;

static inline void rta__rget(rta__rbuf_t *r, void *dst, size_t len) {
  if (r->bad || (size_t)(r->end - r->p) < len) {
    r->bad = 1;
    memset(dst, 0, len);
    return;
  }
  memcpy(dst, r->p, len);
  r->p += len;
}

#endif
