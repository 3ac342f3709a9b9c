#pragma once
// The compact form of an allgather-family schedule: a pure function (p, rank, params) -> BlockSchedule
// whose blocks are named by the rank that contributed them, all in the receive buffer. It lowers to
// the common form (schedule.hpp) that the engine runs and the checker verifies.
#include <vector>

#include "algorithms/engine/schedule.hpp"

namespace collshim {

// One message: the listed blocks travel together, in this order, to or from one peer. Sender and
// receiver list the same blocks in the same order (checked by the schedule checker), so each side
// can describe the message with its own datatype and displacements.
struct BlockTransfer {
  int peer = 0;
  std::vector<int> blocks;
};

// All transfers of a step are posted together and completed before the next step starts. Several
// transfers with the same peer are matched in list order (MPI's non-overtaking rule).
struct BlockStep {
  std::vector<BlockTransfer> sends;
  std::vector<BlockTransfer> recvs;
};

struct BlockSchedule {
  std::vector<BlockStep> steps;
};

// The common form of rank `rank`'s block schedule: the own block is copied from the send buffer to
// its place in the receive buffer in the first step (nothing for MPI_IN_PLACE), and every transfer
// is over receive-buffer blocks.
Schedule lower_block_schedule(const BlockSchedule& blocks, int rank);

}  // namespace collshim
