// Pairwise Alltoallv: p-1 steps; in step k a rank sends to rank+k and receives from rank-k, so each
// rank has one message in flight each way per step (bounded buffering, no incast).
#include "algorithms/alltoallv_algorithms.hpp"

namespace collshim {

int run_pairwise_alltoallv(const AlltoallvCall& call, const AlgorithmChoice& /*choice*/, CommContext& context) {
  const int p = context.size();
  const int rank = context.rank();
  int rc = MPI_SUCCESS;
  const DirectAlltoallv exchange(call, context, /*tag=*/2, rc);
  if (rc != MPI_SUCCESS) return rc;
  int first_error = MPI_SUCCESS;
  for (int k = 1; k < p; ++k) {
    MPI_Request requests[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    rc = exchange.post_recv((rank - k + p) % p, &requests[0]);
    if (rc == MPI_SUCCESS) rc = exchange.post_send((rank + k) % p, &requests[1]);
    const int complete_rc = context.complete_requests(requests);
    if (rc != MPI_SUCCESS) return rc;
    // A failed message (a truncation) does not end the exchange: later peers still expect this rank.
    if (first_error == MPI_SUCCESS) first_error = complete_rc;
  }
  return first_error;
}

}  // namespace collshim
