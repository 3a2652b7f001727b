/* An assertion marked good (PIA_ASSERT_GOOD, "good" in a file) is checked
 * only at the good repetitions of its region: the first instance, the
 * warm-up and the outliers neither fail it nor count; the same assertion
 * without the flag fails at them. The flag on the whole run or an in-code
 * scope is refused. One rank. */
#include <time.h>

#include <ballast/pia.h>
#include <ballast/pia_assert.h>

#include "test_util.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void step(double s) {
  CHECK_EQ(mon_region_begin("step"), 0);
  double end = now() + s;
  while (now() < end) {
  }
  CHECK_EQ(mon_region_end("step"), 0);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  pia_assert_options_t o;
  pia_assert_options_init(&o);
  o.expr = "WallTime < 4 ms";
  o.region = "step";
  o.flags = PIA_ASSERT_GOOD;
  int good, plain, bad;
  CHECK_EQ(pia_assert_create_ex(&o, &good), 0);
  o.flags = 0;
  CHECK_EQ(pia_assert_create_ex(&o, &plain), 0);
  /* The flag needs a region. */
  o.flags = PIA_ASSERT_GOOD;
  o.region = PIA_ASSERT_RUN;
  CHECK_EQ(pia_assert_create_ex(&o, &bad), BALLAST_EINVAL);
  o.region = NULL;
  CHECK_EQ(pia_assert_create_ex(&o, &bad), BALLAST_EINVAL);
  o.region = "step";
  o.flags = 64;
  CHECK_EQ(pia_assert_create_ex(&o, &bad), BALLAST_EINVAL);

  /* The first instance and two outliers at 12 ms; the others at 1 ms. */
  for (int i = 0; i < 60; i++)
    step(i == 0 || i == 35 || i == 50 ? 12e-3 : 1e-3);
  pia_regid_t id = pia_region_find("step");
  pia_repinfo_t in;
  CHECK_EQ(pia_region_rep_info(id, &in), 0); /* marked repeated by the flag */
  CHECK_EQ(in.count, 60);
  /* A loaded machine stretches the instances: count from what was kept.
   * The assertion's WallTime and mon's wall time are two clock reads apart,
   * so an instance within 0.1 ms of 4 ms may go either way. */
  long long ngood = 0, gsure = 0, gmaybe = 0, sure = 0, maybe = 0;
  for (long long i = 0; i < 60; i++) {
    pia_rep_t r;
    CHECK_EQ(pia_region_rep_get(id, i, &r), 0);
    int g = r.label == PIA_REP_GOOD;
    ngood += g;
    sure += r.wtime < 3.9e-3;
    maybe += r.wtime < 4.1e-3;
    gsure += g && r.wtime < 3.9e-3;
    gmaybe += g && r.wtime < 4.1e-3;
  }
  pia_assert_result_t rg, rp;
  CHECK_EQ(pia_assert_result(good, &rg), 0);
  CHECK_EQ(pia_assert_result(plain, &rp), 0);
  CHECK_EQ(rp.checks, 60);
  CHECK(rp.passes >= sure && rp.passes <= maybe);
  CHECK_LE(rp.passes, 57);
  CHECK_EQ(rp.first_fail, 1);
  CHECK_EQ(rg.checks, ngood);
  CHECK(rg.passes >= gsure && rg.passes <= gmaybe);
  MPI_Finalize();
  TEST_PASS("assert_good");
}
