#pragma once
// Routing of the node-aware grid Alltoallv: pure functions of the node map and the shape between
// nodes, no MPI.
//
// A grid whose first and last dimensions are the node. With N nodes (node n has m_n ranks) an item
// from rank o on node A to rank t on node B (A != B) travels:
//   phase 0 (combine, inside A): o -> the handler of the pair (A, B) on A;
//   phases 1..K (between nodes): along the grid routing among the N nodes (grid_routing.hpp with the
//     `dims` shape, K = its phases), from the pair's handler on one node to its handler on the next;
//   phase K+1 (deliver, inside B): the pair's handler on B -> t.
// An item for a rank of its own node goes straight to it in phase 0. So everything one node sends to
// another is combined on one rank before it crosses the network: with dims=1 (direct) every ordered
// pair of nodes exchanges exactly one message, whatever the ranks per node.
//
// Handlers. The handler of the node pair (A, B) on node X is local rank (A + B) mod m_X of X. It
// depends on the pair, not on the phase, so an item stays on one "lane" between nodes and no
// reshuffle inside a node is needed between the inter-node phases. Every pair has exactly one
// handler on every node, whatever m_X (uneven nodes, one rank per node), and the pairs spread over a
// node's ranks: on A the destinations B, on B the sources A take every local rank in turn. With equal
// m the lanes match (local rank i talks to local rank i of other nodes), and for dims=1 the pair
// (A, B) and (B, A) share their two handlers, which exchange in both directions.
//
// The `locality` routing scheme of Peters's thesis ("Exploring Aggregation Techniques for Irregular
// All-To-All Communication", 2024: hypercube between nodes, direct inside) is dims=hypercube here,
// with combining added in front.
#include <cstdint>
#include <map>
#include <optional>
#include <string_view>
#include <vector>

#include "algorithms/alltoall/grid_routing.hpp"
#include "algorithms/node/node_layout.hpp"

namespace collshim {

// The `dims` parameter of node_grid: the grid among nodes, 1 (direct) to 16 dimensions or hypercube.
std::optional<GridDims> parse_node_grid_dims(std::string_view text);

class NodeGridRouting {
 public:
  NodeGridRouting(const std::vector<int>& node_of_rank, const GridDims& between_nodes);

  int size() const { return static_cast<int>(layout_.node_of_rank.size()); }
  int nodes() const { return static_cast<int>(layout_.members.size()); }
  const NodeLayout& layout() const { return layout_; }
  const GridRouting& between_nodes() const { return nodes_; }
  // Combine, K = between_nodes().phases() inter-node phases, deliver.
  int phases() const { return nodes_.phases() + 2; }

  // The handler of the node pair (source_node, destination_node) on `node`.
  int handler(int node, int source_node, int destination_node) const;
  // Where the item origin -> destination held by `current` goes in `phase` (current itself: it
  // stays). Requires the item to be where the routing puts it before that phase.
  int next_hop(int phase, int current, int origin, int destination) const {
    return next_hop(phase, current, origin, destination,
                    [this](int node_phase, int node, int to) { return nodes_.next_hop(node_phase, node, to); });
  }
  // The same with the hop among nodes given: node_hop(node_phase, node, destination_node) (the cost
  // model reads it from a table of groups, as GridRouting::next_hop walks the blocks per call).
  template <typename NodeHop>
  int next_hop(int phase, int current, int origin, int destination, const NodeHop& node_hop) const {
    const int source_node = layout_.node_of_rank[origin];
    const int destination_node = layout_.node_of_rank[destination];
    if (source_node == destination_node || phase == phases() - 1) return destination;
    if (phase == 0) return handler(source_node, source_node, destination_node);
    return handler(node_hop(phase - 1, layout_.node_of_rank[current], destination_node), source_node, destination_node);
  }
  // The items other ranks hand `rank` in `phase`, by sender, each list ascending (item o*p+d).
  std::map<int, std::vector<std::int64_t>> incoming(int phase, int rank) const;

 private:
  NodeLayout layout_;
  GridRouting nodes_;
};

}  // namespace collshim
