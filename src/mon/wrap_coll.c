/*
 * Byte counts of the PMPI wrappers: type sizes and the volume of each
 * collective. (Received sizes from a status: wrap_status/, per MPI library.)
 *
 * A collective's volume at one rank is what it passes in its send buffer plus
 * what it gets in its receive buffer (the table in mpi31.spec). Only the
 * arguments MPI says are significant at this rank are read: a datatype that
 * is not significant may be anything, and asking MPI its size could raise an
 * error. These helpers run only after the PMPI call succeeded, so the
 * significant arguments are valid.
 */
#include <string.h>

#include "mon/wrap_internal.h"

uint64_t mon__w_type(MPI_Datatype dt) {
  MPI_Count sz = 0;
  if (dt == MPI_DATATYPE_NULL || PMPI_Type_size_x(dt, &sz) != MPI_SUCCESS || sz < 0)
    return 0;
  return (uint64_t)sz;
}

/* count x type, touching the type only when something is moved. */
static uint64_t vol(int count, MPI_Datatype dt) {
  return count > 0 ? (uint64_t)count * mon__w_type(dt) : 0;
}

static uint64_t sum(const int *counts, int n) {
  uint64_t s = 0;
  for (int i = 0; counts != NULL && i < n; i++)
    if (counts[i] > 0)
      s += (uint64_t)counts[i];
  return s;
}

static uint64_t volv(const int *counts, int n, MPI_Datatype dt) {
  uint64_t s = sum(counts, n);
  return s ? s * mon__w_type(dt) : 0;
}

static uint64_t volw(const int *counts, const MPI_Datatype *dts, int n) {
  uint64_t s = 0;
  for (int i = 0; counts != NULL && dts != NULL && i < n; i++)
    s += vol(counts[i], dts[i]);
  return s;
}

/* ---- rooted -------------------------------------------------------------------- */

uint64_t mon__w_bcast(int count, MPI_Datatype dt, int root, MPI_Comm comm) {
  return mon__w_role(comm, root) < 0 ? 0 : vol(count, dt);
}

uint64_t mon__w_gather(const void *sbuf, int scount, MPI_Datatype st, int rcount,
                       MPI_Datatype rt, int root, MPI_Comm comm) {
  int role = mon__w_role(comm, root);
  if (role <= 0)
    return role < 0 ? 0 : vol(scount, st);
  uint64_t recv = (uint64_t)mon__w_size(comm) * vol(rcount, rt);
  if (root == MPI_ROOT) /* intercommunicator root: receives only */
    return recv;
  return recv + (sbuf == MPI_IN_PLACE ? vol(rcount, rt) : vol(scount, st));
}

uint64_t mon__w_gatherv(const void *sbuf, int scount, MPI_Datatype st,
                        const int *rcounts, MPI_Datatype rt, int root, MPI_Comm comm) {
  int role = mon__w_role(comm, root);
  if (role <= 0)
    return role < 0 ? 0 : vol(scount, st);
  uint64_t recv = volv(rcounts, mon__w_size(comm), rt);
  if (root == MPI_ROOT)
    return recv;
  return recv + (sbuf == MPI_IN_PLACE ? vol(rcounts[root], rt) : vol(scount, st));
}

uint64_t mon__w_scatter(int scount, MPI_Datatype st, const void *rbuf, int rcount,
                        MPI_Datatype rt, int root, MPI_Comm comm) {
  int role = mon__w_role(comm, root);
  if (role <= 0)
    return role < 0 ? 0 : vol(rcount, rt);
  uint64_t send = (uint64_t)mon__w_size(comm) * vol(scount, st);
  if (root == MPI_ROOT)
    return send;
  return send + (rbuf == MPI_IN_PLACE ? vol(scount, st) : vol(rcount, rt));
}

uint64_t mon__w_scatterv(const int *scounts, MPI_Datatype st, const void *rbuf,
                         int rcount, MPI_Datatype rt, int root, MPI_Comm comm) {
  int role = mon__w_role(comm, root);
  if (role <= 0)
    return role < 0 ? 0 : vol(rcount, rt);
  uint64_t send = volv(scounts, mon__w_size(comm), st);
  if (root == MPI_ROOT)
    return send;
  return send + (rbuf == MPI_IN_PLACE ? vol(scounts[root], st) : vol(rcount, rt));
}

uint64_t mon__w_reduce(const void *sbuf, int count, MPI_Datatype dt, int root,
                       MPI_Comm comm) {
  (void)sbuf; /* in place, the root still contributes count elements */
  int role = mon__w_role(comm, root);
  if (role < 0)
    return 0;
  if (role == 0)
    return vol(count, dt);
  return root == MPI_ROOT ? vol(count, dt) : 2 * vol(count, dt);
}

/* ---- unrooted ------------------------------------------------------------------ */

uint64_t mon__w_allgather(const void *sbuf, int scount, MPI_Datatype st, int rcount,
                          MPI_Datatype rt, MPI_Comm comm) {
  uint64_t recv = (uint64_t)mon__w_size(comm) * vol(rcount, rt);
  return recv + (sbuf == MPI_IN_PLACE ? vol(rcount, rt) : vol(scount, st));
}

