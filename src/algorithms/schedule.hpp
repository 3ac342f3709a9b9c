#pragma once
// An allgather-family algorithm is a pure function (p, rank, params) -> Schedule. Blocks are named by
// the rank that contributed them, so a schedule says nothing about bytes, datatypes or displacements:
// the executor maps block indices onto the call's real buffers, and the unit tests check the same
// schedule without MPI.
#include <vector>

namespace collshim {

// One message: the listed blocks travel together, in this order, to or from one peer. Sender and
// receiver list the same blocks in the same order (checked by the schedule simulation), so each side
// can describe the message with its own datatype and displacements.
struct BlockTransfer {
  int peer = 0;
  std::vector<int> blocks;
};

// All transfers of a step are posted together and completed before the next step starts. Several
// transfers with the same peer are matched in list order (MPI's non-overtaking rule).
struct ScheduleStep {
  std::vector<BlockTransfer> sends;
  std::vector<BlockTransfer> recvs;
};

struct Schedule {
  std::vector<ScheduleStep> steps;
};

}  // namespace collshim
