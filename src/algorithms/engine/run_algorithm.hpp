#pragma once
// The algorithms' one entry: a call's layout, the choice's per-communicator state, and the engine.
#include "algorithms/engine/algorithm_spec.hpp"
#include "algorithms/engine/call_layout.hpp"
#include "algorithms/engine/collective_call.hpp"
#include "algorithms/engine/comm_context.hpp"

namespace collshim {

// Runs `choice` (not native) on the call. Returns an MPI error code.
int run_algorithm(const AlgorithmChoice& choice, CallLayout& call, CommContext& context);

// The same from a collective's arguments (AllgathervCall, AlltoallvCall, AllreduceCall, GathervCall,
// ScattervCall): their layout (make_layout) first.
template <typename Call>
int run_call(const Call& call, const AlgorithmChoice& choice, CommContext& context) {
  CallLayout layout;
  const int rc = make_layout(call, context.size(), context.rank(), context.layout_storage, layout);
  return rc != MPI_SUCCESS ? rc : run_algorithm(choice, layout, context);
}

}  // namespace collshim
