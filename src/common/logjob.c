/*
 * Warnings every rank raises alike, printed once per job. Between
 * ballast__log_hold() and ballast__log_release() the calling thread's
 * warnings and errors are kept (ballast_log hands them here) instead of
 * printed; the release, collective, compares what each rank kept by a hash
 * and prints it once when the ranks that kept something kept the same:
 * by the lowest of them, as is when every rank did, else with how many did.
 * Ranks that kept different lines print their own, as without the hold.
 */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common_internal.h"
#include "common/util.h"

typedef struct {
  int depth; /* nested holds */
  char *buf; /* "tag\0message\0" per line (a message may hold newlines) */
  size_t len, cap;
} hold_t;

static __thread hold_t tl_hold;

void ballast__log_hold(void) { tl_hold.depth++; }

int ballast__log_keep(const char *tag, const char *msg) {
  hold_t *h = &tl_hold;
  if (!h->depth)
    return 0;
  size_t lt = strlen(tag) + 1, lm = strlen(msg) + 1;
  if (h->len + lt + lm > h->cap) {
    size_t cap = (h->cap ? h->cap * 2 : 1024) + lt + lm;
    char *nb = realloc(h->buf, cap);
    if (!nb)
      return 0; /* printed at once, as without the hold */
    h->buf = nb;
    h->cap = cap;
  }
  memcpy(h->buf + h->len, tag, lt);
  memcpy(h->buf + h->len + lt, msg, lm);
  h->len += lt + lm;
  return 1;
}

/* The project's FNV-1a, as a non-negative long long for MPI_MAX. */
static long long hash_of(const char *s, size_t n) {
  return (long long)(ballast__fnv1a(BALLAST__FNV_OFFSET, s, n) >> 1);
}

/* As ballast_log prints them, one fprintf per line. */
static void print_kept(const char *buf, size_t len, int rank, const char *note) {
  for (const char *l = buf; l < buf + len;) {
    const char *tag = l, *msg = l + strlen(l) + 1;
    ballast__log_line(rank, tag, msg, note);
    l = msg + strlen(msg) + 1;
  }
}

static void drop(hold_t *h) {
  free(h->buf);
  h->buf = NULL;
  h->len = h->cap = 0;
}

void ballast__log_release(MPI_Comm comm) {
  hold_t *h = &tl_hold;
  if (h->depth > 1) {
    h->depth--;
    return;
  }
  h->depth = 0;
  int init = 0, fin = 0;
  PMPI_Initialized(&init);
  PMPI_Finalized(&fin);
  if (!init || fin) { /* no job to agree with (mon started without MPI) */
    print_kept(h->buf, h->len, -1, "");
    drop(h);
    return;
  }
  int rank = 0, size = 1;
  PMPI_Comm_rank(comm, &rank);
  PMPI_Comm_size(comm, &size);
  long long has = h->len > 0, hh = has ? hash_of(h->buf, h->len) : 0;
  /* MAX over: a rank without lines, a rank with, the highest and (through
   * its complement) the lowest hash, and the lowest rank with lines. PMPI:
   * the log's own agreement is nobody's traffic to measure (it runs inside
   * MPI_Init). */
  long long in[5] = {!has, has, has ? hh : -1, has ? LLONG_MAX - hh : -1,
                     has ? INT_MAX - rank : -1};
  long long out[5];
  int bad = PMPI_Allreduce(in, out, 5, MPI_LONG_LONG, MPI_MAX, comm) != MPI_SUCCESS;
  /* How many ranks kept lines is needed only when some did and some did
   * not; every rank knows that from out[0] and out[1], so the count is one
   * more reduction only then, and none at a start with nothing to say. */
  int nhas = has ? size : 0, one = (int)has;
  if (!bad && out[0] && out[1])
    bad = PMPI_Allreduce(&one, &nhas, 1, MPI_INT, MPI_SUM, comm) != MPI_SUCCESS;
  if (has) {
    int same = !bad && out[2] == hh && LLONG_MAX - out[3] == hh;
    int first = INT_MAX - (int)out[4];
    int world = ballast__world_rank();
    if (!same) {
      print_kept(h->buf, h->len, world, "");
    } else if (rank == first) {
      char note[64] = "";
      if (out[0])
        snprintf(note, sizeof note, " (on %d of %d ranks)", nhas, size);
      print_kept(h->buf, h->len, world, note);
    }
  }
  drop(h);
}
