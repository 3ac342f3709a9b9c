// The MPI entry points of libcollshim.so: the only C ABI of the shim. Each collective checks what it
// can cheaply, asks the decision policy (src/decide), and either hands the call to the MPI library (PMPI_*) unchanged
// or runs a registry algorithm on the communicator's shadow. With COLLSHIM_REPORT set, every decided call is timed and
// counted for the end-of-run report.
#include <dlfcn.h>
#include <mpi.h>

#include <algorithm>
#include <concepts>
#include <limits>
#include <memory>
#include <optional>
#include <tuple>
#include <type_traits>
#include <vector>

#include "algorithms/engine/run_algorithm.hpp"
#include "algorithms/engine/local_copy.hpp"
#include "intercept/reduction_properties.hpp"
#include "intercept/entry_point_table.hpp"
#include "intercept/call_arguments.hpp"
#include "intercept/kept_arguments.hpp"
#include "intercept/large_count.hpp"
#include "intercept/nonblocking_requests.hpp"
#include "intercept/runtime.hpp"
#include "decide/shadow_steps.hpp"

#define COLLSHIM_EXPORT extern "C" __attribute__((visibility("default")))

namespace collshim {
namespace {

// The next definition, in load order, of every MPI function the shim defines: looked up when the
// library is loaded (every object is mapped by then), PMPI_* where there is none.
struct NextFunctions {
#define COLLSHIM_NEXT_MEMBER(Name, ...) decltype(&PMPI_##Name) Name = &PMPI_##Name;
  COLLSHIM_DECIDED_ENTRY_POINTS(COLLSHIM_NEXT_MEMBER)
  COLLSHIM_UNHANDLED_ENTRY_POINTS(COLLSHIM_NEXT_MEMBER)
  COLLSHIM_NEXT_MEMBER(Init)
  COLLSHIM_NEXT_MEMBER(Init_thread)
  COLLSHIM_NEXT_MEMBER(Finalize)
#undef COLLSHIM_NEXT_MEMBER
};
NextFunctions next_mpi;

// `own` is the shim's definition: a lookup that finds it again (the shim linked into the program
// itself) must not make a call loop.
template <typename Function>
void look_up_next(Function& next, const char* name, const void* own) {
  void* found = dlsym(RTLD_NEXT, name);
  if (found != nullptr && found != own) next = reinterpret_cast<Function>(found);
}

// The pass-through of the shim's path: the next definition, as a function of the call's arguments.
#define COLLSHIM_NEXT_FUNCTION(Name, Shape, parameters, arguments) \
  int next_##Name parameters { return next_mpi.Name arguments; }
COLLSHIM_DECIDED_ENTRY_POINTS(COLLSHIM_NEXT_FUNCTION)
#undef COLLSHIM_NEXT_FUNCTION
// The library's nonblocking forms, where a nonblocking or persistent operation runs the library's.
#define COLLSHIM_NEXT_FUNCTION(Name, Shape, parameters, shape_arguments, arguments, ...) \
  int next_##Name parameters { return next_mpi.Name arguments; }
COLLSHIM_NONBLOCKING_ENTRY_POINTS(COLLSHIM_NEXT_FUNCTION)
#undef COLLSHIM_NEXT_FUNCTION

bool counts_valid(const int* counts, int p) {
  if (counts == nullptr) return false;
  for (int i = 0; i < p; ++i) {
    if (counts[i] < 0) return false;
  }
  return true;
}

bool any_positive(const int* counts, int p) {
  for (int i = 0; i < p; ++i) {
    if (counts[i] > 0) return true;
  }
  return false;
}

// Bytes of p blocks of counts[i] elements of `type`.
long long bytes_of_blocks(const int* counts, int p, MPI_Datatype type) {
  long long elements = 0;
  for (int block = 0; block < p; ++block) elements += counts[block];
  return elements * type_size(type);
}

// Intercommunicator calls go to the MPI library, which runs its intercommunicator algorithm.
// (MPI_COMM_NULL never gets here: the entry points answer it with null_communicator_error().)
bool usable_comm(MPI_Comm comm) {
  int inter = 0;
  return PMPI_Comm_test_inter(comm, &inter) == MPI_SUCCESS && !inter;
}

// The communicator of a call: its size `p`, and its state if the shim already has it at hand (a
// repeated call on the same communicator; no MPI call then, since only a valid intracommunicator
// has a state). Otherwise `state` is null and the communicator is checked. False: pass through.
bool look_up_comm(Runtime& runtime, MPI_Comm comm, CommState*& state, int& p) {
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
CommState* comm_state(Runtime& runtime, MPI_Comm comm, CommState* known) {
  return known != nullptr ? known : runtime.comms.state(comm, runtime.placement);
}

// The decision policy's collective steps on a communicator's shadow.
ShadowSteps shadow_steps(CommState& state) {
  return ShadowSteps(state.context.comm(), state.context.rank(), state.context.size());
}

// The debug log line of every decided call (COLLSHIM_LOG=debug); out of line, off the hot path.
[[gnu::noinline, gnu::cold]] void log_decision(Runtime& runtime, const CommState& state, Collective collective,
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
  // Reductions: the vector (count x type size), the same on every rank.
  if constexpr (collective_info(collective).shape == CallShape::reduction) return received_bytes;
  // Global: every rank holds the same counts, so every rank computes the same size.
  return received_bytes / p;
}

// What run_collective() needs of a collective: a struct holding one call's arguments, with
// clang-format off
template <typename Entry>
concept CallShape = requires(const Entry& entry, int p, const AlgorithmChoice& choice, CommContext& context,
                             DeviceMemory& memory) {
  { Entry::collective } -> std::convertible_to<Collective>;  // its row in the collective table
  { entry.arguments_usable(p) } -> std::same_as<bool>;  // false: the MPI library gets the call (and reports errors)
  { entry.received_bytes(p) } -> std::same_as<long long>;  // bytes this rank receives (rooted: root's total, others' own)
  { entry.run(choice, context) } -> std::same_as<int>;     // the decided algorithm
  // Whether a buffer this rank's part of the call reads or writes is device memory (buffers with no
  // data to move, and MPI_IN_PLACE, are not asked about).
  { entry.device_buffers(memory, p) } -> std::same_as<bool>;
};
// A blocking call: its shape, with the library's function for it.
template <typename Entry>
concept CollectiveEntry = CallShape<Entry> && requires(const Entry& entry, MPI_Comm comm) {
  { entry.pass_through(comm) } -> std::same_as<int>;       // the PMPI_* call with the user's arguments
};
// clang-format on
// (Not formatted: clang-format 14 breaks the requirement lines apart.)

// The data of a call as the cost model needs it (model::ModelCall): the size, each rank's block
// where they differ (Allgatherv), the element (Allreduce), and Alltoallv's pattern, which only the
// ranks together know (a summary of each rank's counts gathered on rank 0 of the shadow through
// `steps`: collective).
template <CallShape Entry>
model::ModelCall model_call(const Entry& entry, CollectiveSteps& steps, long long block_bytes,
                            const std::vector<int>& node_of_rank, bool gather_pattern = true) {
  const int p = steps.size();
  model::ModelCall call;
  call.collective = Entry::collective;
  call.p = p;
  call.bytes = block_bytes;
  if constexpr (requires { entry.block_bytes_by_rank(p); }) call.block_bytes = entry.block_bytes_by_rank(p);
  if constexpr (requires { entry.element_bytes(); }) call.element_bytes = entry.element_bytes();
  if constexpr (requires { entry.call.sendbuf; }) call.in_place = entry.call.sendbuf == MPI_IN_PLACE;
  if constexpr (requires { entry.call.op; }) call.builtin_op = predefined_operation(entry.call.op);
  if constexpr (requires { entry.sent_bytes(p); }) {
    if (!gather_pattern) return call;
    call.pairs = model::gather_alltoall_pattern(steps, entry.sent_bytes(p), entry.received_bytes_by_source(p),
                                                node_of_rank, block_bytes);
    // Every pair holding the same bytes: the uniform call, costed by its symmetry.
    if (call.pairs.uniform()) call.bytes = call.pairs.every_pair_bytes;
  }
  return call;
}

// A decision not in the cache yet: out of line, so the hit in decide() stays a few instructions.
// Null while a key's session still runs trial calls (online tuning, or the model's confirmation):
// the call is a trial, and nothing is cached until the key is settled.
template <CollectiveEntry Entry>
[[gnu::noinline]] const Decision* decide_and_store(Runtime& runtime, MPI_Comm comm, CommState& state,
                                                   const Entry& entry, long long block_bytes, int properties) {
  const int p = state.context.size();
  ShadowSteps steps = shadow_steps(state);
  const PolicyCall call{
      call_facts(Entry::collective, p, state.mapping, block_bytes, properties), properties, state.mapping.node_of_rank,
      [&](CollectiveSteps& on) { return model_call(entry, on, block_bytes, state.mapping.node_of_rank); }};
  const Outcome outcome = runtime.policy.decide(state.decisions, call, steps);
  if (outcome.settled_now) runtime.learned(comm, state.mapping, p, block_bytes, *outcome.key);
  return outcome.decision;
}

// The decision for this call: a cache hit for a repeated (collective, size, operation properties)
// on this communicator; null for a trial call.
template <CollectiveEntry Entry>
const Decision* decide(Runtime& runtime, MPI_Comm comm, CommState& state, const Entry& entry, long long block_bytes,
                       int properties) {
  if (const Decision* cached = DecisionPolicy::cached(state.decisions, Entry::collective, block_bytes, properties))
    return cached;
  return decide_and_store(runtime, comm, state, entry, block_bytes, properties);
}

// Runs `choice` for the call: the MPI library's collective, or an algorithm on the shadow, whose
// error is raised on the user's communicator `comm`, as the library's own would be.
template <CollectiveEntry Entry>
int execute(MPI_Comm comm, CommState& state, const Entry& entry, const AlgorithmChoice& choice) {
  if (choice.algorithm->passes_through) return entry.pass_through(comm);
  const int rc = entry.run(choice, state.context);
  if (rc != MPI_SUCCESS) PMPI_Comm_call_errhandler(comm, rc);
  return rc;
}

// In a job that may hold GPU buffers (Runtime::device_checks), a call about to run one of the shim's
// algorithms first agrees whether any rank's buffers are device memory: one rank may hold device
// buffers and another host ones, and all must take the same path. Then the MPI library gets it.
template <CollectiveEntry Entry>
bool device_memory_agreed(Runtime& runtime, CommState& state, const Entry& entry, int p) {
  ShadowSteps steps = shadow_steps(state);
  return DecisionPolicy::device_memory_agreed(steps, entry.device_buffers(runtime.device, p));
}

// A call on device memory: passed through whatever was decided, logged once per communicator,
// reported as native for the reason "device memory".
template <CollectiveEntry Entry>
[[gnu::noinline, gnu::cold]] int pass_device_memory_through(Runtime& runtime, MPI_Comm comm, CommState& state,
                                                            const Entry& entry, const AlgorithmChoice& decided,
                                                            long long block_bytes, long long received_bytes) {
  constexpr Collective collective = Entry::collective;
  if (!state.device_memory_logged) {
    state.device_memory_logged = true;
    runtime.log->debug(
        "{}: p={}: device memory in the call's buffers on some rank; {} passes through to the MPI "
        "library (the shim's algorithms touch host memory only); further such calls on this "
        "communicator are not logged",
        mpi_function_name(collective), state.context.size(), decided.text());
  }
  const double start = runtime.profile ? PMPI_Wtime() : 0.0;
  const int rc = entry.pass_through(comm);
  if (runtime.profile) {
    const ProfileKey key{state.context.size(), static_cast<int>(collective),
                         runtime.policy.selector().native_choice()->id, Decision::device_memory,
                         size_bucket(block_bytes)};
    runtime.profile->record(key, received_bytes, PMPI_Wtime() - start);
  }
  return rc;
}

// One trial call of online tuning or the model's confirmation: runs what the key's session tries
// now; the decision policy times it and agrees on the slowest rank's time (every rank then advances
// its session the same way). Every candidate computes what native computes, so the user's results do
// not depend on the trial.
template <CollectiveEntry Entry>
[[gnu::noinline]] int run_tuning_trial(Runtime& runtime, MPI_Comm comm, CommState& state, const Entry& entry,
                                       long long block_bytes, long long received_bytes, int properties) {
  constexpr Collective collective = Entry::collective;
  CommTuning::Entry& key = *state.decisions.tuning.find(collective, size_bucket(block_bytes), properties);
  const Trial trial = runtime.policy.trial(key);
  const AlgorithmChoice& choice = *trial.choice;
  // Not a trial: the candidate cannot run on device memory, and nothing is learned from the call.
  if (runtime.device_checks && !choice.algorithm->passes_through &&
      device_memory_agreed(runtime, state, entry, state.context.size()))
    return pass_device_memory_through(runtime, comm, state, entry, choice, block_bytes, received_bytes);
  ShadowSteps steps = shadow_steps(state);
  double seconds = 0;
  bool settled_now = false;
  const int rc = runtime.policy.run_trial(
      key, steps, [&] { return execute(comm, state, entry, choice); }, seconds, settled_now);
  if (runtime.profile) {
    const ProfileKey profile_key{state.context.size(), static_cast<int>(collective), choice.id, trial.rule_index,
                                 size_bucket(block_bytes)};
    runtime.profile->record(profile_key, received_bytes, seconds);
  }
  if (settled_now) runtime.learned(comm, state.mapping, state.context.size(), block_bytes, key);
  return rc;
}

// The one flow of every intercepted collective: look up the communicator, check the arguments, get
// its state, size the call, decide, then run the algorithm or pass the call through, and record it.
// A template, not std::function: nothing here allocates (but a trial call of online tuning).
template <CollectiveEntry Entry>
int run_collective(Runtime& runtime, MPI_Comm comm, const Entry& entry) {
  constexpr Collective collective = Entry::collective;
  CommState* state = nullptr;
  int p = 0;
  if (!look_up_comm(runtime, comm, state, p) || !entry.arguments_usable(p)) return entry.pass_through(comm);
  state = comm_state(runtime, comm, state);
  if (state == nullptr) return entry.pass_through(comm);
  const long long received_bytes = entry.received_bytes(p);
  int root = 0;
  if constexpr (requires { entry.call.root; }) root = entry.call.root;
  const long long block_bytes = agreed_block_bytes<collective>(runtime, *state, received_bytes, p, root);

  int properties = 0;  // of a reduction's operation and data, the same on every rank
  if constexpr (requires { entry.reduction_properties(); }) properties = entry.reduction_properties();
  const Decision* decision = decide(runtime, comm, *state, entry, block_bytes, properties);
  if (decision == nullptr)
    return run_tuning_trial(runtime, comm, *state, entry, block_bytes, received_bytes, properties);
  const AlgorithmChoice& choice = *decision->choice;
  if (runtime.device_checks && !choice.algorithm->passes_through && device_memory_agreed(runtime, *state, entry, p))
    return pass_device_memory_through(runtime, comm, *state, entry, choice, block_bytes, received_bytes);
  if (runtime.log->should_log(spdlog::level::debug)) log_decision(runtime, *state, collective, block_bytes, *decision);
  const double start = runtime.profile ? PMPI_Wtime() : 0.0;
  const int rc = execute(comm, *state, entry, choice);
  if (runtime.profile) {
    const ProfileKey key{state->context.size(), static_cast<int>(collective), choice.id, decision->rule_index,
                         size_bucket(block_bytes)};
    runtime.profile->record(key, received_bytes, PMPI_Wtime() - start);
  }
  return rc;
}

// The CollectiveEntry of each collective.

// MPI_Allgather and MPI_Allgatherv: the executor's block model, one AllgathervCall.
struct AllgatherFamilyEntry {
  AllgathervCall call;

  bool arguments_usable(int p) const {
    if (call.recvtype == MPI_DATATYPE_NULL ||
        (call.sendbuf != MPI_IN_PLACE && (call.sendtype == MPI_DATATYPE_NULL || call.sendcount < 0)))
      return false;
    return call.recvcounts ? counts_valid(call.recvcounts, p) && call.displs != nullptr : call.uniform_count >= 0;
  }
  bool device_buffers(DeviceMemory& memory, int p) const {
    if (call.sendbuf != MPI_IN_PLACE && call.sendcount > 0 && memory.is_device(call.sendbuf)) return true;
    const bool receives = call.recvcounts ? any_positive(call.recvcounts, p) : call.uniform_count > 0;
    return receives && memory.is_device(call.recvbuf);
  }
  int run(const AlgorithmChoice& choice, CommContext& context) const { return run_call(call, choice, context); }
};

struct AllgatherEntry : AllgatherFamilyEntry {
  static constexpr Collective collective = Collective::allgather;
  explicit AllgatherEntry(const CallArguments<collective>& a)
      : AllgatherFamilyEntry{
            {a.sendbuf, a.sendcount, a.sendtype, a.recvbuf, nullptr, nullptr, a.recvcount, a.recvtype}} {}
  long long received_bytes(int p) const {
    return static_cast<long long>(call.uniform_count) * p * type_size(call.recvtype);
  }
};

struct AllgathervEntry : AllgatherFamilyEntry {
  static constexpr Collective collective = Collective::allgatherv;
  explicit AllgathervEntry(const CallArguments<collective>& a)
      : AllgatherFamilyEntry{{a.sendbuf, a.sendcount, a.sendtype, a.recvbuf, a.recvcounts, a.displs, 0, a.recvtype}} {}
  long long received_bytes(int p) const { return bytes_of_blocks(call.recvcounts, p, call.recvtype); }
  std::vector<long long> block_bytes_by_rank(int p) const {
    std::vector<long long> bytes(p);
    for (int rank = 0; rank < p; ++rank)
      bytes[rank] = static_cast<long long>(call.recvcounts[rank]) * type_size(call.recvtype);
    return bytes;
  }
};

struct AlltoallvEntry {
  static constexpr Collective collective = Collective::alltoallv;
  AlltoallvCall call;
  explicit AlltoallvEntry(const CallArguments<collective>& a)
      : call{a.sendbuf, a.sendcounts, a.sdispls, a.sendtype, a.recvbuf, a.recvcounts, a.rdispls, a.recvtype} {}

  bool arguments_usable(int p) const {
    const bool in_place = call.sendbuf == MPI_IN_PLACE;
    if (call.recvtype == MPI_DATATYPE_NULL || (!in_place && call.sendtype == MPI_DATATYPE_NULL)) return false;
    return counts_valid(call.recvcounts, p) && call.rdispls != nullptr &&
           (in_place || (counts_valid(call.sendcounts, p) && call.sdispls != nullptr));
  }
  long long received_bytes(int p) const { return bytes_of_blocks(call.recvcounts, p, call.recvtype); }
  // Bytes to each destination (in place: the receive counts, which then also describe what is sent).
  std::vector<long long> sent_bytes(int p) const {
    const bool in_place = call.sendbuf == MPI_IN_PLACE;
    const int* counts = in_place ? call.recvcounts : call.sendcounts;
    const long long size = type_size(in_place ? call.recvtype : call.sendtype);
    std::vector<long long> bytes(p);
    for (int destination = 0; destination < p; ++destination) bytes[destination] = counts[destination] * size;
    return bytes;
  }
  // Bytes from each source.
  std::vector<long long> received_bytes_by_source(int p) const {
    const long long size = type_size(call.recvtype);
    std::vector<long long> bytes(p);
    for (int source = 0; source < p; ++source) bytes[source] = call.recvcounts[source] * size;
    return bytes;
  }
  bool device_buffers(DeviceMemory& memory, int p) const {
    if (call.sendbuf != MPI_IN_PLACE && any_positive(call.sendcounts, p) && memory.is_device(call.sendbuf)) return true;
    return any_positive(call.recvcounts, p) && memory.is_device(call.recvbuf);
  }
  int run(const AlgorithmChoice& choice, CommContext& context) const { return run_call(call, choice, context); }
};

// MPI_Alltoall: Alltoallv with equal counts (AlltoallvCall's uniform form, no count arrays).
struct AlltoallEntry {
  static constexpr Collective collective = Collective::alltoall;
  AlltoallvCall call;
  explicit AlltoallEntry(const CallArguments<collective>& a)
      : call{a.sendbuf, nullptr, nullptr,    a.sendtype,  a.recvbuf,
             nullptr,   nullptr, a.recvtype, a.sendcount, a.recvcount} {}

  bool arguments_usable(int) const {
    const bool in_place = call.sendbuf == MPI_IN_PLACE;
    if (call.recvtype == MPI_DATATYPE_NULL || call.recv_uniform_count < 0) return false;
    return in_place || (call.sendtype != MPI_DATATYPE_NULL && call.send_uniform_count >= 0);
  }
  long long received_bytes(int p) const {
    return static_cast<long long>(call.recv_uniform_count) * p * type_size(call.recvtype);
  }
  bool device_buffers(DeviceMemory& memory, int) const {
    if (call.sendbuf != MPI_IN_PLACE && call.send_uniform_count > 0 && memory.is_device(call.sendbuf)) return true;
    return call.recv_uniform_count > 0 && memory.is_device(call.recvbuf);
  }
  int run(const AlgorithmChoice& choice, CommContext& context) const { return run_call(call, choice, context); }
};

// MPI_Allreduce: the vector cut into p segments. Types whose extent is not positive (nothing a
// temporary copy could lay out) and aliased buffers go to the MPI library, which reports the latter.
struct AllreduceEntry {
  static constexpr Collective collective = Collective::allreduce;
  AllreduceCall call;
  explicit AllreduceEntry(const CallArguments<collective>& a) : call{a.sendbuf, a.recvbuf, a.count, a.datatype, a.op} {}

  bool arguments_usable(int) const {
    if (call.type == MPI_DATATYPE_NULL || call.op == MPI_OP_NULL || call.count < 0 || call.sendbuf == call.recvbuf)
      return false;
    MPI_Aint lower_bound = 0, extent = 0;
    return PMPI_Type_get_extent(call.type, &lower_bound, &extent) == MPI_SUCCESS && extent > 0;
  }
  long long received_bytes(int) const { return static_cast<long long>(call.count) * type_size(call.type); }
  int reduction_properties() const { return collshim::reduction_properties(call.type, call.op); }
  long long element_bytes() const { return type_size(call.type); }
  bool device_buffers(DeviceMemory& memory, int) const {
    if (call.count == 0) return false;
    return (call.sendbuf != MPI_IN_PLACE && memory.is_device(call.sendbuf)) || memory.is_device(call.recvbuf);
  }
  int run(const AlgorithmChoice& choice, CommContext& context) const { return run_call(call, choice, context); }
};

// MPI_Gatherv and MPI_Scatterv: the counts and the root-side arguments are checked at the root
// only (where they mean something); a root outside the communicator goes to the MPI library, which
// reports it. The rank-local view of the arguments is what MPI allows: an erroneous call at one
// rank is erroneous for all.
bool root_usable(int root, int p) { return root >= 0 && root < p; }

struct GathervEntry {
  static constexpr Collective collective = Collective::gatherv;
  GathervCall call;
  int rank = MPI_PROC_NULL;  // in the call's communicator (set by intercept())
  explicit GathervEntry(const CallArguments<collective>& a)
      : call{a.sendbuf, a.sendcount, a.sendtype, a.recvbuf, a.recvcounts, a.displs, a.recvtype, a.root} {}

  bool at_root() const { return rank == call.root; }
  bool arguments_usable(int p) const {
    if (!root_usable(call.root, p)) return false;
    const bool sends = !(at_root() && call.sendbuf == MPI_IN_PLACE);
    if (sends && (call.sendtype == MPI_DATATYPE_NULL || call.sendcount < 0)) return false;
    return !at_root() ||
           (call.recvtype != MPI_DATATYPE_NULL && counts_valid(call.recvcounts, p) && call.displs != nullptr);
  }
  long long received_bytes(int p) const {
    return at_root() ? bytes_of_blocks(call.recvcounts, p, call.recvtype)
                     : static_cast<long long>(call.sendcount) * type_size(call.sendtype);
  }
  bool device_buffers(DeviceMemory& memory, int p) const {
    const bool sends = !(at_root() && call.sendbuf == MPI_IN_PLACE) && call.sendcount > 0;
    if (sends && memory.is_device(call.sendbuf)) return true;
    return at_root() && any_positive(call.recvcounts, p) && memory.is_device(call.recvbuf);
  }
  int run(const AlgorithmChoice& choice, CommContext& context) const { return run_call(call, choice, context); }
};

struct ScattervEntry {
  static constexpr Collective collective = Collective::scatterv;
  ScattervCall call;
  int rank = MPI_PROC_NULL;  // in the call's communicator (set by intercept())
  explicit ScattervEntry(const CallArguments<collective>& a)
      : call{a.sendbuf, a.sendcounts, a.displs, a.sendtype, a.recvbuf, a.recvcount, a.recvtype, a.root} {}

  bool at_root() const { return rank == call.root; }
  bool arguments_usable(int p) const {
    if (!root_usable(call.root, p)) return false;
    const bool receives = !(at_root() && call.recvbuf == MPI_IN_PLACE);
    if (receives && (call.recvtype == MPI_DATATYPE_NULL || call.recvcount < 0)) return false;
    return !at_root() ||
           (call.sendtype != MPI_DATATYPE_NULL && counts_valid(call.sendcounts, p) && call.displs != nullptr);
  }
  long long received_bytes(int p) const {
    return at_root() ? bytes_of_blocks(call.sendcounts, p, call.sendtype)
                     : static_cast<long long>(call.recvcount) * type_size(call.recvtype);
  }
  bool device_buffers(DeviceMemory& memory, int p) const {
    const bool receives = !(at_root() && call.recvbuf == MPI_IN_PLACE) && call.recvcount > 0;
    if (receives && memory.is_device(call.recvbuf)) return true;
    return at_root() && any_positive(call.sendcounts, p) && memory.is_device(call.sendbuf);
  }
  int run(const AlgorithmChoice& choice, CommContext& context) const { return run_call(call, choice, context); }
};

// For the debug log: "; X is blocking-only, running Y" where the decision replaced a blocking-only choice.
std::string blocking_only_text(const Decision& decision) {
  if (std::string_view(decision.substitution) != blocking_only_substitution) return {};
  return "; " + decision.requested->text() + " is blocking-only, running " + decision.choice->text();
}

// A nonblocking or persistent call's decision (DecisionPolicy::decide_nonblocking), its data as the
// model costs it without gathering anything (an Alltoallv as uniform at its average block).
template <CallShape Entry>
Decision decide_nonblocking(Runtime& runtime, CommState& state, const Entry& entry, long long block_bytes,
                            int properties, bool settled_by_blocking_calls) {
  const PolicyCall call{call_facts(Entry::collective, state.context.size(), state.mapping, block_bytes, properties),
                        properties, state.mapping.node_of_rank, [&](CollectiveSteps& alone) {
                          return model_call(entry, alone, block_bytes, state.mapping.node_of_rank, false);
                        }};
  return runtime.policy.decide_nonblocking(state.decisions, call, settled_by_blocking_calls);
}

// ---- Nonblocking and persistent collectives ----------------------------------------------------

// A nonblocking or persistent call the shim runs: decided from what this rank knows alone
// (DecisionPolicy::decide_nonblocking), or, where the ranks must agree first (a size only the
// ranks together know, a device-memory vote), after an MPI_Iallreduce on the shadow that is its
// first step. It runs on the communicator's lane (NonblockingLane): a schedule of the registry
// (ScheduleRun), or the library's nonblocking call (`library`: the user's arguments on another
// communicator) where the decision is native or device memory is involved. A persistent operation
// decides at its first start (at MPI_*_init where no agreement is needed) and keeps the decision;
// its buffers are read at each start.
template <CallShape Entry, typename LibraryCall>
class CollectiveOperation final : public Operation {
 public:
  CollectiveOperation(Runtime& runtime, MPI_Comm comm, CommState& state,
                      const CallArguments<Entry::collective>& arguments, LibraryCall library, const char* function,
                      bool persistent, bool size_to_agree, long long block_bytes, int properties,
                      std::optional<Decision> decision)
      : runtime_(runtime),
        comm_(comm),
        state_(state),
        keep_state_(state.shared_from_this()),
        arguments_(arguments, CommShape(state.context.size(), state.context.rank())),
        entry_(arguments_.get()),
        library_(std::move(library)),
        function_(function),
        persistent_(persistent),
        size_to_agree_(size_to_agree),
        block_bytes_(block_bytes),
        properties_(properties),
        decision_(std::move(decision)) {
    if constexpr (requires { entry_.rank; }) entry_.rank = state.context.rank();
  }
  ~CollectiveOperation() override {
    // Freed while running (MPI_Request_free of an active request, then MPI_Finalize): let it end.
    if (phase_ == Phase::agreeing) PMPI_Wait(&agreement_request_, MPI_STATUS_IGNORE);
    if (phase_ == Phase::native) PMPI_Wait(&native_request_, MPI_STATUS_IGNORE);
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
    const SizeAgreement agreement = collective_info(Entry::collective).size_agreement;
    const long long received = entry_.received_bytes(p);
    int root = 0;
    if constexpr (requires { entry_.call.root; }) root = entry_.call.root;
    agreement_[0] = agreement == SizeAgreement::root && state_.context.rank() != root ? 0 : received;
    agreement_[1] = runtime_.device_checks && entry_.device_buffers(runtime_.device, p) ? 1 : 0;
    const int rc = PMPI_Iallreduce(MPI_IN_PLACE, agreement_.data(), 2, MPI_LONG_LONG, MPI_SUM, state_.context.comm(),
                                   &agreement_request_);
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
      int flag = 0;
      MPI_Status status;
      const int rc = PMPI_Test(&native_request_, &flag, &status);
      if (rc != MPI_SUCCESS) return finish(rc), true;
      if (!flag) return false;
      finish(MPI_SUCCESS);
    }
    if (phase_ == Phase::schedule) {
      if (!run_->progress()) return false;
      finish(run_->error());
    }
    return phase_ == Phase::done;
  }

  int error() const override { return error_; }
  MPI_Comm comm() const override { return state_.user_comm_freed ? MPI_COMM_WORLD : comm_; }

 private:
  enum class Phase : std::uint8_t { agreeing, waiting_turn, native, schedule, done };

  bool agreed() {
    int flag = 0;
    const int rc = PMPI_Test(&agreement_request_, &flag, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) {
      finish(rc);
      return false;
    }
    if (!flag) return false;
    const int p = state_.context.size();
    const SizeAgreement agreement = collective_info(Entry::collective).size_agreement;
    if (size_to_agree_ && agreement == SizeAgreement::local)
      block_bytes_ = agreement_[0] / (static_cast<long long>(p) * p);
    if (size_to_agree_ && agreement == SizeAgreement::root) block_bytes_ = agreement_[0] / p;
    device_ = agreement_[1] > 0;
    // Decided during progress, where a blocking call's settled keys could differ between ranks (they
    // reach this point at different calls): rules, forcing and the model's pick only.
    decision_ = decide_nonblocking(runtime_, state_, entry_, block_bytes_, properties_, false);
    phase_ = Phase::waiting_turn;
    return true;
  }
  void act() {
    const Decision& decision = *decision_;
    if (runtime_.log->should_log(spdlog::level::debug)) log_started(decision);
    if (device_ || decision.choice->algorithm->passes_through) {
      const int rc = library_(arguments_.get(), state_.lane.comm, &native_request_);
      if (rc != MPI_SUCCESS) return finish(rc);
      phase_ = Phase::native;
      return;
    }
    AlgorithmState* algorithm = nullptr;
    int rc = state_.context.state(*decision.choice, algorithm);
    if (rc == MPI_SUCCESS)
      rc = make_layout(entry_.call, state_.context.size(), state_.context.rank(), layout_storage_, layout_);
    if (rc != MPI_SUCCESS) return finish(rc);
    const Schedule* schedule = &algorithm->schedule_for(layout_);
    if (!algorithm->keeps_schedules()) {
      own_schedule_ = *schedule;
      schedule = &own_schedule_;
    }
    const int slot = static_cast<int>(ticket_ % static_cast<unsigned long long>(runtime_.nonblocking_tag_slots)) + 1;
    run_ = std::make_unique<ScheduleRun>(*schedule, layout_, engine_, state_.lane.comm, slot * tags_per_schedule);
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
      const ProfileKey key{state_.context.size(),
                           static_cast<int>(Entry::collective),
                           choice,
                           device_ ? Decision::device_memory : decision_->rule_index,
                           size_bucket(block_bytes_),
                           static_cast<int>(form())};
      runtime_.profile->record(key, entry_.received_bytes(state_.context.size()), PMPI_Wtime() - started_at_);
    }
  }
  CallForm form() const { return persistent_ ? CallForm::persistent : CallForm::nonblocking; }

