/* Run-time discovery of the hardware model over MPI: nodes (shared-memory
 * split or a pretended layout), hwloc trees and bindings, and measured links
 * between node leaders. The public collective functions bracket their MPI
 * calls with ballast__lib_begin()/ballast__lib_end(), so the traffic is
 * accounted as the library's own, never as the application's. */
#include <ctype.h>
#include <errno.h>
#include <hwloc.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/common_internal.h"
#include "common/env.h"
#include "map/map_internal.h"

/* Discovery fails with the same code on every rank (the documented
 * contract: a bad layout is BALLAST_EPARSE everywhere), so the ranks that did
 * not fail take the failing rank's code rather than BALLAST_EREMOTE. */
static int agree_code(MPI_Comm comm, int err) {
  int code = 0;
  ballast__agree(comm, err, NULL, &code);
  return code;
}

static int cmp_int(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

/* Why a layout was refused: written by the rank that parses it (0) and
 * broadcast, so every rank logs and returns the same error. */
#define LAYOUT_WHY 320

/* A decimal int in [lo, INT_MAX] at *p, advancing *p; 0 when there is none
 * or it overflows. */
static int layout_int(const char **p, long lo, int *v) {
  char *end;
  errno = 0;
  long x = strtol(*p, &end, 10);
  if (end == *p || !isdigit((unsigned char)**p) || errno == ERANGE || x < lo ||
      x > INT_MAX)
    return 0;
  *v = (int)x;
  *p = end;
  return 1;
}

/* "nodes=N;ranks_per_node=K": consecutive blocks of K ranks. */
static int layout_blocks(const char *desc, int size, int *node_of, char *why) {
  const char *p = desc + 6;
  int nn = 0, rpn = 0;
  if (!layout_int(&p, 1, &nn) || (*p != ';' && *p != ',') ||
      strncmp(p + 1, "ranks_per_node=", 15) || (p += 16, !layout_int(&p, 1, &rpn)) ||
      *p) {
    snprintf(why, LAYOUT_WHY,
             "layout '%.160s': expected \"nodes=N;ranks_per_node=K\" with N and K "
             "integers from 1 to %d and nothing after them", desc, INT_MAX);
    return BALLAST_EPARSE;
  }
  if ((long long)nn * rpn != size) {
    snprintf(why, LAYOUT_WHY, "layout '%.160s' describes %lld ranks, the communicator "
             "has %d", desc, (long long)nn * rpn, size);
    return BALLAST_EPARSE;
  }
  for (int r = 0; r < size; r++)
    node_of[r] = r / rpn;
  return 0;
}

/* "node_of_rank=0,0,1,1": the node ids in \a *n. */
static int layout_list(const char *desc, int size, int *node_of, int *n, char *why) {
  const char *p = desc + 13;
  while (*p) {
    int v;
    if (*n >= size || !layout_int(&p, 0, &v)) {
      snprintf(why, LAYOUT_WHY, "layout '%.160s': %s at '%.40s'", desc,
               *n >= size ? "more node ids than the ranks there are" : "bad node id", p);
      return BALLAST_EPARSE;
    }
    node_of[(*n)++] = v;
    if (*p == ',' && p[1])
      p++;
    else if (*p) {
      snprintf(why, LAYOUT_WHY, "layout '%.160s': expected ',' and a node id at "
               "'%.40s'", desc, p);
      return BALLAST_EPARSE;
    }
  }
  return 0;
}

/* "file=PATH": the node ids in \a *n, one a line. */
static int layout_file(const char *desc, int size, int *node_of, int *n, char *why) {
  FILE *f = fopen(desc + 5, "r");
  if (!f) {
    snprintf(why, LAYOUT_WHY, "layout: cannot open '%.200s'", desc + 5);
    return BALLAST_EPARSE;
  }
  char line[64];
  int lineno = 0, rc = 0;
  while (!rc && fgets(line, sizeof line, f)) {
    lineno++;
    const char *p = line;
    while (*p == ' ' || *p == '\t')
      p++;
    if (*p == '\n' || !*p)
      continue;
    int v;
    if (*n >= size) {
      snprintf(why, LAYOUT_WHY, "layout file '%.200s' lists more ranks than the %d "
               "there are", desc + 5, size);
      rc = BALLAST_EPARSE;
    } else if (!layout_int(&p, 0, &v) || (p[strspn(p, " \t\r\n")] != 0)) {
      snprintf(why, LAYOUT_WHY, "layout file '%.200s' line %d: not a node id from 0 "
               "to %d", desc + 5, lineno, INT_MAX);
      rc = BALLAST_EPARSE;
    } else {
      node_of[(*n)++] = v;
    }
  }
  fclose(f);
  return rc;
}

/* Renumbers node ids densely, in order of first appearance. */
static int layout_renumber(int size, int *node_of) {
  int *ids = ballast__malloc((size_t)size * sizeof *ids);
  int *map = ballast__malloc((size_t)size * sizeof *map);
  if (!ids || !map) {
    free(ids);
    free(map);
    return BALLAST_ENOMEM;
  }
  memcpy(ids, node_of, (size_t)size * sizeof *ids);
  qsort(ids, (size_t)size, sizeof *ids, cmp_int);
  for (int i = 0; i < size; i++)
    map[i] = -1;
  int next = 0;
  for (int r = 0; r < size; r++) {
    int *at = bsearch(&node_of[r], ids, (size_t)size, sizeof *ids, cmp_int);
    int k = (int)(at - ids);
    while (k > 0 && ids[k - 1] == node_of[r])
      k--;
    if (map[k] < 0)
      map[k] = next++;
    node_of[r] = map[k];
  }
  free(ids);
  free(map);
  return 0;
}

/* Parses a layout description into node_of[size] (dense ids 0..N-1); on
 * failure \a why says what was wrong. */
static int parse_layout(const char *desc, int size, int *node_of, char *why) {
  if (strncmp(desc, "nodes=", 6) == 0)
    return layout_blocks(desc, size, node_of, why);
  int n = 0, rc;
  if (strncmp(desc, "node_of_rank=", 13) == 0) {
    rc = layout_list(desc, size, node_of, &n, why);
  } else if (strncmp(desc, "file=", 5) == 0) {
    rc = layout_file(desc, size, node_of, &n, why);
  } else {
    snprintf(why, LAYOUT_WHY, "layout '%.160s' not understood (\"nodes=N;ranks_per_node=K\", "
             "\"node_of_rank=0,0,1,1\" or \"file=PATH\")", desc);
    return BALLAST_EPARSE;
  }
  if (rc)
    return rc;
  if (n != size) {
    snprintf(why, LAYOUT_WHY, "layout '%.160s' gives %d ranks, the communicator has %d",
             desc, n, size);
    return BALLAST_EPARSE;
  }
  return layout_renumber(size, node_of);
}

/* The core (leaf index) this process is bound to, or -1 when unbound or
 * bound to more than one core. */
static int my_core(void) {
  hwloc_topology_t t;
  if (hwloc_topology_init(&t) < 0)
    return -1;
  if (hwloc_topology_load(t) < 0) {
    hwloc_topology_destroy(t);
    return -1;
  }
  int core = -1;
  hwloc_bitmap_t set = hwloc_bitmap_alloc();
  if (set && hwloc_get_cpubind(t, set, HWLOC_CPUBIND_PROCESS) == 0) {
    int depth = hwloc_get_type_depth(t, HWLOC_OBJ_CORE);
    if (depth < 0)
      depth = hwloc_get_type_depth(t, HWLOC_OBJ_PU);
    int n = hwloc_get_nbobjs_inside_cpuset_by_depth(t, set, (unsigned)depth);
    if (n == 1)
      core = (int)hwloc_get_obj_inside_cpuset_by_depth(t, set, (unsigned)depth, 0)
                 ->logical_index;
  }
  hwloc_bitmap_free(set);
  hwloc_topology_destroy(t);
  return core;
}

/* Partner of \a i in round \a r of a round-robin tournament of m (even)
 * players: every pair meets exactly once in m-1 rounds. */
static int tournament_partner(int i, int r, int m) {
  if (i == m - 1)
    return r;
  if (i == r)
    return m - 1;
  return ((2 * r - i) % (m - 1) + (m - 1)) % (m - 1);
}

/* Ping-pong between the leaders \a me and \a peer (ranks of comm): one-way
 * latency of 8 B and bandwidth of 1 MiB messages. */
static int pingpong(MPI_Comm comm, int me, int peer, char *buf, double *lat,
                    double *bw) {
  const int small_reps = 20, big_reps = 4, big = 1 << 20;
  int first = me < peer;
  double t0 = 0, tsmall = 0, tbig = 0;
  for (int phase = 0; phase < 2; phase++) {
    int reps = phase ? big_reps : small_reps, len = phase ? big : 8;
    /* One warm-up exchange, then the timed ones. */
    for (int k = -1; k < reps; k++) {
      if (k == 0)
        t0 = MPI_Wtime();
      if (first) {
        if (MPI_Send(buf, len, MPI_BYTE, peer, 71, comm) ||
            MPI_Recv(buf, len, MPI_BYTE, peer, 71, comm, MPI_STATUS_IGNORE))
          return BALLAST_EMPI;
      } else {
        if (MPI_Recv(buf, len, MPI_BYTE, peer, 71, comm, MPI_STATUS_IGNORE) ||
            MPI_Send(buf, len, MPI_BYTE, peer, 71, comm))
          return BALLAST_EMPI;
      }
    }
    double t = (MPI_Wtime() - t0) / (2.0 * reps);
    if (phase)
      tbig = t;
    else
      tsmall = t;
  }
  *lat = tsmall > 1e-9 ? tsmall : 1e-9;
  double tb = tbig - tsmall;
  *bw = (double)big / (tb > 1e-9 ? tb : 1e-9);
  return 0;
}

/* ---- measured links ------------------------------------------------------ */

/* What one measurement of the links works with. Everything that can fail
 * locally is allocated before the first message: the ranks agree once, then
 * all measure or none does. */
typedef struct {
  int n;            /* nodes */
  double *row;      /* 2 n^2: latencies then bandwidths, each leader its row */
  char *buf;        /* the ping-pong buffer (1 MiB) */
  double *lat, *bw; /* n^2 each for the model, NULL when it has them */
  float *ndist;     /* n^2 for the model, NULL when it has it */
} links_t;

static int links_alloc(links_t *l, const rta_hw_t *hw) {
  size_t nn = (size_t)l->n * l->n;
  l->row = ballast__calloc(2 * nn, sizeof *l->row);
  l->buf = ballast__calloc(1, 1 << 20);
  if (!l->row || !l->buf)
    return BALLAST_ENOMEM;
  if (!hw->lat) {
    l->lat = ballast__malloc(nn * sizeof *l->lat);
    l->bw = ballast__malloc(nn * sizeof *l->bw);
    if (!hw->ndist)
      l->ndist = ballast__malloc(nn * sizeof *l->ndist);
    if (!l->lat || !l->bw || (!hw->ndist && !l->ndist))
      return BALLAST_ENOMEM;
  }
  return 0;
}

static void links_free(links_t *l) {
  free(l->row);
  free(l->buf);
  free(l->lat);
  free(l->bw);
  free(l->ndist);
}

/* A leader plays every other leader once (a round-robin tournament) and
 * fills its own row of both matrices; the other ranks only wait. */
static int links_measure(links_t *l, const rta_hw_t *hw, MPI_Comm comm,
                         int rank) {
  int n = l->n, node = hw->slot_node[rank];
  size_t nn = (size_t)n * n;
  if (hw->leader[node] != rank)
    return 0;
  int m = n + (n & 1); /* a dummy player when odd */
  for (int r = 0; r < m - 1; r++) {
    int p = tournament_partner(node, r, m);
    if (p >= n)
      continue;
    double lat, bw;
    int rc = pingpong(comm, rank, hw->leader[p], l->buf, &lat, &bw);
    if (rc)
      return rc;
    l->row[(size_t)node * n + p] = lat;
    l->row[nn + (size_t)node * n + p] = bw;
  }
  return 0;
}

/* Makes the assembled matrices the model's inter-node costs. */
static void links_install(links_t *l, rta_hw_t *hw) {
  int n = l->n;
  size_t nn = (size_t)n * n;
  if (l->lat) {
    hw->lat = l->lat;
    hw->bw = l->bw;
    l->lat = l->bw = NULL;
  }
  if (l->ndist) {
    hw->ndist = l->ndist;
    l->ndist = NULL;
  }
  /* Both ends timed the same ping-pong: use the mean of the two so the
   * model is symmetric. */
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      size_t k = (size_t)i * n + j, t = (size_t)j * n + i;
      hw->lat[k] = 0.5 * (l->row[k] + l->row[t]);
      double b = 0.5 * (l->row[nn + k] + l->row[nn + t]);
      hw->bw[k] = b > 0 ? b : INFINITY;
    }
  if (n > 1) {
    hw->net = MAP__NET_MEASURED;
    snprintf(hw->net_desc, sizeof hw->net_desc,
             "measured between %d node leaders (%d tournament rounds)", n,
             n - 1 + (n & 1));
    map__hw_links_to_dist(hw);
  }
}

