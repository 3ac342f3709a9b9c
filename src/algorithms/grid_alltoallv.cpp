// Grid Alltoallv (paper 004, section 1.6): every block travels through k dimension phases. Phase j
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

#include "algorithms/alltoallv_algorithms.hpp"
#include "algorithms/grid_routing.hpp"

namespace collshim {

Schedule grid_alltoallv_schedule(const std::vector<int>& node_of_rank, int rank, const Params& params) {
  const int p = static_cast<int>(node_of_rank.size());
  const std::optional<GridDims> dims = parse_grid_dims(params.at("dims"));  // validated with the choice
  const GridRouting routing(p, grid_shape(p, dims.value_or(GridDims{})));
  ForwardingRoute route;
  route.phases = routing.phases();
  route.next_hop = [&](int phase, int /*origin*/, int destination) { return routing.next_hop(phase, rank, destination); };
  route.incoming = [&](int j) {
    const GridPhase group = routing.phase(j, rank);
    const auto in_group = [&](int member) { return std::binary_search(group.members.begin(), group.members.end(), member); };
    // What each member hands over: items for destinations in this rank's depth-j block, held by
    // the member (their place depends on the origin only, for that block) and routed to this rank.
    std::map<int, std::vector<std::int64_t>> incoming;
    for (int origin = 0; origin < p; ++origin) {
      int at = origin;
      for (int i = 0; i < j; ++i) at = routing.next_hop(i, at, rank);
      if (at == rank || !in_group(at)) continue;
      for (int destination = group.block_begin; destination < group.block_begin + group.block_size; ++destination) {
        if (destination != origin && routing.next_hop(j, at, destination) == rank)
          incoming[at].push_back(static_cast<std::int64_t>(origin) * p + destination);
      }
    }
    return incoming;
  };
  return forwarding_alltoallv_schedule(p, rank, route);
}

}  // namespace collshim
