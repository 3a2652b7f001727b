/* The hardware model: node trees from hwloc, the inter-node network (flat,
 * SCOTCH arch file or measured), slots, distances, simulation and printing.
 * Run-time discovery over MPI lives in hw_discover.c. */
#include <hwloc.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/common_internal.h"
#include "map/map_internal.h"

/* Above this many nodes the node-distance matrix is not cached. */
#define HW_DIST_CACHE_MAX 2048

void rta_hw_options_init(rta_hw_options_t *o) {
  if (o)
    memset(o, 0, sizeof *o);
}

static int looks_like_path(const char *s) {
  size_t n = strlen(s);
  return s[0] == '/' || s[0] == '.' || (n > 4 && strcmp(s + n - 4, ".xml") == 0);
}

void map__hw_default_costs(map__nodetopo_t *t, int pkg_level) {
  for (int l = 0; l < t->nlevels; l++) {
    if (l < pkg_level)
      t->cost[l] = 6.0 + 2.0 * (pkg_level - 1 - l);
    else
      t->cost[l] = 1.0 + (t->nlevels - 1 - l);
  }
}

int map__hw_topo_finish(map__nodetopo_t *t) {
  int64_t s = 1;
  for (int l = t->nlevels - 1; l >= 0; l--) {
    t->stride[l] = s;
    s *= t->arity[l];
    if (s > INT32_MAX)
      return BALLAST_ERANGE;
  }
  t->ncores = (int)s;
  return 0;
}

int map__hw_topo_from_desc(const char *desc, const double *costs, int ncosts,
                           map__nodetopo_t *t) {
  memset(t, 0, sizeof *t);
  hwloc_topology_t topo;
  if (hwloc_topology_init(&topo) < 0)
    return BALLAST_EHWLOC;
  int rc = 0;
  if (desc && *desc) {
    if (looks_like_path(desc)) {
      if ((rc = map__hw_check_xml(desc)) == 0 &&
          hwloc_topology_set_xml(topo, desc) < 0) {
        BALLAST_WARN("hwloc cannot read the XML topology '%s'", desc);
        rc = BALLAST_EHWLOC;
      }
    } else if ((rc = map__hw_check_synthetic(desc)) != 0) {
      /* refused before hwloc spends minutes on it */
    } else if (hwloc_topology_set_synthetic(topo, desc) < 0) {
      /* hwloc wants PUs last; "pack:2 core:8" means one PU per core. */
      char buf[512];
      snprintf(buf, sizeof buf, "%s pu:1", desc);
      if (strstr(desc, "pu:") || strlen(desc) > 400 ||
          hwloc_topology_set_synthetic(topo, buf) < 0) {
        BALLAST_WARN("hwloc rejects the synthetic topology '%s' (expected e.g. "
                     "\"pack:2 core:8\")", desc);
        rc = BALLAST_EHWLOC;
      }
    }
  }
  if (!rc && hwloc_topology_load(topo) < 0) {
    BALLAST_WARN("hwloc cannot load the topology '%s'", desc ? desc : "(this machine)");
    rc = BALLAST_EHWLOC;
  }
  if (rc) {
    hwloc_topology_destroy(topo);
    return rc;
  }
  int cdepth = hwloc_get_type_depth(topo, HWLOC_OBJ_CORE);
  if (cdepth < 0)
    cdepth = hwloc_get_type_depth(topo, HWLOC_OBJ_PU);
  int pdepth = hwloc_get_type_depth(topo, HWLOC_OBJ_PACKAGE);
  hwloc_obj_t root = hwloc_get_root_obj(topo);
  int pkg_level = -1;
  if (!root->symmetric_subtree) {
    /* An asymmetric node cannot be a tree-leaf: one flat level. */
    BALLAST_WARN("the node topology '%s' is not symmetric: modelled as one "
                 "flat level of cores", desc ? desc : "(this machine)");
    t->nlevels = 1;
    t->arity[0] = hwloc_get_nbobjs_by_depth(topo, (unsigned)cdepth);
    snprintf(t->type[0], sizeof t->type[0], "Machine");
    pkg_level = 1;
  } else {
    for (int d = 0; d < cdepth; d++) {
      int a = hwloc_get_nbobjs_by_depth(topo, (unsigned)d + 1) /
              hwloc_get_nbobjs_by_depth(topo, (unsigned)d);
      if (pdepth >= 0 && d >= pdepth && pkg_level < 0)
        pkg_level = t->nlevels;
      if (a <= 1)
        continue;
      if (t->nlevels == MAP__MAXLEV) {
        rc = BALLAST_ERANGE;
        break;
      }
      t->arity[t->nlevels] = a;
      snprintf(t->type[t->nlevels], sizeof t->type[0], "%s",
               hwloc_obj_type_string(hwloc_get_obj_by_depth(topo, (unsigned)d, 0)->type));
      t->nlevels++;
    }
    if (pkg_level < 0)
      pkg_level = pdepth >= 0 ? t->nlevels : 0;
  }
  hwloc_topology_destroy(topo);
  if (rc)
    return rc;
  if (t->nlevels == 0) {
    /* A single core: one level of arity 1 keeps the tree well formed. */
    t->nlevels = 1;
    t->arity[0] = 1;
    snprintf(t->type[0], sizeof t->type[0], "Machine");
  }
  map__hw_default_costs(t, pkg_level);
  if (costs) {
    if (ncosts != t->nlevels) {
      BALLAST_WARN("%d level costs given, the node has %d levels", ncosts,
                   t->nlevels);
      return BALLAST_EINVAL;
    }
    for (int l = 0; l < ncosts; l++) {
      if (!(costs[l] > 0) || !isfinite(costs[l]))
        return BALLAST_EINVAL;
      t->cost[l] = costs[l];
    }
  }
  return map__hw_topo_finish(t);
}

