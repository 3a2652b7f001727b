/*
 * zoltan_vs_ballast: ballast's two-phase mapping against Zoltan's
 * partitioners on one task graph and one simulated machine.
 *
 * Zoltan partitions into nparts = number of cores, part p is placed on slot
 * p (the usual "part = rank" use); ballast maps onto the machine model. Every
 * result is evaluated by rta_map_evaluate() on the same model: max/avg load,
 * edge cut, hop-bytes, inter-node volume. Then the vertex work is perturbed
 * (a heavy sphere) and each method repartitions from its own previous
 * result: Zoltan with LB_APPROACH=REPARTITION (geometric methods: RCB_REUSE
 * / plain rerun), ballast with rta_map_graph_ex(prev); the tasks and bytes
 * that move are counted by rta_map_evaluate(prev).
 *
 * Zoltan runs under MPI with one rank (the whole graph on rank 0).
 *
 * usage: zoltan_vs_ballast [--graph stencil:N|md:N] [--nodes K]
 *        [--topo "pack:2 core:8"] [--methods rcb,hsfc,graph,scotch,hypergraph]
 *        (a method "ballast:S" adds ballast remapping with
 *        steps_between_remaps = S, "ballast-scotch[:S]" the same with
 *        remap_scotch_only = 1; plain "ballast" is always first)
 *        [--heavy F] [--json]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>
#include <zoltan.h>

#include <ballast/common.h>
#include <ballast/rta_map.h>
#include "map/map_internal.h"
#include "map/map_remap.h"

typedef struct {
  rta_graph_t *g;
  int64_t nx, ny, nz; /* grid of the vertices (coordinates for RCB/HSFC) */
  const int64_t *prev;  /* current part of each vertex (repartitioning) */
} bench_t;

static double now(void) { return MPI_Wtime(); }

/* ---- Zoltan query functions ------------------------------------------- */

static int q_num_obj(void *d, int *ierr) {
  *ierr = ZOLTAN_OK;
  return (int)rta_graph_nvert(((bench_t *)d)->g);
}

static void q_obj_list(void *d, int ng, int nl, ZOLTAN_ID_PTR gids,
                       ZOLTAN_ID_PTR lids, int wdim, float *w, int *ierr) {
  bench_t *b = d;
  for (int64_t v = 0; v < b->g->nvert; v++) {
    gids[v] = (ZOLTAN_ID_TYPE)v;
    lids[v] = (ZOLTAN_ID_TYPE)v;
    if (wdim > 0) w[v] = (float)b->g->work[v];
  }
  *ierr = ZOLTAN_OK;
}

static int q_num_geom(void *d, int *ierr) {
  *ierr = ZOLTAN_OK;
  return 3;
}

static void q_geom_multi(void *d, int ng, int nl, int n, ZOLTAN_ID_PTR gids,
                         ZOLTAN_ID_PTR lids, int dim, double *xyz, int *ierr) {
  bench_t *b = d;
  for (int i = 0; i < n; i++) {
    int64_t v = (int64_t)lids[i];
    xyz[3 * i] = (double)(v % b->nx);
    xyz[3 * i + 1] = (double)((v / b->nx) % b->ny);
    xyz[3 * i + 2] = (double)(v / (b->nx * b->ny));
  }
  *ierr = ZOLTAN_OK;
}

static void q_num_edges_multi(void *d, int ng, int nl, int n,
                              ZOLTAN_ID_PTR gids, ZOLTAN_ID_PTR lids,
                              int *nedges, int *ierr) {
  bench_t *b = d;
  for (int i = 0; i < n; i++) {
    int64_t v = (int64_t)lids[i];
    nedges[i] = (int)(b->g->xadj[v + 1] - b->g->xadj[v]);
  }
  *ierr = ZOLTAN_OK;
}

static void q_edge_list_multi(void *d, int ng, int nl, int n,
                              ZOLTAN_ID_PTR gids, ZOLTAN_ID_PTR lids,
                              int *nedges, ZOLTAN_ID_PTR nbor, int *nbor_proc,
                              int wdim, float *ew, int *ierr) {
  bench_t *b = d;
  int64_t k = 0;
  for (int i = 0; i < n; i++) {
    int64_t v = (int64_t)lids[i];
    for (int64_t e = b->g->xadj[v]; e < b->g->xadj[v + 1]; e++, k++) {
      nbor[k] = (ZOLTAN_ID_TYPE)b->g->adj[e];
      nbor_proc[k] = 0;
      if (wdim > 0) ew[k] = (float)b->g->adjw[e];
    }
  }
  *ierr = ZOLTAN_OK;
}

