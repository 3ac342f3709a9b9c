#pragma once
// What the Fortran entry points of libcollshim.so share (Open MPI's fortran_entry_points.cpp and
// fortran_request_entry_points.cpp, MPICH's fortran_f08_mpich.cpp): how a Fortran name is exported
// under every mangling, how a Fortran sentinel (a common block such as MPI_IN_PLACE) is recognised,
// INTEGER arrays as C's, and the error code out.
#include <mpi.h>

#include <cstddef>
#include <memory>
#include <type_traits>

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

// The symbol `use mpi_f08` calls where its routine does not call Open MPI's ompi_<name>_f (or, in
// MPICH, any of these), under gfortran's mangling, the only one the f08 libraries export: an alias of
// the binding's collshim_<name>_f. Its arguments are the same in memory (a TYPE(MPI_Comm) or
// TYPE(MPI_Request) holds the INTEGER handle), and an absent ierror is a null pointer.
#define COLLSHIM_FORTRAN_F08_NAME(lower) \
  COLLSHIM_EXPORT __typeof__(collshim_##lower##_f) mpi_##lower##_f08_ __attribute__((alias("collshim_" #lower "_f")));

// Fortran's MPI_IN_PLACE, MPI_BOTTOM, MPI_STATUS_IGNORE and MPI_STATUSES_IGNORE are common blocks
// in libmpi.so, and a Fortran program passes their address. Open MPI defines them under the Fortran
// compiler's mangling, which its configure picked (gfortran: mpi_fortran_in_place_), so the macro
// declares all four manglings of one weak (null unless this build has them) and defines
// collshim::fortran::test(address), true for any of them. At global scope.
#define COLLSHIM_FORTRAN_SENTINEL(lower, upper, test)                                                 \
  extern "C" {                                                                                        \
  extern char lower __attribute__((weak));                                                            \
  extern char lower##_ __attribute__((weak));                                                         \
  extern char lower##__ __attribute__((weak));                                                        \
  extern char upper __attribute__((weak));                                                            \
  }                                                                                                   \
  namespace collshim::fortran {                                                                       \
  inline bool test(const void* address) {                                                             \
    return address != nullptr &&                                                                      \
           (address == &lower##_ || address == &lower || address == &lower##__ || address == &upper); \
  }                                                                                                   \
  }

COLLSHIM_FORTRAN_SENTINEL(mpi_fortran_in_place, MPI_FORTRAN_IN_PLACE, is_in_place)
COLLSHIM_FORTRAN_SENTINEL(mpi_fortran_bottom, MPI_FORTRAN_BOTTOM, is_bottom)
COLLSHIM_FORTRAN_SENTINEL(mpi_fortran_status_ignore, MPI_FORTRAN_STATUS_IGNORE, is_status_ignore)
COLLSHIM_FORTRAN_SENTINEL(mpi_fortran_statuses_ignore, MPI_FORTRAN_STATUSES_IGNORE, is_statuses_ignore)
COLLSHIM_FORTRAN_SENTINEL(mpi_fortran_unweighted, MPI_FORTRAN_UNWEIGHTED, is_unweighted)
COLLSHIM_FORTRAN_SENTINEL(mpi_fortran_weights_empty, MPI_FORTRAN_WEIGHTS_EMPTY, is_weights_empty)

namespace collshim::fortran {

// A Fortran INTEGER array of p values (counts, displacements, a topology's dimensions) as a C int
// array: the same memory where MPI_Fint is int (gfortran's default INTEGER), a converted copy where
// it is not (an Open MPI built for 8-byte INTEGER). Null stays null, so the C entry point rejects it
// as it would in C. A C sentinel (MPI_UNWEIGHTED) is taken as it is.
class IntArray {
 public:
  IntArray(const MPI_Fint* values, int p) {
    if constexpr (std::is_same_v<MPI_Fint, int>) {
      data_ = values;
    } else {
      if (values == nullptr || p <= 0) {
        data_ = reinterpret_cast<const int*>(values);
        return;
      }
      copy_ = std::make_unique<int[]>(static_cast<std::size_t>(p));
      for (int i = 0; i < p; ++i) copy_[i] = static_cast<int>(values[i]);
      data_ = copy_.get();
    }
  }
  explicit IntArray(const int* c_array) : data_(c_array) {}
  const int* get() const { return data_; }

 private:
  const int* data_ = nullptr;
  std::unique_ptr<int[]> copy_;
};

// ierr is optional in mpi_f08, which passes null for an absent one.
inline void set_error(MPI_Fint* ierr, int rc) {
  if (ierr != nullptr) *ierr = static_cast<MPI_Fint>(rc);
}

}  // namespace collshim::fortran
