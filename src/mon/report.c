/*
 * The end-of-run report, printed by rank 0.
 *
 * Every rank packs all its figures into ONE array of doubles; three
 * PMPI_Reduce calls (MIN, MAX, SUM) give rank 0 min, max and average of every
 * figure at once. Regions are local objects (ids differ between ranks), so
 * rank 0 first broadcasts the paths of the regions it will list (its own
 * largest by inclusive wall time) and each rank packs its figures for those
 * paths (zeros where it has no such region). Six collectives in all (two
 * broadcasts, a one-int agreement that every rank has its buffers, three
 * reductions), through PMPI, so the report is not counted as the
 * application's traffic.
 *
 * Layout of the packed array (P = MON__NACT + MON__NGROUPS, K regions):
 *   [G_*]            global figures
 *   [3 a + 0..2]     tsum, ncalls, nbytes of activity or group a < P
 *   [3 P + 4 k ..]   count, wtime, mtime, cputime of listed region k
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common_internal.h"
#include "mon/mon_core.h"

enum { G_WALL, G_MPI, G_PMPI, G_CPU, G_CALLS, G_BYTES, G_THREADS, G_NPARTNERS,
       G_PBYTES, G_PMSGS, G_PRBYTES, G_PRMSGS, G_INIT, G_LCALLS, G_LBYTES, G_LTIME,
       G_N };

#define P (MON__NACT + MON__NGROUPS)

typedef struct {
  double *mn, *mx, *sum;
  int nranks;
} red_t;

/* ---- regions to list, chosen on rank 0 ------------------------------------------ */

typedef struct {
  int id;
  double w;
} regw_t;

static int by_w_desc(const void *a, const void *b) {
  double x = ((const regw_t *)a)->w, y = ((const regw_t *)b)->w;
  if (x != y)
    return x < y ? 1 : -1;
  return ((const regw_t *)a)->id - ((const regw_t *)b)->id;
}

/* Serialised region paths: for each region, the number of components and the
 * NUL-terminated names from the root down. Returns the buffer (malloc). */
static char *pick_regions(int k, int *nout, int *len) {
  int n = mon__region_count() - 1;
  *nout = 0;
  *len = 0;
  if (n <= 0 || k <= 0)
    return NULL;
  regw_t *v = malloc((size_t)n * sizeof *v);
  if (!v)
    return NULL;
  for (int i = 0; i < n; i++) {
    mon__regstats_t s;
    v[i].id = i + 1;
    v[i].w = mon__region_read(i + 1, &s) == 0 ? s.wtime : 0.0;
  }
  qsort(v, (size_t)n, sizeof *v, by_w_desc);
  if (k > n)
    k = n;
  size_t cap = 1024, off = 0;
  char *buf = malloc(cap);
  int *chain = NULL, chain_cap = 0;
  for (int i = 0; buf && i < k; i++) {
    /* The whole path, however deep: a cut one would resolve to an ancestor. */
    int depth = 0;
    for (int r = v[i].id; r > 0; r = mon__region_parent(r)) {
      if (depth == chain_cap) {
        int nc = chain_cap ? 2 * chain_cap : 64;
        int *ns = realloc(chain, (size_t)nc * sizeof *ns);
        if (!ns) {
          free(buf);
          buf = NULL;
          break;
        }
        chain = ns;
        chain_cap = nc;
      }
      chain[depth++] = r;
    }
    if (!buf)
      break;
    size_t need = sizeof(int) + (size_t)depth * (MON__NAME_MAX + 1);
    if (off + need > cap) {
      while (off + need > cap)
        cap *= 2;
      char *nb = realloc(buf, cap);
      if (!nb) {
        free(buf);
        buf = NULL;
        break;
      }
      buf = nb;
    }
    memcpy(buf + off, &depth, sizeof depth);
    off += sizeof depth;
    for (int d = depth - 1; d >= 0; d--) {
      const char *nm = mon__region_name(chain[d]);
      size_t l = strlen(nm) + 1;
      memcpy(buf + off, nm, l);
      off += l;
    }
    (*nout)++;
  }
  free(chain);
  free(v);
  *len = buf ? (int)off : 0;
  if (!buf)
    *nout = 0;
  return buf;
}

/* Local region ids of the serialised paths (-1 where this rank has none). */
static void resolve_regions(const char *buf, int n, int *ids) {
  size_t off = 0;
  for (int i = 0; i < n; i++) {
    int depth;
    memcpy(&depth, buf + off, sizeof depth);
    off += sizeof depth;
    int id = 0;
    for (int d = 0; d < depth; d++) {
      const char *nm = buf + off;
      off += strlen(nm) + 1;
      if (id >= 0)
        id = mon__region_find_child(id, nm);
    }
    ids[i] = id < 0 ? -1 : id;
  }
}

