#pragma once
// The nonblocking and persistent collectives the shim runs or wraps: the operation behind the
// request the program holds (OperationTable runs it), and the start of one.
#include <mpi.h>

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "intercept/blocking_call.hpp"
#include "intercept/kept_arguments.hpp"

namespace collshim {

// For the debug log: "; X is blocking-only, running Y" where the decision replaced a blocking-only choice.
inline std::string blocking_only_text(const Decision& decision) {
  if (std::string_view(decision.substitution) != blocking_only_substitution) return {};
  return "; " + decision.requested->text() + " is blocking-only, running " + decision.choice->text();
}

// A nonblocking or persistent call's decision (DecisionPolicy::decide, `at` its start or during
// progress), by this rank alone: its data as the model costs it without gathering anything (an
// Alltoallv as uniform at its average block).
template <ShapeOfCall Shape>
Decision decide_started(Runtime& runtime, CommState& state, const Shape& shape, long long block_bytes, int properties,
                        DecidedAt at) {
  SoloSteps alone(state.context.size());
  return runtime.policy.decide(state.decisions, policy_call(state, shape, block_bytes, properties, false), alone, at)
      .started;
}

// ---- Nonblocking and persistent collectives ----------------------------------------------------

// A nonblocking or persistent call the shim runs: decided from what this rank knows alone
// (decide_started), or, where the ranks must agree first (a size only the
// ranks together know, a device-memory vote), after an MPI_Iallreduce on the shadow that is its
// first step. It runs on the communicator's lane (NonblockingLane): a schedule of the registry
// (ScheduleRun), or the library's nonblocking call (`library`: the user's arguments on another
// communicator) where the decision is native or device memory is involved. A persistent operation
// decides at its first start (at MPI_*_init where no agreement is needed) and keeps the decision;
// its buffers are read at each start.
template <ShapeOfCall Shape, typename LibraryCall>
class CollectiveOperation final : public Operation {
 public:
  CollectiveOperation(Runtime& runtime, MPI_Comm comm, CommState& state,
                      const CallArguments<Shape::collective>& arguments, LibraryCall library, const char* function,
                      bool persistent, bool size_to_agree, long long block_bytes, int properties,
                      std::optional<Decision> decision)
      : runtime_(runtime),
        comm_(comm),
        state_(state),
        keep_state_(state.shared_from_this()),
        arguments_(arguments, CommShape(state.context.size(), state.context.rank())),
        shape_(arguments_.get()),
        library_(std::move(library)),
        function_(function),
        persistent_(persistent),
        size_to_agree_(size_to_agree),
        block_bytes_(block_bytes),
        properties_(properties),
        decision_(std::move(decision)) {
    if constexpr (requires { shape_.rank; }) shape_.rank = state.context.rank();
  }
  CollectiveOperation(const CollectiveOperation&) = delete;
  CollectiveOperation& operator=(const CollectiveOperation&) = delete;

  void start() override {
    error_ = MPI_SUCCESS;
    ticket_ = state_.lane.next_ticket++;
    started_at_ = runtime_.profile ? PMPI_Wtime() : 0.0;
    phase_ = Phase::waiting_turn;
    if (decision_) return;
    // (A persistent operation's decision holds for all its starts: its arguments are fixed at
    // MPI_*_init.) The agreement: this rank's size (Alltoallv: its received bytes; a rooted call: the root's
    // total, 0 elsewhere) and device-memory vote, summed.
    const int p = state_.context.size();
    int root = 0;
    if constexpr (requires { shape_.call.root; }) root = shape_.call.root;
    agreement_[0] = size_contribution(collective_info(Shape::collective).size_agreement, state_.context.rank(), root,
                                      shape_.received_bytes(p));
    agreement_[1] = runtime_.device_checks && shape_.device_buffers(runtime_.device, p) ? 1 : 0;
    const int rc = PMPI_Iallreduce(MPI_IN_PLACE, agreement_.data(), 2, MPI_LONG_LONG, MPI_SUM, state_.context.comm(),
                                   agreement_request_.get());
    if (rc != MPI_SUCCESS) return finish(rc);
    phase_ = Phase::agreeing;
  }

