/*
 * ballast-mibfi: an MPI micro-benchmark that writes the fingerprint of a
 * repeated MPI operation (the MPI Micro-Benchmark Fingerprint proposed by
 * runtime-variability, section 4.7), under ballast.
 *
 * Each case (operation x message size) is a repeated region
 * "mibfi:OP:BYTES" (mon_region_repeat): ballast keeps and labels every
 * repetition on every rank. Between repetitions the ranks synchronise
 * (--sync barrier, the default: an MPI_Barrier outside the region) or not
 * (--sync none). Rank 0 gathers every rank's times and labels, takes the
 * largest time of each repetition over the ranks (the published "run time
 * of a repetition"), labels that series with the same classifier, and
 * writes the fingerprint: the setting (operation, size, ranks, nodes and
 * ranks per node, hosts, MPI library and version and its MCA settings from
 * the environment, ballast's version and settings, the benchmark's own),
 * and the series. `ballast-report FP.json -o FP.html` draws it;
 * `ballast-report --compare A.json B.json -o AB.html` compares two.
 *
 * usage: ballast-mibfi [--op allreduce|bcast|reduce|allgather|alltoall|barrier]
 *                      [--bytes N[,N...]] [--reps R] [--sync barrier|none]
 *                      [--algorithm NAME] [-o FP.json]
 */
#include <ctype.h>
#include <getopt.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ballast/mon.h>
#include <ballast/pia.h>

#include "common/json.h"
#include "common/reps.h"

extern char **environ;

typedef struct {
  const char *op, *out, *algorithm;
  long bytes[16];
  int nbytes, reps, sync;
} opts_t;

static const char *const ops[] = {"allreduce", "bcast", "reduce", "allgather", "alltoall",
                                  "barrier"};

/* The command line is parsed before MPI_Init (BALLAST_REPEAT_KEEP must be
 * set first), so every rank parses it; only the launcher's rank 0 (or a
 * process started without a launcher) says what was wrong. */
static int launcher_rank0(void) {
  static const char *const vars[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"};
  for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) {
    const char *v = getenv(vars[i]);
    if (v)
      return strcmp(v, "0") == 0;
  }
  return 1;
}

static int usage(const char *why) {
  if (!launcher_rank0())
    return 2;
  fprintf(stderr,
          "ballast-mibfi: %s\nusage: ballast-mibfi [--op allreduce|bcast|reduce|allgather|"
          "alltoall|barrier] [--bytes N[,N...]] [--reps R] [--sync barrier|none] "
          "[--algorithm NAME] [-o FP.json]\n",
          why);
  return 2;
}

static int parse_bytes(const char *s, opts_t *o) {
  o->nbytes = 0;
  while (*s) {
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || v < 0 || v > (1L << 30) || o->nbytes == 16 || (*end && *end != ','))
      return -1;
    o->bytes[o->nbytes++] = v;
    s = *end ? end + 1 : end;
  }
  return o->nbytes ? 0 : -1;
}

/* 0, or the exit status of a bad command line (every rank parses it). */
static int parse(int argc, char **argv, opts_t *o) {
  static const struct option lo[] = {
      {"op", required_argument, 0, 'p'},   {"bytes", required_argument, 0, 'b'},
      {"reps", required_argument, 0, 'r'}, {"sync", required_argument, 0, 's'},
      {"algorithm", required_argument, 0, 'a'}, {"output", required_argument, 0, 'o'},
      {"help", no_argument, 0, 'h'},       {0, 0, 0, 0}};
  *o = (opts_t){.op = "allreduce", .out = "fingerprint.json", .reps = 1000, .sync = 1,
                .nbytes = 1, .bytes = {1000}};
  int c;
  while ((c = getopt_long(argc, argv, "o:h", lo, NULL)) != -1) {
    if (c == 'p') {
      o->op = NULL;
      for (size_t i = 0; i < sizeof ops / sizeof *ops; i++)
        if (!strcmp(optarg, ops[i]))
          o->op = ops[i];
      if (!o->op)
        return usage("unknown --op");
    } else if (c == 'b') {
      if (parse_bytes(optarg, o))
        return usage("--bytes takes up to 16 sizes 0..2^30, comma-separated");
    } else if (c == 'r') {
      char *end;
      o->reps = (int)strtol(optarg, &end, 10);
      if (*end || o->reps < 2 || o->reps > 10000000)
        return usage("--reps takes 2..10^7");
    } else if (c == 's') {
      if (strcmp(optarg, "barrier") && strcmp(optarg, "none"))
        return usage("--sync takes barrier or none");
      o->sync = !strcmp(optarg, "barrier");
    } else if (c == 'a') {
      o->algorithm = optarg;
    } else if (c == 'o') {
      o->out = optarg;
    } else {
      return usage(c == 'h' ? "help" : "bad option");
    }
  }
  return optind < argc ? usage("unexpected argument") : 0;
}

