/* Plain-MPI micro test behind the migration engine's choice of messages
 * (src/mig/migrate.c): N parts of S bytes, each in a buffer of its own (as
 * task states are), go from every rank to the next, and the times of the
 * ways the engine could send them are compared with one MPI_Alltoallv of
 * the same bytes from and into one contiguous buffer:
 *   hidx K   messages described by hindexed datatypes of K parts each,
 *            all posted at once (receives first);
 *   sep W    a contiguous message per part, W messages per direction in
 *            flight (receives of a window posted before its sends; W = 0:
 *            all at once);
 *   pack     the parts copied into one contiguous buffer, one message,
 *            copied out on arrival (three copies, the middle one Open
 *            MPI's single copy);
 *   cma      (Linux) the receiver reads the sender's parts straight into
 *            its own with process_vm_readv, IOV_MAX parts a call, the
 *            kernel's cross-memory attach that Open MPI uses for one
 *            contiguous message, here over the parts.
 * Every buffer is touched before the first repetition. The modes alternate
 * within each repetition so all see the same machine state; medians over R
 * repetitions, and ratio = Alltoallv median / the mode's median.
 *
 * Usage: mpiexec -n 2 bench_mig_parts [reps] [S] [N] [huge] [scatter]
 * huge = 1: every buffer of 1 MiB and more comes from ballast__alloc_large, as
 * the pool gives them (2 MiB aligned, transparent huge pages); otherwise
 * malloc. scatter = 1: each side's parts are a random half of 2N buffers
 * allocated in turn, in random order, as a load-balancing context's states
 * lie after a few remaps (arrivals land in the blocks departures left);
 * 0: N buffers in allocation order.
 */
#define _GNU_SOURCE /* process_vm_readv */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include "bench_util.h"
#include "core_rtt/core_rtt.h"

enum { HIDX, SEP, PACK, CMA };
typedef struct {
  const char *name;
  int k; /* hidx: parts per message; sep: window (0: all) */
  int kind;
} mode_t_;

static int me, np, nparts;
static size_t S;
static unsigned char **sb, **rb;
static MPI_Request *reqs;
static int from_pid;           /* cma: the rank this one receives from */
static unsigned char **from_sb; /* cma: its parts' addresses */

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

static double run_pack(unsigned char *sbuf, unsigned char *rbuf) {
  int to = (me + 1) % np, from = (me + np - 1) % np;
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  for (int j = 0; j < nparts; j++)
    memcpy(sbuf + (size_t)j * S, sb[j], S);
  MPI_Irecv(rbuf, (int)(S * (size_t)nparts), MPI_BYTE, from, 9, MPI_COMM_WORLD, &reqs[0]);
  MPI_Isend(sbuf, (int)(S * (size_t)nparts), MPI_BYTE, to, 9, MPI_COMM_WORLD, &reqs[1]);
  MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
  for (int j = 0; j < nparts; j++)
    memcpy(rb[j], rbuf + (size_t)j * S, S);
  MPI_Barrier(MPI_COMM_WORLD);
  return MPI_Wtime() - t0;
}

/* The parts of the rank this one receives from, read in calls of at most
 * IOV_MAX (1,024) parts; the barrier after is the sender's signal that its
 * parts may change again. -1 when the kernel refuses. */
