! A Fortran 2008 MPI program (use mpi_f08) whose nonblocking and persistent requests must complete
! through the shim's completion calls: the calls and checks of fortran_requests.inc in mpi_f08's
! types, some with ierror and some without (an absent ierror reaches the library as a null pointer).
! Preprocessed: COLLSHIM_MPIX_PERSISTENT (Open MPI 4.1) calls the persistent collective
! MPIX_Allgather_init (mpi_f08_ext), not MPI-4's MPI_Allgather_init. Prints "fortran_requests_f08: N
! checks passed, M failed".
program fortran_requests_f08
  use mpi_f08
#if COLLSHIM_MPIX_PERSISTENT
  use mpi_f08_ext  ! MPIX_Allgather_init
#define PERSISTENT_ALLGATHER MPIX_ALLGATHER_INIT
#else
#define PERSISTENT_ALLGATHER MPI_ALLGATHER_INIT
#endif
  implicit none
  character(len=*), parameter :: program_name = 'fortran_requests_f08'
  integer :: ierr, rank, p, left, right, j, n, idx, outcount, checks, failures, counts(2)
  integer :: seen(4), indices(4)
  type(MPI_Comm) :: comm
  type(MPI_Request) :: reqs(4), preqs(2)
  type(MPI_Status) :: status, statuses(4)
  integer, asynchronous :: token, token_in, vec(5), sums(5)
  integer, allocatable, asynchronous :: avals(:), arecv(:)
  ! Volatile: a persistent request's buffers are not arguments of MPI_START and MPI_WAIT, so the
  ! compiler could otherwise move the stores of new data past the one or the loads of the result
  ! before the other (MPI_F_SYNC_REG would do, but MPICH 4.0's mpif.h one takes an ierror too).
  integer, volatile :: sendv(2)
  integer, allocatable, volatile :: gath(:)
  integer, allocatable :: scounts(:), sdispls(:), rcounts(:), rdispls(:)
  logical :: flag

  checks = 0
  failures = 0
  call MPI_Init()
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, p, ierr)
  call MPI_COMM_DUP(MPI_COMM_WORLD, comm, ierr)
  left = mod(rank - 1 + p, p)
  right = mod(rank + 1, p)
  allocate(gath(2 * p))

  ! MPI_IALLTOALLV's layout: rank a sends mod(a + 2b, 4) elements (zero included) to rank b, element
  ! k being 10000a + 100b + k; packed in rank order on the send side, in reverse on the receive side.
  allocate(scounts(0:p - 1), sdispls(0:p - 1), rcounts(0:p - 1), rdispls(0:p - 1))
  call alltoallv_layout(scounts, sdispls, avals, rcounts, rdispls, arecv)

  ! MPI_WAIT with a status.
  call start_iallgather(1, reqs(1))
  ierr = MPI_SUCCESS
  call MPI_Wait(reqs(1), status)
  call check(reqs(1) == MPI_REQUEST_NULL, 'MPI_WAIT request null')
  call check_allgather(1, 'MPI_WAIT MPI_IALLGATHER value')

  ! MPI_WAITALL on a collective, a receive, a send and MPI_REQUEST_NULL.
  call start_iallreduce(reqs(1))
  token_in = -1
  token = 3 * rank + 1
  call MPI_IRECV(token_in, 1, MPI_INTEGER, left, 7, comm, reqs(2), ierr)
  call MPI_ISEND(token, 1, MPI_INTEGER, right, 7, comm, reqs(3), ierr)
  reqs(4) = MPI_REQUEST_NULL
  statuses(:)%MPI_SOURCE = -1
  call MPI_WAITALL(4, reqs, statuses, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_WAITALL ierr')
  do j = 1, 4
    call check(reqs(j) == MPI_REQUEST_NULL, 'MPI_WAITALL request null')
  end do
  call check_iallreduce('MPI_WAITALL MPI_IALLREDUCE value')
  call check(token_in == 3 * left + 1, 'MPI_WAITALL MPI_IRECV value')
  call check(statuses(2)%MPI_SOURCE == left .and. statuses(2)%MPI_TAG == 7, 'MPI_WAITALL receive status')

  ! MPI_WAITANY until MPI_UNDEFINED over a collective, MPI_REQUEST_NULL and another collective.
  call start_ialltoallv(reqs(1))
  reqs(2) = MPI_REQUEST_NULL
  call start_iallgather(2, reqs(3))
  seen = 0
  do n = 1, 4
    idx = -1
    call MPI_WAITANY(3, reqs, idx, status, ierr)
    call check(ierr == MPI_SUCCESS, 'MPI_WAITANY ierr')
    if (undefined_index(idx)) exit
    call check(idx >= 1 .and. idx <= 3, 'MPI_WAITANY 1-based index')
    if (idx < 1 .or. idx > 3) exit
    seen(idx) = seen(idx) + 1
    call check(reqs(idx) == MPI_REQUEST_NULL, 'MPI_WAITANY request null')
  end do
  call check(n == 3 .and. seen(1) == 1 .and. seen(2) == 0 .and. seen(3) == 1, 'MPI_WAITANY each index once, then MPI_UNDEFINED')
  call check_alltoallv(arecv, rcounts, rdispls, 'MPI_WAITANY MPI_IALLTOALLV value')
  call check_allgather(2, 'MPI_WAITANY MPI_IALLGATHER value')

  ! MPI_TESTALL in a loop, statuses ignored.
  call start_iallgather(3, reqs(1))
  call start_iallreduce(reqs(2))
  flag = .false.
  do while (.not. flag)
    call MPI_TESTALL(2, reqs, flag, MPI_STATUSES_IGNORE, ierr)
    if (ierr /= MPI_SUCCESS) exit
  end do
  call check(ierr == MPI_SUCCESS, 'MPI_TESTALL ierr')
  call check(reqs(1) == MPI_REQUEST_NULL .and. reqs(2) == MPI_REQUEST_NULL, 'MPI_TESTALL requests null')
  call check_allgather(3, 'MPI_TESTALL MPI_IALLGATHER value')
  call check_iallreduce('MPI_TESTALL MPI_IALLREDUCE value')

  ! MPI_TESTSOME until MPI_UNDEFINED over a collective, a receive and a send.
  call start_ialltoallv(reqs(1))
  token_in = -1
  token = 5 * rank + 2
  call MPI_IRECV(token_in, 1, MPI_INTEGER, right, 9, comm, reqs(2), ierr)
  call MPI_ISEND(token, 1, MPI_INTEGER, left, 9, comm, reqs(3), ierr)
  seen = 0
  outcount = 0
  do while (outcount /= MPI_UNDEFINED)
    statuses(:)%MPI_SOURCE = -1
    call MPI_TESTSOME(3, reqs, outcount, indices, statuses, ierr)
    if (ierr /= MPI_SUCCESS) exit
    do j = 1, max(0, outcount)
      idx = indices(j)
      call check(idx >= 1 .and. idx <= 3, 'MPI_TESTSOME 1-based index')
      if (idx < 1 .or. idx > 3) cycle
      seen(idx) = seen(idx) + 1
      call check(reqs(idx) == MPI_REQUEST_NULL, 'MPI_TESTSOME request null')
      if (idx == 2) call check(statuses(j)%MPI_SOURCE == right .and. statuses(j)%MPI_TAG == 9, 'MPI_TESTSOME status')
    end do
  end do
  call check(ierr == MPI_SUCCESS, 'MPI_TESTSOME ierr')
  call check(seen(1) == 1 .and. seen(2) == 1 .and. seen(3) == 1, 'MPI_TESTSOME each index once')
  call check_alltoallv(arecv, rcounts, rdispls, 'MPI_TESTSOME MPI_IALLTOALLV value')
  call check(token_in == 5 * right + 2, 'MPI_TESTSOME MPI_IRECV value')

  ! MPI_TEST in a loop, status ignored.
  call start_iallgather(4, reqs(1))
  flag = .false.
  ierr = MPI_SUCCESS
  do while (.not. flag)
    call MPI_Test(reqs(1), flag, MPI_STATUS_IGNORE)
  end do
  call check(ierr == MPI_SUCCESS .and. reqs(1) == MPI_REQUEST_NULL, 'MPI_TEST request null')
  call check_allgather(4, 'MPI_TEST MPI_IALLGATHER value')

  ! MPI_REQUEST_GET_STATUS leaves the request to MPI_WAIT.
  call start_iallreduce(reqs(1))
  flag = .false.
  do while (.not. flag)
    call MPI_REQUEST_GET_STATUS(reqs(1), flag, status, ierr)
    if (ierr /= MPI_SUCCESS) exit
  end do
  call check(ierr == MPI_SUCCESS .and. reqs(1) /= MPI_REQUEST_NULL, 'MPI_REQUEST_GET_STATUS request kept')
  call MPI_WAIT(reqs(1), MPI_STATUS_IGNORE, ierr)
  call check(ierr == MPI_SUCCESS .and. reqs(1) == MPI_REQUEST_NULL, 'MPI_WAIT after MPI_REQUEST_GET_STATUS')
  call check_iallreduce('MPI_REQUEST_GET_STATUS MPI_IALLREDUCE value')

  ! MPI_TESTANY in a loop over MPI_REQUEST_NULL and a collective.
  reqs(1) = MPI_REQUEST_NULL
  call start_ialltoallv(reqs(2))
  flag = .false.
  idx = -1
  do while (.not. flag)
    call MPI_TESTANY(2, reqs, idx, flag, status, ierr)
    if (ierr /= MPI_SUCCESS) exit
  end do
  call check(ierr == MPI_SUCCESS .and. idx == 2 .and. reqs(2) == MPI_REQUEST_NULL, 'MPI_TESTANY index 2, request null')
  call MPI_TESTANY(2, reqs, idx, flag, status, ierr)
  call check(ierr == MPI_SUCCESS .and. flag .and. undefined_index(idx), 'MPI_TESTANY on null requests: MPI_UNDEFINED')
  call check_alltoallv(arecv, rcounts, rdispls, 'MPI_TESTANY MPI_IALLTOALLV value')

  ! MPI_WAITSOME over a receive and a send, statuses ignored.
  token_in = -1
  token = 7 * rank + 3
  call MPI_IRECV(token_in, 1, MPI_INTEGER, left, 13, comm, reqs(1), ierr)
  call MPI_ISEND(token, 1, MPI_INTEGER, right, 13, comm, reqs(2), ierr)
  seen = 0
  do n = 1, 3
    call MPI_WAITSOME(2, reqs, outcount, indices, MPI_STATUSES_IGNORE, ierr)
    if (ierr /= MPI_SUCCESS .or. outcount == MPI_UNDEFINED) exit
    do j = 1, outcount
      if (indices(j) >= 1 .and. indices(j) <= 2) seen(indices(j)) = seen(indices(j)) + 1
    end do
  end do
  call check(ierr == MPI_SUCCESS .and. outcount == MPI_UNDEFINED, 'MPI_WAITSOME ends with MPI_UNDEFINED')
  call check(seen(1) == 1 .and. seen(2) == 1 .and. reqs(1) == MPI_REQUEST_NULL .and. reqs(2) == MPI_REQUEST_NULL, &
             'MPI_WAITSOME each index once, requests null')
  call check(token_in == 7 * left + 3, 'MPI_WAITSOME MPI_IRECV value')
  ! Fortran's MPI_STATUS(ES)_IGNORE are the library's variables: a wrapper that took them for
  ! statuses would write the receive's tag there.
  call check(MPI_STATUSES_IGNORE(1)%MPI_TAG /= 13, 'MPI_WAITSOME left MPI_STATUSES_IGNORE alone')
  token_in = -1
  call MPI_IRECV(token_in, 1, MPI_INTEGER, right, 15, comm, reqs(1), ierr)
  call MPI_ISEND(token, 1, MPI_INTEGER, left, 15, comm, reqs(2), ierr)
  call MPI_WAIT(reqs(1), MPI_STATUS_IGNORE, ierr)
  call check(ierr == MPI_SUCCESS .and. reqs(1) == MPI_REQUEST_NULL .and. token_in == 7 * right + 3, 'MPI_WAIT receive')
  call check(MPI_STATUS_IGNORE%MPI_TAG /= 15, 'MPI_WAIT left MPI_STATUS_IGNORE alone')
  call MPI_WAIT(reqs(2), MPI_STATUS_IGNORE, ierr)

  ! Persistent point-to-point requests: two rounds of MPI_STARTALL and MPI_WAITALL, then
  ! MPI_REQUEST_FREE. An inactive persistent request is not MPI_REQUEST_NULL.
  call MPI_RECV_INIT(token_in, 1, MPI_INTEGER, left, 11, comm, preqs(1), ierr)
  call MPI_SEND_INIT(token, 1, MPI_INTEGER, right, 11, comm, preqs(2), ierr)
  do n = 1, 2
    token = 100 * n + rank
    token_in = -1
    call MPI_STARTALL(2, preqs, ierr)
    call check(ierr == MPI_SUCCESS, 'MPI_STARTALL ierr')
    call MPI_WAITALL(2, preqs, statuses, ierr)
    call check(ierr == MPI_SUCCESS .and. preqs(1) /= MPI_REQUEST_NULL .and. preqs(2) /= MPI_REQUEST_NULL, &
               'MPI_WAITALL persistent requests kept')
    call check(token_in == 100 * n + left .and. statuses(1)%MPI_SOURCE == left, 'MPI_RECV_INIT value')
  end do
  do j = 1, 2
    call MPI_REQUEST_FREE(preqs(j), ierr)
    call check(ierr == MPI_SUCCESS .and. preqs(j) == MPI_REQUEST_NULL, 'MPI_REQUEST_FREE request null')
  end do

  ! MPI_ALLGATHER_INIT: two rounds of MPI_START and MPI_WAIT with new send data each time, then a
  ! third through MPI_STARTALL and MPI_WAITALL (MPICH 4.0's MPI_Testall fails on a persistent
  ! collective request, in C too), then MPI_REQUEST_FREE. On MPI_COMM_WORLD, whose state the shim
  ! makes at MPI_INIT: Open MPI's Fortran MPI_COMM_DUP calls PMPI_Comm_dup directly, so `comm` has
  ! none there and its nonblocking and persistent calls pass through to the library.
  call PERSISTENT_ALLGATHER(sendv, 2, MPI_INTEGER, gath, 2, MPI_INTEGER, MPI_COMM_WORLD, MPI_INFO_NULL, preqs(1), &
                            ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_ALLGATHER_INIT ierr')
  do n = 5, 7
    sendv = [1000 * n + 10 * rank + 1, 1000 * n + 10 * rank + 2]
    gath = -1
    if (n < 7) then
      call MPI_START(preqs(1), ierr)
      call check(ierr == MPI_SUCCESS, 'MPI_START ierr')
      call MPI_WAIT(preqs(1), status, ierr)
    else
      call MPI_STARTALL(1, preqs, ierr)
      call MPI_WAITALL(1, preqs, statuses, ierr)
    end if
    call check(ierr == MPI_SUCCESS .and. preqs(1) /= MPI_REQUEST_NULL, 'persistent MPI_ALLGATHER_INIT request kept')
    call check_allgather(n, 'MPI_ALLGATHER_INIT value')
  end do
  call MPI_REQUEST_FREE(preqs(1), ierr)
  call check(ierr == MPI_SUCCESS .and. preqs(1) == MPI_REQUEST_NULL, 'MPI_REQUEST_FREE persistent collective')

  call made_communicators()
  call MPI_COMM_FREE(comm, ierr)
  ! A main program's allocatables live to the end: freed here so LeakSanitizer sees no leak.
  deallocate(gath, avals, arecv, scounts, sdispls, rcounts, rdispls)
  counts(1) = checks
  counts(2) = failures
  call MPI_ALLREDUCE(MPI_IN_PLACE, counts, 2, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(a, ": ", i0, " checks passed, ", i0, " failed")', program_name, counts(1) - counts(2), counts(2)
  call MPI_Finalize()
  if (counts(2) /= 0) stop 1

contains

  ! Round n of MPI_IALLGATHER: rank r contributes 1000n + 10r + 1 and 1000n + 10r + 2.
  subroutine start_iallgather(n, request)
    integer, intent(in) :: n
    type(MPI_Request), intent(out) :: request
    sendv = [1000 * n + 10 * rank + 1, 1000 * n + 10 * rank + 2]
    gath = -1
    call MPI_IALLGATHER(sendv, 2, MPI_INTEGER, gath, 2, MPI_INTEGER, comm, request, ierr)
    call check(ierr == MPI_SUCCESS, 'MPI_IALLGATHER ierr')
  end subroutine start_iallgather

  subroutine check_allgather(n, what)
    integer, intent(in) :: n
    character(len=*), intent(in) :: what
    integer :: r
    do r = 0, p - 1
      call check(gath(2 * r + 1) == 1000 * n + 10 * r + 1 .and. gath(2 * r + 2) == 1000 * n + 10 * r + 2, what)
    end do
  end subroutine check_allgather

  ! MPI_IALLREDUCE of 5 integers, 100r + k on rank r, summed.
  subroutine start_iallreduce(request)
    type(MPI_Request), intent(out) :: request
    integer :: i
    do i = 1, 5
      vec(i) = 100 * rank + i
    end do
    sums = -1
    call MPI_IALLREDUCE(vec, sums, 5, MPI_INTEGER, MPI_SUM, comm, request, ierr)
    call check(ierr == MPI_SUCCESS, 'MPI_IALLREDUCE ierr')
  end subroutine start_iallreduce

  subroutine check_iallreduce(what)
    character(len=*), intent(in) :: what
    integer :: i
    do i = 1, 5
      call check(sums(i) == 100 * p * (p - 1) / 2 + p * i, what)
    end do
  end subroutine check_iallreduce

  subroutine start_ialltoallv(request)
    type(MPI_Request), intent(out) :: request
    arecv = -1
    call MPI_IALLTOALLV(avals, scounts, sdispls, MPI_INTEGER, arecv, rcounts, rdispls, MPI_INTEGER, comm, request, ierr)
    call check(ierr == MPI_SUCCESS, 'MPI_IALLTOALLV ierr')
  end subroutine start_ialltoallv

  ! MPI_UNDEFINED only: under MPICH too, whose own mpi_f08 MPI_Waitany and MPI_Testany (4.0) give
  ! MPI_UNDEFINED + 1, as its mpif.h ones do (fortran_requests.inc), the shim's replace them.
  logical function undefined_index(idx)
    integer, intent(in) :: idx
    undefined_index = idx == MPI_UNDEFINED
  end function undefined_index

#define MADE_COMM type(MPI_Comm)
#define MADE_REQUEST type(MPI_Request)
#include "fortran_made_communicators.inc"
#include "fortran_checks.inc"
end program fortran_requests_f08
