/*
 * BALLAST_CUBE=path: the run's profile as a Cube4 archive, written at
 * MPI_Finalize by every rank together (README, "Cube4 profiles").
 *
 * The three dimensions:
 *  - metrics (the table below), after Score-P's conventions: visits
 *    (exclusive), time (inclusive) with the MPI time as its child, so that
 *    Cube shows the rest of the time as computation, min_time/max_time of a
 *    single MPI call, bytes, CPU time and ballast's own time;
 *  - call paths: the root is ballast_main, regions (tasks included) nest
 *    as they nested in the run, and each MPI activity is a leaf under the
 *    innermost region it was called in;
 *  - system: one machine, one node per host name, one "MPI Rank r"
 *    location group per rank with one thread location (a rank's threads
 *    are summed, as in the JSON profile).
 *
 * Agreeing on the call tree: cube_tree.c (the union of every rank's call
 * paths, merged up a binomial tree of ranks; cnode ids in preorder).
 *
 * Writing. Member sizes are known once U and P are: the archive is
 * anchor.xml, then for each metric N.index and N.data (ustar, every member
 * padded to 512 bytes, two zero blocks at the end). Rank 0 writes the
 * headers, anchor.xml and the index members; the data members' columns
 * (one value per row and location, rows P values apart) reach the file
 * through one strided file view and one collective MPI-IO write: a host's
 * locations are consecutive, so its first rank gathers them and writes one
 * block per row (each rank its own column when that gather would be too
 * big). anchor.xml follows what Score-P writes (its system tree elements
 * carry "Id"), and reads back in CubeLib's grammar. Rows of
 * an exclusive metric are in preorder (the cnode ids); rows of an
 * inclusive metric in CubeLib's "wide" order: the root, then all children
 * of a node, then each child's subtree the same way. Values are little
 * endian. The archive is written as PATH.tmp and renamed once complete.
 *
 * Everything goes through PMPI on a duplicate of MPI_COMM_WORLD and is
 * counted nowhere. Values stored follow Score-P: an inclusive metric's
 * rows hold inclusive values, an exclusive metric's exclusive values.
 */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/common_internal.h"
#include "common/util.h"
#include "mon/mon_core.h"
#include "mon/cube_internal.h"

typedef mon__cube_ent_t ent_t;
typedef mon__cube_local_t local_t;
typedef mon__cube_list_t list_t;
typedef mon__cube_tree_t tree_t;
#define FAILED MON__CUBE_FAILED
#define CHUNK ((size_t)1 << 30) /* bytes per MPI-IO call: counts are int */

enum { M_VISITS, M_TIME, M_MPI, M_MIN, M_MAX, M_BYTES, M_SENT, M_RECV, M_CPU, M_OWN,
       M_WAIT, NMET };

typedef struct {
  const char *uniq, *disp, *dtype, *uom, *descr;
  int incl;   /* 1: INCLUSIVE (rows hold inclusive values, wide order) */
  int parent; /* parent metric, -1 for a root; children follow parents */
} metdef_t;

