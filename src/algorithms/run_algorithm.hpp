#pragma once
// The algorithms' one entry: a call's layout, the choice's per-communicator state, and the engine.
#include "algorithms/algorithm_spec.hpp"
#include "algorithms/collective_call.hpp"
#include "algorithms/comm_context.hpp"

namespace collshim {

// Runs `choice` (not native) on the call. Returns an MPI error code.
int run_algorithm(const AlgorithmChoice& choice, CallLayout& call, CommContext& context);
int run_allgatherv(const AllgathervCall& call, const AlgorithmChoice& choice, CommContext& context);
int run_alltoallv(const AlltoallvCall& call, const AlgorithmChoice& choice, CommContext& context);
int run_allreduce(const AllreduceCall& call, const AlgorithmChoice& choice, CommContext& context);
int run_gatherv(const GathervCall& call, const AlgorithmChoice& choice, CommContext& context);
int run_scatterv(const ScattervCall& call, const AlgorithmChoice& choice, CommContext& context);

}  // namespace collshim
