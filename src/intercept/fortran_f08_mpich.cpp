// The `use mpi_f08` start and end hooks of libcollshim.so, built for MPICH only (see CMakeLists.txt).
//
// MPICH's mpi_f08 collectives reach the C MPI_Allgather, MPI_Allgatherv and MPI_Alltoallv, hence the
// shim, but its MPI_Init, MPI_Init_thread and MPI_Finalize (mpi_init_f08_ and the others in
// libmpichfort 4.0.2) call PMPI_Init and the rest directly: the shim's runtime would never start,
// and every call would pass through. These replacements do what MPICH's do (null argc and argv;
// the error code in ierror when it is present) through the C entry points. MPICH's mpif.h and
// `use mpi` bindings call the C MPI_Init and need nothing.
#include <mpi.h>

#define COLLSHIM_EXPORT extern "C" __attribute__((visibility("default")))

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
