/* Several threads under MPI_THREAD_MULTIPLE, each with known traffic on its
 * own tag: the per-process sums are exact. Requests posted on one thread and
 * completed on another are accounted once, to the activity that posted them. */
#include <pthread.h>

#include "monwrap_util.h"
#include "mon/wrap_internal.h"

#define NT 4
#define NMSG 200

static int rank, peer;
/* Each thread talks on its own duplicate of MPI_COMM_WORLD, so the threads
 * fill the communicator cache concurrently on their first messages. */
static MPI_Comm comms[NT];

static void *worker(void *arg) {
  int id = (int)(intptr_t)arg;
  char buf[256] = {0};
  int len = 8 * (id + 1); /* thread id: 8, 16, 24, 32 bytes per message */
  for (int i = 0; i < NMSG; i++) {
    if (rank == 0) {
      if (i % 2)
        MPI_Send(buf, len, MPI_CHAR, 1, id, comms[id]);
      else {
        MPI_Request rq;
        MPI_Isend(buf, len, MPI_CHAR, 1, id, comms[id], &rq);
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
      }
    } else {
      MPI_Recv(buf, sizeof buf, MPI_CHAR, MPI_ANY_SOURCE, id, comms[id], MPI_STATUS_IGNORE);
    }
  }
  return NULL;
}

/* Completes, on this thread, requests another thread posted. */
static MPI_Request posted[NT];
static void *completer(void *arg) {
  (void)arg;
  MPI_Waitall(NT, posted, MPI_STATUSES_IGNORE);
  return NULL;
}

int main(int argc, char **argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  CHECK_EQ(provided, MPI_THREAD_MULTIPLE);
  int size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK_EQ(size, 2);
  peer = 1 - rank;

  for (int i = 0; i < NT; i++)
    MPI_Comm_dup(MPI_COMM_WORLD, &comms[i]);
  mw_act_t send = mw_act("MPI_Send"), isend = mw_act("MPI_Isend"), recv = mw_act("MPI_Recv"),
           wait = mw_act("MPI_Wait"), irecv = mw_act("MPI_Irecv");
  mon__partner_t p = mw_partner(peer);
  pthread_t th[NT];
  for (int i = 0; i < NT; i++)
    CHECK_EQ(pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i), 0);
  for (int i = 0; i < NT; i++)
    CHECK_EQ(pthread_join(th[i], NULL), 0);

  uint64_t per_thread = 0; /* bytes of one message of each thread, summed */
  for (int i = 0; i < NT; i++)
    per_thread += 8 * (i + 1);
  if (rank == 0) {
    CHECK_ACT("MPI_Send", send, NT * NMSG / 2, per_thread * NMSG / 2);
    CHECK_ACT("MPI_Isend", isend, NT * NMSG / 2, per_thread * NMSG / 2);
    CHECK_ACT("MPI_Wait", wait, NT * NMSG / 2, 0);
    CHECK_PARTNER(1, p, per_thread * NMSG, NT * NMSG, 0, 0);
  } else {
    CHECK_ACT("MPI_Recv", recv, NT * NMSG, per_thread * NMSG);
    CHECK_PARTNER(0, p, 0, 0, per_thread * NMSG, NT * NMSG);
  }

  /* Posted here, completed on another thread. */
  MPI_Barrier(MPI_COMM_WORLD);
  long tracked = mon__wreq_tracked();
  char bufs[NT][16];
  for (int i = 0; i < NT; i++) {
    if (rank == 0)
      MPI_Isend(bufs[i], i + 1, MPI_CHAR, 1, 100 + i, MPI_COMM_WORLD, &posted[i]);
    else
      MPI_Irecv(bufs[i], 16, MPI_CHAR, MPI_ANY_SOURCE, 100 + i, MPI_COMM_WORLD, &posted[i]);
  }
  isend = mw_act("MPI_Isend");
  irecv = mw_act("MPI_Irecv");
  pthread_t c;
  CHECK_EQ(pthread_create(&c, NULL, completer, NULL), 0);
  CHECK_EQ(pthread_join(c, NULL), 0);
  if (rank == 0)
    CHECK_ACT("MPI_Isend", isend, 0, 1 + 2 + 3 + 4);
  else
    CHECK_ACT("MPI_Irecv", irecv, 0, 1 + 2 + 3 + 4);
  CHECK_EQ(mon__wreq_tracked(), tracked);

  for (int i = 0; i < NT; i++)
    MPI_Comm_free(&comms[i]);
  TEST_PASS("monwrap_threads");
  MPI_Finalize();
  return 0;
}
