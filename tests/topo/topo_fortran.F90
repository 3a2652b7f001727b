! MPI_Cart_create with reorder = .true. from Fortran (use mpi, or use mpi_f08
! with -DSTYLE_F08) gets ballast's mapping: 8 ranks that BALLAST_HW_LAYOUT
! spreads round-robin over 2 nodes (node of world rank r = mod(r, 2)); a
! periodic ring of 8 has all 8 links between nodes in MPI's order, 2 in
! ballast's. Argument "on": expect 2; "off" (BALLAST_REORDER=off): expect 8.
program topo_fortran
#ifdef STYLE_F08
  use mpi_f08
  implicit none
  type(MPI_Comm) :: cart
  type(MPI_Group) :: g, w
#else
  use mpi
  implicit none
  integer :: cart, g, w
#endif
  integer :: ierr, me, src, dst, cross, total, expect
  integer :: dims(1), r(2), wr(2)
  logical :: periods(1)
  character(len=8) :: arg

  call MPI_Init(ierr)
  call get_command_argument(1, arg)
  expect = 8
  if (trim(arg) == 'on') expect = 2
  dims(1) = 8
  periods(1) = .true.
  call MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, .true., cart, ierr)
  if (ierr /= MPI_SUCCESS) call fail('MPI_Cart_create failed')
  call MPI_Comm_rank(cart, me, ierr)
  call MPI_Cart_shift(cart, 0, 1, src, dst, ierr)
  if (dst /= mod(me + 1, 8) .or. src /= mod(me + 7, 8)) call fail('MPI_Cart_shift')
  call MPI_Comm_group(cart, g, ierr)
  call MPI_Comm_group(MPI_COMM_WORLD, w, ierr)
  r(1) = me
  r(2) = dst
  call MPI_Group_translate_ranks(g, 2, r, w, wr, ierr)
  cross = 0
  if (mod(wr(1), 2) /= mod(wr(2), 2)) cross = 1
  call MPI_Allreduce(cross, total, 1, MPI_INTEGER, MPI_SUM, cart, ierr)
  if (total /= expect) then
    print '(a,i0,a,i0)', 'ring links between nodes: ', total, ', expected ', expect
    call fail('reordering')
  end if
  call MPI_Group_free(g, ierr)
  call MPI_Group_free(w, ierr)
  call MPI_Comm_free(cart, ierr)
  if (me == 0) print '(a)', 'PASS topo_fortran'
  call MPI_Finalize(ierr)

contains

  subroutine fail(what)
    character(len=*), intent(in) :: what
    integer :: e
    print '(a,a)', 'FAIL topo_fortran: ', what
    call MPI_Abort(MPI_COMM_WORLD, 1, e)
  end subroutine fail
end program topo_fortran