int map__hw_alloc(rta_hw_t *hw, int nnodes, int nslots) {
  hw->nnodes = nnodes;
  hw->nslots = nslots;
  hw->slot_node = ballast__calloc((size_t)nslots, sizeof(int));
  hw->slot_core = ballast__calloc((size_t)nslots, sizeof(int));
  hw->node_xslot = ballast__calloc((size_t)nnodes + 1, sizeof(int));
  hw->node_slot = ballast__calloc((size_t)nslots, sizeof(int));
  hw->node_topo = ballast__calloc((size_t)nnodes, sizeof(int));
  if (!hw->slot_node || !hw->slot_core || !hw->node_xslot || !hw->node_slot ||
      !hw->node_topo)
    return BALLAST_ENOMEM;
  if (hw->internode_cost <= 0)
    hw->internode_cost = 16.0;
  return 0;
}

int map__hw_index_slots(rta_hw_t *hw) {
  memset(hw->node_xslot, 0, ((size_t)hw->nnodes + 1) * sizeof(int));
  for (int s = 0; s < hw->nslots; s++)
    hw->node_xslot[hw->slot_node[s] + 1]++;
  for (int n = 0; n < hw->nnodes; n++)
    hw->node_xslot[n + 1] += hw->node_xslot[n];
  int *fill = ballast__malloc((size_t)hw->nnodes * sizeof *fill);
  if (!fill)
    return BALLAST_ENOMEM;
  memcpy(fill, hw->node_xslot, (size_t)hw->nnodes * sizeof *fill);
  for (int s = 0; s < hw->nslots; s++)
    hw->node_slot[fill[hw->slot_node[s]]++] = s;
  free(fill);
  return 0;
}

int map__hw_load_arch(rta_hw_t *hw, const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) {
    BALLAST_WARN("cannot open the SCOTCH architecture file '%s'", path);
    return BALLAST_EPARSE;
  }
  /* SCOTCH sees only files that passed ballast's own check (arch_check.c). */
  int64_t nterm = 0;
  int rc = map__arch_check(f, path, &nterm);
  if (rc) {
    fclose(f);
    return rc;
  }
  rewind(f);
  hw->arch = ballast__malloc(sizeof *hw->arch);
  if (!hw->arch) {
    fclose(f);
    return BALLAST_ENOMEM;
  }
  SCOTCH_archInit(hw->arch);
  int r = SCOTCH_archLoad(hw->arch, f);
  fclose(f);
  if (r != 0) {
    BALLAST_WARN("'%s' is not a valid SCOTCH architecture file (SCOTCH_archLoad "
                 "failed: expected e.g. \"cmplt 32\", \"tleaf 2 4 10 8 1\", "
                 "\"torus3D 4 4 2\")", path);
    SCOTCH_archExit(hw->arch);
    free(hw->arch);
    hw->arch = NULL;
    return BALLAST_EPARSE;
  }
  if (SCOTCH_archSize(hw->arch) != nterm) {
    BALLAST_WARN("the SCOTCH architecture '%s' has %lld terminals for SCOTCH, "
                 "%lld by its description", path,
                 (long long)SCOTCH_archSize(hw->arch), (long long)nterm);
    return BALLAST_EPARSE;
  }
  hw->net = MAP__NET_ARCH;
  snprintf(hw->net_desc, sizeof hw->net_desc, "SCOTCH %s from %s",
           SCOTCH_archName(hw->arch), path);
  return 0;
}

