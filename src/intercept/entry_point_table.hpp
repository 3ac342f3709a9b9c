#pragma once
#include <mpi.h>  // MPI_VERSION: which forms the library has
#if defined(OPEN_MPI) && __has_include(<mpi-ext.h>)
#include <mpi-ext.h>  // OMPI_HAVE_MPI_EXT_PCOLLREQ: Open MPI 4.1's MPIX_<Name>_init
#endif

#include "intercept/parameter_roles.hpp"

// Every intercepted collective, declared once: one row, from which the shim generates
//   - the blocking MPI_<Name>: its fast path (a tail call of the library's function), the
//     dlsym(RTLD_NEXT) lookup, and the shim's path through <Name>Shape, the call shape in
//     call_shapes.hpp, built from the row's arguments as named members (call_arguments.hpp);
//   - under MPI_VERSION >= 4, the large-count MPI_<Name>_c: counts MPI_Count, displacements
//     MPI_Aint, converted to the int form's by their roles (large_count.hpp);
//   - the started forms, run by the shim or passed on, through the same <Name>Shape: the nonblocking
//     MPI_I<name> (adds MPI_Request*); the persistent MPI_<Name>_init (adds MPI_Info, MPI_Request*)
//     where the library declares it (MPI-4; Open MPI 5), and Open MPI 4.1's MPIX_<Name>_init; under
//     MPI_VERSION >= 4, the large-count MPI_I<name>_c and MPI_<Name>_init_c;
//   - the Open MPI Fortran bindings (fortran_entry_points.cpp), under every name mangling.
//
// X(Name, lower, UPPER, ((role, name), ...), ...): the C name after MPI_, the Fortran names after
// mpi_ and MPI_, and the int form's parameters in the C order, each with its role
// (parameter_roles.hpp says what a role means and what each form makes of it). Every row names its
// communicator `comm`. The trailing `...` passes COLLSHIM_COLLECTIVES' extra arguments to X.
// clang-format off
#define COLLSHIM_COLLECTIVES(X, ...)                                                                              \
  X(Allgather, allgather, ALLGATHER,                                                                              \
    ((send_or_in_place, sendbuf), (uniform_count, sendcount), (type, sendtype),                                   \
     (recv, recvbuf), (uniform_count, recvcount), (type, recvtype), (comm, comm)), __VA_ARGS__)                   \
  X(Allgatherv, allgatherv, ALLGATHERV,                                                                           \
    ((send_or_in_place, sendbuf), (count, sendcount), (type, sendtype),                                           \
     (recv, recvbuf), (counts, recvcounts), (displs, displs), (type, recvtype), (comm, comm)), __VA_ARGS__)       \
  X(Alltoallv, alltoallv, ALLTOALLV,                                                                              \
    ((send_or_in_place, sendbuf), (counts, sendcounts), (displs, sdispls), (type, sendtype),                      \
     (recv, recvbuf), (counts, recvcounts), (displs, rdispls), (type, recvtype), (comm, comm)), __VA_ARGS__)      \
  X(Alltoall, alltoall, ALLTOALL,                                                                                 \
    ((send_or_in_place, sendbuf), (uniform_count, sendcount), (type, sendtype),                                   \
     (recv, recvbuf), (uniform_count, recvcount), (type, recvtype), (comm, comm)), __VA_ARGS__)                   \
  X(Allreduce, allreduce, ALLREDUCE,                                                                              \
    ((send_or_in_place, sendbuf), (recv, recvbuf), (count, count), (type, datatype), (op, op), (comm, comm)),     \
    __VA_ARGS__)                                                                                                  \
  X(Gatherv, gatherv, GATHERV,                                                                                    \
    ((send_or_in_place, sendbuf), (count, sendcount), (type, sendtype), (recv, recvbuf), (counts, recvcounts),    \
     (displs, displs), (type, recvtype), (root, root), (comm, comm)), __VA_ARGS__)                                \
  X(Scatterv, scatterv, SCATTERV,                                                                                 \
    ((send, sendbuf), (counts, sendcounts), (displs, displs), (type, sendtype), (recv_or_in_place, recvbuf),      \
     (count, recvcount), (type, recvtype), (root, root), (comm, comm)), __VA_ARGS__)
