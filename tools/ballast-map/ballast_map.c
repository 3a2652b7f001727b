/* ballast-map: maps a task graph onto a (possibly simulated) machine with
 * each of ballast's strategies and prints the quality figures side by side,
 * or one JSON object per strategy with --json.
 *
 *   ballast-map --stencil 27:64 --nodes 32 --node-topo "pack:2 core:8"
 *   ballast-map --grf app.grf --arch torus.tgt --node-topo node.xml --json
 *
 * Runs without MPI (the simulation needs none). */
#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <ballast/rta_map.h>

static void usage(FILE *f) {
  fprintf(f,
    "usage: ballast-map GRAPH MACHINE [options]\n"
    "graph (one of):\n"
    "  --grf FILE             SCOTCH .grf task graph (vertex weight = work,\n"
    "                         edge weight = bytes)\n"
    "  --stencil P:N[xNYxNZ]  3D P-point stencil, P = 7 or 27 (face/edge/corner\n"
    "                         bytes 4/2/1 for 27, 4 for 7)\n"
    "  --md NX[xNYxNZ]        molecular-dynamics linked cells (periodic, 26\n"
    "                         neighbours); --md-ppc P particles per cell (100),\n"
    "                         --md-ratio R density ratio along x (1 = uniform)\n"
    "machine:\n"
    "  --nodes N              number of nodes (default: the arch's size, else 1)\n"
    "  --node-topo T          hwloc synthetic string (\"pack:2 core:8\") or XML\n"
    "                         file of one node (default \"pack:2 core:8\")\n"
    "  --arch FILE            SCOTCH target architecture of the network between\n"
    "                         nodes (cmplt, tleaf, torus3D, ...; default: complete)\n"
    "  --internode-cost C     cost of one inter-node hop (default 16)\n"
    "  --level-costs a,b,..   costs of the node's levels, top down (default 6,1)\n"
    "options:\n"
    "  --strategies LIST      comma-separated of twophase,tleaf,block,roundrobin,\n"
    "                         random (default all)\n"
    "  --balrat B             total imbalance allowed (0.03)\n"
    "  --seed S               seed (1)\n"
    "  --json                 one JSON object per strategy, one per line\n"
    "  --print-hw             print the machine model first\n"
    "  --save-grf FILE        write the task graph as .grf and continue (weights\n"
    "                         must be integers: written exactly or refused)\n");
}

/* Every option value is checked whole: a number with trailing junk, out of
 * its range, not finite or empty is an error naming the option and the
 * value, never a silent default. */
static int bad(const char *opt, const char *val, const char *want) {
  fprintf(stderr, "ballast-map: %s '%s': expected %s\n", opt, val, want);
  return -1;
}

static int opt_int(const char *opt, const char *v, long long lo, long long hi,
                   long long *out) {
  char *end;
  errno = 0;
  long long x = strtoll(v, &end, 10);
  if (end == v || *end || errno || x < lo || x > hi) {
    char want[96];
    snprintf(want, sizeof want, "an integer in %lld..%lld", lo, hi);
    return bad(opt, v, want);
  }
  *out = x;
  return 0;
}

/* A finite number above \a lo (or at least \a lo when \a lo_ok) and at most
 * \a hi. */
static int opt_num(const char *opt, const char *v, double lo, int lo_ok,
                   double hi, const char *want, double *out) {
  char *end;
  errno = 0;
  double x = strtod(v, &end);
  if (end == v || *end || errno || !isfinite(x) || x < lo || (!lo_ok && x == lo) ||
      x > hi)
    return bad(opt, v, want);
  *out = x;
  return 0;
}

static int parse_dims(const char *s, long long d[3]) {
  char *end;
  errno = 0;
  d[0] = strtoll(s, &end, 10);
  if (errno || end == s || d[0] < 1)
    return -1;
  if (*end == 0) {
    d[1] = d[2] = d[0];
    return 0;
  }
  for (int i = 1; i < 3; i++) {
    if (*end != 'x')
      return -1;
    s = end + 1;
    d[i] = strtoll(s, &end, 10);
    if (errno || end == s || d[i] < 1)
      return -1;
  }
  return *end ? -1 : 0;
}