  bool progress() override {
    if (phase_ == Phase::agreeing && !agreed()) return false;
    if (phase_ == Phase::waiting_turn) {
      if (state_.lane.turn != ticket_) return false;  // an earlier run of this communicator acts first
      ++state_.lane.turn;
      act();
    }
    if (phase_ == Phase::native) {
      int rc = MPI_SUCCESS;
      if (!native_request_.test(rc)) return false;
      finish(rc);
    }
    if (phase_ == Phase::schedule) {
      if (!run_->progress()) return false;
      finish(run_->error());
    }
    return phase_ == Phase::done;
  }

  int error() const override { return error_; }
  MPI_Comm comm() const override { return state_.user_comm_freed ? MPI_COMM_WORLD : comm_; }
  bool blocked_on(std::vector<PendingRequest>& pending) override {
    switch (phase_) {
      case Phase::agreeing: agreement_request_.add_pending(pending); return true;
      case Phase::native: native_request_.add_pending(pending); return true;
      case Phase::schedule: run_->blocked_on(pending); return true;
      default: return true;  // waits for an earlier run's turn, which has its own requests
    }
  }

 private:
  enum class Phase : std::uint8_t { agreeing, waiting_turn, native, schedule, done };

  bool agreed() {
    int rc = MPI_SUCCESS;
    if (!agreement_request_.test(rc)) return false;
    if (rc != MPI_SUCCESS) {
      finish(rc);
      return false;
    }
    if (size_to_agree_)
      block_bytes_ =
          block_bytes_from_sum(collective_info(Shape::collective).size_agreement, agreement_[0], state_.context.size());
    device_ = agreement_[1] > 0;
    // Decided during progress, where a blocking call's settled keys could differ between ranks (they
    // reach this point at different calls): rules, forcing and the model's pick only.
    decision_ = decide_started(runtime_, state_, shape_, block_bytes_, properties_, DecidedAt::progress);
    phase_ = Phase::waiting_turn;
    return true;
  }
  void act() {
    const Decision& decision = *decision_;
    if (runtime_.log->should_log(spdlog::level::debug)) log_started(decision);
    if (device_ || decision.choice->algorithm->passes_through) {
      const int rc = library_(arguments_.get(), state_.lane.comm, native_request_.get());
      if (rc != MPI_SUCCESS) return finish(rc);
      phase_ = Phase::native;
      return;
    }
    // The layout at every start: an in-place Alltoall(v) stages the outgoing blocks then (in the
    // same storage, so a kept run's plan still holds).
    int rc = make_layout(shape_.call, state_.context.size(), state_.context.rank(), layout_storage_, layout_);
    if (rc != MPI_SUCCESS) return finish(rc);
    if (run_ == nullptr || !keeps_run_) {
      AlgorithmState* algorithm = nullptr;
      const Schedule* schedule = nullptr;
      rc = prepare_algorithm(*decision.choice, layout_, state_.context, algorithm, schedule);
      if (rc != MPI_SUCCESS) return finish(rc);
      if (!algorithm->keeps_schedules()) {
        own_schedule_ = *schedule;
        schedule = &own_schedule_;
      }
      // A persistent operation keeps its run, planned, with a tag slot of its own (the same on every
      // rank: slots are taken in ticket order) where there are slots to spare.
      const std::optional<int> own_slot = persistent_ ? state_.lane.take_persistent_slot() : std::nullopt;
      keeps_run_ = own_slot.has_value();
      const int slot = own_slot.value_or(state_.lane.nonblocking_slot(ticket_));
      run_ = std::make_unique<ScheduleRun>(*schedule, layout_, engine_, state_.lane.comm, slot * tags_per_schedule);
      if (keeps_run_) run_->keep_plan();
    }
    run_->start();
    phase_ = Phase::schedule;
  }

  [[gnu::noinline, gnu::cold]] void log_started(const Decision& decision) const {
    runtime_.log->debug("{}: p={} block_bytes={} mapping={} nodes={} algorithm={} ({}{})", function_,
                        state_.context.size(), block_bytes_, mapping_name(state_.mapping.mapping), state_.mapping.nodes,
                        device_ ? "native" : decision.choice->text(), device_ ? "device memory" : decision.reason,
                        device_ ? std::string() : blocking_only_text(decision));
  }

