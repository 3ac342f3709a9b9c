// Sparbit (Loch, UDESC 2021, Algorithm 1): p binomial-tree broadcasts run in parallel, one rooted at
// every rank, with the distance halving from 2^(ceil(log2 p)-1) down to 1 so that the data grows as
// the distance shrinks (Bruck's exchange with the distance order reversed). ceil(log2 p) steps, p-1
// blocks sent per rank. Blocks stay at their final rank position, so unlike Bruck there is no shift.
//
// Non-power-of-two p: the trees split into power-of-two subtrees (one per set bit of p); where a rank
// is a leaf of a tree it must not forward that tree's block, or the block would arrive twice. At most
// one block is ignored per step, and it is always the last one held (j = data-1), which is why the
// loop simply stops one block early. `ignore_steps` marks the distances at which that happens.
#include <bit>

#include "algorithms/allgather/allgather_algorithms.hpp"

namespace collshim {
BlockSchedule sparbit_schedule(int p, int rank, const Params& params) {
  BlockSchedule schedule;
  // Algorithm 1 line 3 would compute 2^-1 for p = 1; there is nothing to exchange anyway.
  if (p <= 1) return schedule;
  // coalesce=1 is the thesis's batching proposal (section 4.3): all blocks of a step in one message,
  // which the executor sends as one hindexed datatype instead of data-ignore pipelined messages.
  const bool coalesce = param_int(params, "coalesce") != 0;

  const auto up = static_cast<unsigned>(p);
  const int steps = std::bit_width(up - 1);  // ceil(log2 p)
  const int last_ignore = std::countr_zero(up);
  const unsigned ignore_steps = (~(up >> last_ignore) | 1u) << last_ignore;
  long long d = 1LL << (steps - 1);
  long long data = 1;
  schedule.steps.reserve(steps);
  for (int i = 0; i < steps; ++i) {
    const int ignore = (static_cast<unsigned>(d) & ignore_steps) != 0 ? 1 : 0;
    const int to = wrap_rank(rank + d, p);
    const int from = wrap_rank(rank - d, p);
    BlockStep step;
    if (coalesce) {
      step.sends.push_back({to, {}});
      step.recvs.push_back({from, {}});
    }
    for (long long j = 0; j < data - ignore; ++j) {
      const int send_block = wrap_rank(rank - 2 * j * d, p);
      const int recv_block = wrap_rank(rank - (2 * j + 1) * d, p);
      if (coalesce) {
        step.sends.back().blocks.push_back(send_block);
        step.recvs.back().blocks.push_back(recv_block);
      } else {
        // Several messages to the same peer in one step: matched in j order (non-overtaking).
        step.sends.push_back({to, {send_block}});
        step.recvs.push_back({from, {recv_block}});
      }
    }
    schedule.steps.push_back(std::move(step));
    d >>= 1;
    data = 2 * data - ignore;
  }
  return schedule;
}

}  // namespace collshim
