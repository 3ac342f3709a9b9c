#pragma once
#include <mpi.h>

#include <span>
#include <vector>

namespace collshim {

// A request of the library's that a nonblocking run waits for, and where its error goes if a wait
// completes it (wait_for_any) rather than the run's own test.
struct PendingRequest {
  MPI_Request* request;
  int* error;
  bool persistent = false;  // the run's own for its life: never freed here
};

// Blocks inside the library (MPI_Waitany) until one request completes, among `own` (a wait's own
// requests, as its caller passed them: inactive and null ones are ignored) and `pending` (what
// nonblocking runs wait for). Every handle goes back where it came from as the library left it; a
// pending request that failed leaves its error in its slot and is freed (if not persistent). Returns the index in `own`
// of the request that completed (its status in *status, its result in `rc`), MPI_UNDEFINED where a
// pending one did, or nothing_active where none of them was active. `storage` is the call's array,
// kept by the caller so that a wait allocates nothing once warm.
int wait_for_any(std::span<MPI_Request> own, std::span<const PendingRequest> pending, std::vector<MPI_Request>& storage,
                 MPI_Status* status, int& rc);
inline constexpr int nothing_active = -2;

}  // namespace collshim
