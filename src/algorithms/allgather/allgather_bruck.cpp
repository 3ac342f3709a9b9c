// Radix-k Bruck Allgather (Bruck et al. 1997; the k-port generalisation): any p, ceil(log_k p) stages.
// Before the stage with distance D a rank holds the D blocks owned by rank, rank+1, ..., rank+D-1 (mod
// p). For j = 1..k-1 with j*D < p it sends the first min(D, p-j*D) of them to rank-j*D and receives
// the blocks of rank+j*D, rank+j*D+1, ... from rank+j*D, so afterwards it holds min(k*D, p) blocks.
//
// The classic implementation works in a scratch buffer in this local order and ends with a rotation
// (and starts with a shift) to put block i at position i. Here blocks are named by owner and the
// executor writes each one straight to its final displacement in recvbuf, so both memory shifts
// vanish: no copy, no scratch buffer. A message's blocks are consecutive ranks modulo p, i.e. at most
// two contiguous runs of recvbuf (one datatype with two pieces when the run wraps past rank p-1).
#include <algorithm>

#include "algorithms/allgather/allgather_algorithms.hpp"

namespace collshim {
BlockSchedule bruck_schedule(int p, int rank, const Params& params) {
  const int radix = param_int(params, "radix");
  BlockSchedule schedule;
  // long long: distance * radix may pass INT_MAX for very large p.
  for (long long distance = 1; distance < p; distance *= radix) {
    BlockStep step;
    for (long long j = 1; j < radix && j * distance < p; ++j) {
      const long long offset = j * distance;
      const long long count = std::min<long long>(distance, p - offset);
      BlockTransfer send{wrap_rank(rank - offset, p), {}};
      BlockTransfer recv{wrap_rank(rank + offset, p), {}};
      send.blocks.reserve(count);
      recv.blocks.reserve(count);
      for (long long i = 0; i < count; ++i) {
        send.blocks.push_back(wrap_rank(rank + i, p));
        recv.blocks.push_back(wrap_rank(rank + offset + i, p));
      }
      step.sends.push_back(std::move(send));
      step.recvs.push_back(std::move(recv));
    }
    schedule.steps.push_back(std::move(step));
  }
  return schedule;
}

}  // namespace collshim