static double run_cma(void) {
  enum { IOVS = 1024 };
  struct iovec l[IOVS], r[IOVS];
  int ok = 1;
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  for (int lo = 0; ok && lo < nparts; lo += IOVS) {
    int n = nparts - lo < IOVS ? nparts - lo : IOVS;
    for (int j = 0; j < n; j++) {
      l[j] = (struct iovec){rb[lo + j], S};
      r[j] = (struct iovec){from_sb[lo + j], S};
    }
    ok = process_vm_readv(from_pid, l, (unsigned long)n, r, (unsigned long)n, 0) ==
         (ssize_t)(S * (size_t)n);
  }
  int all_ok;
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
  return all_ok ? MPI_Wtime() - t0 : -1;
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
  /* The vCPU placement before MPI starts spinning (core_rtt.c). */
  double rtt0 = bench_core_rtt_before();
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  int reps = argc > 1 ? atoi(argv[1]) : 11;
  S = argc > 2 ? (size_t)atoll(argv[2]) : (size_t)65536;
  nparts = argc > 3 ? atoi(argv[3]) : 1024;
  int huge = argc > 4 ? atoi(argv[4]) : 0;
  int scatter = argc > 5 ? atoi(argv[5]) : 0;
  static const mode_t_ modes[] = {
      {"hidx 256", 256, HIDX}, {"hidx 64", 64, HIDX}, {"hidx 16", 16, HIDX},
      {"hidx 4", 4, HIDX},     {"sep all", 0, SEP},   {"sep 64", 64, SEP},
      {"sep 16", 16, SEP},     {"sep 4", 4, SEP},     {"pack", 0, PACK},
      {"cma", 0, CMA},
  };
  enum { NM = sizeof modes / sizeof modes[0] };
  sb = malloc(sizeof *sb * (size_t)nparts);
  rb = malloc(sizeof *rb * (size_t)nparts);
  reqs = malloc(sizeof *reqs * 2 * (size_t)nparts);
  int nbuf = scatter ? 2 * nparts : nparts;
  unsigned char **all = malloc(sizeof *all * 2 * (size_t)nbuf);
  for (int j = 0; j < 2 * nbuf; j++) {
    all[j] = alloc_part(S, huge);
    memset(all[j], j & 0xff, S);
  }
  /* scatter: the sending and the receiving parts drawn at random from the
   * same buffers (interleaved, as departures and arrivals are) */
  srand(12345u + (unsigned)me);
  for (int j = scatter ? 2 * nbuf - 1 : 0; j > 0; j--) {
    int k = rand() % (j + 1);
    unsigned char *x = all[j];
    all[j] = all[k];
    all[k] = x;
  }
  for (int j = 0; j < nparts; j++) {
    sb[j] = all[scatter ? j : 2 * j];
    rb[j] = all[scatter ? nparts + j : 2 * j + 1];
  }
  from_sb = malloc(sizeof *from_sb * (size_t)nparts);
  int pid = (int)getpid();
  MPI_Sendrecv(&pid, 1, MPI_INT, (me + 1) % np, 3, &from_pid, 1, MPI_INT,
               (me + np - 1) % np, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Sendrecv(sb, (int)(sizeof *sb * (size_t)nparts), MPI_BYTE, (me + 1) % np, 4,
               from_sb, (int)(sizeof *sb * (size_t)nparts), MPI_BYTE,
               (me + np - 1) % np, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  size_t total = S * (size_t)nparts;
  unsigned char *sbuf = malloc(total), *rbuf = malloc(total);
  memset(sbuf, 1, total);
  memset(rbuf, 0, total);
  double *t = malloc(sizeof *t * (size_t)reps * (NM + 1));
  for (int r = -1; r < reps; r++) /* r = -1: warm-up, not kept */
    for (int m = 0; m <= NM; m++) {
      double x = m == NM                 ? run_a2av(sbuf, rbuf)
                 : modes[m].kind == SEP  ? run_sep(modes[m].k)
                 : modes[m].kind == PACK ? run_pack(sbuf, rbuf)
                 : modes[m].kind == CMA  ? run_cma()
                                         : run_hidx(modes[m].k);
      double mx;
      MPI_Allreduce(&x, &mx, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      if (r >= 0)
        t[(size_t)m * reps + r] = mx;
    }
  if (me == 0) {
    double a = bench_median(&t[(size_t)NM * reps], reps);
    printf("# %d parts of %zu bytes per rank, %d ranks, %s buffers, %s; "
           "Alltoallv %.6f s\n", nparts, S, np, huge ? "huge-page" : "malloc",
           scatter ? "scattered" : "in allocation order", a);
    for (int m = 0; m < NM; m++) {
      double v = bench_median(&t[(size_t)m * reps], reps);
      if (v < 0) /* a refused read is -1 on every repetition */
        printf("%-10s refused by the kernel (ptrace permission)\n", modes[m].name);
      else
        printf("%-10s %10.6f s  ratio %.3f\n", modes[m].name, v, a / v);
    }
  }
  for (int j = 0; j < 2 * nbuf; j++)
    free(all[j]);
  free(all); free(from_sb);
  free(sb); free(rb); free(reqs); free(sbuf); free(rbuf); free(t);
  MPI_Finalize();
  bench_core_rtt_after(rtt0);
  return 0;
}
