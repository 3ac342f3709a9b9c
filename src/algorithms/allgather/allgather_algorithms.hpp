#pragma once
// BlockSchedule generators of the allgather family, one per file.
#include "algorithms/engine/registry.hpp"
#include "algorithms/engine/block_schedule.hpp"

namespace collshim {

// value mod p in [0, p), for rank arithmetic that may go negative or past p.
inline int wrap_rank(long long value, int p) {
  const long long m = value % p;
  return static_cast<int>(m < 0 ? m + p : m);
}

BlockSchedule ring_schedule(int p, int rank, const Params& params);
BlockSchedule recursive_multiplying_schedule(int p, int rank, const Params& params);
BlockSchedule neighbor_exchange_schedule(int p, int rank, const Params& params);   // p even
BlockSchedule recursive_doubling_schedule(int p, int rank, const Params& params);  // p a power of two
BlockSchedule bruck_schedule(int p, int rank, const Params& params);               // params: radix
BlockSchedule sparbit_schedule(int p, int rank, const Params& params);             // params: coalesce

}  // namespace collshim
