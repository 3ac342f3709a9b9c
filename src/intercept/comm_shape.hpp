#pragma once
// How a call's count and displacement arrays are read on a communicator: how many entries they hold
// and whether this rank reads them at all. Shared by the conversions that copy a call's arrays
// (large_count.hpp, kept_arguments.hpp).
#include <mpi.h>

#include "intercept/parameter_roles.hpp"

namespace collshim {

struct CommShape {
  int size = 0;  // entries of a count array: the remote group's on an intercommunicator
  int rank = MPI_PROC_NULL;
  bool inter = false;

  CommShape(int size, int rank) : size(size), rank(rank) {}
  explicit CommShape(MPI_Comm comm) {
    int is_inter = 0;
    PMPI_Comm_test_inter(comm, &is_inter);
    inter = is_inter != 0;
    if (inter)
      PMPI_Comm_remote_size(comm, &size);
    else
      PMPI_Comm_size(comm, &size);
    PMPI_Comm_rank(comm, &rank);
  }

  // Whether this rank's arrays mean something: everywhere, but in a rooted call (Gatherv,
  // Scatterv) only at the root (on an intercommunicator, the rank that passes MPI_ROOT).
  bool reads_arrays(bool rooted, int root) const {
    if (!rooted) return true;
    return inter ? root == MPI_ROOT : rank == root;
  }
};

// The root of a call, as a conversion of its arguments notes it: note() sees every parameter by its
// role, and a root makes the count and displacement arrays root-only.
class NotedRoot {
 public:
  void note(roles::root, int root) {
    root_ = root;
    rooted_ = true;
  }
  template <typename Role, typename Value>
  void note(Role, Value) {}

  // Whether this rank reads the call's arrays on a communicator of `shape`.
  bool reads_arrays(const CommShape& shape) const { return shape.reads_arrays(rooted_, root_); }

 private:
  int root_ = 0;
  bool rooted_ = false;
};

}  // namespace collshim
