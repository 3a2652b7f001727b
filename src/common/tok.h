/*
 * A cursor over one line of text split at spaces: the readers of ballast's
 * own line-oriented files (the load-balancing record, the hardware model's
 * text form) read numbers and words through it. A token that is missing or
 * malformed sets \c bad and yields 0 (or an empty word); the caller checks
 * \c bad once per line and names the line in its message.
 */
#ifndef BALLAST_TOK_H
#define BALLAST_TOK_H

#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  const char *p; /* next character */
  int bad;       /* a token was missing or malformed */
} ballast__tok_t;

static inline void ballast__tok_skip(ballast__tok_t *t) {
  while (*t->p == ' ' || *t->p == '\t')
    t->p++;
}

/* The next word (not NUL-terminated: *len bytes), or NULL and bad. */
static inline const char *ballast__tok_word(ballast__tok_t *t, size_t *len) {
  ballast__tok_skip(t);
  const char *b = t->p;
  while (*t->p && *t->p != ' ' && *t->p != '\t' && *t->p != '\n')
    t->p++;
  *len = (size_t)(t->p - b);
  if (*len == 0) {
    t->bad = 1;
    return NULL;
  }
  return b;
}

/* 1 when the next word is \a w (consumed), else 0 (nothing consumed). */
static inline int ballast__tok_is(ballast__tok_t *t, const char *w) {
  ballast__tok_skip(t);
  size_t n = strlen(w);
  if (strncmp(t->p, w, n) != 0 || (t->p[n] && t->p[n] != ' ' && t->p[n] != '\n'))
    return 0;
  t->p += n;
  return 1;
}

/* A finite double (decimal or C99 hexadecimal). */
static inline double ballast__tok_f64(ballast__tok_t *t) {
  ballast__tok_skip(t);
  char *e;
  errno = 0;
  double v = strtod(t->p, &e);
  if (e == t->p || (*e && *e != ' ' && *e != '\n') || !isfinite(v)) {
    t->bad = 1;
    return 0;
  }
  t->p = e;
  return v;
}

/* An integer in lo..hi. */
static inline long long ballast__tok_int(ballast__tok_t *t, long long lo, long long hi) {
  ballast__tok_skip(t);
  char *e;
  errno = 0;
  long long v = strtoll(t->p, &e, 10);
  if (e == t->p || (*e && *e != ' ' && *e != '\n') || errno || v < lo || v > hi) {
    t->bad = 1;
    return 0;
  }
  t->p = e;
  return v;
}

/* 1 when nothing but blanks and a newline is left. */
static inline int ballast__tok_done(ballast__tok_t *t) {
  ballast__tok_skip(t);
  return *t->p == '\0' || (*t->p == '\n' && t->p[1] == '\0');
}

#endif /* BALLAST_TOK_H */
