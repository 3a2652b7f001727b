/**
 * \file ballast/rta_map.h
 * \brief Rta-C hardware model and two-phase SCOTCH mapping.
 *
 * Three objects:
 *  - a task graph (rta_graph_t): vertices carry work and state size, edges
 *    carry bytes exchanged per step. Built incrementally, or read from a
 *    SCOTCH .grf file, or generated (3D stencils, molecular-dynamics cells).
 *  - a hardware model (rta_hw_t): network -> nodes -> hwloc tree inside each
 *    node -> slots (one slot per rank of a communicator, or one per core in a
 *    simulated machine). Discovered at run time (collective) or simulated.
 *  - a mapping (rta_map_graph): vertices -> slots with a chosen strategy, and
 *    quality figures computed by ballast itself (rta_map_quality_t).
 *
 * Distances (used for hop-bytes and by SCOTCH): two vertices on the same slot
 * are 0 apart; on one node, the cost of the lowest hwloc level holding both
 * slots (by default 1 inside a package, 6 between packages; see
 * rta_hw_node_level()); on two nodes, the inter-node cost unit (default 16)
 * times the number of hops between the nodes in the inter-node architecture
 * (1 for a complete graph), or the measured, normalised link cost.
 *
 * Thread safety: the objects are not locked. Distinct objects may be used by
 * distinct threads; read-only calls (const arguments) on one object may run
 * concurrently.
 */
#ifndef BALLAST_RTA_MAP_H
#define BALLAST_RTA_MAP_H

#include <stdint.h>
#include <stdio.h>

#include <mpi.h>

#include <ballast/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ===================================================================== */
/* Task graph                                                             */
/* ===================================================================== */

/** Task graph: CSR, built incrementally. Opaque. */
typedef struct rta_graph rta_graph_t;

/**
 * \brief Creates a graph of \a nvert vertices (work 1, state 0) and no edges.
 * \param nvert number of vertices, 1 .. 2^31-2 (SCOTCH_Num is 32-bit here).
 * \param out receives the graph; the caller owns it (rta_graph_destroy()).
 * \return 0; BALLAST_EINVAL for a NULL out or nvert < 1; BALLAST_ERANGE when
 *         nvert does not fit SCOTCH_Num; BALLAST_ENOMEM.
 * Not collective.
 */
BALLAST_API int rta_graph_create(int64_t nvert, rta_graph_t **out);

/** \brief Frees a graph. NULL does nothing. */
BALLAST_API void rta_graph_destroy(rta_graph_t *g);

/**
 * \brief Sets vertex \a v's estimated work (any unit, >= 0) and state size
 * in bytes (>= 0, used for the migration cost).
 * \return 0; BALLAST_EINVAL for a NULL graph, v out of range, negative or
 *         non-finite values.
 */
BALLAST_API int rta_graph_set_vertex(rta_graph_t *g, int64_t v, double work,
                                     double state_bytes);

/**
 * \brief Adds \a bytes (per step, >= 0) between u and v. Symmetric: one call
 * per pair is enough; repeated calls for the same pair (either order)
 * accumulate. Self-loops (u == v) are ignored (return 0).
 * \return 0; BALLAST_EINVAL for bad arguments; BALLAST_ENOMEM;
 *         BALLAST_ERANGE when the number of edges exceeds SCOTCH_Num.
 */
BALLAST_API int rta_graph_add_edge(rta_graph_t *g, int64_t u, int64_t v,
                                   double bytes);

/** \brief The graph's vertices.
 * \return the number of vertices; BALLAST_EINVAL for NULL. */
BALLAST_API int64_t rta_graph_nvert(const rta_graph_t *g);

/**
 * \brief Number of distinct undirected edges (after merging repeats).
 * Merges pending edges first, hence the non-const argument.
 * \return the count, or a negative BALLAST_E* code (NULL graph, no memory).
 */
BALLAST_API int64_t rta_graph_nedges(rta_graph_t *g);

