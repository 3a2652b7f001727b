/* What a remap moved, counted in the map tests from the two mappings. */
#ifndef BALLAST_TEST_REMAP_UTIL_H
#define BALLAST_TEST_REMAP_UTIL_H

#include <stdint.h>

#include "map/map_remap.h"

/* Entries where a and b differ. */
static inline int64_t moved(int64_t n, const int64_t *a, const int64_t *b) {
  int64_t m = 0;
  for (int64_t v = 0; v < n; v++)
    m += a[v] != b[v];
  return m;
}

/* Tasks away from their old slot (a task without one, prev < 0, does not
 * count) and their state bytes, as a budget. */
static inline map__budget_t migrated(const rta_graph_t *g, const int64_t *prev,
                                     const int64_t *slot) {
  map__budget_t m = {0, 0};
  for (int64_t v = 0; v < g->nvert; v++)
    if (prev[v] >= 0 && slot[v] != prev[v]) {
      m.tasks++;
      m.bytes += g->state[v];
    }
  return m;
}

#endif /* BALLAST_TEST_REMAP_UTIL_H */
