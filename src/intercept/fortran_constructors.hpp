#pragma once
// The Fortran communicator constructors (MPI_COMM_DUP, MPI_COMM_SPLIT, MPI_CART_CREATE, ...) for the
// bindings that call PMPI_Comm_dup and the rest directly: Open MPI's mpif.h, `use mpi` and
// `use mpi_f08` (fortran_entry_points.cpp), MPICH's `use mpi_f08` (fortran_f08_mpich.cpp). Through
// those, a Fortran program's new communicators would get no state of the shim
// (communicator_entry_points.cpp), and their nonblocking collectives would pass to the library.
//
// Each converts as Open MPI 4.1's ompi_comm_dup_f and friends do (ompi/mpi/fortran/mpif-h/
// comm_dup_f.c, cart_create_f.c, ...): handles through the *_f2c functions; INTEGER and LOGICAL
// scalars as ints; INTEGER and LOGICAL arrays as IntArray (in place where MPI_Fint is int: a default
// LOGICAL takes a default INTEGER's storage, and C takes any non-zero value as true, so no value
// needs converting; copied otherwise); Fortran's MPI_UNWEIGHTED and MPI_WEIGHTS_EMPTY as C's. It
// calls the C MPI_* function through the dynamic linker, so a Fortran call takes the path of the
// same call from C, and gives the new communicator back through MPI_Comm_c2f.
//
// COLLSHIM_FORTRAN_CONSTRUCTORS(X): X(Name, lower, UPPER, (parameters), (arguments)), the Fortran
// parameters before the new communicator (every one a const MPI_Fint*) and the C call's arguments
// before its MPI_Comm*, made of them; the array temporaries live until the C call returns.
// COLLSHIM_FORTRAN_CONSTRUCTOR_CALLS defines collshim_<lower>_f for each, and for MPI_COMM_IDUP,
// which the file exports under the binding's names.
#include <mpi.h>

#include <type_traits>

#include "intercept/fortran_abi.hpp"
#include "intercept/parameter_roles.hpp"

namespace collshim::fortran {

inline MPI_Comm c_comm(const MPI_Fint* handle) { return PMPI_Comm_f2c(*handle); }
inline MPI_Group c_group(const MPI_Fint* handle) { return PMPI_Group_f2c(*handle); }
inline MPI_Info c_info(const MPI_Fint* handle) { return PMPI_Info_f2c(*handle); }
inline int c_int(const MPI_Fint* value) { return static_cast<int>(*value); }
inline IntArray c_ints(const MPI_Fint* values, int length) { return IntArray(values, length); }

// A weights array, or one of the sentinels.
inline IntArray c_weights(const MPI_Fint* values, int length) {
  if (is_unweighted(values)) return IntArray(MPI_UNWEIGHTED);
  if (is_weights_empty(values)) return IntArray(MPI_WEIGHTS_EMPTY);
  return IntArray(values, length);
}

// The lengths of arrays that other arguments give: read only where the array is copied (MPI_Fint is
// not int), so that an invalid call fails in the C call as it would from C.
inline int edge_count(const MPI_Fint* index, const MPI_Fint* nnodes) {  // MPI_Graph_create's
  if constexpr (std::is_same_v<MPI_Fint, int>) {
    return 0;
  } else {
    return *nnodes > 0 ? static_cast<int>(index[*nnodes - 1]) : 0;
  }
}
inline int degree_sum(const MPI_Fint* degrees, const MPI_Fint* n) {  // MPI_Dist_graph_create's
  if constexpr (std::is_same_v<MPI_Fint, int>) {
    return 0;
  } else {
    int sum = 0;
    for (MPI_Fint i = 0; i < *n; ++i) sum += static_cast<int>(degrees[i]);
    return sum;
  }
}
inline int cart_dims(const MPI_Fint* comm) {  // MPI_Cart_sub's
  if constexpr (std::is_same_v<MPI_Fint, int>) {
    return 0;
  } else {
    int dims = 0;
    PMPI_Cartdim_get(c_comm(comm), &dims);
    return dims;
  }
}

}  // namespace collshim::fortran

