#pragma once
#include <vector>

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

// The parts of run_allgatherv_schedule, for algorithms that run something else between steps:
// the own block from sendbuf to its place in recvbuf (nothing for MPI_IN_PLACE), then steps
// [first, last) of the schedule (step indices are the message tags, so ranks must agree on them).
int copy_own_block(const AllgathervCall& call, CommContext& context);
int run_schedule_steps(const Schedule& schedule, std::size_t first, std::size_t last, const AllgathervCall& call,
                       CommContext& context);

// A committed hindexed type over recvtype covering `blocks` in that order (at their displacements from
// recvbuf), one entry per back-to-back run. The caller frees it. Uses the context's type scratch.
int create_blocks_type(const AllgathervCall& call, const std::vector<int>& blocks, MPI_Aint extent,
                       CommContext& context, MPI_Datatype& type);

// Runs `choice` (an allgather-family algorithm, not native): its own runner if it has one, else its schedule.
int run_allgatherv(const AllgathervCall& call, const AlgorithmChoice& choice, CommContext& context);

}  // namespace collshim
