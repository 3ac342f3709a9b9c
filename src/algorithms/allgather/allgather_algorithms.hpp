#pragma once
// What the allgather family's generators share (one generator per file).
#include "algorithms/engine/registry.hpp"
#include "algorithms/engine/block_schedule.hpp"

namespace collshim {

// value mod p in [0, p), for rank arithmetic that may go negative or past p.
inline int wrap_rank(long long value, int p) {
  const long long m = value % p;
  return static_cast<int>(m < 0 ? m + p : m);
}

// Generators that other code calls besides the registry; the rest are declared in registry.cpp.
BlockSchedule ring_schedule(int p, int rank, const Params& params);

}  // namespace collshim