// clang-format on

// The rows as the functions they make, for code that handles every function alike (entry_points.cpp,
// next_functions.hpp). Each form names its C function and that function's PMPI_ twin (the default
// of its next definition), so the prefixes (MPI_, Open MPI 4.1's MPIX_) are written here only.
// X(Function, Pmpi, Shape, (parameters), (arguments)), Shape being the call shape that reads the arguments.
// The blocking forms, and MPI-4's large-count ones where the library declares them (MPICH 4; not
// Open MPI 4.1): the same decision and engine, through LargeCountShape (large_count.hpp).
#define COLLSHIM_BLOCKING_FORM(Name, lower, UPPER, parameters, X)                          \
  X(MPI_##Name, PMPI_##Name, IntForm<Name##Shape>, (COLLSHIM_PARAMETERS(int, parameters)), \
    (COLLSHIM_ARGUMENT_NAMES(parameters)))
#define COLLSHIM_LARGE_COUNT_FORM(Name, lower, UPPER, parameters, X)                                     \
  X(MPI_##Name##_c, PMPI_##Name##_c, LargeCountShape<Name##Shape>, (COLLSHIM_PARAMETERS(c, parameters)), \
    (COLLSHIM_ARGUMENT_NAMES(parameters)))
#if MPI_VERSION >= 4
#define COLLSHIM_DECIDED_ENTRY_POINTS(X) \
  COLLSHIM_COLLECTIVES(COLLSHIM_BLOCKING_FORM, X) COLLSHIM_COLLECTIVES(COLLSHIM_LARGE_COUNT_FORM, X)
#else
#define COLLSHIM_DECIDED_ENTRY_POINTS(X) COLLSHIM_COLLECTIVES(COLLSHIM_BLOCKING_FORM, X)
#endif

