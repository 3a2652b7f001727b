/* mon_profile_write when rank 0 cannot hold the gathered text: every rank
 * must send nothing (parts sent into zero receive counts would be a
 * truncation error that aborts the job), rank 0 returns BALLAST_ENOMEM,
 * the others 0, and the next call writes a whole, valid profile.
 *
 * Linked with -Wl,--wrap=malloc: malloc calls of the statically linked
 * libballast.a go through __wrap_malloc, which fails on rank 0 while
 * fail_malloc is set (MPI, a shared library, is not affected). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ballast/mon.h>

#include "test_util.h"

void *__real_malloc(size_t size);
void *__wrap_malloc(size_t size);

static int fail_malloc;

void *__wrap_malloc(size_t size) {
  if (fail_malloc)
    return NULL;
  return __real_malloc(size);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK_EQ(size, 2);
  int peer = 1 - rank, x = rank, y = -1;
  MPI_Sendrecv(&x, 1, MPI_INT, peer, 0, &y, 1, MPI_INT, peer, 0, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
  CHECK_EQ(y, peer);

  char path[64];
  snprintf(path, sizeof path, "/tmp/ballast_mon_profile_oom_%d.json", (int)getpid());
  int bcast_path_len = (int)strlen(path) + 1;
  MPI_Bcast(path, bcast_path_len, MPI_CHAR, 0, MPI_COMM_WORLD);

  fail_malloc = rank == 0;
  int rc = mon_profile_write(path);
  fail_malloc = 0;
  CHECK_EQ(rc, rank == 0 ? BALLAST_ENOMEM : 0);

  /* The job goes on, and the next profile is whole. */
  MPI_Sendrecv(&x, 1, MPI_INT, peer, 1, &y, 1, MPI_INT, peer, 1, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
  CHECK_EQ(y, peer);
  CHECK_EQ(mon_profile_write(path), 0);
  if (rank == 0) {
    FILE *f = fopen(path, "r");
    CHECK(f != NULL);
    static char text[1 << 20];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    CHECK(strstr(text, "\"ranks\":2") != NULL);
    CHECK(strstr(text, "\"rank\":0") != NULL);
    CHECK(strstr(text, "\"rank\":1") != NULL);
    CHECK(strstr(text, "\"error\"") == NULL);
    remove(path);
  }
  TEST_PASS("mon_profile_oom: rank 0 out of memory, nobody sends, next profile whole");
  MPI_Finalize();
  return 0;
}
