/*
 * A bounded, mergeable distribution of durations (or any non-negative
 * integers): a log-bucketed histogram. Never installed.
 *
 * Buckets. A value v (nanoseconds for mon's durations) falls in bucket
 *   v                                  when v < 64 (exact buckets);
 *   (e - 5) * 64 + (v >> (e - 6)) % 64 otherwise, e = 63 - clz(v),
 * i.e. its power of two (octave) and the 6 bits below its leading bit: one
 * count-leading-zeros, two shifts, no log(). Octave e >= 6 is split into 64
 * buckets of width 2^(e-6); there are 59 groups of 64 (group 0 exact, groups
 * 1..58 the octaves 2^6 .. 2^63): BALLAST__DIST_NBUCKETS = 3,776 buckets
 * cover every uint64_t.
 *
 * Error bound. A quantile is answered with the midpoint of the bucket that
 * holds the exact order statistic, clamped into [min, max] (both exact);
 * the answer differs from the exact quantile by at most
 * BALLAST__DIST_REL_ERR = 1/128 (0.78%) of it (a bucket's half width over its
 * lower bound), and is exact below 64 ns and at q = 0 (min) and q = 1 (max).
 * The exact quantile of n values for q in [0, 1] is the k-th smallest,
 * k = max(1, ceil(q n)) (the "nearest rank" definition).
 *
 * Memory per distribution. The record itself is 64 bytes (one cache line
 * where the array holding it is 64-byte aligned, as mon's are) and holds one
 * bucket inline (a region entered once, or always as fast, costs nothing
 * more). The second distinct bucket allocates a table of 59 group pointers
 * (472 bytes), and each occupied octave one group of 64 64-bit counters
 * (512 bytes): a distribution whose values span a factor of 1,000 (10
 * octaves) takes at most 64 + 472 + 11 x 512 = 6,168 bytes; the bound, every
 * octave occupied, is 64 + 472 + 59 x 512 = 30,744 bytes.
 *
 * Moments. Count, min, max exactly; the mean and the variance from sums of
 * the differences to the first value (shifted sums: no cancellation when the
 * values are large and close), combined across distributions with Chan's
 * formula. The moments assume values whose sum stays below 2^63 (292
 * years in ns: durations of one thread); the buckets hold every uint64_t.
 *
 * Concurrency. One writer per distribution (its thread); readers on other
 * threads load every counter with relaxed atomics and the table and groups
 * with acquire: a reader sees each counter whole and never a freed or moved
 * block (the inline entries are frozen, not cleared, when the table
 * appears). Merges, flattening and ballast__dist_free are for the owner or
 * for quiet times (after the run, single-threaded tests).
 *
 * Out of memory. A value that needs a group that cannot be allocated is
 * left out of the buckets (its count, min, max and moments still hold):
 * \c lost of the moments is the count less the values in buckets, and the
 * quantiles answer from the values kept.
 */
#ifndef BALLAST_COMMON_DIST_H
#define BALLAST_COMMON_DIST_H

#include <stddef.h>
#include <stdint.h>

#define BALLAST__DIST_SUB_BITS 6
#define BALLAST__DIST_SUB (1 << BALLAST__DIST_SUB_BITS)         /* 64 */
#define BALLAST__DIST_NGROUPS (64 - BALLAST__DIST_SUB_BITS + 1) /* 59 */
#define BALLAST__DIST_NBUCKETS (BALLAST__DIST_NGROUPS * BALLAST__DIST_SUB)
#define BALLAST__DIST_REL_ERR (1.0 / 128.0)
#define BALLAST__DIST_INLINE 1
/* An inline entry: bucket index in the top 16 bits, count in the low 48. */
#define BALLAST__DIST_ICOUNT_BITS 48