/* ---- local figures ---------------------------------------------------------------- */

static void count_partner(int partner, const mon__partner_t *p, void *ctx) {
  double *v = ctx;
  (void)partner;
  if (p->msgs || p->rmsgs)
    v[G_NPARTNERS] += 1; /* per thread: an upper bound when threads share partners */
  v[G_PBYTES] += (double)p->bytes;
  v[G_PMSGS] += (double)p->msgs;
  v[G_PRBYTES] += (double)p->rbytes;
  v[G_PRMSGS] += (double)p->rmsgs;
}

static void pack_local(double *v, const int *ids, int k) {
  mon__regstats_t r0;
  mon__region_read(0, &r0);
  v[G_WALL] = r0.wtime;
  v[G_MPI] = r0.mtime;
  v[G_PMPI] = r0.wtime > 0 ? 100.0 * r0.mtime / r0.wtime : 0.0;
  v[G_CPU] = r0.cputime;
  v[G_THREADS] = mon__tls_count();
  mon__partner_foreach(-1, count_partner, v);
  double sec = mon__tick_seconds();
  /* MPI_Init is in the wall time, not in the program's MPI time. */
  static const int init_acts[] = {MON_ACT_MPI_Init, MON_ACT_MPI_Init_thread};
  for (int i = 0; i < 2; i++) {
    mon__actstats_t s = {0, 0, 0.0, INFINITY, 0.0};
    mon__act_read(init_acts[i], -1, &s);
    v[G_INIT] += s.tsum;
  }
  for (int a = 0; a < P; a++) {
    mon__actstats_t s = {0, 0, 0.0, INFINITY, 0.0};
    mon__act_read(a, -1, &s);
    v[G_N + 3 * a] = s.tsum;
    v[G_N + 3 * a + 1] = (double)s.ncalls;
    v[G_N + 3 * a + 2] = (double)s.nbytes;
    if (a < MON__NACT) {
      v[G_CALLS] += (double)s.ncalls;
      v[G_BYTES] += (double)s.nbytes;
      mon__agg_t l;
      mon__lib_read(a, &l);
      v[G_LCALLS] += (double)l.ncalls;
      v[G_LBYTES] += (double)l.nbytes;
      v[G_LTIME] += (double)l.tsum * sec;
    }
  }
  for (int i = 0; i < k; i++) {
    double *r = v + G_N + 3 * P + 4 * i;
    mon__regstats_t s;
    if (ids[i] < 0 || mon__region_read(ids[i], &s) != 0)
      continue;
    r[0] = (double)s.count;
    r[1] = s.wtime;
    r[2] = s.mtime;
    r[3] = s.cputime;
  }
}

/* ---- printing --------------------------------------------------------------------- */

/* The printed path of a serialised region (\a depth names from the root,
 * at \a *off, which advances past them): components joined by '/', each
 * escaped (control characters, bytes that are not UTF-8, and a '/' inside a
 * name as "\\/"), so a region named "x/y" at the top does not read as "y"
 * inside "x". malloc'd; NULL on OOM. */
static char *region_path(const char *names, int depth, size_t *off) {
  size_t len = 0, o = *off;
  for (int d = 0; d < depth; d++) {
    size_t l = strlen(names + o + len) + 1;
    len += l;
  }
  /* An escaped byte takes at most 4 bytes (\xNN). */
  size_t cap = 4 * len + 1, po = 0;
  char *path = malloc(cap);
  const char *up = NULL;
  for (int d = 0; path && d < depth; d++) {
    const char *nm = names + o;
    o += strlen(nm) + 1;
    if (d)
      path[po++] = '/';
    po += (size_t)ballast__escape(mon__path_step(up, nm), "/", path + po, (int)(cap - po));
    up = nm;
  }
  if (path && !depth)
    path[0] = 0;
  *off += len;
  return path;
}

typedef struct {
  int a;
  double t;
} actt_t;

static int by_t_desc(const void *x, const void *y) {
  double a = ((const actt_t *)x)->t, b = ((const actt_t *)y)->t;
  if (a != b)
    return a < b ? 1 : -1;
  return ((const actt_t *)x)->a - ((const actt_t *)y)->a;
}