/**
 * \brief Reads a graph in SCOTCH's .grf format (version 0, base 0 or 1,
 * vertex labels, vertex and edge weights). Vertex weights become work; edge
 * weights become bytes; states are 0. The adjacency must be symmetric.
 * Weights must be integers in 0..2^53 (held exactly, so a graph read and
 * written back with rta_graph_save_grf() is the same graph). A header whose
 * counts cannot fit in what is left of a regular file is refused before
 * anything is allocated; from a pipe, memory grows with the arcs read.
 * \param f open file; \param what name used in error messages (may be NULL).
 * \param out receives the graph; the caller owns it (rta_graph_destroy()).
 * \return 0; BALLAST_EPARSE with a message naming the line/field that is
 *         wrong (truncated file, bad header, counts larger than the file,
 *         a NUL byte in a number, out-of-range neighbour or weight,
 *         asymmetric edge, ...); BALLAST_EIO when reading fails (a
 *         directory, ...); BALLAST_EINVAL; BALLAST_ENOMEM.
 */
BALLAST_API int rta_graph_load_grf(FILE *f, const char *what,
                                   rta_graph_t **out);

/**
 * \brief Writes \a g in SCOTCH .grf format (base 0, vertex and edge weights
 * written exactly, zeros included), so that rta_graph_load_grf() reads back
 * the same graph. A graph with a weight that is not an integer in 0..2^53
 * is refused before anything is written. The caller closes \a f and must
 * check that close too.
 * \return 0, BALLAST_EINVAL, BALLAST_ERANGE (a weight that cannot be
 *         written exactly; a warning names it), BALLAST_EIO.
 */
BALLAST_API int rta_graph_save_grf(rta_graph_t *g, FILE *f);

/**
 * \brief Generates a 3D stencil on an nx*ny*nz grid (no periodicity),
 * vertex (x,y,z) = x + nx*(y + ny*z), work 1, state \a state_bytes.
 * \param nx,ny,nz the grid's dimensions (>= 1).
 * \param face_bytes bytes exchanged per step across a face.
 * \param state_bytes the state size of every vertex.
 * \param out receives the graph; the caller owns it (rta_graph_destroy()).
 * \param points 7 (faces, weight \a face_bytes) or 27 (faces \a face_bytes,
 *        edges face_bytes/2, corners face_bytes/4; the 4/2/1 is
 *        face_bytes = 4).
 * \return 0; BALLAST_EINVAL (points not 7/27, dims < 1); BALLAST_ERANGE;
 *         BALLAST_ENOMEM.
 */
BALLAST_API int rta_graph_stencil3d(int64_t nx, int64_t ny, int64_t nz,
                                    int points, double face_bytes,
                                    double state_bytes, rta_graph_t **out);

/**
 * \brief Generates a molecular-dynamics linked-cell graph: nx*ny*nz cells of
 * side = cutoff in a periodic box, each exchanging its whole cell with its 26
 * neighbours. The work (and particle count) of a cell follows a density that
 * falls linearly along x from 1 to \a density_ratio (1 = uniform), times
 * \a particles_per_cell, with +-10% seeded noise; state = 48 bytes per
 * particle; edge bytes = \a face_bytes * (particles of both cells) / (2 *
 * particles_per_cell). Dimensions below 3 wrap onto themselves (repeats
 * merge, self-edges vanish).
 * \return 0; BALLAST_EINVAL; BALLAST_ERANGE; BALLAST_ENOMEM.
 */
BALLAST_API int rta_graph_md_cells(int64_t nx, int64_t ny, int64_t nz,
                                   double particles_per_cell,
                                   double density_ratio, double face_bytes,
                                   unsigned seed, rta_graph_t **out);

/* ===================================================================== */
/* Hardware model                                                         */
/* ===================================================================== */

/** Hardware model: network -> nodes -> hwloc tree -> slots. Opaque. */
typedef struct rta_hw rta_hw_t;

