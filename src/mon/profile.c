/*
 * The job's profile file (JSON), written by rank 0: the format is documented
 * with mon_profile_write() in include/ballast/mon.h.
 *
 * Each rank renders its own part ("ranks_data" entry) as text; one
 * PMPI_Gather of the lengths and one PMPI_Gatherv of the texts bring them to
 * rank 0, after one PMPI_Allreduce for the job's wall time (and rank 0's
 * readiness to receive). MPI's counts and displacements are int: an
 * PMPI_Exscan of the lengths lets every rank see whether its part would end
 * past 2 GiB of the gathered text, and such parts are left out (an error
 * entry names them), as are parts a rank could not render, and all of them
 * when rank 0 cannot hold the text (one PMPI_Bcast says so). All through
 * PMPI and counted nowhere: neither the application's traffic nor the
 * library's (the rule is in mon.h).
 *
 * The same rendering of a rank's part serves the parts a rank writes alone
 * when it dies (fault.c): there the buffer is fixed (pre-allocated, never
 * grown), numbers are formatted by mon__fmt_safe instead of vsnprintf and
 * the partner tables are read without waiting for a lock, so that it may
 * run in a signal handler.
 */
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/common_internal.h"
#include "mon/mon_core.h"

typedef struct {
  char *s;
  size_t len, cap;
  int oom;
  int fixed; /* a signal handler's buffer: never grown, no vsnprintf, no lock */
  int nodist; /* leave the distributions out (a fixed buffer they overflow) */
} sb_t;

static void sb_put(sb_t *b, const char *p, size_t n) {
  if (b->oom)
    return;
  if (b->len + n + 1 > b->cap && b->fixed) {
    b->oom = 1;
    return;
  }
  if (b->len + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 4096;
    while (b->len + n + 1 > cap)
      cap *= 2;
    char *ns = realloc(b->s, cap);
    if (!ns) {
      b->oom = 1;
      return;
    }
    b->s = ns;
    b->cap = cap;
  }
  memcpy(b->s + b->len, p, n);
  b->len += n;
  b->s[b->len] = 0;
}

