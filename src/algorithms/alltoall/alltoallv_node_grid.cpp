// Node-aware grid Alltoallv (a grid whose first and last dimensions are the node; Peters, "Exploring
// Aggregation Techniques for Irregular All-To-All Communication", 2024, section 3.2.2 and its
// `locality` routing scheme): blocks for the same destination node are combined on one
// rank of the source node, cross the network in few large messages between matching ranks (directly
// or through a grid or hypercube among nodes), and are delivered inside the destination node
// (node_grid_routing.hpp). Start-ups between nodes per node drop from (ranks on the node) x (p -
// ranks on the node) to N-1 (direct) or about sum(d_j - 1) per lane; inside a node each rank sends
// at most m-1 messages twice. The price: a byte crossing nodes is copied through up to two local
// ranks (and up to K-1 intermediate nodes). Worth it for small blocks on many-core nodes, where
// the network's start-up cost per message dominates.
//
// The schedule is the grid's forwarding (forwarding_alltoallv_schedule): size headers on messages of
// forwarded blocks, none on the deliveries, which the receivers know. Every rank runs K+2 phases
// whatever its counts and its node.
#include <set>

#include "algorithms/alltoall/alltoallv_algorithms.hpp"
#include "algorithms/alltoall/node_grid_routing.hpp"

namespace collshim {

Schedule node_grid_alltoallv_schedule(const std::vector<int>& node_of_rank, int rank, const Params& params) {
  const std::optional<GridDims> dims = parse_node_grid_dims(params.at("dims"));  // validated with the choice
  const NodeGridRouting routing(node_of_rank, dims.value_or(GridDims{1, false}));
  ForwardingRoute route;
  route.phases = routing.phases();
  route.next_hop = [&](int phase, int origin, int destination) {
    return routing.next_hop(phase, rank, origin, destination);
  };
  route.incoming = [&](int phase) { return routing.incoming(phase, rank); };
  return forwarding_alltoallv_schedule(static_cast<int>(node_of_rank.size()), rank, route);
}

RankSymmetry node_grid_symmetry(const std::vector<int>& node_of_rank, const Params& params) {
  const int p = static_cast<int>(node_of_rank.size());
  // One rank per node: nodes are numbered in rank order (make_node_layout), so node index = rank.
  if (std::set<int>(node_of_rank.begin(), node_of_rank.end()).size() != node_of_rank.size()) return {};
  return grid_digit_symmetry(p, grid_shape(p, parse_node_grid_dims(params.at("dims")).value_or(GridDims{1, false})));
}

}  // namespace collshim
