/*
 * The end-of-run report, printed by rank 0.
 *
 * Every rank packs all its figures into ONE array of doubles; three
 * PMPI_Reduce calls (MIN, MAX, SUM) give rank 0 min, max and average of every
 * figure at once. Regions are local objects (ids differ between ranks), so
 * the regions to list are chosen first, across ranks (choose_regions: the
 * largest by the sum over ranks of inclusive wall time, the rule the HTML
 * page follows; the ranks' regions are merged by path up a binomial tree,
 * so rank 0 holds each path once, not every rank's list), rank 0
 * broadcasts their paths and each rank packs its figures for those paths
 * (zeros where it has no such region). Activities are listed by the sum
 * over ranks of their time, ties by name. Through PMPI, so the report is
 * not counted as the application's traffic: the tree (a communicator
 * duplicated for it, log2(P) rounds of point-to-point messages), two
 * broadcasts, a one-int agreement that every rank has its buffers, three
 * reductions.
 *
 * Layout of the packed array (P = MON__NACT + MON__NGROUPS, K regions):
 *   [G_*]            global figures
 *   [3 a + 0..2]     tsum, ncalls, nbytes of activity or group a < P
 *   [3 P + 4 k ..]   count, wtime, mtime, cputime of listed region k
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common_internal.h"
#include "mon/mon_core.h"

enum { G_WALL, G_MPI, G_PMPI, G_CPU, G_CALLS, G_BYTES, G_THREADS, G_NPARTNERS,
       G_PBYTES, G_PMSGS, G_PRBYTES, G_PRMSGS, G_INIT, G_LCALLS, G_LBYTES, G_LTIME,
       G_OWN_WORK, G_OWN_WAIT, G_N };

#define P (MON__NACT + MON__NGROUPS)

typedef struct {
  double *mn, *mx, *sum;
  int nranks;
} red_t;

/* ---- regions to list, chosen across ranks ---------------------------------------
 *
 * One rule, the HTML page's too (README "What the figures mean"): regions are
 * ranked by the sum over ranks of their inclusive wall time (the same order as
 * the average per rank the report prints), ties by path. Every rank sends
 * rank 0 its regions (path and wall time); rank 0 sums them by path and
 * picks the first k. A rank's contribution is bounded so the gathered text
 * fits MPI's int counts: past (2^31 - 1) / ranks bytes it sends its largest
 * regions that fit. */

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

/* Appends \a n bytes to a growing buffer; 0, or -1 without memory. */
static int buf_put(char **buf, size_t *off, size_t *cap, const void *p, size_t n) {
  if (*off + n > *cap) {
    size_t nc = *cap ? *cap : 1024;
    while (*off + n > nc)
      nc *= 2;
    char *nb = realloc(*buf, nc);
    if (!nb)
      return -1;
    *buf = nb;
    *cap = nc;
  }
  memcpy(*buf + *off, p, n);
  *off += n;
  return 0;
}

/* This rank's regions as records: the inclusive wall time (a double), then
 * the path (the number of components and the NUL-terminated names from the
 * root down), largest first, at most \a limit bytes. malloc'd; NULL and
 * *len 0 when there are none, NULL and *len -1 without memory. */
static char *local_regions(size_t limit, int *len) {
  int n = mon__region_count() - 1;
  *len = 0;
  if (n <= 0)
    return NULL;
  *len = -1;
  regw_t *v = malloc((size_t)n * sizeof *v);
  if (!v)
    return NULL;
  for (int i = 0; i < n; i++) {
    mon__regstats_t s;
    v[i].id = i + 1;
    v[i].w = mon__region_read(i + 1, &s) == 0 ? s.wtime : 0.0;
  }
  qsort(v, (size_t)n, sizeof *v, by_w_desc);
  size_t cap = 0, off = 0;
  char *buf = NULL;
  int *chain = NULL, chain_cap = 0, ok = 1;
  for (int i = 0; ok && i < n; i++) {
    /* The whole path, however deep: a cut one would resolve to an ancestor. */
    int depth = 0;
    size_t need = sizeof(double) + sizeof(int);
    for (int r = v[i].id; ok && r > 0; r = mon__region_parent(r)) {
      if (depth == chain_cap) {
        int nc = chain_cap ? 2 * chain_cap : 64;
        int *ns = realloc(chain, (size_t)nc * sizeof *ns);
        if (!ns) {
          ok = 0;
          break;
        }
        chain = ns;
        chain_cap = nc;
      }
      chain[depth++] = r;
      need += strlen(mon__region_name(r)) + 1;
    }
    if (!ok || off + need > limit)
      break;
    ok = buf_put(&buf, &off, &cap, &v[i].w, sizeof(double)) == 0 &&
         buf_put(&buf, &off, &cap, &depth, sizeof depth) == 0;
    for (int d = depth - 1; ok && d >= 0; d--) {
      const char *nm = mon__region_name(chain[d]);
      ok = buf_put(&buf, &off, &cap, nm, strlen(nm) + 1) == 0;
    }
  }
  free(chain);
  free(v);
  if (!ok) {
    free(buf);
    return NULL;
  }
  *len = (int)off;
  return buf;
}

