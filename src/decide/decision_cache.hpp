#pragma once
// Per-communicator cache of decisions: p and the mapping are fixed for a communicator, so a decision
// depends only on (collective, block_bytes), for reductions the operation's properties (a small
// number: ReductionProperty, decision_policy.hpp), and whether the call is started (a nonblocking or
// persistent call runs the choice's nonblocking form). Direct-mapped and fixed-size, so a hit costs
// a few compares and nothing is ever allocated.
#include <array>
#include <cstdint>

#include "selector/selector.hpp"

namespace collshim {

class DecisionCache {
 public:
  const Decision* find(Collective collective, long long block_bytes, int properties = 0, bool started = false) const {
    const int k = key(collective, properties, started);
    const Slot& found = slots_[slot(k, block_bytes)];
    return found.key == k && found.block_bytes == block_bytes ? &found.decision : nullptr;
  }
  void store(Collective collective, long long block_bytes, const Decision& decision, int properties = 0,
             bool started = false) {
    const int k = key(collective, properties, started);
    slots_[slot(k, block_bytes)] = {k, block_bytes, decision};
  }

 private:
  static constexpr std::size_t size = 32;
  static int key(Collective collective, int properties, bool started) {
    return static_cast<int>(collective) | properties << 8 | static_cast<int>(started) << 16;
  }
  static std::size_t slot(int key, long long block_bytes) {
    auto x = static_cast<std::uint64_t>(block_bytes) * 0x9E3779B97F4A7C15ull + static_cast<std::uint64_t>(key);
    return static_cast<std::size_t>(x >> 59);  // top 5 bits: 32 slots
  }
  struct Slot {
    int key = -1;
    long long block_bytes = 0;
    Decision decision{};
  };
  std::array<Slot, size> slots_{};
};

}  // namespace collshim
