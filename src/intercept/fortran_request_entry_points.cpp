// The Fortran completion calls of libcollshim.so for Open MPI (built for Open MPI only, see
// CMakeLists.txt): MPI_WAIT ... MPI_REQUEST_FREE (fortran_requests.hpp says what they do and why),
// with Open MPI's Fortran statuses, under every name mangling libmpi_mpifh exports.
//
// `use mpi_f08` reaches MPI_Wait, MPI_Waitall, MPI_Waitany, MPI_Waitsome, MPI_Start,
// MPI_Startall and MPI_Request_free through ompi_wait_f and the rest (aliases below), but
// libmpi_usempif08's mpi_test_f08_, mpi_testall_f08_, mpi_testany_f08_, mpi_testsome_f08_ and
// mpi_request_get_status_f08_ call the Fortran pmpi_test_ and friends instead, so the shim defines
// those five f08 symbols as well. Their arguments are the same in memory: TYPE(MPI_Request) and
// TYPE(MPI_Status) hold the INTEGER handle and the MPI_STATUS_SIZE INTEGERs, and an absent ierror
// is a null pointer.
#include <mpi.h>

#include <cstddef>

#include "intercept/fortran_abi.hpp"
#include "intercept/fortran_requests.hpp"

namespace {

// Open MPI's Fortran status (mpif.h's INTEGER status(MPI_STATUS_SIZE), mpi_f08's TYPE(MPI_Status)).
struct OpenMpiStatuses {
  // MPI_STATUS_SIZE: what MPI_Status_c2f writes, the C status read as ints (mpif-config.h says 6).
  static constexpr std::size_t status_size = sizeof(MPI_Status) / sizeof(int);
  // C's MPI_F_STATUS(ES)_IGNORE point at the Fortran sentinels too.
  static bool status_ignored(const MPI_Fint* status) {
    return status == MPI_F_STATUS_IGNORE || collshim::fortran::is_status_ignore(status);
  }
  static bool statuses_ignored(const MPI_Fint* statuses) {
    return statuses == MPI_F_STATUSES_IGNORE || collshim::fortran::is_statuses_ignore(statuses);
  }
  static void write_status(const MPI_Status& c_status, MPI_Fint* status) { PMPI_Status_c2f(&c_status, status); }
};

}  // namespace

COLLSHIM_FORTRAN_REQUEST_CALLS(OpenMpiStatuses)

// Exported under every mangling, and the five mpi_f08 entry points that call the Fortran PMPI_*
// rather than ompi_*_f under gfortran's mangling, the only one libmpi_usempif08 exports.
#define COLLSHIM_FORTRAN_REQUEST_NAMES(lower, UPPER) \
  COLLSHIM_FORTRAN_NAMES(mpi_##lower, MPI_##UPPER, collshim_##lower##_f)
COLLSHIM_FORTRAN_REQUEST_CALL_NAMES(COLLSHIM_FORTRAN_REQUEST_NAMES)
COLLSHIM_FORTRAN_F08_NAME(test)
COLLSHIM_FORTRAN_F08_NAME(testall)
COLLSHIM_FORTRAN_F08_NAME(testany)
COLLSHIM_FORTRAN_F08_NAME(testsome)
COLLSHIM_FORTRAN_F08_NAME(request_get_status)