/** Options of rta_hw_discover_ex() and rta_hw_create_sim(). */
typedef struct {
  /** NULL: the real topology (hwloc_topology_load). Else an hwloc synthetic
   *  string ("pack:2 core:8"; " pu:1" is appended when the last level is not
   *  PU) or the path of an hwloc XML file (a string ending in ".xml" or
   *  starting with '/' or '.'). */
  const char *node_topology;
  /** NULL: a complete graph of nodes (or the measured links). Else the path
   *  of a SCOTCH target architecture file for the network between nodes
   *  (cmplt, cmpltw, tleaf, mesh2D/3D, torus2D/3D, ...): its terminal
   *  domains are the nodes. */
  const char *inter_arch;
  /** Discovery only. NULL: the environment variable BALLAST_HW_LAYOUT, else
   *  MPI_Comm_split_type(MPI_COMM_TYPE_SHARED). A layout pretends ranks live
   *  on given nodes: "nodes=2;ranks_per_node=2" (consecutive blocks; ','
   *  may replace ';'),
   *  "node_of_rank=0,0,1,1" or "file=PATH" (one node id per line, one line
   *  per rank). */
  const char *layout;
  /** Discovery only: non-zero measures latency and bandwidth between node
   *  leaders (N-1 rounds of a round-robin tournament) and uses them as the
   *  inter-node costs (ignored when inter_arch is set). */
  int measure_links;
  /** Cost of one inter-node hop; 0 means 16. */
  double internode_cost;
  /** Costs of the hwloc levels, from the root level down (n = nlevel_costs);
   *  NULL: defaults (6 between packages, 1 inside one; see
   *  rta_hw_node_level()). Must match the number of levels of the node. */
  const double *level_costs;
  int nlevel_costs;          /**< number of entries of level_costs */
} rta_hw_options_t;

/** \brief Fills \a o with the defaults (all NULL/0). */
BALLAST_API void rta_hw_options_init(rta_hw_options_t *o);

/**
 * \brief Discovers the machine under \a comm: one slot per rank (slot = rank
 * in comm), nodes from MPI_COMM_TYPE_SHARED (or BALLAST_HW_LAYOUT), the hwloc
 * tree of each node and the core each rank is bound to (unbound ranks are
 * reported once at INFO level and spread evenly over the cores). Inter-node
 * costs: a complete graph with cost 16 per hop.
 * Collective over \a comm; every rank gets an identical model, or every rank
 * gets the failing rank's error code. Its MPI calls are the library's own
 * traffic (see mon.h), never counted as the application's.
 * \return 0; BALLAST_EINVAL; BALLAST_EMPI; BALLAST_EHWLOC; BALLAST_EPARSE
 *         (bad layout); BALLAST_ENOMEM. The caller owns *out.
 */
BALLAST_API int rta_hw_discover(MPI_Comm comm, rta_hw_t **out);

/** \brief rta_hw_discover() with options (\a opt may be NULL). Collective.
 * \return as rta_hw_discover(). */
BALLAST_API int rta_hw_discover_ex(MPI_Comm comm, const rta_hw_options_t *opt,
                                   rta_hw_t **out);

/**
 * \brief Builds a simulated machine: \a nnodes identical nodes, each the hwloc
 * topology \a node_topology (synthetic string or XML path; NULL = this
 * machine), one slot per core (slot = node * cores_per_node + core), and the
 * inter-node network from the SCOTCH arch file \a inter_arch (NULL: complete
 * graph). \a nnodes <= 0 takes the arch's size. \a opt may be NULL (only
 * internode_cost and level_costs are used).
 * Every input is checked before SCOTCH or hwloc reads it (both crash on some
 * malformed ones), each refusal a warning naming the file, line and value:
 * the arch file must be one of cmplt N, cmpltw N w.., hcub D, tleaf,
 * ltleaf (a true permutation of the lowest levels), mesh2D/3D/XD,
 * torus2D/3D/XD or sub N t.. ARCH (distinct terminals that exist), with
 * positive sizes, at most 2^20 terminals, link costs and weights at most
 * 2^20, nothing after it; variable-sized and decomposition-defined
 * architectures are refused. An XML node must give cpuset,
 * complete_cpuset, nodeset and complete_nodeset together on every object
 * that has one; a synthetic node has at most 4096 processing units.
 * Not collective. \return 0; BALLAST_EINVAL; BALLAST_EHWLOC (bad topology
 * string or XML); BALLAST_EPARSE (unreadable or malformed arch, or its size
 * differs from nnodes); BALLAST_ERANGE (a synthetic node above 4096 PUs,
 * too many slots); BALLAST_ENOMEM.
 */