/* A gathered region: its path (depth and names, as the report's list
 * holds them) and the sum of its wall time over ranks. */
typedef struct {
  const char *path;
  size_t len;
  double w;
} regsum_t;

/* Paths compare by their names, component by component (NUL is the least
 * byte, so "a" < "a/b" < "ab" as the page's component lists compare). */
static int by_path(const void *a, const void *b) {
  const regsum_t *x = a, *y = b;
  size_t lx = x->len - sizeof(int), ly = y->len - sizeof(int);
  int c = memcmp(x->path + sizeof(int), y->path + sizeof(int), lx < ly ? lx : ly);
  return c ? c : (lx > ly) - (lx < ly);
}

static int by_sum_desc(const void *a, const void *b) {
  double x = ((const regsum_t *)a)->w, y = ((const regsum_t *)b)->w;
  if (x != y)
    return x < y ? 1 : -1;
  return by_path(a, b);
}

/* The records of \a all (\a total bytes: local_regions' format, several
 * ranks' concatenated) summed by path, in path order; *m of them, pointing
 * into \a all. NULL (and *m 0) without records or memory (*m -1). */
static regsum_t *sum_records(const char *all, size_t total, long *m) {
  *m = 0;
  size_t n = 0, cap = 0;
  regsum_t *v = NULL;
  for (size_t off = 0; off + sizeof(double) + sizeof(int) <= total;) {
    regsum_t r;
    int depth;
    memcpy(&r.w, all + off, sizeof r.w);
    off += sizeof r.w;
    r.path = all + off;
    memcpy(&depth, all + off, sizeof depth);
    size_t e = off + sizeof depth;
    for (int d = 0; d < depth && e < total; d++)
      e += strlen(all + e) + 1;
    r.len = e - off;
    off = e;
    if (n == cap) {
      size_t nc = cap ? 2 * cap : 256;
      regsum_t *nv = realloc(v, nc * sizeof *nv);
      if (!nv) {
        free(v);
        *m = -1;
        return NULL;
      }
      v = nv;
      cap = nc;
    }
    v[n++] = r;
  }
  if (!n) {
    free(v);
    return NULL;
  }
  qsort(v, n, sizeof *v, by_path);
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    if (k && by_path(&v[k - 1], &v[i]) == 0)
      v[k - 1].w += v[i].w;
    else
      v[k++] = v[i];
  }
  *m = (long)k;
  return v;
}

/* \a v's \a m records serialised again (with their summed time when
 * \a with_w: a tree message; the paths alone: the report's list). */
static char *records_put(const regsum_t *v, long m, int with_w, size_t *len) {
  size_t off = 0, cap = 0;
  char *buf = NULL;
  for (long i = 0; i < m; i++)
    if ((with_w && buf_put(&buf, &off, &cap, &v[i].w, sizeof v[i].w)) ||
        buf_put(&buf, &off, &cap, v[i].path, v[i].len)) {
      free(buf);
      return NULL;
    }
  *len = off;
  return buf;
}

/* Rank 0: the k regions of largest summed wall time out of the merged
 * records (\a all, \a total bytes), serialised as the report's list; *nout
 * paths, *len bytes. NULL without memory or regions. */