static const metdef_t metrics[NMET] = {
    {"visits", "Visits", "UINT64", "occ",
     "Number of visits: regions entered and left, MPI calls made", 0, -1},
    {"time", "Time", "DOUBLE", "sec",
     "Wall time, inclusive: a region from begin to end, an MPI call its duration", 1, -1},
    {"mpi", "MPI", "DOUBLE", "sec",
     "Time in MPI calls (MPI_Init included); the rest of Time is computation", 1, M_TIME},
    {"min_time", "Minimum Inclusive Time", "MINDOUBLE", "sec",
     "Shortest single MPI call (regions keep no per-visit minimum)", 0, -1},
    {"max_time", "Maximum Inclusive Time", "MAXDOUBLE", "sec",
     "Longest single MPI call (regions keep no per-visit maximum)", 0, -1},
    {"bytes_transferred", "Bytes transferred", "UINT64", "bytes",
     "Bytes sent plus received by MPI calls (a message counts at both ends; "
     "collectives: send plus receive buffers)", 0, -1},
    {"bytes_sent", "Bytes sent", "UINT64", "bytes",
     "Point-to-point and one-sided bytes sent while the region was the innermost one",
     0, -1},
    {"bytes_received", "Bytes received", "UINT64", "bytes",
     "Point-to-point and one-sided bytes received while the region was the innermost one",
     0, -1},
    {"cpu_time", "CPU time", "DOUBLE", "sec",
     "CPU time, inclusive (regions: their threads' CPU time; ballast_main: the process's)",
     1, -1},
    {"ballast_time", "ballast time", "DOUBLE", "sec",
     "ballast's own time on the rank (mapping, migration, reports), at the root", 0, -1},
    {"ballast_wait", "ballast wait", "DOUBLE", "sec",
     "The part of ballast's own time spent waiting for other ranks", 0, M_OWN},
};

/* ---- this rank's values ------------------------------------------------------------------ */

static void put_u64(uint64_t *v, uint64_t x) { *v = x; }
static void put_dbl(uint64_t *v, double x) { memcpy(v, &x, sizeof x); }
static double get_dbl(const uint64_t *v) {
  double x;
  memcpy(&x, v, sizeof x);
  return x;
}

/* The values of one of this rank's call paths at cnode c (v[m * n + c]). */
static void ent_values(uint64_t *v, uint64_t n, uint64_t c, const ent_t *e,
                       const mon__partner_t *vol) {
  if (e->act < 0) {
    mon__regstats_t s;
    mon__region_read(e->region, &s);
    mon__partner_t p = vol[e->region];
    put_u64(&v[M_VISITS * n + c], s.count);
    put_dbl(&v[M_TIME * n + c], s.wtime);
    put_dbl(&v[M_CPU * n + c], s.cputime);
    put_u64(&v[M_SENT * n + c], p.bytes);
    put_u64(&v[M_RECV * n + c], p.rbytes);
    if (e->region == 0) {
      double own = 0, wait = 0;
      ballast__own_read(&own, &wait);
      put_dbl(&v[M_OWN * n + c], own);
      put_dbl(&v[M_WAIT * n + c], wait);
    }
    return;
  }
  mon__actstats_t s = {0, 0, 0.0, INFINITY, 0.0};
  mon__act_read(e->act, e->region, &s);
  put_u64(&v[M_VISITS * n + c], s.ncalls);
  put_dbl(&v[M_TIME * n + c], s.tsum);
  put_dbl(&v[M_MPI * n + c], s.tsum);
  if (s.ncalls) {
    put_dbl(&v[M_MIN * n + c], s.tmin);
    put_dbl(&v[M_MAX * n + c], s.tmax);
  }
  put_u64(&v[M_BYTES * n + c], s.nbytes);
}

/* Every metric's column of this location, rows in each metric's order,
 * little endian. NULL on OOM. */
static uint64_t *values(const tree_t *t, const local_t *l) {
  uint64_t n = t->n;
  int nr = mon__region_count();
  uint64_t *v = calloc(NMET * n, sizeof *v), *rows = malloc(NMET * n * sizeof *rows);
  mon__partner_t *vol = malloc((size_t)(nr > 0 ? nr : 1) * sizeof *vol);
  if (!v || !rows || !vol) {
    free(v);
    free(rows);
    free(vol);
    return NULL;
  }
  mon__partner_sum_regions(vol, nr);
  for (uint64_t c = 0; c < n; c++)
    put_dbl(&v[M_MIN * n + c], DBL_MAX); /* MINDOUBLE's "no value" */
  /* both sorted: one walk finds each local path's cnode */
  uint64_t c = 0;
  for (size_t i = 0; i < l->n; i++) {
    const ent_t *e = &l->e[i];
    while (c < n && mon__cube_path_cmp(t->s + t->off[c], t->len[c], l->buf + e->off, e->len) < 0)
      c++;
    if (c < n)
      ent_values(v, n, c, e, vol);
  }
  /* MPI time of a region: its subtree's MPI calls (children after parents) */
  for (uint64_t k = n; k-- > 1;)
    put_dbl(&v[M_MPI * n + (uint64_t)t->parent[k]],
            get_dbl(&v[M_MPI * n + (uint64_t)t->parent[k]]) + get_dbl(&v[M_MPI * n + k]));
  const uint16_t probe = 1;
  int big = *(const unsigned char *)&probe == 0;
  for (int m = 0; m < NMET; m++)
    for (uint64_t k = 0; k < n; k++) {
      uint64_t x = v[m * n + k];
      if (big)
        x = __builtin_bswap64(x);
      rows[m * n + (metrics[m].incl ? t->wide[k] : k)] = x;
    }
  free(v);
  free(vol);
  return rows;
}

