/* common's environment parser and text escaping, on exact values: the
 * boolean spellings, trailing junk, out-of-range and overflowing numbers,
 * choices in any case, BALLAST_VERBOSE that cannot hide warnings, and the
 * escaping of names and UTF-8 checks the report and the log rely on. No MPI
 * is initialised: the parser works outside MPI too. */
#include <stdlib.h>
#include <string.h>

#include "common/common_internal.h"
#include "common/env.h"
#include "test_util.h"

static double parsed(const char *name, const char *s) {
  double d = -12345;
  char why[128];
  CHECK_EQ(ballast__env_parse(name, s, &d, why, sizeof why), 1);
  return d;
}

static void refused(const char *name, const char *s, const char *reason) {
  double d = -12345;
  char why[128] = "";
  CHECK_EQ(ballast__env_parse(name, s, &d, why, sizeof why), 0);
  CHECK(d == -12345);
  if (!strstr(why, reason))
    fprintf(stderr, "%s=%s: reason '%s' lacks '%s'\n", name, s, why, reason);
  CHECK(strstr(why, reason) != NULL);
}

static void booleans(void) {
  const char *no[] = {"0", "off", "OFF", "Off", "no", "NO", "false", "False"};
  const char *yes[] = {"1", "on", "ON", "yes", "Yes", "true", "TRUE"};
  for (size_t i = 0; i < sizeof no / sizeof *no; i++)
    CHECK(parsed("BALLAST_MONITOR", no[i]) == 0.0);
  for (size_t i = 0; i < sizeof yes / sizeof *yes; i++)
    CHECK(parsed("BALLAST_REGION_CPU", yes[i]) == 1.0);
  refused("BALLAST_MONITOR", "2", "not a boolean");
  refused("BALLAST_MONITOR", "offf", "not a boolean");
  refused("BALLAST_MONITOR", " on", "not a boolean");
  refused("BALLAST_REGION_CPU", "0 ", "not a boolean");
}

static void numbers(void) {
  CHECK(parsed("BALLAST_REPORT_TOP", "5") == 5.0);
  CHECK(parsed("BALLAST_REPORT_TOP", "1000") == 1000.0);
  refused("BALLAST_REPORT_TOP", "5abc", "not an integer");
  refused("BALLAST_REPORT_TOP", "5 ", "not an integer");
  refused("BALLAST_REPORT_TOP", " 5", "not an integer");
  refused("BALLAST_REPORT_TOP", "5.0", "not an integer");
  refused("BALLAST_REPORT_TOP", "0", "out of range (1..1000)");
  refused("BALLAST_REPORT_TOP", "1001", "out of range (1..1000)");
  refused("BALLAST_REPORT_TOP", "99999999999999999999", "out of range");
  refused("BALLAST_REPORT_TOP", "-99999999999999999999", "out of range");
  /* The window's bound protects memory: window x ranks doubles per rank. */
  CHECK(parsed("BALLAST_LB_WINDOW", "10000") == 10000.0);
  refused("BALLAST_LB_WINDOW", "1000000000", "out of range (3..10000)");
  refused("BALLAST_LB_WINDOW", "2", "out of range");
  CHECK(parsed("BALLAST_LB_WARMUP", "0") == 0.0);
  refused("BALLAST_LB_WARMUP", "-3", "out of range");
  CHECK(parsed("BALLAST_VERBOSE", "3") == 3.0);
  refused("BALLAST_VERBOSE", "4", "out of range (0..3)");
  CHECK(parsed("BALLAST_LB_THRESHOLD", "1.25") == 1.25);
  CHECK(parsed("BALLAST_LB_THRESHOLD", "1") == 1.0);
  refused("BALLAST_LB_THRESHOLD", "1.2x", "not a number");
  refused("BALLAST_LB_THRESHOLD", "0.5", "at least 1");
  refused("BALLAST_LB_THRESHOLD", "nan", "not a number");
  refused("BALLAST_LB_THRESHOLD", "inf", "out of range");
  refused("BALLAST_LB_OUTLIER", "1", "above 1"); /* must exceed 1 */
  CHECK(parsed("BALLAST_LB_OUTLIER", "1.5") == 1.5);
}

static void choices(void) {
  CHECK(parsed("BALLAST_REPORT", "none") == 0.0);
  CHECK(parsed("BALLAST_REPORT", "FULL") == 2.0);
  CHECK(parsed("BALLAST_REPORT", "Terse") == 1.0);
  refused("BALLAST_REPORT", "ful", "not one of none,terse,full");
  refused("BALLAST_REPORT", "full,", "not one of");
  CHECK(parsed("BALLAST_LB", "explicit") == 1.0);
  CHECK(parsed("BALLAST_LB", "0") == 3.0); /* an alias of off */
  refused("BALLAST_LB", "sometimes", "not one of");
  refused("BALLAST_NO_SUCH", "1", "not a ballast variable");
}

