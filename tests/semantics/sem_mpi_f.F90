! MPI semantics from Fortran (built three ways: include 'mpif.h', use mpi,
! use mpi_f08 with -DSTYLE_MPI / -DSTYLE_F08): a communicator freed with a
! receive (MPI_ANY_SOURCE) and a send pending, then MPI_Waitall (MPICH's
! comm/cmfree); a matched message received after its communicator was freed;
! MPI_PROC_NULL; MPI_ANY_SOURCE / MPI_ANY_TAG with MPI_STATUS_IGNORE and
! MPI_STATUSES_IGNORE; persistent requests (inactive ones complete at once
! with an empty status); MPI_Cancel of a receive; MPI_Waitany / Testany /
! Waitsome / Testsome on null and inactive requests (MPI_UNDEFINED); an error
! handler that returns (MPI_ERRORS_RETURN). Each result is asserted and
! written as a line "SEM <rank> <what> <values>"; check_same.py requires the
! same lines unwatched, preloaded, with BALLAST_MONITOR=0 and linked.
#if defined(STYLE_F08)
#define STATUS_T type(MPI_Status)
#define SRC(s) s%MPI_SOURCE
#define TAG(s) s%MPI_TAG
#else
#define STATUS_T integer, dimension(MPI_STATUS_SIZE)
#define SRC(s) s(MPI_SOURCE)
#define TAG(s) s(MPI_TAG)
#endif
program sem_mpi_f
#if defined(STYLE_F08)
  use mpi_f08
  implicit none
  type(MPI_Comm) :: d
  type(MPI_Request) :: q(4), p(2)
  type(MPI_Message) :: msg
  type(MPI_Status) :: sts(4)
#elif defined(STYLE_MPI)
  use mpi
  implicit none
  integer :: d, q(4), p(2), msg
  integer :: sts(MPI_STATUS_SIZE, 4)
#else
  implicit none
  include 'mpif.h'
  integer :: d, q(4), p(2), msg
  integer :: sts(MPI_STATUS_SIZE, 4)
#endif
  STATUS_T :: st
  integer :: ierr, me, n, left, right, u, stt, sb, rb, cnt, idx, outc, ind(4), cls, k, rounds
  logical :: flag
  character(len=512) :: base, path

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, me, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, n, ierr)
  right = mod(me + 1, n)
  left = mod(me + n - 1, n)
  u = 6
  call get_environment_variable('SEM_OUT', base, status=stt)
  if (stt == 0 .and. len_trim(base) > 0) then
    write(path, '(a,a,i0)') trim(base), '.', me
    open(newunit=u, file=trim(path), position='append', action='write')
  end if
  rounds = 3

  do k = 1, rounds
    ! cmfree: freed with a receive and a send pending
    call MPI_Comm_dup(MPI_COMM_WORLD, d, ierr)
    sb = 100 + me
    rb = -1
    call MPI_Irecv(rb, 1, MPI_INTEGER, MPI_ANY_SOURCE, MPI_ANY_TAG, d, q(1), ierr)
    call MPI_Isend(sb, 1, MPI_INTEGER, right, 7, d, q(2), ierr)
    call MPI_Comm_free(d, ierr)
#if defined(STYLE_F08)
    call MPI_Waitall(2, q, sts, ierr)
    if (SRC(sts(1)) /= left .or. TAG(sts(1)) /= 7) call fail('cmfree status')
    write(u, '(a,i0,a,i0,1x,i0,1x,i0)') 'SEM ', me, ' cmfree ', rb, SRC(sts(1)), TAG(sts(1))
#else
    call MPI_Waitall(2, q, sts, ierr)
    if (sts(MPI_SOURCE, 1) /= left .or. sts(MPI_TAG, 1) /= 7) call fail('cmfree status')
    write(u, '(a,i0,a,i0,1x,i0,1x,i0)') 'SEM ', me, ' cmfree ', rb, sts(MPI_SOURCE, 1), &
         sts(MPI_TAG, 1)
