/*
 * Internal contract of the task graph, the hardware model and the mapping
 * engine (src/map/graph*.c, hw*.c, map*.c, arch_check.c). Never installed.
 *
 * Conventions:
 *  - Vertex ids are int64_t in the API and in our CSR's offsets; neighbour
 *    ids are int32_t because SCOTCH_Num is 32-bit in this build and every
 *    graph we map must fit it anyway (checked at creation).
 *  - Slot ids are ints (node-major in a simulated machine: slot = node *
 *    cores_per_node + core); node ids are ints.
 *  - Distances follow the public header's definition; map__hw_dist() is the
 *    one implementation, used by the metrics and by the tests.
 */
#ifndef BALLAST_RTA_MAP_INTERNAL_H
#define BALLAST_RTA_MAP_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <scotch.h>

#include <ballast/rta_map.h>

/* ---- graph ------------------------------------------------------------- */

struct rta_graph {
  int64_t nvert;
  double *work;  /* nvert */
  double *state; /* nvert */
  /* Pending edges (rta_graph_add_edge), merged into the CSR on demand. */
  int64_t npend, cappend;
  int32_t *pu, *pv;
  double *pw;
  /* CSR of the symmetric graph: both directions stored, neighbours sorted,
   * repeats merged. Valid when csr_ok and npend == 0. */
  int csr_ok;
  int64_t *xadj;   /* nvert + 1 */
  int32_t *adj;    /* xadj[nvert] */
  double *adjw;    /* xadj[nvert] */
};

/* The largest .grf weight a graph holds exactly (doubles: 2^53). */
#define MAP__GRF_MAX_WEIGHT ((int64_t)1 << 53)

/** Merges pending edges into the CSR (idempotent). 0 or BALLAST_ENOMEM. */
int map__graph_finalize(rta_graph_t *g);

/**
 * Builds a graph directly from a CSR that the graph takes over (arrays from
 * malloc). The CSR must be symmetric with sorted, unique neighbours.
 */
int map__graph_from_csr(int64_t nvert, int64_t *xadj, int32_t *adj,
                        double *adjw, rta_graph_t **out);

/** A plain CSR (coarsening levels): xadj int64, adj int32, w double, vw. */
typedef struct {
  int64_t n;
  int64_t *xadj;
  int32_t *adj;
  double *w;
  SCOTCH_Num *vw;
} map__csr_t;

/**
 * One level of heavy-edge matching: pairs each vertex with its heaviest
 * unmatched neighbour (ties: lowest id) unless their weight would exceed
 * \a maxvw. Fills \a out (malloc'd; map__csr_free) and cmap[in->n] (fine ->
 * coarse). Deterministic. 0 or BALLAST_ENOMEM.
 */
int map__coarsen(const map__csr_t *in, SCOTCH_Num maxvw, map__csr_t *out,
                 int32_t *cmap);
/** Frees the arrays of a CSR built by map__coarsen(). */
void map__csr_free(map__csr_t *c);

/* ---- hardware model ------------------------------------------------------- */

#define MAP__MAXLEV 16

/** One node's tree: levels with arity > 1 from the top; leaves are cores. */
typedef struct {
  int nlevels;
  int arity[MAP__MAXLEV];
  double cost[MAP__MAXLEV];     /* distance of two cores separated here */
  char type[MAP__MAXLEV][24];   /* hwloc type name of the level's objects */
  int64_t stride[MAP__MAXLEV];  /* cores under one child of this level */
  int ncores;
} map__nodetopo_t;

enum { MAP__NET_FLAT = 0, MAP__NET_ARCH = 1, MAP__NET_MEASURED = 2 };

struct rta_hw {
  int nnodes, nslots;
  int sim;   /* built by rta_hw_create_sim */
  int bound; /* every slot's binding known */
  int *slot_node, *slot_core;
  int *node_xslot, *node_slot; /* slots of node n: node_slot[node_xslot[n]..] */
  int ntopo;
  map__nodetopo_t *topo; /* ntopo distinct node trees */
  int *node_topo;        /* nnodes */
  double internode_cost;
  int net;               /* MAP__NET_* */
  char net_desc[128];    /* for rta_hw_print */
  SCOTCH_Arch *arch;     /* MAP__NET_ARCH: the loaded inter-node arch */
  SCOTCH_ArchDom *arch_dom; /* terminal domain of each node */
  float *ndist;          /* nnodes^2 node distances, when small enough */
  double *lat, *bw;      /* MAP__NET_MEASURED: nnodes^2 */
  int *leader;           /* node leader (slot) of each node, or NULL */
};

/** Distance between two slots (public definition; no range checks). */
double map__hw_dist(const rta_hw_t *hw, int a, int b);
/** Distance between two distinct nodes (no range checks). */
double map__hw_node_dist(const rta_hw_t *hw, int a, int b);

/**
 * Fills \a t from an hwloc topology given as synthetic string or XML path
 * (NULL: this machine). \a costs/ncosts override the level costs.
 */
int map__hw_topo_from_desc(const char *desc, const double *costs, int ncosts,
                           map__nodetopo_t *t);
