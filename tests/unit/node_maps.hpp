#pragma once
// Node maps of every shape for the node-aware schedules' unit tests (hierarchical, node_grid): one
// node, one rank per node, sequential, cyclic, irregular and uneven placements.
#include <string>
#include <vector>

#include "selector/mapping.hpp"

namespace collshim::test {

// The node of each rank, nodes numbered 0..: `per_node` consecutive ranks per node (sequential).
inline std::vector<int> sequential(int p, int per_node) {
  std::vector<int> nodes;
  for (int r = 0; r < p; ++r) nodes.push_back(r / per_node);
  return nodes;
}

// Rank r on node r % node_count (round robin).
inline std::vector<int> round_robin(int p, int node_count) {
  std::vector<int> nodes;
  for (int r = 0; r < p; ++r) nodes.push_back(r % node_count);
  return nodes;
}

struct NodeMap {
  std::string name;
  std::vector<int> node_of_rank;
};

// Node identifiers are deliberately not 0..n-1 in order of appearance (the layout renumbers them).
inline std::vector<NodeMap> node_maps(int p) {
  std::vector<NodeMap> maps;
  auto by_override = [&](int nodes, MappingClass mapping, const std::string& name) {
    const TopologyOverride topology{nodes, mapping, std::nullopt};
    NodeMap map{name + std::to_string(nodes), {}};
    for (int r = 0; r < p; ++r) map.node_of_rank.push_back(100 + 7 * topology.node_of_world_rank(r, p));
    maps.push_back(std::move(map));
  };
  by_override(1, MappingClass::single_node, "single_node");
  for (int nodes : {2, 3, 4, 7}) {
    by_override(nodes, MappingClass::sequential, "sequential");
    by_override(nodes, MappingClass::cyclic, "cyclic");
    by_override(nodes, MappingClass::irregular, "irregular");
  }
  NodeMap one_per_node{"one_rank_per_node", {}};
  NodeMap uneven{"half_on_one_node_rest_alone", {}};
  NodeMap reversed{"leaders_last", {}};  // node ids descend with rank: the last node appears first
  for (int r = 0; r < p; ++r) {
    one_per_node.node_of_rank.push_back(r);
    uneven.node_of_rank.push_back(r < p / 2 ? -1 : r);
    reversed.node_of_rank.push_back((p - 1 - r) / 3);
  }
  maps.push_back(std::move(one_per_node));
  maps.push_back(std::move(uneven));
  maps.push_back(std::move(reversed));
  return maps;
}

}  // namespace collshim::test
