/*
 * ballast-sweep: a KBA pipelined wavefront transport sweep in the style of
 * Sweep3D (1-group, time-independent discrete ordinates on a 3D Cartesian
 * grid), used to measure the overhead of monitoring plus PIA queries on a
 * real communication pattern (seed section 4.2.4, experiment 3).
 *
 * Decomposition (Koch-Baker-Alcouffe): a 2D process grid PX x PY over x-y;
 * every rank holds I x J x K cells (weak scaling, as the seed's 10x10x400
 * base grid). For each of the 8 octants the sweep starts at one corner of
 * the process grid; z is cut into blocks that are pipelined: a rank receives
 * the incoming x and y faces of a block from its upstream neighbours
 * (MPI_Recv), computes the block, and sends its outgoing faces downstream
 * (MPI_Send), so several ranks work on different blocks at once.
 *
 * Per cell and angle: the diamond-difference balance with a negative-flux
 * fixup. Each iteration ends with a source update and an MPI_Allreduce of
 * the largest flux change, as Sweep3D's inner iteration does.
 *
 * The same source builds two programs:
 *  - ballast-sweep, linked to ballast: the region "sweep" marks each sweep,
 *    every MPI call is monitored, and with --pia each iteration queries, as
 *    the seed did, the total time, average time and calls of MPI_Send and
 *    MPI_Recv and the wall time, MPI time and count of region "sweep";
 *  - ballast-sweep-plain (SWEEP_PLAIN defined), not linked to ballast at all:
 *    the baseline for the overhead figure.
 */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef SWEEP_PLAIN
#include <ballast.h>
#endif

typedef struct {
  int it, jt, kt;   /* local cells in x, y, z */
  int kb;           /* z planes per pipelined block */
  int mm;           /* angles per octant */
  int iters;        /* iterations */
  int px, py;       /* process grid */
  int pia;          /* query PIA every iteration */
  int ab;           /* A/B: alternate monitored and PMPI-only iterations */
} opts_t;

typedef int (*send_fn)(const void *, int, MPI_Datatype, int, int, MPI_Comm);
typedef int (*recv_fn)(void *, int, MPI_Datatype, int, int, MPI_Comm,
                       MPI_Status *);
typedef int (*allreduce_fn)(const void *, void *, int, MPI_Datatype, MPI_Op,
                            MPI_Comm);

typedef struct {
  opts_t o;
  int rank, size, ix, iy; /* position in the process grid */
  double *flux, *src;     /* [kt][jt][it] */
  double *psik;           /* [jt][it][mm]: z face carried through the blocks */
  double *facex, *facey;  /* [kb][jt][mm], [kb][it][mm] */
  double *mu, *eta, *xi, *w;
  send_fn send;           /* MPI_Send, or PMPI_Send in unmonitored A/B steps */
  recv_fn recv;
  allreduce_fn allreduce;
} sweep_t;

static void usage(const char *prog) {
  fprintf(stderr,
          "usage: %s [--grid IxJxK] [--blocks NB] [--angles M] [--iters N]\n"
          "          [--px PX] [--pia] [--ab]\n"
          "  --grid    cells per rank (default 10x10x400, the seed's base grid)\n"
          "  --blocks  z blocks pipelined per octant (default 40)\n"
          "  --angles  angles per octant (default 6)\n"
          "  --iters   iterations (default 20)\n"
          "  --px      ranks along x (default: the squarest factor of the size)\n"
          "  --pia     query PIA every iteration (ballast-sweep only)\n"
          "  --ab      alternate iterations (ABBA) between monitored + PIA and\n"
          "            unmonitored (PMPI_ calls, no region, no query); rank 0\n"
          "            prints the median time of each (ballast-sweep only)\n",
          prog);
}

