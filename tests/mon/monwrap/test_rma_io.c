/* One-sided and MPI-IO accounting on 2 ranks: put/get/accumulate with fence,
 * request-based Rput/Rget at completion, lock/unlock, atomics, PSCW, the target's
 * world rank through a window on a reversed communicator; MPI-IO writes
 * (count x type), reads (from the status: a read past the end of the file
 * counts what it got), nonblocking and split-collective reads. */
#include <unistd.h>

#include "monwrap_util.h"

static int rank, peer;

static void rma(void) {
  int *base;
  MPI_Win win;
  MPI_Win_allocate(100 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
  int src[16] = {0}, dst[16] = {0};
  mw_act_t put = mw_act("MPI_Put"), get = mw_act("MPI_Get"), acc = mw_act("MPI_Accumulate"),
           fence = mw_act("MPI_Win_fence"), rput = mw_act("MPI_Rput"), rget = mw_act("MPI_Rget"),
           fop = mw_act("MPI_Fetch_and_op"), cas = mw_act("MPI_Compare_and_swap"),
           lock = mw_act("MPI_Win_lock"), rmag = mw_act("MPI_RMA");
  mon__partner_t p = mw_partner(peer);

  MPI_Win_fence(0, win);
  MPI_Put(src, 5, MPI_INT, peer, 0, 5, MPI_INT, win);
  MPI_Get(dst, 3, MPI_INT, peer, 10, 3, MPI_INT, win);
  MPI_Accumulate(src, 2, MPI_INT, peer, 20, 2, MPI_INT, MPI_SUM, win);
  MPI_Put(src, 5, MPI_INT, MPI_PROC_NULL, 0, 5, MPI_INT, win);
  MPI_Win_fence(0, win);
  CHECK_ACT("MPI_Put", put, 2, 20);
  CHECK_ACT("MPI_Get", get, 1, 12);
  CHECK_ACT("MPI_Accumulate", acc, 1, 8);
  CHECK_ACT("MPI_Win_fence", fence, 2, 0);
  mon__partner_t q = mw_partner(peer);
  CHECK_EQ(q.bytes + q.rbytes - p.bytes - p.rbytes, 20 + 12 + 8);
  CHECK_EQ(q.msgs + q.rmsgs - p.msgs - p.rmsgs, 3);

  MPI_Request rq[2];
  MPI_Win_lock(MPI_LOCK_SHARED, peer, 0, win);
  MPI_Rput(src, 4, MPI_INT, peer, 30, 4, MPI_INT, win, &rq[0]);
  MPI_Rget(dst, 6, MPI_INT, peer, 40, 6, MPI_INT, win, &rq[1]);
  CHECK_ACT("MPI_Rput", rput, 1, 0);
  MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
  int one = 1, old = 0, cmp = 0;
  MPI_Fetch_and_op(&one, &old, MPI_INT, peer, 50, MPI_SUM, win);
  MPI_Compare_and_swap(&one, &cmp, &old, MPI_INT, peer, 51, win);
  MPI_Win_unlock(peer, win);
  CHECK_ACT("MPI_Rput", rput, 1, 16);
  CHECK_ACT("MPI_Rget", rget, 1, 24);
  CHECK_ACT("MPI_Fetch_and_op", fop, 1, 8);
  CHECK_ACT("MPI_Compare_and_swap", cas, 1, 12);
  CHECK_ACT("MPI_Win_lock", lock, 1, 0);
  /* the RMA group: 2 fences, 2 puts, get, acc, lock, rput, rget, fop, cas, unlock */
  CHECK_ACT("MPI_RMA", rmag, 12, 20 + 12 + 8 + 16 + 24 + 8 + 12);

  /* PSCW: each rank exposes its window to the other and accesses the other's */
  MPI_Group world, other;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  MPI_Group_incl(world, 1, &peer, &other);
  mw_act_t post = mw_act("MPI_Win_post"), start = mw_act("MPI_Win_start"),
           complete = mw_act("MPI_Win_complete"), wwait = mw_act("MPI_Win_wait");
  put = mw_act("MPI_Put");
  p = mw_partner(peer);
  MPI_Win_post(other, 0, win);
  MPI_Win_start(other, 0, win);
  MPI_Put(src, 7, MPI_INT, peer, 60, 7, MPI_INT, win);
  MPI_Win_complete(win);
  MPI_Win_wait(win);
  CHECK_ACT("MPI_Put", put, 1, 28);
  CHECK_ACT("MPI_Win_post", post, 1, 0);
  CHECK_ACT("MPI_Win_start", start, 1, 0);
  CHECK_ACT("MPI_Win_complete", complete, 1, 0);
  CHECK_ACT("MPI_Win_wait", wwait, 1, 0);
  CHECK_PARTNER(peer, p, 28, 1, 0, 0);
  MPI_Group_free(&other);
  MPI_Group_free(&world);
  MPI_Win_free(&win);

  /* A window over a reversed communicator: target 0 there is world rank 1. */
  MPI_Comm rev;
  MPI_Comm_split(MPI_COMM_WORLD, 0, -rank, &rev);
  int mem[8] = {0};
  MPI_Win_create(mem, sizeof mem, sizeof(int), MPI_INFO_NULL, rev, &win);
  mon__partner_t w1 = mw_partner(1);
  MPI_Win_fence(0, win);
  if (rank == 0)
    MPI_Put(src, 2, MPI_INT, 0, 0, 2, MPI_INT, win);
  MPI_Win_fence(0, win);
  if (rank == 0)
    CHECK_PARTNER(1, w1, 8, 1, 0, 0);
  MPI_Win_free(&win);
  MPI_Comm_free(&rev);
}

static void io(void) {
  char path[128];
  int pid = (int)getpid();
  MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
  snprintf(path, sizeof path, "/tmp/ballast_monwrap_io_%d.dat", pid);
  MPI_File fh;
  CHECK_EQ(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                         &fh), MPI_SUCCESS);
  char buf[1000];
  memset(buf, 'a' + rank, sizeof buf);
  mw_act_t wat = mw_act("MPI_File_write_at"), wata = mw_act("MPI_File_write_at_all"),
           rat = mw_act("MPI_File_read_at"), rd = mw_act("MPI_File_read"),
           rda = mw_act("MPI_File_read_all"), ird = mw_act("MPI_File_iread"),
           rend = mw_act("MPI_File_read_at_all_end"), iog = mw_act("MPI_IO");

  MPI_File_write_at(fh, rank * 100, buf, 100, MPI_CHAR, MPI_STATUS_IGNORE);
  MPI_File_write_at_all(fh, 200 + rank * 200, buf, 50, MPI_INT, MPI_STATUS_IGNORE);
  MPI_File_sync(fh);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_File_sync(fh);
  CHECK_ACT("MPI_File_write_at", wat, 1, 100);
  CHECK_ACT("MPI_File_write_at_all", wata, 1, 200);

  /* the file holds 600 bytes: a read of 100 at 590 gets 10 */
  MPI_File_read_at(fh, 590, buf, 100, MPI_CHAR, MPI_STATUS_IGNORE);
  MPI_Status st;
  MPI_File_read_at(fh, 100 * peer, buf, 100, MPI_CHAR, &st);
  CHECK_EQ(buf[0], 'a' + peer);
  CHECK_ACT("MPI_File_read_at", rat, 2, 110);

  MPI_File_read(fh, buf, 7, MPI_CHAR, MPI_STATUS_IGNORE);
  MPI_File_read_all(fh, buf, 5, MPI_CHAR, MPI_STATUS_IGNORE);
  MPI_Request rq;
  MPI_File_iread(fh, buf, 3, MPI_INT, &rq);
  MPI_Wait(&rq, MPI_STATUS_IGNORE);
  MPI_File_read_at_all_begin(fh, 0, buf, 30, MPI_CHAR);
  MPI_File_read_at_all_end(fh, buf, MPI_STATUS_IGNORE);
  CHECK_ACT("MPI_File_read", rd, 1, 7);
  CHECK_ACT("MPI_File_read_all", rda, 1, 5);
  CHECK_ACT("MPI_File_iread", ird, 1, 12);
  CHECK_ACT("MPI_File_read_at_all_end", rend, 1, 30);
  /* open is before the snapshot; write_at, write_at_all, 2 syncs, 2 read_at,
   * read, read_all, iread, read_at_all_begin/_end */
  CHECK_ACT("MPI_IO", iog, 11, 100 + 200 + 110 + 7 + 5 + 12 + 30);
  MPI_File_close(&fh);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0)
    CHECK_EQ(unlink(path), 0);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK_EQ(size, 2);
  peer = 1 - rank;
  rma();
  MPI_Barrier(MPI_COMM_WORLD);
  io();
  TEST_PASS("monwrap_rma_io");
  MPI_Finalize();
  return 0;
}