static void q_part_multi(void *d, int ng, int nl, int n, ZOLTAN_ID_PTR gids,
                         ZOLTAN_ID_PTR lids, int *parts, int *ierr) {
  bench_t *b = d;
  for (int i = 0; i < n; i++)
    parts[i] = b->prev ? (int)b->prev[lids[i]] : 0;
  *ierr = ZOLTAN_OK;
}

static void q_obj_size_multi(void *d, int ng, int nl, int n,
                             ZOLTAN_ID_PTR gids, ZOLTAN_ID_PTR lids,
                             int *sizes, int *ierr) {
  bench_t *b = d;
  for (int i = 0; i < n; i++) sizes[i] = (int)ceil(b->g->state[lids[i]]);
  *ierr = ZOLTAN_OK;
}

/* ---- one Zoltan run --------------------------------------------------- */

/* Partitions with \a method into nparts; fills part[] (every vertex).
 * Returns 0, or -1 when Zoltan failed (then part[] is unchanged). */
static int zoltan_run(bench_t *b, const char *method, int nparts,
                      int repart, int64_t *part, double *secs) {
  struct Zoltan_Struct *zz = Zoltan_Create(MPI_COMM_WORLD);
  char buf[32];
  Zoltan_Set_Param(zz, "DEBUG_LEVEL", "0");
  Zoltan_Set_Param(zz, "NUM_GID_ENTRIES", "1");
  Zoltan_Set_Param(zz, "NUM_LID_ENTRIES", "1");
  Zoltan_Set_Param(zz, "OBJ_WEIGHT_DIM", "1");
  Zoltan_Set_Param(zz, "RETURN_LISTS", "PARTS");
  snprintf(buf, sizeof buf, "%d", nparts);
  Zoltan_Set_Param(zz, "NUM_GLOBAL_PARTS", buf);
  Zoltan_Set_Param(zz, "IMBALANCE_TOL", "1.03");
  Zoltan_Set_Param(zz, "LB_APPROACH", repart ? "REPARTITION" : "PARTITION");
  if (!strcmp(method, "rcb")) {
    Zoltan_Set_Param(zz, "LB_METHOD", "RCB");
    if (repart) Zoltan_Set_Param(zz, "RCB_REUSE", "1");
  } else if (!strcmp(method, "hsfc")) {
    Zoltan_Set_Param(zz, "LB_METHOD", "HSFC");
  } else if (!strcmp(method, "graph")) {
    Zoltan_Set_Param(zz, "LB_METHOD", "GRAPH");
    Zoltan_Set_Param(zz, "GRAPH_PACKAGE", "PHG");
    Zoltan_Set_Param(zz, "EDGE_WEIGHT_DIM", "1");
  } else if (!strcmp(method, "scotch")) {
    Zoltan_Set_Param(zz, "LB_METHOD", "GRAPH");
    Zoltan_Set_Param(zz, "GRAPH_PACKAGE", "SCOTCH");
    Zoltan_Set_Param(zz, "EDGE_WEIGHT_DIM", "1");
  } else { /* hypergraph: PHG, hyperedges built from the graph queries */
    Zoltan_Set_Param(zz, "LB_METHOD", "HYPERGRAPH");
    Zoltan_Set_Param(zz, "HYPERGRAPH_PACKAGE", "PHG");
    Zoltan_Set_Param(zz, "EDGE_WEIGHT_DIM", "1");
  }
  Zoltan_Set_Num_Obj_Fn(zz, q_num_obj, b);
  Zoltan_Set_Obj_List_Fn(zz, q_obj_list, b);
  Zoltan_Set_Num_Geom_Fn(zz, q_num_geom, b);
  Zoltan_Set_Geom_Multi_Fn(zz, q_geom_multi, b);
  Zoltan_Set_Num_Edges_Multi_Fn(zz, q_num_edges_multi, b);
  Zoltan_Set_Edge_List_Multi_Fn(zz, q_edge_list_multi, b);
  Zoltan_Set_Part_Multi_Fn(zz, q_part_multi, b);
  Zoltan_Set_Obj_Size_Multi_Fn(zz, q_obj_size_multi, b);

  int changes, ngid, nlid, nimp, nexp;
  ZOLTAN_ID_PTR igid, ilid, egid, elid;
  int *iproc, *ipart, *eproc, *epart;
  double t0 = now();
  int rc = Zoltan_LB_Partition(zz, &changes, &ngid, &nlid, &nimp, &igid,
                               &ilid, &iproc, &ipart, &nexp, &egid, &elid,
                               &eproc, &epart);
  *secs = now() - t0;
  if (rc == ZOLTAN_OK || rc == ZOLTAN_WARN) {
    /* RETURN_LISTS=PARTS: the export list holds every object and its part */
    for (int i = 0; i < nexp; i++) part[elid[i]] = epart[i];
    Zoltan_LB_Free_Part(&igid, &ilid, &iproc, &ipart);
    Zoltan_LB_Free_Part(&egid, &elid, &eproc, &epart);
  }
  Zoltan_Destroy(&zz);
  return (rc == ZOLTAN_OK || rc == ZOLTAN_WARN) ? 0 : -1;
}

