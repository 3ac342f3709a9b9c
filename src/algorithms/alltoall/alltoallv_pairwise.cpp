// Pairwise Alltoallv: p-1 steps; in step k a rank sends to rank+k and receives from rank-k, so each
// rank has one message in flight each way per step (bounded buffering, no incast).
#include "algorithms/alltoall/alltoallv_algorithms.hpp"

#include <algorithm>

namespace collshim {

Schedule pairwise_alltoallv_schedule(const std::vector<int>& node_of_rank, int rank, const Params& /*params*/) {
  const int p = static_cast<int>(node_of_rank.size());
  Schedule schedule;
  schedule.steps.resize(static_cast<std::size_t>(std::max(p - 1, 1)));
  schedule.steps.front().copies.push_back(own_alltoallv_block(rank));
  for (int k = 1; k < p; ++k) {
    const int source = (rank - k + p) % p, destination = (rank + k) % p;
    Step& step = schedule.steps[k - 1];
    step.recvs.push_back({source, {Buffer::recv, {source}}});
    step.sends.push_back({destination, {Buffer::send, {destination}}});
  }
  return schedule;
}

}  // namespace collshim
