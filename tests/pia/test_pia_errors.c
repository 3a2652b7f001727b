/* PIA on bad input: NULL pointers, empty and unknown names, bad ids, bad
 * paths and peers. Each returns its documented negative code and leaves the
 * caller's data untouched; nothing crashes. */
#include <limits.h>

#include <ballast.h>

#include "test_util.h"

static void check_regions(void) {
  CHECK_EQ(pia_region_find(NULL), BALLAST_EINVAL);
  CHECK_EQ(pia_region_find(""), BALLAST_EINVAL);
  CHECK_EQ(pia_region_find("no such region"), BALLAST_ENOTFOUND);
  CHECK_EQ(pia_region_find_child(PIA_REGION_MAIN, NULL), BALLAST_EINVAL);
  CHECK_EQ(pia_region_find_child(-3, "x"), BALLAST_ENOTFOUND);
  CHECK_EQ(pia_region_find_child(INT_MAX, "x"), BALLAST_ENOTFOUND);
  CHECK_EQ(pia_region_find_child(PIA_REGION_MAIN, "nope"), BALLAST_ENOTFOUND);
  CHECK_EQ(pia_region_find_by_path(NULL), BALLAST_EINVAL);
  CHECK_EQ(pia_region_find_by_path("x//y"), BALLAST_EINVAL);
  CHECK_EQ(pia_region_find_by_path("x/"), BALLAST_EINVAL);
  CHECK_EQ(pia_region_find_by_path("nope/x"), BALLAST_ENOTFOUND);
  char longname[300];
  memset(longname, 'q', sizeof longname - 1);
  longname[sizeof longname - 1] = '\0';
  CHECK_EQ(pia_region_find_by_path(longname), BALLAST_ENAMETOOLONG);
  CHECK_EQ(pia_region_find(longname), BALLAST_ENOTFOUND);

  pia_regdata_t r;
  memset(&r, 0x5a, sizeof r);
  pia_regdata_t keep = r;
  CHECK_EQ(pia_region_data(PIA_REGION_MAIN, NULL), BALLAST_EINVAL);
  CHECK_EQ(pia_region_data(-1, &r), BALLAST_ENOTFOUND);
  CHECK_EQ(pia_region_data(pia_region_count(), &r), BALLAST_ENOTFOUND);
  CHECK_EQ(pia_region_data(INT_MAX, &r), BALLAST_ENOTFOUND);
  CHECK(memcmp(&r, &keep, sizeof r) == 0);
  CHECK_EQ(pia_region_parent(-1), BALLAST_ENOTFOUND);
  CHECK_EQ(pia_region_child(INT_MAX), BALLAST_ENOTFOUND);
  CHECK_EQ(pia_region_next(INT_MIN), BALLAST_ENOTFOUND);
  CHECK_EQ(pia_region_next(PIA_REGION_MAIN), BALLAST_ENOTFOUND);
}

static void check_activities(void) {
  CHECK_EQ(pia_activity_find(NULL), BALLAST_EINVAL);
  CHECK_EQ(pia_activity_find(""), BALLAST_EINVAL);
  CHECK_EQ(pia_activity_find("MPI_Sned"), BALLAST_ENOTFOUND);
  CHECK_EQ(pia_activity_find("mpi_send"), BALLAST_ENOTFOUND);
  pia_actdata_init(NULL); /* does nothing */
  CHECK(pia_activity_name(-1) == NULL);
  CHECK(pia_activity_name(pia_activity_count()) == NULL);

  pia_act_t send = pia_activity_find("MPI_Send");
  CHECK_GE(send, 0);
  pia_actdata_t d;
  pia_actdata_init(&d);
  d.ncalls = 42;
  d.nbytes = 43;
  CHECK_EQ(pia_activity_data(send, NULL), BALLAST_EINVAL);
  CHECK_EQ(pia_activity_data(-1, &d), BALLAST_ENOTFOUND);
  CHECK_EQ(pia_activity_data(pia_activity_count(), &d), BALLAST_ENOTFOUND);
  CHECK_EQ(pia_region_activity_data(-7, send, &d), BALLAST_ENOTFOUND);
  CHECK_EQ(pia_region_activity_data(INT_MAX, send, &d), BALLAST_ENOTFOUND);
  CHECK_EQ(pia_region_activity_data(0, send, NULL), BALLAST_EINVAL);
  CHECK_EQ(d.ncalls, 42); /* untouched by failed reads */
  CHECK_EQ(d.nbytes, 43);

  pia_partnerdata_t p;
  int size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK_EQ(pia_partner_data(0, PIA_REGION_ALL, NULL), BALLAST_EINVAL);
  CHECK_EQ(pia_partner_data(-1, PIA_REGION_ALL, &p), BALLAST_ERANGE);
  CHECK_EQ(pia_partner_data(size, PIA_REGION_ALL, &p), BALLAST_ERANGE);
  CHECK_EQ(pia_partner_data(0, INT_MAX, &p), BALLAST_ENOTFOUND);
  CHECK_EQ(pia_partner_volumes(-1, PIA_REGION_ALL, &p), BALLAST_EINVAL);
  CHECK_EQ(pia_partner_volumes(size + 1, PIA_REGION_ALL, &p), BALLAST_ERANGE);
  CHECK_EQ(pia_partner_volumes(1, PIA_REGION_ALL, NULL), BALLAST_EINVAL);
}

static void check_intervals(void) {
  pia_interval_destroy(NULL);
  CHECK_EQ(pia_interval_create(NULL), BALLAST_EINVAL);
  pia_interval_t *iv = NULL;
  CHECK_EQ(pia_interval_create(&iv), 0);
  CHECK(iv != NULL);
  pia_regdata_t r;
  pia_actdata_t d;
  CHECK_EQ(pia_interval_track_region(NULL, 0), BALLAST_EINVAL);
  CHECK_EQ(pia_interval_track_region(iv, -1), BALLAST_ENOTFOUND);
  CHECK_EQ(pia_interval_track_region(iv, INT_MAX), BALLAST_ENOTFOUND);
  CHECK_EQ(pia_interval_track_activity(NULL, 0), BALLAST_EINVAL);
  CHECK_EQ(pia_interval_track_activity(iv, -1), BALLAST_ENOTFOUND);
  CHECK_EQ(pia_interval_track_activity(iv, pia_activity_count()), BALLAST_ENOTFOUND);
  CHECK_EQ(pia_interval_mark(NULL), BALLAST_EINVAL);
  CHECK_EQ(pia_interval_mark(iv), 0); /* nothing tracked: fine */
  CHECK_EQ(pia_interval_region_data(iv, 0, &r), BALLAST_ENOTFOUND); /* untracked */
  CHECK_EQ(pia_interval_activity_data(iv, 0, &d), BALLAST_ENOTFOUND);
  CHECK_EQ(pia_interval_region_data(NULL, 0, &r), BALLAST_EINVAL);
  CHECK_EQ(pia_interval_region_data(iv, 0, NULL), BALLAST_EINVAL);
  CHECK_EQ(pia_interval_activity_data(iv, 0, NULL), BALLAST_EINVAL);
  CHECK_EQ(pia_interval_track_region(iv, 0), 0);
  CHECK_EQ(pia_interval_track_region(iv, 0), 0); /* again: no-op */
  CHECK_EQ(pia_interval_region_data(iv, 0, &r), 0);
  CHECK_EQ(r.id, 0);
  pia_interval_destroy(iv);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  check_regions();
  check_activities();
  check_intervals();
  TEST_PASS("pia_errors");
  MPI_Finalize();
  return 0;
}