/* ---- driver ------------------------------------------------------------- */

/* \a comb: the remap's combined cost (hop-bytes + state x distance moved /
 * 10, ballast's default steps_between_remaps), the same yardstick for every
 * method; 0 on first mappings. */
static void print_row(const char *phase, const char *name, double secs,
                      const rta_map_quality_t *q, double comb, int json) {
  if (json)
    printf("{\"phase\":\"%s\",\"method\":\"%s\",\"seconds\":%.4f,"
           "\"max_avg_core\":%.4f,\"max_avg_node\":%.4f,\"edge_cut\":%.6g,"
           "\"hop_bytes\":%.6g,\"internode\":%.6g,\"tasks_migrated\":%lld,"
           "\"bytes_migrated\":%.6g,\"combined10\":%.6g}\n",
           phase, name, secs, q->max_avg_load_core, q->max_avg_load_node,
           q->edge_cut, q->hop_bytes, q->internode_volume,
           (long long)q->tasks_migrated, q->bytes_migrated, comb);
  else
    printf("%-8s %-16s %8.2f %7.3f %7.3f %11.4g %11.4g %11.4g %9lld %11.4g %11.4g\n",
           phase, name, secs, q->max_avg_load_core, q->max_avg_load_node,
           q->edge_cut, q->hop_bytes, q->internode_volume,
           (long long)q->tasks_migrated, q->bytes_migrated, comb);
}

/* Multiplies the work (and state) of the vertices inside a sphere of radius
 * nx/4 around (nx/4, ny/2, nz/2) by \a f. */
