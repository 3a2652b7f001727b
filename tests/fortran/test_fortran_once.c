/*
 * A Fortran call is counted once whatever the layers below do. Open MPI's
 * Fortran library calls PMPI_ C functions, so the C wrappers never see a
 * Fortran call; an MPI library whose Fortran layer called the MPI_ C
 * function instead would run through a C wrapper inside the Fortran one.
 * This program stands in for such a library: it defines the Fortran PMPI
 * entry points pmpi_barrier_ and pmpi_send_ itself (exported, so ballast's
 * lookup finds them first) as calls of MPI_Barrier and MPI_Send, calls the
 * Fortran wrappers mpi_barrier_ / mpi_send_ / mpi_recv_ and checks through
 * PIA that each call counts once, with its bytes once (2 ranks).
 */
#include <ballast.h>

#include "test_util.h"

/* The Fortran wrappers under test (libballast exports them). */
void mpi_barrier_(MPI_Fint *comm, MPI_Fint *ierr);
void mpi_send_(void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *dest, MPI_Fint *tag,
               MPI_Fint *comm, MPI_Fint *ierr);

static int layered_calls;

/* The "Fortran library" of a layered MPI: it calls the MPI_ C functions. */
void pmpi_barrier_(MPI_Fint *comm, MPI_Fint *ierr);
void pmpi_barrier_(MPI_Fint *comm, MPI_Fint *ierr) {
  layered_calls++;
  *ierr = MPI_Barrier(MPI_Comm_f2c(*comm));
}

void pmpi_send_(void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *dest, MPI_Fint *tag,
                MPI_Fint *comm, MPI_Fint *ierr);
void pmpi_send_(void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *dest, MPI_Fint *tag,
                MPI_Fint *comm, MPI_Fint *ierr) {
  layered_calls++;
  *ierr = MPI_Send(buf, *count, MPI_Type_f2c(*type), *dest, *tag, MPI_Comm_f2c(*comm));
}

static pia_actdata_t act(const char *name) {
  pia_actdata_t d;
  pia_actdata_init(&d);
  pia_act_t a = pia_activity_find(name);
  CHECK(a >= 0);
  CHECK_EQ(pia_activity_data(a, &d), 0);
  return d;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Fint world = MPI_Comm_c2f(MPI_COMM_WORLD), ierr = -1;
  MPI_Fint type = MPI_Type_c2f(MPI_INT), count = 5, peer = 1, tag = 3;
  int buf[5] = {1, 2, 3, 4, 5};

  long long barriers = act("MPI_Barrier").ncalls;
  mpi_barrier_(&world, &ierr);
  CHECK_EQ(ierr, MPI_SUCCESS);
  CHECK_EQ(act("MPI_Barrier").ncalls, barriers + 1);
  if (rank == 0) {
    ierr = -1;
    mpi_send_(buf, &count, &type, &peer, &tag, &world, &ierr);
    CHECK_EQ(ierr, MPI_SUCCESS);
    pia_actdata_t s = act("MPI_Send");
    CHECK_EQ(s.ncalls, 1);
    CHECK_EQ(s.nbytes, 5 * (long long)sizeof(int));
    CHECK_EQ(layered_calls, 2);
  } else {
    MPI_Recv(buf, 5, MPI_INT, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK_EQ(layered_calls, 1);
  }
  MPI_Finalize();
  TEST_PASS("fortran_once");
  return 0;
}
