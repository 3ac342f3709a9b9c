// Gather trees as schedules. Data moves packed (scratch): a subtree's blocks come from different
// ranks' send types, and only the root's receive type describes them all; the root unpacks them.
#include <algorithm>

#include "algorithms/rooted/rooted_algorithms.hpp"

namespace collshim {

int tree_levels(int p) {
  int levels = 0;
  while ((1LL << levels) < p) ++levels;
  return levels;
}

namespace {

// The blocks a rank ends up holding (gather) or starts with (scatter): every child's subtree.
std::vector<std::int64_t> children_blocks(const TreeNode& node) {
  std::vector<std::int64_t> blocks;
  for (const TreeEdge& child : node.children) blocks.insert(blocks.end(), child.blocks.begin(), child.blocks.end());
  return blocks;
}

}  // namespace

Schedule gather_tree_schedule(const TreeNode& node, int p, int rank, int root) {
  const int levels = tree_levels(p);
  Schedule schedule;
  schedule.steps.resize(static_cast<std::size_t>(levels) + 1);
  if (rank == root) {
    schedule.steps[0].copies.push_back({{Buffer::send, {rank}}, {Buffer::recv, {rank}}});
  } else {
    schedule.steps[0].copies.push_back({{Buffer::send, {rank}}, {Buffer::scratch, {rank}}});
  }
  for (const TreeEdge& child : node.children)
    schedule.steps[child.level].recvs.push_back({child.peer, {Buffer::scratch, child.blocks}});
  if (node.parent)
    schedule.steps[node.parent->level].sends.push_back({node.parent->peer, {Buffer::scratch, node.parent->blocks}});
  if (rank == root) {
    const std::vector<std::int64_t> received = children_blocks(node);
    if (!received.empty())
      schedule.steps[levels].copies.push_back({{Buffer::scratch, received}, {Buffer::recv, received}});
  }
  return schedule;
}

Schedule scatter_tree_schedule(const TreeNode& node, int p, int rank, int root) {
  const int levels = tree_levels(p);
  Schedule schedule;
  schedule.steps.resize(static_cast<std::size_t>(levels) + 1);
  if (rank == root) {
    schedule.steps[0].copies.push_back({{Buffer::send, {rank}}, {Buffer::recv, {rank}}});
    const std::vector<std::int64_t> sent = children_blocks(node);
    if (!sent.empty()) schedule.steps[0].copies.push_back({{Buffer::send, sent}, {Buffer::scratch, sent}});
  }
  // Higher levels first: the big subtrees start early, as in the time-reversed gather (the order
  // that keeps Träff's bound for scatter).
  for (const TreeEdge& child : node.children)
    schedule.steps[levels - 1 - child.level].sends.push_back({child.peer, {Buffer::scratch, child.blocks}});
  if (node.parent)
    schedule.steps[levels - 1 - node.parent->level].recvs.push_back(
        {node.parent->peer, {Buffer::scratch, node.parent->blocks}});
  if (rank != root) schedule.steps[levels].copies.push_back({{Buffer::scratch, {rank}}, {Buffer::recv, {rank}}});
  return schedule;
}

}  // namespace collshim
