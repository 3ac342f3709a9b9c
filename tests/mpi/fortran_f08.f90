! A Fortran 2008 MPI program (use mpi_f08) whose calls must reach the shim: MPI_Init_thread,
! MPI_Allgather, MPI_Allgatherv, MPI_Alltoallv, MPI_Gatherv and MPI_Scatterv, with MPI_IN_PLACE, irregular and zero counts and
! reversed displacements, checked against values computed here. Prints "fortran_f08: N checks passed, M failed".
program fortran_f08
  use mpi_f08
  implicit none
  integer :: rank, p, j, k, n, total, checks, failures, counts(2), provided
  integer :: sendv(2)
  integer, allocatable :: ivalues(:), recv(:), rcounts(:), displs(:), scounts(:), sdispls(:)
  type(MPI_Comm) :: comm

  checks = 0
  failures = 0
  ! MPI_Init_thread rather than MPI_Init: mpif.h and `use mpi` programs test the other.
  call MPI_Init_thread(MPI_THREAD_FUNNELED, provided)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, p)
  call MPI_Comm_dup(MPI_COMM_WORLD, comm)
  call check(provided >= MPI_THREAD_SINGLE .and. provided <= MPI_THREAD_MULTIPLE, 'MPI_Init_thread provided')

  ! MPI_Allgather, then again in place.
  allocate(recv(2 * p))
  sendv = [10 * rank + 1, 10 * rank + 2]
  do n = 1, 2
    recv = -1
    if (n == 1) then
      call MPI_Allgather(sendv, 2, MPI_INTEGER, recv, 2, MPI_INTEGER, comm)
    else
      recv(2 * rank + 1 : 2 * rank + 2) = sendv
      call MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv, 2, MPI_INTEGER, comm)
    end if
    do j = 0, p - 1
      call check(recv(2 * j + 1) == 10 * j + 1 .and. recv(2 * j + 2) == 10 * j + 2, 'MPI_Allgather value')
    end do
  end do
  deallocate(recv)

  ! MPI_Allgatherv in place: counts 1, 2, 0, ...; blocks in reverse rank order, a one-element
  ! gap after each.
  allocate(rcounts(0:p - 1), displs(0:p - 1))
  call gapped_layout(rcounts, displs, total)
  allocate(recv(total))
  recv = -1
  do k = 1, rcounts(rank)
    recv(displs(rank) + k) = 1000 * rank + k
  end do
  call MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv, rcounts, displs, MPI_INTEGER, MPI_COMM_WORLD)
  call check_gapped(recv, rcounts, displs, 'MPI_Allgatherv')
  deallocate(recv)

  ! MPI_Alltoallv: rank a sends mod(a + 2b, 4) elements to rank b, element k being 10000a + 100b + k.
  allocate(scounts(0:p - 1), sdispls(0:p - 1))
  call alltoallv_layout(scounts, sdispls, ivalues, rcounts, displs, recv)
  call MPI_Alltoallv(ivalues, scounts, sdispls, MPI_INTEGER, recv, rcounts, displs, MPI_INTEGER, MPI_COMM_WORLD)
  call check_alltoallv(recv, rcounts, displs, 'MPI_Alltoallv value')
  deallocate(ivalues, recv)

  ! MPI_Gatherv to the last rank: counts 1, 2, 0, 1, ...; blocks in reverse rank order with an unused
  ! element after each, which must stay untouched. Then MPI_Scatterv of that layout from rank 0 with
  ! MPI_IN_PLACE there (rank 0's block stays in the send buffer; its receive arguments are ignored).
  call gapped_layout(rcounts, displs, total)
  allocate(ivalues(3), recv(total))
  do k = 1, rcounts(rank)
    ivalues(k) = 1000 * rank + k
  end do
  recv = -1
  call MPI_Gatherv(ivalues, rcounts(rank), MPI_INTEGER, recv, rcounts, displs, MPI_INTEGER, p - 1, MPI_COMM_WORLD)
  if (rank == p - 1) then
    call check_gapped(recv, rcounts, displs, 'MPI_Gatherv')
  end if
  ivalues = -1
  if (rank == 0) then
    do j = 0, p - 1
      do k = 1, rcounts(j)
        recv(displs(j) + k) = 2000 * j + k
      end do
    end do
    call MPI_Scatterv(recv, rcounts, displs, MPI_INTEGER, MPI_IN_PLACE, -7, MPI_DATATYPE_NULL, 0, MPI_COMM_WORLD)
  else
    call MPI_Scatterv(recv, rcounts, displs, MPI_INTEGER, ivalues, rcounts(rank), MPI_INTEGER, 0, MPI_COMM_WORLD)
  end if
  if (rank /= 0) then
    call check(ivalues(rcounts(rank) + 1) == -1, 'MPI_Scatterv beyond the block untouched')
    do k = 1, rcounts(rank)
      call check(ivalues(k) == 2000 * rank + k, 'MPI_Scatterv value')
    end do
  end if
  deallocate(ivalues, recv)

  call MPI_Comm_free(comm)
  ! A main program's allocatables live to the end: freed here so LeakSanitizer sees no leak.
  deallocate(rcounts, displs, scounts, sdispls)
  counts = [checks, failures]
  call MPI_Allreduce(MPI_IN_PLACE, counts, 2, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (rank == 0) print '("fortran_f08: ", i0, " checks passed, ", i0, " failed")', counts(1) - counts(2), counts(2)
  call MPI_Finalize()
  if (counts(2) /= 0) stop 1

contains

  include 'fortran_checks.inc'
end program fortran_f08