static int refresh_links(rta_hw_t *hw, MPI_Comm comm) {
  int rank, size;
  if (MPI_Comm_rank(comm, &rank) != MPI_SUCCESS ||
      MPI_Comm_size(comm, &size) != MPI_SUCCESS)
    return BALLAST_EMPI;
  if (size != hw->nslots)
    return BALLAST_EINVAL;
  links_t l = {.n = hw->nnodes};
  int rc = agree_code(comm, links_alloc(&l, hw));
  if (!rc)
    rc = links_measure(&l, hw, comm, rank);
  /* Each leader filled its own row: a sum assembles the matrices. */
  if (!rc && MPI_Allreduce(MPI_IN_PLACE, l.row, 2 * l.n * l.n, MPI_DOUBLE,
                           MPI_SUM, comm) != MPI_SUCCESS)
    rc = BALLAST_EMPI;
  if (!rc)
    links_install(&l, hw);
  links_free(&l);
  return rc;
}

int rta_hw_refresh_links(rta_hw_t *hw, MPI_Comm comm) {
  if (!hw || comm == MPI_COMM_NULL)
    return BALLAST_EINVAL;
  if (hw->sim || !hw->leader)
    return BALLAST_ESTATE;
  int rc0 = ballast__need_mpi("rta_hw_refresh_links");
  if (rc0)
    return rc0;
  ballast__lib_begin();
  int rc = refresh_links(hw, comm);
  ballast__lib_end();
  return rc;
}

