/* The assertion language on values known in advance: every operator,
 * function, unit, nprocs, rank, $variables of each type, _config values,
 * with the exact verdict of each; and the messages of bad input (column,
 * caret, the valid names). One rank. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ballast.h>

#include "test_util.h"

/* The verdict of \a expr over one empty in-code scope. */
static int verdict(const char *expr) {
  int id = -1;
  int rc = pia_assert_create(expr, &id);
  if (rc != 0) {
    fprintf(stderr, "create '%s': %s\n", expr, ballast_strerror(rc));
    return rc;
  }
  CHECK_EQ(pia_assert_begin(id), 0);
  return pia_assert_end(id);
}

static void check_true(const char *e) {
  int v = verdict(e);
  if (v != 1)
    fprintf(stderr, "expected true: %s\n", e);
  CHECK_EQ(v, 1);
}

static void check_false(const char *e) {
  int v = verdict(e);
  if (v != 0)
    fprintf(stderr, "expected false: %s\n", e);
  CHECK_EQ(v, 0);
}

static void operators(void) {
  check_true("1 + 2 == 3");
  check_true("5 - 7 == -2");
  check_true("3 * 4 == 12");
  check_true("7 / 2 == 3.5");
  check_true("-(2) == 0 - 2");
  check_true("--2 == 2");
  check_true("2 + 3 * 4 == 14");        /* precedence */
  check_true("(2 + 3) * 4 == 20");
  check_true("10 - 4 - 3 == 3");        /* left associative */
  check_true("1 < 2");
  check_false("2 < 2");
  check_true("2 <= 2");
  check_true("3 > 2");
  check_false("2 > 2");
  check_true("2 >= 2");
  check_false("1 >= 2");
  check_true("2 != 3");
  check_false("2 != 2");
  check_true("1 & 1");
  check_false("1 & 0");
  check_true("1 && 2");
  check_true("0 | 1");
  check_false("0 | 0");
  check_true("0 || 3");
  check_true("!0");
  check_false("!1");
  check_true("!!5");
  check_true("0 -> 0");                 /* implication: !a | b */
  check_true("0 -> 1");
  check_false("1 -> 0");
  check_true("1 -> 1");
  check_true("1 -> 0 -> 0");            /* right associative: 1 -> (0 -> 0) */
  check_true("1 | 0 & 0");              /* & binds tighter than | */
  check_false("(1 | 0) & 0");
  check_true("1 < 2 & 3 > 2");
  check_false("0");
  check_true("1.5e-3 == 0.0015");
  check_true(".5 == 0.5");
  check_false("0 / 0");                 /* NaN is not true */
  check_false("0/0 == 0/0");
}

static void functions_units(void) {
  check_true("abs(exp(1) - 2.718281828) < 1e-9");
  check_true("abs(log(exp(2)) - 2) < 1e-12");
  check_true("sqrt(16) == 4");
  check_true("abs(-3) == 3");
  check_true("pow(2, 10) == 1024");
  check_true("min(3, -1) == -1");
  check_true("max(3, -1) == 3");
  check_true("max(min(1, 2), pow(sqrt(9), 1)) == 3");
  check_true("1 s == 1");
  check_true("2 seconds == 2");
  check_true("5 ms == 0.005");
  check_true("5 milliseconds == 5e-3");
  check_true("7 us == 7e-6");
  check_true("7 microseconds == 7e-6");
  check_true("2 KiB == 2048");
  check_true("3 MiB == 3145728");
  check_true("1 ms < 2 ms & 1 MiB > 1000 KiB");
  check_true("(1 + 1) ms == 2e-3");
  check_true("nprocs == 1");
  check_true("rank == 0");
}

static void metrics_empty(void) {
  /* An empty scope: no MPI call, hardly any time. */
  check_true("MPICalls == 0 & MPIBytes == 0 & MPITime == 0");
  check_true("calls(MPI_Send) == 0 & bytes(MPI_ALL) == 0 & time(MPI_COLL) == 0");
  check_true("MPIWaitTime == 0 & MPITransferTime == 0 & MPIPointToPointTime == 0");
  check_true("MPICollectiveTime == 0");
  check_true("WallTime >= 0 & WallTime < 1 s & CPUTime >= 0 & CPUTime < 1 s");
  check_true("max_ranks(rank) == 0 & min_ranks(nprocs) == 1 & avg_ranks(7) == 7");
}

