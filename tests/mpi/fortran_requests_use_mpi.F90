! A Fortran 90 MPI program (use mpi) whose nonblocking and persistent requests must complete
! through the shim's completion calls.
program fortran_requests_use_mpi
  use mpi
#if COLLSHIM_MPIX_PERSISTENT
  use mpi_ext  ! MPIX_ALLGATHER_INIT
#endif
  implicit none
  character(len=*), parameter :: program_name = 'fortran_requests_use_mpi'
#include "fortran_requests.inc"
end program fortran_requests_use_mpi
