// Linear Alltoallv: every receive and send posted at once, in one step. p-1 start-ups per rank, all
// in flight together; the MPI library and network decide the order.
#include "algorithms/alltoall/alltoallv_algorithms.hpp"

namespace collshim {

LocalCopy own_alltoallv_block(int rank) { return {{Buffer::send, {rank}}, {Buffer::recv, {rank}}}; }

Schedule linear_alltoallv_schedule(const std::vector<int>& node_of_rank, int rank, const Params& /*params*/) {
  const int p = static_cast<int>(node_of_rank.size());
  Step step;
  step.copies.push_back(own_alltoallv_block(rank));
  // Receives from rank-1, rank-2, ...; sends to rank+1, rank+2, ...: the k-th message of every rank
  // goes to a different peer.
  for (int k = 1; k < p; ++k) {
    const int source = (rank - k + p) % p, destination = (rank + k) % p;
    step.recvs.push_back({source, {Buffer::recv, {source}}});
    step.sends.push_back({destination, {Buffer::send, {destination}}});
  }
  Schedule schedule;
  schedule.steps.push_back(std::move(step));
  return schedule;
}

}  // namespace collshim
