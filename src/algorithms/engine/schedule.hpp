#pragma once
// The collective-neutral schedule: what one rank does in one collective call, as pure data. One
// engine runs it (schedule_engine.hpp), one checker verifies all ranks' schedules against each other
// without MPI (schedule_check.hpp), and a cost model can read it. Nothing here knows bytes,
// datatypes or addresses: a schedule names blocks of buffers, and the call's layout (call_layout.hpp)
// says where each block is and how large it is.
//
// Blocks. A block index names one rank's piece of data in the collective's own terms (BlockNaming
// in call_layout.hpp): for the allgather family block b is rank b's contribution; for Alltoallv the
// send buffer's block d goes to rank d, the receive buffer's block o comes from rank o, and scratch
// block o*p+d is the data rank o sends to rank d, wherever it travels; for a reduction block b of
// send, recv and temp is segment b of the reduction vector (temp copy c's segment b is c*p+b).
//
// Order within a step: local copies (and reductions) first, then every send and receive is posted,
// and all complete before the next step starts. Data received in a step is usable from the next
// step on. The step index is the message tag, so every rank runs the same number of steps.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "algorithms/engine/block_list.hpp"

namespace collshim {

enum class Buffer : std::uint8_t {
  send,     // the user's send buffer (with MPI_IN_PLACE: where the call's outgoing data is)
  recv,     // the user's receive buffer
  scratch,  // the engine's packed bytes: blocks of any rank, in the MPI library's native representation
  shared,   // packed bytes in memory an opaque phase provides (a node's shared-memory window)
  temp,     // typed temporaries laid out like recv (Schedule::temp_copies of them): reductions need the
            // user's datatype layout, which packed bytes do not keep
};

// Packed buffers hold bytes in the MPI library's native representation; the others the user's type.
inline bool is_packed(Buffer buffer) { return buffer == Buffer::scratch || buffer == Buffer::shared; }

// Blocks of one buffer, in order. A message over a region is one run of the user's datatype where
// the blocks lie back to back, otherwise one derived datatype; scratch blocks travel as bytes.
struct Region {
  Buffer buffer = Buffer::recv;
  BlockList blocks;
  bool operator==(const Region&) const = default;
};

// One message with one peer. Sender and receiver list the same data in the same order, each in its
// own buffer's terms (an Alltoallv's send block d arrives as receive block o); both regions are
// typed (send/recv) or both packed (scratch/shared), so the signatures always match.
struct Transfer {
  int peer = 0;
  Region region;
};

// Block i of `from` to block i of `to`, element by element (packing or unpacking between a typed
// and a packed buffer). A copy whose source and destination are the same place does nothing.
struct LocalCopy {
  Region from;
  Region to;
};

// Block i of `into` becomes from[i] (op) into[i], with the call's operation; `from` is the
// left operand, so non-commutative operations keep rank order where the schedule lists it so.
struct LocalReduce {
  Region from;
  Region into;
};

// Work the engine hands to the algorithm: a collective of the MPI library on a sub-communicator, or
// a node's shared-memory window. The step's sends and receives then model the phase's effect for
// the checker and the cost model (which flags it as approximated); the engine does not post them.
struct OpaquePhase {
  int id = 0;             // the algorithm's own phase number
  std::string_view what;  // for traces and the cost model, e.g. "leaders' MPI_Allgatherv"
};

struct Step {
  std::vector<LocalCopy> copies;
  std::vector<LocalReduce> reductions;
  std::vector<Transfer> sends;
  std::vector<Transfer> recvs;
  std::optional<OpaquePhase> opaque;
};

struct Schedule {
  std::vector<Step> steps;
  int temp_copies = 0;  // receive-buffer-shaped temporaries the engine provides (Buffer::temp)
};

// Relabelings of the ranks under which an algorithm's schedules repeat: rank g(r) does in every step
// what rank r does, with every peer mapped by g and data of the same sizes (when all blocks have one
// size). The cost model then costs one rank per orbit instead of all p (model/cost/rank_orbits.hpp).
//   rotation: g(r) = (r + x) mod p for every multiple x of `period` (ring, Bruck: peers at fixed
//             distances);
//   digits:   r written in the mixed radix `radices` (least significant first, product p), g adds x
//             digit by digit without carry (recursive doubling: XOR; recursive multiplying: its
//             stages' groups), x zero at the `fixed` digits (a node-aware algorithm's local index)
//             and a multiple of `strides[j]` at digit j (node_grid: relabelings that keep each node
//             pair's lane).
struct RankSymmetry {
  enum class Kind : std::uint8_t { none, rotation, digits };
  Kind kind = Kind::none;
  int period = 1;
  std::vector<int> radices;
  std::vector<int> fixed;    // digits: indices into radices
  std::vector<int> strides;  // digits: per index into radices, each a divisor of its radix (none: 1)

  bool fixes(std::size_t digit) const {
    return std::find(fixed.begin(), fixed.end(), static_cast<int>(digit)) != fixed.end();
  }
  int stride(std::size_t digit) const { return digit < strides.size() ? std::max(1, strides[digit]) : 1; }
};

}  // namespace collshim
