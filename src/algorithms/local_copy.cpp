#include "algorithms/local_copy.hpp"

#include <cstring>

namespace collshim {

bool is_contiguous(MPI_Datatype type) {
  MPI_Aint lb = 0, extent = 0, true_lb = 0, true_extent = 0;
  int size = 0;
  PMPI_Type_get_extent(type, &lb, &extent);
  PMPI_Type_get_true_extent(type, &true_lb, &true_extent);
  PMPI_Type_size(type, &size);
  return size == true_extent && size == extent;
}

int copy_typed(const void* source, int send_count, MPI_Datatype send_type, void* destination, int recv_count,
               MPI_Datatype recv_type, MPI_Comm comm, int self_rank) {
  if (send_count == 0 && recv_count == 0) return MPI_SUCCESS;
  if (send_type == recv_type && send_count == recv_count && is_contiguous(send_type)) {
    MPI_Aint true_lb = 0, true_extent = 0;
    int size = 0;
    PMPI_Type_get_true_extent(send_type, &true_lb, &true_extent);
    PMPI_Type_size(send_type, &size);
    std::memmove(static_cast<char*>(destination) + true_lb, static_cast<const char*>(source) + true_lb,
                 static_cast<std::size_t>(size) * static_cast<std::size_t>(send_count));
    return MPI_SUCCESS;
  }
  // Different layouts: let the MPI library do the type conversion through a message to self.
  return PMPI_Sendrecv(source, send_count, send_type, self_rank, 0, destination, recv_count, recv_type, self_rank, 0,
                       comm, MPI_STATUS_IGNORE);
}

}  // namespace collshim
