#pragma once
// Runs the schedules of all p ranks against each other without MPI and checks what every schedule
// must guarantee, whatever the collective: messages match (same peer pairs, step and order, the same
// blocks on both sides, both typed or both packed), nothing is sent or copied before it is held,
// no block is received twice, nothing is written into the user's send buffer, every block holds the
// right data (BlockNaming) and, at the end, every receive block holds what the collective puts
// there. For reductions (BlockNaming::reduction) every slot also holds the set of ranks whose
// contributions it combines: a reduction needs both operands held, disjoint ("exactly once") and,
// where order matters, adjacent rank intervals in order (from = [a, b], into = [b+1, c]); at the end
// every receive segment holds all p contributions. The unit tests run it for every algorithm and p = 1..130; its
// statistics count what the schedules send.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "algorithms/engine/block_schedule.hpp"
#include "algorithms/engine/call_layout.hpp"
#include "algorithms/engine/schedule.hpp"

namespace collshim {

struct ScheduleStats {
  int steps = 0;                      // per rank (the same on every rank)
  std::vector<long> messages_sent;    // per rank; with datum sizes, the empty messages the engine skips are left out
  std::vector<long> blocks_sent;      // per rank
  std::vector<long long> bytes_sent;  // per rank, size headers included; with datum sizes only
};

struct CheckResult {
  std::vector<std::string> errors;  // empty when the schedules are correct; at most 20
  ScheduleStats stats;
  bool ok() const { return errors.empty(); }
};

struct CheckSetup {
  BlockNaming naming = BlockNaming::allgather;
  int p = 1;
  // Bytes of a datum (allgather: rank b's block; alltoall: o*p+d), for the engine's skipping of
  // empty messages and the byte statistics. Empty: sizes are not modelled.
  std::function<long long(std::int64_t datum)> datum_bytes;
  // Optional, with datum_bytes: the bytes of datums [first, first + count) together, so that a
  // message over a long run of blocks costs one call (the cost model at large p).
  std::function<long long(std::int64_t first, std::int64_t count)> datum_run_bytes;
  // Reductions: whether the operation's order matters (non-commutative): partial results must then
  // combine rank intervals in rank order.
  bool ordered = false;
  int root = 0;  // of a rooted collective (BlockNaming gather, scatter)
  // Every rank knows every block's size (an MPI library's own regular collective): forwarded blocks
  // need no size headers, which collshim's engine sends because it runs Alltoall as Alltoallv.
  bool every_size_known = false;
  // The code posts a message for every pair, empty or not (Open MPI's pairwise Alltoallv sends
  // zero-byte messages): none is skipped.
  bool sends_empty_messages = false;
};

// A call whose every datum has `bytes` (an Allgather's blocks, an Alltoall's pairs), with runs summed at once.
CheckSetup uniform_setup(BlockNaming naming, int p, long long bytes);

// A message as the engine puts it on the wire: its bytes, size headers included, and whether the
// engine skips it (both sides know it is empty; only with datum sizes). `region` is in the buffers of
// `holder` (the sender, or the receiver for its receive), `receiver` gets the message. The checker's
// statistics and the cost model count messages through this one rule.
struct WireMessage {
  bool skipped = false;
  long long bytes = 0;
  bool header = false;  // the blocks' sizes travel in front: the receiver probes for the length
};
WireMessage wire_message(const CheckSetup& setup, int holder, const Region& region, int receiver);
// The bytes of the data `region` holds on `holder` (no headers; 1 per datum without datum sizes).
long long payload_bytes(const CheckSetup& setup, int holder, const Region& region);

CheckResult check_schedules(const CheckSetup& setup, const std::function<Schedule(int rank)>& schedule_of);

// An allgather-family block schedule, lowered (lower_block_schedule) and checked.
CheckResult check_block_schedules(int p, const std::function<BlockSchedule(int rank)>& schedule_of);

}  // namespace collshim
