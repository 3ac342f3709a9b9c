#include "algorithms/run_algorithm.hpp"

namespace collshim {

int run_algorithm(const AlgorithmChoice& choice, CallLayout& call, CommContext& context) {
  AlgorithmState* state = nullptr;
  int rc = context.state(choice, state);
  if (rc != MPI_SUCCESS) return rc;
  if ((rc = state->prepare(call, context)) != MPI_SUCCESS) return rc;
  return run_schedule(state->schedule_for(call), call, context, *state);
}

int run_allgatherv(const AllgathervCall& call, const AlgorithmChoice& choice, CommContext& context) {
  CallLayout layout;
  const int rc = make_allgatherv_layout(call, context, layout);
  return rc != MPI_SUCCESS ? rc : run_algorithm(choice, layout, context);
}

int run_alltoallv(const AlltoallvCall& call, const AlgorithmChoice& choice, CommContext& context) {
  CallLayout layout;
  const int rc = make_alltoallv_layout(call, context, layout);
  return rc != MPI_SUCCESS ? rc : run_algorithm(choice, layout, context);
}

int run_allreduce(const AllreduceCall& call, const AlgorithmChoice& choice, CommContext& context) {
  CallLayout layout;
  const int rc = make_allreduce_layout(call, context, layout);
  return rc != MPI_SUCCESS ? rc : run_algorithm(choice, layout, context);
}

int run_gatherv(const GathervCall& call, const AlgorithmChoice& choice, CommContext& context) {
  CallLayout layout;
  const int rc = make_gatherv_layout(call, context, layout);
  return rc != MPI_SUCCESS ? rc : run_algorithm(choice, layout, context);
}

int run_scatterv(const ScattervCall& call, const AlgorithmChoice& choice, CommContext& context) {
  CallLayout layout;
  const int rc = make_scatterv_layout(call, context, layout);
  return rc != MPI_SUCCESS ? rc : run_algorithm(choice, layout, context);
}

}  // namespace collshim
