/* The hardware model as one line of text, written by the load-balancing
 * record and read back by ballast-lbsim and a warm start: the model a run
 * mapped with is rebuilt exactly (same slots, trees, costs and measured
 * links), so mapping the recorded graphs again gives the same slots.
 *
 *   H nnodes nslots bound internode net ntopo
 *     { ncores nlevels { arity cost type } x nlevels } x ntopo
 *     { topo leader } x nnodes   { node core } x nslots
 *     [ lat x nnodes^2  bw x nnodes^2 ]        (net "measured" only)
 * net is "flat" or "measured"; doubles are C99 hexadecimal floats; a
 * leader of -1 means none (a simulated model). A model whose network is a
 * SCOTCH architecture file is refused: load balancing never builds one. */
#include "map/map_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common_internal.h"
#include "common/tok.h"

int map__hw_to_text(const rta_hw_t *hw, FILE *f) {
  if (!hw || !f)
    return BALLAST_EINVAL;
  if (hw->net == MAP__NET_ARCH) {
    BALLAST_WARN("the hardware model's network is a SCOTCH architecture file, "
                 "which has no text form");
    return BALLAST_EINVAL;
  }
  int meas = hw->net == MAP__NET_MEASURED;
  fprintf(f, "H %d %d %d %a %s %d", hw->nnodes, hw->nslots, hw->bound,
          hw->internode_cost, meas ? "measured" : "flat", hw->ntopo);
  for (int t = 0; t < hw->ntopo; t++) {
    const map__nodetopo_t *x = &hw->topo[t];
    fprintf(f, " %d %d", x->ncores, x->nlevels);
    for (int l = 0; l < x->nlevels; l++)
      fprintf(f, " %d %a %s", x->arity[l], x->cost[l], x->type[l][0] ? x->type[l] : "-");
  }
  for (int n = 0; n < hw->nnodes; n++)
    fprintf(f, " %d %d", hw->node_topo[n], hw->leader ? hw->leader[n] : -1);
  for (int s = 0; s < hw->nslots; s++)
    fprintf(f, " %d %d", hw->slot_node[s], hw->slot_core[s]);
  size_t nn = (size_t)hw->nnodes * (size_t)hw->nnodes;
  for (size_t k = 0; meas && k < 2 * nn; k++)
    fprintf(f, " %a", k < nn ? hw->lat[k] : hw->bw[k - nn]);
  fputc('\n', f);
  return ferror(f) ? BALLAST_EIO : 0;
}

/* The node trees. */
static int read_topos(ballast__tok_t *t, rta_hw_t *hw, char *why, size_t nwhy) {
  for (int i = 0; i < hw->ntopo && !t->bad; i++) {
    map__nodetopo_t *x = &hw->topo[i];
    int ncores = (int)ballast__tok_int(t, 1, MAP__HW_MAX_PUS);
    x->nlevels = (int)ballast__tok_int(t, 0, MAP__MAXLEV);
    for (int l = 0; l < x->nlevels && !t->bad; l++) {
      x->arity[l] = (int)ballast__tok_int(t, 1, MAP__HW_MAX_PUS);
      x->cost[l] = ballast__tok_f64(t);
      size_t n;
      const char *w = ballast__tok_word(t, &n);
      if (w && n < sizeof x->type[l] && !(n == 1 && *w == '-'))
        memcpy(x->type[l], w, n);
    }
    if (t->bad || map__hw_topo_finish(x) || x->ncores != ncores) {
      snprintf(why, nwhy, "node tree %d is malformed (its cores and levels "
               "do not agree)", i);
      return BALLAST_EPARSE;
    }
  }
  return 0;
}