  Runtime& runtime_;
  MPI_Comm comm_;
  CommState& state_;
  std::shared_ptr<CommState> keep_state_;  // the user may free the communicator while this runs
  KeptArguments<Entry::collective> arguments_;
  Entry entry_;  // reads arguments_
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
  MPI_Request agreement_request_ = MPI_REQUEST_NULL;
  MPI_Request native_request_ = MPI_REQUEST_NULL;
  LayoutStorage layout_storage_;
  CallLayout layout_;
  EngineStorage engine_;
  Schedule own_schedule_;
  std::unique_ptr<ScheduleRun> run_;
};

// This rank in `comm`: from the communicator's state when the shim has it at hand (its shadow is a
// dup, so the ranks are the same), otherwise asked of MPI. Only read once look_up_comm() accepted
// the communicator.
int rank_in(Runtime& runtime, MPI_Comm comm) {
  if (const CommState* state = runtime.comms.recent(comm)) return state->context.rank();
  int rank = MPI_PROC_NULL;
  if (PMPI_Comm_rank(comm, &rank) != MPI_SUCCESS) return MPI_PROC_NULL;
  return rank;
}

// The library's nonblocking form of each collective (as the shim's next definition).
template <Collective collective>
struct NonblockingLibrary;
#define COLLSHIM_NONBLOCKING_LIBRARY(Name, lower, UPPER, parameters, ...) \
  template <>                                                             \
  struct NonblockingLibrary<Collective::lower> {                          \
    static constexpr auto function = &next_I##lower;                      \
  };
COLLSHIM_COLLECTIVES(COLLSHIM_NONBLOCKING_LIBRARY)
#undef COLLSHIM_NONBLOCKING_LIBRARY

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
  if (OperationTable::running()) {  // nonblocking operations advance in every call the shim intercepts
    OperationTable& table = OperationTable::instance();
    const auto lock = table.lock();
    table.progress();
  }
  Intercepted<Shape, library, Args...> entry(args...);
  if constexpr (requires { entry.rank; }) entry.rank = rank_in(*runtime, comm);
  return run_collective(*runtime, comm, entry);
}

