! The Fortran twin of sem_topo.c (built three ways: include 'mpif.h',
! use mpi, use mpi_f08 with -DSTYLE_MPI / -DSTYLE_F08): the same topology
! constructors with reorder = .true., the same result lines, which
! check_same.py compares with the C program's. C and Fortran behave alike:
! the Cartesian and graph constructors get ballast's mapping from both
! (SEM_EXPECT_REORDER=1: 2 ring links between nodes instead of 8), the
! distributed graphs keep every process's declared neighbourhood.
program sem_topo
#if defined(STYLE_F08)
  use mpi_f08
  implicit none
  type(MPI_Comm) :: c
  type(MPI_Group) :: world
#elif defined(STYLE_MPI)
  use mpi
  implicit none
  integer :: c, world
#else
  implicit none
  include 'mpif.h'
  integer :: c, world
#endif
  integer :: ierr, me, n, v, src, dst, expect, u, st, i, x, a, b
  integer :: d1(1), d2(2), co(2), s2(2), t2(2), got(2), index(8), edges(16), nb(2)
  integer :: in(2), inw(2), out(2), outw(2), gi(2), giw(2), go(2), gow(2)
  integer :: indeg, outdeg, node(1), deg(1), tg(2)
  logical :: p1(1), p2(2), wt
  character(len=512) :: base, path

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, me, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, n, ierr)
  if (n /= 8) call fail('8 ranks needed')
  call MPI_Comm_group(MPI_COMM_WORLD, world, ierr)
  expect = 8
  call get_environment_variable('SEM_EXPECT_REORDER', base, status=st)
  if (st == 0 .and. trim(base) == '1') expect = 2
  u = 6
  call get_environment_variable('SEM_OUT', base, status=st)
  if (st == 0 .and. len_trim(base) > 0) then
    write(path, '(a,a,i0)') trim(base), '.', me
    open(newunit=u, file=trim(path), position='append', action='write')
  end if

  ! 1-D periodic ring
  d1(1) = 8
  p1(1) = .true.
  call MPI_Cart_create(MPI_COMM_WORLD, 1, d1, p1, .true., c, ierr)
  if (ierr /= MPI_SUCCESS) call fail('MPI_Cart_create')
  call MPI_Comm_rank(c, v, ierr)
  call MPI_Cart_shift(c, 0, 1, src, dst, ierr)
  call MPI_Neighbor_allgather(v, 1, MPI_INTEGER, got, 1, MPI_INTEGER, c, ierr)
  if (got(1) /= src .or. got(2) /= dst) call fail('cart1 neighbour allgather')
  if (crossings(c) /= expect) call fail('cart1 links between nodes')
  write(u, '(a,i0,a,i0,1x,i0)') 'SEM ', v, ' cart1 ', src, dst
  call MPI_Comm_free(c, ierr)

  ! 2 x 4, periodic in the second dimension
  d2 = (/ 2, 4 /)
  p2 = (/ .false., .true. /)
  call MPI_Cart_create(MPI_COMM_WORLD, 2, d2, p2, .true., c, ierr)
  call MPI_Comm_rank(c, v, ierr)
  call MPI_Cart_coords(c, v, 2, co, ierr)
  call MPI_Cart_shift(c, 0, 1, s2(1), t2(1), ierr)
  call MPI_Cart_shift(c, 1, 1, s2(2), t2(2), ierr)
  write(u, '(a,i0,a,i0,5(1x,i0))') 'SEM ', v, ' cart2 ', co(1), co(2), s2(1), t2(1), &
       s2(2), t2(2)
  call MPI_Comm_free(c, ierr)

  ! graph: the ring
  do i = 0, 7
    index(i + 1) = 2 * (i + 1)
    edges(2 * i + 1) = mod(i + 7, 8)
    edges(2 * i + 2) = mod(i + 1, 8)
  end do
  call MPI_Graph_create(MPI_COMM_WORLD, 8, index, edges, .true., c, ierr)
  if (ierr /= MPI_SUCCESS) call fail('MPI_Graph_create')
  call MPI_Comm_rank(c, v, ierr)
  call MPI_Graph_neighbors(c, v, 2, nb, ierr)
  if (crossings(c) /= expect) call fail('graph links between nodes')
  write(u, '(a,i0,a,i0,1x,i0)') 'SEM ', v, ' graph ', nb(1), nb(2)
  call MPI_Comm_free(c, ierr)

  ! distributed, adjacent, weighted: each process its own ring neighbours
  in = (/ mod(me + 7, 8), mod(me + 1, 8) /)
  inw = (/ 100 + me, 200 + me /)
  out = (/ mod(me + 1, 8), mod(me + 7, 8) /)
  outw = (/ 300 + me, 400 + me /)
  call MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, in, inw, 2, out, outw, &
       MPI_INFO_NULL, .true., c, ierr)
  if (ierr /= MPI_SUCCESS) call fail('MPI_Dist_graph_create_adjacent')
  call MPI_Dist_graph_neighbors_count(c, indeg, outdeg, wt, ierr)
  if (indeg /= 2 .or. outdeg /= 2 .or. .not. wt) call fail('distadj counts')
  call MPI_Dist_graph_neighbors(c, 2, gi, giw, 2, go, gow, ierr)
  do i = 1, 2
    gi(i) = old_of(c, gi(i))
    go(i) = old_of(c, go(i))
    if (gi(i) /= in(i) .or. giw(i) /= inw(i) .or. go(i) /= out(i) .or. gow(i) /= outw(i)) &
         call fail('distadj lists')
  end do
  write(u, '(a,i0,a,i0,a,i0,1x,i0,a,i0,a,i0,a,i0,1x,i0,a,i0)') 'SEM ', me, ' distadj ', &
       gi(1), ':', giw(1), gi(2), ':', giw(2), ' / ', go(1), ':', gow(1), go(2), ':', gow(2)
  call MPI_Comm_free(c, ierr)

  ! distributed, general: each process the out-arcs of the next one
  node(1) = mod(me + 1, 8)
  deg(1) = 2
  tg = (/ mod(node(1) + 1, 8), mod(node(1) + 7, 8) /)
  call MPI_Dist_graph_create(MPI_COMM_WORLD, 1, node, deg, tg, MPI_UNWEIGHTED, &
       MPI_INFO_NULL, .true., c, ierr)
  if (ierr /= MPI_SUCCESS) call fail('MPI_Dist_graph_create')
  call MPI_Dist_graph_neighbors_count(c, indeg, outdeg, wt, ierr)
  if (indeg /= 2 .or. outdeg /= 2 .or. wt) call fail('distgen counts')
  call MPI_Dist_graph_neighbors(c, 2, gi, MPI_UNWEIGHTED, 2, go, MPI_UNWEIGHTED, ierr)
  do i = 1, 2
    gi(i) = old_of(c, gi(i))
    go(i) = old_of(c, go(i))
  end do
  if (gi(1) > gi(2)) then
    x = gi(1); gi(1) = gi(2); gi(2) = x
  end if
  if (go(1) > go(2)) then
    x = go(1); go(1) = go(2); go(2) = x
  end if
  a = min(mod(me + 1, 8), mod(me + 7, 8))
  b = max(mod(me + 1, 8), mod(me + 7, 8))
  if (gi(1) /= a .or. gi(2) /= b .or. go(1) /= a .or. go(2) /= b) call fail('distgen lists')
  write(u, '(a,i0,a,i0,1x,i0,a,i0,1x,i0)') 'SEM ', me, ' distgen ', gi(1), gi(2), ' / ', &
       go(1), go(2)
  call MPI_Comm_free(c, ierr)

  if (u /= 6) close(u)
  call MPI_Group_free(world, ierr)
  if (me == 0) print '(a)', 'PASS sem_topo'
  call MPI_Finalize(ierr)

