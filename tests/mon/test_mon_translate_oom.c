/* Out of memory inside the wrappers' rank translation must not crash the
 * application: the figure loses its partner and the MPI call goes on
 * (src/mon/wrap_internal.h, "Nothing here fails into the application").
 *
 * The test is linked with -Wl,--wrap=calloc: calls to calloc from
 * libballast.a (linked statically) go through __wrap_calloc below, which
 * fails while fail_calloc is set. MPI itself (a shared library) is not
 * affected. The window cache's first table is calloc'ed when the first
 * window is translated, so translating a rank of a new window with calloc
 * failing exercises the cache's out-of-memory path. */
#include <stdlib.h>

#include "test_util.h"
#include "mon/wrap_internal.h"

void *__real_calloc(size_t n, size_t size);
void *__wrap_calloc(size_t n, size_t size);

static int fail_calloc;

void *__wrap_calloc(size_t n, size_t size) {
  if (fail_calloc)
    return NULL;
  return __real_calloc(n, size);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK_EQ(size, 2);
  int peer = 1 - rank;
  int mem[4] = {0};
  MPI_Win win;
  MPI_Win_create(mem, sizeof mem, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);

  /* No window was translated yet: the cache must allocate its table. */
  fail_calloc = 1;
  int w = mon__w_wrank(win, peer);
  fail_calloc = 0;
  CHECK_EQ(w, MON_NO_PARTNER);

  /* Memory is back: the translation works, and a put is accounted. */
  CHECK_EQ(mon__w_wrank(win, peer), peer);
  mon__partner_t before, after;
  CHECK_EQ(mon__partner_read(-1, peer, &before), 0);
  int v[3] = {1, 2, 3};
  MPI_Win_fence(0, win);
  MPI_Put(v, 3, MPI_INT, peer, 0, 3, MPI_INT, win);
  MPI_Win_fence(0, win);
  CHECK_EQ(mon__partner_read(-1, peer, &after), 0);
  CHECK_EQ(after.bytes - before.bytes, 12);
  CHECK_EQ(after.msgs - before.msgs, 1);
  CHECK_EQ(mem[0] + mem[1] + mem[2], 6);

  MPI_Win_free(&win);
  printf("rank %d: window translation survives out of memory\n", rank);
  MPI_Finalize();
  return 0;
}