int map__hw_cache_dist(rta_hw_t *hw) {
  if (hw->net != MAP__NET_ARCH)
    return 0;
  int n = hw->nnodes;
  hw->arch_dom = ballast__malloc((size_t)n * sizeof *hw->arch_dom);
  if (!hw->arch_dom)
    return BALLAST_ENOMEM;
  for (int i = 0; i < n; i++)
    if (SCOTCH_archDomTerm(hw->arch, &hw->arch_dom[i], i) != 0)
      return BALLAST_ESCOTCH;
  if (n > HW_DIST_CACHE_MAX)
    return 0;
  hw->ndist = ballast__malloc((size_t)n * (size_t)n * sizeof *hw->ndist);
  if (!hw->ndist)
    return BALLAST_ENOMEM;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      hw->ndist[(size_t)i * n + j] =
          (float)(hw->internode_cost *
                  (double)SCOTCH_archDomDist(hw->arch, &hw->arch_dom[i],
                                             &hw->arch_dom[j]));
  return 0;
}

void map__hw_links_to_dist(rta_hw_t *hw) {
  /* Cost of a 64 KiB message, normalised so the cheapest link costs one
   * inter-node hop. */
  int n = hw->nnodes;
  double mn = INFINITY;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      if (i != j) {
        double c = hw->lat[i * n + j] + 65536.0 / hw->bw[i * n + j];
        if (c < mn)
          mn = c;
      }
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      double c = hw->lat[i * n + j] + 65536.0 / hw->bw[i * n + j];
      hw->ndist[(size_t)i * n + j] =
          i == j ? 0.0f : (float)(hw->internode_cost * c / mn);
    }
}

double map__hw_node_dist(const rta_hw_t *hw, int a, int b) {
  if (a == b)
    return 0.0;
  if (hw->ndist)
    return hw->ndist[(size_t)a * hw->nnodes + b];
  if (hw->net == MAP__NET_ARCH)
    return hw->internode_cost *
           (double)SCOTCH_archDomDist(hw->arch, &hw->arch_dom[a],
                                      &hw->arch_dom[b]);
  return hw->internode_cost;
}

double map__hw_dist(const rta_hw_t *hw, int a, int b) {
  if (a == b)
    return 0.0;
  int na = hw->slot_node[a], nb = hw->slot_node[b];
  if (na != nb)
    return map__hw_node_dist(hw, na, nb);
  int ca = hw->slot_core[a], cb = hw->slot_core[b];
  if (ca == cb)
    return 0.0; /* two slots sharing one core (oversubscribed) */
  const map__nodetopo_t *t = &hw->topo[hw->node_topo[na]];
  for (int l = 0; l < t->nlevels; l++)
    if (ca / t->stride[l] / t->arity[l] == cb / t->stride[l] / t->arity[l] &&
        ca / t->stride[l] != cb / t->stride[l])
      return t->cost[l];
  return t->cost[t->nlevels - 1];
}

