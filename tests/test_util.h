/* Assertion macros for ballast's tests: each failure prints the expression,
 * both values, the file, the line and the MPI rank, then aborts the job. */
#ifndef BALLAST_TEST_UTIL_H
#define BALLAST_TEST_UTIL_H

#include <inttypes.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline int test_rank_(void) {
  int init = 0, fin = 0, r = -1;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  if (init && !fin)
    PMPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

static inline void test_fail_(void) {
  int init = 0, fin = 0;
  fflush(stderr);
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  if (init && !fin)
    PMPI_Abort(MPI_COMM_WORLD, 1);
  abort();
}

#define CHECK(cond)                                                          \
  do {                                                                       \
    if (!(cond)) {                                                           \
      fprintf(stderr, "%s:%d: [rank %d] CHECK failed: %s\n", __FILE__,       \
              __LINE__, test_rank_(), #cond);                                \
      test_fail_();                                                          \
    }                                                                        \
  } while (0)

#define CHECK_INT_(a, op, b)                                                 \
  do {                                                                       \
    long long va_ = (long long)(a), vb_ = (long long)(b);                    \
    if (!(va_ op vb_)) {                                                     \
      fprintf(stderr, "%s:%d: [rank %d] CHECK failed: %s " #op " %s "        \
              "(%lld vs %lld)\n", __FILE__, __LINE__, test_rank_(), #a, #b,  \
              va_, vb_);                                                     \
      test_fail_();                                                          \
    }                                                                        \
  } while (0)

#define CHECK_EQ(a, b) CHECK_INT_(a, ==, b)
#define CHECK_NE(a, b) CHECK_INT_(a, !=, b)
#define CHECK_LT(a, b) CHECK_INT_(a, <, b)
#define CHECK_LE(a, b) CHECK_INT_(a, <=, b)
#define CHECK_GT(a, b) CHECK_INT_(a, >, b)
#define CHECK_GE(a, b) CHECK_INT_(a, >=, b)

#define CHECK_DBL_(a, op, b)                                                 \
  do {                                                                       \
    double da_ = (double)(a), db_ = (double)(b);                             \
    if (!(da_ op db_)) {                                                     \
      fprintf(stderr, "%s:%d: [rank %d] CHECK failed: %s " #op " %s "        \
              "(%.9g vs %.9g)\n", __FILE__, __LINE__, test_rank_(), #a, #b,  \
              da_, db_);                                                     \
      test_fail_();                                                          \
    }                                                                        \
  } while (0)
#define CHECK_DLT(a, b) CHECK_DBL_(a, <, b)
#define CHECK_DLE(a, b) CHECK_DBL_(a, <=, b)
#define CHECK_DGT(a, b) CHECK_DBL_(a, >, b)
#define CHECK_DGE(a, b) CHECK_DBL_(a, >=, b)
/* |a - b| <= tol */
#define CHECK_NEAR(a, b, tol)                                                \
  do {                                                                       \
    double na_ = (double)(a), nb_ = (double)(b), nt_ = (double)(tol);        \
    if (!(fabs(na_ - nb_) <= nt_)) {                                         \
      fprintf(stderr, "%s:%d: [rank %d] CHECK_NEAR failed: %s ~ %s "         \
              "(%.9g vs %.9g, tol %.3g)\n", __FILE__, __LINE__,              \
              test_rank_(), #a, #b, na_, nb_, nt_);                          \
      test_fail_();                                                          \
    }                                                                        \
  } while (0)

#define CHECK_STREQ(a, b)                                                    \
  do {                                                                       \
    const char *sa_ = (a), *sb_ = (b);                                       \
    if (!sa_ || !sb_ || strcmp(sa_, sb_) != 0) {                             \
      fprintf(stderr, "%s:%d: [rank %d] CHECK_STREQ failed: %s == %s "       \
              "(\"%s\" vs \"%s\")\n", __FILE__, __LINE__, test_rank_(), #a,  \
              #b, sa_ ? sa_ : "(null)", sb_ ? sb_ : "(null)");               \
      test_fail_();                                                          \
    }                                                                        \
  } while (0)

/* Each test prints one line on success so the log shows what ran. */
#define TEST_PASS(name)                                                      \
  do {                                                                       \
    if (test_rank_() <= 0)                                                   \
      printf("PASS %s\n", name);                                             \
  } while (0)

#endif
