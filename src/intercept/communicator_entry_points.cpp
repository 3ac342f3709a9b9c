// The communicator constructors of libcollshim.so. Each blocking one makes the new communicator's
// state (CommCache::state: its shadow, lane and node map) before it returns, while every rank of it is
// in the call. A nonblocking collective cannot make it later (making it is collective and would
// block), so without this a communicator would pass its nonblocking calls to the library until its
// first blocking collective. Each of these calls is collective over a group that holds every rank of
// each communicator it returns (MPI_Comm_create_group and MPI_Comm_create_from_group over the group
// alone; the others over their input communicator, both groups of an intercommunicator for
// MPI_Intercomm_merge), and all of those ranks return it from the same call: they all make its
// state, and the application cannot use it before. MPI_Comm_idup makes it in nonblocking steps that
// its request completes after (comm_idup_operation.hpp). Skipped where no nonblocking call can use a
// state (COLLSHIM_NONBLOCKING=native, the shim off), for MPI_COMM_NULL (a rank outside a split's
// color, a topology's grid or a created group) and for intercommunicators.
#include <dlfcn.h>
#include <mpi.h>

#include "intercept/comm_idup_operation.hpp"
#include "intercept/runtime.hpp"

#define COLLSHIM_EXPORT extern "C" __attribute__((visibility("default")))

// MPI-4's constructors, where the library declares them (MPICH 4; not Open MPI 4.1).
#if MPI_VERSION >= 4
#define COLLSHIM_MPI4_CONSTRUCTORS(X) X(Comm_idup_with_info) X(Comm_create_from_group)
#else
#define COLLSHIM_MPI4_CONSTRUCTORS(X)
#endif
// clang-format off
#define COLLSHIM_CONSTRUCTORS(X)                                                                          \
  X(Comm_dup) X(Comm_dup_with_info) X(Comm_idup) X(Comm_split) X(Comm_split_type) X(Comm_create)          \
  X(Comm_create_group) X(Cart_create) X(Cart_sub) X(Graph_create) X(Dist_graph_create)                    \
  X(Dist_graph_create_adjacent) X(Intercomm_merge) COLLSHIM_MPI4_CONSTRUCTORS(X)
// clang-format on

namespace collshim {
namespace {

struct NextConstructors {
#define COLLSHIM_NEXT_MEMBER(Name) decltype(&PMPI_##Name) Name = &PMPI_##Name;
  COLLSHIM_CONSTRUCTORS(COLLSHIM_NEXT_MEMBER)
#undef COLLSHIM_NEXT_MEMBER
};
NextConstructors next_constructor;

// The runtime where new communicators get a state, else null.
Runtime* making_states() {
  Runtime* runtime = Runtime::active();
  return runtime == nullptr || runtime->nonblocking_native ? nullptr : runtime;
}

// After a constructor returned `rc` and `*made`: the new communicator's state, where it can serve.
int with_state(int rc, const MPI_Comm* made) {
  Runtime* runtime = making_states();
  if (rc != MPI_SUCCESS || runtime == nullptr || *made == MPI_COMM_NULL) return rc;
  int inter = 0;
  if (PMPI_Comm_test_inter(*made, &inter) != MPI_SUCCESS || inter) return rc;
  runtime->comms.state(*made, runtime->placement);  // null on failure: its calls then pass through
  return rc;
}

}  // namespace
}  // namespace collshim

using namespace collshim;

COLLSHIM_EXPORT int MPI_Comm_dup(MPI_Comm comm, MPI_Comm* newcomm) {
  return with_state(next_constructor.Comm_dup(comm, newcomm), newcomm);
}

COLLSHIM_EXPORT int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm) {
  return with_state(next_constructor.Comm_dup_with_info(comm, info, newcomm), newcomm);
}

COLLSHIM_EXPORT int MPI_Comm_idup(MPI_Comm comm, MPI_Comm* newcomm, MPI_Request* request) {
  Runtime* runtime = making_states();
  if (runtime == nullptr) return next_constructor.Comm_idup(comm, newcomm, request);
  return start_comm_idup(
      runtime->comms, runtime->placement, comm, newcomm, request,
      [&](MPI_Comm* made, MPI_Request* started) { return next_constructor.Comm_idup(comm, made, started); });
}