/* ---- discovery ------------------------------------------------------------- */

/* What one discovery works with, phase to phase. */
typedef struct {
  MPI_Comm comm;
  const rta_hw_options_t *opt; /* may be NULL */
  int rank, size;
  int *node_of;          /* size: node of every rank, dense ids */
  int *cores;            /* size: the core every rank is bound to, or -1 */
  map__nodetopo_t *tops; /* size: every rank's tree */
  rta_hw_t *hw;          /* the model being built */
} disc_t;

static int disc_alloc(disc_t *d) {
  d->hw = ballast__calloc(1, sizeof *d->hw);
  d->node_of = ballast__malloc((size_t)d->size * sizeof *d->node_of);
  d->cores = ballast__malloc((size_t)d->size * sizeof *d->cores);
  d->tops = ballast__malloc((size_t)d->size * sizeof *d->tops);
  return d->hw && d->node_of && d->cores && d->tops ? 0 : BALLAST_ENOMEM;
}

/* Nodes from the shared-memory split, numbered by their lowest rank. */
static int nodes_from_shm(disc_t *d) {
  MPI_Comm shm;
  int lowest, rc = 0;
  if (MPI_Comm_split_type(d->comm, MPI_COMM_TYPE_SHARED, d->rank,
                          MPI_INFO_NULL, &shm) != MPI_SUCCESS)
    return BALLAST_EMPI;
  if (MPI_Allreduce(&d->rank, &lowest, 1, MPI_INT, MPI_MIN, shm) != MPI_SUCCESS ||
      MPI_Allgather(&lowest, 1, MPI_INT, d->node_of, 1, MPI_INT, d->comm) !=
          MPI_SUCCESS)
    rc = BALLAST_EMPI;
  MPI_Comm_free(&shm);
  if (rc)
    return rc;
  /* Lowest ranks -> dense ids in rank order, in place: a node's lowest rank
   * l <= r already holds its id when rank r is renumbered. */
  int next = 0;
  for (int r = 0; r < d->size; r++)
    d->node_of[r] = d->node_of[r] == r ? next++ : d->node_of[d->node_of[r]];
  return 0;
}

