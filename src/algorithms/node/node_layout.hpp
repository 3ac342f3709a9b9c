#pragma once
// Which ranks share a node, from a communicator's node map (one node identifier per rank), and the
// rank symmetry that node-aware algorithms (Allgather's and Allreduce's hierarchical) derive from it.
// Pure functions, no MPI: node_comms.hpp makes the communicators of a layout.
#include <memory>
#include <vector>

#include "algorithms/engine/schedule.hpp"

namespace collshim {

// Which ranks share a node. Nodes are numbered by first appearance; members ascend, so members[n][0]
// (the lowest rank) leads node n.
struct NodeLayout {
  std::vector<std::vector<int>> members;
  std::vector<int> node_of_rank;         // renumbered 0..nodes-1
  std::vector<int> local_index;          // position of each rank in its node's members
  std::vector<int> ranks_in_node_order;  // members of node 0, then of node 1, ...
};
NodeLayout make_node_layout(const std::vector<int>& node_of_rank);
// The same, kept for the last node map seen on this thread: schedule generators run once per rank
// over one map (p times in a row in the cost model and the checker), and building the layout each
// time made them O(p²).
std::shared_ptr<const NodeLayout> shared_node_layout(const std::vector<int>& node_of_rank);

// The rank symmetry (schedule.hpp) of a node-aware algorithm on a node map: the ranks of each node
// go to its lowest one, which runs an algorithm of symmetry `among_leaders` with the other nodes'
// lowest ranks by node index, and back by local index. Where every node holds the same number of
// ranks, as one run of consecutive ranks (sequential) or every n-th rank (round-robin over n nodes),
// relabeling node indices as `among_leaders` allows, local indices fixed, repeats the schedules:
// digits of the rank's local index and node index. None elsewhere.
RankSymmetry node_aware_symmetry(const std::vector<int>& node_of_rank, const RankSymmetry& among_leaders);

}  // namespace collshim
