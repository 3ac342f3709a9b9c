#include "algorithms/engine/run_algorithm.hpp"

namespace collshim {

int prepare_algorithm(const AlgorithmChoice& choice, CallLayout& call, CommContext& context, AlgorithmState*& state,
                      const Schedule*& schedule) {
  int rc = context.state(choice, state);
  if (rc == MPI_SUCCESS) rc = state->prepare(call, context);
  if (rc == MPI_SUCCESS) schedule = &state->schedule_for(call);
  return rc;
}

int run_algorithm(const AlgorithmChoice& choice, CallLayout& call, CommContext& context) {
  AlgorithmState* state = nullptr;
  const Schedule* schedule = nullptr;
  const int rc = prepare_algorithm(choice, call, context, state, schedule);
  return rc != MPI_SUCCESS ? rc : run_schedule(*schedule, call, context, *state);
}

}  // namespace collshim
