#pragma once
#include <mpi.h>

namespace collshim {

// Copies `send_count` elements of `send_type` at `source` into `recv_count` elements of `recv_type` at
// `destination` (equal signatures), the way a message to oneself would. Returns an MPI error code.
// Layout conversions are a message to `self_rank` on `comm`, which must be a shadow communicator:
// on a user's communicator (MPI_COMM_SELF included) a pending wildcard receive could match it.
int copy_typed(const void* source, int send_count, MPI_Datatype send_type, void* destination, int recv_count,
               MPI_Datatype recv_type, MPI_Comm comm, int self_rank);

// True when `count` elements of `type` occupy one gap-free byte range starting at the true lower bound.
bool is_contiguous(MPI_Datatype type);

}  // namespace collshim
