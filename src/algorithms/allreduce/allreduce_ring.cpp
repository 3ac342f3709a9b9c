// Ring Allreduce: a reduce-scatter around the ring (in step k rank r passes its partial of segment
// r-k to r+1 and adds r-1's partial of segment r-k-1), then an allgather of the finished segments
// (rank r finishes segment r+1). 2(p-1) steps, each moving 1/p of the vector: bandwidth-optimal for
// large vectors. Segment s combines ranks s+1, s+2, ... around the ring, so it needs a commutative
// operation (the registry's eligibility).
#include "algorithms/allreduce/allreduce_algorithms.hpp"
#include "algorithms/allgather/allgather_algorithms.hpp"

namespace collshim {

Schedule allreduce_ring_schedule(const std::vector<int>& node_of_rank, int rank, const Params&) {
  const int p = static_cast<int>(node_of_rank.size());
  const int next = wrap_rank(rank + 1, p), previous = wrap_rank(rank - 1, p);
  const auto segment = [p](Buffer buffer, long long s) { return Region{buffer, {wrap_rank(s, p)}}; };
  Schedule schedule;
  schedule.temp_copies = p > 1 ? 1 : 0;
  Step& first = schedule.steps.emplace_back();
  first.copies.push_back({whole_vector(Buffer::send, p), whole_vector(Buffer::recv, p)});
  for (int k = 0; k + 1 < p; ++k) {  // reduce-scatter
    Step& step = k == 0 ? first : schedule.steps.emplace_back();
    if (k > 0) step.reductions.push_back({segment(Buffer::temp, rank - k), segment(Buffer::recv, rank - k)});
    step.sends.push_back({next, segment(Buffer::recv, rank - k)});
    step.recvs.push_back({previous, segment(Buffer::temp, rank - k - 1)});
  }
  for (int j = 0; j + 1 < p; ++j) {  // allgather
    Step& step = schedule.steps.emplace_back();
    if (j == 0) step.reductions.push_back({segment(Buffer::temp, rank + 1), segment(Buffer::recv, rank + 1)});
    step.sends.push_back({next, segment(Buffer::recv, rank + 1 - j)});
    step.recvs.push_back({previous, segment(Buffer::recv, rank - j)});
  }
  return schedule;
}

}  // namespace collshim
