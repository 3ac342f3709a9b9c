// The `use mpi_f08` hooks of libcollshim.so, built for MPICH only (see CMakeLists.txt): start and
// end, the completion calls and the communicator constructors.
//
// MPICH's mpi_f08 collectives reach the C MPI_Allgather, MPI_Allgatherv and MPI_Alltoallv, hence the
// shim, but its MPI_Init, MPI_Init_thread and MPI_Finalize (mpi_init_f08_ and the others in
// libmpichfort 4.0.2) call PMPI_Init and the rest directly: the shim's runtime would never start,
// and every call would pass through. These replacements do what MPICH's do (null argc and argv;
// the error code in ierror when it is present) through the C entry points. MPICH's mpif.h and
// `use mpi` bindings call the C MPI_Init and need nothing.
//
// The same holds for its f08 completion calls (mpi_wait_f08_ ... mpi_request_free_f08_ call
// PMPI_Wait and the rest), which the shim's nonblocking and persistent collectives need: they are
// defined here as for Open MPI (fortran_requests.hpp), with MPICH's f08 statuses. (They also give
// 1-based indices where MPICH 4.0.2's own f08 MPI_Waitsome and MPI_Testsome give 0-based ones, and
// MPI_UNDEFINED where its MPI_Waitany and MPI_Testany give MPI_UNDEFINED + 1.) MPICH's mpif.h and
// `use mpi` completion calls call the C functions.
//
// And for its f08 communicator constructors (mpi_comm_dup_f08_ ... call PMPI_Comm_dup and the rest),
// whose communicators would otherwise have no state of the shim: fortran_constructors.hpp's, but
// for MPI_Dist_graph_create(_adjacent), whose f08 MPI_UNWEIGHTED and MPI_WEIGHTS_EMPTY are module
// variables of MPICH's the shim does not recognise, and MPI-4's MPI_Comm_idup_with_info and
// MPI_Comm_create_from_group.
#include <mpi.h>

#include <cstddef>
#include <cstring>

#include "intercept/fortran_abi.hpp"
#include "intercept/fortran_constructors.hpp"
#include "intercept/fortran_requests.hpp"

// ierror is optional in mpi_f08: null when the caller leaves it out.
COLLSHIM_EXPORT void mpi_init_f08_(MPI_Fint* ierror) {
  const int rc = MPI_Init(nullptr, nullptr);
  if (ierror != nullptr) *ierror = static_cast<MPI_Fint>(rc);
}

COLLSHIM_EXPORT void mpi_init_thread_f08_(const MPI_Fint* required, MPI_Fint* provided, MPI_Fint* ierror) {
  int c_provided = MPI_THREAD_SINGLE;
  const int rc = MPI_Init_thread(nullptr, nullptr, static_cast<int>(*required), &c_provided);
  if (rc == MPI_SUCCESS) *provided = static_cast<MPI_Fint>(c_provided);
  if (ierror != nullptr) *ierror = static_cast<MPI_Fint>(rc);
}

COLLSHIM_EXPORT void mpi_finalize_f08_(MPI_Fint* ierror) {
  const int rc = MPI_Finalize();
  if (ierror != nullptr) *ierror = static_cast<MPI_Fint>(rc);
}

namespace {

// MPICH's TYPE(MPI_Status) is MPI_F08_status, laid out as its C MPI_Status (mpi.h says the field
// order must match), and MPI_STATUS(ES)_IGNORE are objects whose addresses MPI_F08_STATUS(ES)_IGNORE
// hold. MPICH 4.0.2 has no MPI_Status_c2f08, so the status is copied.
static_assert(sizeof(MPI_F08_status) == sizeof(MPI_Status) &&
              offsetof(MPI_F08_status, MPI_SOURCE) == offsetof(MPI_Status, MPI_SOURCE) &&
              offsetof(MPI_F08_status, MPI_TAG) == offsetof(MPI_Status, MPI_TAG) &&
              offsetof(MPI_F08_status, MPI_ERROR) == offsetof(MPI_Status, MPI_ERROR));

struct MpichF08Statuses {
  static constexpr std::size_t status_size = sizeof(MPI_F08_status) / sizeof(MPI_Fint);
  static bool status_ignored(const MPI_Fint* status) {
    return status == reinterpret_cast<const MPI_Fint*>(MPI_F08_STATUS_IGNORE);
  }
  static bool statuses_ignored(const MPI_Fint* statuses) {
    return statuses == reinterpret_cast<const MPI_Fint*>(MPI_F08_STATUSES_IGNORE);
  }
  static void write_status(const MPI_Status& c_status, MPI_Fint* status) {
    std::memcpy(status, &c_status, sizeof(MPI_F08_status));
  }
};

}  // namespace

COLLSHIM_FORTRAN_REQUEST_CALLS(MpichF08Statuses)

// Under the names libmpichfort exports for them (gfortran's mangling of MPI_Wait_f08 ...).
#define COLLSHIM_FORTRAN_REQUEST_F08_NAME(lower, UPPER) COLLSHIM_FORTRAN_F08_NAME(lower)
COLLSHIM_FORTRAN_REQUEST_CALL_NAMES(COLLSHIM_FORTRAN_REQUEST_F08_NAME)

COLLSHIM_FORTRAN_CONSTRUCTOR_CALLS
COLLSHIM_FORTRAN_F08_NAME(comm_dup)
COLLSHIM_FORTRAN_F08_NAME(comm_dup_with_info)
COLLSHIM_FORTRAN_F08_NAME(comm_idup)
COLLSHIM_FORTRAN_F08_NAME(comm_split)
COLLSHIM_FORTRAN_F08_NAME(comm_split_type)
COLLSHIM_FORTRAN_F08_NAME(comm_create)
COLLSHIM_FORTRAN_F08_NAME(comm_create_group)
COLLSHIM_FORTRAN_F08_NAME(intercomm_merge)
COLLSHIM_FORTRAN_F08_NAME(cart_create)
COLLSHIM_FORTRAN_F08_NAME(cart_sub)
COLLSHIM_FORTRAN_F08_NAME(graph_create)
