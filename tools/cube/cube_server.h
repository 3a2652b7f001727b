/* ballast-cube's distributed profile (tools/cube): the call tree's cnodes
 * owned by ranks, each rank holding the metadata and the rows of its own
 * cnodes only, and the passes that answer queries: subtree (inclusive)
 * values with asynchronous exchanges between the owners, children's values
 * for exclusive values of inclusive metrics, and the gather of results on
 * rank 0. Every call here is collective over the server's communicator
 * unless it says otherwise. */
#ifndef BALLAST_CUBE_SERVER_H
#define BALLAST_CUBE_SERVER_H

#include <stdint.h>

#include <mpi.h>

#include "cube_read.h"

typedef enum {
  DIST_PLAIN,      /* breadth-first order cut in equal blocks */
  DIST_ROUNDROBIN, /* breadth-first index mod ranks */
  DIST_RANDOM,     /* seeded shuffle cut in equal blocks */
  DIST_CHAIN,      /* deepest chains kept whole, longest first to the least loaded */
  DIST_BALLAST     /* ballast's mapping engine on the call tree as a task graph */
} dist_t;

#define DIST_N 5

const char *dist_name(dist_t d);
int dist_parse(const char *s, dist_t *d);

/* owner[i] for every cnode, identical on every rank (collective for
 * DIST_BALLAST, which discovers the machine). 0 or a BALLAST_E* code. */
int dist_compute(const cube_t *c, dist_t d, unsigned seed, MPI_Comm comm,
                 int32_t *owner, char *err, size_t errlen);

typedef struct {
  cube_t *c;
  MPI_Comm comm;
  int rank, size;
  int32_t *owner;  /* cnode -> rank */
  int64_t nown;
  int32_t *own;    /* owned cnodes, ascending (depth-first order) */
  int64_t *slot;   /* cnode -> index in own, -1 when not owned */
  double **rows;   /* per metric with data: nown * nloc values, else NULL */
  double *cost;    /* per owned cnode: seconds of query work on its rows */
  size_t row_bytes;
  int tag;         /* advances per pass so passes never mix messages */
} srv_t;

/* Opens path on every rank of comm, distributes the call tree and reads
 * the owned rows. On error every rank returns the same code; err holds
 * the message on the rank that failed (and a notice elsewhere). */
int srv_open(const char *path, dist_t d, unsigned seed, MPI_Comm comm,
             srv_t **out, char *err, size_t errlen);
void srv_close(srv_t *s);

/* A selection of locations: n indexes into the sorted locations, or
 * all (n < 0). */
typedef struct {
  int64_t n;
  int64_t *idx;
} sel_t;

/* Value of metric m at cnode x over the selection, inclusive or exclusive;
 * per_loc: one value per selected location, else one aggregated value.
 * The result (w values) lands in out on rank 0. 0 or a BALLAST_E* code (the
 * same on every rank; err on rank 0). */
int srv_value(srv_t *s, int m, int64_t x, int inclusive, const sel_t *sel,
              int per_loc, double *out, char *err, size_t errlen);

/* The k cnodes with the largest values of metric m (inclusive or
 * exclusive, over all locations); on rank 0 cnode[] and val[] (k entries,
 * fewer when the tree is smaller; *nout says how many). Ties: lower cnode
 * index first. */
int srv_top(srv_t *s, int m, int inclusive, int k, int64_t *cnode, double *val,
            int *nout, char *err, size_t errlen);

/* Remaps the call tree by the measured query cost when the ranks' costs
 * differ by more than 5% (max/mean > 1.05; otherwise nothing moves and
 * the costs keep accumulating): the cnodes as ballast's
 * task graph (work = each cnode's measured seconds plus 1% of the mean, state
 * = its rows), remapped from the current owners with the mapping engine's
 * migration-aware two-phase remap (rta_map_graph with prev), then the rows of
 * the cnodes that move are sent to their new owners (one MPI_Alltoallv of
 * rows) and the costs restart. On rank 0: *moved cnodes, and the measured
 * cost's max/mean over ranks before and as the new owners would have had it.
 * 0 or a BALLAST_E* code, the same on every rank. */
int srv_rebalance(srv_t *s, unsigned seed, int64_t *moved, double *imb_before,
                  double *imb_after, char *err, size_t errlen);

/* The high-water mark of resident memory (VmHWM, KiB) of this process. */
long srv_vmhwm_kib(void);

#endif