/* "a,b,c": up to 16 numbers > 0, none empty. */
static int parse_costs(const char *opt, const char *v, double *costs, int *n) {
  const char *want = "up to 16 numbers > 0 separated by commas";
  const char *p = v;
  *n = 0;
  for (;;) {
    char *end;
    errno = 0;
    double x = strtod(p, &end);
    if (end == p || errno || !isfinite(x) || !(x > 0) || *n == 16 ||
        (*end && *end != ','))
      return bad(opt, v, want);
    costs[(*n)++] = x;
    if (!*end)
      return 0;
    p = end + 1;
  }
}

/* Writes the graph to \a path, the close included: a full disk shows only
 * there. A partial regular file is removed (never a device such as
 * /dev/full). */
static int save_grf(rta_graph_t *g, const char *path) {
  FILE *f = fopen(path, "w");
  if (!f) {
    fprintf(stderr, "ballast-map: --save-grf '%s': cannot open: %s\n", path,
            strerror(errno));
    return 1;
  }
  int rc = rta_graph_save_grf(g, f);
  int err = rc == BALLAST_EIO ? errno : 0;
  if (fclose(f) != 0 && !rc) {
    rc = BALLAST_EIO;
    err = errno;
  }
  if (rc) {
    fprintf(stderr, "ballast-map: --save-grf '%s': cannot write: %s%s%s\n",
            path, ballast_strerror(rc), err ? ": " : "", err ? strerror(err) : "");
    struct stat st;
    if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
      remove(path);
  }
  return rc ? 1 : 0;
}

static double peak_rss_mib(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)ru.ru_maxrss / 1024.0;
}

typedef struct {
  const char *grf, *stencil, *md, *topo, *arch, *strategies, *save;
  long long nodes;
  double icost, balrat, ppc, ratio;
  double costs[16];
  int ncosts;
  unsigned seed;
  int json, print_hw;
} args_t;

/* One option with its value: 1 if known, 0 if not, -1 on a bad value. */
static int parse_opt(args_t *o, const char *a, const char *v) {
  long long x;
  if (!strcmp(a, "--grf") || !strcmp(a, "--stencil") || !strcmp(a, "--md") ||
      !strcmp(a, "--node-topo") || !strcmp(a, "--arch") ||
      !strcmp(a, "--strategies") || !strcmp(a, "--save-grf")) {
    if (!*v)
      return bad(a, v, "a non-empty value");
    const char **dst = !strcmp(a, "--grf") ? &o->grf
                     : !strcmp(a, "--stencil") ? &o->stencil
                     : !strcmp(a, "--md") ? &o->md
                     : !strcmp(a, "--node-topo") ? &o->topo
                     : !strcmp(a, "--arch") ? &o->arch
                     : !strcmp(a, "--strategies") ? &o->strategies : &o->save;
    *dst = v;
    return 1;
  }
  if (!strcmp(a, "--md-ppc"))
    return opt_num(a, v, 0, 0, 1e12, "a number of particles > 0", &o->ppc) ? -1 : 1;
  if (!strcmp(a, "--md-ratio"))
    return opt_num(a, v, 0, 0, 1e6, "a density ratio > 0", &o->ratio) ? -1 : 1;
  if (!strcmp(a, "--nodes"))
    return opt_int(a, v, 1, INT32_MAX, &o->nodes) ? -1 : 1;
  if (!strcmp(a, "--internode-cost"))
    return opt_num(a, v, 0, 0, 1e12, "a cost > 0", &o->icost) ? -1 : 1;
  if (!strcmp(a, "--level-costs"))
    return parse_costs(a, v, o->costs, &o->ncosts) ? -1 : 1;
  if (!strcmp(a, "--balrat"))
    return opt_num(a, v, 0, 0, 1, "an imbalance > 0 and <= 1 (e.g. 0.03)",
                   &o->balrat) ? -1 : 1;
  if (!strcmp(a, "--seed")) {
    if (opt_int(a, v, 0, UINT_MAX, &x))
      return -1;
    o->seed = (unsigned)x;
    return 1;
  }
  return 0;
}

