! One MPI program in the three Fortran binding styles, chosen by the
! preprocessor: STYLE_MPIF (include 'mpif.h'), STYLE_MPI (use mpi),
! STYLE_F08 (use mpi_f08). fwrap.c is the same program in C; compare.py
! checks that ballast's profiles of the two agree call for call and byte for
! byte. Run on 3 ranks; argument 1: the file for the MPI-IO part.
#if defined(STYLE_F08)
#define HANDLE(T) type(T)
#define STATUS_DECL(x) type(MPI_Status) :: x
#define STATUSES_DECL(x, n) type(MPI_Status) :: x(n)
#define SOURCE_OF(s) s%MPI_SOURCE
#else
#define HANDLE(T) integer
#define STATUS_DECL(x) integer :: x(MPI_STATUS_SIZE)
#define STATUSES_DECL(x, n) integer :: x(MPI_STATUS_SIZE, n)
#define SOURCE_OF(s) s(MPI_SOURCE)
#endif

program fwrap
#if defined(STYLE_F08)
  use mpi_f08
#elif defined(STYLE_MPI)
  use mpi
#endif
  implicit none
#if defined(STYLE_MPIF)
  include 'mpif.h'
#endif
  integer, parameter :: NMAX = 8
  integer :: ierr, rank, n, right, left, i, idx, outcount, key
  integer :: ia(64), ib(64), counts(NMAX), rcounts(NMAX), displs(NMAX), indices(4)
  double precision :: da(16), db(16)
  logical :: flag, periods(1)
  character(len=256) :: fname
  HANDLE(MPI_Comm) :: dup, split, cart
  HANDLE(MPI_Request) :: reqs(4), many(40)
  HANDLE(MPI_Datatype) :: types(NMAX)
  HANDLE(MPI_Win) :: win
  HANDLE(MPI_File) :: fh
  HANDLE(MPI_Message) :: msg
  STATUS_DECL(st)
  STATUSES_DECL(sts, 4)
  integer(kind=MPI_ADDRESS_KIND) :: winsize, disp, adispls(2)
  integer(kind=MPI_OFFSET_KIND) :: off

  call get_command_argument(1, fname)
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, n, ierr)
  right = mod(rank + 1, n)
  left = mod(rank + n - 1, n)
  ia = rank
  ib = 0
  da = 1.0d0
  db = 0.0d0
  call MPI_Pcontrol(1)

  ! ---- point to point
  if (rank == 0) then
    call MPI_Send(ia, 5, MPI_INTEGER, 1, 1, MPI_COMM_WORLD, ierr)
    call MPI_Recv(db, 3, MPI_DOUBLE_PRECISION, 1, 2, MPI_COMM_WORLD, st, ierr)
    if (SOURCE_OF(st) /= 1) call die('Recv source')
  else if (rank == 1) then
    call MPI_Recv(ib, 64, MPI_INTEGER, MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    call MPI_Ssend(da, 3, MPI_DOUBLE_PRECISION, 0, 2, MPI_COMM_WORLD, ierr)
  end if
  call MPI_Sendrecv(da, 10, MPI_DOUBLE_PRECISION, right, 3, db, 10, MPI_DOUBLE_PRECISION, &
                    left, 3, MPI_COMM_WORLD, st, ierr)
  call MPI_Sendrecv_replace(ia, 7, MPI_INTEGER, right, 4, left, 4, MPI_COMM_WORLD, &
                            MPI_STATUS_IGNORE, ierr)
  ia = rank

  ! ---- nonblocking, completed by the wait family (indices are 1-based)
  call MPI_Irecv(db, 8, MPI_DOUBLE_PRECISION, left, 5, MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_Isend(da, 8, MPI_DOUBLE_PRECISION, right, 5, MPI_COMM_WORLD, reqs(2), ierr)
  call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE, ierr)
  call MPI_Irecv(ib, 4, MPI_INTEGER, left, 6, MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_Issend(ia, 4, MPI_INTEGER, right, 6, MPI_COMM_WORLD, reqs(2), ierr)
  do i = 1, 2
    call MPI_Waitany(2, reqs, idx, st, ierr)
    if (idx < 1 .or. idx > 2) call die('Waitany index')
  end do
  call MPI_Irecv(ib, 9, MPI_INTEGER, left, 7, MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_Isend(ia, 9, MPI_INTEGER, right, 7, MPI_COMM_WORLD, reqs(2), ierr)
  call MPI_Waitsome(1, reqs, outcount, indices, sts, ierr)
  if (outcount /= 1 .or. indices(1) /= 1) call die('Waitsome')
  call MPI_Wait(reqs(2), MPI_STATUS_IGNORE, ierr)
  call MPI_Irecv(ib, 2, MPI_INTEGER, left, 8, MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_Isend(ia, 2, MPI_INTEGER, right, 8, MPI_COMM_WORLD, reqs(2), ierr)
  flag = .false.
  do while (.not. flag)
    call MPI_Testall(2, reqs, flag, MPI_STATUSES_IGNORE, ierr)
  end do
  call MPI_Irecv(ib, 3, MPI_INTEGER, left, 9, MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_Isend(ia, 3, MPI_INTEGER, right, 9, MPI_COMM_WORLD, reqs(2), ierr)
  flag = .false.
  do while (.not. flag)
    call MPI_Test(reqs(1), flag, st, ierr)
  end do
  flag = .false.
  do while (.not. flag)
    call MPI_Testany(1, reqs(2:2), idx, flag, MPI_STATUS_IGNORE, ierr)
  end do

  ! more requests than the wrappers keep inline
  do i = 1, 20
    call MPI_Irecv(ib(i), 1, MPI_INTEGER, left, 100 + i, MPI_COMM_WORLD, many(i), ierr)
  end do
  do i = 1, 20
    call MPI_Isend(ia(i), 1, MPI_INTEGER, right, 100 + i, MPI_COMM_WORLD, many(20 + i), ierr)
  end do
  call MPI_Waitall(40, many, MPI_STATUSES_IGNORE, ierr)

  ! ---- persistent requests
  call MPI_Recv_init(ib, 6, MPI_INTEGER, left, 10, MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_Send_init(ia, 6, MPI_INTEGER, right, 10, MPI_COMM_WORLD, reqs(2), ierr)
  do i = 1, 2
    call MPI_Startall(2, reqs, ierr)
    call MPI_Waitall(2, reqs, sts, ierr)
  end do
  call MPI_Start(reqs(1), ierr)
  call MPI_Start(reqs(2), ierr)
  call MPI_Wait(reqs(1), st, ierr)
  call MPI_Wait(reqs(2), st, ierr)
  call MPI_Request_free(reqs(1), ierr)
  call MPI_Request_free(reqs(2), ierr)

  ! ---- probes and matched receives
  if (rank == 0) then
    call MPI_Send(ia, 6, MPI_INTEGER, 1, 11, MPI_COMM_WORLD, ierr)
    call MPI_Send(da, 3, MPI_DOUBLE_PRECISION, 1, 12, MPI_COMM_WORLD, ierr)
    call MPI_Send(da, 5, MPI_DOUBLE_PRECISION, 1, 13, MPI_COMM_WORLD, ierr)
    call MPI_Send(ia, 2, MPI_INTEGER, 1, 14, MPI_COMM_WORLD, ierr)
  else if (rank == 1) then
    call MPI_Probe(0, 11, MPI_COMM_WORLD, st, ierr)
    call MPI_Recv(ib, 6, MPI_INTEGER, 0, 11, MPI_COMM_WORLD, st, ierr)
    call MPI_Mprobe(0, 12, MPI_COMM_WORLD, msg, st, ierr)
    call MPI_Mrecv(db, 3, MPI_DOUBLE_PRECISION, msg, MPI_STATUS_IGNORE, ierr)
    flag = .false.
    do while (.not. flag)
      call MPI_Improbe(0, 13, MPI_COMM_WORLD, flag, msg, st, ierr)
    end do
    call MPI_Imrecv(db, 5, MPI_DOUBLE_PRECISION, msg, reqs(1), ierr)
    call MPI_Wait(reqs(1), MPI_STATUS_IGNORE, ierr)
    flag = .false.
    do while (.not. flag)
      call MPI_Iprobe(0, 14, MPI_COMM_WORLD, flag, st, ierr)
    end do
    call MPI_Recv(ib, 2, MPI_INTEGER, 0, 14, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  end if

  ! ---- collectives (MPI_IN_PLACE where the standard allows it)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_Bcast(ia, 5, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    call MPI_Gather(MPI_IN_PLACE, 2, MPI_INTEGER, ib, 2, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  else
    call MPI_Gather(ia, 2, MPI_INTEGER, ib, 2, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  end if
  do i = 1, n
    counts(i) = i
    rcounts(i) = rank + 1
    displs(i) = 4 * (i - 1)
  end do
  call MPI_Gatherv(ia, rank + 1, MPI_INTEGER, ib, counts, displs, MPI_INTEGER, 1, &
                   MPI_COMM_WORLD, ierr)
  call MPI_Scatter(ia, 3, MPI_INTEGER, ib, 3, MPI_INTEGER, 2, MPI_COMM_WORLD, ierr)
  call MPI_Scatterv(ia, counts, displs, MPI_INTEGER, ib, rank + 1, MPI_INTEGER, 0, &
                    MPI_COMM_WORLD, ierr)
  call MPI_Allgather(ia, 2, MPI_INTEGER, ib, 2, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  call MPI_Allgatherv(ia, rank + 1, MPI_INTEGER, ib, counts, displs, MPI_INTEGER, &
                      MPI_COMM_WORLD, ierr)
  call MPI_Alltoall(ia, 3, MPI_INTEGER, ib, 3, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  call MPI_Alltoallv(ia, counts, displs, MPI_INTEGER, ib, rcounts, displs, MPI_INTEGER, &
                     MPI_COMM_WORLD, ierr)
  do i = 1, n
    types(i) = MPI_INTEGER
    displs(i) = 16 * (i - 1)
  end do
  call MPI_Alltoallw(ia, counts, displs, types, ib, rcounts, displs, types, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    call MPI_Reduce(MPI_IN_PLACE, ia, 4, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  else
    call MPI_Reduce(ia, ib, 4, MPI_INTEGER, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  end if
  call MPI_Allreduce(MPI_IN_PLACE, da, 6, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  call MPI_Reduce_scatter(ia, ib, counts, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call MPI_Reduce_scatter_block(ia, ib, 2, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, ierr)
  call MPI_Scan(ia, ib, 3, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call MPI_Exscan(ia, ib, 3, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call MPI_Ibarrier(MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_Wait(reqs(1), MPI_STATUS_IGNORE, ierr)
  call MPI_Iallreduce(ia, ib, 5, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_Ialltoallw(ia, counts, displs, types, ib, rcounts, displs, types, &
                      MPI_COMM_WORLD, reqs(2), ierr)
  call MPI_Waitall(2, reqs, sts, ierr)
  ia = rank

  ! ---- communicators and a periodic ring topology
  call MPI_Comm_dup(MPI_COMM_WORLD, dup, ierr)
  call MPI_Comm_split(dup, mod(rank, 2), rank, split, ierr)
  call MPI_Allreduce(ia, ib, 2, MPI_INTEGER, MPI_SUM, split, ierr)
  call MPI_Comm_free(split, ierr)
  call MPI_Comm_free(dup, ierr)
  counts(1) = n
  periods(1) = .true.
  call MPI_Cart_create(MPI_COMM_WORLD, 1, counts, periods, .false., cart, ierr)
  call MPI_Neighbor_alltoall(ia, 2, MPI_INTEGER, ib, 2, MPI_INTEGER, cart, ierr)
  call MPI_Neighbor_allgather(ia, 3, MPI_INTEGER, ib, 3, MPI_INTEGER, cart, ierr)
  ! to the left neighbour 1, to the right 2: so 2 from the left, 1 from the right
  do i = 1, 2
    counts(i) = i
    rcounts(i) = 3 - i
    types(i) = MPI_DOUBLE_PRECISION
    adispls(i) = 16 * (i - 1)
  end do
  call MPI_Neighbor_alltoallw(da, counts, adispls, types, db, rcounts, adispls, types, cart, ierr)
  call MPI_Comm_free(cart, ierr)

  ! ---- one-sided
  winsize = 64 * 4
  call MPI_Win_create(ib, winsize, 4, MPI_INFO_NULL, MPI_COMM_WORLD, win, ierr)
  call MPI_Win_fence(0, win, ierr)
  disp = 4
  call MPI_Put(ia, 2, MPI_INTEGER, right, disp, 2, MPI_INTEGER, win, ierr)
  call MPI_Get(ia(10), 3, MPI_INTEGER, left, disp, 3, MPI_INTEGER, win, ierr)
  call MPI_Win_fence(0, win, ierr)
  call MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win, ierr)
  call MPI_Accumulate(ia, 4, MPI_INTEGER, right, disp, 4, MPI_INTEGER, MPI_SUM, win, ierr)
  call MPI_Win_unlock(right, win, ierr)
  call MPI_Win_free(win, ierr)

  ! ---- MPI-IO
  call MPI_File_open(MPI_COMM_WORLD, trim(fname), MPI_MODE_CREATE + MPI_MODE_RDWR, &
                     MPI_INFO_NULL, fh, ierr)
  if (ierr /= MPI_SUCCESS) call die('File_open')
  off = rank * 32
  call MPI_File_write_at(fh, off, ia, 8, MPI_INTEGER, MPI_STATUS_IGNORE, ierr)
  call MPI_File_sync(fh, ierr)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_File_read_at(fh, off, ib, 8, MPI_INTEGER, st, ierr)
  call MPI_File_close(fh, ierr)

  ! ---- nested regions; level 0 only counts
  call MPI_Pcontrol(1)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_Pcontrol(-1)
  call MPI_Pcontrol(0)
  call MPI_Pcontrol(-1)
  call MPI_Finalize(ierr)

contains

  subroutine die(what)
    character(len=*), intent(in) :: what
    print '(a, a)', 'FAIL fwrap: ', what
    stop 1
  end subroutine die
end program fwrap