// A nonblocking or persistent call, passed on unhandled: counted for the report with the bytes the
// blocking call of its shape would receive (0 where its arguments are not usable, or on an
// intercommunicator). Only with COLLSHIM_REPORT; out of line, off the pass-through.
template <typename Shape, typename... Args>
[[gnu::noinline, gnu::cold]] void count_unhandled(Runtime& runtime, UnhandledFunction function, MPI_Comm comm,
                                                  Args... args) {
  long long bytes = 0;
  int p = 0;
  if (comm != MPI_COMM_NULL && usable_comm(comm) && PMPI_Comm_size(comm, &p) == MPI_SUCCESS) {
    Shape entry(args...);
    if constexpr (requires { entry.rank; }) entry.rank = rank_in(runtime, comm);
    if (entry.arguments_usable(p)) bytes = entry.received_bytes(p);
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
  ~LibraryPersistentOperation() override {
    if (request_ != MPI_REQUEST_NULL) PMPI_Wait(&request_, MPI_STATUS_IGNORE);
  }
  LibraryPersistentOperation(const LibraryPersistentOperation&) = delete;
  LibraryPersistentOperation& operator=(const LibraryPersistentOperation&) = delete;

  void start() override { error_ = library_(arguments_.get(), comm_, &request_); }
  bool progress() override {
    if (request_ == MPI_REQUEST_NULL) return true;
    int flag = 0;
    const int rc = PMPI_Test(&request_, &flag, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) error_ = rc;
    return rc != MPI_SUCCESS || flag;
  }
  int error() const override { return error_; }
  MPI_Comm comm() const override { return comm_; }

 private:
  MPI_Comm comm_;
  KeptArguments<collective> arguments_;
  LibraryCall library_;
  MPI_Request request_ = MPI_REQUEST_NULL;
  int error_ = MPI_SUCCESS;
};

// A nonblocking or persistent call. The shim runs it where the communicator already has its state
// (made by a blocking call on it, or at MPI_Init for MPI_COMM_WORLD: making one is collective and
// would block) and its arguments are usable; otherwise the library gets it, counted for the report.
// Decided here where every rank knows the size alone; a nonblocking call decided native then goes
// to the library unwrapped. Otherwise the operation agrees first (CollectiveOperation).
template <typename Shape, typename LibraryCall, typename PassOn, typename... Args>
[[gnu::noinline]] int start_collective(Runtime& runtime, UnhandledFunction function, const char* name, bool persistent,
                                       MPI_Comm comm, MPI_Request* request, LibraryCall library, PassOn pass_on,
                                       Args... args) {
  constexpr Collective collective = Shape::collective;
  const auto unhandled = [&] {
    if (runtime.profile) count_unhandled<Shape>(runtime, function, comm, args...);
    if (!persistent || runtime.nonblocking_native) return pass_on();  // native: the library's own, as asked
    OperationTable& table = OperationTable::instance();
    const auto lock = table.lock();
    return table.add(std::make_unique<LibraryPersistentOperation<collective, LibraryCall>>(
                         comm, CallArguments<collective>{args...}, library),
                     true, request);
  };
  if (runtime.nonblocking_native || runtime.nonblocking_tag_slots == 0) return unhandled();
  OperationTable& table = OperationTable::instance();
  auto lock = table.lock();
  if (OperationTable::running()) table.progress();
  CommState* state = runtime.comms.existing(comm);
  Shape entry(args...);
  const int p = state != nullptr ? state->context.size() : 0;
  if constexpr (requires { entry.rank; }) entry.rank = state != nullptr ? state->context.rank() : MPI_PROC_NULL;
  if (state == nullptr || state->lane.comm == MPI_COMM_NULL || !entry.arguments_usable(p)) {
    lock.unlock();
    return unhandled();
  }
  int properties = 0;
  if constexpr (requires { entry.reduction_properties(); }) properties = entry.reduction_properties();
  const CallFacts facts = call_facts(collective, p, state->mapping, 0, properties);
  const SizeAgreement agreement = collective_info(collective).size_agreement;
  // The ranks agree first where the size is rank-local and some rule tests it, or on the device vote.
  const bool size_to_agree = (agreement == SizeAgreement::local || agreement == SizeAgreement::root) &&
                             runtime.policy.size_must_be_agreed(state->decisions, facts);
  const bool agree = runtime.device_checks || size_to_agree;
  std::optional<Decision> decision;
  long long block_bytes = 0;
  if (!size_to_agree) {  // every rank knows the size it decides by
    int root = 0;
    if constexpr (requires { entry.call.root; }) root = entry.call.root;
    SoloSteps alone(p);  // asked nothing: no agreement is needed
    block_bytes = runtime.policy.agreed_block_bytes(state->decisions, facts, alone, entry.received_bytes(p), root);
  }
  if (!agree) {
    decision = decide_nonblocking(runtime, *state, entry, block_bytes, properties, true);
    if (!persistent && decision->choice->algorithm->passes_through) {
      if (runtime.log->should_log(spdlog::level::debug))
        runtime.log->debug("{}: p={} block_bytes={} algorithm=native ({}{}); the library's own nonblocking call", name,
                           p, block_bytes, decision->reason, blocking_only_text(*decision));
      if (runtime.profile) {
        const ProfileKey key{p,
                             static_cast<int>(collective),
                             decision->choice->id,
                             decision->rule_index,
                             size_bucket(block_bytes),
                             static_cast<int>(CallForm::nonblocking)};
        runtime.profile->record(key, entry.received_bytes(p), 0.0);
      }
      lock.unlock();
      return pass_on();
    }
  }
  // (The operation reads copies of the arguments from here on: `entry` read the program's.)
  auto operation = std::make_unique<CollectiveOperation<Shape, LibraryCall>>(
      runtime, comm, *state, CallArguments<collective>{args...}, std::move(library), name, persistent, size_to_agree,
      block_bytes, properties, decision);
  return table.add(std::move(operation), persistent, request);
}

// MPI_COMM_NULL is reported by the shim itself, as MPI_ERR_COMM through MPI_COMM_WORLD's error
// handler (where MPI 3.1 raises errors that have no valid communicator): Open MPI 4.1.4's own
// MPI_Allgather dereferences it and crashes, even under MPI_ERRORS_RETURN.
[[gnu::noinline]] int null_communicator_error() {
  PMPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_COMM);
  return MPI_ERR_COMM;
}

