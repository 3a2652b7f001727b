/*
 * A 3D periodic halo exchange that asks MPI to reorder its ranks, as many
 * codes do: MPI_Cart_create(..., reorder = 1) ("cart") or the same torus
 * declared with MPI_Dist_graph_create_adjacent(..., reorder = 1) ("dist", the
 * constructor Open MPI's treematch component reorders). Linked to MPI only:
 * ballast comes in with LD_PRELOAD, so the same binary runs under plain Open
 * MPI, under treematch and under ballast.
 *
 * usage: halo cart|dist FACE_BYTES REPS
 * Each rank exchanges FACE_BYTES with each of its 6 neighbours (Isend/Irecv,
 * Waitall) per step; a step's time is the slowest rank's. Prints one line:
 *   halo <kind> ranks <n> dims AxBxC face <bytes> internode_frac <f> median_s <t>
 * where internode_frac is the fraction of messages whose two ends are on
 * different hosts (MPI_Get_processor_name), measured on the communicator used.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The 6 neighbours (-x, +x, -y, +y, -z, +z) of rank r of a periodic torus. */
static void torus_nb(const int dims[3], int r, int nb[6]) {
  int c[3] = {r / (dims[1] * dims[2]), (r / dims[2]) % dims[1], r % dims[2]};
  for (int d = 0, k = 0; d < 3; d++)
    for (int s = -1; s <= 1; s += 2, k++) {
      int e[3] = {c[0], c[1], c[2]};
      e[d] = (e[d] + s + dims[d]) % dims[d];
      nb[k] = (e[0] * dims[1] + e[1]) * dims[2] + e[2];
    }
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int n, me;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  if (argc < 4 || (strcmp(argv[1], "cart") && strcmp(argv[1], "dist"))) {
    fprintf(stderr, "usage: halo cart|dist FACE_BYTES REPS\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  size_t face = strtoul(argv[2], NULL, 10);
  int reps = atoi(argv[3]);
  int dims[3] = {0, 0, 0}, periods[3] = {1, 1, 1}, nb[6];
  MPI_Dims_create(n, 3, dims);
  MPI_Comm comm;
  if (!strcmp(argv[1], "cart")) {
    MPI_Cart_create(MPI_COMM_WORLD, 3, dims, periods, 1, &comm);
    MPI_Comm_rank(comm, &me);
    for (int d = 0; d < 3; d++)
      MPI_Cart_shift(comm, d, 1, &nb[2 * d], &nb[2 * d + 1]);
  } else {
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    torus_nb(dims, me, nb);
    int w[6] = {1, 1, 1, 1, 1, 1};
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 6, nb, w, 6, nb, w, MPI_INFO_NULL, 1,
                                   &comm);
    MPI_Comm_rank(comm, &me);
    torus_nb(dims, me, nb); /* rank v plays vertex v */
  }
  /* Which messages cross hosts, on the communicator actually used. */
  char host[MPI_MAX_PROCESSOR_NAME] = {0}, *hosts = malloc((size_t)n * sizeof host);
  int len;
  MPI_Get_processor_name(host, &len);
  MPI_Allgather(host, sizeof host, MPI_CHAR, hosts, sizeof host, MPI_CHAR, comm);
  int cross = 0, all_cross = 0;
  for (int k = 0; k < 6; k++)
    cross += strcmp(hosts + (size_t)me * sizeof host, hosts + (size_t)nb[k] * sizeof host) != 0;
  MPI_Reduce(&cross, &all_cross, 1, MPI_INT, MPI_SUM, 0, comm);

  char *sbuf = malloc(6 * face), *rbuf = malloc(6 * face);
  memset(sbuf, me, 6 * face);
  double *t = malloc((size_t)reps * sizeof *t);
  MPI_Request rq[12];
  for (int it = -2; it < reps; it++) { /* two untimed warm-up steps */
    MPI_Barrier(comm);
    double t0 = MPI_Wtime();
    for (int k = 0; k < 6; k++) {
      /* Tag = direction, so the pair of messages to one neighbour (dims of
       * size 2) is matched in order. */
      MPI_Irecv(rbuf + k * face, (int)face, MPI_BYTE, nb[k], k ^ 1, comm, &rq[k]);
      MPI_Isend(sbuf + k * face, (int)face, MPI_BYTE, nb[k], k, comm, &rq[6 + k]);
    }
    MPI_Waitall(12, rq, MPI_STATUSES_IGNORE);
    double dt = MPI_Wtime() - t0, mx = 0;
    MPI_Allreduce(&dt, &mx, 1, MPI_DOUBLE, MPI_MAX, comm);
    if (it >= 0)
      t[it] = mx;
  }
  qsort(t, (size_t)reps, sizeof *t, cmp);
  if (me == 0)
    printf("halo %s ranks %d dims %dx%dx%d face %zu internode_frac %.3f median_s %.6f\n",
           argv[1], n, dims[0], dims[1], dims[2], face, all_cross / (6.0 * n),
           t[reps / 2]);
  free(t);
  free(sbuf);
  free(rbuf);
  free(hosts);
  MPI_Comm_free(&comm);
  MPI_Finalize();
  return 0;
}