BALLAST_API int rta_hw_create_sim(int64_t nnodes, const char *node_topology,
                                  const char *inter_arch,
                                  const rta_hw_options_t *opt,
                                  rta_hw_t **out);

/**
 * \brief Measures (again) latency and bandwidth between node leaders and
 * makes them the inter-node costs: N-1 rounds of a round-robin tournament,
 * each leader ping-pongs with one partner per round (8 B and 1 MiB
 * messages). Collective over \a comm, which must be the communicator the
 * model was discovered on. \return 0; BALLAST_EINVAL; BALLAST_ESTATE (a
 * simulated model); BALLAST_EMPI; BALLAST_ENOMEM.
 */
BALLAST_API int rta_hw_refresh_links(rta_hw_t *hw, MPI_Comm comm);

/** \brief Frees a model. NULL does nothing. */
BALLAST_API void rta_hw_destroy(rta_hw_t *hw);

/** \brief The model's slots.
 * \return the number of slots (ranks, or cores of a simulated machine);
 *         BALLAST_EINVAL for NULL. */
BALLAST_API int rta_hw_nslots(const rta_hw_t *hw);
/** \brief The model's nodes.
 * \return the number of nodes; BALLAST_EINVAL for NULL. */
BALLAST_API int rta_hw_nnodes(const rta_hw_t *hw);
/** \brief The node of \a slot.
 * \return the node index (>= 0); BALLAST_EINVAL for NULL; BALLAST_ERANGE for
 *         a slot out of range. */
BALLAST_API int rta_hw_slot_node(const rta_hw_t *hw, int slot);
/** \brief The slots on \a node.
 * \return the number of slots on it; BALLAST_EINVAL for NULL; BALLAST_ERANGE
 *         for a node out of range. */
BALLAST_API int rta_hw_node_nslots(const rta_hw_t *hw, int node);
/** \brief The core (leaf of the node's hwloc tree) of \a slot.
 * \return the core's index (>= 0); BALLAST_EINVAL for NULL; BALLAST_ERANGE
 *         for a slot out of range. */
BALLAST_API int rta_hw_slot_core(const rta_hw_t *hw, int slot);
/** \brief Whether the slots' core bindings were known.
 * \return 1 when every slot's core binding was known (not guessed), 0 when
 *         some were guessed; BALLAST_EINVAL for NULL. */
BALLAST_API int rta_hw_bound(const rta_hw_t *hw);

/**
 * \brief Number of tree levels of \a node (hwloc levels with arity > 1, from
 * the root down; the leaves are cores).
 * \return the number of levels; BALLAST_EINVAL for NULL; BALLAST_ERANGE for
 *         a node out of range.
 */
BALLAST_API int rta_hw_node_nlevels(const rta_hw_t *hw, int node);

/**
 * \brief Level \a level (0 = top) of \a node's tree: its \a arity (children
 * per object), the \a cost between two cores whose lowest common object is at
 * this level, and the hwloc type name of that object (static string).
 * Default costs: a level above the packages (Machine, Group of packages) 6;
 * levels inside a package count up from 1 at the level just above the cores.
 * Any out-pointer may be NULL. \return 0; BALLAST_EINVAL for NULL;
 * BALLAST_ERANGE for a node or level out of range.
 */
BALLAST_API int rta_hw_node_level(const rta_hw_t *hw, int node, int level,
                                  int *arity, double *cost,
                                  const char **type);

