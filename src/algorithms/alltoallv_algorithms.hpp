#pragma once
// Alltoallv schedules (and Alltoall's, which runs as Alltoallv with equal counts). They do not depend
// on the counts, which are rank-local: every rank of a call runs the same steps whatever its counts,
// and the engine skips a message both sides know is empty.
#include <vector>

#include "algorithms/registry.hpp"
#include "algorithms/schedule.hpp"

namespace collshim {

Schedule linear_alltoallv_schedule(const std::vector<int>& node_of_rank, int rank, const Params& params);
Schedule pairwise_alltoallv_schedule(const std::vector<int>& node_of_rank, int rank, const Params& params);
Schedule bruck_alltoall_schedule(const std::vector<int>& node_of_rank, int rank, const Params& params);
Schedule grid_alltoallv_schedule(const std::vector<int>& node_of_rank, int rank, const Params& params);

// Step 0's copy of the own block from the send to the receive buffer (nothing for MPI_IN_PLACE).
LocalCopy own_alltoallv_block(int rank);

}  // namespace collshim