  void finish(int rc) {
    error_ = rc;
    phase_ = Phase::done;
    if (runtime_.profile && decision_) {
      const int choice = device_ ? runtime_.policy.selector().native_choice()->id : decision_->choice->id;
      runtime_.record_call(state_.context.size(), Shape::collective, choice,
                           device_ ? Decision::device_memory : decision_->rule_index, block_bytes_, form(),
                           shape_.received_bytes(state_.context.size()), PMPI_Wtime() - started_at_);
    }
  }
  CallForm form() const { return persistent_ ? CallForm::persistent : CallForm::nonblocking; }

  Runtime& runtime_;
  MPI_Comm comm_;
  CommState& state_;
  std::shared_ptr<CommState> keep_state_;  // the user may free the communicator while this runs
  KeptArguments<Shape::collective> arguments_;
  Shape shape_;  // reads arguments_
  LibraryCall library_;
  const char* function_;
  bool persistent_;
  bool size_to_agree_;  // the agreement's sum is the size (else it is only the device vote)
  long long block_bytes_;
  int properties_;
  std::optional<Decision> decision_;
  bool device_ = false;
  Phase phase_ = Phase::done;
  int error_ = MPI_SUCCESS;
  unsigned long long ticket_ = 0;
  double started_at_ = 0;
  std::array<long long, 2> agreement_{};
  // Waited for if the operation is freed while they run (MPI_Request_free of an active request).
  LibraryRequest agreement_request_;
  LibraryRequest native_request_;
  LayoutStorage layout_storage_;
  CallLayout layout_;
  EngineStorage engine_;
  Schedule own_schedule_;
  std::unique_ptr<ScheduleRun> run_;
  bool keeps_run_ = false;  // run_ serves every start (a persistent operation's, on its own tags)
};

// A nonblocking or persistent call, passed on unhandled: counted for the report with the bytes the
// blocking call of its shape would receive (0 where its arguments are not usable, or on an
// intercommunicator). Only with COLLSHIM_REPORT; out of line, off the pass-through.
template <typename Shape, typename... Args>
[[gnu::noinline, gnu::cold]] void count_unhandled(Runtime& runtime, StartedFunction function, MPI_Comm comm,
                                                  Args... args) {
  long long bytes = 0;
  int p = 0;
  if (comm != MPI_COMM_NULL && usable_comm(comm) && PMPI_Comm_size(comm, &p) == MPI_SUCCESS) {
    Shape shape(args...);
    if constexpr (requires { shape.rank; }) shape.rank = rank_in(runtime, comm);
    if (shape.arguments_usable(p)) bytes = shape.received_bytes(p);
  }
  runtime.profile->count_unhandled(static_cast<int>(function), bytes);
}

// A persistent call the shim does not take (no state for its communicator, unusable arguments):
// still run as the library's nonblocking call at each start, on the user's communicator (issued
// inside MPI_Start, in program order), not as the library's persistent request, whose schedules
// MPICH 4.0.2 gets wrong (wrong data, or a hang, at some sizes and process counts).
template <Collective collective, typename LibraryCall>
class LibraryPersistentOperation final : public Operation {
 public:
  LibraryPersistentOperation(MPI_Comm comm, const CallArguments<collective>& arguments, LibraryCall library)
      : comm_(comm), arguments_(arguments, CommShape(comm)), library_(std::move(library)) {}
  LibraryPersistentOperation(const LibraryPersistentOperation&) = delete;
  LibraryPersistentOperation& operator=(const LibraryPersistentOperation&) = delete;

  void start() override { error_ = library_(arguments_.get(), comm_, request_.get()); }
  bool progress() override { return request_.test(error_); }
  int error() const override { return error_; }
  MPI_Comm comm() const override { return comm_; }
  bool blocked_on(std::vector<PendingRequest>& pending) override {
    request_.add_pending(pending);
    return true;
  }

