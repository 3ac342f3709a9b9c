#pragma once
// Alltoallv schedules (and Alltoall's, which runs as Alltoallv with equal counts). They do not depend
// on the counts, which are rank-local: every rank of a call runs the same steps whatever its counts,
// and the engine skips a message both sides know is empty.
#include <cstdint>
#include <functional>
#include <map>
#include <vector>

#include "algorithms/engine/registry.hpp"
#include "algorithms/engine/schedule.hpp"

namespace collshim {

Schedule linear_alltoallv_schedule(const std::vector<int>& node_of_rank, int rank, const Params& params);
Schedule pairwise_alltoallv_schedule(const std::vector<int>& node_of_rank, int rank, const Params& params);
Schedule bruck_alltoall_schedule(const std::vector<int>& node_of_rank, int rank, const Params& params);
Schedule grid_alltoallv_schedule(const std::vector<int>& node_of_rank, int rank, const Params& params);
// Where the shape has no holes (p = prod d_j), the schedules repeat under digit additions of the
// grid coordinates (the last dimension the least significant digit); none elsewhere.
RankSymmetry grid_symmetry(const std::vector<int>& node_of_rank, const Params& params);
// The same for a grid of p ranks with this shape (grid_routing.hpp); none where it has holes.
RankSymmetry grid_digit_symmetry(int p, const std::vector<int>& shape);
Schedule node_grid_alltoallv_schedule(const std::vector<int>& node_of_rank, int rank, const Params& params);
// On whole nodes of m ranks each, sequential or round-robin: the grid among nodes' relabelings
// that keep every node pair's lane, (A + B) mod m, local ranks fixed (with one rank per node, the
// grid's own symmetry). None elsewhere (the cost model counts those schedules instead:
// model/cost/alltoall_profiles.hpp).
RankSymmetry node_grid_symmetry(const std::vector<int>& node_of_rank, const Params& params);

// An Alltoallv whose blocks are forwarded through `phases` phases (grid, node_grid), seen from one
// rank. Item o*p+d is rank o's block for rank d (scratch block naming). A rank holds an item from the
// moment it arrives until a phase moves it on; it delivers it the step after it arrives, if it is the
// destination. Both functions must describe one routing: what `next_hop` sends, `incoming` receives.
struct ForwardingRoute {
  int phases = 0;
  // The rank an item held by this rank moves to in `phase` (this rank itself: it stays).
  std::function<int(int phase, int origin, int destination)> next_hop;
  // The items other ranks hand this rank in `phase`, by sender, each list ascending.
  std::function<std::map<int, std::vector<std::int64_t>>(int phase)> incoming;
};
// Step 0 packs every outgoing block into scratch; step j runs phase j, one message per peer with its
// items in ascending order; received items for this rank are unpacked the step after. phases + 1 steps.
Schedule forwarding_alltoallv_schedule(int p, int rank, const ForwardingRoute& route);

// Step 0's copy of the own block from the send to the receive buffer (nothing for MPI_IN_PLACE).
LocalCopy own_alltoallv_block(int rank);

// Step 0 of a forwarding Alltoall(v) (Bruck, grid): the own block copied, and every other outgoing
// block packed into scratch as item rank * p + destination. Returns those items, ascending.
std::vector<std::int64_t> pack_outgoing_items(int p, int rank, Step& first);

}  // namespace collshim
