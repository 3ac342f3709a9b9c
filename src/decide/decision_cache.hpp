#pragma once
// Per-communicator cache of decisions: p and the mapping are fixed for a communicator, so a decision
// depends only on (collective, block_bytes) and, for reductions, the operation's properties
// (a small number: ReductionProperty, decision_policy.hpp). Direct-mapped and fixed-size, so a hit costs a few
// compares and nothing is ever allocated.
#include <array>
#include <cstdint>

#include "selector/selector.hpp"

namespace collshim {

class DecisionCache {
 public:
  const Decision* find(Collective collective, long long block_bytes, int properties = 0) const {
    const Entry& entry = entries_[slot(collective, block_bytes, properties)];
    return entry.collective == key(collective, properties) && entry.block_bytes == block_bytes ? &entry.decision
                                                                                               : nullptr;
  }
  void store(Collective collective, long long block_bytes, const Decision& decision, int properties = 0) {
    entries_[slot(collective, block_bytes, properties)] = {key(collective, properties), block_bytes, decision};
  }

 private:
  static constexpr std::size_t size = 32;
  static int key(Collective collective, int properties) { return static_cast<int>(collective) | properties << 8; }
  static std::size_t slot(Collective collective, long long block_bytes, int properties) {
    auto x = static_cast<std::uint64_t>(block_bytes) * 0x9E3779B97F4A7C15ull +
             static_cast<std::uint64_t>(key(collective, properties));
    return static_cast<std::size_t>(x >> 59);  // top 5 bits: 32 slots
  }
  struct Entry {
    int collective = -1;
    long long block_bytes = 0;
    Decision decision{};
  };
  std::array<Entry, size> entries_{};
};

}  // namespace collshim