/**
 * \brief Distance between two slots (see the file comment): 0 for a == b.
 * \return 0 and \a *out; BALLAST_EINVAL for NULL \a hw or \a out;
 *         BALLAST_ERANGE for a slot out of range (\a *out unchanged).
 */
BALLAST_API int rta_hw_slot_distance(const rta_hw_t *hw, int a, int b,
                                     double *out);

/**
 * \brief Distance between two nodes (0 for a == b).
 * \return 0 and \a *out; BALLAST_EINVAL for NULL \a hw or \a out;
 *         BALLAST_ERANGE for a node out of range (\a *out unchanged).
 */
BALLAST_API int rta_hw_node_distance(const rta_hw_t *hw, int a, int b,
                                     double *out);

/**
 * \brief Measured link between two node leaders: latency in seconds and
 * bandwidth in bytes/s. Either out-pointer may be NULL. \return 0;
 * BALLAST_ENOTFOUND when links were not measured; BALLAST_EINVAL for NULL
 * \a hw; BALLAST_ERANGE for a node out of range.
 */
BALLAST_API int rta_hw_link(const rta_hw_t *hw, int a, int b, double *latency,
                            double *bandwidth);

/** \brief Prints the model for a human: nodes, slots, levels, links. */
BALLAST_API void rta_hw_print(const rta_hw_t *hw, FILE *f);

/* ===================================================================== */
/* Mapping                                                                */
/* ===================================================================== */

/** Mapping strategies, for use and for comparison. */
typedef enum {
  RTA_MAP_TWOPHASE,   /**< ballast: SCOTCH tasks->nodes, then per node tleaf */
  RTA_MAP_TLEAF,      /**< one SCOTCH pass onto the whole machine as a tleaf */
  RTA_MAP_BLOCK,      /**< consecutive vertices in equal-work blocks per slot */
  RTA_MAP_ROUNDROBIN, /**< vertex v -> slot v mod nslots */
  RTA_MAP_RANDOM      /**< uniformly random slot per vertex (seeded) */
} rta_strategy_t;

/** Number of strategies (for loops over all of them). */
#define RTA_MAP_NSTRATEGIES 5

/** \brief Strategy name: "twophase", "tleaf", "block", "roundrobin", "random"
 * (static strings); "unknown" for a value outside the list. */
BALLAST_API const char *rta_strategy_name(rta_strategy_t s);
/** \brief Parses a name of rta_strategy_name(). \return 0 or BALLAST_EINVAL. */
BALLAST_API int rta_strategy_parse(const char *name, rta_strategy_t *s);

/** Quality of a mapping, computed by ballast (not by SCOTCH). */
typedef struct {
  double max_avg_load_core; /**< max over slots of work / average (1 = ideal) */
  double max_avg_load_node; /**< max over nodes of work/slots / average */
  double edge_cut;          /**< bytes on edges whose ends are on two slots */
  double hop_bytes;         /**< sum over edges of bytes * distance */
  double internode_volume;  /**< bytes on edges whose ends are on two nodes */
  int64_t tasks_migrated;   /**< vertices whose slot changed (0 without prev) */
  double bytes_migrated;    /**< state bytes of those vertices */
  double seconds;           /**< wall time of the whole call */
  double seconds_build;     /**< building SCOTCH graphs and architectures */
  double seconds_phase1;    /**< SCOTCH phase 1 (or the single pass) */
  double seconds_phase2;    /**< SCOTCH phase 2, all nodes */
  double seconds_metrics;   /**< computing this record */
} rta_map_quality_t;