/* Nodes, slots and links, checked against each other. */
static int read_layout(ballast__tok_t *t, rta_hw_t *hw, int meas, char *why,
                       size_t nwhy) {
  for (int n = 0; n < hw->nnodes && !t->bad; n++) {
    hw->node_topo[n] = (int)ballast__tok_int(t, 0, hw->ntopo - 1);
    hw->leader[n] = (int)ballast__tok_int(t, -1, hw->nslots - 1);
  }
  for (int s = 0; s < hw->nslots && !t->bad; s++) {
    int n = (int)ballast__tok_int(t, 0, hw->nnodes - 1);
    hw->slot_node[s] = n;
    if (!t->bad)
      hw->slot_core[s] = (int)ballast__tok_int(t, 0, hw->topo[hw->node_topo[n]].ncores - 1);
  }
  if (t->bad) {
    snprintf(why, nwhy, "a node or slot is out of range or missing");
    return BALLAST_EPARSE;
  }
  if (!meas)
    return 0;
  size_t nn = (size_t)hw->nnodes * (size_t)hw->nnodes;
  hw->lat = ballast__malloc(nn * sizeof *hw->lat);
  hw->bw = ballast__malloc(nn * sizeof *hw->bw);
  hw->ndist = ballast__malloc(nn * sizeof *hw->ndist);
  if (!hw->lat || !hw->bw || !hw->ndist)
    return BALLAST_ENOMEM;
  for (size_t k = 0; k < nn && !t->bad; k++)
    hw->lat[k] = ballast__tok_f64(t);
  for (size_t k = 0; k < nn && !t->bad; k++) {
    /* an unmeasured pair's bandwidth is infinite, written "inf" */
    if (ballast__tok_is(t, "inf"))
      hw->bw[k] = INFINITY;
    else
      hw->bw[k] = ballast__tok_f64(t);
  }
  if (t->bad) {
    snprintf(why, nwhy, "the measured links are missing or malformed");
    return BALLAST_EPARSE;
  }
  hw->net = MAP__NET_MEASURED;
  snprintf(hw->net_desc, sizeof hw->net_desc, "measured between %d node leaders "
           "(recorded)", hw->nnodes);
  map__hw_links_to_dist(hw);
  return 0;
}

int map__hw_from_text(const char *line, rta_hw_t **out, char *why, size_t nwhy) {
  if (!line || !out || !why)
    return BALLAST_EINVAL;
  *out = NULL;
  why[0] = '\0';
  ballast__tok_t t = {line, 0};
  if (!ballast__tok_is(&t, "H")) {
    snprintf(why, nwhy, "not a hardware model (H) line");
    return BALLAST_EPARSE;
  }
  rta_hw_t *hw = ballast__calloc(1, sizeof *hw);
  if (!hw)
    return BALLAST_ENOMEM;
  int nnodes = (int)ballast__tok_int(&t, 1, 1 << 24);
  int nslots = (int)ballast__tok_int(&t, 1, 1 << 28);
  hw->bound = (int)ballast__tok_int(&t, 0, 1);
  hw->internode_cost = ballast__tok_f64(&t);
  int meas = ballast__tok_is(&t, "measured");
  if (!meas && !ballast__tok_is(&t, "flat"))
    t.bad = 1;
  hw->ntopo = (int)ballast__tok_int(&t, 1, nnodes);
  int rc = 0;
  /* every node and slot takes at least 4 bytes of the line: refuse counts
   * the line cannot hold before allocating for them */
  if (!t.bad && strlen(t.p) / 4 < (size_t)nslots + (size_t)nnodes)
    t.bad = 1;
  if (t.bad || hw->internode_cost <= 0) {
    snprintf(why, nwhy, "the header (nodes, slots, bound, cost, network, trees) "
             "is malformed");
    rc = BALLAST_EPARSE;
  }
  if (!rc)
    rc = map__hw_alloc(hw, nnodes, nslots);
  if (!rc) {
    hw->topo = ballast__calloc((size_t)hw->ntopo, sizeof *hw->topo);
    hw->leader = ballast__malloc((size_t)nnodes * sizeof *hw->leader);
    rc = hw->topo && hw->leader ? 0 : BALLAST_ENOMEM;
  }
  snprintf(hw->net_desc, sizeof hw->net_desc, "complete graph");
  if (!rc)
    rc = read_topos(&t, hw, why, nwhy);
  if (!rc)
    rc = read_layout(&t, hw, meas, why, nwhy);
  if (!rc && !ballast__tok_done(&t)) {
    snprintf(why, nwhy, "unexpected text after the model");
    rc = BALLAST_EPARSE;
  }
  if (!rc)
    rc = map__hw_index_slots(hw);
  if (rc) {
    if (rc == BALLAST_ENOMEM && !why[0])
      snprintf(why, nwhy, "out of memory");
    rta_hw_destroy(hw);
    return rc;
  }
  *out = hw;
  return 0;
}
