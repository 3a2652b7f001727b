/*
 * JSON text for the files ballast writes (the profile's members written
 * through stdio streams, e.g. open_memstream).
 */
#ifndef BALLAST_COMMON_JSON_H
#define BALLAST_COMMON_JSON_H

#include <stdio.h>

/* Writes \a s as a JSON string literal: quotes, backslashes and control
 * bytes escaped; other bytes (UTF-8) as they are. */
void ballast__json_str(FILE *f, const char *s);

/* A text built through a stdio stream in memory (open_memstream). */
typedef struct {
  char *buf;
  size_t len;
  FILE *f;
} ballast__text_t;

/* Opens \a t; the stream to write to, or NULL without memory. */
FILE *ballast__text_open(ballast__text_t *t);
/* Closes \a t: the malloc'ed text, or NULL when writing it failed. */
char *ballast__text_close(ballast__text_t *t);

#endif
