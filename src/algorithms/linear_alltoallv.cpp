// Linear Alltoallv: every receive and send posted at once, then one Waitall. p-1 start-ups per rank,
// all in flight together; the MPI library and network decide the order.
#include "algorithms/alltoallv_algorithms.hpp"

namespace collshim {

int run_linear_alltoallv(const AlltoallvCall& call, const AlgorithmChoice& /*choice*/, CommContext& context) {
  const int p = context.size();
  const int rank = context.rank();
  int rc = MPI_SUCCESS;
  const DirectAlltoallv exchange(call, context, /*tag=*/1, rc);
  if (rc != MPI_SUCCESS) return rc;
  // Receives first (from rank-1, rank-2, ...), then sends (to rank+1, rank+2, ...), so that the
  // k-th message of every rank goes to a different peer.
  context.requests.assign(2 * static_cast<std::size_t>(p - 1), MPI_REQUEST_NULL);
  for (int k = 1; k < p && rc == MPI_SUCCESS; ++k) rc = exchange.post_recv((rank - k + p) % p, &context.requests[k - 1]);
  for (int k = 1; k < p && rc == MPI_SUCCESS; ++k)
    rc = exchange.post_send((rank + k) % p, &context.requests[p - 2 + k]);
  const int wait_rc = context.complete_requests(context.requests);
  return rc != MPI_SUCCESS ? rc : wait_rc;
}

}  // namespace collshim
