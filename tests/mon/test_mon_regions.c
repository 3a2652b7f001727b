/* Regions: nesting (counts, inclusive times), the tree, the handle form, and
 * every bad-input path (return codes, stack unchanged), then MPI_Finalize
 * with a region still open. Runs on 2 ranks; each rank checks its own data. */
#include <ballast/mon.h>
#include <string.h>

#include "mon/mon_internal.h"
#include "test_util.h"

static double spin(long n) {
  volatile double x = 1.0;
  for (long i = 0; i < n; i++)
    x = x * 1.0000001 + 1e-9;
  return x;
}

static mon__regstats_t rd(int id) {
  mon__regstats_t s;
  CHECK_EQ(mon__region_read(id, &s), 0);
  return s;
}

static void test_nesting(void) {
  for (int i = 0; i < 3; i++) {
    CHECK_EQ(mon_region_begin("outer"), 0);
    spin(20000);
    for (int j = 0; j < 2; j++) {
      CHECK_EQ(mon_region_begin("inner"), 0);
      CHECK_EQ(mon__region_depth(), 2);
      spin(50000);
      CHECK_EQ(mon_region_end("inner"), 0);
    }
    CHECK_EQ(mon_region_end("outer"), 0);
  }
  CHECK_EQ(mon__region_depth(), 0);
  CHECK_EQ(mon__region_current(), 0);
  int outer = mon__region_find_child(0, "outer");
  CHECK_GT(outer, 0);
  int inner = mon__region_find_child(outer, "inner");
  CHECK_GT(inner, outer);
  CHECK_EQ(mon__region_find("inner"), inner);
  CHECK_EQ(mon__region_parent(inner), outer);
  CHECK_EQ(mon__region_parent(outer), 0);
  CHECK_EQ(mon__region_parent(0), -1);
  CHECK_STREQ(mon__region_name(0), "ballast_main");
  CHECK_STREQ(mon__region_name(inner), "inner");
  CHECK_EQ(mon__region_first_child(outer), inner);
  CHECK_EQ(mon__region_next_sibling(inner), -1);

  mon__regstats_t so = rd(outer), si = rd(inner), s0 = rd(0);
  CHECK_EQ(so.count, 3);
  CHECK_EQ(si.count, 6);
  CHECK_DGT(si.wtime, 0.0);
  CHECK_DLE(si.wtime, so.wtime);
  CHECK_DLE(so.wtime, s0.wtime);
  CHECK_DGT(si.cputime, 0.0);
  CHECK_DLE(si.cputime, so.cputime + 1e-9);
  CHECK_EQ(s0.count, 1);
  CHECK_EQ(si.nhwc, 0); /* this machine has no counters */

  /* The same name under another parent is another region. */
  CHECK_EQ(mon_region_begin("inner"), 0);
  int inner2 = mon__region_current();
  CHECK_NE(inner2, inner);
  CHECK_EQ(mon__region_parent(inner2), 0);
  CHECK_EQ(mon_region_end("inner"), 0);
  CHECK_EQ(mon__region_find("inner"), inner); /* the first one with the name */
  CHECK_EQ(rd(inner2).count, 1);

  /* One buffer, two names: the region follows the text, not the pointer. */
  char buf[8];
  for (int i = 0; i < 2; i++) {
    snprintf(buf, sizeof buf, "buf%d", i);
    CHECK_EQ(mon_region_begin(buf), 0);
    CHECK_STREQ(mon__region_name(mon__region_current()), buf);
    CHECK_EQ(mon_region_end(buf), 0);
  }
  CHECK_NE(mon__region_find("buf0"), mon__region_find("buf1"));
  CHECK_EQ(rd(mon__region_find("buf0")).count, 1);
  CHECK_EQ(rd(mon__region_find("buf1")).count, 1);

  /* A region in itself nests as a child. */
  CHECK_EQ(mon_region_begin("rec"), 0);
  CHECK_EQ(mon_region_begin("rec"), 0);
  int r2 = mon__region_current();
  CHECK_EQ(mon_region_end("rec"), 0);
  CHECK_EQ(mon_region_end("rec"), 0);
  CHECK_EQ(mon__region_parent(r2), mon__region_find("rec"));
}

