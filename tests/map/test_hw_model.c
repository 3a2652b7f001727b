/* The simulated hardware model: levels, arities, costs and distances from
 * hwloc synthetic topologies and from an XML file written at test time,
 * inter-node networks from SCOTCH architecture files, and every bad input.
 * No MPI needed. */
#include <hwloc.h>
#include <unistd.h>

#include <ballast/rta_map.h>

#include "test_util.h"
#include "test_hw.h"

static void write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  CHECK(f != NULL);
  fputs(text, f);
  fclose(f);
}

static void check_level(const rta_hw_t *hw, int node, int level, int arity,
                        double cost, const char *type) {
  int a = 0;
  double c = 0;
  const char *t = NULL;
  CHECK_EQ(rta_hw_node_level(hw, node, level, &a, &c, &t), 0);
  CHECK_EQ(a, arity);
  CHECK_NEAR(c, cost, 1e-12);
  CHECK_STREQ(t, type);
}

static void test_two_sockets(void) {
  rta_hw_t *hw = NULL;
  CHECK_EQ(rta_hw_create_sim(32, "pack:2 core:8", NULL, NULL, &hw), 0);
  CHECK_EQ(rta_hw_nnodes(hw), 32);
  CHECK_EQ(rta_hw_nslots(hw), 512);
  CHECK_EQ(rta_hw_node_nslots(hw, 31), 16);
  CHECK_EQ(rta_hw_node_nlevels(hw, 0), 2);
  check_level(hw, 0, 0, 2, 6.0, "Machine");
  check_level(hw, 5, 1, 8, 1.0, "Package");
  CHECK_EQ(rta_hw_slot_node(hw, 17), 1);
  CHECK_EQ(rta_hw_slot_core(hw, 17), 1);
  /* The 1 / 6 / 16 ladder, 0 on the same slot. */
  CHECK_NEAR(slot_dist(hw, 3, 3), 0, 0);
  CHECK_NEAR(slot_dist(hw, 0, 7), 1, 0);
  CHECK_NEAR(slot_dist(hw, 7, 8), 6, 0);
  CHECK_NEAR(slot_dist(hw, 15, 16), 16, 0);
  CHECK_NEAR(slot_dist(hw, 0, 511), 16, 0);
  CHECK_NEAR(node_dist(hw, 2, 9), 16, 0);
  double d = 7;
  CHECK_EQ(rta_hw_slot_distance(hw, 0, 512, &d), BALLAST_ERANGE);
  CHECK_EQ(rta_hw_slot_distance(hw, -1, 0, &d), BALLAST_ERANGE);
  CHECK_EQ(rta_hw_slot_distance(hw, 0, 1, NULL), BALLAST_EINVAL);
  CHECK_EQ(rta_hw_slot_distance(NULL, 0, 1, &d), BALLAST_EINVAL);
  CHECK_EQ(rta_hw_node_distance(hw, 0, 9999, &d), BALLAST_ERANGE);
  CHECK(d == 7); /* unchanged on error */
  CHECK_EQ(rta_hw_slot_node(hw, 512), BALLAST_ERANGE);
  CHECK_EQ(rta_hw_slot_core(hw, -1), BALLAST_ERANGE);
  CHECK_EQ(rta_hw_node_nslots(hw, 9999), BALLAST_ERANGE);
  CHECK_EQ(rta_hw_node_nlevels(hw, -1), BALLAST_ERANGE);
  CHECK_EQ(rta_hw_slot_node(NULL, 0), BALLAST_EINVAL);
  CHECK_EQ(rta_hw_bound(NULL), BALLAST_EINVAL);
  CHECK_EQ(rta_hw_slot_node(hw, -1), BALLAST_ERANGE);
  CHECK_EQ(rta_hw_node_level(hw, 0, 2, NULL, NULL, NULL), BALLAST_ERANGE);
  CHECK_EQ(rta_hw_link(hw, 0, 1, NULL, NULL), BALLAST_ENOTFOUND);
  CHECK_EQ(rta_hw_bound(hw), 1);
  /* The printed model names the levels. */
  char *buf = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&buf, &len);
  rta_hw_print(hw, m);
  fclose(m);
  CHECK(strstr(buf, "32 nodes, 512 slots") != NULL);
  CHECK(strstr(buf, "Machine x2 (cost 6) > Package x8 (cost 1)") != NULL);
  free(buf);
  rta_hw_destroy(hw);
}

