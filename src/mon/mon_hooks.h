/*
 * What mon offers the layers above pia (the task runtime and load balancing):
 * whether monitoring is on, and extra sections of the end-of-run report. They
 * read performance data through pia, never through mon's tables; this header
 * is the whole of mon they may include (tools/checks/layers.py checks it).
 * The library's own MPI traffic is bracketed in common (ballast__lib_begin).
 */
#ifndef BALLAST_MON_HOOKS_H
#define BALLAST_MON_HOOKS_H

#include <stdio.h>

#include <mpi.h>

/** Non-zero once mon__init ran and monitoring is on (BALLAST_MONITOR!=0). */
int mon__active(void);

/* ---- extra report sections (report_ext.c) -----------------------------------
 * Another module (rta's load balancing) adds its own lines to the end-of-run
 * report and one member to the profile, without mon knowing what they say.
 */

typedef struct {
  const char *name;                    /* profile member name; unique (same name: replaced) */
  void (*report)(FILE *f, void *user); /* rank 0, inside the report; lines start with "# " */
  char *(*json)(void *user);           /* rank 0: a malloc'ed JSON value, or NULL */
  void *user;
  /* Every rank, NULL or a malloc'ed JSON value: the member \a name of that
   * rank's part of the profile ("ranks_data"). May be left NULL. */
  char *(*rank_json)(void *user);
} mon__section_t;

/** Adds (or replaces, by name) a section. 0; BALLAST_EINVAL; BALLAST_ENOMEM when full. */
int mon__report_add_section(const mon__section_t *s);

/* ---- topology reordering (wrap_topo.c) --------------------------------------
 * MPI_Cart_create, MPI_Graph_create and MPI_Dist_graph_create(_adjacent) with
 * reorder = 1 ask MPI to renumber the ranks so that neighbours sit close. mon's
 * wrappers build the declared graph and ask a mapper for the permutation; the
 * mapper is set by a layer that sees the map engine (src/topo), since mon must
 * not. With no mapper set, the calls go to MPI unchanged.
 */

/** The graph a topology constructor declared: vertex v is rank v of the
 *  communicator it creates; arcs in both directions (CSR). */
typedef struct {
  const char *call;  /* "MPI_Cart_create", ... */
  int n;             /* vertices = size of the old communicator */
  const int *xadj;   /* n + 1 offsets into adj */
  const int *adj;    /* neighbour vertices */
  const int *weight; /* per arc, >= 1 */
} mon__topo_graph_t;

/** What a reordering did, for the report. */
typedef struct {
  double hop_bytes_before; /* identity: rank v of the old communicator hosts v */
  double hop_bytes_after;
  double seconds;          /* model, mapping and repair */
  int nodes;               /* nodes of the hardware model */
  int moved;               /* ranks whose number changed */
} mon__topo_result_t;

/** Collective over \a comm (n ranks): sets *vertex to the vertex this rank
 *  hosts, which becomes its rank in the new communicator; the vertices of all
 *  ranks form a permutation. Same return code on every rank. */
typedef int (*mon__topo_mapper_t)(MPI_Comm comm, const mon__topo_graph_t *g,
                                  int *vertex, mon__topo_result_t *res);

/** Sets the mapper (NULL: none). Called once, when the library is loaded. */
void mon__topo_set_mapper(mon__topo_mapper_t fn);

/* ---- regions left by MPI_Finalize (regions.c) -------------------------------
 * MPI_Finalize leaves the regions still open on its thread, innermost first.
 * The task runtime ends a task whose region that was right after it, so the
 * tools' task and region events stay nested (ballast/tool.h).
 */

/** Regions open on the calling thread (0 outside any, or before mon runs). */
int mon__region_depth(void);

/** Called after MPI_Finalize left a region (its region_exit raised), with
 *  the depth the region had (1 = outermost). */
typedef void (*mon__region_left_fn)(int depth);

/** Sets that hook (NULL: none). */
void mon__set_finalize_left_hook(mon__region_left_fn fn);

#endif
