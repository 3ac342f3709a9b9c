#pragma once
// The size a decision is keyed on, the average block that rules test as block_bytes, and how the
// ranks come to the same value (collective.hpp's SizeAgreement): the arithmetic once, for the
// blocking call's agreement (DecisionPolicy::agreed_block_bytes, a sum on the shadow) and the
// nonblocking operation's (its first step, an MPI_Iallreduce of the same contribution).
#include "algorithms/engine/collective.hpp"

namespace collshim {

// This rank's part of the sum the ranks agree by: its received bytes where the size is rank-local
// (Alltoallv); the root's total at the root and nothing elsewhere where only the root knows it.
constexpr long long size_contribution(SizeAgreement agreement, int rank, int root, long long received_bytes) {
  return agreement == SizeAgreement::root && rank != root ? 0 : received_bytes;
}

// The agreed size from the sum of every rank's contribution: total bytes / p^2 for a rank-local
// exchange, the root's total / p for a rooted call.
constexpr long long block_bytes_from_sum(SizeAgreement agreement, long long sum, int p) {
  return agreement == SizeAgreement::local ? sum / (static_cast<long long>(p) * p) : sum / p;
}

// The size where the ranks do not agree: every rank computes the same (Allgather(v): received / p;
// reductions: the vector), or no rule tests the size and it only buckets the report (a rank-local
// size: this rank's average received block; a rooted call: the root's average, the others' own block).
constexpr long long own_block_bytes(Collective collective, int p, int rank, int root, long long received_bytes) {
  const CollectiveInfo& info = collective_info(collective);
  if (info.shape == CallShape::reduction) return received_bytes;
  if (info.size_agreement == SizeAgreement::root && rank != root) return received_bytes;
  return received_bytes / p;
}

}  // namespace collshim
