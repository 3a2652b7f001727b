/* The library's allocation functions and their failure hook (util.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"

static int fail_countdown; /* > 0: the allocation that brings it to 0 fails */
static long seen;

void ballast__alloc_fail_after(int n) {
  fail_countdown = n > 0 ? n : 0;
  seen = 0;
}

long ballast__alloc_count(void) { return seen; }

static int fails(void) {
  seen++;
  return fail_countdown > 0 && --fail_countdown == 0;
}

int ballast__alloc_tick(void) { return fails(); }

void *ballast__malloc(size_t n) { return fails() ? NULL : malloc(n); }

void *ballast__calloc(size_t n, size_t size) {
  return fails() ? NULL : calloc(n, size);
}

void *ballast__realloc(void *p, size_t n) { return fails() ? NULL : realloc(p, n); }

char *ballast__strdup(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = ballast__malloc(n);
  if (d)
    memcpy(d, s, n);
  return d;
}

int ballast__memalign(void **out, size_t align, size_t n) {
  if (fails())
    return ENOMEM;
  return posix_memalign(out, align, n);
}