 private:
  MPI_Comm comm_;
  KeptArguments<collective> arguments_;
  LibraryCall library_;
  LibraryRequest request_;
  int error_ = MPI_SUCCESS;
};

// A nonblocking or persistent call. The shim runs it where the communicator already has its state
// (made by a blocking call on it, or at MPI_Init for MPI_COMM_WORLD: making one is collective and
// would block) and its arguments are usable; otherwise the library gets it, counted for the report.
// Decided here where every rank knows the size alone; a nonblocking call decided native then goes
// to the library unwrapped. Otherwise the operation agrees first (CollectiveOperation). `Shape`
// reads the call's own arguments (IntForm, LargeCountShape); the operation keeps the int form's
// (Shape::int_arguments) and reads them with Shape::IntShape.
template <typename Shape, typename LibraryCall, typename PassOn, typename... Args>
[[gnu::noinline]] int start_collective(Runtime& runtime, StartedFunction function, const char* name, bool persistent,
                                       MPI_Comm comm, MPI_Request* request, LibraryCall library, PassOn pass_on,
                                       Args... args) {
  constexpr Collective collective = Shape::collective;
  Shape shape(args...);  // (the operation reads copies of the arguments: `shape` reads the program's)
  const auto unhandled = [&] {
    if (runtime.profile) count_unhandled<Shape>(runtime, function, comm, args...);
    if (!persistent || runtime.nonblocking_native) return pass_on();  // native: the library's own, as asked
    // A large-count value beyond int: the library's own _c function, with the call as it is.
    const std::optional<CallArguments<collective>> arguments = shape.int_arguments(args...);
    if (!arguments) return pass_on();
    OperationTable& table = OperationTable::instance();
    const auto lock = table.lock();
    return table.add(std::make_unique<LibraryPersistentOperation<collective, LibraryCall>>(comm, *arguments, library),
                     true, request);
  };
  if (runtime.nonblocking_native || NonblockingLane::tag_slots == 0) return unhandled();
  OperationTable::advance_if_running();
  OperationTable& table = OperationTable::instance();
  auto lock = table.lock();
  CommState* state = runtime.comms.existing(comm);
  const int p = state != nullptr ? state->context.size() : 0;
  if constexpr (requires { shape.rank; }) shape.rank = state != nullptr ? state->context.rank() : MPI_PROC_NULL;
  if (state == nullptr || state->lane.comm == MPI_COMM_NULL || !shape.arguments_usable(p)) {
    lock.unlock();
    return unhandled();
  }
  int properties = 0;
  if constexpr (requires { shape.reduction_properties(); }) properties = shape.reduction_properties();
  const CallFacts facts = call_facts(collective, p, state->mapping, 0, properties);
  // The ranks agree first where the size is rank-local and some rule tests it, or on the device vote.
  const bool size_to_agree = runtime.policy.size_must_be_agreed(state->decisions, facts);
  const bool agree = runtime.device_checks || size_to_agree;
  std::optional<Decision> decision;
  long long block_bytes = 0;
  if (!size_to_agree) {  // every rank knows the size it decides by
    int root = 0;
    if constexpr (requires { shape.call.root; }) root = shape.call.root;
    block_bytes = own_block_bytes(collective, p, state->context.rank(), root, shape.received_bytes(p));
  }
  if (!agree) {
    decision = decide_started(runtime, *state, shape, block_bytes, properties, DecidedAt::start);
    if (!persistent && decision->choice->algorithm->passes_through) {
      if (runtime.log->should_log(spdlog::level::debug))
        runtime.log->debug("{}: p={} block_bytes={} algorithm=native ({}{}); the library's own nonblocking call", name,
                           p, block_bytes, decision->reason, blocking_only_text(*decision));
      if (runtime.profile) {
        runtime.record_call(p, collective, decision->choice->id, decision->rule_index, block_bytes,
                            CallForm::nonblocking, shape.received_bytes(p), 0.0);
      }
      lock.unlock();
      return pass_on();
    }
  }
  // Usable arguments have an int form.
  auto operation = std::make_unique<CollectiveOperation<typename Shape::IntShape, LibraryCall>>(
      runtime, comm, *state, *shape.int_arguments(args...), std::move(library), name, persistent, size_to_agree,
      block_bytes, properties, decision);
  return table.add(std::move(operation), persistent, request);
}

}  // namespace collshim