static void variables(void) {
  int i = 3;
  long l = 40000000000L;
  double d = 2.5;
  CHECK_EQ(pia_assert_var_register("iters", PIA_VAR_INT, &i), 0);
  CHECK_EQ(pia_assert_var_register("big", PIA_VAR_LONG, &l), 0);
  CHECK_EQ(pia_assert_var_register("x", PIA_VAR_DOUBLE, &d), 0);
  int id;
  CHECK_EQ(pia_assert_create("$iters * $x < 8 & $big == 4e10", &id), 0);
  CHECK_EQ(pia_assert_begin(id), 0);
  CHECK_EQ(pia_assert_end(id), 1);
  i = 4; /* read at each check */
  CHECK_EQ(pia_assert_begin(id), 0);
  CHECK_EQ(pia_assert_end(id), 0);
  pia_assert_result_t r;
  CHECK_EQ(pia_assert_result(id, &r), 0);
  CHECK_EQ(r.checks, 2);
  CHECK_EQ(r.passes, 1);
  CHECK_EQ(r.first_fail, 2);
  CHECK_EQ(r.errors, 0);
  /* A variable not registered: the check cannot be evaluated. */
  CHECK_EQ(pia_assert_create("$later > 1", &id), 0);
  CHECK_EQ(pia_assert_begin(id), 0);
  CHECK_EQ(pia_assert_end(id), BALLAST_ESTATE);
  CHECK_EQ(pia_assert_result(id, &r), 0);
  CHECK_EQ(r.checks, 0);
  CHECK_EQ(r.errors, 1);
  int later = 2;
  CHECK_EQ(pia_assert_var_register("later", PIA_VAR_INT, &later), 0);
  CHECK_EQ(pia_assert_begin(id), 0);
  CHECK_EQ(pia_assert_end(id), 1);
  CHECK_EQ(pia_assert_var_register("bad name", PIA_VAR_INT, &later), BALLAST_EINVAL);
  CHECK_EQ(pia_assert_var_register("ok", PIA_VAR_INT, NULL), BALLAST_EINVAL);
  CHECK_EQ(pia_assert_var_register("ok", (pia_var_type_t)7, &later), BALLAST_EINVAL);
}

static void config(void) {
  check_true("_limit == 0.25 & _n == 12 & _limit * _n == 3");
  check_true("_n == 12 -> 1 s > _limit s");
}

/* The message of a bad expression must contain each of \a parts. */
static void bad(const char *expr, int code, const char *parts[]) {
  char msg[2048];
  int rc = pia_assert_parse_check(expr, sizeof msg, msg);
  if (rc != code)
    fprintf(stderr, "'%s': got %d, message: %s\n", expr, rc, msg);
  CHECK_EQ(rc, code);
  for (int i = 0; parts[i]; i++) {
    if (!strstr(msg, parts[i]))
      fprintf(stderr, "'%s': message lacks '%s':\n%s\n", expr, parts[i], msg);
    CHECK(strstr(msg, parts[i]) != NULL);
  }
  int id = 12345;
  CHECK_EQ(pia_assert_create(expr, &id), code);
  CHECK_EQ(id, 12345);
}

static void errors(void) {
  bad("WallTime < ", BALLAST_EPARSE,
      (const char *[]){"column 12", "unexpected end", "WallTime < \n", "           ^", NULL});
  bad("1 + * 2", BALLAST_EPARSE,
      (const char *[]){"column 5", "expected a number", "    ^", NULL});
  bad("(1 + 2", BALLAST_EPARSE, (const char *[]){"column 7", "closing '('", NULL});
  bad("1 + 2)", BALLAST_EPARSE, (const char *[]){"column 6", "unmatched ')'", NULL});
  bad("1 < 2 < 3", BALLAST_EPARSE, (const char *[]){"do not chain", NULL});
  bad("1 # 2", BALLAST_EPARSE, (const char *[]){"column 3", "unexpected character '#'", NULL});
  bad("", BALLAST_EPARSE, (const char *[]){"empty expression", NULL});
  bad("WallTim < 1", BALLAST_ENOTFOUND,
      (const char *[]){"column 1", "unknown name 'WallTim'", "WallTime", "MPICollectiveTime",
                       "MPITransferTime", "nprocs", NULL});
  bad("time(MPI_Sned) < 1", BALLAST_ENOTFOUND,
      (const char *[]){"column 6", "unknown activity 'MPI_Sned'", "MPI_P2P", "MPI_Send", NULL});
  bad("time(3)", BALLAST_EPARSE, (const char *[]){"expected an MPI call", NULL});
  bad("foo(1)", BALLAST_ENOTFOUND, (const char *[]){"unknown function 'foo'", "sqrt", NULL});
  bad("pow(2)", BALLAST_EPARSE, (const char *[]){"expected ','", NULL});
  bad("sqrt(2, 3)", BALLAST_EPARSE, (const char *[]){"sqrt takes 1 argument", NULL});
  bad("_nope > 1", BALLAST_ENOTFOUND,
      (const char *[]){"unknown configuration value '_nope'", "_limit", "_n", NULL});
  bad("max_ranks(min_ranks(WallTime))", BALLAST_EPARSE,
      (const char *[]){"cannot appear inside", NULL});
  char deep[400];
  memset(deep, '(', 200);
  strcpy(deep + 200, "1");
  bad(deep, BALLAST_EPARSE, (const char *[]){"nested more than", NULL});
  CHECK_EQ(pia_assert_parse_check(NULL, 0, NULL), BALLAST_EINVAL);
  CHECK_EQ(pia_assert_parse_check("1 < 2", 0, NULL), 0);
  int id;
  CHECK_EQ(pia_assert_create(NULL, &id), BALLAST_EINVAL);
  CHECK_EQ(pia_assert_create("1", NULL), BALLAST_EINVAL);
  pia_assert_options_t o;
  pia_assert_options_init(&o);
  o.expr = "1";
  o.region = "";
  CHECK_EQ(pia_assert_create_ex(&o, &id), BALLAST_EINVAL);
}

