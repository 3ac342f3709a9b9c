#pragma once
// The one engine that runs every algorithm's schedule (schedule.hpp) on a call's buffers. It owns
// what no algorithm should repeat: tags (the step index), datatype construction (a run of adjacent
// blocks is one message of the user's type, scattered blocks one hindexed type, packed blocks
// bytes), packed scratch storage, request completion, and the failure policy: a failed message
// does not stop the schedule, since the peers wait for this rank's later steps; every step runs,
// every request completes before the call returns, and the first error is returned.
#include <mpi.h>

#include <memory>
#include <span>
#include <vector>

#include "algorithms/engine/call_layout.hpp"
#include "algorithms/engine/pending_request.hpp"
#include "algorithms/engine/schedule.hpp"

namespace collshim {

class CommContext;
struct EngineStorage;

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
  // Whether every schedule schedule_for() returns stays as it is for the state's life; otherwise a
  // later call may remake it, and a nonblocking operation keeps a copy.
  virtual bool keeps_schedules() const { return false; }
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
  bool keeps_schedules() const override { return true; }

 private:
  Schedule schedule_;
};

// Runs every step of `schedule`, handing opaque phases to `state`. Returns MPI_SUCCESS or the
// first error; the caller raises it on the user's communicator.
int run_schedule(const Schedule& schedule, CallLayout& call, CommContext& context, AlgorithmState& state);

// The tag of step `index` of a schedule whose messages use tags from `tag_base` on: MPI guarantees
// tags up to 32767, so a blocking call (base 0) wraps there, which is safe since its steps complete
// in order. Nonblocking operations outstanding together on one communicator take bases 32768 apart
// (a multiple of 32768 below the library's MPI_TAG_UB), so their messages never match each other's.
inline int step_tag(int tag_base, std::size_t index) { return tag_base + static_cast<int>(index & 0x7fff); }
inline constexpr int tags_per_schedule = 0x8000;

// One schedule run without blocking, for a nonblocking or persistent collective: start() begins it,
// progress() advances it as far as it can without waiting (posting a step's messages once the
// previous step's are complete) and says when every step is done. Opaque phases run as modelled:
// algorithms whose states run them are declared blocking-only. `schedule`, `call` and `engine` stay
// the operation's until it completes; a persistent operation starts the same run again.
class ScheduleRun {
 public:
  ScheduleRun(const Schedule& schedule, CallLayout& call, EngineStorage& engine, MPI_Comm comm, int tag_base);
  ~ScheduleRun();
  ScheduleRun(const ScheduleRun&) = delete;
  ScheduleRun& operator=(const ScheduleRun&) = delete;

  void start();
  bool progress();  // true once complete
  // A persistent operation's run, started again and again on the same buffers and tags: at its next
  // start it makes a plan (the local work as addresses, each step's messages as the library's
  // persistent requests), and every start after runs that. Where this rank's schedule has packed
  // bytes (sizes made per run) it goes on step by step, sending the same messages.
  void keep_plan();
  int error() const { return error_; }  // MPI_SUCCESS or the first error, once complete
  // After progress() said the run is not complete: appends the current step's requests of the
  // library, with where a wait that completes one leaves its error.
  void blocked_on(std::vector<PendingRequest>& pending);

 private:
  struct Current;  // the step in flight
  struct Plan;
  void build_plan();
  const Schedule& schedule_;
  CallLayout& call_;
  EngineStorage& engine_;
  MPI_Comm comm_;
  int tag_base_;
  std::size_t index_ = 0;
  int error_ = MPI_SUCCESS;
  bool done_ = true;
  bool in_step_ = false;
  bool plans_ = false;
  bool unplannable_ = false;
  std::unique_ptr<Current> current_;  // the one runner of every step
  std::unique_ptr<Plan> plan_;
};

// Completes (waits for) every request of a step, even when some fail; the first failed message's
// error. test_requests: the same without waiting, true once all are complete (`pending` then empty);
// `indices` is its storage.
int complete_requests(std::span<MPI_Request> pending, std::vector<MPI_Status>& statuses);
bool test_requests(std::vector<MPI_Request>& pending, std::vector<MPI_Status>& statuses, std::vector<int>& indices,
                   int& first_error);

}  // namespace collshim