static void test_caches_and_costs(void) {
  /* Levels of arity 1 vanish; cache levels inside a package count up. */
  rta_hw_t *hw = NULL;
  CHECK_EQ(rta_hw_create_sim(2, "pack:2 l3:2 l2:1 core:4", NULL, NULL, &hw), 0);
  CHECK_EQ(rta_hw_node_nlevels(hw, 0), 3);
  check_level(hw, 0, 0, 2, 6.0, "Machine");
  check_level(hw, 0, 1, 2, 2.0, "Package");
  check_level(hw, 0, 2, 4, 1.0, "L2Cache"); /* lowest of L3 = L2 */
  CHECK_EQ(rta_hw_nslots(hw), 32);
  CHECK_NEAR(slot_dist(hw, 0, 3), 1, 0);  /* one L2 */
  CHECK_NEAR(slot_dist(hw, 0, 4), 2, 0);  /* one package */
  CHECK_NEAR(slot_dist(hw, 0, 8), 6, 0);  /* two packages */
  CHECK_NEAR(slot_dist(hw, 0, 16), 16, 0);
  rta_hw_destroy(hw);
  /* Explicit costs and inter-node cost. */
  rta_hw_options_t o;
  rta_hw_options_init(&o);
  double costs[2] = {10, 3};
  o.level_costs = costs;
  o.nlevel_costs = 2;
  o.internode_cost = 100;
  CHECK_EQ(rta_hw_create_sim(3, "pack:2 core:2", NULL, &o, &hw), 0);
  CHECK_NEAR(slot_dist(hw, 0, 1), 3, 0);
  CHECK_NEAR(slot_dist(hw, 1, 2), 10, 0);
  CHECK_NEAR(slot_dist(hw, 1, 11), 100, 0);
  rta_hw_destroy(hw);
  o.nlevel_costs = 1; /* wrong count */
  CHECK_EQ(rta_hw_create_sim(3, "pack:2 core:2", NULL, &o, &hw), BALLAST_EINVAL);
  CHECK(hw == NULL);
}

static void test_xml(void) {
  /* Write a node with hwloc itself, read it back as an XML machine. */
  char path[] = "/tmp/ballast_hw_XXXXXX.xml";
  int fd = mkstemps(path, 4);
  CHECK(fd >= 0);
  close(fd);
  hwloc_topology_t t;
  CHECK_EQ(hwloc_topology_init(&t), 0);
  CHECK_EQ(hwloc_topology_set_synthetic(t, "pack:4 core:6 pu:2"), 0);
  CHECK_EQ(hwloc_topology_load(t), 0);
  CHECK_EQ(hwloc_topology_export_xml(t, path, 0), 0);
  hwloc_topology_destroy(t);
  rta_hw_t *hw = NULL;
  CHECK_EQ(rta_hw_create_sim(3, path, NULL, NULL, &hw), 0);
  CHECK_EQ(rta_hw_nslots(hw), 72); /* cores, not PUs */
  CHECK_EQ(rta_hw_node_nlevels(hw, 2), 2);
  check_level(hw, 2, 0, 4, 6.0, "Machine");
  check_level(hw, 2, 1, 6, 1.0, "Package");
  CHECK_NEAR(slot_dist(hw, 5, 6), 6, 0);
  CHECK_NEAR(slot_dist(hw, 24, 29), 1, 0);
  rta_hw_destroy(hw);
  /* A broken XML file. */
  write_file(path, "<?xml version=\"1.0\"?>\n<topology><object type=\"Mach");
  CHECK_EQ(rta_hw_create_sim(2, path, NULL, NULL, &hw), BALLAST_EHWLOC);
  unlink(path);
  CHECK_EQ(rta_hw_create_sim(2, "bogus:3", NULL, NULL, &hw), BALLAST_EHWLOC);
}

static void test_arch_files(void) {
  char path[] = "/tmp/ballast_arch_XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  close(fd);
  rta_hw_t *hw = NULL;
  /* A 4x2 torus: hops multiply the inter-node cost. */
  write_file(path, "torus2D 4 2\n");
  CHECK_EQ(rta_hw_create_sim(0, "pack:1 core:2", path, NULL, &hw), 0);
  CHECK_EQ(rta_hw_nnodes(hw), 8);
  CHECK_NEAR(node_dist(hw, 0, 1), 16, 0);
  CHECK_NEAR(node_dist(hw, 0, 2), 32, 0); /* two hops along x */
  CHECK_NEAR(node_dist(hw, 0, 3), 16, 0); /* wraps around */
  CHECK_NEAR(node_dist(hw, 0, 6), 48, 0); /* 2 + 1 hops */
  CHECK_NEAR(slot_dist(hw, 1, 4), 32, 0);
  rta_hw_destroy(hw);
  /* Size given and wrong. */
  CHECK_EQ(rta_hw_create_sim(5, "pack:1 core:2", path, NULL, &hw), BALLAST_EPARSE);
  /* Malformed and missing files. */
  write_file(path, "tleaf 3 4 x\n");
  CHECK_EQ(rta_hw_create_sim(0, "pack:1 core:2", path, NULL, &hw), BALLAST_EPARSE);
  write_file(path, "nosucharch 12\n");
  CHECK_EQ(rta_hw_create_sim(0, "pack:1 core:2", path, NULL, &hw), BALLAST_EPARSE);
  write_file(path, "");
  CHECK_EQ(rta_hw_create_sim(0, "pack:1 core:2", path, NULL, &hw), BALLAST_EPARSE);
  unlink(path);
  CHECK_EQ(rta_hw_create_sim(0, "pack:1 core:2", path, NULL, &hw), BALLAST_EPARSE);
  CHECK(hw == NULL);
  CHECK_EQ(rta_hw_create_sim(2, "pack:1 core:2", NULL, NULL, NULL), BALLAST_EINVAL);
}

int main(void) {
  test_two_sockets();
  test_caches_and_costs();
  test_xml();
  test_arch_files();
  TEST_PASS("map_hw_model");
  return 0;
}