/* ---- the system tree ----------------------------------------------------------------------- */

typedef struct {
  int loc;        /* this rank's location id */
  MPI_Comm node;  /* this rank's host: locations base .. base + lsize - 1 */
  int base, lrank, lsize;
  int nnodes;     /* rank 0: hosts, their names and sizes ... */
  char *names;    /* nnodes x MPI_MAX_PROCESSOR_NAME */
  int *sizes;
  int *rank_of;   /* ... and the world rank of each location id */
} sys_t;

static void sys_free(sys_t *y) {
  if (y->node != MPI_COMM_NULL)
    PMPI_Comm_free(&y->node);
  free(y->names);
  free(y->sizes);
  free(y->rank_of);
}

/* Ranks grouped by host name (hosts in the order of their lowest rank),
 * location ids in that order. 0 or BALLAST_ENOMEM (on every rank). Hosts
 * are split by a 31-bit hash of the name: two hosts whose names collide
 * would share one node of the system tree (named after the first), their
 * values still each rank's own. */
static int sys_build(MPI_Comm c, int rank, int size, sys_t *y) {
  memset(y, 0, sizeof *y);
  y->node = MPI_COMM_NULL;
  char name[MPI_MAX_PROCESSOR_NAME] = {0};
  int nl = 0;
  PMPI_Get_processor_name(name, &nl);
  uint64_t h = ballast__fnv1a(BALLAST__FNV_OFFSET, name, strlen(name));
  MPI_Comm node = MPI_COMM_NULL, leaders = MPI_COMM_NULL;
  PMPI_Comm_split(c, (int)(h & 0x7fffffff), rank, &node);
  int lrank, lsize;
  PMPI_Comm_rank(node, &lrank);
  PMPI_Comm_size(node, &lsize);
  PMPI_Comm_split(c, lrank == 0 ? 0 : MPI_UNDEFINED, rank, &leaders);
  int base[2] = {0, 0}; /* first location id, number of hosts */
  if (leaders != MPI_COMM_NULL) {
    PMPI_Exscan(&lsize, &base[0], 1, MPI_INT, MPI_SUM, leaders);
    PMPI_Comm_size(leaders, &base[1]);
    if (rank == 0) {
      base[0] = 0;
      y->names = calloc((size_t)base[1], MPI_MAX_PROCESSOR_NAME);
      y->sizes = calloc((size_t)base[1], sizeof *y->sizes);
    }
    int ok = rank != 0 || (y->names && y->sizes);
    PMPI_Bcast(&ok, 1, MPI_INT, 0, leaders);
    if (ok) {
      PMPI_Gather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, y->names, MPI_MAX_PROCESSOR_NAME,
                  MPI_CHAR, 0, leaders);
      PMPI_Gather(&lsize, 1, MPI_INT, y->sizes, 1, MPI_INT, 0, leaders);
    }
    PMPI_Comm_free(&leaders);
  }
  PMPI_Bcast(base, 2, MPI_INT, 0, node);
  y->node = node;
  y->base = base[0];
  y->lrank = lrank;
  y->lsize = lsize;
  y->loc = base[0] + lrank;
  y->nnodes = base[1];
  int *locs = NULL;
  if (rank == 0) {
    locs = malloc((size_t)size * sizeof *locs);
    y->rank_of = malloc((size_t)size * sizeof *y->rank_of);
  }
  int ok = rank != 0 || (locs && y->rank_of && y->names && y->sizes), all = 0;
  PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, c);
  if (all) {
    PMPI_Gather(&y->loc, 1, MPI_INT, locs, 1, MPI_INT, 0, c);
    for (int r = 0; rank == 0 && r < size; r++)
      y->rank_of[locs[r]] = r;
  }
  free(locs);
  return all ? 0 : BALLAST_ENOMEM;
}

