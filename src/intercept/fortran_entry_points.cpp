// The Fortran entry points of libcollshim.so, built for Open MPI only (see CMakeLists.txt).
//
// Open MPI's Fortran bindings (libmpi_mpifh: `include 'mpif.h'` and `use mpi`; libmpi_usempif08's
// `use mpi_f08` calls libmpi_mpifh's ompi_*_f) call PMPI_Allgather and friends directly, and
// PMPI_Init and PMPI_Finalize from MPI_INIT and MPI_FINALIZE, so a PMPI tool that defines only the
// C functions never sees a Fortran program. The shim therefore defines the Fortran symbols itself, under every name
// mangling libmpi_mpifh exports (mpi_allgather_, mpi_allgather__, mpi_allgather, MPI_ALLGATHER): converts the handles
// with the *_f2c functions and the Fortran sentinels MPI_IN_PLACE and MPI_BOTTOM to C's, calls the shim's C entry
// point, and returns its error code in *ierr. This mirrors Open MPI's own ompi_allgather_f and friends
// (ompi/mpi/fortran/mpif-h/allgather_f.c).
//
// MPICH needs none of this (but see fortran_f08_mpich.cpp): libmpichfort's mpi_allgather_ converts its arguments and
// calls the C MPI_Allgather, which the dynamic linker resolves to the shim's. Defining the Fortran symbols there would
// replace MPICH's own wrapper (and its MPI_IN_PLACE handling) with this Open MPI one.
#include <mpi.h>

#include <type_traits>

#include "intercept/entry_point_table.hpp"
#include "intercept/fortran_abi.hpp"
#include "intercept/fortran_constructors.hpp"

namespace {

using collshim::fortran::IntArray;
using collshim::fortran::set_error;

// Fortran choice buffers as the C API takes them.
void* receive_buffer(void* buffer) { return collshim::fortran::is_bottom(buffer) ? MPI_BOTTOM : buffer; }

const void* send_buffer(const void* buffer) {
  if (collshim::fortran::is_in_place(buffer)) return MPI_IN_PLACE;
  return receive_buffer(const_cast<void*>(buffer));
}

// The size of the communicator a count array belongs to; 0 where the handle is not usable, and
// then the C entry point raises the error.
int array_length(MPI_Comm comm) {
  if constexpr (std::is_same_v<MPI_Fint, int>) {
    return 0;  // not needed: the arrays are used in place
  } else {
    int size = 0;
    if (comm == MPI_COMM_NULL) return 0;
    int inter = 0;
    if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS) return 0;
    if (inter) {
      PMPI_Comm_remote_size(comm, &size);
    } else {
      PMPI_Comm_size(comm, &size);
    }
    return size;
  }
}

// A count or displacement array of the call on communicator `comm` (a Fortran handle).
IntArray int_array(const MPI_Fint* values, const MPI_Fint* comm) {
  return IntArray(values, array_length(PMPI_Comm_f2c(*comm)));
}

}  // namespace

// Open MPI's Fortran MPI_INIT, MPI_INIT_THREAD and MPI_FINALIZE call PMPI_Init and the rest
// directly too: without these, a Fortran program never starts the shim's runtime, and every call
// passes through.
extern "C" void collshim_init_f(MPI_Fint* ierr) {
  int argc = 0;
  char** argv = nullptr;
  set_error(ierr, MPI_Init(&argc, &argv));
}

extern "C" void collshim_init_thread_f(const MPI_Fint* required, MPI_Fint* provided, MPI_Fint* ierr) {
  int argc = 0;
  char** argv = nullptr;
  int c_provided = MPI_THREAD_SINGLE;
  const int rc = MPI_Init_thread(&argc, &argv, static_cast<int>(*required), &c_provided);
  if (rc == MPI_SUCCESS) *provided = static_cast<MPI_Fint>(c_provided);
  set_error(ierr, rc);
}

extern "C" void collshim_finalize_f(MPI_Fint* ierr) { set_error(ierr, MPI_Finalize()); }

