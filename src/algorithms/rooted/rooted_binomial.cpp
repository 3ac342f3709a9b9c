// Binomial Gatherv and Scatterv: the fixed, block-size-oblivious tree of MPI libraries' regular
// Gather and Scatter, on ranks relative to the root. ceil(log2 p) rounds, but a block may be
// forwarded up to ceil(log2 p) times: the worst case Träff's data-aware trees avoid.
#include <map>
#include <utility>

#include "algorithms/engine/call_layout.hpp"
#include "algorithms/engine/comm_context.hpp"
#include "algorithms/rooted/rooted_algorithms.hpp"

namespace collshim {

TreeNode binomial_tree_node(int p, int rank, int root) {
  const int relative = (rank - root + p) % p;
  const auto blocks_of = [&](int first, int count) {  // relative ranks [first, first+count), as blocks
    std::vector<std::int64_t> blocks;
    for (int v = first; v < first + count && v < p; ++v) blocks.push_back((v + root) % p);
    return blocks;
  };
  TreeNode node;
  for (int level = 0; (1LL << level) < p; ++level) {
    const int distance = 1 << level;
    if (relative & distance) {  // the lowest set bit: the parent, which holds relative - distance
      node.parent = TreeEdge{level, (relative - distance + root) % p, blocks_of(relative, distance)};
      break;
    }
    if (relative + distance < p)
      node.children.push_back({level, (relative + distance + root) % p, blocks_of(relative + distance, distance)});
  }
  return node;
}

namespace {

class BinomialRootedState final : public AlgorithmState {
 public:
  const Schedule& schedule_for(const CallLayout& call) override {
    const std::pair key{call.naming, call.root};
    auto found = schedules_.find(key);
    if (found == schedules_.end()) {
      const TreeNode node = binomial_tree_node(call.p, call.rank, call.root);
      Schedule schedule = call.naming == BlockNaming::gather
                              ? gather_tree_schedule(node, call.p, call.rank, call.root)
                              : scatter_tree_schedule(node, call.p, call.rank, call.root);
      found = schedules_.emplace(key, std::move(schedule)).first;
    }
    return found->second;
  }

 private:
  std::map<std::pair<BlockNaming, int>, Schedule> schedules_;  // per collective and root
};

}  // namespace

int make_binomial_rooted_state(const AlgorithmChoice&, CommContext&, std::unique_ptr<AlgorithmState>& state) {
  state = std::make_unique<BinomialRootedState>();
  return MPI_SUCCESS;
}

}  // namespace collshim
