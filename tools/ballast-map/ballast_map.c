/* ballast-map: maps a task graph onto a (possibly simulated) machine with
 * each of ballast's strategies and prints the quality figures side by side,
 * or one JSON object per strategy with --json.
 *
 *   ballast-map --stencil 27:64 --nodes 32 --node-topo "pack:2 core:8"
 *   ballast-map --grf app.grf --arch torus.tgt --node-topo node.xml --json
 *
 * Runs without MPI (the simulation needs none). */
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <ballast/rta_hw.h>

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
    "  --save-grf FILE        write the task graph as .grf and continue\n");
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

static double peak_rss_mib(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)ru.ru_maxrss / 1024.0;
}

int main(int argc, char **argv) {
  const char *grf = NULL, *stencil = NULL, *md = NULL, *topo = "pack:2 core:8";
  const char *arch = NULL, *strategies = NULL, *save = NULL, *lcosts = NULL;
  long long nodes = 0;
  double icost = 16, balrat = 0.03, ppc = 100, ratio = 1;
  unsigned seed = 1;
  int json = 0, print_hw = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define ARG(name) (strcmp(a, name) == 0 && v && (i++, 1))
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      usage(stdout);
      return 0;
    } else if (strcmp(a, "--json") == 0) {
      json = 1;
    } else if (strcmp(a, "--print-hw") == 0) {
      print_hw = 1;
    } else if (ARG("--grf")) {
      grf = v;
    } else if (ARG("--stencil")) {
      stencil = v;
    } else if (ARG("--md")) {
      md = v;
    } else if (ARG("--md-ppc")) {
      ppc = atof(v);
    } else if (ARG("--md-ratio")) {
      ratio = atof(v);
    } else if (ARG("--nodes")) {
      nodes = atoll(v);
    } else if (ARG("--node-topo")) {
      topo = v;
    } else if (ARG("--arch")) {
      arch = v;
    } else if (ARG("--internode-cost")) {
      icost = atof(v);
    } else if (ARG("--level-costs")) {
      lcosts = v;
    } else if (ARG("--strategies")) {
      strategies = v;
    } else if (ARG("--balrat")) {
      balrat = atof(v);
    } else if (ARG("--seed")) {
      seed = (unsigned)strtoul(v, NULL, 10);
    } else if (ARG("--save-grf")) {
      save = v;
    } else {
      fprintf(stderr, "ballast-map: unknown or incomplete option '%s'\n", a);
      usage(stderr);
      return 2;
    }
#undef ARG
  }
  if (!!grf + !!stencil + !!md != 1) {
    fprintf(stderr, "ballast-map: give exactly one of --grf, --stencil, --md\n");
    usage(stderr);
    return 2;
  }
  /* A mapping tool allocates and frees big arrays over and over: keep freed
   * memory instead of returning it to the kernel (page faults cost ~20%). */
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);

  rta_graph_t *g = NULL;
  int rc;
  long long d[3];
  if (grf) {
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
    int pts = 0;
    const char *colon = strchr(stencil, ':');
    if (colon)
      pts = atoi(stencil);
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
    rc = rta_graph_md_cells(d[0], d[1], d[2], ppc, ratio, 4.0, seed, &g);
    if (rc) {
      fprintf(stderr, "ballast-map: cannot build the MD cell graph: %s\n",
              ballast_strerror(rc));
      return 1;
    }
  }
  if (save) {
    FILE *f = fopen(save, "w");
    if (!f || rta_graph_save_grf(g, f) != 0) {
      fprintf(stderr, "ballast-map: cannot write '%s'\n", save);
      if (f)
        fclose(f);
      rta_graph_destroy(g);
      return 1;
    }
    fclose(f);
  }

  rta_hw_options_t ho;
  rta_hw_options_init(&ho);
  ho.internode_cost = icost;
  double costs[16];
  if (lcosts) {
    const char *p = lcosts;
    while (*p && ho.nlevel_costs < 16) {
      char *end;
      costs[ho.nlevel_costs++] = strtod(p, &end);
      if (end == p || (*end && *end != ',')) {
        fprintf(stderr, "ballast-map: --level-costs wants numbers separated by "
                "commas, got '%s'\n", lcosts);
        rta_graph_destroy(g);
        return 2;
      }
      p = *end ? end + 1 : end;
    }
    ho.level_costs = costs;
  }
  rta_hw_t *hw = NULL;
  if (!arch && nodes < 1)
    nodes = 1;
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
    char buf[256];
    snprintf(buf, sizeof buf, "%s", strategies);
    for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
      rta_strategy_t s;
      if (strcmp(t, "all") == 0) {
        for (int k = 0; k < RTA_MAP_NSTRATEGIES; k++)
          use[k] = 1;
      } else if (rta_strategy_parse(t, &s) == 0) {
        use[s] = 1;
      } else {
        fprintf(stderr, "ballast-map: unknown strategy '%s'\n", t);
        rta_hw_destroy(hw);
        rta_graph_destroy(g);
        return 2;
      }
    }
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
