#pragma once
// One call of a key's tuning session (online tuning, or confirming the cost model's pick), as the
// shim's entry points and collshim-bench --rules run it: the one place a trial call is timed.
//
// A timed call starts from a barrier on the shadow communicator, and its time is the slowest rank's,
// which is how the benchmarks time a call (collshim-bench, bench/sim). Back to back, a call would
// start with the ranks as the previous call left them: a candidate that finishes unevenly would pass
// its imbalance to the next candidate's first timed call, and one whose ranks leave early would look
// faster than it runs from a common start. Measured both ways (docs/results.md), the trial calls had
// confirmed picks that ran up to twice native's time once each call followed a barrier.
//
// Every rank's session is in the same state (the same trial sequence, the same agreed times), so
// every rank takes the barrier and the reduction of the same calls.
#include <mpi.h>

#include "selector/online_tuning.hpp"

namespace collshim {

// Runs the session's current candidate once through `run` (returns an MPI error code) and advances
// the session. `seconds` gets this rank's time of the call itself, barrier excluded.
template <class Run>
int run_trial_call(MPI_Comm shadow, TuningSession& session, Run&& run, double& seconds) {
  const bool timed = session.next_call_timed();
  if (timed) PMPI_Barrier(shadow);
  const double start = PMPI_Wtime();
  const int rc = run();
  seconds = PMPI_Wtime() - start;
  double agreed = seconds;
  if (timed) PMPI_Allreduce(MPI_IN_PLACE, &agreed, 1, MPI_DOUBLE, MPI_MAX, shadow);
  session.finish_call(agreed);
  return rc;
}

}  // namespace collshim
