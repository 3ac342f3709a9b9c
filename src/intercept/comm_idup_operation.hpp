#pragma once
// MPI_Comm_idup's request as the shim hands it to the program (communicator_entry_points.cpp): the
// library's idup, then the new communicator's state made in nonblocking steps, the ones
// CommCache::state takes blocking: a dup of it for the shadow, the node ids gathered on the shadow, a
// dup of the shadow for the lane. Each step starts in progress() once the one before is complete, so
// the idup never waits for the other ranks (a rank may sit in a call the others' idups need to
// complete first), and the state is there when the request completes, before the program may use
// the new communicator: its first nonblocking collective can be the shim's.
#include <mpi.h>

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "intercept/comm_cache.hpp"
#include "intercept/nonblocking_requests.hpp"

namespace collshim {

// A communicator the shim made and has not handed on yet: freed with its owner.
class OwnedComm {
 public:
  OwnedComm() = default;
  ~OwnedComm() {
    if (comm_ != MPI_COMM_NULL) PMPI_Comm_free(&comm_);
  }
  OwnedComm(const OwnedComm&) = delete;
  OwnedComm& operator=(const OwnedComm&) = delete;

  MPI_Comm* get() { return &comm_; }  // for the call that makes it
  MPI_Comm operator*() const { return comm_; }
  MPI_Comm release() { return std::exchange(comm_, MPI_COMM_NULL); }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
};

class CommIdupOperation final : public Operation {
 public:
  // The idup of `comm` into the program's `newcomm`: the caller starts the library's into made() and
  // library_request() (start_comm_idup).
  CommIdupOperation(CommCache& comms, const ProcessPlacement& placement, MPI_Comm comm, MPI_Comm* newcomm)
      : comms_(comms), placement_(placement), comm_(comm), newcomm_(newcomm) {}
  CommIdupOperation(const CommIdupOperation&) = delete;
  CommIdupOperation& operator=(const CommIdupOperation&) = delete;

  MPI_Comm* made() { return &made_; }
  MPI_Request* library_request() { return idup_.get(); }
  // After the library's idup returned: the handle it gave goes to the program now, as the library
  // gives it (Open MPI 4.1 and MPICH 4.0 write it before they return, and their Fortran bindings
  // convert it right after the C call).
  void hand_over() { *newcomm_ = handed_ = made_; }

  void start() override {}  // the library's idup is started by the caller
  bool progress() override;
  int error() const override { return error_; }
  // Where the library's idup error goes, as the library's own request would raise it.
  MPI_Comm comm() const override { return comm_; }
  bool blocked_on(std::vector<PendingRequest>& pending) override {
    idup_.add_pending(pending);
    step_.add_pending(pending);
    return true;
  }

 private:
  enum class Phase : std::uint8_t { library, shadow, node_ids, lane, done };
  bool done(int rc = MPI_SUCCESS);

  CommCache& comms_;
  ProcessPlacement placement_;
  MPI_Comm comm_;
  MPI_Comm* newcomm_;
  MPI_Comm made_ = MPI_COMM_NULL;
  MPI_Comm handed_ = MPI_COMM_NULL;
  Phase phase_ = Phase::library;
  int error_ = MPI_SUCCESS;
  std::vector<int> node_of_rank_;
  // Declared before the requests that write them: destroyed after those complete.
  OwnedComm shadow_;
  OwnedComm lane_;
  LibraryRequest idup_;
  LibraryRequest step_;  // the state's step running now
};

// MPI_Comm_idup or MPI_Comm_idup_with_info of `comm` in the shim: `library(made, request)` starts the
// library's. Its error returns at once, as it would without the shim; otherwise *request is the
// operation's. Never waits for other ranks.
template <typename LibraryIdup>
int start_comm_idup(CommCache& comms, const ProcessPlacement& placement, MPI_Comm comm, MPI_Comm* newcomm,
                    MPI_Request* request, LibraryIdup library) {
  OperationTable::advance_if_running();
  OperationTable& table = OperationTable::instance();
  const auto lock = table.lock();
  auto operation = std::make_unique<CommIdupOperation>(comms, placement, comm, newcomm);
  const int rc = library(operation->made(), operation->library_request());
  if (rc != MPI_SUCCESS) {
    *operation->library_request() = MPI_REQUEST_NULL;  // nothing started, nothing to wait for
    return rc;
  }
  operation->hand_over();
  return table.add(std::move(operation), false, request);
}

}  // namespace collshim
