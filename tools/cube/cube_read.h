/* Cube4 reader for ballast-cube (tools/cube): the metadata of a .cubex
 * archive (a POSIX ustar archive holding anchor.xml and, per metric id N,
 * N.index and N.data) and the rows of chosen call paths, read with pread so
 * that a caller reads only what it owns. Not part of the library.
 *
 * Format facts (read from CubeLib's writer, cubew, in Score-P's vendored
 * copy, and the notes on CubeLib 4.3.4's reader): anchor.xml
 * holds <cube version="4.x"> with <metrics> (nested <metric id type>,
 * <uniq_name>, <disp_name>, <dtype>, <uom>), <program> (<region id> with
 * <name>, then nested <cnode id calleeId>), <system> (systemtreenode /
 * locationgroup / location, or the 4.0 machine / node / process / thread).
 * N.index: "CUBEX.INDEX", uint32 endianness mark 1, uint16 version 0, uint8
 * format (3 dense, 1 sparse: uint32 count and that many uint32 row
 * positions). N.data: "CUBEX.DATA", then rows of one value per location in
 * location-id order. Row order: an EXCLUSIVE metric's rows follow the call
 * tree depth first (each root in turn), an INCLUSIVE metric's rows the root,
 * then all children of a node, then each child recursively; a SIMPLE
 * metric's rows the cnode ids in order.
 *
 * Every problem is a negative BALLAST_E* code with one message in err. */
#ifndef BALLAST_CUBE_READ_H
#define BALLAST_CUBE_READ_H

#include <float.h>
#include <stddef.h>
#include <stdint.h>

#define CUBE_ERRLEN 512

typedef enum {
  CUBE_EXCLUSIVE, /* rows hold exclusive values */
  CUBE_INCLUSIVE, /* rows hold inclusive values */
  CUBE_SIMPLE,    /* exclusive == inclusive, rows by cnode id */
  CUBE_DERIVED    /* computed by CubePL: no rows in the archive */
} cube_kind_t;

typedef enum { CUBE_AGG_SUM, CUBE_AGG_MIN, CUBE_AGG_MAX } cube_agg_t;

typedef enum {
  CUBE_DT_DOUBLE, CUBE_DT_UINT64, CUBE_DT_INT64, CUBE_DT_MINDOUBLE,
  CUBE_DT_MAXDOUBLE
} cube_dtype_t;

typedef struct {
  int64_t id;
  char *uniq_name, *disp_name, *dtype_name, *uom;
  int parent;          /* index of the parent metric, -1 for a root */
  cube_kind_t kind;
  cube_dtype_t dtype;  /* meaningful when has_data */
  cube_agg_t agg;      /* SUM, or MIN/MAX for MINDOUBLE/MAXDOUBLE */
  int has_data;        /* N.index and N.data present and valid */
  int swap;            /* data written big-endian */
  uint64_t data_off;   /* archive offset of row 0 (after the marker) */
  int64_t nrows;       /* rows in N.data */
  int64_t *row_of;     /* cnode index -> row in N.data, -1: none (zero) */
} cube_metric_t;

/** 1 when \a v is a MINDOUBLE or MAXDOUBLE metric's "no value" (its
 *  aggregation's identity: nothing was measured there, e.g. the shortest
 *  MPI call of a region that made none; DBL_MAX as Score-P and ballast
 *  write it, or an infinity after aggregation), 0 for any real value. */
static inline int cube_no_value(const cube_metric_t *m, double v) {
  return (m->agg == CUBE_AGG_MIN && v >= DBL_MAX) || (m->agg == CUBE_AGG_MAX && v <= -DBL_MAX);
}

typedef struct {
  char *path;
  int fd;
  char version[16];
  int nmetric;
  cube_metric_t *metric;
  int nregion;
  int64_t *region_id;
  char **region_name;
  /* Call tree, cnode index = position in anchor.xml (document order, so
   * depth first): */
  int64_t ncnode;
  int64_t *cnode_id;   /* the id in the file */
  int32_t *parent;     /* -1 for a root */
  int32_t *region;     /* index into region_* */
  int32_t *depth;
  int64_t *child_start; /* CSR of children in document order, ncnode + 1 */
  int32_t *child;
  int64_t *subtree;    /* cnodes in the subtree, itself included */
  int32_t nroot;
  /* Locations, sorted by id (row position = index here): */
  int64_t nloc;
  int64_t *loc_id;
  char **loc_name;
  int64_t *loc_rank;   /* rank of its process (location group) */
  int64_t *loc_thread; /* its own rank (thread number) */
} cube_t;

/* Opens a .cubex: reads the archive's table of members, anchor.xml and
 * every N.index; checks each N.data's marker and size. Reads no rows. */
int cube_open(const char *path, cube_t **out, char *err, size_t errlen);

/* Closes and frees; NULL does nothing. */
void cube_close(cube_t *c);

/* Reads the rows of metric m for the n cnodes listed (any order), converted
 * to double: out[i * nloc + l]. Rows that are contiguous in the file are
 * read with one pread. A cnode without a row (sparse index) gives zeros. */
int cube_read_rows(const cube_t *c, int m, const int32_t *cnodes, int64_t n,
                   double *out, char *err, size_t errlen);

/* The metric whose uniq_name (or, failing that, disp_name) is name, or -1. */
int cube_find_metric(const cube_t *c, const char *name);

/* The cnode named by "id:N" (file id) or a call path of region names joined
 * by '/' from a root ("main/solve/MPI_Send"); -1 when there is none. */
int64_t cube_find_cnode(const cube_t *c, const char *spec);

/* Writes the call path of cnode i ("main/solve") into buf. */
void cube_cnode_path(const cube_t *c, int64_t i, char *buf, size_t len);

/* Bytes of metadata held (arrays and strings), for the memory report. */
size_t cube_meta_bytes(const cube_t *c);

#endif