typedef struct ballast__dist {
  uint64_t count;   /* values recorded, lost ones included */
  uint64_t min, max; /* exact; meaningful once count > 0 */
  uint64_t shift;   /* the first value */
  int64_t sumd;     /* sum of (v - shift): exact (durations of one thread sum
                       to less than its run time, far below 2^63 ns) */
  double sumd2;     /* sum of (v - shift)^2 */
  uint64_t inl[BALLAST__DIST_INLINE]; /* inline buckets, 0 = unused */
  uint64_t **table; /* NULL until a 2nd distinct bucket: BALLAST__DIST_NGROUPS groups */
} ballast__dist_t;
_Static_assert(sizeof(ballast__dist_t) == 64, "a distribution is one cache line");

/** Moments of a distribution (or of several, combined). */
typedef struct {
  uint64_t count, min, max; /* min = UINT64_MAX when count == 0 */
  uint64_t lost;            /* values counted but not in a bucket (out of memory) */
  double mean, m2;                /* m2: sum of squared deviations */
} ballast__dist_moments_t;

/**
 * A whole distribution as one array (reductions, files): its moments, then
 * BALLAST__DIST_NBUCKETS counters. Merging two is adding counters and
 * combining moments (ballast__dist_flat_merge), so an MPI reduction with a
 * user operation merges one per rank in one collective.
 */
typedef struct {
  ballast__dist_moments_t m;
  uint64_t bucket[BALLAST__DIST_NBUCKETS];
} ballast__dist_flat_t;

/** The bucket of \a v. Without a branch: durations of tens of ns straddle
 *  64 ns, where a branch would be mispredicted half the time. v | 64 makes
 *  the octave of v < 64 the one of 64..127 (e = 6), whose formula gives
 *  64 + v; the compare takes the 64 off again. */
static inline unsigned ballast__dist_bucket(uint64_t v) {
  unsigned e = 63u - (unsigned)__builtin_clzll(v | BALLAST__DIST_SUB);
  unsigned b = ((e - (BALLAST__DIST_SUB_BITS - 1)) << BALLAST__DIST_SUB_BITS) |
               (unsigned)((v >> (e - BALLAST__DIST_SUB_BITS)) & (BALLAST__DIST_SUB - 1));
  return b - ((unsigned)(v < BALLAST__DIST_SUB) << BALLAST__DIST_SUB_BITS);
}

/** Smallest value of bucket \a b. */
uint64_t ballast__dist_bucket_lo(unsigned b);
/** Largest value of bucket \a b. */
uint64_t ballast__dist_bucket_hi(unsigned b);

/** Slow half of ballast__dist_add (inline entries full, or a new group). */
void ballast__dist_add_slow(ballast__dist_t *d, unsigned b);

#define BALLAST__DIST_LD(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define BALLAST__DIST_ST(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)
static inline double ballast__dist_ldd(const double *p) {
  double v;
  __atomic_load(p, &v, __ATOMIC_RELAXED);
  return v;
}
static inline void ballast__dist_std(double *p, double v) {
  __atomic_store(p, &v, __ATOMIC_RELAXED);
}

/**
 * Records \a v. O(1): a bucket index, a few compares and stores; allocates
 * only the first time a 2nd distinct bucket or a new octave appears. A zeroed
 * record is an empty distribution (calloc'ed arrays need no init). Owner
 * thread only.
 */
static inline void ballast__dist_add(ballast__dist_t *d, uint64_t v) {
  uint64_t n = BALLAST__DIST_LD(&d->count);
  if (__builtin_expect(n == 0, 0)) {
    BALLAST__DIST_ST(&d->shift, v);
    BALLAST__DIST_ST(&d->min, v);
    BALLAST__DIST_ST(&d->max, v);
  } else if (v < d->min) {
    BALLAST__DIST_ST(&d->min, v);
  } else if (v > d->max) {
    BALLAST__DIST_ST(&d->max, v);
  }
  int64_t dv = (int64_t)(v - d->shift);
  BALLAST__DIST_ST(&d->sumd, d->sumd + dv);
  ballast__dist_std(&d->sumd2, d->sumd2 + (double)dv * (double)dv);
  unsigned b = ballast__dist_bucket(v);
  uint64_t **tab = d->table;
  uint64_t *g;
  if (tab && (g = tab[b >> BALLAST__DIST_SUB_BITS]) != NULL) {
    uint64_t *c = &g[b & (BALLAST__DIST_SUB - 1)];
    BALLAST__DIST_ST(c, *c + 1);
  } else if (!tab && d->inl[0] >> BALLAST__DIST_ICOUNT_BITS == (uint64_t)b + 1 &&
             (d->inl[0] & ((1ull << BALLAST__DIST_ICOUNT_BITS) - 1)) !=
                 (1ull << BALLAST__DIST_ICOUNT_BITS) - 1) {
    BALLAST__DIST_ST(&d->inl[0], d->inl[0] + 1); /* the usual case of a steady value */
  } else {
    ballast__dist_add_slow(d, b);
  }
  /* The count last, with release: a reader that sees it sees the rest. */
  __atomic_store_n(&d->count, n + 1, __ATOMIC_RELEASE);
}

