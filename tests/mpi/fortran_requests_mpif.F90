! A Fortran 77-style MPI program (include 'mpif.h') whose nonblocking and persistent requests must
! complete through the shim's completion calls.
program fortran_requests_mpif
  implicit none
  include 'mpif.h'
  character(len=*), parameter :: program_name = 'fortran_requests_mpif'
#include "fortran_requests.inc"
end program fortran_requests_mpif
