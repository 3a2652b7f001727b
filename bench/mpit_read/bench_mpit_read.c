/* The cost of reading MPI's performance variables and of keeping
 * repetitions, as a region begin/end pair costs them.
 *
 * One process, in one run, alternating: (a) MPI_T_pvar_read of one
 * variable alone (a session and handle of the benchmark's own); (b) a
 * region begin/end pair of a plain region; (c) the same of a repeated
 * region (mon_region_repeat: the series, the labels, getrusage twice).
 * Run it twice, with BALLAST_MPIT unset and with
 * BALLAST_MPIT='pml_ob1_*' (two variables): the difference of (b) between
 * the runs over 2 reads per pair and 2 variables is the cost per variable
 * read at a region boundary. Prints the medians of ROUNDS rounds of N
 * pairs, in ns.
 *
 * usage: bench_mpit_read [N [ROUNDS]]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include <ballast/mon.h>
#include <ballast/pia.h>

#include "bench_util.h"

static double pairs(const char *name, int n) {
  double t0 = bench_now_ns();
  for (int i = 0; i < n; i++) {
    mon_region_begin(name);
    mon_region_end(name);
  }
  return (bench_now_ns() - t0) / n;
}

static double raw_read(MPI_T_pvar_session s, MPI_T_pvar_handle h, int n) {
  unsigned v[64];
  double t0 = bench_now_ns();
  for (int i = 0; i < n; i++)
    MPI_T_pvar_read(s, h, v);
  return (bench_now_ns() - t0) / n;
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 200000;
  int rounds = argc > 2 ? atoi(argv[2]) : 15;
  mon_region_repeat("repeated");
  MPI_Init(&argc, &argv);
  int prov, idx = -1, count = 0;
  MPI_T_init_thread(MPI_THREAD_SINGLE, &prov);
  MPI_T_pvar_session s;
  MPI_T_pvar_handle h = MPI_T_PVAR_HANDLE_NULL;
  MPI_T_pvar_session_create(&s);
  if (MPI_T_pvar_get_index("pml_ob1_unexpected_msgq_length", MPI_T_PVAR_CLASS_SIZE, &idx) ==
      MPI_SUCCESS) {
    MPI_Comm w = MPI_COMM_WORLD;
    MPI_T_pvar_handle_alloc(s, idx, &w, &h, &count);
  }
  double *a = malloc((size_t)rounds * sizeof *a), *b = malloc((size_t)rounds * sizeof *b),
         *c = malloc((size_t)rounds * sizeof *c);
  pairs("plain", n / 10);
  pairs("repeated", n / 10);
  for (int r = 0; r < rounds; r++) {
    a[r] = h != MPI_T_PVAR_HANDLE_NULL ? raw_read(s, h, n) : 0;
    b[r] = pairs("plain", n);
    c[r] = pairs("repeated", n);
  }
  printf("mpit_read: BALLAST_MPIT variables %d, N %d, rounds %d (medians, ns)\n",
         pia_mpit_count(), n, rounds);
  printf("  MPI_T_pvar_read, one variable      %8.1f\n", bench_median(a, rounds));
  printf("  region begin/end pair, plain       %8.1f\n", bench_median(b, rounds));
  printf("  region begin/end pair, repeated    %8.1f\n", bench_median(c, rounds));
  if (h != MPI_T_PVAR_HANDLE_NULL)
    MPI_T_pvar_handle_free(s, &h);
  MPI_T_pvar_session_free(&s);
  MPI_T_finalize();
  free(a);
  free(b);
  free(c);
  MPI_Finalize();
  return 0;
}
