#pragma once
// MPICH's recursive-doubling Allgather at any p, for costing the libraries' own choice
// (native_decision.hpp); not a collshim algorithm. See the .cpp for the schedule.
#include "algorithms/engine/block_schedule.hpp"

namespace collshim::model {

BlockSchedule mpich_recursive_doubling_schedule(int p, int rank);

}  // namespace collshim::model