// One definition per collective, generated from its row (entry_point_table.hpp), internal to the
// library; the exported Fortran names below are aliases of it, as in libmpi_mpifh. Each converts
// its arguments by their roles and calls the C entry point through the dynamic linker, as MPICH's
// Fortran wrappers do, so a Fortran call takes exactly the path of the same call from C. A role's
// buffer may be Fortran's MPI_BOTTOM, and MPI_IN_PLACE where the role says so (Scatterv's is its
// receive buffer, at the root); the array temporaries live until the C call returns.
#define COLLSHIM_FROM_FORTRAN(form, parameter) COLLSHIM_FROM_FORTRAN_ parameter
#define COLLSHIM_FROM_FORTRAN_(role, name) COLLSHIM_FROM_FORTRAN_##role(name)
#define COLLSHIM_FROM_FORTRAN_send_or_in_place(name) send_buffer(name)
#define COLLSHIM_FROM_FORTRAN_send(name) receive_buffer(const_cast<void*>(name))
#define COLLSHIM_FROM_FORTRAN_recv(name) receive_buffer(name)
#define COLLSHIM_FROM_FORTRAN_recv_or_in_place(name) const_cast<void*>(send_buffer(name))
#define COLLSHIM_FROM_FORTRAN_uniform_count(name) static_cast<int>(*name)
#define COLLSHIM_FROM_FORTRAN_count(name) static_cast<int>(*name)
#define COLLSHIM_FROM_FORTRAN_counts(name) int_array(name, comm).get()
#define COLLSHIM_FROM_FORTRAN_displs(name) int_array(name, comm).get()
#define COLLSHIM_FROM_FORTRAN_type(name) PMPI_Type_f2c(*name)
#define COLLSHIM_FROM_FORTRAN_op(name) PMPI_Op_f2c(*name)
#define COLLSHIM_FROM_FORTRAN_root(name) static_cast<int>(*name)
#define COLLSHIM_FROM_FORTRAN_comm(name) PMPI_Comm_f2c(*name)

#define COLLSHIM_FORTRAN_BINDING(Name, lower, UPPER, parameters, ...)                                                \
  extern "C" void collshim_##lower##_f(COLLSHIM_PARAMETERS(fortran, parameters), MPI_Fint* ierr) {                   \
    set_error(ierr, MPI_##Name(COLLSHIM_EACH(COLLSHIM_FROM_FORTRAN, COLLSHIM_COMMA, -, COLLSHIM_SPLAT parameters))); \
  }
COLLSHIM_COLLECTIVES(COLLSHIM_FORTRAN_BINDING)

// The nonblocking forms (MPI_IALLGATHER, ...): the same conversions, the C MPI_I<name>, and its
// request back as a Fortran handle, which the Fortran completion calls
// (fortran_request_entry_points.cpp) take to the C ones. The count and displacement arrays must
// live until the request completes: they are the program's own where MPI_Fint is int (gfortran's
// default INTEGER); a converted copy (an 8-byte INTEGER build) ends with the call, as it does in
// Open MPI 4.1's own ompi_ialltoallv_f.
#define COLLSHIM_FORTRAN_NONBLOCKING_BINDING(Name, lower, UPPER, parameters, ...)                                      \
  extern "C" void collshim_i##lower##_f(COLLSHIM_PARAMETERS(fortran, parameters), MPI_Fint* request, MPI_Fint* ierr) { \
    MPI_Request c_request = MPI_REQUEST_NULL;                                                                          \
    const int rc =                                                                                                     \
        MPI_I##lower(COLLSHIM_EACH(COLLSHIM_FROM_FORTRAN, COLLSHIM_COMMA, -, COLLSHIM_SPLAT parameters), &c_request);  \
    if (rc == MPI_SUCCESS) *request = PMPI_Request_c2f(c_request);                                                     \
    set_error(ierr, rc);                                                                                               \
  }
COLLSHIM_COLLECTIVES(COLLSHIM_FORTRAN_NONBLOCKING_BINDING)

