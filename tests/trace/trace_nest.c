/* A small program for the trace writers' nesting and message checks
 * (trace_nest.py): every path that opens and closes a slice, and messages
 * with real tags on two communicators.
 *
 * Per rank, NSTEPS steps, each: region "step" > task "nest/r<rank>" (whose
 * region nests inside the task) > region "exchange", where
 *   - a ring on MPI_COMM_WORLD: MPI_Irecv from the left and MPI_Isend to the
 *     right, tag TAG_RING + step, completed by MPI_Waitall;
 *   - a pair on "half" (MPI_Comm_split by rank parity, so 2 ranks of 4): an
 *     MPI_Irecv with tag TAG_HALF completed by an MPI_Test loop, the
 *     matching MPI_Send;
 * then, still in the task, an MPI_Allreduce on "half" and an
 * MPI_Pcontrol(1/-1, "pc") pair. After the steps, a ring of persistent
 * requests (MPI_Send_init / MPI_Recv_init, tag TAG_PERS) started NPERS
 * times, each completed by MPI_Waitall. Ends that fail (a region not open, a task
 * not open) raise nothing. At the end, a region "outer" with the task begun
 * inside it stays open, as does region "thread_open" on a second thread:
 * MPI_Finalize closes the regions of the main thread, the writers close the
 * task and the other thread's region. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include <ballast/mon.h>
#include <ballast/rta_task.h>

#define NSTEPS 5
#define TAG_RING 100
#define TAG_HALF 7
#define NDATA 64
#define TAG_PERS 50
#define NPERS 2

#define MUST(x)                                                          \
  do {                                                                   \
    if (!(x)) {                                                          \
      fprintf(stderr, "trace_nest: %s failed (line %d)\n", #x, __LINE__); \
      MPI_Abort(MPI_COMM_WORLD, 1);                                      \
    }                                                                    \
  } while (0)

static void *left_open(void *arg) {
  (void)arg;
  MUST(mon_region_begin("thread_open") == 0);
  return NULL;
}

static void step(int s, int rank, int size, MPI_Comm half, rta_task_t *task) {
  double out[NDATA], in[NDATA], hout[NDATA / 2], hin[NDATA / 2];
  for (int i = 0; i < NDATA; i++) out[i] = rank + i;
  MUST(mon_region_begin("step") == 0);
  MUST(rta_task_begin(task) == 0);
  MUST(mon_region_begin("exchange") == 0);
  MPI_Request rq[2];
  MPI_Irecv(in, NDATA, MPI_DOUBLE, (rank + size - 1) % size, TAG_RING + s, MPI_COMM_WORLD, &rq[0]);
  MPI_Isend(out, NDATA, MPI_DOUBLE, (rank + 1) % size, TAG_RING + s, MPI_COMM_WORLD, &rq[1]);
  MUST(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
  int hrank, hsize;
  MPI_Comm_rank(half, &hrank);
  MPI_Comm_size(half, &hsize);
  MPI_Request hq;
  int peer = (hrank + 1) % hsize, done = 0;
  MPI_Irecv(hin, NDATA / 2, MPI_DOUBLE, peer, TAG_HALF, half, &hq);
  MPI_Send(hout, NDATA / 2, MPI_DOUBLE, peer, TAG_HALF, half);
  while (!done) MPI_Test(&hq, &done, MPI_STATUS_IGNORE);
  MUST(mon_region_end("exchange") == 0);
  double x = rank, sum = 0;
  MPI_Allreduce(&x, &sum, 1, MPI_DOUBLE, MPI_SUM, half);
  MPI_Pcontrol(1, "pc");
  MPI_Pcontrol(-1, "pc");
  MUST(rta_task_end(task) == 0);
  MUST(mon_region_end("step") == 0);
}

int main(int argc, char **argv) {
  int provided, rank, size;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm half;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
  char key[32];
  snprintf(key, sizeof key, "r%d", rank);
  const char *rn[] = {"nest"}, *kn[] = {key};
  rta_task_t *root, *task;
  MUST(rta_task_define(NULL, 1, rn, NULL, &root) == 0);
  MUST(rta_task_define(root, 1, kn, NULL, &task) == 0);
  for (int s = 0; s < NSTEPS; s++) step(s, rank, size, half, task);
  double pout[NDATA] = {0}, pin[NDATA];
  MPI_Request pq[2];
  MPI_Recv_init(pin, NDATA, MPI_DOUBLE, (rank + size - 1) % size, TAG_PERS, MPI_COMM_WORLD,
                &pq[0]);
  MPI_Send_init(pout, NDATA, MPI_DOUBLE, (rank + 1) % size, TAG_PERS, MPI_COMM_WORLD, &pq[1]);
  for (int i = 0; i < NPERS; i++) {
    MPI_Startall(2, pq);
    MUST(MPI_Waitall(2, pq, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
  }
  MPI_Request_free(&pq[0]);
  MPI_Request_free(&pq[1]);
  /* Ends that fail raise no event. */
  MUST(mon_region_end("not_open") != 0);
  MUST(rta_task_end(task) != 0);
  MPI_Barrier(MPI_COMM_WORLD);
  pthread_t th;
  MUST(pthread_create(&th, NULL, left_open, NULL) == 0);
  pthread_join(th, NULL);
  /* Left open: MPI_Finalize leaves "nest/r<rank>" (the task's region) and
   * "outer"; the task itself gets no end event. */
  MUST(mon_region_begin("outer") == 0);
  MUST(rta_task_begin(task) == 0);
  MPI_Comm_free(&half);
  MPI_Finalize();
  return 0;
}