/* ---- anchor.xml (rank 0) -------------------------------------------------------------------- */

static void xml_metrics(mon__xb_t *b) {
  mon__xb_printf(b, "<metrics>\n");
  for (int m = 0; m < NMET; m++) {
    const metdef_t *d = &metrics[m];
    mon__xb_printf(b, "<metric id=\"%d\" type=\"%s\">\n<disp_name>%s</disp_name>\n"
                   "<uniq_name>%s</uniq_name>\n<dtype>%s</dtype>\n<uom>%s</uom>\n"
                   "<url></url>\n<descr>", m, d->incl ? "INCLUSIVE" : "EXCLUSIVE", d->disp,
                   d->uniq, d->dtype, d->uom);
    mon__xb_xml(b, d->descr, strlen(d->descr));
    mon__xb_printf(b, "</descr>\n");
    /* children follow their parent directly: close the parent after them */
    if (m + 1 < NMET && metrics[m + 1].parent == m)
      continue;
    mon__xb_printf(b, "</metric>\n");
    if (d->parent >= 0 && (m + 1 == NMET || metrics[m + 1].parent != d->parent))
      mon__xb_printf(b, "</metric>\n");
  }
  mon__xb_printf(b, "</metrics>\n");
}

/* The last component of cnode c's path (kind byte, name; no NUL). */
static const char *last_comp(const tree_t *t, uint64_t c, uint32_t *len) {
  uint32_t pl = t->parent[c] >= 0 ? t->len[t->parent[c]] : 0;
  *len = t->len[c] - pl - 1;
  return t->s + t->off[c] + pl;
}

static const tree_t *cmp_tree;
static int comp_cmp(const void *x, const void *y) {
  uint32_t la, lb;
  const char *a = last_comp(cmp_tree, *(const uint64_t *)x, &la);
  const char *b = last_comp(cmp_tree, *(const uint64_t *)y, &lb);
  return mon__cube_path_cmp(a, la, b, lb);
}

/* Regions: one per distinct (kind, name); callee[c] is cnode c's region. */
static int xml_regions(mon__xb_t *b, const tree_t *t, uint64_t *callee) {
  uint64_t *idx = malloc(t->n * sizeof *idx);
  if (!idx)
    return BALLAST_ENOMEM;
  for (uint64_t c = 0; c < t->n; c++)
    idx[c] = c;
  cmp_tree = t;
  qsort(idx, t->n, sizeof *idx, comp_cmp);
  uint64_t id = 0;
  for (uint64_t i = 0; i < t->n; i++) {
    if (i && comp_cmp(&idx[i - 1], &idx[i]) == 0) {
      callee[idx[i]] = callee[idx[i - 1]];
      continue;
    }
    uint32_t len;
    const char *s = last_comp(t, idx[i], &len);
    int mpi = s[0] == 'A';
    callee[idx[i]] = id;
    mon__xb_printf(b, "<region id=\"%llu\" mod=\"%s\" begin=\"-1\" end=\"-1\">\n<name>",
                   (unsigned long long)id++, mpi ? "MPI" : "");
    mon__xb_xml(b, s + 1, len - 1);
    mon__xb_printf(b, "</name>\n<mangled_name>");
    mon__xb_xml(b, s + 1, len - 1);
    mon__xb_printf(b, "</mangled_name>\n<paradigm>%s</paradigm>\n<role>function</role>\n"
                   "<url></url>\n<descr>%s</descr>\n</region>\n", mpi ? "mpi" : "user",
                   mpi ? "MPI call" : "ballast region");
  }
  free(idx);
  return 0;
}