/* Nodes: a pretended layout (parsed on rank 0, broadcast) or the
 * shared-memory split. A refused layout is explained by every rank with
 * rank 0's words, so each rank's error says what was wrong. */
static int disc_nodes(disc_t *d) {
  const char *layout = d->opt && d->opt->layout
                           ? d->opt->layout
                           : ballast__env_string("BALLAST_HW_LAYOUT");
  if (!layout || !*layout)
    return nodes_from_shm(d);
  char why[LAYOUT_WHY] = "";
  int rc = d->rank == 0 ? parse_layout(layout, d->size, d->node_of, why) : 0;
  if ((rc = agree_code(d->comm, rc))) {
    if (rc == BALLAST_EPARSE &&
        MPI_Bcast(why, LAYOUT_WHY, MPI_CHAR, 0, d->comm) == MPI_SUCCESS) {
      why[LAYOUT_WHY - 1] = 0;
      char esc[2 * LAYOUT_WHY];
      ballast__escape(why, NULL, esc, sizeof esc);
      BALLAST_ERROR("hardware discovery: %s", esc);
    }
    return rc;
  }
  return MPI_Bcast(d->node_of, d->size, MPI_INT, 0, d->comm) == MPI_SUCCESS
             ? 0 : BALLAST_EMPI;
}