static int parse(int argc, char **argv, int size, opts_t *o) {
  *o = (opts_t){10, 10, 400, 10, 6, 20, 0, 0, 0, 0};
  int nblocks = 40;
  for (int a = 1; a < argc; a++) {
    const char *s = argv[a], *v = a + 1 < argc ? argv[a + 1] : NULL;
    if (!strcmp(s, "--pia")) {
      o->pia = 1;
      continue;
    }
    if (!strcmp(s, "--ab")) {
      o->ab = o->pia = 1;
      continue;
    }
    if (!v)
      return -1;
    a++;
    if (!strcmp(s, "--grid")) {
      if (sscanf(v, "%dx%dx%d", &o->it, &o->jt, &o->kt) != 3)
        return -1;
    } else if (!strcmp(s, "--blocks")) {
      nblocks = atoi(v);
    } else if (!strcmp(s, "--angles")) {
      o->mm = atoi(v);
    } else if (!strcmp(s, "--iters")) {
      o->iters = atoi(v);
    } else if (!strcmp(s, "--px")) {
      o->px = atoi(v);
    } else {
      return -1;
    }
  }
  if (o->it < 1 || o->jt < 1 || o->kt < 1 || nblocks < 1 || o->mm < 1 ||
      o->iters < 1 || nblocks > o->kt)
    return -1;
  o->kb = (o->kt + nblocks - 1) / nblocks;
  if (o->px <= 0)
    for (o->px = (int)sqrt((double)size); size % o->px; o->px--)
      ;
  if (o->px < 1 || size % o->px)
    return -1;
  o->py = size / o->px;
#ifdef SWEEP_PLAIN
  if (o->pia || o->ab)
    return -1; /* the plain build has no PIA */
#endif
  return 0;
}

