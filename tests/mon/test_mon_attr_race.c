/* Two threads making their first MPI call on a new communicator at once
 * must not free the rank-translation entry the other one is using.
 *
 * Each thread that misses the per-communicator cache builds an entry and
 * marks the communicator with an attribute whose delete callback forgets
 * (frees) the entry when the communicator is freed. Setting the attribute
 * again runs that callback too: if thread B sets it after thread A
 * published its entry, B frees A's entry while A still uses it.
 *
 * The interleaving is forced: the test is linked with
 * -Wl,--wrap=PMPI_Comm_set_attr,--wrap=free (statically linked libballast.a
 * only). Thread B misses the cache first and is held in the attribute call
 * until thread A has translated through its own entry (or 1 s passed: a
 * correct library may make A wait for B); A keeps the neighbour flags the
 * entry owns (mon__w_neighbours), and every free() by libballast is checked
 * against them. */
#include <malloc.h>
#include <pthread.h>
#include <time.h>

#include "test_util.h"
#include "mon/wrap_internal.h"

int __real_PMPI_Comm_set_attr(MPI_Comm comm, int keyval, void *val);
int __wrap_PMPI_Comm_set_attr(MPI_Comm comm, int keyval, void *val);
void __real_free(void *p);
void __wrap_free(void *p);

static pthread_t thread_b;
static int b_started, a_done, freed_in_use;
static const unsigned char *a_flags; /* owned by A's cache entry */

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int __wrap_PMPI_Comm_set_attr(MPI_Comm comm, int keyval, void *val) {
  if (pthread_equal(pthread_self(), thread_b)) {
    __atomic_store_n(&b_started, 1, __ATOMIC_RELEASE);
    double t0 = now();
    while (!__atomic_load_n(&a_done, __ATOMIC_ACQUIRE) && now() - t0 < 1.0)
      ;
  }
  return __real_PMPI_Comm_set_attr(comm, keyval, val);
}

void __wrap_free(void *p) {
  const unsigned char *f = __atomic_load_n(&a_flags, __ATOMIC_ACQUIRE);
  if (p && f && (const unsigned char *)p <= f &&
      f < (const unsigned char *)p + malloc_usable_size(p))
    __atomic_store_n(&freed_in_use, 1, __ATOMIC_RELEASE);
  __real_free(p);
}

static MPI_Comm cart;

static void *run_b(void *arg) {
  (void)arg;
  int in, out;
  const unsigned char *iok, *ook;
  CHECK_EQ(mon__w_neighbours(cart, &in, &out, &iok, &ook), 0);
  CHECK_EQ(in, 2);
  return NULL;
}

int main(int argc, char **argv) {
  int provided;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  CHECK_EQ(provided, MPI_THREAD_MULTIPLE);
  int size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int dims[1] = {size}, periods[1] = {1};
  MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart);

  /* B misses the cache and stops in its attribute call ... */
  CHECK_EQ(pthread_create(&thread_b, NULL, run_b, NULL), 0);
  while (!__atomic_load_n(&b_started, __ATOMIC_ACQUIRE))
    ;
  /* ... while A (this thread) misses it too, builds and uses its entry. */
  int in, out;
  const unsigned char *iok, *ook;
  CHECK_EQ(mon__w_neighbours(cart, &in, &out, &iok, &ook), 0);
  CHECK_EQ(out, 2);
  __atomic_store_n(&a_flags, ook, __ATOMIC_RELEASE);
  __atomic_store_n(&a_done, 1, __ATOMIC_RELEASE);
  CHECK_EQ(pthread_join(thread_b, NULL), 0);
  __atomic_store_n(&a_flags, NULL, __ATOMIC_RELEASE);
  CHECK_EQ(freed_in_use, 0);

  /* The cache still translates and measures the communicator. */
  CHECK_EQ(mon__w_neighbours(cart, &in, &out, &iok, &ook), 0);
  CHECK(ook[0] == 1 && ook[1] == 1);
  int rank;
  MPI_Comm_rank(cart, &rank);
  CHECK_EQ(mon__world_rank(cart, (rank + 1) % size), (rank + 1) % size);
  MPI_Comm_free(&cart);
  printf("entry in use survived a concurrent first use\n");
  MPI_Finalize();
  return 0;
}
