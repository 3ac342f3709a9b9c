// Neighbor exchange Allgather (Chen et al. 2005; Open MPI's allgather/allgatherv "neighborexchange"):
// p/2 pairwise steps for even p. Ranks 2k and 2k+1 form pair k.
//  - Step 0: each rank swaps its own block with its pair mate (rank XOR 1); both now hold pair k.
//  - Odd steps: even ranks talk to rank-1, odd ranks to rank+1 (the adjacent pair, wrapping around).
//  - Even steps >= 2: the pair mates talk again.
//  - From step 1 on, a rank sends the two blocks it received in the previous step (step 1: its own
//    pair) and receives two blocks, always an aligned pair {2m, 2m+1}.
// This is the thesis's rule "even r talks to r + (-1)^s, odd r to r - (-1)^s". An even rank collects
// the pairs to its left (k-1, k-2, ...) from rank-1, an odd rank those to its right from rank+1, and on
// the next step the mates swap what they got; so every rank gains a new pair per step and holds all
// p/2 pairs after p/2 steps.
// Every exchange is pairwise (send and receive with the same peer), the point of the algorithm (TCP
// ACK piggybacking, Benson et al. 2003).
#include <cassert>

#include "algorithms/allgather/allgather_algorithms.hpp"

namespace collshim {

BlockSchedule neighbor_exchange_schedule(int p, int rank, const Params& /*params*/) {
  assert(p % 2 == 0);
  BlockSchedule schedule;
  if (p < 2) return schedule;
  const int pairs = p / 2;
  const int mate = rank ^ 1;
  // Direction of the odd-step partner, in pairs: even ranks look left, odd ranks right.
  const int outward = rank % 2 == 0 ? -1 : 1;
  const int outer = ((rank + outward) % p + p) % p;
  auto pair_blocks = [](int pair) { return std::vector<int>{2 * pair, 2 * pair + 1}; };

  BlockStep first;
  first.sends.push_back({mate, {rank}});
  first.recvs.push_back({mate, {mate}});
  schedule.steps.push_back(std::move(first));

  // Pair indices received last from the outer neighbour and from the mate; they move one pair further
  // each time, outward from the outer side and inward (the opposite way) from the mate.
  int from_outer = rank / 2;
  int from_mate = rank / 2;
  int forward = rank / 2;  // the pair to send in this step
  for (int s = 1; s < pairs; ++s) {
    int peer = 0;
    int incoming = 0;
    if (s % 2 == 1) {
      peer = outer;
      incoming = from_outer = (from_outer + outward + pairs) % pairs;
    } else {
      peer = mate;
      incoming = from_mate = (from_mate - outward + pairs) % pairs;
    }
    BlockStep step;
    step.sends.push_back({peer, pair_blocks(forward)});
    step.recvs.push_back({peer, pair_blocks(incoming)});
    schedule.steps.push_back(std::move(step));
    forward = incoming;
  }
  return schedule;
}

}  // namespace collshim
