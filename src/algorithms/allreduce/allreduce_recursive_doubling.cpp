// Recursive doubling Allreduce with MPICH's fold for p not a power of two: with pof2 the largest
// power of two <= p and rem = p - pof2, each even rank below 2*rem hands its vector to the odd rank
// above it and waits; the pof2 remaining ranks exchange whole vectors with rank XOR 2^s for
// log2(pof2) steps; the odd ranks then hand the result back. That is recursive multiplying with the
// plan "collapse rem groups of 2, then factors 2, 2, ...", so it is generated as such.
#include <bit>

#include "algorithms/allreduce/allreduce_algorithms.hpp"

namespace collshim {

Schedule allreduce_recursive_doubling_schedule(const std::vector<int>& node_of_rank, int rank, const Params&) {
  const int p = static_cast<int>(node_of_rank.size());
  RecursiveMultiplyingPlan plan;
  const int pof2 = static_cast<int>(std::bit_floor(static_cast<unsigned>(p)));
  plan.collapse_base = 2;
  plan.collapse_groups = p - pof2;
  plan.factors.assign(static_cast<std::size_t>(std::countr_zero(static_cast<unsigned>(pof2))), 2);
  return allreduce_multiplying_schedule_of(plan, p, rank);
}

}  // namespace collshim
