#include "algorithms/engine/pending_request.hpp"

namespace collshim {

int wait_for_any(std::span<MPI_Request> own, std::span<const PendingRequest> pending, std::vector<MPI_Request>& storage,
                 MPI_Status* status, int& rc) {
  storage.assign(own.begin(), own.end());
  for (const PendingRequest& request : pending) storage.push_back(*request.request);
  int index = MPI_UNDEFINED;
  const int waited = PMPI_Waitany(static_cast<int>(storage.size()), storage.data(), &index, status);
  // After a failure the library may not say which request failed: one whose handle changed did.
  for (std::size_t i = 0; i < own.size(); ++i) own[i] = storage[i];
  for (std::size_t i = 0; i < pending.size(); ++i) {
    const PendingRequest& request = pending[i];
    const MPI_Request left = storage[own.size() + i];
    const bool failed = waited != MPI_SUCCESS && (index == static_cast<int>(own.size() + i) ||
                                                  (index == MPI_UNDEFINED && left != *request.request));
    *request.request = left;
    if (!failed) continue;
    if (*request.error == MPI_SUCCESS) *request.error = waited;
    if (*request.request != MPI_REQUEST_NULL && !request.persistent) PMPI_Request_free(request.request);
  }
  if (index == MPI_UNDEFINED) return nothing_active;
  if (index >= static_cast<int>(own.size())) return MPI_UNDEFINED;
  rc = waited;
  return index;
}

}  // namespace collshim
