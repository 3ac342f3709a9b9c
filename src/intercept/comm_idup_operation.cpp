#include "intercept/comm_idup_operation.hpp"

namespace collshim {

bool CommIdupOperation::done(int rc) {
  error_ = rc;
  phase_ = Phase::done;
  return true;
}

// A step that fails leaves the communicator without a state: its calls pass through, as after a
// failed CommCache::state. Only the library's idup has an error for the program.
bool CommIdupOperation::progress() {
  int rc = MPI_SUCCESS;
  switch (phase_) {
    case Phase::library: {
      if (!idup_.test(rc)) return false;
      // A library that gives the handle only now: MPI lets the program read it after completion.
      if (made_ != handed_) *newcomm_ = made_;
      if (rc != MPI_SUCCESS) return done(rc);
      int inter = 0;  // the idup of an intercommunicator: no state
      if (PMPI_Comm_test_inter(made_, &inter) != MPI_SUCCESS || inter) return done();
      if (PMPI_Comm_idup(made_, shadow_.get(), step_.get()) != MPI_SUCCESS) return done();
      phase_ = Phase::shadow;
      [[fallthrough]];
    }
    case Phase::shadow: {
      if (!step_.test(rc)) return false;
      if (rc != MPI_SUCCESS) return done();
      // As in CommCache::state: errors inside an algorithm come back as return codes; the lane inherits it.
      PMPI_Comm_set_errhandler(*shadow_, MPI_ERRORS_RETURN);
      int size = 0;
      PMPI_Comm_size(*shadow_, &size);
      node_of_rank_.resize(static_cast<std::size_t>(size));
      if (PMPI_Iallgather(&placement_.node_id, 1, MPI_INT, node_of_rank_.data(), 1, MPI_INT, *shadow_, step_.get()) !=
          MPI_SUCCESS)
        return done();
      phase_ = Phase::node_ids;
      [[fallthrough]];
    }
    case Phase::node_ids: {
      if (!step_.test(rc)) return false;
      if (rc != MPI_SUCCESS) return done();
      // Without a lane the state still serves blocking calls, as CommCache::state's does.
      if (PMPI_Comm_idup(*shadow_, lane_.get(), step_.get()) != MPI_SUCCESS) *lane_.get() = MPI_COMM_NULL;
      phase_ = Phase::lane;
      [[fallthrough]];
    }
    case Phase::lane: {
      if (!step_.test(rc)) return false;
      if (rc != MPI_SUCCESS) *lane_.get() = MPI_COMM_NULL;
      comms_.install(
          made_, std::make_shared<CommState>(
                     shadow_.release(), classify_mapping(node_of_rank_, placement_.oversubscribed), lane_.release()));
      return done();
    }
    case Phase::done: return true;
  }
  return true;
}

}  // namespace collshim