static void heavy_sphere(bench_t *b, double f) {
  double cx = b->nx / 4.0, cy = b->ny / 2.0, cz = b->nz / 2.0;
  double r = b->nx / 4.0;
  for (int64_t v = 0; v < b->g->nvert; v++) {
    double x = (double)(v % b->nx) - cx;
    double y = (double)((v / b->nx) % b->ny) - cy;
    double z = (double)(v / (b->nx * b->ny)) - cz;
    if (x * x + y * y + z * z <= r * r)
      rta_graph_set_vertex(b->g, v, b->g->work[v] * f, b->g->state[v] * f);
  }
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  const char *graph = "stencil:64", *topo = "pack:2 core:8";
  const char *methods = "rcb,hsfc,graph,scotch,hypergraph";
  int nodes = 32, json = 0;
  double heavy = 4.0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--graph") && i + 1 < argc) graph = argv[++i];
    else if (!strcmp(argv[i], "--nodes") && i + 1 < argc) nodes = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--topo") && i + 1 < argc) topo = argv[++i];
    else if (!strcmp(argv[i], "--methods") && i + 1 < argc) methods = argv[++i];
    else if (!strcmp(argv[i], "--heavy") && i + 1 < argc) heavy = atof(argv[++i]);
    else if (!strcmp(argv[i], "--json")) json = 1;
    else {
      fprintf(stderr, "usage: %s [--graph stencil:N|md:N] [--nodes K] "
              "[--topo STR] [--methods LIST] [--heavy F] [--json]\n", argv[0]);
      MPI_Finalize();
      return 2;
    }
  }
  float ver;
  if (Zoltan_Initialize(argc, argv, &ver) != ZOLTAN_OK) {
    fprintf(stderr, "Zoltan_Initialize failed\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  bench_t b = {0};
  int64_t n = atoll(strchr(graph, ':') ? strchr(graph, ':') + 1 : "64");
  b.nx = b.ny = b.nz = n;
  int rc;
  if (!strncmp(graph, "md", 2))
    rc = rta_graph_md_cells(n, n, n, 20.0, 4.0, 1.0, 1, &b.g);
  else
    rc = rta_graph_stencil3d(n, n, n, 27, 4.0, 4096.0, &b.g);
  if (rc) { fprintf(stderr, "graph: %d\n", rc); MPI_Abort(MPI_COMM_WORLD, 1); }
  rta_graph_nedges(b.g); /* builds the CSR the query functions read */

  rta_hw_t *hw;
  rc = rta_hw_create_sim(nodes, topo, NULL, NULL, &hw);
  if (rc) { fprintf(stderr, "machine: %d\n", rc); MPI_Abort(MPI_COMM_WORLD, 1); }
  int nparts = rta_hw_nslots(hw);
  int64_t nv = rta_graph_nvert(b.g);
  if (!json) {
    printf("# graph %s: %lld vertices, %lld edges; machine %d nodes x (%s) = "
           "%d cores; Zoltan %.2f, 1 MPI rank\n", graph, (long long)nv,
           (long long)rta_graph_nedges(b.g), nodes, topo, nparts, ver);
    printf("%-8s %-16s %8s %7s %7s %11s %11s %11s %9s %11s %11s\n", "phase",
           "method", "seconds", "maxavgC", "maxavgN", "edge_cut", "hop_bytes",
           "internode", "moved", "bytes_moved", "combined10");
  }

  /* every method's first partition, kept for its repartition */
  char mlist[256];
  snprintf(mlist, sizeof mlist, "ballast,%s", methods);
  int nm = 0;
  char *names[16];
  for (char *s = strtok(mlist, ","); s && nm < 16; s = strtok(NULL, ","))
    names[nm++] = s;
  int64_t **first = calloc((size_t)nm, sizeof *first);
  int64_t *cur = malloc((size_t)nv * sizeof *cur);
  rta_map_quality_t q;
  for (int m = 0; m < nm; m++) {
    double secs = 0;
    first[m] = malloc((size_t)nv * sizeof(int64_t));
    if (!strncmp(names[m], "ballast", 7)) {
      double t0 = now();
      rc = rta_map_graph_ex(b.g, hw, RTA_MAP_TWOPHASE, NULL, NULL, first[m], NULL);
      secs = now() - t0;
    } else {
      b.prev = NULL;
      rc = zoltan_run(&b, names[m], nparts, 0, first[m], &secs);
    }
    if (rc) {
      printf("%-8s %-16s failed (%d)\n", "first", names[m], rc);
      free(first[m]);
      first[m] = NULL;
      continue;
    }
    rta_map_evaluate(b.g, hw, first[m], NULL, &q);
    print_row("first", names[m], secs, &q, 0, json);
    fflush(stdout);
  }

  /* load change, then each method repartitions from its own result */
  heavy_sphere(&b, heavy);
  for (int m = 0; m < nm; m++) {
    if (!first[m]) continue;
    double secs = 0;
    if (!strncmp(names[m], "ballast", 7)) {
      /* "ballast:S": remap with steps_between_remaps = S (default 10);
       * "ballast-scotch[:S]": SCOTCH_graphRemap's result alone (the remap
       * before ballast's own candidates, remap_scotch_only) */
      rta_map_options_t o;
      rta_map_options_init(&o);
      const char *colon = strchr(names[m], ':');
      if (colon)
        o.steps_between_remaps = atof(colon + 1);
      if (!strncmp(names[m], "ballast-scotch", 14))
        o.remap_scotch_only = 1;
      double t0 = now();
      rc = rta_map_graph_ex(b.g, hw, RTA_MAP_TWOPHASE, first[m], &o, cur, NULL);
      secs = now() - t0;
    } else {
      b.prev = first[m];
      rc = zoltan_run(&b, names[m], nparts, 1, cur, &secs);
    }
    if (rc) {
      printf("%-8s %-16s failed (%d)\n", "repart", names[m], rc);
      continue;
    }
    rta_map_evaluate(b.g, hw, cur, first[m], &q);
    print_row("repart", names[m], secs, &q,
              map__remap_cost(b.g, hw, cur, first[m], 10, NULL, NULL), json);
    fflush(stdout);
  }
  /* reference: the heavy-sphere graph mapped from scratch by ballast */
  double t0 = now();
  rc = rta_map_graph_ex(b.g, hw, RTA_MAP_TWOPHASE, NULL, NULL, cur, NULL);
  if (!rc) {
    double secs = now() - t0;
    rta_map_evaluate(b.g, hw, cur, first[0], &q);
    print_row("scratch", "ballast", secs, &q,
              map__remap_cost(b.g, hw, cur, first[0], 10, NULL, NULL), json);
  }
  for (int m = 0; m < nm; m++) free(first[m]);
  free(first);
  free(cur);
  rta_hw_destroy(hw);
  rta_graph_destroy(b.g);
  MPI_Finalize();
  return 0;
}
