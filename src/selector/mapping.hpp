#pragma once
// Process mapping of a communicator: which node each rank runs on, and the class of that layout.
// The classification is a pure function of the rank-to-node map, so it is tested without MPI.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace collshim {

enum class MappingClass { single_node, sequential, cyclic, irregular };
std::string_view mapping_name(MappingClass mapping);
std::optional<MappingClass> parse_mapping(std::string_view text);

struct CommMapping {
  MappingClass mapping = MappingClass::single_node;
  int nodes = 1;
  int ppn = 1;  // most ranks on one node
  bool oversubscribed = false;
  std::vector<int> node_of_rank;  // node index 0..nodes-1, numbered by first appearance
};

// node_of_rank holds any node identifiers (e.g. the lowest world rank on the node). Classes:
// single_node: one node. sequential: each node's ranks are consecutive (one rank per node counts as
// sequential). cyclic: rank r on node r mod nodes, nodes > 1 and some node has two ranks.
// irregular: anything else.
CommMapping classify_mapping(const std::vector<int>& node_of_rank, bool oversubscribed);

// COLLSHIM_TOPOLOGY: "nodes=N,mapping=CLASS[,oversubscribed=yes|no]" describes a fictitious placement
// of COMM_WORLD so tests on one machine can exercise every class.
struct TopologyOverride {
  int nodes = 1;
  MappingClass mapping = MappingClass::sequential;
  std::optional<bool> oversubscribed;
  // The node of a world rank under this placement (irregular: a fixed scramble that is neither
  // sequential nor cyclic).
  int node_of_world_rank(int world_rank, int world_size) const;
};
struct TopologyParseResult {
  std::optional<TopologyOverride> topology;
  std::string error;
};
TopologyParseResult parse_topology_override(std::string_view text);

}  // namespace collshim
