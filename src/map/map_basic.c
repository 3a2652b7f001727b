/* Strategy names and options, and the baseline strategies ballast's mapping
 * is compared with: block, round-robin and random. */
#include <stdint.h>
#include <string.h>

#include "common/common_internal.h"
#include "map/map_internal.h"

static const char *const strategy_names[RTA_MAP_NSTRATEGIES] = {
    "twophase", "tleaf", "block", "roundrobin", "random"};

const char *rta_strategy_name(rta_strategy_t s) {
  return (unsigned)s < RTA_MAP_NSTRATEGIES ? strategy_names[s] : "unknown";
}

int rta_strategy_parse(const char *name, rta_strategy_t *s) {
  if (!name || !s)
    return BALLAST_EINVAL;
  for (int i = 0; i < RTA_MAP_NSTRATEGIES; i++)
    if (strcmp(name, strategy_names[i]) == 0) {
      *s = (rta_strategy_t)i;
      return 0;
    }
  return BALLAST_EINVAL;
}

void rta_map_options_init(rta_map_options_t *o) {
  if (!o)
    return;
  memset(o, 0, sizeof *o);
  o->balrat = 0.03;
  o->steps_between_remaps = 10;
}

/* ---- baselines ------------------------------------------------------------- */

void map__roundrobin(const rta_graph_t *g, const rta_hw_t *hw,
                     int64_t *slot) {
  for (int64_t v = 0; v < g->nvert; v++)
    slot[v] = v % hw->nslots;
}

void map__random(const rta_graph_t *g, const rta_hw_t *hw, unsigned seed,
                 int64_t *slot) {
  uint64_t ns = (uint64_t)hw->nslots;
  for (int64_t v = 0; v < g->nvert; v++)
    slot[v] = (int64_t)(ballast__splitmix64(((uint64_t)seed << 32) ^ (uint64_t)v) % ns);
}

/* Consecutive vertices in blocks of equal work: vertex v goes to the slot
 * its work's midpoint falls in. */
void map__block(const rta_graph_t *g, const rta_hw_t *hw, int64_t *slot) {
  int ns = hw->nslots;
  double total = 0;
  for (int64_t v = 0; v < g->nvert; v++)
    total += g->work[v];
  double acc = 0;
  for (int64_t v = 0; v < g->nvert; v++) {
    double mid = total > 0 ? (acc + g->work[v] / 2) / total
                           : (v + 0.5) / (double)g->nvert;
    int64_t s = (int64_t)(mid * ns);
    slot[v] = s < 0 ? 0 : s >= ns ? ns - 1 : s;
    acc += g->work[v];
  }
}