static int xml_program(mon__xb_t *b, const tree_t *t) {
  uint64_t *callee = malloc(t->n * sizeof *callee);
  int64_t *stack = malloc(t->n * sizeof *stack);
  int rc = callee && stack ? 0 : BALLAST_ENOMEM;
  mon__xb_printf(b, "<program>\n");
  if (!rc)
    rc = xml_regions(b, t, callee);
  uint64_t sp = 0;
  for (uint64_t c = 0; !rc && c < t->n; c++) {
    while (sp && stack[sp - 1] != t->parent[c]) {
      mon__xb_printf(b, "</cnode>\n");
      sp--;
    }
    mon__xb_printf(b, "<cnode id=\"%llu\" calleeId=\"%llu\">\n", (unsigned long long)c,
                   (unsigned long long)callee[c]);
    stack[sp++] = (int64_t)c;
  }
  while (!rc && sp--)
    mon__xb_printf(b, "</cnode>\n");
  mon__xb_printf(b, "</program>\n");
  free(callee);
  free(stack);
  return rc;
}

static void xml_system(mon__xb_t *b, const sys_t *y) {
  mon__xb_printf(b, "<system>\n<systemtreenode Id=\"0\">\n<name>machine</name>\n"
                 "<class>machine</class>\n");
  int loc = 0;
  for (int k = 0; k < y->nnodes; k++) {
    const char *nm = y->names + (size_t)k * MPI_MAX_PROCESSOR_NAME;
    mon__xb_printf(b, "<systemtreenode Id=\"%d\">\n<name>", k + 1);
    mon__xb_xml(b, nm, strnlen(nm, MPI_MAX_PROCESSOR_NAME));
    mon__xb_printf(b, "</name>\n<class>node</class>\n");
    for (int i = 0; i < y->sizes[k]; i++, loc++) {
      int r = y->rank_of[loc];
      mon__xb_printf(b, "<locationgroup Id=\"%d\">\n<name>MPI Rank %d</name>\n<rank>%d</rank>\n"
                     "<type>process</type>\n<location Id=\"%d\">\n<name>Master thread</name>\n"
                     "<rank>0</rank>\n<type>thread</type>\n</location>\n</locationgroup>\n",
                     loc, r, r, loc);
    }
    mon__xb_printf(b, "</systemtreenode>\n");
  }
  mon__xb_printf(b, "</systemtreenode>\n</system>\n");
}

static int anchor(mon__xb_t *b, const tree_t *t, const sys_t *y) {
  mon__xb_printf(b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<cube version=\"4.4\">\n"
                 "<attr key=\"Creator\" value=\"ballast %s\"/>\n"
                 "<attr key=\"CUBE_CT_AGGR\" value=\"SUM\"/>\n", ballast_version());
  xml_metrics(b);
  int rc = xml_program(b, t);
  xml_system(b, y);
  mon__xb_printf(b, "</cube>\n");
  return rc ? rc : b->oom ? BALLAST_ENOMEM : 0;
}

/* ---- the archive ------------------------------------------------------------------------- */

typedef struct {
  uint64_t anchor_len;
  uint64_t data_len;             /* bytes of a data member */
  uint64_t idx_hdr[NMET], data_hdr[NMET]; /* offsets of the members' headers */
  uint64_t end;                  /* offset of the two closing zero blocks */
} layout_t;

