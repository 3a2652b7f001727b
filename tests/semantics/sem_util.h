/* Helpers of the MPI-semantics tests (tests/semantics): each program runs
 * unwatched (linked to MPI only), under LD_PRELOAD=libballast.so, with
 * BALLAST_MONITOR=0, and linked to ballast (SEM_MON: then it also checks
 * ballast's accounting through mon's internal read API). Every value MPI
 * gives the program is printed as a line "SEM <world rank> <what> <values>"
 * and check_same.py requires the same lines in every run: a watched program
 * must see exactly what an unwatched one sees. The CHECK macros of
 * test_util.h assert what the MPI standard says the values are. With
 * SEM_OUT set, each process writes its lines to SEM_OUT.<world rank>
 * (mpiexec may cut lines of several processes into each other). */
#ifndef BALLAST_TEST_SEM_UTIL_H
#define BALLAST_TEST_SEM_UTIL_H

#include <stdarg.h>
#include <stdint.h>

#include "test_util.h"

#ifdef SEM_MON
#include "mon/mon_hooks.h"
#include "mon/mon_internal.h"
#endif

static inline int sem_rank(void) {
  int r = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

/* One result line keyed by \a key (a world rank, or a topology's vertex,
 * which a reordering may host on another process); the runs are compared
 * line by line (sorted). */
static inline void sem_vout(int key, const char *what, const char *fmt, va_list ap) {
  static FILE *fp;
  if (fp == NULL) {
    const char *base = getenv("SEM_OUT");
    if (base != NULL && *base) {
      char path[1024];
      snprintf(path, sizeof path, "%s.%d", base, sem_rank());
      fp = fopen(path, "a");
      CHECK(fp != NULL);
    } else {
      fp = stdout;
    }
  }
  char buf[2048];
  vsnprintf(buf, sizeof buf, fmt, ap);
  fprintf(fp, "SEM %d %s %s\n", key, what, buf);
  fflush(fp);
}

static inline void sem_out(const char *what, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  sem_vout(sem_rank(), what, fmt, ap);
  va_end(ap);
}

static inline void sem_out_as(int key, const char *what, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  sem_vout(key, what, fmt, ap);
  va_end(ap);
}

/* Received bytes and messages ballast credited from world rank p so far
 * (0 when not linked to ballast: only the watched build checks them). */
typedef struct {
  uint64_t rbytes, rmsgs, bytes, msgs;
} sem_traffic_t;

static inline sem_traffic_t sem_traffic(int p) {
  sem_traffic_t r = {0, 0, 0, 0};
#ifdef SEM_MON
  mon__partner_t out;
  memset(&out, 0, sizeof out);
  CHECK_EQ(mon__partner_read(-1, p, &out), 0);
  r.rbytes = out.rbytes;
  r.rmsgs = out.rmsgs;
  r.bytes = out.bytes;
  r.msgs = out.msgs;
#else
  (void)p;
#endif
  return r;
}

/* Watched build only: traffic with world rank p moved by exactly these
 * received (and sent) bytes and messages since b. */
#ifdef SEM_MON
#define SEM_CHECK_RECV(p, b, drbytes, drmsgs)                                \
  do {                                                                       \
    if (!mon__active())                                                      \
      break; /* BALLAST_MONITOR=0: nothing is counted */                    \
    sem_traffic_t now_ = sem_traffic(p);                                     \
    CHECK_EQ(now_.rbytes - (b).rbytes, (drbytes));                           \
    CHECK_EQ(now_.rmsgs - (b).rmsgs, (drmsgs));                              \
  } while (0)
#define SEM_CHECK_SENT(p, b, dbytes, dmsgs)                                  \
  do {                                                                       \
    if (!mon__active())                                                      \
      break;                                                                 \
    sem_traffic_t now_ = sem_traffic(p);                                     \
    CHECK_EQ(now_.bytes - (b).bytes, (dbytes));                              \
    CHECK_EQ(now_.msgs - (b).msgs, (dmsgs));                                 \
  } while (0)
#else
#define SEM_CHECK_RECV(p, b, drbytes, drmsgs) ((void)(b))
#define SEM_CHECK_SENT(p, b, dbytes, dmsgs) ((void)(b))
#endif

/* Traffic with every world rank (up to SEM_MAXP); the watched build checks
 * that a block that moves nothing changes none of it. */
#define SEM_MAXP 16
typedef struct {
  sem_traffic_t p[SEM_MAXP];
} sem_all_t;

static inline sem_all_t sem_all(void) {
  sem_all_t a;
  int n = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  memset(&a, 0, sizeof a);
  for (int i = 0; i < n && i < SEM_MAXP; i++)
    a.p[i] = sem_traffic(i);
  return a;
}

#ifdef SEM_MON
#define SEM_CHECK_NOTHING(b)                                                 \
  do {                                                                       \
    sem_all_t now_ = sem_all();                                              \
    for (int i_ = 0; i_ < SEM_MAXP; i_++) {                                  \
      CHECK_EQ(now_.p[i_].rbytes, (b).p[i_].rbytes);                         \
      CHECK_EQ(now_.p[i_].rmsgs, (b).p[i_].rmsgs);                           \
      CHECK_EQ(now_.p[i_].bytes, (b).p[i_].bytes);                           \
      CHECK_EQ(now_.p[i_].msgs, (b).p[i_].msgs);                             \
    }                                                                        \
  } while (0)
#else
#define SEM_CHECK_NOTHING(b) ((void)(b))
#endif

#endif
