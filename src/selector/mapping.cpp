#include "selector/mapping.hpp"

#include <algorithm>
#include <charconv>
#include <map>

namespace collshim {

std::string_view mapping_name(MappingClass mapping) {
  switch (mapping) {
    case MappingClass::single_node: return "single_node";
    case MappingClass::sequential: return "sequential";
    case MappingClass::cyclic: return "cyclic";
    case MappingClass::irregular: return "irregular";
  }
  return "?";
}

std::optional<MappingClass> parse_mapping(std::string_view text) {
  for (MappingClass m :
       {MappingClass::single_node, MappingClass::sequential, MappingClass::cyclic, MappingClass::irregular}) {
    if (text == mapping_name(m)) return m;
  }
  return std::nullopt;
}

CommMapping classify_mapping(const std::vector<int>& node_of_rank, bool oversubscribed) {
  CommMapping result;
  result.oversubscribed = oversubscribed;
  std::map<int, int> index_of_node;
  result.node_of_rank.reserve(node_of_rank.size());
  for (int id : node_of_rank) {
    const auto [it, added] = index_of_node.try_emplace(id, static_cast<int>(index_of_node.size()));
    result.node_of_rank.push_back(it->second);
  }
  const int p = static_cast<int>(node_of_rank.size());
  result.nodes = std::max(1, static_cast<int>(index_of_node.size()));
  std::vector<int> ranks_on(result.nodes, 0);
  for (int node : result.node_of_rank) ++ranks_on[node];
  result.ppn = p == 0 ? 0 : *std::max_element(ranks_on.begin(), ranks_on.end());

  if (result.nodes == 1) {
    result.mapping = MappingClass::single_node;
    return result;
  }
  // Numbered by first appearance, a sequential layout never returns to an earlier node.
  bool sequential = true, cyclic = true;
  for (int r = 0; r < p; ++r) {
    if (r > 0 && result.node_of_rank[r] < result.node_of_rank[r - 1]) sequential = false;
    if (result.node_of_rank[r] != r % result.nodes) cyclic = false;
  }
  result.mapping = sequential ? MappingClass::sequential : cyclic ? MappingClass::cyclic : MappingClass::irregular;
  return result;
}

int TopologyOverride::node_of_world_rank(int world_rank, int world_size) const {
  const int n = std::min(nodes, std::max(world_size, 1));
  switch (mapping) {
    case MappingClass::single_node: return 0;
    case MappingClass::sequential:
      return static_cast<int>(static_cast<long long>(world_rank) * n / std::max(world_size, 1));
    case MappingClass::cyclic: return world_rank % n;
    case MappingClass::irregular:
      // Pairs of ranks dealt out round-robin, offset by one (0 | 1 2 | 3 4 | ...): neither
      // sequential nor cyclic once there are 4 ranks or more.
      return ((world_rank + 1) / 2) % n;
  }
  return 0;
}

TopologyParseResult parse_topology_override(std::string_view text) {
  TopologyOverride topology;
  bool have_nodes = false, have_mapping = false;
  const std::string expected =
      "expected nodes=N,mapping=single_node|sequential|cyclic|irregular[,oversubscribed=yes|no]";
  while (!text.empty()) {
    const auto comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
    const auto equals = item.find('=');
    if (equals == std::string_view::npos)
      return {std::nullopt, "malformed item '" + std::string(item) + "'; " + expected};
    const std::string_view key = item.substr(0, equals), value = item.substr(equals + 1);
    if (key == "nodes") {
      const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), topology.nodes);
      if (error != std::errc{} || end != value.data() + value.size() || topology.nodes < 1)
        return {std::nullopt, "bad nodes '" + std::string(value) + "'; expected a positive integer"};
      have_nodes = true;
    } else if (key == "mapping") {
      const auto mapping = parse_mapping(value);
      if (!mapping)
        return {std::nullopt,
                "unknown mapping '" + std::string(value) + "'; expected single_node, sequential, cyclic or irregular"};
      topology.mapping = *mapping;
      have_mapping = true;
    } else if (key == "oversubscribed") {
      if (value != "yes" && value != "no")
        return {std::nullopt, "bad oversubscribed '" + std::string(value) + "'; expected yes or no"};
      topology.oversubscribed = value == "yes";
    } else {
      return {std::nullopt, "unknown key '" + std::string(key) + "'; " + expected};
    }
  }
  if (!have_mapping) return {std::nullopt, "no mapping given; " + expected};
  if (!have_nodes) topology.nodes = topology.mapping == MappingClass::single_node ? 1 : 2;
  if (topology.mapping == MappingClass::single_node) topology.nodes = 1;
  return {topology, {}};
}

}  // namespace collshim