static void layout(layout_t *a, uint64_t anchor_len, uint64_t n, int nloc) {
  a->anchor_len = anchor_len;
  a->data_len = 10 + n * (uint64_t)nloc * 8;
  uint64_t o = 512 + mon__tar_padded(anchor_len);
  for (int m = 0; m < NMET; m++) {
    a->idx_hdr[m] = o;
    o += 512 + mon__tar_padded(MON__CUBE_INDEX_SIZE);
    a->data_hdr[m] = o;
    o += 512 + mon__tar_padded(a->data_len);
  }
  a->end = o;
}

static int write_at(MPI_File f, uint64_t off, const void *p, uint64_t n) {
  for (uint64_t o = 0; o < n; o += CHUNK) {
    uint64_t k = n - o < CHUNK ? n - o : CHUNK;
    if (PMPI_File_write_at(f, (MPI_Offset)(off + o), (char *)p + o, (int)k, MPI_BYTE,
                           MPI_STATUS_IGNORE) != MPI_SUCCESS)
      return -1;
  }
  return 0;
}

/* A member's header, its content and the zeros up to the next block. */
static int member(MPI_File f, uint64_t off, const char *name, uint64_t size,
                  const void *content, uint64_t clen) {
  static const char zeros[1024];
  unsigned char hdr[512];
  if (mon__tar_header(hdr, name, size, (uint64_t)time(NULL)) != 0 ||
      write_at(f, off, hdr, 512) || write_at(f, off + 512, content, clen))
    return -1;
  uint64_t pad = mon__tar_padded(size) - size;
  return pad ? write_at(f, off + 512 + size, zeros, pad) : 0;
}

/* Rank 0: everything but the data rows. */
static int write_meta(MPI_File f, const layout_t *a, const mon__xb_t *x) {
  static const char zeros[1024];
  unsigned char idx[MON__CUBE_INDEX_SIZE];
  mon__cube_index(idx);
  if (member(f, 0, "anchor.xml", a->anchor_len, x->s, a->anchor_len))
    return -1;
  for (int m = 0; m < NMET; m++) {
    char name[32];
    snprintf(name, sizeof name, "%d.index", m);
    if (member(f, a->idx_hdr[m], name, MON__CUBE_INDEX_SIZE, idx, sizeof idx))
      return -1;
    snprintf(name, sizeof name, "%d.data", m);
    if (member(f, a->data_hdr[m], name, a->data_len, "CUBEX.DATA", 10))
      return -1;
    /* the data member's padding (its rows come from every rank) */
    uint64_t end = a->data_hdr[m] + 512 + a->data_len;
    uint64_t pad = mon__tar_padded(a->data_len) - a->data_len;
    if (pad && write_at(f, end, zeros, pad))
      return -1;
  }
  return write_at(f, a->end, zeros, 1024);
}

/* Bytes a host's first rank may gather of its ranks' columns. */
#define NODE_GATHER_MAX ((uint64_t)256 << 20)

/* Every rank's columns reach the file through one strided view and one
 * collective write. A host's locations are consecutive: its first rank
 * gathers their columns and writes each row's run of lsize values as one
 * block (one block per row and host instead of per row and rank), unless
 * that would take more than NODE_GATHER_MAX bytes there; then each rank
 * writes its own column. */
