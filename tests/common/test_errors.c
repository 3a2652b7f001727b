/* The error list: every code is negative, named and has a message. */
#include <ballast/common.h>

#include "test_util.h"

int main(void) {
  CHECK_STREQ(ballast_strerror(0), "success");
  CHECK_STREQ(ballast_err_name(BALLAST_EINVAL), "BALLAST_EINVAL");
  CHECK_STREQ(ballast_strerror(BALLAST_ENOMEM), "out of memory");
  CHECK_STREQ(ballast_strerror(12345), "unknown error");
  CHECK_STREQ(ballast_err_name(-999), "BALLAST_UNKNOWN");
  for (int e = -1; e > BALLAST_ERRNO_MIN_; e--) {
    CHECK(strcmp(ballast_strerror(e), "unknown error") != 0);
    CHECK(strncmp(ballast_err_name(e), "BALLAST_E", 9) == 0);
  }
  char v[32];
  snprintf(v, sizeof v, "%d.%d.%d", BALLAST_VERSION_MAJOR, BALLAST_VERSION_MINOR,
           BALLAST_VERSION_PATCH);
  CHECK_STREQ(ballast_version(), v);
  TEST_PASS("common_errors");
  return 0;
}
