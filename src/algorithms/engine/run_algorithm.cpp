#include "algorithms/engine/run_algorithm.hpp"

namespace collshim {

int run_algorithm(const AlgorithmChoice& choice, CallLayout& call, CommContext& context) {
  AlgorithmState* state = nullptr;
  int rc = context.state(choice, state);
  if (rc != MPI_SUCCESS) return rc;
  if ((rc = state->prepare(call, context)) != MPI_SUCCESS) return rc;
  return run_schedule(state->schedule_for(call), call, context, *state);
}

}  // namespace collshim