/* 0, or the exit code: 0 after --help, 2 on a bad command line. */
static int parse_args(int argc, char **argv, args_t *o, int *done) {
  *done = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      usage(stdout);
      *done = 1;
      return 0;
    }
    if (!strcmp(a, "--json")) {
      o->json = 1;
      continue;
    }
    if (!strcmp(a, "--print-hw")) {
      o->print_hw = 1;
      continue;
    }
    int rc = i + 1 < argc ? parse_opt(o, a, argv[i + 1]) : 0;
    if (rc < 0)
      return 2;
    if (rc == 0) {
      fprintf(stderr, "ballast-map: unknown or incomplete option '%s'\n", a);
      usage(stderr);
      return 2;
    }
    i++;
  }
  if (!!o->grf + !!o->stencil + !!o->md != 1) {
    fprintf(stderr, "ballast-map: give exactly one of --grf, --stencil, --md\n");
    usage(stderr);
    return 2;
  }
  return 0;
}

int main(int argc, char **argv) {
  args_t o = {.topo = "pack:2 core:8", .icost = 16, .balrat = 0.03, .ppc = 100,
              .ratio = 1, .seed = 1};
  int done, rc = parse_args(argc, argv, &o, &done);
  if (rc || done)
    return rc;
  const char *grf = o.grf, *stencil = o.stencil, *md = o.md, *topo = o.topo;
  const char *arch = o.arch, *strategies = o.strategies, *save = o.save;
  long long nodes = o.nodes;
  double balrat = o.balrat;
  unsigned seed = o.seed;
  int json = o.json, print_hw = o.print_hw;
  /* A mapping tool allocates and frees big arrays over and over: keep freed
   * memory instead of returning it to the kernel (page faults cost ~20%). */
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);

  rta_graph_t *g = NULL;
  long long d[3];
  if (grf) {
    struct stat st;
    if (stat(grf, &st) == 0 && S_ISDIR(st.st_mode)) {
      fprintf(stderr, "ballast-map: --grf '%s': is a directory, not a .grf "
              "file\n", grf);
      return 2;
    }
    FILE *f = fopen(grf, "r");
    if (!f) {
      fprintf(stderr, "ballast-map: cannot open '%s': %s\n", grf, strerror(errno));
      return 1;
    }
    rc = rta_graph_load_grf(f, grf, &g);
    fclose(f);
    if (rc) {
      fprintf(stderr, "ballast-map: cannot read the graph '%s': %s\n", grf,
              ballast_strerror(rc));
      return 1;
    }
  } else if (stencil) {
    long pts = 0;
    char *colon = NULL;
    pts = strtol(stencil, &colon, 10);
    if (*colon != ':')
      colon = NULL;
    if (!colon || (pts != 7 && pts != 27) || parse_dims(colon + 1, d)) {
      fprintf(stderr, "ballast-map: --stencil wants P:N or P:NXxNYxNZ with P 7 "
              "or 27, got '%s'\n", stencil);
      return 2;
    }
    rc = rta_graph_stencil3d(d[0], d[1], d[2], pts, 4.0, 0.0, &g);
    if (rc) {
      fprintf(stderr, "ballast-map: cannot build the stencil: %s\n",
              ballast_strerror(rc));
      return 1;
    }
  } else {
    if (parse_dims(md, d)) {
      fprintf(stderr, "ballast-map: --md wants N or NXxNYxNZ, got '%s'\n", md);
      return 2;
    }
    rc = rta_graph_md_cells(d[0], d[1], d[2], o.ppc, o.ratio, 4.0, seed, &g);
    if (rc) {
      fprintf(stderr, "ballast-map: cannot build the MD cell graph: %s\n",
              ballast_strerror(rc));
      return 1;
    }
  }
  if (save && (rc = save_grf(g, save))) {
    rta_graph_destroy(g);
    return 1;
  }

  rta_hw_options_t ho;
  rta_hw_options_init(&ho);
  ho.internode_cost = o.icost;
  if (o.ncosts) {
    ho.level_costs = o.costs;
    ho.nlevel_costs = o.ncosts;
  }
  rta_hw_t *hw = NULL;
  if (!arch && nodes < 1)
    nodes = 1; /* no --nodes and no architecture to size the machine */
  rc = rta_hw_create_sim(nodes, topo, arch, &ho, &hw);
  if (rc) {
    fprintf(stderr, "ballast-map: cannot build the machine (node '%s', network "
            "'%s'): %s\n", topo, arch ? arch : "complete graph",
            ballast_strerror(rc));
    rta_graph_destroy(g);
    return 1;
  }
  if (print_hw)
    rta_hw_print(hw, json ? stderr : stdout);

  int use[RTA_MAP_NSTRATEGIES] = {0};
  if (!strategies) {
    for (int s = 0; s < RTA_MAP_NSTRATEGIES; s++)
      use[s] = 1;
  } else {
    char *buf = strdup(strategies), *t = buf, *next;
    if (!buf) {
      fprintf(stderr, "ballast-map: out of memory\n");
      rta_hw_destroy(hw);
      rta_graph_destroy(g);
      return 1;
    }
    for (; t; t = next) {
      rta_strategy_t s;
      next = strchr(t, ',');
      if (next)
        *next++ = 0;
      if (strcmp(t, "all") == 0) {
        for (int k = 0; k < RTA_MAP_NSTRATEGIES; k++)
          use[k] = 1;
      } else if (rta_strategy_parse(t, &s) == 0) {
        use[s] = 1;
      } else {
        fprintf(stderr, "ballast-map: --strategies '%s': unknown strategy "
                "'%s' (twophase, tleaf, block, roundrobin, random, all)\n",
                strategies, t);
        free(buf);
        rta_hw_destroy(hw);
        rta_graph_destroy(g);
        return 2;
      }
    }
    free(buf);
  }

  int64_t n = rta_graph_nvert(g);
  int64_t *slot = malloc((size_t)n * sizeof *slot);
  if (!slot) {
    fprintf(stderr, "ballast-map: out of memory\n");
    return 1;
  }
  rta_map_options_t mo;
  rta_map_options_init(&mo);
  mo.balrat = balrat;
  mo.seed = seed;
  if (!json)
    printf("%lld tasks, %lld edges onto %d nodes, %d slots\n"
           "%-10s %9s %9s %12s %12s %12s %8s %7s %7s %7s\n", (long long)n,
           (long long)rta_graph_nedges(g), rta_hw_nnodes(hw), rta_hw_nslots(hw),
           "strategy", "maxavg", "maxavg_nd", "edge_cut", "hop_bytes",
           "internode", "seconds", "phase1", "phase2", "metrics");
  int failed = 0;
  for (int s = 0; s < RTA_MAP_NSTRATEGIES; s++) {
    if (!use[s])
      continue;
    rta_map_quality_t q;
    rc = rta_map_graph_ex(g, hw, (rta_strategy_t)s, NULL, &mo, slot, &q);
    if (rc) {
      fprintf(stderr, "ballast-map: strategy %s failed: %s\n",
              rta_strategy_name((rta_strategy_t)s), ballast_strerror(rc));
      failed = 1;
      continue;
    }
    if (json)
      printf("{\"strategy\":\"%s\",\"tasks\":%lld,\"nodes\":%d,\"slots\":%d,"
             "\"max_avg_load\":%.6f,\"max_avg_load_node\":%.6f,"
             "\"edge_cut\":%.17g,\"hop_bytes\":%.17g,\"internode_volume\":%.17g,"
             "\"seconds\":%.6f,\"seconds_build\":%.6f,\"seconds_phase1\":%.6f,"
             "\"seconds_phase2\":%.6f,\"seconds_metrics\":%.6f,"
             "\"peak_rss_mib\":%.1f}\n",
             rta_strategy_name((rta_strategy_t)s), (long long)n,
             rta_hw_nnodes(hw), rta_hw_nslots(hw), q.max_avg_load_core,
             q.max_avg_load_node, q.edge_cut, q.hop_bytes, q.internode_volume,
             q.seconds, q.seconds_build, q.seconds_phase1, q.seconds_phase2,
             q.seconds_metrics, peak_rss_mib());
    else
      printf("%-10s %9.4f %9.4f %12.6g %12.6g %12.6g %8.3f %7.3f %7.3f %7.3f\n",
             rta_strategy_name((rta_strategy_t)s), q.max_avg_load_core,
             q.max_avg_load_node, q.edge_cut, q.hop_bytes, q.internode_volume,
             q.seconds, q.seconds_phase1, q.seconds_phase2, q.seconds_metrics);
    fflush(stdout);
  }
  if (!json)
    printf("peak RSS %.1f MiB\n", peak_rss_mib());
  free(slot);
  rta_hw_destroy(hw);
  rta_graph_destroy(g);
  return failed;
}
