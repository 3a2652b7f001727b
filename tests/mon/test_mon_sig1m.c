/* 10^6 distinct signatures through mon__record, nothing lost: the table, the
 * per-activity and per-(activity, region) aggregates and the partner matrix
 * are checked exactly against sums computed here. No MPI traffic: mon is
 * initialised directly and driven with synthetic signatures. */
#include <stdlib.h>

#include "mon/mon_acts.h"
#include "mon/mon_internal.h"
#include "test_util.h"

#define NSIG 1000000
#define NPARTNER 1000

typedef struct {
  uint64_t count, nbytes, tsum_ticks;
  uint64_t n;
} tot_t;

static int visit(const mon__sigview_t *s, void *ctx) {
  tot_t *t = ctx;
  t->n++;
  t->count += s->count;
  t->nbytes += s->nbytes;
  /* each signature's bytes is its own size: count x size == credited bytes */
  if (s->nbytes != s->count * s->bytes)
    return 1;
  return 0;
}

int main(void) {
  setenv("BALLAST_REPORT", "none", 1);
  unsetenv("BALLAST_PROFILE");
  unsetenv("BALLAST_MONITOR");
  setenv("BALLAST_REGION_CPU", "0", 1); /* regions without CPU time: checked below */
  mon__init(NULL, NULL);
  CHECK(mon__active());
  uint64_t base = mon__sig_count();

  static uint64_t calls[MON__NACT], bytes[MON__NACT], pbytes[NPARTNER], pmsgs[NPARTNER];
  /* the partner matrix holds the point-to-point and one-sided messages that
   * a call itself moves (mon__act_msg); requests count at completion */
  mon__tls_t *t = mon__enter();
  CHECK(t != NULL);
  CHECK(mon__enter() == NULL); /* reentrancy guard */
  CHECK_EQ(mon_region_begin("sig"), 0);
  int reg = mon__region_current();
  for (int pass = 0; pass < 2; pass++) {
    /* pass 0: 10^6 new signatures; pass 1: the first 1000 again */
    int n = pass ? 1000 : NSIG;
    for (int i = 0; i < n; i++) {
      int act = i % MON__NACT, partner = i % NPARTNER;
      uint64_t b = (uint64_t)i + 1; /* distinct per i: distinct signatures */
      mon__record(t, act, partner, b, (uint64_t)(i % 97) + 1);
      calls[act]++;
      bytes[act] += b;
      if (mon__act_msg[act] & MON__MSG_CALL) {
        pbytes[partner] += b;
        pmsgs[partner]++;
      }
    }
  }
  CHECK_EQ(mon_region_end("sig"), 0);
  mon__leave(t);

  CHECK_EQ(mon__sig_count() - base, NSIG);
  tot_t tot = {0, 0, 0, 0};
  CHECK_EQ(mon__sig_foreach(visit, &tot), 0);
  CHECK_EQ(tot.n, NSIG + base);
  uint64_t ncalls = 0, nbytes = 0;
  for (int a = 0; a < MON__NACT; a++) {
    ncalls += calls[a];
    nbytes += bytes[a];
    mon__actstats_t s = {0, 0, 0.0, INFINITY, 0.0}, r = {0, 0, 0.0, INFINITY, 0.0};
    CHECK_EQ(mon__act_read(a, -1, &s), 0);
    CHECK_EQ(mon__act_read(a, reg, &r), 0);
    CHECK_EQ(s.ncalls, calls[a]);
    CHECK_EQ(s.nbytes, bytes[a]);
    CHECK_EQ(r.ncalls, calls[a]); /* every call was made inside "sig" */
    CHECK_EQ(r.nbytes, bytes[a]);
    CHECK_DGT(s.tsum, 0.0);
    CHECK_DLE(s.tmin, s.tmax);
  }
  CHECK_EQ(tot.count, ncalls);
  CHECK_EQ(tot.nbytes, nbytes);
  CHECK_EQ(ncalls, NSIG + 1000);

  mon__regstats_t rs;
  CHECK_EQ(mon__region_read(reg, &rs), 0);
  CHECK_EQ(rs.count, 1);
  CHECK_DGT(rs.wtime, 0.0);
  CHECK_EQ(rs.cputime, 0.0); /* BALLAST_REGION_CPU=0 */
  CHECK_DLE(rs.mtime, rs.wtime); /* synthetic ticks, all inside the region */

  /* the group ALL is the sum of everything but MPI_Init, MPI_Init_thread and
   * MPI_Finalize (README "What the figures mean") */
  uint64_t life_calls = 0, life_bytes = 0;
  static const int life[] = {MON_ACT_MPI_Init, MON_ACT_MPI_Init_thread, MON_ACT_MPI_Finalize};
  for (int i = 0; i < 3; i++) {
    life_calls += calls[life[i]];
    life_bytes += bytes[life[i]];
  }
  CHECK_GT(life_calls, 0);
  mon__actstats_t all = {0, 0, 0.0, INFINITY, 0.0};
  CHECK_EQ(mon__act_read(MON_GRP_ALL, -1, &all), 0);
  CHECK_EQ(all.ncalls, ncalls - life_calls);
  CHECK_EQ(all.nbytes, nbytes - life_bytes);

  /* partners: whole run and region agree, nothing lost */
  for (int p = 0; p < NPARTNER; p++) {
    mon__partner_t w, r;
    CHECK_EQ(mon__partner_read(-1, p, &w), 0);
    CHECK_EQ(mon__partner_read(reg, p, &r), 0);
    CHECK_EQ(w.bytes + w.rbytes, pbytes[p]);
    CHECK_EQ(r.bytes + r.rbytes, pbytes[p]);
    CHECK_EQ(w.msgs + w.rmsgs, pmsgs[p]);
    CHECK_GT(pmsgs[p], 0);
  }
  mon__partner_t none;
  CHECK_EQ(mon__partner_read(-1, NPARTNER + 5, &none), 0);
  CHECK_EQ(none.bytes + none.msgs + none.rbytes + none.rmsgs, 0);
  CHECK_EQ(mon__partner_read(-1, -1, &none), BALLAST_EINVAL);

  /* bad arguments of the read side */
  mon__actstats_t s = {0, 0, 0.0, INFINITY, 0.0};
  CHECK_EQ(mon__act_read(-1, -1, &s), BALLAST_EINVAL);
  CHECK_EQ(mon__act_read(MON__NACT + MON__NGROUPS, -1, &s), BALLAST_EINVAL);
  CHECK_EQ(mon__act_read(0, mon__region_count(), &s), BALLAST_ENOTFOUND);
  CHECK_EQ(mon__act_find("MPI_Send"), MON_ACT_MPI_Send);
  CHECK_EQ(mon__act_find("no_such_call"), BALLAST_ENOTFOUND);
  CHECK_STREQ(mon__act_name(MON_ACT_MPI_Send), "MPI_Send");
  CHECK_EQ(mon__act_find(mon__act_name(MON_GRP_ALL)), MON_GRP_ALL);

  mon__finalize();
  TEST_PASS("mon_sig1m");
  return 0;
}
