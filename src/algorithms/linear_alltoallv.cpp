// Linear Alltoallv: every receive and send posted at once, then one Waitall. p-1 start-ups per rank,
// all in flight together; the MPI library and network decide the order.
#include "algorithms/alltoallv_algorithms.hpp"

namespace collshim {

namespace {
constexpr int alltoallv_tag = 1;
}

int run_linear_alltoallv(const AlltoallvCall& call, const AlgorithmChoice& /*choice*/, CommContext& context) {
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

  // Messages of zero bytes are skipped on both sides: MPI requires the byte counts of each pair to
  // agree, so sender and receiver reach the same verdict.
  context.requests.clear();
  for (int k = 1; k < p && rc == MPI_SUCCESS; ++k) {
    const int source = (rank - k + p) % p;
    if (static_cast<long long>(call.recvcounts[source]) * recv_type_size == 0) continue;
    context.requests.push_back(MPI_REQUEST_NULL);
    rc = PMPI_Irecv(alltoallv_recv_address(call, recv_extent, source), call.recvcounts[source], call.recvtype,
                    source, alltoallv_tag, context.comm(), &context.requests.back());
  }
  for (int k = 1; k < p && rc == MPI_SUCCESS; ++k) {
    const int destination = (rank + k) % p;
    if (static_cast<long long>(send.count(destination)) * send.type_size() == 0) continue;
    context.requests.push_back(MPI_REQUEST_NULL);
    rc = PMPI_Isend(send.address(destination), send.count(destination), send.type(), destination, alltoallv_tag,
                    context.comm(), &context.requests.back());
  }
  const int wait_rc =
      PMPI_Waitall(static_cast<int>(context.requests.size()), context.requests.data(), MPI_STATUSES_IGNORE);
  return rc != MPI_SUCCESS ? rc : wait_rc;
}

}  // namespace collshim
