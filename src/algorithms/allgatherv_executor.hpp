#pragma once
#include "algorithms/collective_call.hpp"
#include "algorithms/comm_context.hpp"
#include "algorithms/schedule.hpp"

namespace collshim {

// Runs an allgather-family schedule over the call's real counts, displacements and datatype on the
// context's shadow communicator. Every message is sent from and received into its final place in
// recvbuf: a single block (or blocks that lie back to back) goes as one run of recvtype, scattered
// blocks as an hindexed datatype built over recvtype for that step. Messages of zero elements are
// skipped by both sides, which agree because all ranks hold the same counts. Returns an MPI error code.
int run_allgatherv_schedule(const Schedule& schedule, const AllgathervCall& call, CommContext& context);

}  // namespace collshim
