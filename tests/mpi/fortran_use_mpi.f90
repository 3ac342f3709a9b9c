! A Fortran 90 MPI program (use mpi) whose collectives must reach the shim.
program fortran_use_mpi
  use mpi
  implicit none
  character(len=*), parameter :: program_name = 'fortran_use_mpi'
  include 'fortran_collectives.inc'
end program fortran_use_mpi
