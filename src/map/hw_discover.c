/* Run-time discovery of the hardware model over MPI: nodes (shared-memory
 * split or a pretended layout), hwloc trees and bindings, and measured links
 * between node leaders. Every MPI call goes through PMPI so the library's own
 * traffic is never counted as the application's. */
#include <hwloc.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/common_internal.h"
#include "map/map_internal.h"

#define MPI_OK(call)                                                         \
  do {                                                                       \
    if ((call) != MPI_SUCCESS) {                                             \
      rc = BALLAST_EMPI;                                                     \
      goto done;                                                             \
    }                                                                        \
  } while (0)

static int cmp_int(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

/* Parses a layout description into node_of[size] (dense ids 0..N-1). */
static int parse_layout(const char *desc, int size, int *node_of) {
  if (strncmp(desc, "nodes=", 6) == 0) {
    int nn = 0, rpn = 0;
    if (sscanf(desc, "nodes=%d%*[;,]ranks_per_node=%d", &nn, &rpn) != 2 || nn < 1 ||
        rpn < 1) {
      BALLAST_WARN("layout '%s': expected \"nodes=N;ranks_per_node=K\"", desc);
      return BALLAST_EPARSE;
    }
    if ((long long)nn * rpn != size) {
      BALLAST_WARN("layout '%s' describes %lld ranks, the communicator has %d",
                   desc, (long long)nn * rpn, size);
      return BALLAST_EPARSE;
    }
    for (int r = 0; r < size; r++)
      node_of[r] = r / rpn;
    return 0;
  }
  int n = 0;
  if (strncmp(desc, "node_of_rank=", 13) == 0) {
    const char *p = desc + 13;
    while (*p) {
      char *end;
      long v = strtol(p, &end, 10);
      if (end == p || v < 0 || v > INT32_MAX || n >= size) {
        BALLAST_WARN("layout '%s': bad or extra node id at '%s'", desc, p);
        return BALLAST_EPARSE;
      }
      node_of[n++] = (int)v;
      p = end;
      if (*p == ',')
        p++;
      else if (*p) {
        BALLAST_WARN("layout '%s': expected ',' at '%s'", desc, p);
        return BALLAST_EPARSE;
      }
    }
  } else if (strncmp(desc, "file=", 5) == 0) {
    FILE *f = fopen(desc + 5, "r");
    if (!f) {
      BALLAST_WARN("layout: cannot open '%s'", desc + 5);
      return BALLAST_EPARSE;
    }
    long v;
    while (n < size && fscanf(f, "%ld", &v) == 1) {
      if (v < 0 || v > INT32_MAX) {
        fclose(f);
        BALLAST_WARN("layout file '%s': node id %ld out of range", desc + 5, v);
        return BALLAST_EPARSE;
      }
      node_of[n++] = (int)v;
    }
    int extra = !feof(f) && fscanf(f, "%ld", &v) == 1;
    fclose(f);
    if (extra) {
      BALLAST_WARN("layout file '%s' lists more ranks than the %d there are",
                   desc + 5, size);
      return BALLAST_EPARSE;
    }
  } else {
    BALLAST_WARN("layout '%s' not understood (\"nodes=N;ranks_per_node=K\", "
                 "\"node_of_rank=0,0,1,1\" or \"file=PATH\")", desc);
    return BALLAST_EPARSE;
  }
  if (n != size) {
    BALLAST_WARN("layout '%s' gives %d ranks, the communicator has %d", desc, n,
                 size);
    return BALLAST_EPARSE;
  }
  /* Renumber densely, in order of first appearance. */
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
        t0 = PMPI_Wtime();
      if (first) {
        if (PMPI_Send(buf, len, MPI_BYTE, peer, 71, comm) ||
            PMPI_Recv(buf, len, MPI_BYTE, peer, 71, comm, MPI_STATUS_IGNORE))
          return BALLAST_EMPI;
      } else {
        if (PMPI_Recv(buf, len, MPI_BYTE, peer, 71, comm, MPI_STATUS_IGNORE) ||
            PMPI_Send(buf, len, MPI_BYTE, peer, 71, comm))
          return BALLAST_EMPI;
      }
    }
    double t = (PMPI_Wtime() - t0) / (2.0 * reps);
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

int rta_hw_refresh_links(rta_hw_t *hw, MPI_Comm comm) {
  if (!hw || comm == MPI_COMM_NULL)
    return BALLAST_EINVAL;
  if (hw->sim || !hw->leader)
    return BALLAST_ESTATE;
  int rc = 0, rank, size;
  char *buf = NULL;
  double *row = NULL;
  MPI_OK(PMPI_Comm_rank(comm, &rank));
  MPI_OK(PMPI_Comm_size(comm, &size));
  if (size != hw->nslots)
    return BALLAST_EINVAL;
  int n = hw->nnodes, node = hw->slot_node[rank];
  size_t nn = (size_t)n * n;
  row = ballast__calloc(2 * nn, sizeof *row);
  buf = ballast__calloc(1, 1 << 20);
  if (!row || !buf) {
    rc = BALLAST_ENOMEM;
    goto done;
  }
  if (hw->leader[node] == rank) {
    int m = n + (n & 1); /* a dummy player when odd */
    for (int r = 0; r < m - 1; r++) {
      int p = tournament_partner(node, r, m);
      if (p >= n)
        continue;
      double lat, bw;
      if ((rc = pingpong(comm, rank, hw->leader[p], buf, &lat, &bw)))
        goto done;
      row[(size_t)node * n + p] = lat;
      row[nn + (size_t)node * n + p] = bw;
    }
  }
  /* Each leader filled its own row: a sum assembles the matrices. */
  MPI_OK(PMPI_Allreduce(MPI_IN_PLACE, row, (int)(2 * nn), MPI_DOUBLE, MPI_SUM,
                        comm));
  if (!hw->lat) {
    hw->lat = ballast__malloc(nn * sizeof *hw->lat);
    hw->bw = ballast__malloc(nn * sizeof *hw->bw);
    if (!hw->ndist)
      hw->ndist = ballast__malloc(nn * sizeof *hw->ndist);
    if (!hw->lat || !hw->bw || !hw->ndist) {
      rc = BALLAST_ENOMEM;
      goto done;
    }
  }
  /* Both ends timed the same ping-pong: use the mean of the two so the
   * model is symmetric. */
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      size_t k = (size_t)i * n + j, t = (size_t)j * n + i;
      hw->lat[k] = 0.5 * (row[k] + row[t]);
      double b = 0.5 * (row[nn + k] + row[nn + t]);
      hw->bw[k] = b > 0 ? b : INFINITY;
    }
  if (n > 1) {
    hw->net = RTA__NET_MEASURED;
    snprintf(hw->net_desc, sizeof hw->net_desc,
             "measured between %d node leaders (%d tournament rounds)", n,
             n - 1 + (n & 1));
    rta__hw_links_to_dist(hw);
  }
done:
  free(row);
  free(buf);
  return rc;
}