static char *pick_regions(const char *all, size_t total, int k, int *nout, int *len) {
  *nout = 0;
  *len = 0;
  long m;
  regsum_t *v = sum_records(all, total, &m);
  if (!v)
    return NULL;
  qsort(v, (size_t)m, sizeof *v, by_sum_desc);
  if ((long)k > m)
    k = (int)m;
  size_t off = 0;
  char *buf = records_put(v, k, 0, &off);
  free(v);
  if (!buf || off > INT_MAX) {
    free(buf);
    return NULL;
  }
  *nout = k;
  *len = (int)off;
  return buf;
}

/* The tag of the tree's messages (on a communicator of their own). */
enum { TREE_TAG = 1 };

/* Merges a child's records (\a sz bytes from \a peer) into *acc (*have
 * bytes, -1: failed, then nothing is kept but the child is still answered)
 * and sums them by path, so a message up the tree holds each path once. */
static void merge_child(MPI_Comm c, int peer, int sz, char **acc, long long *have) {
  char *nb = NULL;
  if (sz > 0 && *have >= 0 && *have + sz <= INT_MAX)
    nb = realloc(*acc, (size_t)(*have + sz));
  int go = nb != NULL;
  if (sz > 0)
    PMPI_Send(&go, 1, MPI_INT, peer, TREE_TAG, c);
  if (sz < 0 || (sz > 0 && !go)) {
    *have = -1;
    return;
  }
  if (sz == 0)
    return;
  *acc = nb;
  PMPI_Recv(*acc + *have, sz, MPI_CHAR, peer, TREE_TAG, c, MPI_STATUS_IGNORE);
  *have += sz;
  long m;
  regsum_t *v = sum_records(*acc, (size_t)*have, &m);
  size_t len = 0;
  char *merged = v ? records_put(v, m, 1, &len) : NULL;
  free(v);
  if (!merged) {
    *have = -1;
    return;
  }
  free(*acc);
  *acc = merged;
  *have = (long long)len;
}

/* Collective: the k regions to list. Every rank's regions (inclusive wall
 * time and path) travel up a binomial tree of ranks, each parent summing
 * its children's records by path, so a message and rank 0's memory hold the
 * union of the ranks' paths once (not every rank's copy), in log2(P)
 * rounds; rank 0 picks the k largest. Without memory anywhere, no region
 * is listed (the failure travels up the tree; no rank waits for a message
 * that will not come). */