static void readers(void) {
  int v = 7;
  unsetenv("BALLAST_REPORT_TOP");
  CHECK_EQ(ballast__env_int("BALLAST_REPORT_TOP", &v), 0);
  setenv("BALLAST_REPORT_TOP", "", 1);
  CHECK_EQ(ballast__env_int("BALLAST_REPORT_TOP", &v), 0);
  setenv("BALLAST_REPORT_TOP", "5abc", 1);
  CHECK_EQ(ballast__env_int("BALLAST_REPORT_TOP", &v), BALLAST_EINVAL);
  CHECK_EQ(v, 7); /* untouched */
  setenv("BALLAST_REPORT_TOP", "12", 1);
  CHECK_EQ(ballast__env_int("BALLAST_REPORT_TOP", &v), 1);
  CHECK_EQ(v, 12);
  setenv("BALLAST_MONITOR", "Off", 1);
  CHECK_EQ(ballast__env_bool("BALLAST_MONITOR", &v), 1);
  CHECK_EQ(v, 0);
  setenv("BALLAST_PROFILE", "/tmp/x.json", 1);
  CHECK_STREQ(ballast__env_string("BALLAST_PROFILE"), "/tmp/x.json");
  setenv("BALLAST_PROFILE", "", 1);
  CHECK(ballast__env_string("BALLAST_PROFILE") == NULL);
  /* A garbage verbosity keeps warnings on; a valid one is taken. */
  setenv("BALLAST_VERBOSE", "garbage", 1);
  CHECK_EQ(ballast__env_verbosity(), BALLAST_LOG_WARN);
  setenv("BALLAST_VERBOSE", "0x", 1);
  CHECK_EQ(ballast__env_verbosity(), BALLAST_LOG_WARN);
  setenv("BALLAST_VERBOSE", "0", 1);
  CHECK_EQ(ballast__env_verbosity(), 0);
  unsetenv("BALLAST_VERBOSE");
  CHECK_EQ(ballast__env_verbosity(), BALLAST_LOG_WARN);
}

static void escaped(const char *in, const char *extra, const char *want) {
  char out[128];
  int n = ballast__escape(in, extra, out, sizeof out);
  if (strcmp(out, want))
    fprintf(stderr, "escape gave '%s', want '%s'\n", out, want);
  CHECK_STREQ(out, want);
  CHECK_EQ(n, (int)strlen(want));
}

static void text(void) {
  escaped("plain", NULL, "plain");
  escaped("a\nb\tc\rd", NULL, "a\\nb\\tc\\rd");
  escaped("ctl\x01\x7f", NULL, "ctl\\x01\\x7F");
  escaped("back\\slash", NULL, "back\\\\slash");
  escaped("x/y", "/", "x\\/y");
  escaped("x/y", NULL, "x/y");
  escaped("r\xc3\xa9sum\xc3\xa9", NULL, "r\xc3\xa9sum\xc3\xa9");
  escaped("bad\xff", NULL, "bad\\xFF");
  escaped("\xc0\x80", NULL, "\\xC0\\x80");            /* overlong NUL */
  escaped("\xed\xa0\x80", NULL, "\\xED\\xA0\\x80");   /* surrogate */
  escaped("\xf4\x90\x80\x80", NULL, "\\xF4\\x90\\x80\\x80"); /* past U+10FFFF */
  escaped("\xe2\x82", NULL, "\\xE2\\x82");            /* cut short */
  CHECK_EQ(ballast__utf8_seq((const unsigned char *)"\xe2\x82\xac"), 3);
  CHECK_EQ(ballast__utf8_seq((const unsigned char *)"\xf0\x9f\x98\x80"), 4);
  CHECK_EQ(ballast__utf8_seq((const unsigned char *)"\x80"), 0);
  /* Cut at a whole escape, always terminated. */
  char small[6];
  CHECK_EQ(ballast__escape("a\nbcd", NULL, small, sizeof small), 5);
  CHECK_STREQ(small, "a\\nbc");
  CHECK_EQ(ballast__escape("abcd\n", NULL, small, sizeof small), 4);
  CHECK_STREQ(small, "abcd"); /* no half escape */
  CHECK_EQ(ballast__escape("abc\xff", NULL, small, sizeof small), 3);
  CHECK_STREQ(small, "abc");
}

int main(void) {
  booleans();
  numbers();
  choices();
  readers();
  text();
  TEST_PASS("common_env");
  return 0;
}
