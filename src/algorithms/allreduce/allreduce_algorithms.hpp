#pragma once
// Allreduce schedule generators, one per file. All cut the vector into p segments
// (BlockNaming::reduction), start by copying the send buffer into the receive buffer (so that
// MPI_IN_PLACE, where the two are one, needs nothing else) and never read the send buffer again.
#include <optional>
#include <vector>

#include "algorithms/allgather/allgather_recursive_multiplying.hpp"
#include "algorithms/engine/registry.hpp"
#include "algorithms/engine/schedule.hpp"

namespace collshim {

// All p segments of a buffer (of temp copy `copy`): the whole vector, one run of the user's type.
inline Region whole_vector(Buffer buffer, int p, int copy = 0) {
  Region region{buffer, {}};
  region.blocks.append_run(static_cast<std::int64_t>(copy) * p, p);
  return region;
}

// Segments [first, end) of a buffer.
inline Region segment_range(Buffer buffer, int first, int end) {
  Region region{buffer, {}};
  region.blocks.append_run(first, end - first);
  return region;
}

// Recursive multiplying over a plan (allgather_recursive_multiplying.hpp): collapse, k-way stages, expand;
// every group combines its members' partial results in rank order. With merged_ranks = R > 0 (and
// no collapse, at least two factors, product p - R) it is the paper's prime merging instead, which
// does not keep rank order: ranks below R hand their vector to one first-stage group each and get
// the result from one last-stage group, in the first and last stage.
Schedule allreduce_multiplying_schedule_of(const RecursiveMultiplyingPlan& plan, int p, int rank, int merged_ranks = 0);

// The prime-merging plan for p and k: the largest q < p whose prime factors are <= k and that takes
// at least two stages, as factors (merged ranks: p - q); nullopt where p factors or no q fits.
std::optional<RecursiveMultiplyingPlan> plan_prime_merging(int p, int k);

// `primes=split|merge`: how recursive multiplying handles p with a prime factor above k.
ParamSpec allreduce_primes_param();

Schedule allreduce_recursive_doubling_schedule(const std::vector<int>& node_of_rank, int rank, const Params& params);
Schedule allreduce_recursive_multiplying_schedule(const std::vector<int>& node_of_rank, int rank, const Params& params);
Schedule allreduce_rabenseifner_schedule(const std::vector<int>& node_of_rank, int rank, const Params& params);
Schedule allreduce_ring_schedule(const std::vector<int>& node_of_rank, int rank, const Params& params);
// Node-aware: combine at each node's leader, `inter` among the leaders, send back (allreduce_hierarchical.cpp).
Schedule allreduce_hierarchical_schedule(const std::vector<int>& node_of_rank, int rank, const Params& params);
// Its rank symmetry: node_aware_symmetry (node_layout.hpp) with `inter`'s among the leaders.
RankSymmetry allreduce_hierarchical_symmetry(const std::vector<int>& node_of_rank, const Params& params);
// `inter=ALG`: the flat Allreduce schedule algorithms of the whole registry `algorithms`.
ParamSpec allreduce_hierarchical_inter_param(const std::vector<Algorithm>& algorithms);
// Its state: the schedule alone, or with intra=shm the node's communicators and window as well.
int make_allreduce_hierarchical_state(const AlgorithmChoice& choice, CommContext& context,
                                      std::unique_ptr<AlgorithmState>& state);

}  // namespace collshim
