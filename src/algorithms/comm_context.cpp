#include "algorithms/comm_context.hpp"

#include <algorithm>

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

int CommContext::complete_requests(std::span<MPI_Request> pending) {
  if (statuses_.size() < pending.size()) statuses_.resize(pending.size());
  const int rc = PMPI_Waitall(static_cast<int>(pending.size()), pending.data(), statuses_.data());
  if (rc == MPI_SUCCESS) return rc;
  int error = rc;
  if (rc == MPI_ERR_IN_STATUS) {
    const auto statuses = std::span(statuses_).first(pending.size());
    const auto failed = std::ranges::find_if(statuses, [](const MPI_Status& status) {
      return status.MPI_ERROR != MPI_SUCCESS && status.MPI_ERROR != MPI_ERR_PENDING;
    });
    if (failed != statuses.end()) error = failed->MPI_ERROR;
  }
  // Waitall may return as soon as one message fails, leaving the others in flight (MPI_ERR_PENDING),
  // and the library may keep a failed request allocated. Wait for each one left, then free it.
  for (MPI_Request& request : pending) {
    if (request == MPI_REQUEST_NULL) continue;
    PMPI_Wait(&request, MPI_STATUS_IGNORE);
    if (request != MPI_REQUEST_NULL) PMPI_Request_free(&request);
  }
  return error;
}

}  // namespace collshim
