#pragma once
// The algorithms' one entry: a call's layout, the choice's per-communicator state, and the engine.
#include "algorithms/engine/algorithm_spec.hpp"
#include "algorithms/engine/call_layout.hpp"
#include "algorithms/engine/collective_call.hpp"
#include "algorithms/engine/comm_context.hpp"

namespace collshim {

// What runs `choice` (not native) on the call: the choice's state on the communicator (made on its
// first call, collectively), prepared for the call (collective where the algorithm needs what only
// some ranks know), and the schedule it picks. Returns an MPI error code. A blocking call runs the
// schedule at once (run_algorithm), a nonblocking operation step by step (ScheduleRun).
int prepare_algorithm(const AlgorithmChoice& choice, CallLayout& call, CommContext& context, AlgorithmState*& state,
                      const Schedule*& schedule);

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
