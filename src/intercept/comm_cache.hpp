#pragma once
// Shadow communicators: the shim's traffic runs on a PMPI_Comm_dup of the user's communicator, so an
// application's pending MPI_ANY_SOURCE/MPI_ANY_TAG receive can never match it. The dup and the
// algorithms' per-communicator state hang off the user's communicator as an attribute; MPI calls our
// delete callback when the user frees the communicator, and the state goes with it.
#include <mpi.h>

#include "algorithms/comm_context.hpp"

namespace collshim {

class CommCache {
 public:
  CommCache();   // creates the keyval (after MPI_Init)
  ~CommCache();  // frees the keyval (before MPI_Finalize); releases the state of COMM_WORLD and COMM_SELF
  CommCache(const CommCache&) = delete;
  CommCache& operator=(const CommCache&) = delete;

  // The context of an intracommunicator, created on first use. Collective over `comm` the first time.
  // Returns nullptr if the dup fails (the caller passes the call through).
  CommContext* context(MPI_Comm comm);

  // Number of live contexts, for leak checks.
  static long live_contexts();

 private:
  int keyval_ = MPI_KEYVAL_INVALID;
};

}  // namespace collshim
