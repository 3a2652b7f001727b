/* A program that dies, for tests/fault/check_fault.py. Every rank first
 * does a known amount of work: WORK times region "work" around one
 * MPI_Sendrecv of 100 ints with its neighbours in a ring. Then, by mode:
 *   abort  rank 0 calls MPI_Abort, the others wait in MPI_Barrier;
 *   term   every rank writes DIR/ready.<rank> (its pid) and sleeps until the
 *          test sends SIGTERM;
 *   segv   the last rank writes to a PROT_NONE page, the others wait in
 *          MPI_Barrier;
 *   exit   every rank calls exit(0) without MPI_Finalize;
 *   return every rank returns from main without MPI_Finalize;
 *   sigabrt the last rank calls abort(), the others wait in MPI_Barrier;
 *   leave  the last rank calls exit(0) at once, while the others still work
 *          (0.3 s) before they call MPI_Finalize;
 *   late   the others write DIR/ready.<rank> and call MPI_Finalize; the
 *          last rank, once all those files are there, calls exit(0) 0.5 s
 *          later, while they wait inside it (the case where the finalizing
 *          ranks' data is most at risk; files, not messages, so the
 *          figures checked stay those of the work);
 *   normal every rank calls MPI_Finalize and returns 0 (so does
 *          "unwritable", where the test made the profile's path a folder);
 *   kill   (BALLAST_PROFILE_INTERVAL set) every rank sleeps past the
 *          interval, makes one MPI_Barrier (its periodic part is written
 *          there), writes DIR/ready.<rank> and sleeps until SIGKILL. */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <ballast/mon.h>

#define WORK 7

static void ready(const char *dir, int rank) {
  char p[4096], t[4200];
  snprintf(p, sizeof p, "%s/ready.%d", dir, rank);
  snprintf(t, sizeof t, "%s.tmp", p);
  FILE *f = fopen(t, "w");
  if (!f)
    abort();
  fprintf(f, "%d\n", (int)getpid());
  fclose(f);
  rename(t, p);
}

int main(int argc, char **argv) {
  if (argc < 3)
    return 2;
  const char *mode = argv[1], *dir = argv[2];
  MPI_Init(&argc, &argv);
  int me, np;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &np);
  int out[100], in[100];
  for (int i = 0; i < 100; i++)
    out[i] = me * 1000 + i;
  for (int k = 0; k < WORK; k++) {
    mon_region_begin("work");
    MPI_Sendrecv(out, 100, MPI_INT, (me + 1) % np, 5, in, 100, MPI_INT,
                 (me + np - 1) % np, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    mon_region_end("work");
  }
  if (strcmp(mode, "abort") == 0) {
    if (me == 0)
      MPI_Abort(MPI_COMM_WORLD, 3);
    MPI_Barrier(MPI_COMM_WORLD);
  } else if (strcmp(mode, "term") == 0) {
    ready(dir, me);
    for (;;)
      sleep(1);
  } else if (strcmp(mode, "segv") == 0) {
    if (me == np - 1) {
      /* A real fault on a page the program may not touch (a NULL store
       * would be stopped by UBSan in the sanitizer build first). */
      volatile char *p = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (p == MAP_FAILED)
        abort();
      p[0] = 1;
    }
    MPI_Barrier(MPI_COMM_WORLD);
  } else if (strcmp(mode, "exit") == 0) {
    exit(0);
  } else if (strcmp(mode, "return") == 0) {
    return 0;
  } else if (strcmp(mode, "sigabrt") == 0) {
    if (me == np - 1)
      abort();
    MPI_Barrier(MPI_COMM_WORLD);
  } else if (strcmp(mode, "leave") == 0 || strcmp(mode, "late") == 0) {
    int early = strcmp(mode, "leave") == 0;
    if (me == np - 1) {
      for (int r = 0; !early && r < np - 1; r++) {
        char p[4096];
        snprintf(p, sizeof p, "%s/ready.%d", dir, r);
        while (access(p, F_OK) != 0)
          usleep(10000);
      }
      if (!early)
        usleep(500000);
      exit(0);
    }
    if (early)
      usleep(300000);
    else
      ready(dir, me);
  } else if (strcmp(mode, "normal") == 0 || strcmp(mode, "unwritable") == 0) {
    MPI_Finalize();
    return 0;
  } else if (strcmp(mode, "kill") == 0) {
    usleep(400000);
    MPI_Barrier(MPI_COMM_WORLD);
    ready(dir, me);
    for (;;)
      sleep(1);
  }
  MPI_Finalize();
  return 1; /* not reached in any mode */
}