contains

  integer function old_of(comm, r)
#if defined(STYLE_F08)
    type(MPI_Comm), intent(in) :: comm
    type(MPI_Group) :: g
#else
    integer, intent(in) :: comm
    integer :: g
#endif
    integer, intent(in) :: r
    integer :: rr(1), oo(1), e
    rr(1) = r
    call MPI_Comm_group(comm, g, e)
    call MPI_Group_translate_ranks(g, 1, rr, world, oo, e)
    call MPI_Group_free(g, e)
    old_of = oo(1)
  end function old_of

  integer function crossings(comm)
#if defined(STYLE_F08)
    type(MPI_Comm), intent(in) :: comm
#else
    integer, intent(in) :: comm
#endif
    integer :: vv, k, all, e
    call MPI_Comm_rank(comm, vv, e)
    k = 0
    if (mod(old_of(comm, vv), 2) /= mod(old_of(comm, mod(vv + 1, 8)), 2)) k = 1
    call MPI_Allreduce(k, all, 1, MPI_INTEGER, MPI_SUM, comm, e)
    crossings = all
  end function crossings

  subroutine fail(what)
    character(len=*), intent(in) :: what
    integer :: e
    print '(a,i0,a,a)', 'FAIL sem_topo [rank ', me, ']: ', what
    call MPI_Abort(MPI_COMM_WORLD, 1, e)
  end subroutine fail
end program sem_topo
