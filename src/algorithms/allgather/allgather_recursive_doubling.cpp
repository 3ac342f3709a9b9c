// Recursive doubling Allgather: log2 p steps; in step s a rank exchanges with rank XOR 2^s everything it
// holds, the aligned group of 2^s blocks containing its own, so the data doubles every step. Pairwise
// and one message per step, but only defined for p a power of two (the registry entry says so and
// names the fallback); the selector never asks for another p.
#include <cassert>

#include "algorithms/allgather/allgather_algorithms.hpp"

namespace collshim {

BlockSchedule recursive_doubling_schedule(int p, int rank, const Params& /*params*/) {
  assert(p > 0 && (p & (p - 1)) == 0);
  BlockSchedule schedule;
  for (int group = 1; group < p; group <<= 1) {
    const int peer = rank ^ group;
    const int own_first = rank & ~(group - 1);  // the group this rank holds
    const int peer_first = peer & ~(group - 1);
    BlockStep step;
    step.sends.push_back({peer, {}});
    step.recvs.push_back({peer, {}});
    for (int i = 0; i < group; ++i) {
      step.sends.back().blocks.push_back(own_first + i);
      step.recvs.back().blocks.push_back(peer_first + i);
    }
    schedule.steps.push_back(std::move(step));
  }
  return schedule;
}

}  // namespace collshim
