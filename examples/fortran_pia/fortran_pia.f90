! fortran_pia: a Fortran program that marks nested regions through the
! `ballast` module and reads its own performance data back with PIA. Run as a
! test: every value is checked, and a failed check stops with an error.
program fortran_pia
  use, intrinsic :: iso_c_binding
  use ballast
  use mpi
  implicit none
  integer :: ierr, rank, i, j
  integer(c_int) :: rc, step, inner, act, p2p
  type(pia_regdata) :: d
  type(pia_actdata) :: a
  type(c_ptr) :: iv, task
  double precision :: t0, wall, x

  call ballast_mpi_init(ierr)
  call check(ierr == 0, "ballast_mpi_init")
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)

  ! Five steps, each with two inner regions doing some arithmetic.
  x = 0d0
  t0 = MPI_Wtime()
  do i = 1, 5
    rc = mon_region_begin("step")
    call check(rc == 0, "mon_region_begin step")
    do j = 1, 2
      rc = mon_region_begin("inner")
      x = x + work(20000 * j)
      rc = mon_region_end("inner")
      call check(rc == 0, "mon_region_end inner")
    end do
    rc = mon_region_end("step")
    call check(rc == 0, "mon_region_end step")
  end do
  wall = MPI_Wtime() - t0

  ! Regions: lookup, exact addressing, navigation, data.
  step = pia_region_find("step")
  call check(step > 0, "find step")
  inner = pia_region_find_by_path("step/inner")
  call check(inner > 0, "find step/inner")
  call check(pia_region_find_child(step, "inner") == inner, "child inner")
  call check(pia_region_parent(inner) == step, "parent of inner")
  call check(pia_region_child(step) == inner, "first child of step")
  call check(pia_region_current() == PIA_REGION_MAIN, "current region")
  call check(pia_region_find("no such") == BALLAST_ENOTFOUND, "unknown region")
  rc = pia_region_data(step, d)
  call check(rc == 0, "get step")
  call check(d%id == step, "step id")
  call check(pia_region_name(d) == "step", "step name")
  call check(d%count == 5 .and. d%count64 == 5, "step count")
  call check(d%wtime > 0d0 .and. d%wtime <= wall, "step wall time")
  call check(d%mtime >= 0d0 .and. d%mtime <= d%wtime, "step MPI time")
  rc = pia_region_data(inner, d)
  call check(rc == 0 .and. d%count == 10, "inner count")
  call check(pia_region_name(d) == "inner", "inner name")
  call check(pia_region_data(-4, d) == BALLAST_ENOTFOUND, "bad region id")

  ! Activities: lookup, names, groups, accumulation.
  act = pia_activity_find("MPI_Send")
  call check(act >= 0, "find MPI_Send")
  call check(pia_activity_name(act) == "MPI_Send", "activity name")
  p2p = pia_activity_find(PIA_GROUP_P2P)
  call check(p2p >= 0 .and. p2p /= act, "find MPI_P2P")
  call check(pia_activity_find("MPI_Bogus") == BALLAST_ENOTFOUND, "unknown activity")
  call pia_actdata_init(a)
  call check(a%ncalls == 0 .and. a%nbytes == 0, "init activity")
  rc = pia_activity_data(act, a)
  call check(rc == 0 .and. a%ncalls >= 0, "get MPI_Send")
  call check(ballast_strerror(BALLAST_ENOTFOUND) == &
             "no such entity (key, name or id not found)", "error codes match C")

  ! Interval: one more step after the mark.
  rc = pia_interval_create(iv)
  call check(rc == 0 .and. c_associated(iv), "interval create")
  call check(pia_interval_track_region(iv, step) == 0, "track step")
  call check(pia_interval_mark(iv) == 0, "mark")
  rc = mon_region_begin("step")
  x = x + work(10000)
  rc = mon_region_end("step")
  rc = pia_interval_region_data(iv, step, d)
  call check(rc == 0 .and. d%count == 1 .and. d%wtime > 0d0, "interval step")
  call pia_interval_destroy(iv)

  ! Tasks: an unknown key is an error code, not a crash.
  call check(rta_task_find("no/such/task", task) == BALLAST_ENOTFOUND, "unknown task")
  call check(.not. c_associated(task), "no handle for an unknown task")

  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(a, f0.3)', "PASS fortran_pia, checksum ", x
  call ballast_mpi_finalize(ierr)

contains

  double precision function work(n)
    integer, intent(in) :: n
    integer :: k
    work = 0d0
    do k = 1, n
      work = work + sqrt(dble(k))
    end do
  end function work

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (.not. ok) then
      print '(a, i0, 2a)', "FAIL [rank ", rank, "]: ", what
      error stop 1
    end if
  end subroutine check

end program fortran_pia