/* One call of the operation on n bytes. */
static void op_once(const char *op, char *a, char *b, long n, int size) {
  if (!strcmp(op, "allreduce"))
    MPI_Allreduce(a, b, (int)n, MPI_BYTE, MPI_BOR, MPI_COMM_WORLD);
  else if (!strcmp(op, "reduce"))
    MPI_Reduce(a, b, (int)n, MPI_BYTE, MPI_BOR, 0, MPI_COMM_WORLD);
  else if (!strcmp(op, "bcast"))
    MPI_Bcast(a, (int)n, MPI_BYTE, 0, MPI_COMM_WORLD);
  else if (!strcmp(op, "allgather"))
    MPI_Allgather(a, (int)n, MPI_BYTE, b, (int)n, MPI_BYTE, MPI_COMM_WORLD);
  else if (!strcmp(op, "alltoall"))
    MPI_Alltoall(a, (int)(n / size), MPI_BYTE, b, (int)(n / size), MPI_BYTE, MPI_COMM_WORLD);
  else
    MPI_Barrier(MPI_COMM_WORLD);
}

/* The launcher's own variables, which say nothing of MPI's behaviour. */
static int launcher_var(const char *e) {
  static const char *const skip[] = {"OMPI_MCA_orte_", "OMPI_MCA_ess", "OMPI_MCA_pmix",
                                     "OMPI_MCA_initial_wdir", "OMPI_MCA_shmem_RUNTIME"};
  for (size_t i = 0; i < sizeof skip / sizeof *skip; i++)
    if (!strncmp(e, skip[i], strlen(skip[i])))
      return 1;
  return 0;
}

static void json_env(FILE *f, const char *prefix) {
  int k = 0;
  size_t pl = strlen(prefix);
  fputc('{', f);
  for (char **e = environ; *e; e++) {
    const char *eq = strchr(*e, '=');
    if (!eq || strncmp(*e, prefix, pl) || launcher_var(*e))
      continue;
    char name[256];
    size_t nl = (size_t)(eq - *e) < sizeof name - 1 ? (size_t)(eq - *e) : sizeof name - 1;
    memcpy(name, *e, nl);
    name[nl] = 0;
    fputs(k++ ? "," : "", f);
    ballast__json_str(f, name);
    fputc(':', f);
    ballast__json_str(f, eq + 1);
  }
  fputc('}', f);
}

/* The hosts of the ranks (rank 0: all of them, in rank order). */
static char *hosts(int rank, int size) {
  char me[MPI_MAX_PROCESSOR_NAME] = "";
  int len;
  MPI_Get_processor_name(me, &len);
  char *all = rank == 0 ? calloc((size_t)size, MPI_MAX_PROCESSOR_NAME) : NULL;
  MPI_Gather(me, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0,
             MPI_COMM_WORLD);
  return all;
}

static void put_setting(FILE *f, const opts_t *o, const char *hostv, int size) {
  char lib[MPI_MAX_LIBRARY_VERSION_STRING] = "";
  int len, nodes = 0;
  MPI_Get_library_version(lib, &len);
  for (char *p = lib; *p; p++)
    if (*p == '\n')
      *p = ' ';
  fprintf(f, "\"setting\":{\"operation\":\"MPI_%c%s\",\"ranks\":%d,\"sync\":\"%s\","
             "\"reps\":%d,\"algorithm\":",
          toupper((unsigned char)o->op[0]), o->op + 1, size, o->sync ? "barrier" : "none",
          o->reps);
  ballast__json_str(f, o->algorithm ? o->algorithm : "");
  fprintf(f, ",\"hosts\":[");
  for (int r = 0; r < size; r++) {
    const char *h = hostv + (size_t)r * MPI_MAX_PROCESSOR_NAME;
    int seen = 0;
    for (int q = 0; q < r && !seen; q++)
      seen = !strcmp(h, hostv + (size_t)q * MPI_MAX_PROCESSOR_NAME);
    nodes += !seen;
    fputs(r ? "," : "", f);
    ballast__json_str(f, h);
  }
  fprintf(f, "],\"nodes\":%d,\"ranks_per_node\":%.3g,\"mpi_library\":", nodes,
          (double)size / nodes);
  ballast__json_str(f, lib);
  fprintf(f, ",\"mpi_settings\":");
  json_env(f, "OMPI_MCA_");
  fprintf(f, ",\"ballast_version\":\"%s\",\"ballast_settings\":", ballast_version());
  json_env(f, "BALLAST_");
  time_t now = time(NULL);
  char date[64];
  strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
  fprintf(f, ",\"date\":\"%s\"}", date);
}

/* Rank 0 writes one case: every rank's times and labels, and the largest
 * time of each repetition over the ranks with its labels. */
