#pragma once
// Alltoall(v) rank profiles (cost_model.hpp) from counts instead of schedules.
//
// A `grid` or `node_grid` schedule lists every item it forwards (o*p+d), so building all p of them
// costs p² items per phase, and a direct one (`linear`, `pairwise`) lists p - 1 messages per rank
// however few carry data. Where no rank symmetry applies (a grid with holes, node_grid's handlers,
// any irregular pattern) the model must cost all p ranks: 40-80 s at p = 16384. It needs only how
// many items each message carries and their bytes, and the routing gives the counts without
// enumerating items:
//   grid: an item's place at the start of phase j depends on its origin and on its destination's
//     depth-j block only, and the items of one origin for one block travel together. So it suffices
//     to know, per rank x, how many origins' items for x's depth-j block sit at x (c_x): x then sends
//     c_x·|b| items to its hop toward each other sub-block b, and the hop's count for b grows by c_x.
//     O(p·Σ d_j) in all.
//   node_grid (every node with the same m ranks): node pairs' bundles of m² items move together
//     between nodes along the same grid among nodes, on lane (A + B) mod m of each node; per node
//     and phase it suffices to know how many source nodes of each residue mod m are held there.
// Bytes: with every pair's block of one size, items times that size; otherwise each non-empty
// block is routed on its own (next hops) and adds its bytes to the messages and copies it passes
// through, O(non-empty blocks · phases). Direct algorithms are listed from the non-empty blocks only.
// The unit tests compare every profile with rank_profile of the real schedule for p = 1..130, several
// node maps and patterns.
#include <utility>
#include <vector>

#include "algorithms/engine/algorithm_spec.hpp"
#include "model/cost/cost_model.hpp"

namespace collshim::model {

// An Alltoall(v)'s blocks: every pair's of one size, or per origin the destinations whose blocks are
// not empty (every other block empty).
struct AlltoallBlocks {
  long long every_pair_bytes = 0;                               // where `sending` is empty
  std::vector<std::vector<std::pair<int, long long>>> sending;  // per origin: (destination, bytes), ascending

  bool uniform() const { return sending.empty(); }
  long long bytes(int origin, int destination) const;
};

// The blocks of an Alltoallv from every origin's bytes per destination (p x p, origin by origin; the
// shim gathers a summary instead, alltoall_summary.hpp): where every pair holds the same bytes, the
// uniform form, which the rank symmetries apply to (an Alltoallv with equal counts costs as an
// Alltoall, not rank by rank).
AlltoallBlocks alltoall_blocks(const std::vector<long long>& bytes_by_pair, int p);

// `choice`'s profiles, by rank, from counts; empty where the algorithm has none here: other
// algorithms; node_grid on nodes of different sizes; linear and pairwise with every pair's block of
// one size (their rank symmetry serves there). `sends_empty_messages`: the pairwise exchange posts
// empty messages too (a library's code that it stands for, native_decision.hpp). Only `ranks`'
// profiles (ascending; none: every rank's) are filled in where every pair's block has one size
// (a rank symmetry then leaves a few to cost); the others are left empty.
std::vector<RankProfile> counted_alltoall_profiles(const AlgorithmChoice& choice, const std::vector<int>& node_of_rank,
                                                   const AlltoallBlocks& blocks, bool sends_empty_messages = false,
                                                   const std::vector<int>& ranks = {});

// A direct exchange (every block straight to its destination, the own block copied first), by the
// order in which a rank posts its sends.
enum class DirectOrder {
  from_next_rank,  // one step: rank + 1, rank + 2, ... (collshim's linear)
  pairwise,        // step k − 1: rank + k (collshim's pairwise)
  rank_order,      // one step: 0, 1, ..., p − 1 (Open MPI's basic linear Alltoallv)
  scattered,       // rank − 1, rank − 2, ... in rounds of `throttle` pairs (library_alltoall.hpp)
  exclusive_or,    // step k − 1: rank XOR k, p a power of two (library_alltoall.hpp)
};
// Its profiles, uniform blocks included: `ranks`' (none: every rank's), the others left empty;
// empty blocks post no message unless `sends_empty_messages`. `throttle` counts only for the
// scattered order.
std::vector<RankProfile> direct_alltoall_profiles(DirectOrder order, int p, const AlltoallBlocks& blocks,
                                                  bool sends_empty_messages, int throttle = 0,
                                                  const std::vector<int>& ranks = {});

}  // namespace collshim::model