// Null when the call passes straight through.
Runtime* runtime_for(Collective collective) {
  Runtime* runtime = Runtime::active();
  return runtime == nullptr || runtime->passes_through(collective) ? nullptr : runtime;
}

}  // namespace
}  // namespace collshim

using namespace collshim;

COLLSHIM_EXPORT int MPI_Init(int* argc, char*** argv) {
  const int rc = next_mpi.Init(argc, argv);
  if (rc == MPI_SUCCESS) Runtime::start();
  return rc;
}

COLLSHIM_EXPORT int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  const int rc = next_mpi.Init_thread(argc, argv, required, provided);
  if (rc == MPI_SUCCESS) Runtime::start();
  return rc;
}

COLLSHIM_EXPORT int MPI_Finalize() {
  Runtime::stop();
  return next_mpi.Finalize();
}

// Every row of the table: the exported function, its fast path and the shim's path. A call the shim
// passes on goes to the next definition of the same MPI_* function in load order (another PMPI tool
// preloaded after the shim, such as a profiler, or the MPI library), as PMPI tools stack; the shim's
// own messages go to PMPI_* and are not the application's.
#define COLLSHIM_ARGUMENTS(...) __VA_ARGS__
#define COLLSHIM_ENTRY_POINT(Name, Shape, parameters, arguments)                                                \
  COLLSHIM_EXPORT int MPI_##Name parameters {                                                                   \
    Runtime* runtime = runtime_for(Shape::collective);                                                          \
    if (comm == MPI_COMM_NULL && Runtime::active() != nullptr) return null_communicator_error();                \
    if (runtime == nullptr && !OperationTable::running()) return next_mpi.Name arguments;                       \
    if (runtime == nullptr) return call_library<Shape::collective, &next_##Name>(COLLSHIM_ARGUMENTS arguments); \
    return intercept<Shape, &next_##Name>(runtime, comm, COLLSHIM_ARGUMENTS arguments);                         \
  }