/** An empty distribution (all zeros). */
void ballast__dist_init(ballast__dist_t *d);
/** Frees what \a d allocated; it is empty again. NULL does nothing. */
void ballast__dist_free(ballast__dist_t *d);

/** Moments of \a nd distributions combined (NULL entries skipped). */
void ballast__dist_moments(const ballast__dist_t *const *d, int nd,
                           ballast__dist_moments_t *out);
/** The empty moments (count 0, min UINT64_MAX). */
void ballast__dist_moments_init(ballast__dist_moments_t *m);
/** Combines \a b into \a a (Chan's formula for mean and m2). */
void ballast__dist_moments_merge(ballast__dist_moments_t *a,
                                 const ballast__dist_moments_t *b);
/** Sample variance (m2 / (count - 1)); 0 below two values. */
double ballast__dist_variance(const ballast__dist_moments_t *m);

/**
 * Quantiles of \a nd distributions combined (NULL entries skipped): for each
 * q[i] in [0, 1], out[i] is the value of the order statistic of rank
 * max(1, ceil(q[i] n)) within BALLAST__DIST_REL_ERR (see the top of this
 * file). Any order of q. O(groups x nd x nq), independent of the count.
 * \return 0; BALLAST_EINVAL for a NULL array, nq < 0 or a q outside [0, 1]
 *         (NaN included); BALLAST_ENODATA when the distributions are empty
 *         (out left unchanged).
 */
int ballast__dist_quantiles(const ballast__dist_t *const *d, int nd,
                            const double *q, int nq, double *out);

/** Adds every value of \a src into \a dst (counts, moments). Owner of dst
 *  only. \return 0 or BALLAST_ENOMEM (dst then holds what fitted; the rest
 *  shows as lost). */
int ballast__dist_merge(ballast__dist_t *dst, const ballast__dist_t *src);

/** Count of bucket \a b in \a d. */
uint64_t ballast__dist_count_at(const ballast__dist_t *d, unsigned b);
/** Calls cb for each non-empty bucket in increasing order (index, count);
 *  stops at and returns cb's first non-zero. */
int ballast__dist_foreach(const ballast__dist_t *d,
                          int (*cb)(unsigned b, uint64_t n, void *ctx), void *ctx);
/** Adds a bucket's count directly (a file's buckets); no moments change
 *  (the count neither: the quantiles count the values in buckets).
 *  \return 0, BALLAST_ERANGE for b out of range, BALLAST_ENOMEM. */
int ballast__dist_add_bucket(ballast__dist_t *d, unsigned b, uint64_t n);

/** The empty flat distribution. */
void ballast__dist_flat_init(ballast__dist_flat_t *f);
/** Adds \a d (its buckets and moments) into \a f. */
void ballast__dist_flat_add(ballast__dist_flat_t *f, const ballast__dist_t *d);
/** Adds \a src into \a dst (the reduction's operation). */
void ballast__dist_flat_merge(ballast__dist_flat_t *dst,
                              const ballast__dist_flat_t *src);
/** Quantiles of a flat distribution, as ballast__dist_quantiles. */
int ballast__dist_flat_quantiles(const ballast__dist_flat_t *f, const double *q,
                                 int nq, double *out);

#endif /* BALLAST_COMMON_DIST_H */