int rta_hw_create_sim(int64_t nnodes, const char *node_topology,
                      const char *inter_arch, const rta_hw_options_t *opt,
                      rta_hw_t **out) {
  if (!out)
    return BALLAST_EINVAL;
  *out = NULL;
  rta_hw_t *hw = ballast__calloc(1, sizeof *hw);
  if (!hw)
    return BALLAST_ENOMEM;
  hw->sim = 1;
  hw->bound = 1;
  hw->internode_cost = opt && opt->internode_cost > 0 ? opt->internode_cost : 16.0;
  int rc;
  hw->ntopo = 1;
  hw->topo = ballast__calloc(1, sizeof *hw->topo);
  if (!hw->topo) {
    rc = BALLAST_ENOMEM;
    goto fail;
  }
  if ((rc = map__hw_topo_from_desc(node_topology,
                                   opt ? opt->level_costs : NULL,
                                   opt ? opt->nlevel_costs : 0, hw->topo)))
    goto fail;
  snprintf(hw->net_desc, sizeof hw->net_desc, "complete graph");
  if (inter_arch) {
    if ((rc = map__hw_load_arch(hw, inter_arch)))
      goto fail;
    SCOTCH_Num sz = SCOTCH_archSize(hw->arch);
    if (nnodes <= 0)
      nnodes = sz;
    if (sz != nnodes) {
      BALLAST_WARN("the architecture '%s' has %d terminals, %lld nodes were "
                   "asked for", inter_arch, (int)sz, (long long)nnodes);
      rc = BALLAST_EPARSE;
      goto fail;
    }
  }
  if (nnodes < 1) {
    rc = BALLAST_EINVAL;
    goto fail;
  }
  int nc = hw->topo->ncores;
  if (nnodes > INT32_MAX / nc) {
    rc = BALLAST_ERANGE;
    goto fail;
  }
  if ((rc = map__hw_alloc(hw, (int)nnodes, (int)nnodes * nc)))
    goto fail;
  for (int s = 0; s < hw->nslots; s++) {
    hw->slot_node[s] = s / nc;
    hw->slot_core[s] = s % nc;
  }
  if ((rc = map__hw_index_slots(hw)) || (rc = map__hw_cache_dist(hw)))
    goto fail;
  *out = hw;
  return 0;
fail:
  rta_hw_destroy(hw);
  return rc;
}

void rta_hw_destroy(rta_hw_t *hw) {
  if (!hw)
    return;
  free(hw->slot_node);
  free(hw->slot_core);
  free(hw->node_xslot);
  free(hw->node_slot);
  free(hw->topo);
  free(hw->node_topo);
  if (hw->arch) {
    SCOTCH_archExit(hw->arch);
    free(hw->arch);
  }
  free(hw->arch_dom);
  free(hw->ndist);
  free(hw->lat);
  free(hw->bw);
  free(hw->leader);
  free(hw);
}

int rta_hw_nslots(const rta_hw_t *hw) { return hw ? hw->nslots : BALLAST_EINVAL; }
int rta_hw_nnodes(const rta_hw_t *hw) { return hw ? hw->nnodes : BALLAST_EINVAL; }
int rta_hw_bound(const rta_hw_t *hw) { return hw ? hw->bound != 0 : BALLAST_EINVAL; }

/* The one answer to a bad index (ballast.h, Errors): NULL is BALLAST_EINVAL,
 * an index outside 0..n-1 BALLAST_ERANGE, 0 when it is fine. */
static int check_index(const rta_hw_t *hw, int i, int n) {
  if (!hw)
    return BALLAST_EINVAL;
  return i < 0 || i >= n ? BALLAST_ERANGE : 0;
}

int rta_hw_slot_node(const rta_hw_t *hw, int slot) {
  int rc = check_index(hw, slot, hw ? hw->nslots : 0);
  return rc ? rc : hw->slot_node[slot];
}

int rta_hw_slot_core(const rta_hw_t *hw, int slot) {
  int rc = check_index(hw, slot, hw ? hw->nslots : 0);
  return rc ? rc : hw->slot_core[slot];
}

int rta_hw_node_nslots(const rta_hw_t *hw, int node) {
  int rc = check_index(hw, node, hw ? hw->nnodes : 0);
  return rc ? rc : hw->node_xslot[node + 1] - hw->node_xslot[node];
}

int rta_hw_node_nlevels(const rta_hw_t *hw, int node) {
  int rc = check_index(hw, node, hw ? hw->nnodes : 0);
  return rc ? rc : hw->topo[hw->node_topo[node]].nlevels;
}

