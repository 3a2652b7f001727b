/*
 * Small utilities every layer shares: rounding, the two 64-bit mixers, and
 * the library's allocation functions.
 *
 * Every allocation of the mapping engine, the task runtime and load
 * balancing goes through ballast__malloc and its siblings. They behave as
 * the C library's, plus one test hook: ballast__alloc_fail_after(n) makes the
 * n-th following allocation fail (and only that one), so a test can fail
 * every allocation of a whole operation in turn and check that nothing is
 * lost. mon keeps its own allocations (its wrappers never fail into the
 * application), pia allocates nothing on its query paths.
 */
#ifndef BALLAST_UTIL_H
#define BALLAST_UTIL_H

#include <stddef.h>
#include <stdint.h>

/** n rounded up to a multiple of 8 (wire and pack alignment). */
static inline size_t ballast__round8(size_t n) { return (n + 7) & ~(size_t)7; }

/** FNV-1a's offset basis: the start of ballast__fnv1a. */
#define BALLAST__FNV_OFFSET 14695981039346656037ull

/** FNV-1a over \a n bytes, continuing from \a h (BALLAST__FNV_OFFSET for a
 *  new hash): the byte hash of task keys and parameters (the task index,
 *  the parameters' hash, the tree map, the record's keys). Records store
 *  its values, so it must not change. */
static inline uint64_t ballast__fnv1a(uint64_t h, const void *p, size_t n) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++) {
    h ^= b[i];
    h *= 1099511628211ull;
  }
  return h;
}

/** splitmix64's output function: a seeded, well-mixed, deterministic
 *  sequence is ballast__splitmix64(seed + i). */
static inline uint64_t ballast__splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

/** The first half of MurmurHash3's 64-bit finaliser: cheap mixing of a hash
 *  key (mon's signature table). Not a generator. */
static inline uint64_t ballast__fmix64(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  return x;
}

void *ballast__malloc(size_t n);
void *ballast__calloc(size_t n, size_t size);
void *ballast__realloc(void *p, size_t n);
char *ballast__strdup(const char *s);
/** posix_memalign through the hook: 0, or ENOMEM (and *out untouched). */
int ballast__memalign(void **out, size_t align, size_t n);

/* ---- large buffers (large_alloc.c) ----------------------------------------
 * Buffers of 1 MiB and more are 2 MiB aligned and offered transparent huge
 * pages; one of 1-2 MiB gets the whole 2 MiB (ballast__large_len). Freed
 * with free(). Task arrays and the migration engine's buffers use them. */
#define BALLAST__HUGE_BYTES ((size_t)2 << 20)
/** Bytes ballast__alloc_large(n) reserves: n, or a whole huge page for 1-2 MiB. */
size_t ballast__large_len(size_t n);
/** Memory for a task array or a migration buffer of n bytes; NULL on failure. */
void *ballast__alloc_large(size_t n);

/** Test hook: the n-th allocation from now fails (n <= 0: none). Not thread
 *  safe; tests arm it on one thread. */
void ballast__alloc_fail_after(int n);
/** Counts, for the hook, an allocation served without memory from the C
 *  library (a block from a cache): nonzero when the hook fails it, so a
 *  sweep can fail cache hits in turn too. */
int ballast__alloc_tick(void);
/** Allocations the hook has seen since it was last armed (tests use it to
 *  know when a sweep over every allocation is complete). */
long ballast__alloc_count(void);

/** Length (1..4) of the well-formed UTF-8 sequence at \a s, 0 when the
 *  bytes there are not one (stray continuation, overlong form, surrogate,
 *  past U+10FFFF, cut short). \a s is NUL-terminated. */
int ballast__utf8_seq(const unsigned char *s);

/** Copies \a s into \a out (\a outlen >= 1 bytes, always terminated, cut
 *  at a whole escape) with control characters, backslashes and bytes that
 *  are not UTF-8 escaped (\n, \t, \\, \xNN), and \a extra's characters too
 *  (e.g. "/" for a path component), so a name printed in a log or a report
 *  is one line and reads back unambiguously. Returns the length written. */
int ballast__escape(const char *s, const char *extra, char *out, int outlen);

#endif