/* Every rank's tree and binding (a node's tree is its leader's). */
static int disc_trees(disc_t *d) {
  const rta_hw_options_t *o = d->opt;
  const char *desc = o ? o->node_topology : NULL;
  map__nodetopo_t mine;
  int rc = map__hw_topo_from_desc(desc, o ? o->level_costs : NULL,
                                  o ? o->nlevel_costs : 0, &mine);
  if ((rc = agree_code(d->comm, rc)))
    return rc;
  int core = desc ? -1 : my_core();
  if (core >= mine.ncores)
    core = -1;
  if (MPI_Allgather(&core, 1, MPI_INT, d->cores, 1, MPI_INT, d->comm) !=
          MPI_SUCCESS ||
      MPI_Allgather(&mine, (int)sizeof mine, MPI_BYTE, d->tops,
                    (int)sizeof mine, MPI_BYTE, d->comm) != MPI_SUCCESS)
    return BALLAST_EMPI;
  return 0;
}

/* The model's nodes, slots and trees from what every rank told (local). */
static int disc_model(disc_t *d) {
  rta_hw_t *hw = d->hw;
  int nnodes = 0, rc;
  for (int r = 0; r < d->size; r++)
    if (d->node_of[r] + 1 > nnodes)
      nnodes = d->node_of[r] + 1;
  hw->internode_cost = d->opt && d->opt->internode_cost > 0
                           ? d->opt->internode_cost : 16.0;
  if ((rc = map__hw_alloc(hw, nnodes, d->size)))
    return rc;
  hw->ntopo = nnodes;
  hw->topo = ballast__calloc((size_t)nnodes, sizeof *hw->topo);
  hw->leader = ballast__malloc((size_t)nnodes * sizeof *hw->leader);
  if (!hw->topo || !hw->leader)
    return BALLAST_ENOMEM;
  for (int n = 0; n < nnodes; n++)
    hw->leader[n] = -1;
  for (int r = 0; r < d->size; r++) {
    int n = d->node_of[r];
    hw->slot_node[r] = n;
    if (hw->leader[n] < 0) {
      hw->leader[n] = r;
      hw->topo[n] = d->tops[r];
      hw->node_topo[n] = n;
    }
  }
  return map__hw_index_slots(hw);
}