int rta_hw_node_level(const rta_hw_t *hw, int node, int level, int *arity,
                      double *cost, const char **type) {
  int rc = check_index(hw, node, hw ? hw->nnodes : 0);
  if (rc)
    return rc;
  const map__nodetopo_t *t = &hw->topo[hw->node_topo[node]];
  if (level < 0 || level >= t->nlevels)
    return BALLAST_ERANGE;
  if (arity)
    *arity = t->arity[level];
  if (cost)
    *cost = t->cost[level];
  if (type)
    *type = t->type[level];
  return 0;
}

int rta_hw_slot_distance(const rta_hw_t *hw, int a, int b, double *out) {
  int rc = check_index(hw, a, hw ? hw->nslots : 0);
  if (!rc)
    rc = check_index(hw, b, hw->nslots);
  if (!rc && !out)
    rc = BALLAST_EINVAL;
  if (!rc)
    *out = map__hw_dist(hw, a, b);
  return rc;
}

int rta_hw_node_distance(const rta_hw_t *hw, int a, int b, double *out) {
  int rc = check_index(hw, a, hw ? hw->nnodes : 0);
  if (!rc)
    rc = check_index(hw, b, hw->nnodes);
  if (!rc && !out)
    rc = BALLAST_EINVAL;
  if (!rc)
    *out = map__hw_node_dist(hw, a, b);
  return rc;
}

int rta_hw_link(const rta_hw_t *hw, int a, int b, double *latency,
                double *bandwidth) {
  int rc = check_index(hw, a, hw ? hw->nnodes : 0);
  if (!rc)
    rc = check_index(hw, b, hw->nnodes);
  if (rc)
    return rc;
  if (!hw->lat)
    return BALLAST_ENOTFOUND;
  if (latency)
    *latency = hw->lat[(size_t)a * hw->nnodes + b];
  if (bandwidth)
    *bandwidth = hw->bw[(size_t)a * hw->nnodes + b];
  return 0;
}

void rta_hw_print(const rta_hw_t *hw, FILE *f) {
  if (!hw || !f)
    return;
  fprintf(f, "hardware model (%s): %d nodes, %d slots, core binding %s\n",
          hw->sim ? "simulated" : "discovered", hw->nnodes, hw->nslots,
          hw->bound ? "known" : "guessed (processes not bound: spread over cores)");
  fprintf(f, "  network: %s; one inter-node hop costs %g\n", hw->net_desc,
          hw->internode_cost);
  int shown = 0;
  for (int n = 0; n < hw->nnodes; n++) {
    const map__nodetopo_t *t = &hw->topo[hw->node_topo[n]];
    if (n > 0 && shown >= 4 && n != hw->nnodes - 1) {
      if (shown == 4)
        fprintf(f, "  ...\n");
      shown++;
      continue;
    }
    shown++;
    fprintf(f, "  node %d: %d slots, %d cores:", n, rta_hw_node_nslots(hw, n),
            t->ncores);
    for (int l = 0; l < t->nlevels; l++)
      fprintf(f, " %s%s x%d (cost %g)", l ? "> " : "", t->type[l], t->arity[l],
              t->cost[l]);
    fprintf(f, "\n");
  }
  int ns = hw->nslots < 16 ? hw->nslots : 16;
  fprintf(f, "  slots (node/core):");
  for (int s = 0; s < ns; s++)
    fprintf(f, " %d:%d/%d", s, hw->slot_node[s], hw->slot_core[s]);
  fprintf(f, "%s\n", ns < hw->nslots ? " ..." : "");
  if (hw->lat && hw->nnodes <= 16) {
    fprintf(f, "  measured links (latency us / bandwidth MB/s):\n");
    for (int i = 0; i < hw->nnodes; i++) {
      fprintf(f, "   ");
      for (int j = 0; j < hw->nnodes; j++) {
        size_t k = (size_t)i * hw->nnodes + j;
        if (i == j)
          fprintf(f, "        -        ");
        else
          fprintf(f, " %7.2f/%-9.1f", hw->lat[k] * 1e6, hw->bw[k] / 1e6);
      }
      fprintf(f, "\n");
    }
  }
  if (hw->nnodes > 1 && hw->nnodes <= 8) {
    fprintf(f, "  node distances:\n");
    for (int i = 0; i < hw->nnodes; i++) {
      fprintf(f, "   ");
      for (int j = 0; j < hw->nnodes; j++)
        fprintf(f, " %6.2f", map__hw_node_dist(hw, i, j));
      fprintf(f, "\n");
    }
  }
}