static int write_rows(MPI_File f, const layout_t *a, const uint64_t *rows, uint64_t n,
                      int nloc, const sys_t *y) {
  uint64_t per = (uint64_t)NMET * n; /* values per location */
  int agg = (uint64_t)y->lsize * per * 8 <= NODE_GATHER_MAX && y->lsize > 1;
  uint64_t *all = NULL, *tr = NULL;
  if (agg && y->lrank == 0) {
    all = malloc((size_t)(per * (uint64_t)y->lsize * 8));
    tr = malloc((size_t)(per * (uint64_t)y->lsize * 8));
  }
  int ok = y->lrank != 0 || !agg || (all && tr);
  PMPI_Bcast(&ok, 1, MPI_INT, 0, y->node);
  agg = agg && ok && per <= INT_MAX;
  int width = 1, first = y->loc, count = (int)per;
  const uint64_t *buf = rows;
  if (agg) {
    PMPI_Gather(rows, (int)per, MPI_UINT64_T, all, (int)per, MPI_UINT64_T, 0, y->node);
    /* [rank][row] to [row][rank] */
    for (int r = 0; y->lrank == 0 && r < y->lsize; r++)
      for (uint64_t k = 0; k < per; k++)
        tr[k * (uint64_t)y->lsize + (uint64_t)r] = all[(uint64_t)r * per + k];
    width = y->lsize;
    first = y->base;
    buf = tr;
    count = y->lrank == 0 ? (int)per : 0;
  }
  MPI_Datatype blk, col, cols[NMET], ftype;
  int blen[NMET];
  MPI_Aint disp[NMET];
  PMPI_Type_contiguous(8 * width, MPI_BYTE, &blk);
  PMPI_Type_create_hvector((int)n, 1, (MPI_Aint)nloc * 8, blk, &col);
  for (int m = 0; m < NMET; m++) {
    cols[m] = col;
    blen[m] = 1;
    disp[m] = (MPI_Aint)(a->data_hdr[m] + 512 + 10 + (uint64_t)first * 8);
  }
  PMPI_Type_create_struct(NMET, blen, disp, cols, &ftype);
  PMPI_Type_commit(&ftype);
  PMPI_Type_commit(&blk);
  int rc = PMPI_File_set_view(f, 0, MPI_BYTE, ftype, "native", MPI_INFO_NULL);
  if (rc == MPI_SUCCESS)
    rc = PMPI_File_write_at_all(f, 0, buf, count, blk, MPI_STATUS_IGNORE);
  PMPI_Type_free(&ftype);
  PMPI_Type_free(&col);
  PMPI_Type_free(&blk);
  free(all);
  free(tr);
  return rc == MPI_SUCCESS ? 0 : -1;
}

typedef struct {
  MPI_Comm c;
  int rank, size;
  local_t l;
  list_t u;
  tree_t t;
  sys_t y;
  mon__xb_t x;
  uint64_t *rows;
  char why[4400]; /* rank 0: the one line on failure */
} job_t;

/* Opens PATH.tmp on every rank, writes, closes; 0 on every rank or -1. */
static int write_file(job_t *j, const char *tmp, uint64_t anchor_len) {
  layout_t a;
  layout(&a, anchor_len, j->t.n, j->size);
  if (j->rank == 0)
    PMPI_File_delete(tmp, MPI_INFO_NULL); /* a stale one would keep its tail */
  MPI_File f;
  int rc = PMPI_File_open(j->c, tmp, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &f);
  int bad = rc != MPI_SUCCESS, any = 0;
  PMPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, j->c);
  if (any) {
    if (!bad)
      PMPI_File_close(&f);
    char es[MPI_MAX_ERROR_STRING] = "another rank could not open it";
    int el = 0;
    if (bad)
      PMPI_Error_string(rc, es, &el);
    snprintf(j->why, sizeof j->why, "cannot create %s (%s)", tmp, es);
    return -1;
  }
  bad = j->rank == 0 && write_meta(f, &a, &j->x);
  bad |= write_rows(f, &a, j->rows, j->t.n, j->size, &j->y);
  bad |= PMPI_File_close(&f) != MPI_SUCCESS;
  PMPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, j->c);
  if (any)
    snprintf(j->why, sizeof j->why, "error writing %s", tmp);
  return any ? -1 : 0;
}

/* Agrees on the tree and the system, renders anchor.xml on rank 0 and
 * broadcasts its length; FAILED on every rank when something failed. */
