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
#include <numeric>

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
  const auto layout = shared_node_layout(node_of_rank);
  const int nodes = static_cast<int>(layout->members.size());
  const int m = static_cast<int>(layout->members.front().size());  // node_aware_symmetry: every node alike
  const GridDims dims = parse_node_grid_dims(params.at("dims")).value_or(GridDims{1, false});
  RankSymmetry among_nodes = grid_digit_symmetry(nodes, grid_shape(nodes, dims));
  // Node A's place in the grid among nodes changes by digits, and the lane of the pair (A, B),
  // (A + B) mod m, must not: adding x at digit j (place P, radix r) moves A by x·P, or by x·P - r·P
  // where the digit wraps, so x must be a multiple of m / gcd(m, P) and that must divide r.
  for (std::size_t j = 0, place = 1; j < among_nodes.radices.size(); place *= among_nodes.radices[j], ++j) {
    const int radix = among_nodes.radices[j];
    const int stride = m / std::gcd(m, static_cast<int>(place % m));
    if (radix % stride != 0 || stride == radix) among_nodes.fixed.push_back(static_cast<int>(j));
    among_nodes.strides.push_back(stride);
  }
  return node_aware_symmetry(node_of_rank, among_nodes);
}

}  // namespace collshim