/** Completes strides and ncores of \a t. 0 or BALLAST_ERANGE. */
int map__hw_topo_finish(map__nodetopo_t *t);
/** Default level costs (see rta_hw_node_level()); pkg_level = index of the
 *  first level inside a package (nlevels when unknown). */
void map__hw_default_costs(map__nodetopo_t *t, int pkg_level);

/** Allocates the per-slot / per-node arrays of a model. */
int map__hw_alloc(rta_hw_t *hw, int nnodes, int nslots);
/** Builds node_xslot/node_slot from slot_node. */
int map__hw_index_slots(rta_hw_t *hw);
/** Loads a SCOTCH arch file as the inter-node network (EPARSE on error). */
int map__hw_load_arch(rta_hw_t *hw, const char *path);

/* Bounds of what ballast hands SCOTCH (arch_check.c): terminals (nodes) of
 * an architecture, and link costs and weights in it. */
#define MAP__ARCH_MAX_TERMS (1 << 20)
#define MAP__ARCH_MAX_VALUE (1 << 20)

/* The largest node ballast builds from a synthetic description. */
#define MAP__HW_MAX_PUS 4096

/**
 * Reads the hwloc XML file \a path before hwloc does (hw_check.c): 0, or
 * BALLAST_EHWLOC with a warning naming the file and line of an object
 * hwloc 2.9 would crash on (a cpuset without complete_cpuset, ...).
 */
int map__hw_check_xml(const char *path);

/**
 * 0, or BALLAST_ERANGE with a warning when the synthetic description \a desc
 * makes more than MAP__HW_MAX_PUS processing units.
 */
int map__hw_check_synthetic(const char *desc);

/**
 * Checks the SCOTCH architecture file open as \a f (named \a path in the
 * messages) against the grammar ballast accepts, before SCOTCH reads it:
 * 0 and its terminal count in \a nterm, or BALLAST_EPARSE with a warning
 * naming the file, the line and the value (BALLAST_ENOMEM). Reads \a f to
 * its end.
 */
int map__arch_check(FILE *f, const char *path, int64_t *nterm);
/** Precomputes node distances (ndist) when nnodes is small enough. */
int map__hw_cache_dist(rta_hw_t *hw);
/** Sets inter-node distances from measured lat/bw (normalised). */
void map__hw_links_to_dist(rta_hw_t *hw);

/* ---- SCOTCH helpers (map_scotch.c) ---------------------------------------- */

/** Checks SCOTCH_numSizeof() against sizeof(SCOTCH_Num) once: 0 or ESCOTCH. */
int map__scotch_check(void);
/** The comparison behind map__scotch_check(), testable with any widths. */
int map__scotch_check_width(int lib_size, int hdr_size);

/** Largest total vertex weight handed to SCOTCH (leaves room for SCOTCH's
 *  products of loads with domain weights in 32 bits). */
#define MAP__VCAP ((double)(1 << 24))
/** Largest total of edge weight x distance handed to SCOTCH. */
#define MAP__ECAP ((double)(1 << 30))

/**
 * Chooses the factor that turns non-negative weights \a w[0..n) into SCOTCH
 * integers: small integer inputs whose sum fits \a cap stay as they are
 * (*exact = 1); others are scaled to a mean of about 100 but a sum <= cap.
 */
void map__normalize(const double *w, int64_t n, double cap, double *scale,
                    int *exact);
/** round(w * scale), at least 1. */
SCOTCH_Num map__scaled(double w, double scale);

/** A SCOTCH target: a tree-leaf, possibly restricted to some of its leaves
 *  (SCOTCH_archSub keeps a pointer to the full architecture). */
typedef struct {
  SCOTCH_Arch full, sub;
  int has_full, has_sub;
  SCOTCH_Num maxdist; /* SCOTCH's largest distance between terminals */
} map__tgt_t;

/**
 * Builds a tree-leaf target: levels (arity, cost = distance of two leaves
 * separated at that level) from the top, plus an extra bottom level of
 * \a mult leaves per core when mult > 1; with \a sel, only the leaves
 * sel[0..nsel) (terminal i = sel[i]).
 */
int map__tgt_tleaf(map__tgt_t *t, int nlevels, const int *arity,
                   const double *cost, int mult, int64_t nsel,
                   const SCOTCH_Num *sel);
/** The architecture to map onto. */
SCOTCH_Arch *map__tgt_arch(map__tgt_t *t);
/** Frees a target (safe on a zeroed one). */
void map__tgt_exit(map__tgt_t *t);

/** A SCOTCH graph with the context that makes its mapping deterministic. */
typedef struct {
  SCOTCH_Graph graph, bound;
  SCOTCH_Context ctx;
  int has_graph, has_bound, has_ctx;
} map__sgraph_t;

/** ballast's default SCOTCH strategy for \a bal; \a direct: the cheaper
 *  variant for small graphs (fewer initial bipartitions). */
void map__strategy_string(char *buf, size_t len, double bal, int direct);
/** Graphs up to this size use the direct strategy in phase 2. */
#define MAP__DIRECT_MAX 4000