// clang-format off
#define COLLSHIM_FORTRAN_CONSTRUCTORS(X)                                                                           \
  X(Comm_dup, comm_dup, COMM_DUP, (comm), (c_comm(comm)))                                                          \
  X(Comm_dup_with_info, comm_dup_with_info, COMM_DUP_WITH_INFO, (comm, info), (c_comm(comm), c_info(info)))        \
  X(Comm_split, comm_split, COMM_SPLIT, (comm, color, key), (c_comm(comm), c_int(color), c_int(key)))              \
  X(Comm_split_type, comm_split_type, COMM_SPLIT_TYPE, (comm, split_type, key, info),                              \
    (c_comm(comm), c_int(split_type), c_int(key), c_info(info)))                                                   \
  X(Comm_create, comm_create, COMM_CREATE, (comm, group), (c_comm(comm), c_group(group)))                          \
  X(Comm_create_group, comm_create_group, COMM_CREATE_GROUP, (comm, group, tag),                                   \
    (c_comm(comm), c_group(group), c_int(tag)))                                                                    \
  X(Intercomm_merge, intercomm_merge, INTERCOMM_MERGE, (intercomm, high), (c_comm(intercomm), c_int(high)))        \
  X(Cart_create, cart_create, CART_CREATE, (comm_old, ndims, dims, periods, reorder),                              \
    (c_comm(comm_old), c_int(ndims), c_ints(dims, *ndims).get(), c_ints(periods, *ndims).get(), c_int(reorder)))   \
  X(Cart_sub, cart_sub, CART_SUB, (comm, remain_dims), (c_comm(comm), c_ints(remain_dims, cart_dims(comm)).get())) \
  X(Graph_create, graph_create, GRAPH_CREATE, (comm_old, nnodes, index, edges, reorder),                           \
    (c_comm(comm_old), c_int(nnodes), c_ints(index, *nnodes).get(), c_ints(edges, edge_count(index, nnodes)).get(),\
     c_int(reorder)))                                                                                              \
  X(Dist_graph_create, dist_graph_create, DIST_GRAPH_CREATE,                                                       \
    (comm_old, n, sources, degrees, destinations, weights, info, reorder),                                         \
    (c_comm(comm_old), c_int(n), c_ints(sources, *n).get(), c_ints(degrees, *n).get(),                             \
     c_ints(destinations, degree_sum(degrees, n)).get(), c_weights(weights, degree_sum(degrees, n)).get(),         \
     c_info(info), c_int(reorder)))                                                                                \
  X(Dist_graph_create_adjacent, dist_graph_create_adjacent, DIST_GRAPH_CREATE_ADJACENT,                            \
    (comm_old, indegree, sources, sourceweights, outdegree, destinations, destweights, info, reorder),             \
    (c_comm(comm_old), c_int(indegree), c_ints(sources, *indegree).get(), c_weights(sourceweights, *indegree).get(),\
     c_int(outdegree), c_ints(destinations, *outdegree).get(), c_weights(destweights, *outdegree).get(),           \
     c_info(info), c_int(reorder)))
// clang-format on

#define COLLSHIM_FORTRAN_HANDLE_PARAMETER(form, name) const MPI_Fint* name
#define COLLSHIM_FORTRAN_CONSTRUCTOR(Name, lower, UPPER, parameters, arguments)                       \
  extern "C" void collshim_##lower##_f(                                                               \
      COLLSHIM_EACH(COLLSHIM_FORTRAN_HANDLE_PARAMETER, COLLSHIM_COMMA, -, COLLSHIM_SPLAT parameters), \
      MPI_Fint* newcomm, MPI_Fint* ierr) {                                                            \
    using namespace collshim::fortran;                                                                \
    MPI_Comm made = MPI_COMM_NULL;                                                                    \
    const int rc = MPI_##Name(COLLSHIM_SPLAT arguments, &made);                                       \
    if (rc == MPI_SUCCESS) *newcomm = PMPI_Comm_c2f(made);                                            \
    set_error(ierr, rc);                                                                              \
  }

// MPI_COMM_IDUP: the request comes back too. The shim's MPI_Comm_idup gives the library's handle at
// return (CommIdupOperation::hand_over), as Open MPI's and MPICH's own bindings expect of the library.
#define COLLSHIM_FORTRAN_CONSTRUCTOR_CALLS                                                                           \
  COLLSHIM_FORTRAN_CONSTRUCTORS(COLLSHIM_FORTRAN_CONSTRUCTOR)                                                        \
  extern "C" void collshim_comm_idup_f(const MPI_Fint* comm, MPI_Fint* newcomm, MPI_Fint* request, MPI_Fint* ierr) { \
    MPI_Comm made = MPI_COMM_NULL;                                                                                   \
    MPI_Request started = MPI_REQUEST_NULL;                                                                          \
    const int rc = MPI_Comm_idup(collshim::fortran::c_comm(comm), &made, &started);                                  \
    if (rc == MPI_SUCCESS) {                                                                                         \
      *newcomm = PMPI_Comm_c2f(made);                                                                                \
      *request = PMPI_Request_c2f(started);                                                                          \
    }                                                                                                                \
    collshim::fortran::set_error(ierr, rc);                                                                          \
  }
