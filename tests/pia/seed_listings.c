/*
 * The two code listings of seed section 4.2.4 (CRESTA D4.x, "Monitoring
 * component"), compiled against ballast with only `#include <ballast.h>` and
 * `#include <ballast/cresta.h>` (the CRESTA names, deprecated) in front, and
 * run: the harness below captures what they print on stderr and
 * checks the printed values against a known workload.
 *
 * The listings are kept as printed in the seed, except for these fixes:
 *  Listing 1 (regions): none. It is an entire `main` without MPI_Init; the
 *    harness renames it with `#define main seed_listing1_main` and calls it
 *    between MPI_Init and MPI_Finalize. It has no return statement, which is
 *    fine for `main` but draws -Wreturn-type once renamed: silenced for that
 *    function only (its return value is never used).
 *  Listing 2 (activities), two typos in the seed:
 *    1. `pia_init_activity_data(&adata)` and `adata.ncalls, adata.nbytes`
 *       use `adata`, but the listing declares `pia_actdata_t data`: the three
 *       uses of `adata` are written `data`.
 *    2. The format string is not closed: `"MPI_Send happened %d times and
 *       transferred %d bytes,` runs into the next line. It is closed as
 *       `"MPI_Send happened %lld times and transferred %lld bytes\n",`: the
 *       comma that the seed put inside the literal becomes the argument
 *       separator, a newline is added, and since the string had to be
 *       rewritten anyway its `%d` became `%lld`, because our ncalls and
 *       nbytes are 64-bit (`long long`; `%d` would be a -Wformat warning and
 *       undefined behaviour). With `%d` kept, the listing still compiles.
 *    The fragment has no function around it: the harness wraps it in one.
 */
#include <ballast.h>
#include <ballast/cresta.h>
/* The listings use the CRESTA names, which cresta.h marks deprecated. */
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

#include <unistd.h>

#include "test_util.h"

/* ---- listing 1, as in the seed --------------------------------------------- */
#define main seed_listing1_main
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wreturn-type"
#pragma GCC diagnostic ignored "-Wunused-parameter"

void foo( )
{
  // Defining region start
  ipm_region( IPM_START, "foo");
  // Do whatever here
  // Defining region end
  ipm_region( IPM_END, "foo");
}

int main( int argc, char *argv[])
{
pia_regid_t id;          // Stores region ID
  pia_regdata_t data;    // Stores region data
foo( );

  // Obtain region ID
  id = pia_find_region_by_name("foo");

  // Obtain performance data for that region
  pia_get_region_data(&data, id);

fprintf( stderr, "%f Walltime\n", data.wtime);
  fprintf( stderr, "%f MPI time\n", data.mtime);
  fprintf( stderr, "%d times executed\n", data.count);
}

#pragma GCC diagnostic pop
#undef main

/* ---- listing 2, with the two typos fixed (see above) ----------------------- */
static void seed_listing2(void) {

// Activity name
char *act1 = "MPI_Send";

// Activity ID
pia_act_t id;

// Activity data
pia_actdata_t data;

// Acces the data
pia_init_activity_data(&data);
id = pia_find_activity_by_name(act1);
pia_get_activity_data(&data, id);

fprintf(stderr,
        "MPI_Send happened %lld times and transferred %lld bytes\n",
        data.ncalls, data.nbytes);

}

/* ---- harness ---------------------------------------------------------------- */

enum { N = 37, K = 11 };

/* Runs fn with stderr redirected into a temporary file; returns its text. */
static void capture(void (*fn)(void), char *out, size_t len) {
  fflush(stderr);
  FILE *tmp = tmpfile();
  CHECK(tmp != NULL);
  int saved = dup(2);
  CHECK_GE(saved, 0);
  CHECK_GE(dup2(fileno(tmp), 2), 0);
  fn();
  fflush(stderr);
  CHECK_GE(dup2(saved, 2), 0);
  close(saved);
  rewind(tmp);
  size_t n = fread(out, 1, len - 1, tmp);
  out[n] = '\0';
  fclose(tmp);
}

static void run_listing1(void) {
  char arg0[] = "seed", *argv[] = {arg0, NULL};
  seed_listing1_main(1, argv);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK_EQ(size, 2);

  char text[1024];
  double t0 = MPI_Wtime();
  capture(run_listing1, text, sizeof text);
  double wall = MPI_Wtime() - t0;
  double w = -1, m = -1;
  int count = -1;
  CHECK_EQ(sscanf(text, "%lf Walltime\n%lf MPI time\n%d times executed", &w,
                  &m, &count), 3);
  CHECK_EQ(count, 1);
  CHECK_DGE(w, 0.0); /* printed with %f: a short region may print 0.000000 */
  CHECK_DLE(w, wall + 1e-6);
  CHECK_DGE(m, 0.0);
  CHECK_DLE(m, w);
  pia_regdata_t d;
  CHECK_EQ(pia_region_data(pia_region_find("foo"), &d), 0);
  CHECK_EQ(d.count, 1);
  CHECK_DGT(d.wtime, 0.0);
  CHECK_DLE(d.wtime, wall);

  /* Listing 2 reads MPI_Send: rank 0 sends N messages of K ints first. */
  int buf[K] = {0};
  for (int n = 0; n < N; n++) {
    if (rank == 0)
      MPI_Send(buf, K, MPI_INT, 1, 5, MPI_COMM_WORLD);
    else
      MPI_Recv(buf, K, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  capture(seed_listing2, text, sizeof text);
  long long calls = -1, bytes = -1;
  CHECK_EQ(sscanf(text, "MPI_Send happened %lld times and transferred %lld bytes",
                  &calls, &bytes), 2);
  CHECK_EQ(calls, rank == 0 ? N : 0);
  CHECK_EQ(bytes, rank == 0 ? (long long)N * K * 4 : 0);
  TEST_PASS("pia_seed_listings");
  MPI_Finalize();
  return 0;
}
