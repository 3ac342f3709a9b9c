#pragma once
// What Open MPI's Fortran entry points of libcollshim.so share (fortran_entry_points.cpp,
// fortran_request_entry_points.cpp): how a Fortran name is exported under every mangling, how a
// Fortran sentinel (a common block such as MPI_IN_PLACE) is recognised, and the error code out.
#include <mpi.h>

#define COLLSHIM_EXPORT extern "C" __attribute__((visibility("default")))

// The four manglings libmpi_mpifh.so.40 exports (nm -D | grep -i allgather): gfortran's default
// (name_), -fsecond-underscore (name__), -fno-underscoring (name) and upper case; and Open MPI's
// internal ompi_name_f, which is the same function in libmpi_mpifh (one address for all five
// names) and the one `use mpi_f08` calls for most routines (libmpi_usempif08's mpi_allgather_f08_
// calls ompi_allgather_f, through the dynamic linker), so f08 programs reach the shim as well.
#define COLLSHIM_FORTRAN_NAMES(lower, upper, target)                            \
  COLLSHIM_EXPORT __typeof__(target) lower __attribute__((alias(#target)));     \
  COLLSHIM_EXPORT __typeof__(target) lower##_ __attribute__((alias(#target)));  \
  COLLSHIM_EXPORT __typeof__(target) lower##__ __attribute__((alias(#target))); \
  COLLSHIM_EXPORT __typeof__(target) upper __attribute__((alias(#target)));     \
  COLLSHIM_EXPORT __typeof__(target) o##lower##_f __attribute__((alias(#target)));

namespace collshim::fortran {

// A Fortran sentinel is the address of a common block that Open MPI defines under the Fortran
// compiler's mangling, which its configure picked; the callers declare all four weak (null unless
// this build has them) and pass their addresses here.
inline bool is_sentinel(const void* address, const void* a, const void* b, const void* c, const void* d) {
  return address != nullptr && (address == a || address == b || address == c || address == d);
}

// ierr is optional in mpi_f08, which passes null for an absent one.
inline void set_error(MPI_Fint* ierr, int rc) {
  if (ierr != nullptr) *ierr = static_cast<MPI_Fint>(rc);
}

}  // namespace collshim::fortran
