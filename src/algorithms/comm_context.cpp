#include "algorithms/comm_context.hpp"

#include <algorithm>

#include "algorithms/algorithm_spec.hpp"

namespace collshim {

std::byte* EngineStorage::allocate(std::size_t bytes) {
  if (chunks_used == chunks.size()) chunks.emplace_back();
  std::vector<std::byte>& chunk = chunks[chunks_used++];
  if (chunk.size() < bytes) chunk.resize(bytes);  // never shrinks here: the next call reuses it
  return chunk.data();
}

void EngineStorage::start_call() {
  chunks_used = 0;
  scratch_blocks.clear();
}

void EngineStorage::finish_call() {
  for (std::vector<std::byte>& chunk : chunks) {
    if (chunk.capacity() > kept_bytes) std::vector<std::byte>().swap(chunk);
  }
}

CommContext::CommContext(MPI_Comm shadow) : comm_(shadow) {
  PMPI_Comm_size(comm_, &size_);
  PMPI_Comm_rank(comm_, &rank_);
  node_of_rank_.assign(static_cast<std::size_t>(size_), 0);
}

CommContext::~CommContext() {
  states_.clear();  // communicators split from the shadow go first
  if (comm_ != MPI_COMM_NULL) PMPI_Comm_free(&comm_);
}

int CommContext::state(const AlgorithmChoice& choice, AlgorithmState*& state) {
  const auto found = std::ranges::find(states_, &choice, [](const auto& entry) { return entry.first; });
  if (found != states_.end()) {
    state = found->second.get();
    return MPI_SUCCESS;
  }
  std::unique_ptr<AlgorithmState> made;
  const int rc = make_algorithm_state(choice, *this, made);
  if (rc != MPI_SUCCESS) return rc;  // nothing kept: a later call starts over
  state = made.get();
  states_.emplace_back(&choice, std::move(made));
  return MPI_SUCCESS;
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
