/* Plain-MPI micro test behind the migration engine's choice of messages
 * (src/lb/migrate.c): N parts of S bytes, each in a buffer of its own (as
 * task states are), go from every rank to the next, and the times of the
 * ways the engine could send them are compared with one MPI_Alltoallv of
 * the same bytes from and into one contiguous buffer:
 *   hidx K   messages described by hindexed datatypes of K parts each,
 *            all posted at once (receives first);
 *   sep W    a contiguous message per part, W messages per direction in
 *            flight (receives of a window posted before its sends; W = 0:
 *            all at once).
 * Every buffer is touched before the first repetition. The modes alternate
 * within each repetition so all see the same machine state; medians over R
 * repetitions, and ratio = Alltoallv median / the mode's median.
 *
 * Usage: mpiexec -n 2 bench_mig_parts [reps] [S] [N] [huge]
 * huge = 1: every buffer of 1 MiB and more comes from rta__alloc_large, as
 * the pool gives them (2 MiB aligned, transparent huge pages); otherwise
 * malloc.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "bench_util.h"

typedef struct {
  const char *name;
  int k; /* hidx: parts per message; sep: window (0: all) */
  int sep;
} mode_t_;

static int me, np, nparts;
static size_t S;
static unsigned char **sb, **rb;
static MPI_Request *reqs;

static double run_hidx(int k) {
  int nmsg = (nparts + k - 1) / k, nreq = 0;
  MPI_Datatype *st = malloc(sizeof *st * (size_t)nmsg * 2), *rt = st + nmsg;
  MPI_Aint *d = malloc(sizeof *d * (size_t)k);
  int *len = malloc(sizeof *len * (size_t)k);
  int to = (me + 1) % np, from = (me + np - 1) % np;
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  for (int side = 0; side < 2; side++)
    for (int m = 0; m < nmsg; m++) {
      int lo = m * k, n = nparts - lo < k ? nparts - lo : k;
      for (int j = 0; j < n; j++) {
        MPI_Get_address(side ? sb[lo + j] : rb[lo + j], &d[j]);
        len[j] = (int)S;
      }
      MPI_Datatype *t = side ? &st[m] : &rt[m];
      MPI_Type_create_hindexed(n, len, d, MPI_BYTE, t);
      MPI_Type_commit(t);
      if (side)
        MPI_Isend(MPI_BOTTOM, 1, *t, to, 7, MPI_COMM_WORLD, &reqs[nreq++]);
      else
        MPI_Irecv(MPI_BOTTOM, 1, *t, from, 7, MPI_COMM_WORLD, &reqs[nreq++]);
    }
  MPI_Waitall(nreq, reqs, MPI_STATUSES_IGNORE);
  MPI_Barrier(MPI_COMM_WORLD);
  double t = MPI_Wtime() - t0;
  for (int m = 0; m < 2 * nmsg; m++)
    MPI_Type_free(&st[m]);
  free(st);
  free(d);
  free(len);
  return t;
}

static double run_sep(int w) {
  int to = (me + 1) % np, from = (me + np - 1) % np;
  if (w <= 0 || w > nparts)
    w = nparts;
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  for (int lo = 0; lo < nparts; lo += w) {
    int n = nparts - lo < w ? nparts - lo : w, nreq = 0;
    for (int j = 0; j < n; j++)
      MPI_Irecv(rb[lo + j], (int)S, MPI_BYTE, from, 8, MPI_COMM_WORLD, &reqs[nreq++]);
    for (int j = 0; j < n; j++)
      MPI_Isend(sb[lo + j], (int)S, MPI_BYTE, to, 8, MPI_COMM_WORLD, &reqs[nreq++]);
    MPI_Waitall(nreq, reqs, MPI_STATUSES_IGNORE);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  return MPI_Wtime() - t0;
}

static double run_a2av(unsigned char *sbuf, unsigned char *rbuf) {
  int *c = calloc((size_t)np * 4, sizeof(int)), *rc = c + np, *d = c + 2 * np;
  c[(me + 1) % np] = (int)(S * (size_t)nparts);
  rc[(me + np - 1) % np] = (int)(S * (size_t)nparts);
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  MPI_Alltoallv(sbuf, c, d, MPI_BYTE, rbuf, rc, d, MPI_BYTE, MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);
  double t = MPI_Wtime() - t0;
  free(c);
  return t;
}

static void *alloc_part(size_t n, int huge) {
  void *p = NULL;
  if (huge && n >= ((size_t)1 << 20)) {
    size_t len = (n + ((size_t)2 << 20) - 1) & ~(((size_t)2 << 20) - 1);
    if (posix_memalign(&p, (size_t)2 << 20, len) != 0)
      return NULL;
#ifdef MADV_HUGEPAGE
    madvise(p, len, MADV_HUGEPAGE);
#endif
    return p;
  }
  return malloc(n);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  int reps = argc > 1 ? atoi(argv[1]) : 11;
  S = argc > 2 ? (size_t)atoll(argv[2]) : (size_t)65536;
  nparts = argc > 3 ? atoi(argv[3]) : 1024;
  int huge = argc > 4 ? atoi(argv[4]) : 0;
  static const mode_t_ modes[] = {
      {"hidx 256", 256, 0}, {"hidx 64", 64, 0}, {"hidx 16", 16, 0},
      {"hidx 4", 4, 0},     {"sep all", 0, 1},  {"sep 64", 64, 1},
      {"sep 16", 16, 1},    {"sep 4", 4, 1},
  };
  enum { NM = sizeof modes / sizeof modes[0] };
  sb = malloc(sizeof *sb * (size_t)nparts);
  rb = malloc(sizeof *rb * (size_t)nparts);
  reqs = malloc(sizeof *reqs * 2 * (size_t)nparts);
  for (int j = 0; j < nparts; j++) {
    sb[j] = alloc_part(S, huge);
    rb[j] = alloc_part(S, huge);
    memset(sb[j], j & 0xff, S);
    memset(rb[j], 0, S);
  }
  size_t total = S * (size_t)nparts;
  unsigned char *sbuf = malloc(total), *rbuf = malloc(total);
  memset(sbuf, 1, total);
  memset(rbuf, 0, total);
  double *t = malloc(sizeof *t * (size_t)reps * (NM + 1));
  for (int r = -1; r < reps; r++) /* r = -1: warm-up, not kept */
    for (int m = 0; m <= NM; m++) {
      double x = m == NM ? run_a2av(sbuf, rbuf)
                         : modes[m].sep ? run_sep(modes[m].k) : run_hidx(modes[m].k);
      double mx;
      MPI_Allreduce(&x, &mx, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      if (r >= 0)
        t[(size_t)m * reps + r] = mx;
    }
  if (me == 0) {
    double a = bench_median(&t[(size_t)NM * reps], reps);
    printf("# %d parts of %zu bytes per rank, %d ranks, %s buffers; Alltoallv %.6f s\n",
           nparts, S, np, huge ? "huge-page" : "malloc", a);
    for (int m = 0; m < NM; m++) {
      double v = bench_median(&t[(size_t)m * reps], reps);
      printf("%-10s %10.6f s  ratio %.3f\n", modes[m].name, v, a / v);
    }
  }
  for (int j = 0; j < nparts; j++) {
    free(sb[j]);
    free(rb[j]);
  }
  free(sb); free(rb); free(reqs); free(sbuf); free(rbuf); free(t);
  MPI_Finalize();
  return 0;
}