static double *alloc(size_t n) {
  double *p = calloc(n, sizeof(double));
  if (!p) {
    fprintf(stderr, "sweep: out of memory\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  return p;
}

static void setup(sweep_t *s) {
  const opts_t *o = &s->o;
  size_t cells = (size_t)o->it * o->jt * o->kt;
  s->ix = s->rank % o->px;
  s->iy = s->rank / o->px;
  s->flux = alloc(cells);
  s->src = alloc(cells);
  s->psik = alloc((size_t)o->jt * o->it * o->mm);
  s->facex = alloc((size_t)o->kb * o->jt * o->mm);
  s->facey = alloc((size_t)o->kb * o->it * o->mm);
  s->mu = alloc(o->mm);
  s->eta = alloc(o->mm);
  s->xi = alloc(o->mm);
  s->w = alloc(o->mm);
  /* A simple level-symmetric-like set: direction cosines spread over the
   * octant, normalised, equal weights summing to 1 over the sphere. */
  for (int m = 0; m < o->mm; m++) {
    double a = (m + 0.5) / o->mm, b = 1.0 - 0.5 * a;
    double n = sqrt(a * a + b * b + 0.25);
    s->mu[m] = a / n;
    s->eta[m] = b / n;
    s->xi[m] = 0.5 / n;
    s->w[m] = 1.0 / (8.0 * o->mm);
  }
  for (size_t c = 0; c < cells; c++)
    s->src[c] = 1.0; /* external source, uniform */
}

static void release(sweep_t *s) {
  free(s->flux);
  free(s->src);
  free(s->psik);
  free(s->facex);
  free(s->facey);
  free(s->mu);
  free(s->eta);
  free(s->xi);
  free(s->w);
}

/* Computes one z block of one octant: planes k0 .. k1-1 (in sweep order dk). */
static void block(sweep_t *s, int di, int dj, int dk, int k0, int nk) {
  const opts_t *o = &s->o;
  const int it = o->it, jt = o->jt, mm = o->mm;
  const double sigt = 1.0;
  for (int kk = 0; kk < nk; kk++) {
    int k = dk > 0 ? k0 + kk : o->kt - 1 - (k0 + kk);
    for (int jj = 0; jj < jt; jj++) {
      int j = dj > 0 ? jj : jt - 1 - jj;
      double *fx = &s->facex[((size_t)kk * jt + j) * mm];
      for (int ii = 0; ii < it; ii++) {
        int i = di > 0 ? ii : it - 1 - ii;
        size_t c = ((size_t)k * jt + j) * it + i;
        double *fy = &s->facey[((size_t)kk * it + i) * mm];
        double *fk = &s->psik[((size_t)j * it + i) * mm];
        double q = s->src[c], phi = 0.0;
        for (int m = 0; m < mm; m++) {
          double cx = 2.0 * s->mu[m], cy = 2.0 * s->eta[m], cz = 2.0 * s->xi[m];
          double psi = (q + cx * fx[m] + cy * fy[m] + cz * fk[m]) /
                       (sigt + cx + cy + cz);
          /* diamond difference, with the negative-flux fixup */
          double ox = 2.0 * psi - fx[m], oy = 2.0 * psi - fy[m],
                 oz = 2.0 * psi - fk[m];
          fx[m] = ox > 0.0 ? ox : 0.0;
          fy[m] = oy > 0.0 ? oy : 0.0;
          fk[m] = oz > 0.0 ? oz : 0.0;
          phi += s->w[m] * psi;
        }
        s->flux[c] += phi;
      }
    }
  }
}

/* One full sweep: 8 octants, each pipelined over the z blocks. */
static void sweep(sweep_t *s) {
  const opts_t *o = &s->o;
  size_t nfx = (size_t)o->kb * o->jt * o->mm, nfy = (size_t)o->kb * o->it * o->mm;
  memset(s->flux, 0, sizeof(double) * (size_t)o->it * o->jt * o->kt);
  for (int oct = 0; oct < 8; oct++) {
    int di = oct & 1 ? -1 : 1, dj = oct & 2 ? -1 : 1, dk = oct & 4 ? -1 : 1;
    int upx = s->ix - di, dnx = s->ix + di, upy = s->iy - dj, dny = s->iy + dj;
    int rupx = upx >= 0 && upx < o->px ? s->iy * o->px + upx : -1;
    int rdnx = dnx >= 0 && dnx < o->px ? s->iy * o->px + dnx : -1;
    int rupy = upy >= 0 && upy < o->py ? upy * o->px + s->ix : -1;
    int rdny = dny >= 0 && dny < o->py ? dny * o->px + s->ix : -1;
    int tagx = 100 + 2 * oct, tagy = 101 + 2 * oct;
    memset(s->psik, 0, sizeof(double) * (size_t)o->jt * o->it * o->mm);
    for (int k0 = 0; k0 < o->kt; k0 += o->kb) {
      int nk = o->kt - k0 < o->kb ? o->kt - k0 : o->kb;
      int cx = nk * o->jt * o->mm, cy = nk * o->it * o->mm;
      if (rupx >= 0)
        s->recv(s->facex, cx, MPI_DOUBLE, rupx, tagx, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
      else
        memset(s->facex, 0, sizeof(double) * nfx); /* vacuum boundary */
      if (rupy >= 0)
        s->recv(s->facey, cy, MPI_DOUBLE, rupy, tagy, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
      else
        memset(s->facey, 0, sizeof(double) * nfy);
      block(s, di, dj, dk, k0, nk);
      if (rdnx >= 0)
        s->send(s->facex, cx, MPI_DOUBLE, rdnx, tagx, MPI_COMM_WORLD);
      if (rdny >= 0)
        s->send(s->facey, cy, MPI_DOUBLE, rdny, tagy, MPI_COMM_WORLD);
    }
  }
}

/* Source update (scattering ratio 0.5) and the global largest change. */
static double update(sweep_t *s, double *prev) {
  size_t cells = (size_t)s->o.it * s->o.jt * s->o.kt;
  double dmax = 0.0;
  for (size_t c = 0; c < cells; c++) {
    double d = fabs(s->flux[c] - prev[c]);
    if (d > dmax)
      dmax = d;
    prev[c] = s->flux[c];
    s->src[c] = 1.0 + 0.5 * s->flux[c];
  }
  double g = 0.0;
  s->allreduce(&dmax, &g, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return g;
}

#ifndef SWEEP_PLAIN
/* The seed's per-iteration queries. Returns a value folded into the output
 * so the queries cannot be optimised away. */
typedef struct {
  pia_actdata_t send, recv;
  pia_regdata_t reg;
} pia_seen_t;

static int query(pia_seen_t *q) {
  pia_act_t send = pia_activity_find("MPI_Send");
  pia_act_t recv = pia_activity_find("MPI_Recv");
  pia_regid_t r = pia_region_find("sweep");
  int rc = 0;
  if (send < 0 || recv < 0 || r < 0)
    return send < 0 ? send : recv < 0 ? recv : r;
  pia_actdata_init(&q->send);
  pia_actdata_init(&q->recv);
  if ((rc = pia_activity_data(send, &q->send)) < 0 ||
      (rc = pia_activity_data(recv, &q->recv)) < 0 ||
      (rc = pia_region_data(r, &q->reg)) < 0)
    return rc;
  return 0;
}

static double avg(const pia_actdata_t *d) {
  return d->ncalls ? d->tsum / (double)d->ncalls : 0.0;
}
#endif

static int cmp_dbl(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  qsort(v, n, sizeof *v, cmp_dbl);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* A/B mode: median iteration time of the monitored (A) and unmonitored (B)
 * iterations, and their ratio. Iteration 0 (warm-up) is left out. */
static void print_ab(const double *tit, int n) {
  double *a = malloc(sizeof(double) * n), *b = malloc(sizeof(double) * n);
  int na = 0, nb = 0;
  if (!a || !b) {
    free(a);
    free(b);
    return;
  }
  for (int i = 1; i < n; i++) {
    if (((i + 1) / 2) % 2 == 0)
      a[na++] = tit[i];
    else
      b[nb++] = tit[i];
  }
  if (na && nb) {
    double ma = median(a, na), mb = median(b, nb);
    printf("ab: monitored+pia median %.6f s (%d), unmonitored median %.6f s "
           "(%d), overhead %+.3f%%\n", ma, na, mb, nb, (ma / mb - 1.0) * 100.0);
  }
  free(a);
  free(b);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  sweep_t s;
  memset(&s, 0, sizeof s);
  MPI_Comm_rank(MPI_COMM_WORLD, &s.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &s.size);
  if (parse(argc, argv, s.size, &s.o) < 0) {
    if (s.rank == 0)
      usage(argv[0]);
    MPI_Finalize();
    return 2;
  }
  setup(&s);
  s.send = MPI_Send;
  s.recv = MPI_Recv;
  s.allreduce = MPI_Allreduce;
  double *tit = alloc((size_t)s.o.iters); /* per-iteration time (A/B mode) */
  double *prev = alloc((size_t)s.o.it * s.o.jt * s.o.kt);
  double dmax = 0.0;
#ifndef SWEEP_PLAIN
  double qsink = 0.0;
  pia_seen_t q;
  memset(&q, 0, sizeof q);
#endif

  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  for (int iter = 0; iter < s.o.iters; iter++) {
    double ti = MPI_Wtime();
    /* A/B mode: ABBA pattern; B iterations bypass monitoring entirely. */
    int mon_on = !s.o.ab || ((iter + 1) / 2) % 2 == 0;
#ifdef SWEEP_PLAIN
    (void)mon_on;
#else
    if (s.o.ab) {
      s.send = mon_on ? MPI_Send : PMPI_Send;
      s.recv = mon_on ? MPI_Recv : PMPI_Recv;
      s.allreduce = mon_on ? MPI_Allreduce : PMPI_Allreduce;
    }
    if (mon_on)
      mon_region_begin("sweep");
#endif
    sweep(&s);
#ifndef SWEEP_PLAIN
    if (mon_on)
      mon_region_end("sweep");
    if (s.o.pia && mon_on) {
      int rc = query(&q);
      if (rc < 0) {
        /* e.g. BALLAST_MONITOR=0: nothing is recorded, "sweep" never exists */
        if (s.rank == 0)
          fprintf(stderr, "sweep: PIA query failed (%s): queries stopped\n",
                  ballast_strerror(rc));
        s.o.pia = 0;
      }
      qsink += avg(&q.send) + avg(&q.recv) + q.reg.wtime + q.reg.mtime;
    }
#endif
    dmax = update(&s, prev);
    /* update() ends in an allreduce: every rank finished this iteration */
    tit[iter] = MPI_Wtime() - ti;
  }
  double t = MPI_Wtime() - t0, tmax = 0.0, sum = 0.0, gsum = 0.0;
  MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  for (size_t c = 0; c < (size_t)s.o.it * s.o.jt * s.o.kt; c++)
    sum += s.flux[c];
  MPI_Reduce(&sum, &gsum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);

  if (s.rank == 0) {
    printf("sweep: ranks=%d grid=%dx%dx%d per rank (%dx%d ranks) blocks=%d "
           "angles=%d iters=%d\n",
           s.size, s.o.it, s.o.jt, s.o.kt, s.o.px, s.o.py,
           (s.o.kt + s.o.kb - 1) / s.o.kb, s.o.mm, s.o.iters);
    printf("sweep: flux sum %.12e, last change %.3e\n", gsum, dmax);
#ifndef SWEEP_PLAIN
    if (s.o.pia) {
      printf("pia: MPI_Send calls=%lld total=%.6f s avg=%.3e s\n",
             q.send.ncalls, q.send.tsum, avg(&q.send));
      printf("pia: MPI_Recv calls=%lld total=%.6f s avg=%.3e s\n",
             q.recv.ncalls, q.recv.tsum, avg(&q.recv));
      printf("pia: region sweep count=%d wall=%.6f s mpi=%.6f s (sink %.3g)\n",
             q.reg.count, q.reg.wtime, q.reg.mtime, qsink);
    }
#endif
    printf("time: %.6f\n", tmax);
    if (s.o.ab)
      print_ab(tit, s.o.iters);
  }
  free(prev);
  free(tit);
  release(&s);
  MPI_Finalize();
  return 0;
}
