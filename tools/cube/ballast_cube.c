/* ballast-cube: a parallel Cube4 profile server (issue 31).
 *
 *   mpiexec -n 2 ballast-cube -s ballast profile.cubex < queries
 *   ballast-cube -e "incl time main" -e "top 5 time excl" profile.cubex
 *   ballast-cube -q script A.cubex B.cubex          (diff queries: A - B)
 *
 * Every rank reads the metadata and the rows of the call paths it owns;
 * rank 0 reads the queries (a script, -e, or standard input), hands each
 * line to every rank and prints the results. See README.md, "ballast-cube". */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include <ballast/common.h>

#include "cube_query.h"
#include "cube_server.h"

static void usage(FILE *f) {
  fprintf(f,
    "usage: ballast-cube [options] PROFILE.cubex [OTHER.cubex]\n"
    "  -s, --strategy S   distribution of the call tree over the ranks: plain,\n"
    "                     roundrobin, random, chain (deepest chain), ballast\n"
    "                     (default ballast)\n"
    "      --seed N       seed of random and of ballast's mapping (default 1)\n"
    "  -q, --query FILE   read queries from FILE ('-': standard input, the default)\n"
    "  -e, --eval QUERY   run QUERY (repeatable; then no standard input)\n"
    "      --time         print the wall time of opening and of each query\n"
    "      --info         print the profile's size and the distribution first\n"
    "queries (one per line, '#' starts a comment):\n"
    "  incl|excl METRIC PATH [@LOCS]        value over all or the listed locations\n"
    "  locs METRIC PATH [incl|excl] [@LOCS] one value per location\n"
    "  top K METRIC [incl|excl]             the K call paths with the largest values\n"
    "  diff incl|excl|locs METRIC PATH ...  A, B and A - B (needs OTHER.cubex)\n"
    "  mem                                  resident memory (VmHWM) and rows per rank\n"
    "  rebalance                            remap the call tree by the queries' measured time\n"
    "PATH: region names from the root joined by '/', or id:N (cnode id); quote\n"
    "names with blanks. LOCS: location ids, e.g. @0,4-7.\n");
}

typedef struct {
  const char *prof[2];
  int nprof;
  dist_t dist;
  unsigned seed;
  const char *script;
  const char **eval;
  int neval;
  int time, info;
} opts_t;

static int parse_opts(int argc, char **argv, opts_t *o) {
  o->dist = DIST_BALLAST;
  o->seed = 1;
  o->eval = calloc((size_t)argc, sizeof *o->eval);
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    int more = i + 1 < argc;
    if ((!strcmp(a, "-s") || !strcmp(a, "--strategy")) && more) {
      if (dist_parse(argv[++i], &o->dist)) {
        fprintf(stderr, "ballast-cube: unknown strategy '%s'\n", argv[i]);
        return -1;
      }
    } else if (!strcmp(a, "--seed") && more) {
      char *end;
      unsigned long v = strtoul(argv[++i], &end, 10);
      if (*end || !argv[i][0] || v > 0xffffffffu) {
        fprintf(stderr, "ballast-cube: --seed '%s': expected an unsigned number\n", argv[i]);
        return -1;
      }
      o->seed = (unsigned)v;
    } else if ((!strcmp(a, "-q") || !strcmp(a, "--query")) && more) {
      o->script = argv[++i];
    } else if ((!strcmp(a, "-e") || !strcmp(a, "--eval")) && more) {
      o->eval[o->neval++] = argv[++i];
    } else if (!strcmp(a, "--time")) {
      o->time = 1;
    } else if (!strcmp(a, "--info")) {
      o->info = 1;
    } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      usage(stdout);
      return 1;
    } else if (a[0] == '-' && a[1]) {
      fprintf(stderr, "ballast-cube: unknown option or missing value: %s\n", a);
      return -1;
    } else if (o->nprof < 2) {
      o->prof[o->nprof++] = a;
    } else {
      fprintf(stderr, "ballast-cube: at most two profiles\n");
      return -1;
    }
  }
  if (o->nprof == 0) {
    usage(stderr);
    return -1;
  }
  return 0;
}

