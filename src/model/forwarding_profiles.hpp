#pragma once
// The forwarding Alltoalls' rank profiles (cost_model.hpp) from counts instead of schedules.
//
// A `grid` or `node_grid` schedule lists every item it forwards (o*p+d), so building all p of them
// costs p² items per phase; where no rank symmetry applies (a grid with holes, node_grid's handlers)
// the model must build all p, which took 40-80 s at p = 16384. With every pair's block of one size
// the model needs only how many items each message carries, and the routing gives those counts
// without enumerating items:
//   grid: an item's place at the start of phase j depends on its origin and on its destination's
//     depth-j block only, and the items of one origin for one block travel together. So it suffices
//     to know, per rank x, how many origins' items for x's depth-j block sit at x (c_x): x then sends
//     c_x·|b| items to its hop toward each other sub-block b, and the hop's count for b grows by c_x.
//     O(p·Σ d_j) in all.
//   node_grid (every node with the same m ranks): node pairs' bundles of m² items move together
//     between nodes along the same grid among nodes, on lane (A + B) mod m of each node; per node
//     and phase it suffices to know how many source nodes of each residue mod m are held there.
// The unit tests compare every count-built profile with rank_profile of the real schedule for
// p = 1..130 and several node maps.
#include <vector>

#include "algorithms/algorithm_spec.hpp"
#include "algorithms/grid_routing.hpp"
#include "model/cost_model.hpp"

namespace collshim::model {

// Every rank's profile of a grid Alltoall with this shape (grid_routing.hpp), every pair's block
// `datum_bytes`.
std::vector<RankProfile> grid_alltoall_profiles(int p, const std::vector<int>& shape, long long datum_bytes);
// Every rank's profile of a node_grid Alltoall with this grid among nodes; empty where the nodes'
// rank counts differ (the lanes of two nodes then differ, and the counts do not aggregate).
std::vector<RankProfile> node_grid_alltoall_profiles(const std::vector<int>& node_of_rank, const GridDims& between_nodes,
                                                     long long datum_bytes);

// `choice`'s profiles from counts, for an Alltoall whose every pair's block has `datum_bytes`, by
// rank; empty where the algorithm has no counted form (or, for node_grid, the nodes differ in size).
std::vector<RankProfile> counted_alltoall_profiles(const AlgorithmChoice& choice, const std::vector<int>& node_of_rank,
                                                   long long datum_bytes);

}  // namespace collshim::model
