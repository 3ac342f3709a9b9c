// Classic ring Allgather: p-1 steps; in step s every rank passes on to rank+1 the block it received in
// step s-1 (its own block in step 0). Cost (p-1)(alpha + m/p beta), neighbour traffic only.
#include "algorithms/allgather/allgather_algorithms.hpp"

namespace collshim {

BlockSchedule ring_schedule(int p, int rank, const Params& /*params*/) {
  BlockSchedule schedule;
  if (p <= 1) return schedule;
  const int right = wrap_rank(rank + 1, p);
  const int left = wrap_rank(rank - 1, p);
  for (int s = 0; s < p - 1; ++s) {
    BlockStep step;
    step.sends.push_back({right, {wrap_rank(rank - s, p)}});
    step.recvs.push_back({left, {wrap_rank(rank - s - 1, p)}});
    schedule.steps.push_back(std::move(step));
  }
  return schedule;
}

}  // namespace collshim