// Open MPI 4.1's persistent forms (MPIX_ALLGATHER_INIT, ...: the pcollreq extension), whose Fortran
// bindings in libmpi_mpifh (ompix_allgather_init_f, which libmpi_usempif08's calls too) call
// PMPIX_Allgather_init and the rest directly: as the nonblocking ones, with the info handle, through
// the C MPIX_<Name>_init. MPI_START and the completion calls are the shim's already.
#ifdef OMPI_HAVE_MPI_EXT_PCOLLREQ
#define COLLSHIM_FORTRAN_PERSISTENT_BINDING(Name, lower, UPPER, parameters, ...)                               \
  extern "C" void collshim_##lower##_init_f(COLLSHIM_PARAMETERS(fortran, parameters), const MPI_Fint* info,    \
                                            MPI_Fint* request, MPI_Fint* ierr) {                               \
    MPI_Request c_request = MPI_REQUEST_NULL;                                                                  \
    const int rc =                                                                                             \
        MPIX_##Name##_init(COLLSHIM_EACH(COLLSHIM_FROM_FORTRAN, COLLSHIM_COMMA, -, COLLSHIM_SPLAT parameters), \
                           PMPI_Info_f2c(*info), &c_request);                                                  \
    if (rc == MPI_SUCCESS) *request = PMPI_Request_c2f(c_request);                                             \
    set_error(ierr, rc);                                                                                       \
  }
COLLSHIM_COLLECTIVES(COLLSHIM_FORTRAN_PERSISTENT_BINDING)
#endif

// Exported under every mangling (fortran_abi.hpp), as aliases of the definitions above.
COLLSHIM_FORTRAN_NAMES(mpi_init, MPI_INIT, collshim_init_f)
COLLSHIM_FORTRAN_NAMES(mpi_init_thread, MPI_INIT_THREAD, collshim_init_thread_f)
COLLSHIM_FORTRAN_NAMES(mpi_finalize, MPI_FINALIZE, collshim_finalize_f)
#define COLLSHIM_FORTRAN_ALIASES(Name, lower, UPPER, ...) \
  COLLSHIM_FORTRAN_NAMES(mpi_##lower, MPI_##UPPER, collshim_##lower##_f)
COLLSHIM_COLLECTIVES(COLLSHIM_FORTRAN_ALIASES)
#define COLLSHIM_FORTRAN_NONBLOCKING_ALIASES(Name, lower, UPPER, ...) \
  COLLSHIM_FORTRAN_NAMES(mpi_i##lower, MPI_I##UPPER, collshim_i##lower##_f)
COLLSHIM_COLLECTIVES(COLLSHIM_FORTRAN_NONBLOCKING_ALIASES)
#ifdef OMPI_HAVE_MPI_EXT_PCOLLREQ
#define COLLSHIM_FORTRAN_PERSISTENT_ALIASES(Name, lower, UPPER, ...) \
  COLLSHIM_FORTRAN_NAMES(mpix_##lower##_init, MPIX_##UPPER##_INIT, collshim_##lower##_init_f)
COLLSHIM_COLLECTIVES(COLLSHIM_FORTRAN_PERSISTENT_ALIASES)
#endif

// The communicator constructors (fortran_constructors.hpp), under every mangling. `use mpi_f08`
// reaches ompi_comm_dup_f and the others through these aliases, but its MPI_Cart_create,
// MPI_Cart_sub, MPI_Graph_create, MPI_Dist_graph_create(_adjacent) and MPI_Intercomm_merge call the
// Fortran pmpi_cart_create_ and friends (libmpi_usempif08 4.1.4), so the shim defines those f08
// symbols as well.
COLLSHIM_FORTRAN_CONSTRUCTOR_CALLS
#define COLLSHIM_FORTRAN_CONSTRUCTOR_ALIASES(Name, lower, UPPER, ...) \
  COLLSHIM_FORTRAN_NAMES(mpi_##lower, MPI_##UPPER, collshim_##lower##_f)
COLLSHIM_FORTRAN_CONSTRUCTORS(COLLSHIM_FORTRAN_CONSTRUCTOR_ALIASES)
COLLSHIM_FORTRAN_NAMES(mpi_comm_idup, MPI_COMM_IDUP, collshim_comm_idup_f)
COLLSHIM_FORTRAN_F08_NAME(cart_create)
COLLSHIM_FORTRAN_F08_NAME(cart_sub)
COLLSHIM_FORTRAN_F08_NAME(graph_create)
COLLSHIM_FORTRAN_F08_NAME(dist_graph_create)
COLLSHIM_FORTRAN_F08_NAME(dist_graph_create_adjacent)
COLLSHIM_FORTRAN_F08_NAME(intercomm_merge)