static char *choose_regions(int rank, int n, int k, int *nout, int *len) {
  *nout = 0;
  *len = 0;
  if (k <= 0)
    return NULL;
  MPI_Comm c;
  if (PMPI_Comm_dup(MPI_COMM_WORLD, &c) != MPI_SUCCESS)
    return NULL;
  int mine = 0;
  char *acc = local_regions((size_t)1 << 28, &mine);
  long long have = mine;
  for (int mask = 1; mask < n; mask <<= 1) {
    if (rank & mask) { /* send to the parent, then done */
      int sz = have < 0 ? -1 : (int)have, go = 0;
      PMPI_Send(&sz, 1, MPI_INT, rank - mask, TREE_TAG, c);
      if (sz > 0)
        PMPI_Recv(&go, 1, MPI_INT, rank - mask, TREE_TAG, c, MPI_STATUS_IGNORE);
      if (go)
        PMPI_Send(acc, sz, MPI_CHAR, rank - mask, TREE_TAG, c);
      break;
    }
    if (rank + mask < n) {
      int sz = 0;
      PMPI_Recv(&sz, 1, MPI_INT, rank + mask, TREE_TAG, c, MPI_STATUS_IGNORE);
      merge_child(c, rank + mask, sz, &acc, &have);
    }
  }
  PMPI_Comm_free(&c);
  char *paths = NULL;
  if (rank == 0 && have > 0)
    paths = pick_regions(acc, (size_t)have, k, nout, len);
  if (rank == 0 && (have < 0 || (have > 0 && !paths)))
    BALLAST_WARN("mon: out of memory while merging the ranks' regions; the report lists "
                 "no region");
  free(acc);
  return paths;
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
  double own = 0;
  ballast__own_read(&own, &v[G_OWN_WAIT]);
  v[G_OWN_WORK] = own - v[G_OWN_WAIT];
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
    if (a == MON_GRP_ALL) {
      /* The program's MPI calls: MPI_Init and MPI_Finalize are not in them. */
      v[G_CALLS] = (double)s.ncalls;
      v[G_BYTES] = (double)s.nbytes;
    }
    if (a < MON__NACT) {
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
  /* Ties by name, as the HTML page breaks them. */
  return strcmp(mon__act_names[((const actt_t *)x)->a], mon__act_names[((const actt_t *)y)->a]);
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
  if (sm[G_OWN_WORK] + sm[G_OWN_WAIT] > 0) {
    /* ballast's own time: its work, and its waiting for other ranks inside
     * its collectives (the program's imbalance, not ballast's cost). */
    fprintf(f, "# %-22s %12.6f %12.6f %12.6f %12.6f\n", "ballast work (s)", sm[G_OWN_WORK],
            sm[G_OWN_WORK] / n, mn[G_OWN_WORK], mx[G_OWN_WORK]);
    fprintf(f, "# %-22s %12.6f %12.6f %12.6f %12.6f\n", "ballast wait (s)", sm[G_OWN_WAIT],
            sm[G_OWN_WAIT] / n, mn[G_OWN_WAIT], mx[G_OWN_WAIT]);
  }
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
            "not in the MPI figures above; part of ballast work and wait)\n", sm[G_LCALLS],
            sm[G_LBYTES], sm[G_LTIME]);
    fprintf(f, "# clock      : %s\n", mon__clock_is_tsc() ? "invariant TSC" : "CLOCK_MONOTONIC");
    int nh = mon__papi_nevents();
    fprintf(f, "# hw counters: %s\n", nh ? mon__papi_event_name(0) : "none on this machine");
  }
  mon__report_sections_print(f);
}

/* Rank 0: the paths of the k listed regions (the distribution section's
 * names), NULL entries where out of memory. */
static char **path_list(const char *paths, int k) {
  char **v = calloc((size_t)k + 1, sizeof *v);
  size_t off = 0;
  for (int i = 0; v && i < k; i++) {
    int depth;
    memcpy(&depth, paths + off, sizeof depth);
    off += sizeof depth;
    v[i] = region_path(paths, depth, &off);
  }
  return v;
}

int mon__report(int level) {
  int rank = 0, n = 1;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &n);
  /* full: every region; terse: the BALLAST_REPORT_TOP largest. */
  int k = level == MON__REPORT_FULL ? INT_MAX : mon__cfg.top;

  /* The regions to list, chosen across ranks (a tree); the list's size. */
  int hdr[2] = {0, 0};
  char *paths = choose_regions(rank, n, k, &hdr[0], &hdr[1]);
  PMPI_Bcast(hdr, 2, MPI_INT, 0, MPI_COMM_WORLD);
  k = hdr[0];
  if (rank != 0 && hdr[1] > 0)
    paths = malloc((size_t)hdr[1]);
  size_t len = (size_t)G_N + 3 * P + 4 * (size_t)k;
  double *buf = calloc(len * 4, sizeof *buf);
  int *ids = malloc(((size_t)k + 1) * sizeof *ids);
  int rc = 0, ok = buf && ids && (hdr[1] == 0 || paths), all_ok = 0;
  /* every rank must take part in the same collectives: agree first */
  PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!all_ok) {
    rc = BALLAST_ENOMEM;
    if (rank == 0)
      BALLAST_WARN("mon: out of memory on some rank while building the report; no report");
  } else {
    /* the region paths; every figure, packed, reduced three ways */
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
    if (rank == 0)
      print_report(stdout, level, &r, paths, k);
    if (level == MON__REPORT_FULL) {
      char **names = rank == 0 && k > 0 ? path_list(paths, k) : NULL;
      mon__report_dists(stdout, rank, ids, (const char *const *)names, k);
      for (int i = 0; names && i < k; i++)
        free(names[i]);
      free(names);
    }
    if (rank == 0) {
      fprintf(stdout, "######################################################################\n");
      fflush(stdout);
    }
  }
  free(buf);
  free(ids);
  free(paths);
  return rc;
}
