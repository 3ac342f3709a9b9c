#pragma once
// The one engine that runs every algorithm's schedule (schedule.hpp) on a call's buffers. It owns
// what no algorithm should repeat: tags (the step index), datatype construction (a run of adjacent
// blocks is one message of the user's type, scattered blocks one hindexed type, packed blocks
// bytes), packed scratch storage, request completion, and the failure policy: a failed message
// does not stop the schedule, since the peers wait for this rank's later steps; every step runs,
// every request completes before the call returns, and the first error is returned.
#include <mpi.h>

#include <memory>

#include "algorithms/engine/call_layout.hpp"
#include "algorithms/engine/schedule.hpp"

namespace collshim {

class CommContext;

// The failure policy's bookkeeping: remember the first error, go on.
inline int keep_first_error(int& first, int rc) {
  if (first == MPI_SUCCESS) first = rc;
  return rc;
}

// What an algorithm keeps per communicator: the schedule it runs and whatever its opaque phases
// need (sub-communicators, a shared-memory window). Made on the choice's first call on a
// communicator, by every rank of that call, so making it may be collective.
class AlgorithmState {
 public:
  virtual ~AlgorithmState() = default;
  // Called on every call before schedule_for, by every rank of the call, so it may communicate over
  // the context's shadow communicator: for schedules that depend on what only some ranks know (the
  // counts of a Gatherv). Returns an MPI error code.
  virtual int prepare(const CallLayout& /*call*/, CommContext& /*context*/) { return MPI_SUCCESS; }
  // The schedule of this call. Every rank of the call picks the same one, from what all of them
  // know (p, the node map, counts every rank holds).
  virtual const Schedule& schedule_for(const CallLayout& call) = 0;
  // Runs opaque phase `id` and returns an MPI error code, or runs_as_modelled: the phase declines
  // (all ranks of the phase agree), and the engine posts the step's modelled transfers instead.
  virtual int run_phase(int id, CallLayout& call, CommContext& context);
  static constexpr int runs_as_modelled = -1;  // MPI error codes are never negative
};

// The state of an algorithm that is its schedule alone.
class FixedSchedule final : public AlgorithmState {
 public:
  explicit FixedSchedule(Schedule schedule) : schedule_(std::move(schedule)) {}
  const Schedule& schedule_for(const CallLayout&) override { return schedule_; }

 private:
  Schedule schedule_;
};

// Runs every step of `schedule`, handing opaque phases to `state`. Returns MPI_SUCCESS or the
// first error; the caller raises it on the user's communicator.
int run_schedule(const Schedule& schedule, CallLayout& call, CommContext& context, AlgorithmState& state);

}  // namespace collshim