static void print_report(FILE *f, int level, const red_t *r, const char *paths,
                         int k) {
  int n = r->nranks;
  const double *mn = r->mn, *mx = r->mx, *sm = r->sum;
  double avgwall = sm[G_WALL] / n;
  fprintf(f, "##ballast############################################################\n");
  fprintf(f, "# command    : %s\n", mon__cfg.command);
  fprintf(f, "# ranks      : %d\n", n);
  fprintf(f, "# wall (s)   : %.6f\n", mx[G_WALL]);
  fprintf(f, "# %%mpi       : %.2f\n", sm[G_PMPI] / n);
  fprintf(f, "# init (s)   : %.6f (MPI_Init, max over ranks: in the wall time, not in "
             "%%mpi; MPI_Finalize, where this report is written, is in neither)\n",
          mx[G_INIT]);
  fprintf(f, "# calls      : %.0f\n", sm[G_CALLS]);
  fprintf(f, "# bytes      : %.0f (each rank's MPI calls: bytes sent plus bytes "
             "received, so a message counts at both ends; collectives by the volume "
             "rules in the README)\n", sm[G_BYTES]);
  fprintf(f, "# sent       : %.0f bytes in %.0f messages (point-to-point and one-sided, "
             "empty messages included; collectives not included)\n",
          sm[G_PBYTES], sm[G_PMSGS]);
  fprintf(f, "# received   : %.0f bytes in %.0f messages (point-to-point and one-sided)\n",
          sm[G_PRBYTES], sm[G_PRMSGS]);
  fprintf(f, "#\n");
  fprintf(f, "# %-22s %12s %12s %12s %12s\n", "", "[total]", "<avg>", "min", "max");
  fprintf(f, "# %-22s %12.6f %12.6f %12.6f %12.6f\n", "wall (s)", sm[G_WALL], avgwall,
          mn[G_WALL], mx[G_WALL]);
  fprintf(f, "# %-22s %12.6f %12.6f %12.6f %12.6f\n", "mpi (s)", sm[G_MPI], sm[G_MPI] / n,
          mn[G_MPI], mx[G_MPI]);
  fprintf(f, "# %-22s %12s %12.2f %12.2f %12.2f\n", "%mpi", "-", sm[G_PMPI] / n,
          mn[G_PMPI], mx[G_PMPI]);
  fprintf(f, "# %-22s %12.0f %12.1f %12.0f %12.0f\n", "calls", sm[G_CALLS],
          sm[G_CALLS] / n, mn[G_CALLS], mx[G_CALLS]);
  fprintf(f, "# %-22s %12.0f %12.1f %12.0f %12.0f\n", "bytes", sm[G_BYTES],
          sm[G_BYTES] / n, mn[G_BYTES], mx[G_BYTES]);
  if (level == MON__REPORT_FULL) {
    fprintf(f, "# %-22s %12.6f %12.6f %12.6f %12.6f\n", "cpu (s)", sm[G_CPU],
            sm[G_CPU] / n, mn[G_CPU], mx[G_CPU]);
    fprintf(f, "# %-22s %12.0f %12.1f %12.0f %12.0f\n", "threads", sm[G_THREADS],
            sm[G_THREADS] / n, mn[G_THREADS], mx[G_THREADS]);
  }

  /* Activities by total time over the ranks. */
  actt_t order[MON__NACT];
  int na = 0;
  for (int a = 0; a < MON__NACT; a++)
    if (sm[G_N + 3 * a + 1] > 0 || sm[G_N + 3 * a + 2] > 0)
      order[na++] = (actt_t){a, sm[G_N + 3 * a]};
  qsort(order, (size_t)na, sizeof *order, by_t_desc);
  int show = level == MON__REPORT_FULL ? na : (na < mon__cfg.top ? na : mon__cfg.top);
  fprintf(f, "#\n# %-22s %12s %12s %12s %12s %8s %12s %14s\n", "activity", "[time]",
          "<avg>", "min", "max", "%wall", "[calls]", "[bytes]");
  for (int i = 0; i < show; i++) {
    int a = order[i].a, o = G_N + 3 * a;
    fprintf(f, "# %-22s %12.6f %12.6f %12.6f %12.6f %8.2f %12.0f %14.0f\n",
            mon__act_names[a], sm[o], sm[o] / n, mn[o], mx[o],
            avgwall > 0 ? 100.0 * (sm[o] / n) / avgwall : 0.0, sm[o + 1], sm[o + 2]);
  }
  if (level == MON__REPORT_FULL) {
    fprintf(f, "#\n# %-22s %12s %12s %12s %12s %8s %12s %14s\n", "group", "[time]",
            "<avg>", "min", "max", "%wall", "[calls]", "[bytes]");
    for (int g = MON__NACT; g < P; g++) {
      int o = G_N + 3 * g;
      fprintf(f, "# %-22s %12.6f %12.6f %12.6f %12.6f %8.2f %12.0f %14.0f\n",
              mon__act_names[g], sm[o], sm[o] / n, mn[o], mx[o],
              avgwall > 0 ? 100.0 * (sm[o] / n) / avgwall : 0.0, sm[o + 1], sm[o + 2]);
    }
  }

  if (k > 0) {
    fprintf(f, "#\n# %-30s %10s %12s %12s %12s %12s %8s\n", "region", "[count]",
            "<wall>", "min", "max", "<mpi>", "%mpi");
    size_t off = 0;
    for (int i = 0; i < k; i++) {
      int depth;
      memcpy(&depth, paths + off, sizeof depth);
      off += sizeof depth;
      char *path = region_path(paths, depth, &off);
      const double *s = sm + G_N + 3 * P + 4 * i;
      const double *lo = mn + G_N + 3 * P + 4 * i, *hi = mx + G_N + 3 * P + 4 * i;
      fprintf(f, "# %-30s %10.0f %12.6f %12.6f %12.6f %12.6f %8.2f\n",
              path ? path : "(out of memory)", s[0], s[1] / n, lo[1], hi[1], s[2] / n,
              s[1] > 0 ? 100.0 * s[2] / s[1] : 0.0);
      free(path);
    }
  }

  if (level == MON__REPORT_FULL) {
    fprintf(f, "#\n# partners   : %.1f <avg> %.0f min %.0f max distinct partners per rank\n",
            sm[G_NPARTNERS] / n, mn[G_NPARTNERS], mx[G_NPARTNERS]);
    fprintf(f, "# library    : %.0f calls %.0f bytes %.6f s (ballast's own MPI traffic, "
            "not in the figures above)\n", sm[G_LCALLS], sm[G_LBYTES], sm[G_LTIME]);
    fprintf(f, "# clock      : %s\n", mon__clock_is_tsc() ? "invariant TSC" : "CLOCK_MONOTONIC");
    int nh = mon__papi_nevents();
    fprintf(f, "# hw counters: %s\n", nh ? mon__papi_event_name(0) : "none on this machine");
  }
  mon__report_sections_print(f);
  fprintf(f, "######################################################################\n");
}

