// The communicator constructors of libcollshim.so: MPI_Comm_dup, MPI_Comm_dup_with_info,
// MPI_Comm_split, MPI_Comm_split_type and MPI_Comm_create make the new communicator's state
// (CommCache::state: its shadow, lane and node map) before they return, while every rank of it is
// in the call. A nonblocking collective cannot make it later (making it is collective and would
// block), so without this a communicator would pass its nonblocking calls to the library until its
// first blocking collective. Every rank of the new communicator returns from the same constructor,
// so they all make it, and the application cannot use the communicator before. Skipped where no
// nonblocking call can use a state (COLLSHIM_NONBLOCKING=native, the shim off), for MPI_COMM_NULL
// and for intercommunicators.
#include <dlfcn.h>
#include <mpi.h>

#include "intercept/runtime.hpp"

#define COLLSHIM_EXPORT extern "C" __attribute__((visibility("default")))

// clang-format off
#define COLLSHIM_CONSTRUCTORS(X) X(Comm_dup) X(Comm_dup_with_info) X(Comm_split) X(Comm_split_type) X(Comm_create)
// clang-format on

namespace collshim {
namespace {

struct NextConstructors {
#define COLLSHIM_NEXT_MEMBER(Name) decltype(&PMPI_##Name) Name = &PMPI_##Name;
  COLLSHIM_CONSTRUCTORS(COLLSHIM_NEXT_MEMBER)
#undef COLLSHIM_NEXT_MEMBER
};
NextConstructors next_constructor;

// After a constructor returned `rc` and `*made`: the new communicator's state, where it can serve.
int with_state(int rc, const MPI_Comm* made) {
  Runtime* runtime = Runtime::active();
  if (rc != MPI_SUCCESS || runtime == nullptr || runtime->nonblocking_native || *made == MPI_COMM_NULL) return rc;
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

COLLSHIM_EXPORT int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm* newcomm) {
  return with_state(next_constructor.Comm_split(comm, color, key, newcomm), newcomm);
}

COLLSHIM_EXPORT int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm* newcomm) {
  return with_state(next_constructor.Comm_split_type(comm, split_type, key, info, newcomm), newcomm);
}

COLLSHIM_EXPORT int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm* newcomm) {
  return with_state(next_constructor.Comm_create(comm, group, newcomm), newcomm);
}

// Runs when the library is loaded, before the program's main.
[[gnu::constructor]] static void collshim_look_up_next_constructors() {
#define COLLSHIM_LOOK_UP(Name)                                                                                         \
  if (void* found = dlsym(RTLD_NEXT, "MPI_" #Name); found != nullptr && found != reinterpret_cast<void*>(&MPI_##Name)) \
    next_constructor.Name = reinterpret_cast<decltype(next_constructor.Name)>(found);
  COLLSHIM_CONSTRUCTORS(COLLSHIM_LOOK_UP)
#undef COLLSHIM_LOOK_UP
}
