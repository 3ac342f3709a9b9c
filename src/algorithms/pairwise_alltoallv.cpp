// Pairwise Alltoallv: p-1 steps; in step k a rank sends to rank+k and receives from rank-k, so each
// rank has one message in flight each way per step (bounded buffering, no incast).
#include "algorithms/alltoallv_algorithms.hpp"

namespace collshim {

namespace {
constexpr int alltoallv_tag = 2;
}

int run_pairwise_alltoallv(const AlltoallvCall& call, const AlgorithmChoice& /*choice*/, CommContext& context) {
  const int p = context.size();
  const int rank = context.rank();
  int rc = MPI_SUCCESS;
  const AlltoallvSendSide send(call, context, rc);
  if (rc != MPI_SUCCESS) return rc;
  if ((rc = copy_own_alltoallv_block(call, send, context)) != MPI_SUCCESS) return rc;

  MPI_Aint lower_bound = 0, recv_extent = 0;
  PMPI_Type_get_extent(call.recvtype, &lower_bound, &recv_extent);
  int recv_type_size = 0;
  PMPI_Type_size(call.recvtype, &recv_type_size);

  for (int k = 1; k < p; ++k) {
    const int destination = (rank + k) % p;
    const int source = (rank - k + p) % p;
    MPI_Request requests[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    // Zero-byte messages are skipped by both sides (MPI requires matching byte counts).
    if (static_cast<long long>(call.recvcounts[source]) * recv_type_size != 0) {
      rc = PMPI_Irecv(alltoallv_recv_address(call, recv_extent, source), call.recvcounts[source], call.recvtype,
                      source, alltoallv_tag, context.comm(), &requests[0]);
      if (rc != MPI_SUCCESS) return rc;
    }
    if (static_cast<long long>(send.count(destination)) * send.type_size() != 0) {
      rc = PMPI_Isend(send.address(destination), send.count(destination), send.type(), destination, alltoallv_tag,
                      context.comm(), &requests[1]);
      if (rc != MPI_SUCCESS) return rc;
    }
    if ((rc = PMPI_Waitall(2, requests, MPI_STATUSES_IGNORE)) != MPI_SUCCESS) return rc;
  }
  return MPI_SUCCESS;
}

}  // namespace collshim