#endif
    if (ierr /= MPI_SUCCESS .or. rb /= 100 + left) call fail('cmfree')

    ! a matched message received after its communicator was freed
    call MPI_Comm_dup(MPI_COMM_WORLD, d, ierr)
    call MPI_Isend(sb, 1, MPI_INTEGER, right, 8, d, q(1), ierr)
    call MPI_Mprobe(MPI_ANY_SOURCE, 8, d, msg, st, ierr)
    call MPI_Comm_free(d, ierr)
    rb = -1
    call MPI_Mrecv(rb, 1, MPI_INTEGER, msg, st, ierr)
    call MPI_Wait(q(1), MPI_STATUS_IGNORE, ierr)
    if (rb /= 100 + left .or. SRC(st) /= left) call fail('mprobe')
    write(u, '(a,i0,a,i0,1x,i0)') 'SEM ', me, ' mprobe ', rb, SRC(st)

    ! MPI_PROC_NULL
    rb = 5
    call MPI_Recv(rb, 1, MPI_INTEGER, MPI_PROC_NULL, 0, MPI_COMM_WORLD, st, ierr)
    call MPI_Get_count(st, MPI_INTEGER, cnt, ierr)
    if (rb /= 5 .or. SRC(st) /= MPI_PROC_NULL .or. TAG(st) /= MPI_ANY_TAG .or. cnt /= 0) &
         call fail('proc_null')
    write(u, '(a,i0,a,i0,1x,i0,1x,i0)') 'SEM ', me, ' proc_null ', SRC(st), TAG(st), cnt

    ! wildcards, statuses ignored
    call MPI_Isend(me, 1, MPI_INTEGER, right, 20 + me, MPI_COMM_WORLD, q(1), ierr)
    call MPI_Recv(rb, 1, MPI_INTEGER, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &
         MPI_STATUS_IGNORE, ierr)
    call MPI_Waitall(1, q, MPI_STATUSES_IGNORE, ierr)
    if (rb /= left) call fail('wildcards')
    write(u, '(a,i0,a,i0)') 'SEM ', me, ' wildcards ', rb

    ! persistent, inactive first
    call MPI_Recv_init(rb, 1, MPI_INTEGER, MPI_ANY_SOURCE, 30, MPI_COMM_WORLD, p(1), ierr)
    call MPI_Send_init(sb, 1, MPI_INTEGER, right, 30, MPI_COMM_WORLD, p(2), ierr)
    call MPI_Wait(p(1), st, ierr)
    if (SRC(st) /= MPI_ANY_SOURCE .or. TAG(st) /= MPI_ANY_TAG) call fail('inactive status')
    sb = 300 + me
    call MPI_Startall(2, p, ierr)
    call MPI_Waitall(2, p, MPI_STATUSES_IGNORE, ierr)
    if (rb /= 300 + left) call fail('persistent')
    write(u, '(a,i0,a,i0)') 'SEM ', me, ' persistent ', rb

    ! null and inactive requests in the wait/test family
#if defined(STYLE_F08)
    q = MPI_REQUEST_NULL
#else
    q = MPI_REQUEST_NULL
#endif
    q(2) = p(1)
    q(4) = p(2)
    call MPI_Waitany(4, q, idx, st, ierr)
    if (idx /= MPI_UNDEFINED) call fail('waitany')
    call MPI_Testany(4, q, idx, flag, MPI_STATUS_IGNORE, ierr)
    if (idx /= MPI_UNDEFINED .or. .not. flag) call fail('testany')
    call MPI_Waitsome(4, q, outc, ind, MPI_STATUSES_IGNORE, ierr)
    if (outc /= MPI_UNDEFINED) call fail('waitsome')
    call MPI_Testsome(4, q, outc, ind, sts, ierr)
    if (outc /= MPI_UNDEFINED) call fail('testsome')
    ! one active: its index comes back 1-based
    call MPI_Start(q(2), ierr)
    call MPI_Start(q(4), ierr)
    call MPI_Waitany(4, q, idx, st, ierr)
    if (idx /= 2 .and. idx /= 4) call fail('waitany index')
    call MPI_Waitany(4, q, idx, st, ierr)
    if (idx /= 2 .and. idx /= 4) call fail('waitany index 2')
    write(u, '(a,i0,a,i0,1x,i0)') 'SEM ', me, ' completion ', outc, rb
    call MPI_Request_free(p(1), ierr)
    call MPI_Request_free(p(2), ierr)

    ! MPI_Cancel of a receive
    call MPI_Irecv(rb, 1, MPI_INTEGER, MPI_ANY_SOURCE, 999, MPI_COMM_WORLD, q(1), ierr)
    call MPI_Cancel(q(1), ierr)
    call MPI_Wait(q(1), st, ierr)
    call MPI_Test_cancelled(st, flag, ierr)
    if (.not. flag) call fail('cancel')
    write(u, '(a,i0,a,l1)') 'SEM ', me, ' cancel ', flag

    ! an error handler that returns
    call MPI_Comm_dup(MPI_COMM_WORLD, d, ierr)
    call MPI_Comm_set_errhandler(d, MPI_ERRORS_RETURN, ierr)
    call MPI_Send(sb, 1, MPI_INTEGER, n, 0, d, ierr)
    call MPI_Error_class(ierr, cls, stt)
    if (cls /= MPI_ERR_RANK) call fail('error class')
    call MPI_Comm_free(d, ierr)
    write(u, '(a,i0,a,i0)') 'SEM ', me, ' errors ', cls
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
  end do

  if (u /= 6) close(u)
  if (me == 0) print '(a)', 'PASS sem_mpi_f'
  call MPI_Finalize(ierr)

contains

  subroutine fail(what)
    character(len=*), intent(in) :: what
    integer :: e
    print '(a,i0,a,a)', 'FAIL sem_mpi_f [rank ', me, ']: ', what
    call MPI_Abort(MPI_COMM_WORLD, 1, e)
  end subroutine fail
end program sem_mpi_f
