/* Distances of the hardware model in tests: the call itself is checked, and
 * the distance returned (tests ask only for pairs they know to exist). */
#ifndef BALLAST_TEST_HW_H
#define BALLAST_TEST_HW_H

#include <ballast/rta_map.h>

#include "test_util.h"

static inline double slot_dist(const rta_hw_t *hw, int a, int b) {
  double d = -1;
  CHECK_EQ(rta_hw_slot_distance(hw, a, b, &d), 0);
  return d;
}

static inline double node_dist(const rta_hw_t *hw, int a, int b) {
  double d = -1;
  CHECK_EQ(rta_hw_node_distance(hw, a, b, &d), 0);
  return d;
}

#endif /* BALLAST_TEST_HW_H */
