!> \file ballast.f90
!> \brief Fortran bindings of ballast (module `ballast`): the Performance
!> Introspection API, the region markers and the task markers, through
!> `iso_c_binding`.
!>
!> Every routine has the same meaning, arguments and return codes as its C
!> counterpart in `ballast/pia.h`, `ballast/mon.h` and `ballast/rta.h`
!> (read those for the full contract); names are the C names (one name per
!> call, as ballast.h says; the CRESTA names of ballast/cresta.h are C inline
!> wrappers and have no Fortran form). Differences:
!>  - names are Fortran `character(*)` (trailing blanks are trimmed);
!>  - `pia_region_name(data)` / `pia_activity_name(act)` return the names as
!>    allocatable Fortran strings ('' when there is none);
!>  - an interval and a task are `type(c_ptr)` handles (`rta_task_find`
!>    gives a task's handle from its key, for `rta_task_begin`/`rta_task_end`).
!>
!> MPI start-up: with Open MPI, the Fortran MPI bindings (mpif.h, `use mpi`,
!> `use mpi_f08`) call the PMPI_* entry points directly, so ballast's C
!> wrappers do not see them: a Fortran program must start and stop MPI with
!> `ballast_mpi_init` / `ballast_mpi_finalize` (the C MPI_Init / MPI_Finalize,
!> through ballast's wrappers) for monitoring to run. Its regions and tasks
!> are then measured (wall, CPU and MPI time of monitored calls), but MPI
!> calls it makes through the Fortran bindings are not counted as activities.
module ballast
  use, intrinsic :: iso_c_binding
  implicit none
  private

  ! ---- constants (values as in the C headers) -------------------------------
  integer(c_int), parameter, public :: PIA_REGION_MAIN = 0
  integer(c_int), parameter, public :: PIA_REGION_ALL = -1
  integer(c_int), parameter, public :: PIA_HWC_MAX = 4
  character(len=*), parameter, public :: PIA_GROUP_P2P = "MPI_P2P"
  character(len=*), parameter, public :: PIA_GROUP_COLL = "MPI_COLL"
  character(len=*), parameter, public :: PIA_GROUP_RMA = "MPI_RMA"
  character(len=*), parameter, public :: PIA_GROUP_IO = "MPI_IO"
  character(len=*), parameter, public :: PIA_GROUP_ALL = "MPI_ALL"
  integer(c_int), parameter, public :: BALLAST_OK = 0
  integer(c_int), parameter, public :: BALLAST_EINVAL = -1
  integer(c_int), parameter, public :: BALLAST_ENOMEM = -2
  integer(c_int), parameter, public :: BALLAST_ENOTFOUND = -3
  integer(c_int), parameter, public :: BALLAST_ESTATE = -5
  integer(c_int), parameter, public :: BALLAST_EMISMATCH = -6
  integer(c_int), parameter, public :: BALLAST_ENAMETOOLONG = -7
  integer(c_int), parameter, public :: BALLAST_ERANGE = -15
  integer(c_int), parameter, public :: BALLAST_EDISABLED = -18

  ! ---- result records (layout of the C structs) -----------------------------
  !> pia_regdata_t
  type, bind(C), public :: pia_regdata
    integer(c_int) :: id
    type(c_ptr) :: name
    integer(c_int) :: count
    integer(c_long_long) :: count64
    real(c_double) :: wtime, mtime, cputime
    integer(c_long_long) :: hwc(4)
    integer(c_int) :: nhwc
  end type pia_regdata

  !> pia_actdata_t
  type, bind(C), public :: pia_actdata
    integer(c_long_long) :: ncalls, nbytes
    real(c_double) :: tsum, tmin, tmax
  end type pia_actdata

  !> pia_partnerdata_t
  type, bind(C), public :: pia_partnerdata
    integer(c_long_long) :: nbytes, nmsgs, rbytes, rmsgs
  end type pia_partnerdata

  ! ---- direct bindings (no string arguments) --------------------------------
  public :: pia_region_count, pia_region_data
  public :: pia_activity_count, pia_actdata_init, pia_activity_data
  public :: pia_region_current, pia_region_parent, pia_region_child
  public :: pia_region_next, pia_region_activity_data, pia_partner_data
  public :: pia_partner_volumes
  public :: pia_interval_create, pia_interval_destroy, pia_interval_track_region
  public :: pia_interval_track_activity, pia_interval_mark
  public :: pia_interval_region_data, pia_interval_activity_data
  ! ---- wrappers (strings) ---------------------------------------------------
  public :: pia_region_find, pia_activity_find
  public :: pia_region_find_child, pia_region_find_by_path
  public :: pia_region_name, pia_activity_name, ballast_strerror
  public :: mon_region_begin, mon_region_end
  public :: rta_task_find, rta_task_begin, rta_task_end
  public :: ballast_mpi_init, ballast_mpi_finalize

  interface
    integer(c_int) function pia_region_count() bind(C, name="pia_region_count")
      import :: c_int
    end function
    integer(c_int) function pia_region_data(id, data) bind(C, name="pia_region_data")
      import :: c_int, pia_regdata
      integer(c_int), value :: id
      type(pia_regdata), intent(out) :: data
    end function
    integer(c_int) function pia_activity_count() bind(C, name="pia_activity_count")
      import :: c_int
    end function
    subroutine pia_actdata_init(data) bind(C, name="pia_actdata_init")
      import :: pia_actdata
      type(pia_actdata), intent(inout) :: data
    end subroutine
    integer(c_int) function pia_activity_data(act, data) bind(C, name="pia_activity_data")
      import :: c_int, pia_actdata
      integer(c_int), value :: act
      type(pia_actdata), intent(inout) :: data
    end function
    integer(c_int) function pia_region_current() bind(C, name="pia_region_current")
      import :: c_int
    end function
    integer(c_int) function pia_region_parent(id) bind(C, name="pia_region_parent")
      import :: c_int
      integer(c_int), value :: id
    end function
    integer(c_int) function pia_region_child(id) bind(C, name="pia_region_child")
      import :: c_int
      integer(c_int), value :: id
    end function
    integer(c_int) function pia_region_next(id) bind(C, name="pia_region_next")
      import :: c_int
      integer(c_int), value :: id
    end function
    integer(c_int) function pia_region_activity_data(region, act, data) &
        bind(C, name="pia_region_activity_data")
      import :: c_int, pia_actdata
      integer(c_int), value :: region, act
      type(pia_actdata), intent(inout) :: data
    end function
    integer(c_int) function pia_partner_data(peer, region, out) &
        bind(C, name="pia_partner_data")
      import :: c_int, pia_partnerdata
      integer(c_int), value :: peer, region
      type(pia_partnerdata), intent(out) :: out
    end function
    integer(c_int) function pia_partner_volumes(n, region, out) &
        bind(C, name="pia_partner_volumes")
      import :: c_int, pia_partnerdata
      integer(c_int), value :: n, region
      type(pia_partnerdata), intent(out) :: out(*)
    end function
    integer(c_int) function pia_interval_create(iv) bind(C, name="pia_interval_create")
      import :: c_int, c_ptr
      type(c_ptr), intent(out) :: iv
    end function
    subroutine pia_interval_destroy(iv) bind(C, name="pia_interval_destroy")
      import :: c_ptr
      type(c_ptr), value :: iv
    end subroutine
    integer(c_int) function pia_interval_track_region(iv, id) &
        bind(C, name="pia_interval_track_region")
      import :: c_int, c_ptr
      type(c_ptr), value :: iv
      integer(c_int), value :: id
    end function
    integer(c_int) function pia_interval_track_activity(iv, act) &
        bind(C, name="pia_interval_track_activity")
      import :: c_int, c_ptr
      type(c_ptr), value :: iv
      integer(c_int), value :: act
    end function
    integer(c_int) function pia_interval_mark(iv) bind(C, name="pia_interval_mark")
      import :: c_int, c_ptr
      type(c_ptr), value :: iv
    end function
    integer(c_int) function pia_interval_region_data(iv, id, out) &
        bind(C, name="pia_interval_region_data")
      import :: c_int, c_ptr, pia_regdata
      type(c_ptr), value :: iv
      integer(c_int), value :: id
      type(pia_regdata), intent(out) :: out
    end function
    integer(c_int) function pia_interval_activity_data(iv, act, out) &
        bind(C, name="pia_interval_activity_data")
      import :: c_int, c_ptr, pia_actdata
      type(c_ptr), value :: iv
      integer(c_int), value :: act
      type(pia_actdata), intent(out) :: out
    end function

    ! C functions with string arguments, wrapped below.
    integer(c_int) function c_region_find(name) bind(C, name="pia_region_find")
      import :: c_int, c_char
      character(kind=c_char), intent(in) :: name(*)
    end function
    integer(c_int) function c_find_child_region(parent, name) bind(C, name="pia_region_find_child")
      import :: c_int, c_char
      integer(c_int), value :: parent
      character(kind=c_char), intent(in) :: name(*)
    end function
    integer(c_int) function c_find_region_by_path(path) bind(C, name="pia_region_find_by_path")
      import :: c_int, c_char
      character(kind=c_char), intent(in) :: path(*)
    end function
    integer(c_int) function c_activity_find(name) bind(C, name="pia_activity_find")
      import :: c_int, c_char
      character(kind=c_char), intent(in) :: name(*)
    end function
    type(c_ptr) function c_activity_name(act) bind(C, name="pia_activity_name")
      import :: c_int, c_ptr
      integer(c_int), value :: act
    end function
    type(c_ptr) function c_strerror(err) bind(C, name="ballast_strerror")
      import :: c_int, c_ptr
      integer(c_int), value :: err
    end function
    integer(c_int) function c_region_begin(name) bind(C, name="mon_region_begin")
      import :: c_int, c_char
      character(kind=c_char), intent(in) :: name(*)
    end function
    integer(c_int) function c_region_end(name) bind(C, name="mon_region_end")
      import :: c_int, c_char
      character(kind=c_char), intent(in) :: name(*)
    end function
    integer(c_int) function c_task_find(key, task) bind(C, name="rta_task_find")
      import :: c_int, c_char, c_ptr
      character(kind=c_char), intent(in) :: key(*)
      type(c_ptr), intent(out) :: task
    end function
    integer(c_int) function rta_task_begin(task) bind(C, name="rta_task_begin")
      import :: c_int, c_ptr
      type(c_ptr), value :: task
    end function
    integer(c_int) function rta_task_end(task) bind(C, name="rta_task_end")
      import :: c_int, c_ptr
      type(c_ptr), value :: task
    end function
    integer(c_int) function c_mpi_init(argc, argv) bind(C, name="MPI_Init")
      import :: c_int, c_ptr
      type(c_ptr), value :: argc, argv
    end function
    integer(c_int) function c_mpi_finalize() bind(C, name="MPI_Finalize")
      import :: c_int
    end function
    integer(c_size_t) function c_strlen(s) bind(C, name="strlen")
      import :: c_size_t, c_ptr
      type(c_ptr), value :: s
    end function
  end interface

contains

  !> A Fortran string as a NUL-terminated C string (trailing blanks trimmed).
  pure function c_str(s) result(c)
    character(len=*), intent(in) :: s
    character(kind=c_char, len=len_trim(s) + 1) :: c
    c = trim(s) // c_null_char
  end function c_str

  !> A C string (owned by ballast) copied into a Fortran string; '' for NULL.
  function f_str(p) result(s)
    type(c_ptr), intent(in) :: p
    character(len=:), allocatable :: s
    character(kind=c_char), pointer :: chars(:)
    integer :: i, n
    if (.not. c_associated(p)) then
      s = ''
      return
    end if
    n = int(c_strlen(p))
    call c_f_pointer(p, chars, [n])
    allocate(character(len=n) :: s)
    do i = 1, n
      s(i:i) = chars(i)
    end do
  end function f_str

  !> pia_region_find: the first region created with that name.
  integer(c_int) function pia_region_find(name)
    character(len=*), intent(in) :: name
    pia_region_find = c_region_find(c_str(name))
  end function

  !> pia_region_find_child: the child of parent called name.
  integer(c_int) function pia_region_find_child(parent, name)
    integer(c_int), intent(in) :: parent
    character(len=*), intent(in) :: name
    pia_region_find_child = c_find_child_region(parent, c_str(name))
  end function

  !> pia_region_find_by_path: one exact region, e.g. "solve/sweep".
  integer(c_int) function pia_region_find_by_path(path)
    character(len=*), intent(in) :: path
    pia_region_find_by_path = c_find_region_by_path(c_str(path))
  end function

  !> pia_activity_find: "MPI_Send", or a group such as PIA_GROUP_P2P.
  integer(c_int) function pia_activity_find(name)
    character(len=*), intent(in) :: name
    pia_activity_find = c_activity_find(c_str(name))
  end function

  !> The name in a region record, as a Fortran string.
  function pia_region_name(data) result(s)
    type(pia_regdata), intent(in) :: data
    character(len=:), allocatable :: s
    s = f_str(data%name)
  end function

  !> The name of an activity ('' for a bad id).
  function pia_activity_name(act) result(s)
    integer(c_int), intent(in) :: act
    character(len=:), allocatable :: s
    s = f_str(c_activity_name(act))
  end function

  !> The message of a ballast error code.
  function ballast_strerror(err) result(s)
    integer(c_int), intent(in) :: err
    character(len=:), allocatable :: s
    s = f_str(c_strerror(err))
  end function

  !> mon_region_begin: enter the named region.
  integer(c_int) function mon_region_begin(name)
    character(len=*), intent(in) :: name
    mon_region_begin = c_region_begin(c_str(name))
  end function

  !> mon_region_end: leave the named region.
  integer(c_int) function mon_region_end(name)
    character(len=*), intent(in) :: name
    mon_region_end = c_region_end(c_str(name))
  end function

  !> rta_task_find: the handle of the task with this key (c_null_ptr and a
  !> negative code when there is none).
  integer(c_int) function rta_task_find(key, task)
    character(len=*), intent(in) :: key
    type(c_ptr), intent(out) :: task
    rta_task_find = c_task_find(c_str(key), task)
  end function

  !> Start MPI through ballast's C MPI_Init wrapper (see the module comment).
  subroutine ballast_mpi_init(ierr)
    integer, intent(out) :: ierr
    ierr = int(c_mpi_init(c_null_ptr, c_null_ptr))
  end subroutine

  !> Stop MPI through ballast's C MPI_Finalize wrapper (report, profile).
  subroutine ballast_mpi_finalize(ierr)
    integer, intent(out) :: ierr
    ierr = int(c_mpi_finalize())
  end subroutine

end module ballast