uint64_t mon__w_allgatherv(const void *sbuf, int scount, MPI_Datatype st,
                           const int *rcounts, MPI_Datatype rt, MPI_Comm comm) {
  uint64_t recv = volv(rcounts, mon__w_size(comm), rt);
  if (sbuf != MPI_IN_PLACE)
    return recv + vol(scount, st);
  int me = mon__w_myrank(comm);
  return recv + (me >= 0 ? vol(rcounts[me], rt) : 0);
}

uint64_t mon__w_alltoall(const void *sbuf, int scount, MPI_Datatype st, int rcount,
                         MPI_Datatype rt, MPI_Comm comm) {
  uint64_t n = (uint64_t)mon__w_size(comm);
  uint64_t recv = n * vol(rcount, rt);
  return recv + (sbuf == MPI_IN_PLACE ? recv : n * vol(scount, st));
}

uint64_t mon__w_alltoallv(const void *sbuf, const int *scounts, MPI_Datatype st,
                          const int *rcounts, MPI_Datatype rt, MPI_Comm comm) {
  int n = mon__w_size(comm);
  uint64_t recv = volv(rcounts, n, rt);
  return recv + (sbuf == MPI_IN_PLACE ? recv : volv(scounts, n, st));
}

uint64_t mon__w_alltoallw(const void *sbuf, const int *scounts, const MPI_Datatype *sts,
                          const int *rcounts, const MPI_Datatype *rts, MPI_Comm comm) {
  int n = mon__w_size(comm);
  uint64_t recv = volw(rcounts, rts, n);
  return recv + (sbuf == MPI_IN_PLACE ? recv : volw(scounts, sts, n));
}

uint64_t mon__w_allreduce(int count, MPI_Datatype dt, MPI_Comm comm) {
  (void)comm;
  return 2 * vol(count, dt);
}

uint64_t mon__w_exscan(int count, MPI_Datatype dt, MPI_Comm comm) {
  /* rank 0's receive buffer is left undefined: it gets nothing */
  return mon__w_myrank(comm) > 0 ? 2 * vol(count, dt) : vol(count, dt);
}

uint64_t mon__w_reduce_scatter(const int *rcounts, MPI_Datatype dt, MPI_Comm comm) {
  int me = mon__w_myrank(comm);
  uint64_t mine = me >= 0 ? vol(rcounts[me], dt) : 0;
  return volv(rcounts, mon__w_lsize(comm), dt) + mine;
}

uint64_t mon__w_reduce_scatter_block(int rcount, MPI_Datatype dt, MPI_Comm comm) {
  return ((uint64_t)mon__w_lsize(comm) + 1) * vol(rcount, dt);
}

/* ---- neighbourhood ------------------------------------------------------------- */

static int real(const unsigned char *ok, int n) {
  int k = 0;
  for (int i = 0; i < n; i++)
    k += ok[i] != 0;
  return k;
}

static uint64_t volv_ok(const int *counts, const unsigned char *ok, int n, MPI_Datatype dt) {
  uint64_t s = 0;
  for (int i = 0; counts != NULL && i < n; i++)
    if (ok[i] && counts[i] > 0)
      s += (uint64_t)counts[i];
  return s ? s * mon__w_type(dt) : 0;
}

static uint64_t volw_ok(const int *counts, const MPI_Datatype *dts, const unsigned char *ok,
                        int n) {
  uint64_t s = 0;
  for (int i = 0; counts != NULL && dts != NULL && i < n; i++)
    if (ok[i])
      s += vol(counts[i], dts[i]);
  return s;
}

uint64_t mon__w_nbr_allgather(int scount, MPI_Datatype st, int rcount, MPI_Datatype rt,
                              MPI_Comm comm) {
  int in, out;
  const unsigned char *iok, *ook;
  if (mon__w_neighbours(comm, &in, &out, &iok, &ook) != 0)
    return 0;
  return (uint64_t)real(ook, out) * vol(scount, st) + (uint64_t)real(iok, in) * vol(rcount, rt);
}

uint64_t mon__w_nbr_allgatherv(int scount, MPI_Datatype st, const int *rcounts,
                               MPI_Datatype rt, MPI_Comm comm) {
  int in, out;
  const unsigned char *iok, *ook;
  if (mon__w_neighbours(comm, &in, &out, &iok, &ook) != 0)
    return 0;
  return (uint64_t)real(ook, out) * vol(scount, st) + volv_ok(rcounts, iok, in, rt);
}

uint64_t mon__w_nbr_alltoall(int scount, MPI_Datatype st, int rcount, MPI_Datatype rt,
                             MPI_Comm comm) {
  return mon__w_nbr_allgather(scount, st, rcount, rt, comm);
}

uint64_t mon__w_nbr_alltoallv(const int *scounts, MPI_Datatype st, const int *rcounts,
                              MPI_Datatype rt, MPI_Comm comm) {
  int in, out;
  const unsigned char *iok, *ook;
  if (mon__w_neighbours(comm, &in, &out, &iok, &ook) != 0)
    return 0;
  return volv_ok(scounts, ook, out, st) + volv_ok(rcounts, iok, in, rt);
}

uint64_t mon__w_nbr_alltoallw(const int *scounts, const MPI_Datatype *sts,
                              const int *rcounts, const MPI_Datatype *rts, MPI_Comm comm) {
  int in, out;
  const unsigned char *iok, *ook;
  if (mon__w_neighbours(comm, &in, &out, &iok, &ook) != 0)
    return 0;
  return volw_ok(scounts, sts, ook, out) + volw_ok(rcounts, rts, iok, in);
}