int rta_hw_discover(MPI_Comm comm, rta_hw_t **out) {
  return rta_hw_discover_ex(comm, NULL, out);
}

int rta_hw_discover_ex(MPI_Comm comm, const rta_hw_options_t *opt,
                       rta_hw_t **out) {
  if (!out || comm == MPI_COMM_NULL)
    return BALLAST_EINVAL;
  *out = NULL;
  int rc = 0, rank, size, lrc;
  int *node_of = NULL, *cores = NULL;
  rta__nodetopo_t *tops = NULL, mine;
  MPI_Comm shm = MPI_COMM_NULL;
  rta_hw_t *hw = ballast__calloc(1, sizeof *hw);
  if (!hw)
    return BALLAST_ENOMEM;
  MPI_OK(PMPI_Comm_rank(comm, &rank));
  MPI_OK(PMPI_Comm_size(comm, &size));
  node_of = ballast__malloc((size_t)size * sizeof *node_of);
  cores = ballast__malloc((size_t)size * sizeof *cores);
  tops = ballast__malloc((size_t)size * sizeof *tops);
  if (!node_of || !cores || !tops) {
    rc = BALLAST_ENOMEM;
    goto done;
  }
  /* Nodes: a pretended layout (parsed on rank 0, broadcast) or the
   * shared-memory split, numbered by their lowest rank. */
  const char *layout = opt && opt->layout ? opt->layout : getenv("BALLAST_HW_LAYOUT");
  if (layout && *layout) {
    lrc = rank == 0 ? parse_layout(layout, size, node_of) : 0;
    MPI_OK(PMPI_Bcast(&lrc, 1, MPI_INT, 0, comm));
    if ((rc = lrc))
      goto done;
    MPI_OK(PMPI_Bcast(node_of, size, MPI_INT, 0, comm));
  } else {
    int lowest;
    MPI_OK(PMPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL,
                                &shm));
    MPI_OK(PMPI_Allreduce(&rank, &lowest, 1, MPI_INT, MPI_MIN, shm));
    MPI_OK(PMPI_Allgather(&lowest, 1, MPI_INT, node_of, 1, MPI_INT, comm));
    /* Lowest ranks -> dense ids in rank order. */
    int *id = ballast__malloc((size_t)size * sizeof *id);
    if (!id) {
      rc = BALLAST_ENOMEM;
      goto done;
    }
    int next = 0;
    for (int r = 0; r < size; r++)
      id[r] = node_of[r] == r ? next++ : -1;
    for (int r = 0; r < size; r++)
      node_of[r] = id[node_of[r]];
    free(id);
  }
  /* Every rank's tree and binding; a node's tree is its leader's. */
  const char *desc = opt ? opt->node_topology : NULL;
  lrc = rta__hw_topo_from_desc(desc, opt ? opt->level_costs : NULL,
                               opt ? opt->nlevel_costs : 0, &mine);
  int worst;
  MPI_OK(PMPI_Allreduce(&lrc, &worst, 1, MPI_INT, MPI_MIN, comm));
  if ((rc = worst))
    goto done;
  int core = desc ? -1 : my_core();
  if (core >= mine.ncores)
    core = -1;
  MPI_OK(PMPI_Allgather(&core, 1, MPI_INT, cores, 1, MPI_INT, comm));
  MPI_OK(PMPI_Allgather(&mine, (int)sizeof mine, MPI_BYTE, tops,
                        (int)sizeof mine, MPI_BYTE, comm));
  int nnodes = 0;
  for (int r = 0; r < size; r++)
    if (node_of[r] + 1 > nnodes)
      nnodes = node_of[r] + 1;
  hw->internode_cost = opt && opt->internode_cost > 0 ? opt->internode_cost : 16.0;
  if ((rc = rta__hw_alloc(hw, nnodes, size)))
    goto done;
  hw->ntopo = nnodes;
  hw->topo = ballast__calloc((size_t)nnodes, sizeof *hw->topo);
  hw->leader = ballast__malloc((size_t)nnodes * sizeof *hw->leader);
  if (!hw->topo || !hw->leader) {
    rc = BALLAST_ENOMEM;
    goto done;
  }
  for (int n = 0; n < nnodes; n++)
    hw->leader[n] = -1;
  for (int r = 0; r < size; r++) {
    hw->slot_node[r] = node_of[r];
    if (hw->leader[node_of[r]] < 0) {
      hw->leader[node_of[r]] = r;
      hw->topo[node_of[r]] = tops[r];
      hw->node_topo[node_of[r]] = node_of[r];
    }
  }
  if ((rc = rta__hw_index_slots(hw)))
    goto done;
  /* Cores: the binding when every rank of the node is bound to a distinct
   * core, else spread the node's ranks evenly over its cores. */
  hw->bound = 1;
  for (int n = 0; n < nnodes; n++) {
    int b = hw->node_xslot[n], e = hw->node_xslot[n + 1], k = e - b;
    int nc = hw->topo[n].ncores, ok = 1;
    for (int i = b; i < e && ok; i++) {
      int ci = cores[hw->node_slot[i]];
      if (ci < 0)
        ok = 0;
      for (int j = b; j < i && ok; j++)
        if (cores[hw->node_slot[j]] == ci)
          ok = 0;
    }
    if (!ok)
      hw->bound = 0;
    for (int i = 0; i < k; i++) {
      int s = hw->node_slot[b + i];
      hw->slot_core[s] = ok ? cores[s]
                            : (k <= nc ? (int)((int64_t)i * nc / k) : i % nc);
    }
  }
  if (!hw->bound && rank == 0)
    BALLAST_INFO("processes are not bound to single cores: the hardware "
                 "model spreads each node's ranks evenly over its cores");
  snprintf(hw->net_desc, sizeof hw->net_desc, "complete graph");
  if (opt && opt->inter_arch) {
    lrc = rta__hw_load_arch(hw, opt->inter_arch);
    if (!lrc && SCOTCH_archSize(hw->arch) != nnodes) {
      BALLAST_WARN("the architecture '%s' has %d terminals, the job runs on %d "
                   "nodes", opt->inter_arch, (int)SCOTCH_archSize(hw->arch),
                   nnodes);
      lrc = BALLAST_EPARSE;
    }
    if (!lrc)
      lrc = rta__hw_cache_dist(hw);
    MPI_OK(PMPI_Allreduce(&lrc, &worst, 1, MPI_INT, MPI_MIN, comm));
    if ((rc = worst))
      goto done;
  } else if (opt && opt->measure_links) {
    if ((rc = rta_hw_refresh_links(hw, comm)))
      goto done;
  }
done:
  if (shm != MPI_COMM_NULL)
    PMPI_Comm_free(&shm);
  free(node_of);
  free(cores);
  free(tops);
  if (rc) {
    rta_hw_destroy(hw);
    return rc;
  }
  *out = hw;
  return 0;
}
