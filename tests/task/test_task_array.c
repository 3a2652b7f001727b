/* Registered arrays: packed sizes for several types and dimensions (values
 * computed here independently), every bad-input path, and a pack/unpack
 * round trip into arrays registered on another task (what a move does). */
#include <ballast/rta.h>

#include <complex.h>
#include <stdint.h>

#include "task/task_internal.h"
#include "test_util.h"

static size_t r8(size_t n) { return (n + 7) / 8 * 8; }
#define HDR 96 /* 8 * (4 + RTA_MAX_DIMS) */

static rta_task_t *leaf(const char *name) {
  rta_task_t *root = NULL, *t = NULL;
  if (rta_task_find("arr", &root) != 0) {
    const char *rn[] = {"arr"};
    CHECK_EQ(rta_task_define(NULL, 1, rn, NULL, &root), 0);
  }
  const char *n[] = {name};
  CHECK_EQ(rta_task_define(root, 1, n, NULL, &t), 0);
  return t;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  CHECK_EQ(rta_elem_size(RTA_DOUBLE), 8);
  CHECK_EQ(rta_elem_size(RTA_INT16), 2);
  CHECK_EQ(rta_elem_size(RTA_COMPLEX_DOUBLE), 16);
  CHECK_EQ(rta_elem_size((rta_elem_t)0), 0);
  CHECK_EQ(rta_elem_size(RTA_ELEM_END_), 0);

  rta_task_t *t = leaf("src");
  size_t bytes = 0;
  CHECK_EQ(rta_task_arrays_packed_size(t, &bytes), 0);
  CHECK_EQ(bytes, 8); /* just the count */

  /* double[10][20] */
  double *d = malloc(200 * sizeof *d);
  for (int i = 0; i < 200; i++)
    d[i] = i * 0.5;
  int64_t dd[] = {10, 20};
  CHECK_EQ(rta_task_array_register(t, (void **)&d, rta_type_elem(RTA_DOUBLE), 2, dd), 0);
  size_t expect = 8 + HDR + 1600;
  CHECK_EQ(rta_task_arrays_packed_size(t, &bytes), 0);
  CHECK_EQ(bytes, expect);

  /* int32[3][5][7]: 420 bytes, padded to 424 */
  int32_t *ia = malloc(105 * sizeof *ia);
  for (int i = 0; i < 105; i++)
    ia[i] = -i * 3;
  int64_t di[] = {3, 5, 7};
  CHECK_EQ(rta_task_array_register(t, (void **)&ia, rta_type_elem(RTA_INT32), 3, di), 0);
  expect += HDR + r8(420);
  /* char[13]: padded to 16 */
  char *cs = malloc(13);
  memcpy(cs, "hello, ballas", 13);
  int64_t dc[] = {13};
  CHECK_EQ(rta_task_array_register(t, (void **)&cs, rta_type_elem(RTA_CHAR), 1, dc), 0);
  expect += HDR + 16;
  /* double complex[2][2][2][2] */
  double _Complex *z = malloc(16 * sizeof *z);
  for (int i = 0; i < 16; i++)
    z[i] = i + 2.0 * i * I;
  int64_t dz[] = {2, 2, 2, 2};
  CHECK_EQ(rta_task_array_register(t, (void **)&z, rta_type_elem(RTA_COMPLEX_DOUBLE), 4, dz), 0);
  expect += HDR + 256;
  /* MPI_DOUBLE[7] */
  double *md = malloc(7 * sizeof *md);
  for (int i = 0; i < 7; i++)
    md[i] = 100 + i;
  int64_t dm[] = {7};
  CHECK_EQ(rta_task_array_register(t, (void **)&md, rta_type_mpi(MPI_DOUBLE), 1, dm), 0);
  expect += HDR + 56;
  /* A derived type: 2 ints out of every 3 (extent 12 bytes, 8 of data). */
  MPI_Datatype vec;
  MPI_Type_vector(1, 2, 3, MPI_INT, &vec);
  MPI_Datatype vec3;
  MPI_Type_create_resized(vec, 0, 3 * sizeof(int), &vec3);
  MPI_Type_commit(&vec3);
  MPI_Type_free(&vec);
  int *vi = malloc(5 * 3 * sizeof *vi);
  for (int i = 0; i < 15; i++)
    vi[i] = (i % 3 == 2) ? -1 : 1000 + i;
  int64_t dv[] = {5};
  CHECK_EQ(rta_task_array_register(t, (void **)&vi, rta_type_mpi(vec3), 1, dv), 0);
  MPI_Type_free(&vec3); /* rta keeps its own duplicate */
  int psz;
  MPI_Pack_size(10, MPI_INT, MPI_COMM_SELF, &psz); /* 5 elements of 2 ints */
  expect += HDR + r8((size_t)psz);
  /* An empty array: dims {0, 5}. */
  float *ef = NULL;
  int64_t de[] = {0, 5};
  CHECK_EQ(rta_task_array_register(t, (void **)&ef, rta_type_elem(RTA_FLOAT), 2, de), 0);
  expect += HDR;
  CHECK_EQ(rta_task_narrays(t), 7);
  CHECK_EQ(rta_task_arrays_packed_size(t, &bytes), 0);
  CHECK_EQ(bytes, expect);
  TEST_PASS("task_array: packed sizes");

  /* Bad input. */
  float *bad = NULL;
  int64_t d1[] = {4}, dneg[] = {4, -1}, dhuge[] = {INT64_MAX / 2, 4};
  int64_t d9[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
  rta_type_t fl = rta_type_elem(RTA_FLOAT);
  CHECK_EQ(rta_task_array_register(NULL, (void **)&bad, fl, 1, d1), BALLAST_EINVAL);
  CHECK_EQ(rta_task_array_register(t, NULL, fl, 1, d1), BALLAST_EINVAL);
  CHECK_EQ(rta_task_array_register(t, (void **)&bad, fl, 0, d1), BALLAST_EINVAL);
  CHECK_EQ(rta_task_array_register(t, (void **)&bad, fl, 9, d9), BALLAST_EINVAL);
  CHECK_EQ(rta_task_array_register(t, (void **)&bad, fl, 1, NULL), BALLAST_EINVAL);
  CHECK_EQ(rta_task_array_register(t, (void **)&bad, fl, 2, dneg), BALLAST_EINVAL);
  CHECK_EQ(rta_task_array_register(t, (void **)&bad, rta_type_elem((rta_elem_t)0), 1, d1),
           BALLAST_EINVAL);
  CHECK_EQ(rta_task_array_register(t, (void **)&bad, rta_type_elem((rta_elem_t)999), 1, d1),
           BALLAST_EINVAL);
  CHECK_EQ(rta_task_array_register(t, (void **)&bad, rta_type_mpi(MPI_DATATYPE_NULL), 1, d1),
           BALLAST_EINVAL);
  CHECK_EQ(rta_task_array_register(t, (void **)&bad, fl, 2, dhuge), BALLAST_EOVERFLOW);
  CHECK_EQ(rta_task_array_register(t, (void **)&d, fl, 1, d1), BALLAST_EEXIST);
  CHECK_EQ(rta_task_array_unregister(t, (void **)&bad), BALLAST_ENOTFOUND);
  CHECK_EQ(rta_task_array_unregister(NULL, (void **)&bad), BALLAST_EINVAL);
  CHECK_EQ(rta_task_arrays_packed_size(NULL, &bytes), BALLAST_EINVAL);
  CHECK_EQ(rta_task_narrays(t), 7);
  /* A NULL array of 4 elements would fail every later move: refused. */
  CHECK_EQ(rta_task_array_register(t, (void **)&bad, fl, 1, d1), BALLAST_EINVAL);
  CHECK_EQ(rta_task_array_unregister(t, (void **)&bad), BALLAST_ENOTFOUND);
  CHECK_EQ(rta_task_narrays(t), 7);
  int64_t d0[] = {0}; /* NULL with no element is an empty array: accepted */
  CHECK_EQ(rta_task_array_register(t, (void **)&bad, fl, 1, d0), 0);
  CHECK_EQ(rta_task_array_unregister(t, (void **)&bad), 0);
  TEST_PASS("task_array: bad input");

  /* Round trip: pack t, unpack into a task whose arrays are registered with
   * the same types but other (dummy) shapes, as an unpack callback would. */
  unsigned char *buf = malloc(bytes);
  size_t used = 0;
  CHECK_EQ(task__arrays_pack(t, buf, bytes - 1, &used), BALLAST_ESIZE);
  CHECK_EQ(task__arrays_pack(t, buf, bytes, &used), 0);
  CHECK_EQ(used, bytes);

  rta_task_t *u = leaf("dst");
  double *d2 = NULL;
  int32_t *ia2 = NULL;
  char *cs2 = malloc(1); /* an old buffer rta must free */
  double _Complex *z2 = NULL;
  double *md2 = NULL;
  int *vi2 = NULL;
  float *ef2 = NULL;
  int64_t one[] = {0}; /* NULL receivers: empty until the unpack gives dims */
  CHECK_EQ(rta_task_array_register(u, (void **)&d2, rta_type_elem(RTA_DOUBLE), 1, one), 0);
  CHECK_EQ(rta_task_array_register(u, (void **)&ia2, rta_type_elem(RTA_INT32), 1, one), 0);
  CHECK_EQ(rta_task_array_register(u, (void **)&cs2, rta_type_elem(RTA_CHAR), 1, one), 0);
  CHECK_EQ(rta_task_array_register(u, (void **)&z2, rta_type_elem(RTA_COMPLEX_DOUBLE), 1, one), 0);
  /* Unpacking now must fail: fewer arrays registered than packed. */
  CHECK_EQ(task__arrays_unpack(u, buf, bytes, &used), BALLAST_ESIZE);
  CHECK(d2 == NULL);
  CHECK_EQ(rta_task_array_register(u, (void **)&md2, rta_type_mpi(MPI_DOUBLE), 1, one), 0);
  MPI_Type_vector(1, 2, 3, MPI_INT, &vec);
  MPI_Type_create_resized(vec, 0, 3 * sizeof(int), &vec3);
  MPI_Type_commit(&vec3);
  MPI_Type_free(&vec);
  CHECK_EQ(rta_task_array_register(u, (void **)&vi2, rta_type_mpi(vec3), 1, one), 0);
  MPI_Type_free(&vec3);
  CHECK_EQ(rta_task_array_register(u, (void **)&ef2, rta_type_elem(RTA_INT32), 1, one), 0);
  /* Wrong type on the last array: ESIZE, nothing touched. */
  CHECK_EQ(task__arrays_unpack(u, buf, bytes, &used), BALLAST_ESIZE);
  CHECK(d2 == NULL && md2 == NULL);
  CHECK_EQ(rta_task_array_unregister(u, (void **)&ef2), 0);
  CHECK_EQ(rta_task_array_register(u, (void **)&ef2, rta_type_elem(RTA_FLOAT), 1, one), 0);
  CHECK_EQ(task__arrays_unpack(u, buf, bytes - 8, &used), BALLAST_ESIZE); /* short */
  CHECK_EQ(task__arrays_unpack(u, buf, bytes, &used), 0);
  CHECK_EQ(used, bytes);
  size_t ubytes;
  CHECK_EQ(rta_task_arrays_packed_size(u, &ubytes), 0);
  CHECK_EQ(ubytes, bytes); /* dims taken from the packed arrays */
  for (int i = 0; i < 200; i++)
    CHECK(d2[i] == d[i]);
  for (int i = 0; i < 105; i++)
    CHECK_EQ(ia2[i], ia[i]);
  CHECK(memcmp(cs2, cs, 13) == 0);
  for (int i = 0; i < 16; i++)
    CHECK(z2[i] == z[i]);
  for (int i = 0; i < 7; i++)
    CHECK(md2[i] == md[i]);
  for (int i = 0; i < 15; i++)
    if (i % 3 != 2)
      CHECK_EQ(vi2[i], vi[i]);
  TEST_PASS("task_array: pack/unpack round trip");

  free(buf);
  free(d), free(ia), free(cs), free(z), free(md), free(vi);
  free(d2), free(ia2), free(cs2), free(z2), free(md2), free(vi2), free(ef2);
  CHECK_EQ(rta_reset(), 0);
  MPI_Finalize();
  return 0;
}
