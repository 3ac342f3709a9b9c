#include "algorithms/alltoall/node_grid_routing.hpp"

#include <algorithm>

namespace collshim {

std::optional<GridDims> parse_node_grid_dims(std::string_view text) {
  if (text == "1") return GridDims{1, false};
  return parse_grid_dims(text);
}

NodeGridRouting::NodeGridRouting(const std::vector<int>& node_of_rank, const GridDims& between_nodes)
    : layout_(make_node_layout(node_of_rank)),
      nodes_(std::max<int>(1, static_cast<int>(layout_.members.size())),
             grid_shape(std::max<int>(1, static_cast<int>(layout_.members.size())), between_nodes)) {}

int NodeGridRouting::handler(int node, int source_node, int destination_node) const {
  const std::vector<int>& members = layout_.members[node];
  return members[static_cast<std::size_t>(source_node + destination_node) % members.size()];
}

std::map<int, std::vector<std::int64_t>> NodeGridRouting::incoming(int phase, int rank) const {
  const int p = size();
  const int node = layout_.node_of_rank[rank];
  const std::vector<int>& local = layout_.members[node];
  const auto item = [p](std::int64_t origin, std::int64_t destination) { return origin * p + destination; };
  std::map<int, std::vector<std::int64_t>> result;

  if (phase == 0) {  // from each local rank: its block for this rank, and its blocks for the nodes handled here
    for (const int origin : local) {
      if (origin == rank) continue;
      std::vector<std::int64_t>& items = result[origin];
      for (int destination = 0; destination < p; ++destination) {
        const int destination_node = layout_.node_of_rank[destination];
        if (destination == rank || (destination_node != node && handler(node, node, destination_node) == rank))
          items.push_back(item(origin, destination));
      }
    }
  } else if (phase == phases() - 1) {  // this rank's blocks from other nodes, from the handler that holds each
    for (int origin = 0; origin < p; ++origin) {
      const int source_node = layout_.node_of_rank[origin];
      if (source_node == node) continue;
      const int holder = handler(node, source_node, node);
      if (holder != rank) result[holder].push_back(item(origin, rank));
    }
  } else {
    // Node pairs whose bundle moves to this node in this phase, on this rank's lane. As in the grid,
    // a bundle's node at the start of a phase depends on its source node and on its destination's
    // block at that depth only, which is this node's for every destination it can hand here: so one
    // path per source node, toward this node, finds the sender (O(N * (K + block)) hops, not N^2 K).
    // A hop lands in its destination's sub-block, so only destination nodes in this node's can come
    // here: O(N * sub-block) per rank, where the whole block made one rank per node O(N^2).
    const int node_phase = phase - 1;
    const GridPhase group = nodes_.phase(node_phase, node);
    const int first = group.part_begin(group.part_of(node)), last = first + group.part_length(group.part_of(node));
    for (int source_node = 0; source_node < nodes(); ++source_node) {
      int at = source_node;
      for (int i = 0; i < node_phase; ++i) at = nodes_.next_hop(i, at, node);
      // A hop depends on its destination's part only, and [first, last) is one part: the bundles of
      // this source for every destination there come here from `at`, or none do.
      if (at == node || nodes_.next_hop(node_phase, at, first) != node) continue;
      for (int destination_node = first; destination_node < last; ++destination_node) {
        if (destination_node == source_node || handler(node, source_node, destination_node) != rank) continue;
        std::vector<std::int64_t>& items = result[handler(at, source_node, destination_node)];
        for (const int origin : layout_.members[source_node]) {
          for (const int destination : layout_.members[destination_node]) items.push_back(item(origin, destination));
        }
      }
    }
  }
  std::erase_if(result, [](const auto& entry) { return entry.second.empty(); });
  for (auto& [sender, items] : result) std::sort(items.begin(), items.end());
  return result;
}

}  // namespace collshim
