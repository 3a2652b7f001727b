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
  /* What the assertion reads is set by the program (the slow instances
   * raise $slow), so its verdicts do not depend on how a loaded machine
   * stretches the others; the labels come from the measured times. */
  static int slow;
  CHECK_EQ(pia_assert_var_register("slow", PIA_VAR_INT, &slow), 0);
  o.expr = "$slow == 0";
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
  for (int i = 0; i < 60; i++) {
    slow = i == 0 || i == 35 || i == 50;
    step(slow ? 12e-3 : 1e-3);
  }
  pia_regid_t id = pia_region_find("step");
  pia_repinfo_t in;
  CHECK_EQ(pia_region_rep_info(id, &in), 0); /* marked repeated by the flag */
  CHECK_EQ(in.count, 60);
  long long ngood = 0, gslow = 0;
  for (long long i = 0; i < 60; i++) {
    pia_rep_t r;
    CHECK_EQ(pia_region_rep_get(id, i, &r), 0);
    ngood += r.label == PIA_REP_GOOD;
    gslow += r.label == PIA_REP_GOOD && (i == 35 || i == 50);
  }
  pia_rep_t r0;
  CHECK_EQ(pia_region_rep_get(id, 0, &r0), 0);
  CHECK_EQ(r0.label, PIA_REP_FIRST);
  pia_assert_result_t rg, rp;
  CHECK_EQ(pia_assert_result(good, &rg), 0);
  CHECK_EQ(pia_assert_result(plain, &rp), 0);
  /* Every instance checked: the three slow ones fail, the first at once. */
  CHECK_EQ(rp.checks, 60);
  CHECK_EQ(rp.passes, 57);
  CHECK_EQ(rp.first_fail, 1);
  /* Only the good repetitions checked: the first never is; 35 and 50 fail
   * only if they were labelled good (12 ms against a 1 ms median: outliers
   * unless the machine stretched the median past 6 ms). */
  CHECK_EQ(rg.checks, ngood);
  CHECK_EQ(rg.passes, ngood - gslow);
  MPI_Finalize();
  TEST_PASS("assert_good");
}
