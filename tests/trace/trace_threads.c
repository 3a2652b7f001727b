/* Events from several threads of each rank (MPI_THREAD_MULTIPLE): every
 * thread enters the region "work" NITER times and exchanges one message with
 * the same thread of the other rank inside it (MPI_Sendrecv, the thread's
 * index as tag). Run with a trace writer loaded; trace_threads.py checks that
 * each thread got its own track with exactly its events. */
#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <ballast/mon.h>

#define NTHREADS 3
#define NITER 50

static int rank, size;

static void *work(void *arg) {
  int k = (int)(intptr_t)arg, peer = (rank + 1) % size;
  for (int i = 0; i < NITER; i++) {
    if (mon_region_begin("work")) abort();
    int out = rank * 1000 + i, in = -1;
    MPI_Sendrecv(&out, 1, MPI_INT, peer, k, &in, 1, MPI_INT, peer, k, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    if (in != peer * 1000 + i) {
      fprintf(stderr, "thread %d got %d, expected %d\n", k, in, peer * 1000 + i);
      abort();
    }
    if (mon_region_end("work")) abort();
  }
  return NULL;
}

int main(int argc, char **argv) {
  int provided;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  if (provided < MPI_THREAD_MULTIPLE) {
    printf("no MPI_THREAD_MULTIPLE: skipped\n");
    MPI_Finalize();
    return 77;
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  pthread_t t[NTHREADS];
  for (int k = 0; k < NTHREADS; k++) pthread_create(&t[k], NULL, work, (void *)(intptr_t)k);
  for (int k = 0; k < NTHREADS; k++) pthread_join(t[k], NULL);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