COLLSHIM_DECIDED_ENTRY_POINTS(COLLSHIM_ENTRY_POINT)

// Every nonblocking and persistent form: run by the shim (start_collective), or passed straight on
// where nothing can route it to an algorithm and there is no report (Runtime::started_forms_pass).
// `library` is the operation's way to the library's nonblocking form (the user's arguments on the
// communicator's lane), `pass_on` the call unchanged.
#define COLLSHIM_STARTED_ENTRY_POINT(Name, Shape, parameters, shape_arguments, arguments, form, nonblocking_name) \
  COLLSHIM_EXPORT int MPI_##Name parameters {                                                                     \
    Runtime* runtime = Runtime::active();                                                                         \
    if (runtime == nullptr || runtime->started_forms_pass(Shape::collective)) return next_mpi.Name arguments;     \
    if (comm == MPI_COMM_NULL) return null_communicator_error();                                                  \
    return start_collective<Shape>(                                                                               \
        *runtime, UnhandledFunction::Name, "MPI_" #Name, CallForm::form == CallForm::persistent, comm, request,   \
        [](CallArguments<Shape::collective> kept, MPI_Comm lane, MPI_Request* started) {                          \
          kept.comm = lane;                                                                                       \
          const auto [COLLSHIM_ARGUMENTS shape_arguments] = kept;                                                 \
          return next_##nonblocking_name(COLLSHIM_ARGUMENTS shape_arguments, started);                            \
        },                                                                                                        \
        [=] { return next_mpi.Name arguments; }, COLLSHIM_ARGUMENTS shape_arguments);                             \
  }
COLLSHIM_UNHANDLED_ENTRY_POINTS(COLLSHIM_STARTED_ENTRY_POINT)

// Runs when the library is loaded, before the program's main.
[[gnu::constructor]] static void collshim_look_up_next_functions() {
#define COLLSHIM_LOOK_UP(Name, ...) \
  look_up_next(next_mpi.Name, "MPI_" #Name, reinterpret_cast<const void*>(&MPI_##Name));
  COLLSHIM_DECIDED_ENTRY_POINTS(COLLSHIM_LOOK_UP)
  COLLSHIM_UNHANDLED_ENTRY_POINTS(COLLSHIM_LOOK_UP)
  COLLSHIM_LOOK_UP(Init)
  COLLSHIM_LOOK_UP(Init_thread)
  COLLSHIM_LOOK_UP(Finalize)
#undef COLLSHIM_LOOK_UP
}