/* Rank 0's next query line (NULL at the end). */
static char *next_line(const opts_t *o, FILE *in, int *ei, char **buf, size_t *cap) {
  if (o->neval) {
    if (*ei >= o->neval) return NULL;
    size_t n = strlen(o->eval[*ei]);
    if (n + 1 > *cap) {
      free(*buf);
      *cap = n + 1;
      *buf = malloc(*cap);
      if (!*buf) return NULL;
    }
    memcpy(*buf, o->eval[(*ei)++], n + 1);
    return *buf;
  }
  return getline(buf, cap, in) < 0 ? NULL : *buf;
}

static void print_info(srv_t *s, const opts_t *o) {
  long n = (long)s->nown, *all = s->rank == 0 ? malloc((size_t)s->size * sizeof *all) : NULL;
  MPI_Gather(&n, 1, MPI_LONG, all, 1, MPI_LONG, 0, s->comm);
  if (s->rank == 0) {
    printf("info version %s cnodes %ld locations %ld metrics %d ranks %d strategy %s\n",
           s->c->version, (long)s->c->ncnode, (long)s->c->nloc, s->c->nmetric, s->size,
           dist_name(o->dist));
    for (int r = 0; all && r < s->size; r++) printf("info rank %d owns %ld cnodes\n", r, all[r]);
  }
  free(all);
}

/* Rank 0 reads and broadcasts each line; every rank runs it. */
static int serve(srv_t *a, srv_t *b, const opts_t *o, int rank) {
  FILE *in = stdin;
  if (rank == 0 && !o->neval && o->script && strcmp(o->script, "-") != 0 &&
      !(in = fopen(o->script, "r"))) {
    perror(o->script);
    in = NULL;
  }
  int failed = 0, ei = 0;
  char *buf = NULL;
  size_t cap = 0;
  for (;;) {
    long len = -1;
    char *line = NULL;
    if (rank == 0 && in && (line = next_line(o, in, &ei, &buf, &cap))) len = (long)strlen(line);
    MPI_Bcast(&len, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    if (len < 0) break;
    if (rank != 0) {
      if ((size_t)len + 1 > cap) {
        free(buf);
        buf = malloc((size_t)len + 1);
        cap = (size_t)len + 1;
      }
      line = buf;
    }
    MPI_Bcast(line, (int)len + 1, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (rank == 0) printf("> %s%s", line, len && line[len - 1] == '\n' ? "" : "\n");
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    int rc = query_run(a, b, line, stdout);
    if (rc < 0) { failed = 1; break; }
    failed |= rc;
    if (o->time && rank == 0) printf("time %.6f\n", MPI_Wtime() - t0);
    if (rank == 0) fflush(stdout);
  }
  if (rank == 0 && in && in != stdin) fclose(in);
  if (!in) failed = 1;
  free(buf);
  return failed;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  opts_t o;
  memset(&o, 0, sizeof o);
  int rc = parse_opts(argc, argv, &o);
  if (rc) {
    free(o.eval);
    MPI_Finalize();
    return rc > 0 ? 0 : 2;
  }
  srv_t *s[2] = {NULL, NULL};
  char err[CUBE_ERRLEN];
  double t0 = MPI_Wtime();
  for (int i = 0; i < o.nprof && !rc; i++) {
    rc = srv_open(o.prof[i], o.dist, o.seed, MPI_COMM_WORLD, &s[i], err, sizeof err);
    if (rc && rank == 0) fprintf(stderr, "ballast-cube: %s\n", err);
  }
  if (!rc) {
    double topen = MPI_Wtime() - t0, tmax;
    MPI_Reduce(&topen, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (o.time && rank == 0) printf("open_time %.6f\n", tmax);
    if (o.info) print_info(s[0], &o);
    rc = serve(s[0], s[1], &o, rank);
  }
  srv_close(s[1]);
  srv_close(s[0]);
  free(o.eval);
  MPI_Finalize();
  return rc ? 1 : 0;
}
