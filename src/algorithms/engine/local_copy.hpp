#pragma once
#include <mpi.h>

#include <cstddef>

namespace collshim {

// The size of one element of `type` in bytes. MPI_Type_size reports MPI_UNDEFINED for an element of
// more than INT_MAX bytes, which would turn byte counts negative; MPI_Type_size_x does not.
// Inline: every decided call asks it for its size.
inline long long type_size(MPI_Datatype type) {
  MPI_Count size = 0;
  PMPI_Type_size_x(type, &size);
  return static_cast<long long>(size);
}

// Copies `send_count` elements of `send_type` at `source` into `recv_count` elements of `recv_type` at
// `destination` (equal signatures), the way a message to oneself would. Returns an MPI error code.
// Layout conversions are a message to `self_rank` on `comm`, which must be a shadow communicator:
// on a user's communicator (MPI_COMM_SELF included) a pending wildcard receive could match it.
int copy_typed(const void* source, int send_count, MPI_Datatype send_type, void* destination, int recv_count,
               MPI_Datatype recv_type, MPI_Comm comm, int self_rank);

// Packs `count` elements of `type` (laid out from `buffer` by its extent) into `count * type_size`
// bytes at `out`, in the MPI library's native packed representation, and back. Same rules for `comm`
// and `self_rank` as copy_typed: an element of more than INT_MAX bytes, which MPI_Pack's int sizes
// cannot describe, is moved by a message to self received as (or sent from) MPI_PACKED bytes.
int pack_elements(const void* buffer, int count, MPI_Datatype type, std::byte* out, MPI_Comm comm, int self_rank);
int unpack_elements(const std::byte* in, int count, MPI_Datatype type, void* buffer, MPI_Comm comm, int self_rank);

// True when `count` elements of `type` occupy one gap-free byte range starting at the true lower bound.
bool is_contiguous(MPI_Datatype type);

}  // namespace collshim