static uint64_t prepare(job_t *j) {
  mon__cube_local_build(&j->l);
  j->u = mon__cube_agree(j->c, j->rank, j->size, mon__cube_local_list(&j->l));
  int bad = j->u.len == FAILED ? 1 : 0;
  if (!bad)
    bad = mon__cube_tree_build(&j->t, &j->u) != 0 ? 2 : 0;
  if (!bad)
    bad = (j->rows = values(&j->t, &j->l)) == NULL ? 1 : 0;
  int any = 0;
  PMPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, j->c);
  if (any) {
    snprintf(j->why, sizeof j->why, "%s", any == 2 ? "the ranks' call trees do not join "
                                                     "at ballast_main" : "out of memory");
    return FAILED;
  }
  if (sys_build(j->c, j->rank, j->size, &j->y) != 0) {
    snprintf(j->why, sizeof j->why, "out of memory");
    return FAILED;
  }
  uint64_t len = 0;
  if (j->rank == 0)
    len = anchor(&j->x, &j->t, &j->y) == 0 ? j->x.len : FAILED;
  PMPI_Bcast(&len, 1, MPI_UINT64_T, 0, j->c);
  if (len == FAILED)
    snprintf(j->why, sizeof j->why, "out of memory for anchor.xml");
  return len;
}

int mon__cube_write(const char *path) {
  job_t j;
  memset(&j, 0, sizeof j);
  PMPI_Comm_dup(MPI_COMM_WORLD, &j.c);
  /* a truncated receive (recv_list without memory) must not abort */
  PMPI_Comm_set_errhandler(j.c, MPI_ERRORS_RETURN);
  PMPI_Comm_rank(j.c, &j.rank);
  PMPI_Comm_size(j.c, &j.size);
  char tmp[4200];
  int rc = 0;
  double t0 = PMPI_Wtime(), t1 = t0, t2 = t0;
  int n = snprintf(tmp, sizeof tmp, "%s.tmp", path);
  if (n < 0 || (size_t)n >= sizeof tmp) {
    snprintf(j.why, sizeof j.why, "the path is too long");
    rc = BALLAST_ENAMETOOLONG;
  } else {
    uint64_t len = prepare(&j);
    t1 = PMPI_Wtime();
    if (len == FAILED)
      rc = BALLAST_ENOMEM;
    else if (write_file(&j, tmp, len) != 0)
      rc = BALLAST_EIO;
    t2 = PMPI_Wtime();
  }
  if (!rc && j.rank == 0 && rename(tmp, path) != 0) {
    snprintf(j.why, sizeof j.why, "cannot rename %s to it", tmp);
    rc = BALLAST_EIO;
  }
  if (rc && j.rank == 0) {
    BALLAST_WARN("mon: no Cube profile written to %s: %s", path, j.why);
    unlink(tmp);
  }
  /* rank 0's rename is the job's result: tell every rank */
  PMPI_Bcast(&rc, 1, MPI_INT, 0, j.c);
  if (!rc && j.rank == 0) {
    /* what the writer held on rank 0 (the most: anchor.xml is its alone) */
    double mem = (double)(j.l.cap + j.l.ecap * sizeof *j.l.e + j.u.len + j.x.cap +
                          j.t.n * (3 * sizeof(uint64_t) + sizeof(uint32_t) +
                                   3 * sizeof(int64_t)) + NMET * j.t.n * 8 +
                          (size_t)j.size * sizeof(int) * 2) / 1e6;
    BALLAST_INFO("mon: Cube profile written to %s: %llu call paths x %d locations, %.3f s "
                 "(call tree and system %.3f s, files %.3f s); writer memory on rank 0 "
                 "%.2f MB", path, (unsigned long long)j.t.n, j.size, PMPI_Wtime() - t0,
                 t1 - t0, t2 - t1, mem);
  }
  free(j.l.buf);
  free(j.l.e);
  free(j.u.s);
  mon__cube_tree_free(&j.t);
  sys_free(&j.y);
  free(j.x.s);
  free(j.rows);
  PMPI_Comm_free(&j.c);
  return rc;
}