/** Options of rta_map_graph_ex(). */
typedef struct {
  /** Total load imbalance allowed (max/avg - 1); each SCOTCH phase of the
   *  two-phase strategy gets about half (they compound). 0 means 0.03;
   *  negative, NaN or infinite: BALLAST_EINVAL. */
  double balrat;
  /** Steps expected between two remaps: migration cost of a vertex =
   *  state_bytes / steps, in the unit of the edge bytes. 0 means 10;
   *  negative, NaN or infinite: BALLAST_EINVAL. */
  double steps_between_remaps;
  /** Seed of SCOTCH's (deterministic) random generator and of RANDOM. */
  unsigned seed;
  /** Non-zero: SCOTCH's own strategy built from these SCOTCH_STRAT* flags
   *  (SCOTCH_stratGraphMapBuild) instead of ballast's default. */
  int scotch_flags;
  /** A SCOTCH mapping strategy string used as is for first mappings (NULL:
   *  ballast's default, recursive bipartitioning with one multilevel pass
   *  and FM refinement, about 3x faster than SCOTCH's default and as good
   *  on stencils). Remaps (prev given) use SCOTCH_graphRemap, which
   *  accounts for the migration cost, with ballast's remap strategy
   *  (SCOTCH's STRATREMAP one with longer k-way FM refinement) unless
   *  scotch_flags is set. */
  const char *scotch_strategy;
  /** Non-zero: with rta_map_graph_par(), phase 1 of RTA_MAP_TWOPHASE runs
   *  distributed over the communicator's ranks with PT-Scotch
   *  (SCOTCH_dgraphMap of the graph split in vertex blocks, onto a weighted
   *  complete graph of the nodes, weights = cores per node; the node of every
   *  vertex is then gathered on every rank), for graphs too large for one
   *  rank's phase 1. First mappings only: remaps (prev given), builds
   *  without PT-Scotch and rta_map_graph_ex() keep the sequential phase 1.
   *  PT-Scotch runs with its SCOTCH_STRATSPEED strategy and is not
   *  deterministic: the result depends on the number of ranks and may vary
   *  between runs (every rank of one call still gets the same mapping). */
  int distributed_phase1;
  /** Non-zero: a remap (prev given) returns SCOTCH_graphRemap's result as
   *  is. 0 (default): one more candidate, a diffusion of the load from the
   *  old mapping; both are refined greedily and the one with the lowest
   *  combined cost = hop-bytes + sum over moved vertices of state x
   *  distance(old, new) / steps_between_remaps among those within the
   *  balance tolerance is chosen. Then the default's rule: the lowest
   *  hop-bytes for no more migration than SCOTCH's remap (tasks and state
   *  bytes; the chosen one's when larger): multilevel k-way FM with hill
   *  climbing, first with the nodes as parts, then the cores, every move
   *  priced alike and none taking the migration above that budget; the
   *  result replaces the choice when its hop-bytes are lower and its
   *  imbalance no larger. About 1-2x the time of a plain remap. */
  int remap_scotch_only;
} rta_map_options_t;

/** \brief Fills \a o with the defaults. */
BALLAST_API void rta_map_options_init(rta_map_options_t *o);

/**
 * \brief Maps the vertices of \a g onto the slots of \a hw.
 * Deterministic: identical inputs give identical output on every rank and
 * every run (SCOTCH runs with its deterministic, fixed-seed options).
 * Not collective; every rank may call it on the same inputs to agree without
 * communication. The first call after rta_graph_add_edge() merges the pending
 * edges into the graph's CSR (the graph is logically const, but two threads
 * must not map or evaluate one graph at the same time).
 * \param g the task graph.
 * \param hw the hardware model.
 * \param s the strategy.
 * \param prev NULL, or the previous slot of every vertex (-1: none): the
 *        SCOTCH strategies then remap (SCOTCH_graphRemap) with a migration
 *        cost from the state sizes, and the quality counts what moves.
 * \param seed seeds SCOTCH and RANDOM.
 * \param slot_of_vertex out: nvert slots (caller-allocated).
 * \param q out, may be NULL: the quality record.
 * \return 0; BALLAST_EINVAL; BALLAST_ESCOTCH (SCOTCH failed, or its integer
 *         width differs from the header's); BALLAST_EOVERFLOW; BALLAST_ENOMEM.
 */
