// Grid Alltoallv (the grid indirection of Peters, "Exploring Aggregation Techniques for Irregular
// All-To-All Communication", 2024): every block travels through k dimension phases. Phase j
// exchanges only inside this rank's dimension-j group, forwarding each block one step toward its
// destination (grid_routing.hpp: shape, holes, next hop). Start-ups per rank drop from p-1 to about
// sum(d_j - 1) (2(sqrt(p)-1) in 2D, log2 p for a hypercube); the price is that a byte is forwarded
// up to k times. Worth it for small, irregular or hot-spot traffic.
//
// As a schedule (forwarding_alltoallv_schedule, shared with node_grid): step 0 packs every outgoing
// block into scratch (block o*p+d is rank o's data for rank d); step j runs phase j, each message
// to a group member carrying the held blocks whose next hop it is, in ascending block order; the
// step after a block reaches its destination unpacks it into the receive buffer. k phases, k+1
// steps. The blocks are packed bytes in the MPI library's native representation (MPI_Pack):
// collshim assumes a homogeneous job.
//
// Counts. A rank does not know the sizes of the blocks it forwards (they are other ranks' counts):
// the engine sends them in a header in front of such a message, and the receiver probes for its
// length. The last phase needs none: its receivers are the destinations, which know their
// recvcounts, so an empty message there is skipped by both sides. Nothing in the schedule depends on
// the counts, so every rank of a call runs the same phases.
//
// Who sends what to whom follows from the routing alone: an item's place at the start of phase j
// depends on its origin and on its destination's depth-j block only (each phase moves it into the
// next, finer block of its destination), so a rank finds what each group member hands it without
// enumerating all p^2 items: O(p * sum(d_j)) next-hop evaluations per rank, once per communicator.
#include <algorithm>
#include <map>
#include <numeric>
#include <optional>

#include "algorithms/alltoall/alltoallv_algorithms.hpp"
#include "algorithms/alltoall/grid_routing.hpp"

namespace collshim {

namespace {

// The shape of the `dims` parameter (validated with the choice) for p ranks.
std::vector<int> shape_of(int p, const Params& params) {
  return grid_shape(p, parse_grid_dims(params.at("dims")).value_or(GridDims{}));
}

}  // namespace

RankSymmetry grid_symmetry(const std::vector<int>& node_of_rank, const Params& params) {
  const int p = static_cast<int>(node_of_rank.size());
  return grid_digit_symmetry(p, shape_of(p, params));
}

RankSymmetry grid_digit_symmetry(int p, const std::vector<int>& shape) {
  RankSymmetry symmetry{RankSymmetry::Kind::digits};
  long long box = 1;
  for (auto side = shape.rbegin(); side != shape.rend(); ++side) {
    box *= *side;
    if (*side >= 2) symmetry.radices.push_back(*side);  // a side of 1 is a digit that is always 0
  }
  if (box != p || symmetry.radices.empty()) return {};
  return symmetry;
}

Schedule grid_alltoallv_schedule(const std::vector<int>& node_of_rank, int rank, const Params& params) {
  const int p = static_cast<int>(node_of_rank.size());
  const GridRouting routing(p, shape_of(p, params));
  ForwardingRoute route;
  route.phases = routing.phases();
  // This rank's groups, each found once: the next hop of everything it holds is read from them.
  std::vector<std::optional<GridPhase>> groups(static_cast<std::size_t>(routing.phases()));
  route.next_hop = [&](int phase, int /*origin*/, int destination) {
    std::optional<GridPhase>& group = groups[static_cast<std::size_t>(phase)];
    if (!group) group = routing.phase(phase, rank);
    if (destination < group->block_begin || destination >= group->block_begin + group->block_size) return -1;
    return group->members[static_cast<std::size_t>(group->next_index(destination))];
  };
  // Where each origin's items for this rank's depth-j block are at the start of phase j, advanced
  // one phase per call (the schedule asks for the phases in order).
  std::vector<int> at_of_origin(static_cast<std::size_t>(p));
  int advanced_to = p;  // the phase at_of_origin describes; p: not yet set
  route.incoming = [&](int j) {
    if (advanced_to > j) std::iota(at_of_origin.begin(), at_of_origin.end(), 0), advanced_to = 0;
    for (; advanced_to < j; ++advanced_to) {
      for (int& at : at_of_origin) at = routing.next_hop(advanced_to, at, rank);
    }
    const GridPhase group = routing.phase(j, rank);
    const auto in_group = [&](int member) {
      return std::binary_search(group.members.begin(), group.members.end(), member);
    };
    // A hop lands in its destination's sub-block, so only destinations in this rank's can come here.
    const int part = group.part_of(rank);
    const int first = group.part_begin(part), last = first + group.part_length(part);
    // What each member hands over: items for destinations in this rank's depth-j block, held by
    // the member (their place depends on the origin only, for that block) and routed to this rank.
    std::map<int, std::vector<std::int64_t>> incoming;
    for (int origin = 0; origin < p; ++origin) {
      const int at = at_of_origin[static_cast<std::size_t>(origin)];
      if (at == rank || !in_group(at)) continue;
      for (int destination = first; destination < last; ++destination) {
        if (destination != origin && routing.next_hop(j, at, destination) == rank)
          incoming[at].push_back(static_cast<std::int64_t>(origin) * p + destination);
      }
    }
    return incoming;
  };
  return forwarding_alltoallv_schedule(p, rank, route);
}

}  // namespace collshim
