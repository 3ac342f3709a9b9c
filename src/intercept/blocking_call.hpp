#pragma once
// The flow of a blocking collective the shim intercepts: look up the communicator, check the
// arguments, get its state, size the call, decide, then run the algorithm or pass the call to the
// library, and record it.
#include <mpi.h>

#include <tuple>
#include <type_traits>

#include "decide/shadow_steps.hpp"
#include "decide/size_agreement.hpp"
#include "intercept/call_shapes.hpp"
#include "intercept/next_functions.hpp"
#include "intercept/nonblocking_requests.hpp"
#include "intercept/runtime.hpp"

namespace collshim {

// Intercommunicator calls go to the MPI library, which runs its intercommunicator algorithm.
// (MPI_COMM_NULL never gets here: the entry points answer it with null_communicator_error().)
inline bool usable_comm(MPI_Comm comm) {
  int inter = 0;
  return PMPI_Comm_test_inter(comm, &inter) == MPI_SUCCESS && !inter;
}

// The communicator of a call: its size `p`, and its state if the shim already has it at hand (a
// repeated call on the same communicator; no MPI call then, since only a valid intracommunicator
// has a state). Otherwise `state` is null and the communicator is checked. False: pass through.
inline bool look_up_comm(Runtime& runtime, MPI_Comm comm, CommState*& state, int& p) {
  state = runtime.comms.recent(comm);
  if (state != nullptr) {
    p = state->context.size();  // the size of the shadow, a dup of `comm`
    return true;
  }
  if (!usable_comm(comm)) return false;
  PMPI_Comm_size(comm, &p);
  return true;
}

// The state of a communicator look_up_comm() accepted, created on first use (collective).
inline CommState* comm_state(Runtime& runtime, MPI_Comm comm, CommState* known) {
  return known != nullptr ? known : runtime.comms.state(comm, runtime.placement);
}

// The decision policy's collective steps on a communicator's shadow.
inline ShadowSteps shadow_steps(CommState& state) {
  return ShadowSteps(state.context.comm(), state.context.rank(), state.context.size());
}

// The debug log line of every decided call (COLLSHIM_LOG=debug); out of line, off the hot path.
[[gnu::noinline, gnu::cold]] inline void log_decision(Runtime& runtime, const CommState& state, Collective collective,
                                                      long long block_bytes, const Decision& decision) {
  runtime.log->debug("{}: p={} block_bytes={} mapping={} nodes={} algorithm={} ({})", mpi_function_name(collective),
                     state.context.size(), block_bytes, mapping_name(state.mapping.mapping), state.mapping.nodes,
                     decision.choice->text(), decision.reason);
}

// The size a decision is keyed on: the average block, which rules test as block_bytes. How the ranks
// come to the same value is the collective's SizeAgreement (collective.hpp), which the decision
// policy applies where the ranks hold different sizes. `root`: of a rooted call.
template <Collective collective>
long long agreed_block_bytes(const Runtime& runtime, CommState& state, long long received_bytes, int p, int root) {
  constexpr SizeAgreement agreement = collective_info(collective).size_agreement;
  if constexpr (agreement == SizeAgreement::local || agreement == SizeAgreement::root) {
    ShadowSteps steps = shadow_steps(state);
    return runtime.policy.agreed_block_bytes(state.decisions, call_facts(collective, p, state.mapping, 0), steps,
                                             received_bytes, root);
  }
  // Every rank computes the same size alone (size_agreement.hpp): inline, no call.
  return own_block_bytes(collective, p, state.context.rank(), root, received_bytes);
}

// A call as the decision policy sees it (both forms). `gather_pattern`: an Alltoallv's pattern is
// gathered (a blocking call, collective); a started call costs it as uniform at its average block.
template <ShapeOfCall Shape>
PolicyCall policy_call(const CommState& state, const Shape& shape, long long block_bytes, int properties,
                       bool gather_pattern) {
  return {call_facts(Shape::collective, state.context.size(), state.mapping, block_bytes, properties), properties,
          state.mapping.node_of_rank, [&shape, &state, block_bytes, gather_pattern](CollectiveSteps& steps) {
            return model_call(shape, steps, block_bytes, state.mapping.node_of_rank, gather_pattern);
          }};
}

// A decision not in the cache yet: out of line, so the hit in decide() stays a few instructions.
// Null while a key's session still runs trial calls (online tuning, or the model's confirmation):
// the call is a trial, and nothing is cached until the key is settled.
template <BlockingShape Shape>
[[gnu::noinline]] const Decision* decide_and_store(Runtime& runtime, MPI_Comm comm, CommState& state,
                                                   const Shape& shape, long long block_bytes, int properties) {
  ShadowSteps steps = shadow_steps(state);
  const Outcome outcome =
      runtime.policy.decide(state.decisions, policy_call(state, shape, block_bytes, properties, true), steps);
  if (outcome.settled_now) runtime.learned(comm, state.mapping, state.context.size(), block_bytes, *outcome.key);
  return outcome.decision;
}

// The decision for this call: a cache hit for a repeated (collective, size, operation properties)
// on this communicator; null for a trial call.
template <BlockingShape Shape>
const Decision* decide(Runtime& runtime, MPI_Comm comm, CommState& state, const Shape& shape, long long block_bytes,
                       int properties) {
  if (const Decision* cached = DecisionPolicy::cached(state.decisions, Shape::collective, block_bytes, properties))
    return cached;
  return decide_and_store(runtime, comm, state, shape, block_bytes, properties);
}

// Runs `choice` for the call: the MPI library's collective, or an algorithm on the shadow, whose
// error is raised on the user's communicator `comm`, as the library's own would be.
template <BlockingShape Shape>
[[gnu::always_inline]] inline int execute(MPI_Comm comm, CommState& state, const Shape& shape,
                                          const AlgorithmChoice& choice) {
  if (choice.algorithm->passes_through) return shape.pass_through(comm);
  const int rc = shape.run(choice, state.context);
  if (rc != MPI_SUCCESS) PMPI_Comm_call_errhandler(comm, rc);
  return rc;
}

// In a job that may hold GPU buffers (Runtime::device_checks), a call about to run one of the shim's
// algorithms first agrees whether any rank's buffers are device memory: one rank may hold device
// buffers and another host ones, and all must take the same path. Then the MPI library gets it.
template <BlockingShape Shape>
bool device_memory_agreed(Runtime& runtime, CommState& state, const Shape& shape, int p) {
  ShadowSteps steps = shadow_steps(state);
  return DecisionPolicy::device_memory_agreed(steps, shape.device_buffers(runtime.device, p));
}

// A call on device memory: passed through whatever was decided, logged once per communicator,
// reported as native for the reason "device memory".
template <BlockingShape Shape>
[[gnu::noinline, gnu::cold]] int pass_device_memory_through(Runtime& runtime, MPI_Comm comm, CommState& state,
                                                            const Shape& shape, const AlgorithmChoice& decided,
                                                            long long block_bytes, long long received_bytes) {
  constexpr Collective collective = Shape::collective;
  if (!state.device_memory_logged) {
    state.device_memory_logged = true;
    runtime.log->debug(
        "{}: p={}: device memory in the call's buffers on some rank; {} passes through to the MPI "
        "library (the shim's algorithms touch host memory only); further such calls on this "
        "communicator are not logged",
        mpi_function_name(collective), state.context.size(), decided.text());
  }
  const double start = runtime.profile ? PMPI_Wtime() : 0.0;
  const int rc = shape.pass_through(comm);
  if (runtime.profile) {
    runtime.record_call(state.context.size(), collective, runtime.policy.selector().native_choice()->id,
                        Decision::device_memory, block_bytes, CallForm::blocking, received_bytes, PMPI_Wtime() - start);
  }
  return rc;
}

// One trial call of online tuning or the model's confirmation: runs what the key's session tries
// now; the decision policy times it and agrees on the slowest rank's time (every rank then advances
// its session the same way). Every candidate computes what native computes, so the user's results do
// not depend on the trial.
template <BlockingShape Shape>
[[gnu::noinline]] int run_tuning_trial(Runtime& runtime, MPI_Comm comm, CommState& state, const Shape& shape,
                                       long long block_bytes, long long received_bytes, int properties) {
  constexpr Collective collective = Shape::collective;
  CommTuning::Key& key = *state.decisions.tuning.find(collective, size_bucket(block_bytes), properties);
  const Trial trial = runtime.policy.trial(key);
  const AlgorithmChoice& choice = *trial.choice;
  // Not a trial: the candidate cannot run on device memory, and nothing is learned from the call.
  if (runtime.device_checks && !choice.algorithm->passes_through &&
      device_memory_agreed(runtime, state, shape, state.context.size()))
    return pass_device_memory_through(runtime, comm, state, shape, choice, block_bytes, received_bytes);
  ShadowSteps steps = shadow_steps(state);
  double seconds = 0;
  bool settled_now = false;
  const int rc = runtime.policy.run_trial(
      key, steps, [&] { return execute(comm, state, shape, choice); }, seconds, settled_now);
  if (runtime.profile) {
    runtime.record_call(state.context.size(), collective, choice.id, trial.rule_index, block_bytes, CallForm::blocking,
                        received_bytes, seconds);
  }
  if (settled_now) runtime.learned(comm, state.mapping, state.context.size(), block_bytes, key);
  return rc;
}

// The one flow of every intercepted collective: look up the communicator, check the arguments, get
// its state, size the call, decide, then run the algorithm or pass the call through, and record it.
// A template, not std::function: nothing here allocates (but a trial call of online tuning).
template <BlockingShape Shape>
[[gnu::always_inline]] inline int run_collective(Runtime& runtime, MPI_Comm comm, const Shape& shape) {
  constexpr Collective collective = Shape::collective;
  CommState* state = nullptr;
  int p = 0;
  if (!look_up_comm(runtime, comm, state, p) || !shape.arguments_usable(p)) return shape.pass_through(comm);
  state = comm_state(runtime, comm, state);
  if (state == nullptr) return shape.pass_through(comm);
  const long long received_bytes = shape.received_bytes(p);
  int root = 0;
  if constexpr (requires { shape.call.root; }) root = shape.call.root;
  const long long block_bytes = agreed_block_bytes<collective>(runtime, *state, received_bytes, p, root);

  int properties = 0;  // of a reduction's operation and data, the same on every rank
  if constexpr (requires { shape.reduction_properties(); }) properties = shape.reduction_properties();
  const Decision* decision = decide(runtime, comm, *state, shape, block_bytes, properties);
  if (decision == nullptr)
    return run_tuning_trial(runtime, comm, *state, shape, block_bytes, received_bytes, properties);
  const AlgorithmChoice& choice = *decision->choice;
  if (runtime.device_checks && !choice.algorithm->passes_through && device_memory_agreed(runtime, *state, shape, p))
    return pass_device_memory_through(runtime, comm, *state, shape, choice, block_bytes, received_bytes);
  if (runtime.log->should_log(spdlog::level::debug)) log_decision(runtime, *state, collective, block_bytes, *decision);
  const double start = runtime.profile ? PMPI_Wtime() : 0.0;
  const int rc = execute(comm, *state, shape, choice);
  if (runtime.profile) {
    runtime.record_call(state->context.size(), collective, choice.id, decision->rule_index, block_bytes,
                        CallForm::blocking, received_bytes, PMPI_Wtime() - start);
  }
  return rc;
}

// This rank in `comm`: from the communicator's state when the shim has it at hand (its shadow is a
// dup, so the ranks are the same), otherwise asked of MPI. Only read once look_up_comm() accepted
// the communicator.
inline int rank_in(Runtime& runtime, MPI_Comm comm) {
  if (const CommState* state = runtime.comms.recent(comm)) return state->context.rank();
  int rank = MPI_PROC_NULL;
  if (PMPI_Comm_rank(comm, &rank) != MPI_SUCCESS) return MPI_PROC_NULL;
  return rank;
}

// A blocking call the library runs (`library`, the next definition). While operations of the shim
// run, it runs as the library's nonblocking call completed by polling (complete_advancing): the
// library's blocking call would not advance them, and a peer may wait for them before it joins
// this call. The int forms only (the large-count ones have no int nonblocking form to use).
template <Collective collective, auto library, typename... Args>
int call_library(Args... args) {
  constexpr auto nonblocking = NonblockingLibrary<collective>::function;
  if constexpr (std::is_same_v<decltype(nonblocking), int (*const)(Args..., MPI_Request*)>) {
    if (OperationTable::running()) {
      MPI_Request request = MPI_REQUEST_NULL;
      const int rc = nonblocking(args..., &request);
      return rc != MPI_SUCCESS ? rc : complete_advancing(&request, MPI_STATUS_IGNORE);
    }
  }
  return library(args...);
}

// A call of shape `Shape` with its MPI arguments, and the library's function for them: what
// run_collective() needs, the pass-through included.
template <typename Shape, auto library, typename... Args>
struct Intercepted : Shape {
  explicit Intercepted(Args... args) : Shape(args...), arguments(args...) {}
  std::tuple<Args...> arguments;
  int pass_through(MPI_Comm) const { return std::apply(call_library<Shape::collective, library, Args...>, arguments); }
};

// The shim's path of an intercepted call. The exported entry points pass a call straight to the MPI
// library when nothing can route it to an algorithm (see Runtime::passes_through): a couple of
// loads and a tail call; this is out of line, so the fast path does not pay for its stack frame.
template <typename Shape, auto library, typename... Args>
[[gnu::noinline]] int intercept(Runtime* runtime, MPI_Comm comm, Args... args) {
  OperationTable::advance_if_running();  // nonblocking operations advance in every call the shim intercepts
  Intercepted<Shape, library, Args...> shape(args...);
  if constexpr (requires { shape.rank; }) shape.rank = rank_in(*runtime, comm);
  return run_collective(*runtime, comm, shape);
}

}  // namespace collshim