int mon__report(int level) {
  int rank = 0, n = 1;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &n);
  int k = level == MON__REPORT_FULL ? (mon__cfg.top > 20 ? mon__cfg.top : 20) : mon__cfg.top;

  /* 1: the size of rank 0's region list. */
  int hdr[2] = {0, 0};
  char *paths = NULL;
  if (rank == 0)
    paths = pick_regions(k, &hdr[0], &hdr[1]);
  PMPI_Bcast(hdr, 2, MPI_INT, 0, MPI_COMM_WORLD);
  k = hdr[0];
  if (rank != 0 && hdr[1] > 0)
    paths = malloc((size_t)hdr[1]);
  size_t len = (size_t)G_N + 3 * P + 4 * (size_t)k;
  double *buf = calloc(len * 4, sizeof *buf);
  int *ids = malloc(((size_t)k + 1) * sizeof *ids);
  int rc = 0, ok = buf && ids && (hdr[1] == 0 || paths), all_ok = 0;
  /* 2: every rank must take part in the same collectives: agree first. */
  PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!all_ok) {
    rc = BALLAST_ENOMEM;
    if (rank == 0)
      BALLAST_WARN("mon: out of memory on some rank while building the report; no report");
  } else {
    /* 3: the region paths; 4-6: every figure, packed, reduced three ways. */
    if (hdr[1] > 0)
      PMPI_Bcast(paths, hdr[1], MPI_CHAR, 0, MPI_COMM_WORLD);
    for (int i = 0; i < hdr[0]; i++)
      ids[i] = -1;
    if (k > 0)
      resolve_regions(paths, k, ids);
    pack_local(buf, ids, hdr[0]);
    red_t r = {buf + len, buf + 2 * len, buf + 3 * len, n};
    PMPI_Reduce(buf, r.mn, (int)len, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
    PMPI_Reduce(buf, r.mx, (int)len, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    PMPI_Reduce(buf, r.sum, (int)len, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
      print_report(stdout, level, &r, paths, k);
      fflush(stdout);
    }
  }
  free(buf);
  free(ids);
  free(paths);
  return rc;
}
