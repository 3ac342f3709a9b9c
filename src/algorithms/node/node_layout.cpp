#include "algorithms/node/node_layout.hpp"

#include <unordered_map>
#include <utility>

#include "algorithms/engine/kept_per_thread.hpp"

namespace collshim {

NodeLayout make_node_layout(const std::vector<int>& node_of_rank) {
  NodeLayout layout;
  const int p = static_cast<int>(node_of_rank.size());
  layout.node_of_rank.resize(p);
  layout.local_index.resize(p);
  std::unordered_map<int, int> index;  // node identifier -> number, in order of first appearance
  for (int rank = 0; rank < p; ++rank) {
    const auto [entry, added] = index.try_emplace(node_of_rank[rank], static_cast<int>(index.size()));
    const int node = entry->second;
    if (added) layout.members.emplace_back();
    layout.node_of_rank[rank] = node;
    layout.local_index[rank] = static_cast<int>(layout.members[node].size());
    layout.members[node].push_back(rank);
  }
  for (const auto& members : layout.members)
    layout.ranks_in_node_order.insert(layout.ranks_in_node_order.end(), members.begin(), members.end());
  return layout;
}

std::shared_ptr<const NodeLayout> shared_node_layout(const std::vector<int>& node_of_rank) {
  return kept_per_thread(node_of_rank, [](const std::vector<int>& map) {
    return std::make_shared<const NodeLayout>(make_node_layout(map));
  });
}

RankSymmetry node_aware_symmetry(const std::vector<int>& node_of_rank, const RankSymmetry& among_leaders) {
  const auto shared_layout = shared_node_layout(node_of_rank);
  const NodeLayout& layout = *shared_layout;
  const int nodes = static_cast<int>(layout.members.size());
  if (nodes < 2) return {};
  const int ppn = static_cast<int>(layout.members.front().size());
  // Members are in rank order, nodes in order of their lowest rank.
  bool runs = true, strides = true;
  for (int node = 0; node < nodes; ++node) {
    const std::vector<int>& members = layout.members[static_cast<std::size_t>(node)];
    if (static_cast<int>(members.size()) != ppn) return {};
    for (int local = 0; local < ppn; ++local) {
      runs = runs && members[local] == node * ppn + local;
      strides = strides && members[local] == node + local * nodes;
    }
  }
  if (!runs && !strides) return {};
  // The node index's digits, least significant first: a rotation by multiples of q changes the high
  // digit of node = d0 + q·d1 (d0 < q).
  struct Digit {
    int radix;
    bool free;   // whether relabelings may change it
    int stride;  // by multiples of this
  };
  std::vector<Digit> node_digits;
  if (among_leaders.kind == RankSymmetry::Kind::rotation) {
    if (among_leaders.period < 1 || nodes % among_leaders.period != 0) return {};
    node_digits = {{among_leaders.period, false, 1}, {nodes / among_leaders.period, true, 1}};
  } else if (among_leaders.kind == RankSymmetry::Kind::digits) {
    for (std::size_t i = 0; i < among_leaders.radices.size(); ++i)
      node_digits.push_back({among_leaders.radices[i], !among_leaders.fixes(i), among_leaders.stride(i)});
  } else {
    return {};
  }
  // Sequential: rank = node·ppn + local; round-robin: rank = node + local·nodes.
  std::vector<Digit> digits;
  if (runs) digits.push_back({ppn, false, 1});
  digits.insert(digits.end(), node_digits.begin(), node_digits.end());
  if (!runs) digits.push_back({ppn, false, 1});
  RankSymmetry symmetry{RankSymmetry::Kind::digits};
  long long product = 1;
  for (const Digit& digit : digits) {
    product *= digit.radix;
    if (digit.radix < 2) continue;  // a digit that is always 0
    if (!digit.free) symmetry.fixed.push_back(static_cast<int>(symmetry.radices.size()));
    symmetry.radices.push_back(digit.radix);
    symmetry.strides.push_back(digit.stride);
  }
  if (product != static_cast<long long>(node_of_rank.size()) || symmetry.fixed.size() == symmetry.radices.size())
    return {};
  return symmetry;
}

}  // namespace collshim
