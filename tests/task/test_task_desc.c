/* Task descriptions (what a destination needs to define a moving task):
 * a round trip through remove and unpack keeps key, stage and parameters,
 * inherits callbacks, adds no stage; bad descriptions get their codes. */
#include <ballast/rta.h>

#include "task/task_internal.h"
#include "test_util.h"

static int size_cb(rta_task_t *t, size_t *len, void *user) {
  (void)t;
  (void)user;
  *len = 0;
  return 0;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  rta_task_t *root, *s0[2], *s1[3], *t;
  const char *rn[] = {"ctx"};
  rta_task_params_t rp = RTA_TASK_PARAMS_INIT;
  int user = 3;
  rp.serial.size = size_cb;
  rp.user = &user;
  CHECK_EQ(rta_define_task(NULL, 1, rn, &rp, &root), 0);
  const char *n0[] = {"x", "y"}, *n1[] = {"b0", "b1", "b2"};
  CHECK_EQ(rta_define_task(root, 2, n0, NULL, s0), 0);
  rta_comm_est_t c[2] = {{"ctx/b2", 12.5}, {"ctx/b0", 7}};
  rta_task_params_t p[3] = {RTA_TASK_PARAMS_INIT, RTA_TASK_PARAMS_INIT,
                            RTA_TASK_PARAMS_INIT};
  p[1].nprocs = 2;
  p[1].est_work = 3.25;
  p[1].state_size = 123456789;
  p[1].ncomm = 2;
  p[1].comm = c;
  CHECK_EQ(rta_define_task(root, 3, n1, p, s1), 0);
  uint64_t hash = rta__params_hash(rta_task_params(s1[1]));

  size_t sz = 0, used = 0;
  CHECK_EQ(rta__task_desc_size(s1[1], &sz), 0);
  CHECK_EQ(sz % 8, 0);
  /* 7 words, key "ctx/b1" (8 + 8), 2 partners of (8 + 8 + 8) */
  CHECK_EQ(sz, 7 * 8 + 16 + 2 * 24);
  unsigned char *buf = malloc(sz);
  CHECK_EQ(rta__task_desc_pack(s1[1], buf, sz - 1, &used), BALLAST_ESIZE);
  CHECK_EQ(rta__task_desc_pack(s1[1], buf, sz, &used), 0);
  CHECK_EQ(used, sz);

  /* Still defined here: EEXIST. */
  CHECK_EQ(rta__task_desc_unpack(buf, sz, &used, &t), BALLAST_EEXIST);
  CHECK_EQ(rta_task_remove(s1[1]), 0);
  CHECK_EQ(rta_task_find("ctx/b1", &t), BALLAST_ENOTFOUND);
  /* Truncated and corrupt descriptions. */
  CHECK_EQ(rta__task_desc_unpack(buf, sz - 8, &used, &t), BALLAST_ESIZE);
  CHECK_EQ(rta__task_desc_unpack(buf, 8, &used, &t), BALLAST_ESIZE);
  buf[0] ^= 1;
  CHECK_EQ(rta__task_desc_unpack(buf, sz, &used, &t), BALLAST_ESIZE);
  buf[0] ^= 1;
  CHECK_EQ(rta__task_desc_unpack(NULL, sz, &used, &t), BALLAST_EINVAL);

  used = 0;
  CHECK_EQ(rta__task_desc_unpack(buf, sz, &used, &t), 0);
  CHECK_EQ(used, sz);
  CHECK_STREQ(rta_task_key(t), "ctx/b1");
  CHECK(rta_task_parent(t) == root);
  CHECK_EQ(rta_task_stage(t), 1);
  CHECK_EQ(rta_task_nstages(root), 2); /* no new stage */
  CHECK_EQ(rta_task_nchildren(root), 5);
  const rta_task_params_t *q = rta_task_params(t);
  CHECK_EQ(q->nprocs, 2);
  CHECK(q->est_work == 3.25);
  CHECK_EQ(q->state_size, 123456789);
  CHECK_EQ(q->ncomm, 2);
  CHECK_STREQ(q->comm[0].key, "ctx/b0");
  CHECK(q->comm[0].bytes == 7);
  CHECK_STREQ(q->comm[1].key, "ctx/b2");
  CHECK(q->comm[1].bytes == 12.5);
  CHECK(rta__params_hash(q) == hash);
  rta_serial_t ops;
  void *u;
  CHECK_EQ(rta_task_serial(t, &ops, &u), 0); /* inherited from ctx */
  CHECK(ops.size == size_cb && u == &user);
  rta_task_t *f;
  CHECK_EQ(rta_task_find("ctx/b1", &f), 0);
  CHECK(f == t);

  /* Without its parent here: ENOTFOUND, nothing defined. */
  CHECK_EQ(rta_task_remove(t), 0);
  CHECK_EQ(rta_task_remove(root), 0);
  CHECK_EQ(rta__task_desc_unpack(buf, sz, &used, &t), BALLAST_ENOTFOUND);
  CHECK(t == NULL);
  CHECK_EQ(rta_task_find("ctx/b1", &f), BALLAST_ENOTFOUND);
  /* A parent without that stage: EINVAL. */
  CHECK_EQ(rta_define_task(NULL, 1, rn, NULL, &root), 0);
  CHECK_EQ(rta__task_desc_unpack(buf, sz, &used, &t), BALLAST_EINVAL);
  free(buf);
  TEST_PASS("task_desc: round trip and bad descriptions");
  CHECK_EQ(rta_reset(), 0);
  MPI_Finalize();
  return 0;
}