// The nonblocking and persistent forms, run by the shim (collective_operation.hpp) or passed on
// to the library, and then counted for the report ("passed through, not handled"). Each builds its
// call shape from its own arguments (a large-count form's converted to the int form's), and runs
// the library's int nonblocking form where it passes a call on from a nonblocking or persistent
// operation: persistent calls too, whose own library schedules MPICH 4.0.2 gets wrong
// (pmodels/mpich#6423).
// X(Function, Pmpi, Shape, (parameters), (shape arguments), (arguments), form, the int nonblocking
// form's Function). `count_form`: the counts' types (int or c, parameter_roles.hpp); `added`: the
// parameters after the row's, and their names.
#define COLLSHIM_STARTED_FORM(Function, Pmpi, Shape, count_form, parameters, added, added_names, form, lower, X)    \
  X(Function, Pmpi, Shape, (COLLSHIM_PARAMETERS(count_form, parameters), COLLSHIM_SPLAT added),                     \
    (COLLSHIM_ARGUMENT_NAMES(parameters)), (COLLSHIM_ARGUMENT_NAMES(parameters), COLLSHIM_SPLAT added_names), form, \
    MPI_I##lower)
#define COLLSHIM_NONBLOCKING_FORM(Name, lower, UPPER, parameters, X)                                                 \
  COLLSHIM_STARTED_FORM(MPI_I##lower, PMPI_I##lower, IntForm<Name##Shape>, int, parameters, (MPI_Request * request), \
                        (request), nonblocking, lower, X)
// `prefix`: MPI, or MPIX for Open MPI 4.1's extension.
#define COLLSHIM_PERSISTENT_FORM(Name, lower, UPPER, parameters, X, prefix)                                       \
  COLLSHIM_STARTED_FORM(prefix##_##Name##_init, P##prefix##_##Name##_init, IntForm<Name##Shape>, int, parameters, \
                        (MPI_Info info, MPI_Request * request), (info, request), persistent, lower, X)
#define COLLSHIM_LARGE_COUNT_NONBLOCKING_FORM(Name, lower, UPPER, parameters, X)                          \
  COLLSHIM_STARTED_FORM(MPI_I##lower##_c, PMPI_I##lower##_c, LargeCountShape<Name##Shape>, c, parameters, \
                        (MPI_Request * request), (request), nonblocking, lower, X)
#define COLLSHIM_LARGE_COUNT_PERSISTENT_FORM(Name, lower, UPPER, parameters, X)                                 \
  COLLSHIM_STARTED_FORM(MPI_##Name##_init_c, PMPI_##Name##_init_c, LargeCountShape<Name##Shape>, c, parameters, \
                        (MPI_Info info, MPI_Request * request), (info, request), persistent, lower, X)

// Which started forms the library declares. MPI-4's persistent collectives: MPICH 4, and Open MPI 5,
// whose headers declare them although its MPI_VERSION is 3 (not tested here: Debian 12 has 4.1).
#if MPI_VERSION >= 4 || (defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION >= 5)
#define COLLSHIM_MPI_PERSISTENT_ENTRY_POINTS(X) COLLSHIM_COLLECTIVES(COLLSHIM_PERSISTENT_FORM, X, MPI)
#else
#define COLLSHIM_MPI_PERSISTENT_ENTRY_POINTS(X)
#endif
// Open MPI 4.1's, an extension of its own (mpi-ext.h, pcollreq): the same functions as MPIX_<Name>_init.
#ifdef OMPI_HAVE_MPI_EXT_PCOLLREQ
#define COLLSHIM_MPIX_PERSISTENT_ENTRY_POINTS(X) COLLSHIM_COLLECTIVES(COLLSHIM_PERSISTENT_FORM, X, MPIX)
#else
#define COLLSHIM_MPIX_PERSISTENT_ENTRY_POINTS(X)
#endif
// The large-count ones, as the blocking large-count forms (MPI-4: MPICH 4; not Open MPI 4.1).
#if MPI_VERSION >= 4
#define COLLSHIM_LARGE_COUNT_STARTED_ENTRY_POINTS(X)             \
  COLLSHIM_COLLECTIVES(COLLSHIM_LARGE_COUNT_NONBLOCKING_FORM, X) \
  COLLSHIM_COLLECTIVES(COLLSHIM_LARGE_COUNT_PERSISTENT_FORM, X)
#else
#define COLLSHIM_LARGE_COUNT_STARTED_ENTRY_POINTS(X)
#endif
#define COLLSHIM_NONBLOCKING_ENTRY_POINTS(X) COLLSHIM_COLLECTIVES(COLLSHIM_NONBLOCKING_FORM, X)
#define COLLSHIM_STARTED_ENTRY_POINTS(X)  \
  COLLSHIM_NONBLOCKING_ENTRY_POINTS(X)    \
  COLLSHIM_MPI_PERSISTENT_ENTRY_POINTS(X) \
  COLLSHIM_MPIX_PERSISTENT_ENTRY_POINTS(X) COLLSHIM_LARGE_COUNT_STARTED_ENTRY_POINTS(X)

namespace collshim {

// The nonblocking and persistent forms by index: the report's counters of those passed on (Profile::count_unhandled)
// and their names.
enum class StartedFunction {
#define COLLSHIM_STARTED_INDEX(Function, ...) Function,
  COLLSHIM_STARTED_ENTRY_POINTS(COLLSHIM_STARTED_INDEX)
#undef COLLSHIM_STARTED_INDEX
      count
};

inline constexpr const char* started_function_names[] = {
#define COLLSHIM_STARTED_NAME(Function, ...) #Function,
    COLLSHIM_STARTED_ENTRY_POINTS(COLLSHIM_STARTED_NAME)
#undef COLLSHIM_STARTED_NAME
};

}  // namespace collshim
