/* Helpers of the wrapper exactness tests: read mon's figures through its
 * internal read API and compare deltas around a block of known traffic (the
 * tests' own synchronisation is monitored too, so only the activities a block
 * exercises are compared). */
#ifndef BALLAST_TEST_MONWRAP_UTIL_H
#define BALLAST_TEST_MONWRAP_UTIL_H

#include <stdint.h>

#include "test_util.h"
#include "mon/mon_internal.h"

typedef struct {
  uint64_t calls, bytes;
} mw_act_t;

/* Whole-run calls and bytes of an activity (or group) of this process. */
static inline mw_act_t mw_act(const char *name) {
  int id = mon__act_find(name);
  if (id < 0) {
    fprintf(stderr, "activity %s not found (%d)\n", name, id);
    CHECK_GE(id, 0);
  }
  mon__actstats_t s;
  memset(&s, 0, sizeof s);
  s.tmin = INFINITY;
  CHECK_EQ(mon__act_read(id, -1, &s), 0);
  mw_act_t r = {s.ncalls, s.nbytes};
  return r;
}

/* Whole-run traffic with world rank p. */
static inline mon__partner_t mw_partner(int p) {
  mon__partner_t out;
  memset(&out, 0, sizeof out);
  CHECK_EQ(mon__partner_read(-1, p, &out), 0);
  return out;
}

/* Calls and bytes of the signatures of activity `name` with partner p
 * (MON_NO_PARTNER included), summed over regions, sizes and threads. */
typedef struct {
  int act, partner;
  mw_act_t sum;
} mw_sigq_t;

static inline int mw_sig_cb_(const mon__sigview_t *v, void *ctx) {
  mw_sigq_t *q = (mw_sigq_t *)ctx;
  if (v->act == q->act && v->partner == q->partner) {
    q->sum.calls += v->count;
    q->sum.bytes += v->nbytes;
  }
  return 0;
}

static inline mw_act_t mw_sig(const char *name, int p) {
  mw_sigq_t q = {mon__act_find(name), p, {0, 0}};
  CHECK_GE(q.act, 0);
  CHECK_EQ(mon__sig_foreach(mw_sig_cb_, &q), 0);
  return q.sum;
}

/* The activity moved by exactly dcalls calls and dbytes bytes since b. */
#define CHECK_ACT(name, b, dcalls, dbytes)                                   \
  do {                                                                       \
    mw_act_t now_ = mw_act(name);                                            \
    CHECK_EQ(now_.calls - (b).calls, (dcalls));                              \
    CHECK_EQ(now_.bytes - (b).bytes, (dbytes));                              \
  } while (0)

/* Sent (bytes, msgs) and received (rbytes, rmsgs) to/from world rank p since b. */
#define CHECK_PARTNER(p, b, dbytes, dmsgs, drbytes, drmsgs)                  \
  do {                                                                       \
    mon__partner_t now_ = mw_partner(p);                                     \
    CHECK_EQ(now_.bytes - (b).bytes, (dbytes));                              \
    CHECK_EQ(now_.msgs - (b).msgs, (dmsgs));                                 \
    CHECK_EQ(now_.rbytes - (b).rbytes, (drbytes));                           \
    CHECK_EQ(now_.rmsgs - (b).rmsgs, (drmsgs));                              \
  } while (0)

#endif