static void test_bad_input(void) {
  char longname[MON__NAME_MAX + 2];
  memset(longname, 'x', sizeof longname - 1);
  longname[sizeof longname - 1] = 0;
  char maxname[MON__NAME_MAX + 1];
  memset(maxname, 'y', sizeof maxname - 1);
  maxname[sizeof maxname - 1] = 0;

  int nreg = mon__region_count();
  CHECK_EQ(mon_region_begin("a"), 0);
  CHECK_EQ(mon_region_begin("b"), 0);
  int b = mon__region_current();
  nreg = mon__region_count();

  CHECK_EQ(mon_region_begin(NULL), BALLAST_EINVAL);
  CHECK_EQ(mon_region_begin(""), BALLAST_EINVAL);
  CHECK_EQ(mon_region_begin(longname), BALLAST_ENAMETOOLONG);
  CHECK_EQ(mon_region_end(NULL), BALLAST_EINVAL);
  CHECK_EQ(mon_region_end(""), BALLAST_EINVAL);
  CHECK_EQ(mon_region_end(longname), BALLAST_ENAMETOOLONG);
  /* the wrong region: the innermost is "b"; "a" is open but not innermost */
  for (int i = 0; i < 3; i++) /* repeated: one warning only (by eye in the log) */
    CHECK_EQ(mon_region_end("a"), BALLAST_EMISMATCH);
  CHECK_EQ(mon_region_end("never_opened"), BALLAST_EMISMATCH);
  CHECK_EQ(mon_region_end(NULL), BALLAST_EINVAL);
  /* MPI_Pcontrol never fails, whatever the level; the stack stays. */
  CHECK_EQ(MPI_Pcontrol(5, "b"), MPI_SUCCESS);
  CHECK_EQ(MPI_Pcontrol(-1, "a"), MPI_SUCCESS);
  CHECK_EQ(mon_region_leave(NULL), BALLAST_EINVAL);
  CHECK_EQ(mon_region_enter(NULL), BALLAST_EINVAL);
  mon_region_handle_t h = (mon_region_handle_t)1;
  CHECK_EQ(mon_region_handle_create(NULL, &h), BALLAST_EINVAL);
  CHECK(h == NULL);
  CHECK_EQ(mon_region_handle_create(longname, &h), BALLAST_ENAMETOOLONG);
  CHECK_EQ(mon_region_handle_create("x", NULL), BALLAST_EINVAL);
  mon_region_handle_destroy(NULL);

  /* nothing above changed the stack or created a region */
  CHECK_EQ(mon__region_depth(), 2);
  CHECK_EQ(mon__region_current(), b);
  CHECK_EQ(mon__region_count(), nreg);
  CHECK_EQ(rd(b).count, 0);

  /* the right ends still work; then an end without any begin */
  CHECK_EQ(mon_region_end("b"), 0);
  CHECK_EQ(mon_region_end("a"), 0);
  CHECK_EQ(mon__region_depth(), 0);
  CHECK_EQ(mon_region_end("a"), BALLAST_EMISMATCH);
  CHECK_EQ(mon__region_depth(), 0);
  CHECK_EQ(rd(b).count, 1);

  /* a name of exactly MON__NAME_MAX bytes is fine; Pcontrol +1/-1 enter/leave */
  CHECK_EQ(mon_region_begin(maxname), 0);
  CHECK_STREQ(mon__region_name(mon__region_current()), maxname);
  CHECK_EQ(mon_region_end(maxname), 0);
  CHECK_EQ(MPI_Pcontrol(1, "pc"), MPI_SUCCESS);
  CHECK_EQ(mon__region_depth(), 1);
  CHECK_STREQ(mon__region_name(mon__region_current()), "pc");
  CHECK_EQ(MPI_Pcontrol(-1, "pc"), MPI_SUCCESS);
  CHECK_EQ(mon__region_depth(), 0);
  CHECK_EQ(rd(mon__region_find("pc")).count, 1);
}

static void test_handles(void) {
  mon_region_handle_t task, other;
  CHECK_EQ(mon_region_handle_create("task", &task), 0);
  CHECK_EQ(mon_region_handle_create("other", &other), 0);
  CHECK_EQ(mon_region_begin("phase"), 0);
  int phase = mon__region_current();
  for (int i = 0; i < 5; i++) {
    CHECK_EQ(mon_region_enter(task), 0);
    CHECK_EQ(mon_region_leave(other), BALLAST_EMISMATCH); /* wrong handle */
    CHECK_EQ(mon__region_depth(), 2);
    CHECK_EQ(mon_region_leave(task), 0);
  }
  /* the handle enters the very region mon_region_begin("task") would */
  CHECK_EQ(mon_region_begin("task"), 0);
  int t1 = mon__region_current();
  CHECK_EQ(mon_region_end("task"), 0);
  CHECK_EQ(mon__region_find_child(phase, "task"), t1);
  CHECK_EQ(rd(t1).count, 6);
  CHECK_EQ(mon_region_end("phase"), 0);
  /* under another parent, the handle resolves again */
  CHECK_EQ(mon_region_enter(task), 0);
  CHECK_EQ(mon__region_parent(mon__region_current()), 0);
  CHECK_NE(mon__region_current(), t1);
  CHECK_EQ(mon_region_leave(task), 0);
  CHECK_EQ(mon_region_leave(task), BALLAST_EMISMATCH);
  mon_region_handle_destroy(task);
  mon_region_handle_destroy(other);
}

int main(int argc, char **argv) {
  /* Before MPI_Init regions are refused, not crashed on. */
  CHECK_EQ(mon_region_begin("early"), BALLAST_ESTATE);
  MPI_Init(&argc, &argv);
  CHECK(mon__active());
  test_nesting();
  test_bad_input();
  test_handles();

  /* MPI_Finalize closes what is still open (one warning). */
  CHECK_EQ(mon_region_begin("left_open"), 0);
  CHECK_EQ(mon_region_begin("left_open_inner"), 0);
  int lo = mon__region_find("left_open"), loi = mon__region_current();
  CHECK_EQ(rd(lo).count, 0);
  MPI_Finalize();
  CHECK_EQ(mon__region_depth(), 0);
  CHECK_EQ(rd(lo).count, 1);
  CHECK_EQ(rd(loi).count, 1);
  CHECK_DLE(rd(loi).wtime, rd(lo).wtime);
  CHECK_EQ(mon_region_begin("late"), BALLAST_ESTATE);
  CHECK_EQ(mon_region_end("left_open"), BALLAST_ESTATE);
  TEST_PASS("mon_regions");
  return 0;
}
