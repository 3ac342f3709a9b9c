#include "algorithms/comm_context.hpp"

namespace collshim {

CommContext::CommContext(MPI_Comm shadow) : comm_(shadow) {
  PMPI_Comm_size(comm_, &size_);
  PMPI_Comm_rank(comm_, &rank_);
  node_of_rank_.assign(static_cast<std::size_t>(size_), 0);
}

CommContext::~CommContext() {
  grid_plans.clear();  // communicators split from the shadow go first
  node_comms.reset();
  if (comm_ != MPI_COMM_NULL) PMPI_Comm_free(&comm_);
}

const Schedule& CommContext::schedule(const AlgorithmChoice& choice) {
  const auto index = static_cast<std::size_t>(choice.id);
  if (schedules_.size() <= index) schedules_.resize(index + 1);
  if (!schedules_[index]) schedules_[index] = generate_schedule(choice, node_of_rank_, rank_);
  return *schedules_[index];
}

}  // namespace collshim
