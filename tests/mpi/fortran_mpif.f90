! A Fortran 77-style MPI program (include 'mpif.h') whose collectives must reach the shim.
program fortran_mpif
  implicit none
  include 'mpif.h'
  character(len=*), parameter :: program_name = 'fortran_mpif'
  include 'fortran_collectives.inc'
end program fortran_mpif