COLLSHIM_EXPORT int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm* newcomm) {
  return with_state(next_constructor.Comm_split(comm, color, key, newcomm), newcomm);
}

COLLSHIM_EXPORT int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm* newcomm) {
  return with_state(next_constructor.Comm_split_type(comm, split_type, key, info, newcomm), newcomm);
}

COLLSHIM_EXPORT int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm* newcomm) {
  return with_state(next_constructor.Comm_create(comm, group, newcomm), newcomm);
}

COLLSHIM_EXPORT int MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm* newcomm) {
  return with_state(next_constructor.Comm_create_group(comm, group, tag, newcomm), newcomm);
}

COLLSHIM_EXPORT int MPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[], const int periods[], int reorder,
                                    MPI_Comm* comm_cart) {
  return with_state(next_constructor.Cart_create(comm_old, ndims, dims, periods, reorder, comm_cart), comm_cart);
}

COLLSHIM_EXPORT int MPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm* newcomm) {
  return with_state(next_constructor.Cart_sub(comm, remain_dims, newcomm), newcomm);
}

COLLSHIM_EXPORT int MPI_Graph_create(MPI_Comm comm_old, int nnodes, const int index[], const int edges[], int reorder,
                                     MPI_Comm* comm_graph) {
  return with_state(next_constructor.Graph_create(comm_old, nnodes, index, edges, reorder, comm_graph), comm_graph);
}

COLLSHIM_EXPORT int MPI_Dist_graph_create(MPI_Comm comm_old, int n, const int sources[], const int degrees[],
                                          const int destinations[], const int weights[], MPI_Info info, int reorder,
                                          MPI_Comm* comm_dist_graph) {
  return with_state(next_constructor.Dist_graph_create(comm_old, n, sources, degrees, destinations, weights, info,
                                                       reorder, comm_dist_graph),
                    comm_dist_graph);
}

COLLSHIM_EXPORT int MPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[],
                                                   const int sourceweights[], int outdegree, const int destinations[],
                                                   const int destweights[], MPI_Info info, int reorder,
                                                   MPI_Comm* comm_dist_graph) {
  return with_state(
      next_constructor.Dist_graph_create_adjacent(comm_old, indegree, sources, sourceweights, outdegree, destinations,
                                                  destweights, info, reorder, comm_dist_graph),
      comm_dist_graph);
}

COLLSHIM_EXPORT int MPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm* newintracomm) {
  return with_state(next_constructor.Intercomm_merge(intercomm, high, newintracomm), newintracomm);
}

#if MPI_VERSION >= 4
COLLSHIM_EXPORT int MPI_Comm_idup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm, MPI_Request* request) {
  Runtime* runtime = making_states();
  if (runtime == nullptr) return next_constructor.Comm_idup_with_info(comm, info, newcomm, request);
  return start_comm_idup(runtime->comms, runtime->placement, comm, newcomm, request,
                         [&](MPI_Comm* made, MPI_Request* started) {
                           return next_constructor.Comm_idup_with_info(comm, info, made, started);
                         });
}

COLLSHIM_EXPORT int MPI_Comm_create_from_group(MPI_Group group, const char* stringtag, MPI_Info info,
                                               MPI_Errhandler errhandler, MPI_Comm* newcomm) {
  return with_state(next_constructor.Comm_create_from_group(group, stringtag, info, errhandler, newcomm), newcomm);
}
#endif

// Runs when the library is loaded, before the program's main.
[[gnu::constructor]] static void collshim_look_up_next_constructors() {
#define COLLSHIM_LOOK_UP(Name)                                                                                         \
  if (void* found = dlsym(RTLD_NEXT, "MPI_" #Name); found != nullptr && found != reinterpret_cast<void*>(&MPI_##Name)) \
    next_constructor.Name = reinterpret_cast<decltype(next_constructor.Name)>(found);
  COLLSHIM_CONSTRUCTORS(COLLSHIM_LOOK_UP)
#undef COLLSHIM_LOOK_UP
}