/* Are the ranks of node \a n each bound to a distinct core? */
static int node_bound(const disc_t *d, int n) {
  const rta_hw_t *hw = d->hw;
  int b = hw->node_xslot[n], e = hw->node_xslot[n + 1];
  for (int i = b; i < e; i++) {
    int ci = d->cores[hw->node_slot[i]];
    if (ci < 0)
      return 0;
    for (int j = b; j < i; j++)
      if (d->cores[hw->node_slot[j]] == ci)
        return 0;
  }
  return 1;
}

/* Cores: the binding when every rank of the node is bound to a distinct
 * core, else spread the node's ranks evenly over its cores. */
static void disc_cores(disc_t *d) {
  rta_hw_t *hw = d->hw;
  hw->bound = 1;
  for (int n = 0; n < hw->nnodes; n++) {
    int b = hw->node_xslot[n], k = hw->node_xslot[n + 1] - b;
    int nc = hw->topo[n].ncores, ok = node_bound(d, n);
    if (!ok)
      hw->bound = 0;
    for (int i = 0; i < k; i++) {
      int s = hw->node_slot[b + i];
      hw->slot_core[s] = ok ? d->cores[s]
                            : (k <= nc ? (int)((int64_t)i * nc / k) : i % nc);
    }
  }
  if (!hw->bound && d->rank == 0)
    BALLAST_INFO("processes are not bound to single cores: the hardware "
                 "model spreads each node's ranks evenly over its cores");
}

/* The network between nodes: an architecture file, measured links, or the
 * complete graph. */
static int disc_network(disc_t *d) {
  rta_hw_t *hw = d->hw;
  const rta_hw_options_t *o = d->opt;
  snprintf(hw->net_desc, sizeof hw->net_desc, "complete graph");
  if (o && o->inter_arch) {
    int rc = map__hw_load_arch(hw, o->inter_arch);
    if (!rc && SCOTCH_archSize(hw->arch) != hw->nnodes) {
      BALLAST_WARN("the architecture '%s' has %d terminals, the job runs on %d "
                   "nodes", o->inter_arch, (int)SCOTCH_archSize(hw->arch),
                   hw->nnodes);
      rc = BALLAST_EPARSE;
    }
    if (!rc)
      rc = map__hw_cache_dist(hw);
    return agree_code(d->comm, rc);
  }
  if (o && o->measure_links)
    return rta_hw_refresh_links(hw, d->comm);
  return 0;
}

static int discover(disc_t *d) {
  int rc;
  if (MPI_Comm_rank(d->comm, &d->rank) != MPI_SUCCESS ||
      MPI_Comm_size(d->comm, &d->size) != MPI_SUCCESS)
    return BALLAST_EMPI;
  /* The local steps (allocation, the model) agree before the next message,
   * so no rank waits in a collective that another has left. */
  if ((rc = agree_code(d->comm, disc_alloc(d))) || (rc = disc_nodes(d)) ||
      (rc = disc_trees(d)) || (rc = agree_code(d->comm, disc_model(d))))
    return rc;
  disc_cores(d);
  return disc_network(d);
}

int rta_hw_discover(MPI_Comm comm, rta_hw_t **out) {
  return rta_hw_discover_ex(comm, NULL, out);
}

int rta_hw_discover_ex(MPI_Comm comm, const rta_hw_options_t *opt,
                       rta_hw_t **out) {
  if (!out || comm == MPI_COMM_NULL)
    return BALLAST_EINVAL;
  *out = NULL;
  int rc0 = ballast__need_mpi("rta_hw_discover");
  if (rc0)
    return rc0;
  disc_t d = {.comm = comm, .opt = opt};
  ballast__lib_begin();
  int rc = discover(&d);
  ballast__lib_end();
  free(d.node_of);
  free(d.cores);
  free(d.tops);
  if (rc) {
    rta_hw_destroy(d.hw);
    return rc;
  }
  *out = d.hw;
  return 0;
}