BALLAST_API int rta_map_graph(const rta_graph_t *g, const rta_hw_t *hw,
                              rta_strategy_t s, const int64_t *prev,
                              unsigned seed, int64_t *slot_of_vertex,
                              rta_map_quality_t *q);

/** \brief rta_map_graph() with options (\a opt may be NULL: defaults).
 * \return as rta_map_graph(). */
BALLAST_API int rta_map_graph_ex(const rta_graph_t *g, const rta_hw_t *hw,
                                 rta_strategy_t s, const int64_t *prev,
                                 const rta_map_options_t *opt,
                                 int64_t *slot_of_vertex,
                                 rta_map_quality_t *q);

/**
 * \brief rta_map_graph_ex(), with phase 2 of RTA_MAP_TWOPHASE shared among
 * the ranks of \a comm (node k's share is mapped by rank k mod size, then
 * gathered), so it runs in parallel over the nodes (one phase-2 mapping per node, spread over
 * the ranks).
 * Other strategies run redundantly on every rank. Collective over \a comm:
 * every rank passes the same inputs and gets the same full mapping; an error
 * on one rank is returned everywhere (BALLAST_EREMOTE where it was remote).
 * Its MPI calls are the library's own traffic (see mon.h), never counted as
 * the application's.
 * \return as rta_map_graph_ex(), plus BALLAST_EMPI, BALLAST_EREMOTE.
 */
BALLAST_API int rta_map_graph_par(const rta_graph_t *g, const rta_hw_t *hw,
                                  rta_strategy_t s, const int64_t *prev,
                                  const rta_map_options_t *opt, MPI_Comm comm,
                                  int64_t *slot_of_vertex,
                                  rta_map_quality_t *q);

/**
 * \brief Maps \a g onto \a hw one vertex per slot: a permutation, for graphs
 * whose vertices are the ranks themselves (MPI topology reordering, one task
 * per rank). The two-phase mapping (RTA_MAP_TWOPHASE, first mapping) runs
 * first; SCOTCH balances only within a tolerance, so a slot that receives
 * several vertices keeps the lowest-numbered one and each other one takes the
 * free slot nearest (rta_hw_slot_distance(), then the lowest number) to the
 * slot SCOTCH chose. Deterministic.
 * \param g the graph, with as many vertices as \a hw has slots.
 * \param hw the hardware model.
 * \param opt mapping options (may be NULL: defaults).
 * \param comm MPI_COMM_NULL: runs alone (not collective). Otherwise collective
 *        over \a comm as rta_map_graph_par() (phase 2 shared among the
 *        ranks); every rank passes the same inputs and gets the same result.
 * \param slot_of_vertex out: nvert slots, each slot exactly once.
 * \param q out, may be NULL: the quality of the result (seconds = the whole
 *        call).
 * \return 0; BALLAST_EINVAL (NULL arguments, or nvert differs from the number
 *         of slots); as rta_map_graph_par() otherwise.
 */
BALLAST_API int rta_map_permutation(const rta_graph_t *g, const rta_hw_t *hw,
                                    const rta_map_options_t *opt, MPI_Comm comm,
                                    int64_t *slot_of_vertex, rta_map_quality_t *q);

/**
 * \brief Computes the quality of a given mapping (seconds* fields 0 except
 * seconds_metrics).
 * \param g the task graph. \param hw the hardware model.
 * \param slot_of_vertex the slot of every vertex.
 * \param prev the previous slot of every vertex, to count what moved; may be
 *        NULL.
 * \param q receives the quality record.
 * \return 0 or BALLAST_EINVAL
 * (a slot out of range), BALLAST_ENOMEM.
 */
BALLAST_API int rta_map_evaluate(const rta_graph_t *g, const rta_hw_t *hw,
                                 const int64_t *slot_of_vertex,
                                 const int64_t *prev, rta_map_quality_t *q);

#ifdef __cplusplus
}
#endif
#endif /* BALLAST_RTA_MAP_H */