static void put_case(FILE *f, const opts_t *o, long bytes, const double *t,
                     const char *lab, int size) {
  int n = o->reps;
  fprintf(f, "{\"bytes\":%ld,\"ranks\":[", bytes);
  for (int r = 0; r < size; r++) {
    fprintf(f, "%s{\"labels\":\"%.*s\",\"wtime\":[", r ? "," : "", n, lab + (size_t)r * n);
    for (int i = 0; i < n; i++)
      fprintf(f, "%s%.9g", i ? "," : "", t[(size_t)r * n + i]);
    fprintf(f, "]}");
  }
  ballast__reps_t c;
  ballast__reps_init(&c, NULL);
  fprintf(f, "],\"max\":{\"wtime\":[");
  char *ml = malloc((size_t)n + 1);
  for (int i = 0; i < n; i++) {
    double m = 0;
    for (int r = 0; r < size; r++)
      m = t[(size_t)r * n + i] > m ? t[(size_t)r * n + i] : m;
    int l = ballast__reps_add(&c, m);
    if (ml)
      ml[i] = "FWOG"[l < 0 ? 2 : l & 3];
    fprintf(f, "%s%.9g", i ? "," : "", m);
  }
  fprintf(f, "],\"labels\":\"%.*s\",\"warmup_end\":%lld}}", ml ? n : 0, ml ? ml : "",
          c.warm_end);
  free(ml);
}

/* Runs one case; rank 0 gets every rank's times (seconds) and labels. */
static int run_case(const opts_t *o, long bytes, int rank, int size, double **t, char **lab) {
  char name[64];
  snprintf(name, sizeof name, "mibfi:%s:%ld", o->op, bytes);
  mon_region_repeat(name);
  long cap = bytes > 0 ? bytes : 1;
  char *a = calloc((size_t)cap, 1), *b = calloc((size_t)cap * (size_t)size, 1);
  double *mine = malloc((size_t)o->reps * sizeof *mine);
  char *ml = malloc((size_t)o->reps);
  int ok = a && b && mine && ml;
  for (int i = 0; ok && i < o->reps; i++) {
    if (o->sync)
      MPI_Barrier(MPI_COMM_WORLD);
    mon_region_begin(name);
    op_once(o->op, a, b, bytes, size);
    mon_region_end(name);
  }
  pia_regid_t id = pia_region_find_by_path(name);
  for (int i = 0; ok && i < o->reps; i++) {
    pia_rep_t r;
    ok = pia_region_rep_get(id, i, &r) == 0;
    mine[i] = ok ? r.wtime : 0;
    ml[i] = ok ? "FWOG"[r.label & 3] : '?';
  }
  int all_ok = 0;
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (rank == 0) {
    *t = all_ok ? malloc((size_t)o->reps * (size_t)size * sizeof **t) : NULL;
    *lab = all_ok ? malloc((size_t)o->reps * (size_t)size) : NULL;
  }
  if (all_ok) {
    MPI_Gather(mine, o->reps, MPI_DOUBLE, rank == 0 ? *t : NULL, o->reps, MPI_DOUBLE, 0,
               MPI_COMM_WORLD);
    MPI_Gather(ml, o->reps, MPI_CHAR, rank == 0 ? *lab : NULL, o->reps, MPI_CHAR, 0,
               MPI_COMM_WORLD);
  }
  free(a);
  free(b);
  free(mine);
  free(ml);
  return all_ok ? 0 : -1;
}

int main(int argc, char **argv) {
  opts_t o;
  int rc = parse(argc, argv, &o);
  if (rc)
    return rc;
  /* Keep every repetition (the series is the fingerprint). */
  char keep[32];
  snprintf(keep, sizeof keep, "%d", o.reps);
  setenv("BALLAST_REPEAT_KEEP", keep, 0);
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  char *hostv = hosts(rank, size);
  FILE *f = rank == 0 ? fopen(o.out, "w") : NULL;
  int bad = 0;
  if (rank == 0 && !f) {
    fprintf(stderr, "ballast-mibfi: cannot write %s\n", o.out);
    bad = 1; /* rank 0's status: mpiexec's is non-zero */
  }
  if (f) {
    fprintf(f, "{\"ballast_fingerprint\":{\"version\":1,");
    put_setting(f, &o, hostv, size);
    fprintf(f, ",\"cases\":[");
  }
  for (int c = 0; c < o.nbytes; c++) {
    double *t = NULL;
    char *lab = NULL;
    if (run_case(&o, o.bytes[c], rank, size, &t, &lab) != 0) {
      bad = 1;
      if (rank == 0)
        fprintf(stderr, "ballast-mibfi: the repetitions of %s at %ld bytes were not kept "
                        "(monitoring off, or out of memory)\n", o.op, o.bytes[c]);
    } else if (f) {
      fputs(c ? "," : "", f);
      put_case(f, &o, o.bytes[c], t, lab, size);
    }
    free(t);
    free(lab);
  }
  if (f) {
    fprintf(f, "]}}\n");
    if (fclose(f) != 0) {
      fprintf(stderr, "ballast-mibfi: error writing %s\n", o.out);
      bad = 1;
    } else {
      printf("ballast-mibfi: %s of %d size(s), %d repetitions on %d ranks: %s\n", o.op,
             o.nbytes, o.reps, size, o.out);
    }
  }
  free(hostv);
  MPI_Finalize();
  return bad;
}