/** A deterministic, single-threaded SCOTCH context seeded with \a seed. */
int map__ctx_init(SCOTCH_Context *ctx, unsigned seed);

/**
 * Builds the SCOTCH graph of a CSR (arrays owned by the caller, alive until
 * map__sgraph_exit) bound to \a ctx reseeded with \a seed, or (ctx NULL) to
 * a context of its own from map__ctx_init().
 */
int map__sgraph_build(map__sgraph_t *s, SCOTCH_Context *ctx, unsigned seed,
                      SCOTCH_Num n, const SCOTCH_Num *vert,
                      const SCOTCH_Num *velo, SCOTCH_Num narc,
                      const SCOTCH_Num *edge, const SCOTCH_Num *edlo);
void map__sgraph_exit(map__sgraph_t *s);

/**
 * Maps (or remaps, when \a parotab is given) the graph onto \a arch into
 * parttab: with \a strat when given, else SCOTCH's strategy of \a flags when
 * non-zero, else ballast's default; \a balrat for \a nparts parts.
 */
int map__sgraph_map(map__sgraph_t *s, const SCOTCH_Arch *arch,
                    SCOTCH_Num nparts, int flags, const char *strat,
                    double balrat,
                    SCOTCH_Num *parotab, const SCOTCH_Num *vmlotab,
                    SCOTCH_Num *parttab);

/**
 * Rebuilds the subgraph of the vertices verts[0..k) (local ids = positions in
 * verts) as a fresh CSR: *vertp (k+1), *edgep and *wp (*narcp arcs), all
 * malloc'd for the caller. \a g2l (nvert) must be -1 everywhere and is so
 * again on return. Used instead of SCOTCH_graphInducePart, whose result
 * crashes SCOTCH 7.0.3 when mapped onto a tree-leaf.
 */
int map__subgraph(const rta_graph_t *g, const int64_t *verts, int64_t k,
                  int32_t *g2l, SCOTCH_Num **vertp, SCOTCH_Num **edgep,
                  double **wp, int64_t *narcp);

/* ---- distributed phase 1 (map_dist.c) ---------------------------------------- */

/** 1 when this build has PT-Scotch (map__phase1_dist() works), else 0. */
int map__phase1_dist_available(void);

/**
 * Phase 1 with PT-Scotch: vertex blocks of \a g (velo: normalised vertex
 * weights) mapped over the ranks of \a comm onto a weighted complete graph of
 * the nodes of \a hw with imbalance \a bal; node_of (nvert) filled on every
 * rank. Collective; an error anywhere is returned everywhere (EREMOTE where
 * remote). Its MPI calls (PT-Scotch's too) are library traffic: the caller
 * holds the ballast__lib_begin() bracket. 0; BALLAST_ESCOTCH; BALLAST_EMPI; BALLAST_EOVERFLOW;
 * BALLAST_ENOMEM; BALLAST_ENOTSUP without PT-Scotch.
 */
int map__phase1_dist(const rta_graph_t *g, const rta_hw_t *hw,
                     const SCOTCH_Num *velo, MPI_Comm comm, double bal,
                     unsigned seed, SCOTCH_Num *node_of);

/* ---- baselines (map_basic.c) ------------------------------------------------ */

/** Vertex v -> slot v mod nslots. */
void map__roundrobin(const rta_graph_t *g, const rta_hw_t *hw, int64_t *slot);
/** A seeded, uniformly random slot per vertex. */
void map__random(const rta_graph_t *g, const rta_hw_t *hw, unsigned seed,
                 int64_t *slot);
/** Consecutive vertices in blocks of equal work, one block per slot. */
void map__block(const rta_graph_t *g, const rta_hw_t *hw, int64_t *slot);

/* ---- metrics (map_quality.c) ----------------------------------------------- */

/** Fills the load, cut, hop-bytes and migration fields of \a q. */
int map__quality(const rta_graph_t *g, const rta_hw_t *hw, const int64_t *slot,
                 const int64_t *prev, rta_map_quality_t *q);

/** Load balancing's placement rule (map_perm.c): makes \a slot (n <= nslots
 *  vertices) use each slot at most once; the first vertex of a slot keeps
 *  it, each later one takes a free slot of the same node, else the lowest
 *  free slot. Deterministic. 0 or BALLAST_ENOMEM. */
int map__repair_by_node(const rta_hw_t *hw, int64_t n, int *slot);

/* ---- text form of a model (hw_text.c) ------------------------------------ */

/** Writes \a hw as one "H ..." line (format in hw_text.c). 0; BALLAST_EINVAL
 *  (NULL, or an architecture-file network); BALLAST_EIO. */
int map__hw_to_text(const rta_hw_t *hw, FILE *f);
/** Rebuilds a model from its line. 0 and *out; BALLAST_EPARSE with \a why
 *  naming what is wrong; BALLAST_ENOMEM. */
int map__hw_from_text(const char *line, rta_hw_t **out, char *why, size_t nwhy);

/** Monotonic seconds. */
double map__now(void);

#endif