static void sb_printf(sb_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(sb_t *b, const char *fmt, ...) {
  char tmp[512];
  va_list ap;
  va_start(ap, fmt);
  int n = b->fixed ? mon__fmt_safe(tmp, sizeof tmp, fmt, ap)
                   : vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (b->fixed && n >= (int)sizeof tmp) {
    b->oom = 1;
    return;
  }
  if (n < 0)
    return;
  if ((size_t)n < sizeof tmp) {
    sb_put(b, tmp, (size_t)n);
    return;
  }
  char *big = malloc((size_t)n + 1);
  if (!big) {
    b->oom = 1;
    return;
  }
  va_start(ap, fmt);
  vsnprintf(big, (size_t)n + 1, fmt, ap);
  va_end(ap);
  sb_put(b, big, (size_t)n);
  free(big);
}

#define SB_LIT(b, lit) sb_put((b), (lit), sizeof(lit) - 1)

/* A JSON string literal: quotes, backslashes and control bytes escaped, and
 * every byte that is not part of well-formed UTF-8 replaced by U+FFFD, so
 * the file is JSON whatever a region name holds (the region's id and parent
 * keep distinct names apart even when replacement makes them alike). */
static void sb_strn(sb_t *b, const char *s, size_t len) {
  SB_LIT(b, "\"");
  const unsigned char *p = (const unsigned char *)s, *end = p + len;
  while (p < end) {
    unsigned char c = *p;
    int n = c ? ballast__utf8_seq(p) : 0;
    if (n > 1 && p + n <= end) {
      sb_put(b, (const char *)p, (size_t)n);
      p += n;
      continue;
    }
    if (c == '"' || c == '\\') {
      char e[2] = {'\\', (char)c};
      sb_put(b, e, 2);
    } else if (c < 0x20) {
      sb_printf(b, "\\u%04x", c);
    } else if (c < 0x80) {
      sb_put(b, (const char *)&c, 1);
    } else {
      SB_LIT(b, "\\ufffd");
    }
    p++;
  }
  SB_LIT(b, "\"");
}

static void sb_str(sb_t *b, const char *s) { sb_strn(b, s, strlen(s)); }

/* JSON has no inf/nan. */
static double fin(double x) { return isfinite(x) ? x : 0.0; }

/* How the "dist" members' buckets read (common/dist.h): bucket b holds the
 * durations in ns from lo(b) to hi(b); 64 per power of two, exact below 64. */
#define DIST_FORMAT "{\"unit\":\"ns\",\"sub_bits\":6,\"buckets\":3776,\"rel_err\":0.0078125}"
_Static_assert(BALLAST__DIST_SUB_BITS == 6 && BALLAST__DIST_NBUCKETS == 3776,
               "DIST_FORMAT must describe common/dist.h");

/* A distribution's member (",\"dist\":{...}"): its summary in seconds, the
 * three quantiles and the non-empty buckets as [index, count] pairs (ns,
 * common/dist.h), so that ballast-profile-merge can add them. Left out when
 * empty; in a signal handler's part when gathering the threads'
 * distributions would allocate, or when they would overflow its fixed
 * buffer (the part is then rendered again without them). */
static int put_bucket(unsigned bk, uint64_t n, void *ctx) {
  sb_t *b = ctx;
  sb_printf(b, "%s[%u,%llu]", b->s[b->len - 1] == '[' ? "" : ",", bk, (unsigned long long)n);
  return 0;
}

static void put_dist(sb_t *b, int region, int act) {
  if (b->nodist || (b->fixed && mon__tls_count() > 16))
    return;
  static const double q[3] = {0.5, 0.9, 0.99};
  double p[3];
  mon__diststats_t st;
  int rc = region >= 0 ? mon__region_quantiles(region, q, 3, p, &st)
                       : mon__act_quantiles(act, q, 3, p, &st);
  if (rc != 0)
    return;
  sb_printf(b, ",\"dist\":{\"count\":%llu,\"min\":%.9g,\"max\":%.9g,\"mean\":%.9g,"
            "\"var\":%.9g,\"p50\":%.9g,\"p90\":%.9g,\"p99\":%.9g,\"lost\":%llu,"
            "\"buckets\":[", (unsigned long long)st.count, st.min, st.max, st.mean,
            fin(st.var), p[0], p[1], p[2], (unsigned long long)st.lost);
  if (region >= 0)
    mon__region_dist_foreach(region, put_bucket, b);
  else
    mon__act_dist_foreach(act, put_bucket, b);
  SB_LIT(b, "]}");
}

static void put_acts(sb_t *b, int lib) {
  double sec = mon__tick_seconds();
  int first = 1;
  SB_LIT(b, "{");
  for (int a = 0; a < MON__NACT; a++) {
    uint64_t nc, nb;
    double ts, tmn, tmx;
    if (lib) {
      mon__agg_t l;
      mon__lib_read(a, &l);
      nc = l.ncalls;
      nb = l.nbytes;
      ts = (double)l.tsum * sec;
      tmn = l.ncalls ? (double)l.tmin * sec : 0.0;
      tmx = (double)l.tmax * sec;
    } else {
      mon__actstats_t s = {0, 0, 0.0, INFINITY, 0.0};
      mon__act_read(a, -1, &s);
      nc = s.ncalls;
      nb = s.nbytes;
      ts = s.tsum;
      tmn = s.ncalls ? s.tmin : 0.0;
      tmx = s.tmax;
    }
    if (!nc && !nb)
      continue;
    if (!first)
      SB_LIT(b, ",");
    first = 0;
    sb_str(b, mon__act_names[a]);
    sb_printf(b, ":{\"ncalls\":%llu,\"nbytes\":%llu,\"tsum\":%.9g,\"tmin\":%.9g,\"tmax\":%.9g",
              (unsigned long long)nc, (unsigned long long)nb, fin(ts), fin(tmn), fin(tmx));
    if (!lib && nc)
      put_dist(b, -1, a);
    SB_LIT(b, "}");
  }
  SB_LIT(b, "}");
}

typedef struct {
  sb_t *b;
  int first;
  int fixed; /* v is pre-allocated (cap entries): never grown */
  /* threads may each hold an entry for one partner: merge by sorting later */
  int n, cap;
  struct pe {
    int partner;
    mon__partner_t p;
  } *v;
} pctx_t;

static void collect_partner(int partner, const mon__partner_t *p, void *ctx) {
  pctx_t *c = ctx;
  for (int i = 0; i < c->n; i++)
    if (c->v[i].partner == partner) {
      c->v[i].p.bytes += p->bytes;
      c->v[i].p.msgs += p->msgs;
      c->v[i].p.rbytes += p->rbytes;
      c->v[i].p.rmsgs += p->rmsgs;
      return;
    }
  if (c->n == c->cap && c->fixed)
    return; /* a signal handler's table is full: the rest is left out */
  if (c->n == c->cap) {
    int nc = c->cap ? 2 * c->cap : 16;
    struct pe *nv = realloc(c->v, (size_t)nc * sizeof *nv);
    if (!nv)
      return;
    c->v = nv;
    c->cap = nc;
  }
  c->v[c->n].partner = partner;
  c->v[c->n].p = *p;
  c->n++;
}

static int by_partner(const void *a, const void *b) {
  return ((const struct pe *)a)->partner - ((const struct pe *)b)->partner;
}

/* Seconds in MPI_Init (or MPI_Init_thread): reported apart from mpi_time. */
static double init_seconds(void) {
  double t = 0;
  static const int acts[] = {MON_ACT_MPI_Init, MON_ACT_MPI_Init_thread};
  for (int i = 0; i < 2; i++) {
    mon__actstats_t s = {0, 0, 0.0, INFINITY, 0.0};
    mon__act_read(acts[i], -1, &s);
    t += s.tsum;
  }
  return t;
}

static void sum_partner(int partner, const mon__partner_t *p, void *ctx) {
  (void)partner;
  mon__partner_t *t = ctx;
  t->bytes += p->bytes;
  t->msgs += p->msgs;
  t->rbytes += p->rbytes;
  t->rmsgs += p->rmsgs;
}

/* A region's own MPI figures (calls made while it was the innermost open
 * region): its activities and its point-to-point volumes, what a Cube
 * profile's call paths are built from (ballast-report --cube). */
static void put_region_acts(sb_t *b, int id, const mon__partner_t *vol) {
  SB_LIT(b, ",\"activities\":{");
  int first = 1;
  mon__actstats_t all[MON__NACT];
  int any = mon__act_read_region(id, all) == 1;
  for (int a = 0; any && a < MON__NACT; a++) {
    mon__actstats_t s = all[a];
    if (!s.ncalls && !s.nbytes)
      continue;
    if (!first)
      SB_LIT(b, ",");
    first = 0;
    sb_str(b, mon__act_names[a]);
    sb_printf(b, ":{\"ncalls\":%llu,\"nbytes\":%llu,\"tsum\":%.9g,\"tmin\":%.9g,\"tmax\":%.9g}",
              (unsigned long long)s.ncalls, (unsigned long long)s.nbytes, fin(s.tsum),
              fin(s.ncalls ? s.tmin : 0.0), fin(s.tmax));
  }
  mon__partner_t p = {0};
  if (vol)
    p = vol[id];
  else if (b->fixed)
    mon__partner_foreach_try(id, sum_partner, &p);
  else
    mon__partner_foreach(id, sum_partner, &p);
  sb_printf(b, "},\"sent\":{\"bytes\":%llu,\"msgs\":%llu},\"received\":{\"bytes\":%llu,"
            "\"msgs\":%llu}", (unsigned long long)p.bytes, (unsigned long long)p.msgs,
            (unsigned long long)p.rbytes, (unsigned long long)p.rmsgs);
}

static void put_rank(sb_t *b, int rank) {
  mon__regstats_t r0;
  mon__region_read(0, &r0);
  double own = 0, own_wait = 0;
  ballast__own_read(&own, &own_wait);
  sb_printf(b, "{\"rank\":%d,\"wall\":%.9g,\"mpi_time\":%.9g,\"mpi_init\":%.9g,"
            "\"cputime\":%.9g,\"threads\":%d,\"ballast_work\":%.9g,\"ballast_wait\":%.9g,",
            rank, r0.wtime, r0.mtime, init_seconds(), r0.cputime, mon__tls_count(),
            own - own_wait, own_wait);
  SB_LIT(b, "\"activities\":");
  put_acts(b, 0);
  SB_LIT(b, ",\"library\":");
  put_acts(b, 1);
  SB_LIT(b, ",\"regions\":[");
  int nr = mon__region_count();
  /* every region's volumes in one pass (a signal handler cannot allocate:
   * it reads them region by region) */
  mon__partner_t *vol = b->fixed ? NULL : malloc((size_t)(nr > 0 ? nr : 1) * sizeof *vol);
  if (vol)
    mon__partner_sum_regions(vol, nr);
  for (int id = 0; id < nr; id++) {
    mon__regstats_t s;
    if (mon__region_read(id, &s) != 0)
      continue;
    sb_printf(b, "%s{\"id\":%d,\"name\":", id ? "," : "", id);
    sb_str(b, mon__region_name(id));
    sb_printf(b, ",\"parent\":%d,\"count\":%llu,\"wtime\":%.9g,\"mtime\":%.9g,\"cputime\":%.9g",
              mon__region_parent(id), (unsigned long long)s.count, s.wtime, s.mtime,
              s.cputime);
    if (s.nhwc) {
      SB_LIT(b, ",\"hwc\":[");
      for (int i = 0; i < s.nhwc; i++)
        sb_printf(b, "%s%lld", i ? "," : "", s.hwc[i]);
      SB_LIT(b, "]");
    }
    put_region_acts(b, id, vol);
    if (id && s.count)
      put_dist(b, id, -1);
    SB_LIT(b, "}");
  }
  free(vol);
  SB_LIT(b, "],\"partners\":{");
  /* In a signal handler: a pre-allocated table, and threads whose partner
   * lock is held (perhaps by the interrupted code) are skipped. */
  static struct pe fixed_v[MON__PART_PARTNERS];
  pctx_t c = {b, 1, b->fixed, 0, b->fixed ? MON__PART_PARTNERS : 0,
              b->fixed ? fixed_v : NULL};
  if (b->fixed)
    mon__partner_foreach_try(-1, collect_partner, &c);
  else
    mon__partner_foreach(-1, collect_partner, &c);
  if (c.fixed) {
    /* glibc's qsort may allocate: a shell sort in a signal handler */
    for (int gap = c.n / 2; gap > 0; gap /= 2)
      for (int i = gap; i < c.n; i++)
        for (int j = i; j >= gap && c.v[j - gap].partner > c.v[j].partner; j -= gap) {
          struct pe x = c.v[j];
          c.v[j] = c.v[j - gap];
          c.v[j - gap] = x;
        }
  } else if (c.n > 0) { /* qsort(NULL, 0) is undefined */
    qsort(c.v, (size_t)c.n, sizeof *c.v, by_partner);
  }
  for (int i = 0; i < c.n; i++)
    sb_printf(b, "%s\"%d\":{\"bytes\":%llu,\"msgs\":%llu,\"rbytes\":%llu,\"rmsgs\":%llu}",
              i ? "," : "", c.v[i].partner, (unsigned long long)c.v[i].p.bytes,
              (unsigned long long)c.v[i].p.msgs, (unsigned long long)c.v[i].p.rbytes,
              (unsigned long long)c.v[i].p.rmsgs);
  SB_LIT(b, "}");
  mon__partner_t tot = {0};
  for (int i = 0; i < c.n; i++) {
    tot.bytes += c.v[i].p.bytes;
    tot.msgs += c.v[i].p.msgs;
    tot.rbytes += c.v[i].p.rbytes;
    tot.rmsgs += c.v[i].p.rmsgs;
  }
  if (!c.fixed)
    free(c.v);
  sb_printf(b, ",\"sent\":{\"bytes\":%llu,\"msgs\":%llu},\"received\":{\"bytes\":%llu,"
            "\"msgs\":%llu}", (unsigned long long)tot.bytes, (unsigned long long)tot.msgs,
            (unsigned long long)tot.rbytes, (unsigned long long)tot.rmsgs);
  /* Other modules' members; not in a part written from a signal handler
   * (a fixed buffer: nothing may allocate there). */
  char *ext = b->fixed ? NULL : mon__report_sections_rank_json();
  if (ext)
    sb_put(b, ext, strlen(ext));
  free(ext);
  SB_LIT(b, "}");
}

/* One rank's part on its own (fault.c): the job's header as far as this
 * rank knows it, why it was written, and the rank's entry of ranks_data. */
static void put_part(sb_t *b, int rank, int nranks, const char *reason) {
  SB_LIT(b, "{\"ballast_profile_part\":{\"version\":1,\"command\":");
  sb_str(b, mon__cfg.command);
  sb_printf(b, ",\"rank\":%d,\"ranks\":%d,\"clock\":\"%s\",\"reason\":", rank, nranks,
            mon__clock_is_tsc() ? "tsc" : "monotonic");
  sb_str(b, reason);
  SB_LIT(b, ",\"hwc\":[");
  for (int i = 0; i < mon__papi_nevents(); i++)
    sb_printf(b, "%s\"%s\"", i ? "," : "", mon__papi_event_name(i));
  SB_LIT(b, "],\"dist_format\":" DIST_FORMAT ",\"data\":");
  put_rank(b, rank);
  SB_LIT(b, "}}\n");
}

size_t mon__profile_part_fixed(char *buf, size_t cap, int rank, int nranks,
                               const char *reason) {
  sb_t b = {buf, 0, cap, 0, 1, 0};
  put_part(&b, rank, nranks, reason);
  if (b.oom) {
    /* The distributions made it too big: the part without them. */
    b = (sb_t){buf, 0, cap, 0, 1, 1};
    put_part(&b, rank, nranks, reason);
  }
  return b.oom ? 0 : b.len;
}

char *mon__profile_part(int rank, int nranks, const char *reason, size_t *len) {
  sb_t b = {0};
  put_part(&b, rank, nranks, reason);
  if (b.oom) {
    free(b.s);
    return NULL;
  }
  *len = b.len;
  return b.s;
}

/* Why a rank sends nothing. */
enum { SENT = 0, NO_MEMORY = 1, TOO_BIG = 2 };

/* One write of the profile: this rank's part and, on rank 0, the gathered
 * parts with their lengths, displacements and reasons. */
typedef struct {
  int rank, n;
  sb_t mine;
  int len, why;
  int *info, *lens, *displs; /* rank 0: (length, why) per rank; counts; offsets */
  char *all;                 /* rank 0: the gathered texts */
  double wmax;               /* the job's wall time */
} prof_t;

/* Renders this rank's part and agrees on the job's wall time. Returns
 * non-zero on every rank when rank 0 cannot receive the parts. */
static int prof_start(prof_t *g) {
  put_rank(&g->mine, g->rank);
  g->why = g->mine.oom ? NO_MEMORY : TOO_BIG;
  if (!g->mine.oom && g->mine.len <= (size_t)INT_MAX) {
    g->len = (int)g->mine.len;
    g->why = SENT;
  }
  mon__regstats_t r0;
  mon__region_read(0, &r0);
  if (g->rank == 0) {
    g->info = calloc((size_t)g->n, 2 * sizeof *g->info);
    g->lens = calloc((size_t)g->n, sizeof *g->lens);
    g->displs = calloc((size_t)g->n, sizeof *g->displs);
  }
  /* The job's wall time and, in the same reduction, whether rank 0 can
   * receive: every rank must skip the gathers together if it cannot. */
  double wr[2] = {r0.wtime,
                  g->rank == 0 && (!g->info || !g->lens || !g->displs) ? 1.0 : 0.0},
         red[2];
  PMPI_Allreduce(wr, red, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  g->wmax = red[0];
  return red[1] != 0.0;
}

/* Brings the parts to rank 0 (g->all), leaving out those past 2 GiB and all
 * of them when rank 0 has no room for the text. */
static void prof_gather(prof_t *g, const char *path) {
  /* A part that would end past INT_MAX bytes of the gathered text cannot
   * have an int displacement: every rank decides from the same prefix sum. */
  long long mylen = g->len, before = 0;
  PMPI_Exscan(&mylen, &before, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (g->rank == 0)
    before = 0; /* undefined on rank 0 */
  if (before + g->len > INT_MAX) {
    g->len = 0;
    g->why = TOO_BIG;
  }
  int mine_info[2] = {g->len, g->why};
  PMPI_Gather(mine_info, 2, MPI_INT, g->info, 2, MPI_INT, 0, MPI_COMM_WORLD);
  int ok = 1;
  if (g->rank == 0) {
    int nbig = 0;
    size_t total = 0;
    for (int i = 0; i < g->n; i++) {
      g->lens[i] = g->info[2 * i];
      g->displs[i] = (int)total;
      total += (size_t)g->lens[i];
      nbig += g->info[2 * i + 1] == TOO_BIG;
    }
    if (nbig)
      BALLAST_WARN("mon: the profile would exceed 2 GiB (MPI's int counts); the "
                   "parts of %d rank(s) are left out of %s", nbig, path);
    g->all = malloc(total + 1);
    ok = g->all != NULL;
  }
  /* Without room for the texts on rank 0, nobody sends anything. */
  PMPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (!ok) {
    g->len = 0;
    if (g->rank == 0)
      for (int i = 0; i < g->n; i++)
        g->lens[i] = g->displs[i] = 0;
  }
  PMPI_Gatherv(g->mine.s ? g->mine.s : "", g->len, MPI_CHAR, g->all, g->lens, g->displs,
               MPI_CHAR, 0, MPI_COMM_WORLD);
}

/* The job's header, up to the opening of "ranks_data". 0, or non-zero on error. */
static int prof_put_header(const prof_t *g, FILE *f) {
  sb_t h = {0};
  SB_LIT(&h, "{\"ballast_profile\":{\"version\":1,\"command\":");
  sb_str(&h, mon__cfg.command);
  SB_LIT(&h, ",\"argv\":[");
  for (size_t i = 0; i < mon__cfg.args_len; i += strlen(mon__cfg.argv + i) + 1) {
    if (i)
      SB_LIT(&h, ",");
    sb_str(&h, mon__cfg.argv + i);
  }
  sb_printf(&h, "],\"argv_cut\":%s,\"dist_format\":" DIST_FORMAT ",\"bytes_note\":",
            mon__cfg.args_cut ? "true" : "false");
  sb_str(&h, "activities' nbytes: bytes sent plus bytes received by the rank's calls "
             "(a message counts at both ends; collectives: send plus receive buffers); "
             "sent/received: point-to-point and one-sided messages, empty ones included, "
             "collectives not; partners: bytes/msgs sent to, rbytes/rmsgs received from "
             "that world rank");
  sb_printf(&h, ",\"ranks\":%d,\"wall\":%.9g,\"clock\":\"%s\",\"hwc\":[", g->n, g->wmax,
            mon__clock_is_tsc() ? "tsc" : "monotonic");
  for (int i = 0; i < mon__papi_nevents(); i++)
    sb_printf(&h, "%s\"%s\"", i ? "," : "", mon__papi_event_name(i));
  SB_LIT(&h, "],\"ranks_data\":[\n");
  int werr = h.oom || fwrite(h.s, 1, h.len, f) != h.len;
  free(h.s);
  return werr;
}

/* Rank 0: the whole file, written as PATH.tmp and renamed over PATH once
 * complete, so PATH is never a truncated profile and the ranks' parts can
 * be removed exactly when it is whole. 0, BALLAST_EIO or BALLAST_ENOMEM. */
static int prof_write_file(const prof_t *g, const char *path) {
  char tmp[4200];
  int n = snprintf(tmp, sizeof tmp, "%s.tmp", path);
  FILE *f = g->all && n > 0 && (size_t)n < sizeof tmp ? fopen(tmp, "w") : NULL;
  if (!f) {
    BALLAST_WARN("mon: cannot write the profile to %s", path);
    return g->all ? BALLAST_EIO : BALLAST_ENOMEM;
  }
  int werr = prof_put_header(g, f);
  for (int i = 0; i < g->n && !werr; i++) {
    if (i && fputs(",\n", f) < 0)
      werr = 1;
    if (g->lens[i] == 0) {
      /* That rank's part is not here: say why, validly. */
      const char *e = g->info[2 * i + 1] == TOO_BIG
                          ? "part left out: the profile would exceed 2 GiB"
                          : "out of memory";
      if (fprintf(f, "{\"rank\":%d,\"error\":\"%s\"}", i, e) < 0)
        werr = 1;
    } else if (fwrite(g->all + g->displs[i], 1, (size_t)g->lens[i], f) !=
               (size_t)g->lens[i]) {
      werr = 1;
    }
  }
  if (fputs("\n]", f) < 0)
    werr = 1;
  mon__report_sections_json(f);
  if (fputs("}}\n", f) < 0)
    werr = 1;
  if (fclose(f) != 0)
    werr = 1;
  if (!werr && rename(tmp, path) != 0)
    werr = 1;
  if (werr) {
    BALLAST_WARN("mon: error writing the profile %s", path);
    unlink(tmp);
    return BALLAST_EIO;
  }
  return 0;
}

int mon__profile_write(const char *path) {
  prof_t g = {0};
  g.n = 1;
  PMPI_Comm_rank(MPI_COMM_WORLD, &g.rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &g.n);
  int rc = 0;
  if (prof_start(&g)) {
    if (g.rank == 0) {
      BALLAST_WARN("mon: out of memory on rank 0; no profile written to %s", path);
      rc = BALLAST_ENOMEM;
    }
  } else {
    prof_gather(&g, path);
    if (g.rank == 0)
      rc = prof_write_file(&g, path);
  }
  free(g.mine.s);
  free(g.info);
  free(g.lens);
  free(g.displs);
  free(g.all);
  return rc;
}