static void scopes_api(void) {
  int a, b;
  CHECK_EQ(pia_assert_create("1", &a), 0);
  CHECK_EQ(pia_assert_create("0", &b), 0);
  CHECK_EQ(pia_assert_end(a), BALLAST_EMISMATCH); /* nothing open */
  CHECK_EQ(pia_assert_begin(a), 0);
  CHECK_EQ(pia_assert_begin(b), 0);
  CHECK_EQ(pia_assert_end(a), BALLAST_EMISMATCH); /* b is innermost */
  CHECK_EQ(pia_assert_end(b), 0);
  CHECK_EQ(pia_assert_end(a), 1);
  CHECK_EQ(pia_assert_begin(-1), BALLAST_ENOTFOUND);
  CHECK_EQ(pia_assert_begin(pia_assert_count()), BALLAST_ENOTFOUND);
  CHECK_EQ(pia_assert_result(a, NULL), BALLAST_EINVAL);
  pia_assert_result_t r;
  CHECK_EQ(pia_assert_result(99999, &r), BALLAST_ENOTFOUND);
  CHECK(pia_assert_text(99999) == NULL);
  CHECK(strcmp(pia_assert_text(a), "1") == 0);
  /* A region assertion has no in-code scope. */
  pia_assert_options_t o;
  pia_assert_options_init(&o);
  o.expr = "  WallTime < 1  ";
  o.region = "somewhere";
  int c;
  CHECK_EQ(pia_assert_create_ex(&o, &c), 0);
  CHECK(strcmp(pia_assert_text(c), "WallTime < 1") == 0);
  CHECK_EQ(pia_assert_begin(c), BALLAST_ESTATE);
  /* PIA_ASSERT_SCOPE runs its block once and checks at its end. */
  int runs = 0;
  PIA_ASSERT_SCOPE(b) { runs++; }
  CHECK_EQ(runs, 1);
  CHECK_EQ(pia_assert_result(b, &r), 0);
  CHECK_EQ(r.checks, 2);
  CHECK_EQ(r.passes, 0);
  CHECK_EQ(r.first_fail, 1);
  /* Too deep. */
  int k = 0, rc = 0;
  for (; k < 100 && (rc = pia_assert_begin(a)) == 0; k++)
    ;
  CHECK_EQ(rc, BALLAST_ERANGE);
  CHECK_EQ(k, 64);
  for (int j = 0; j < k; j++)
    CHECK_EQ(pia_assert_end(a), 1);
}

int main(int argc, char **argv) {
  char conf[] = "/tmp/ballast_assert_confXXXXXX";
  int fd = mkstemp(conf);
  CHECK(fd >= 0);
  FILE *f = fdopen(fd, "w");
  fprintf(f, "# limits of this input\nlimit = 0.25\n\nn = 11\nn = 12  # the last wins\n");
  fclose(f);
  setenv("BALLAST_ASSERT_CONFIG", conf, 1);
  MPI_Init(&argc, &argv);
  operators();
  functions_units();
  metrics_empty();
  variables();
  config();
  errors();
  scopes_api();
  unlink(conf);
  TEST_PASS("assert_lang");
  MPI_Finalize();
  return 0;
}
