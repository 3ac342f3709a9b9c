// Node-aware Allreduce: each node's ranks hand their vectors to the node's leader (its lowest rank),
// which combines them in rank order; the leaders run a flat Allreduce schedule among themselves
// (`inter`); each leader sends the result back to its node's ranks. One schedule over the shadow
// communicator, so the checker verifies it like every flat one.
//
// Order: the leaders' algorithm combines nodes in leader order. Where every node holds one run of
// consecutive ranks (sequential mapping, one node), that is rank order, so a non-commutative
// operation gets the MPI library's order; elsewhere the selector requires a commutative operation.
//
// `intra=shm`: the node's vectors meet in a shared-memory window instead of messages. Each member
// copies its vector into its own slot, in the user's layout (so MPI_Reduce_local works on slots).
// After a node barrier every member combines its share of the elements across the slots in rank
// order, slot i = slot i-1 (op) slot i, the association the p2p schedule uses, so results are bit
// for bit the same; after a second barrier the leader takes the node's result for the leaders'
// phase (on one node every member takes it: there is no such phase). The leader copies the
// leaders' result into slot 0 and after a third barrier every member copies it out at once, where
// p2p sends it member after member. The modelled steps stay the p2p schedule's (the gather as one
// opaque phase, the leader's combining and the send back as others), so the checker verifies the
// same exchange; the cost model, which reads them, puts all the combining on the leader. Calls
// alternate between two halves of the window, so a member starting the next call never writes a
// slot another member is still reading.
#include <algorithm>
#include <numeric>
#include <optional>
#include <string>

#include "algorithms/engine/algorithm_spec.hpp"
#include "algorithms/allreduce/allreduce_algorithms.hpp"
#include "algorithms/engine/comm_context.hpp"
#include "algorithms/engine/kept_per_thread.hpp"
#include "algorithms/engine/local_copy.hpp"
#include "algorithms/node/node_comms.hpp"
#include "algorithms/node/node_layout.hpp"

namespace collshim {
namespace {

// The flat schedule algorithms of Allreduce: not native, and no node-aware one (those declare what
// they run as on nodes of one rank), whatever their names.
bool usable_as_allreduce_inter(const Algorithm& algorithm) {
  return algorithm.supports(Collective::allreduce) && algorithm.make_schedule && !algorithm.passes_through &&
         !algorithm.one_rank_per_node_runs_as;
}

// The leaders' schedule, written in the ranks' terms: leader index i is rank leaders[i]; the flat
// schedule's segment j of q is segments [j*p/q, (j+1)*p/q) of p (never empty, as q <= p), and its
// temp copy c is temp copy c of p segments; its send buffer is the leader's receive buffer, which
// already holds the node's combined vector.
Region expand_region(const Region& inner, int q, int p) {
  Region outer{inner.buffer == Buffer::send ? Buffer::recv : inner.buffer, {}};
  // A run of the leaders' segments within one copy is one run of the ranks' (the segments tile the
  // vector): a whole vector among a thousand leaders is one run, not a thousand.
  for (const BlockList::Run& run : inner.blocks.runs()) {
    for (std::int64_t block = run.first; block < run.first + run.count;) {
      const std::int64_t copy = block / q, segment = block % q;
      const std::int64_t last = std::min(run.first + run.count, (copy + 1) * q) - 1;  // within this copy
      const std::int64_t first = segment * p / q, end = (last % q + 1) * p / q;
      outer.blocks.append_run(copy * p + first, end - first);
      block = last + 1;
    }
  }
  return outer;
}

// The leaders' node map for their flat schedule: leader i is alone on node i.
std::vector<int> leader_nodes(int leaders) {
  std::vector<int> nodes(static_cast<std::size_t>(leaders));
  std::iota(nodes.begin(), nodes.end(), 0);
  return nodes;
}

// What a non-leader takes from the leaders' schedule: its step count (every leader's has as many)
// and its temp copies, as leader 0's, kept per thread (at 16 ranks per node, 15 of 16 built the
// leaders' schedule for nothing).
struct LeadersShape {
  std::size_t steps = 0;
  int temp_copies = 0;
};
LeadersShape leaders_shape(const AlgorithmChoice& inter, int leaders) {
  return kept_per_thread(std::pair{inter.text(), leaders}, [&](const auto&) {
    const Schedule first = generate_schedule(inter, leader_nodes(leaders), 0);
    return LeadersShape{first.steps.size(), first.temp_copies};
  });
}

// The opaque phases of intra=shm: they replace the gather's two steps and the send back.
enum WindowPhase : int {
  contributions_through_window,  // into the own slot; barrier; combine a share; barrier; the leader takes it
  combined_in_window,            // modelled only: the combining the phase above did
  result_through_window,         // the leader's result into slot 0; barrier; every member copies it out
};

}  // namespace

ParamSpec allreduce_hierarchical_inter_param(const std::vector<Algorithm>& algorithms) {
  std::string names;
  for (const Algorithm& algorithm : algorithms) {
    if (!usable_as_allreduce_inter(algorithm)) continue;
    names += names.empty() ? "" : ", ";
    names += algorithm.name;
  }
  return ParamSpec{"inter", "one of: " + names, "recursive_doubling", [](std::string_view value) {
                     const Algorithm* algorithm = find_algorithm(value, Collective::allreduce);
                     return algorithm != nullptr && usable_as_allreduce_inter(*algorithm);
                   }};
}

namespace {

// Where a leader's schedule among the leaders wants its node's vector: its first step copies the send
// buffer (recvbuf, in place) there, recvbuf itself except on recursive doubling's or multiplying's
// last rank (a temp copy, which keeps its schedule every rank's relabeled). In that schedule's terms;
// nothing where something else of it reads the send buffer (the vector must then stay in recvbuf).
std::optional<LocalCopy> leaders_start(const Schedule& among_leaders) {
  std::optional<LocalCopy> start;
  int reads_of_send = 0;
  for (const Step& inner : among_leaders.steps) {
    for (const LocalCopy& copy : inner.copies) {
      if (copy.from.buffer != Buffer::send) continue;
      ++reads_of_send;
      if (&inner == &among_leaders.steps.front()) start = copy;
    }
    for (const LocalReduce& reduce : inner.reductions) reads_of_send += reduce.from.buffer == Buffer::send;
    for (const Transfer& send : inner.sends) reads_of_send += send.region.buffer == Buffer::send;
  }
  if (reads_of_send != 1) start.reset();
  return start;
}

}  // namespace

RankSymmetry allreduce_hierarchical_symmetry(const std::vector<int>& node_of_rank, const Params& params) {
  const int nodes = static_cast<int>(shared_node_layout(node_of_rank)->members.size());
  const AlgorithmChoice inter = *make_choice(params.at("inter"), {}, Collective::allreduce).choice;
  const RankSymmetry among_leaders = rank_symmetry(inter, std::vector<int>(static_cast<std::size_t>(nodes), 0));
  // The leaders run `inter` in place (their recvbuf holds the node's vector), where recursive
  // doubling's and multiplying's last rank copies its vector to a temp copy and the others copy
  // nothing. Where every node has members, the copy of the node's combined vector (or the window's)
  // puts it there instead, one copy on every leader, and their digit symmetry holds; not with one
  // rank per node.
  if (among_leaders.kind != RankSymmetry::Kind::rotation &&
      shared_node_layout(node_of_rank)->members.front().size() < 2)
    return {};
  return node_aware_symmetry(node_of_rank, among_leaders);
}

Schedule allreduce_hierarchical_schedule(const std::vector<int>& node_of_rank, int rank, const Params& params) {
  const int p = static_cast<int>(node_of_rank.size());
  const auto shared_layout = shared_node_layout(node_of_rank);
  const NodeLayout& layout = *shared_layout;
  const int q = static_cast<int>(layout.members.size());
  const std::vector<int>& members = layout.members[layout.node_of_rank[rank]];
  const bool leader = members.front() == rank;
  const int others = static_cast<int>(members.size()) - 1;
  const Region vector = whole_vector(Buffer::recv, p);

  // The leaders' flat schedule (every leader's has as many steps: the step index is the tag). A
  // non-leader needs only its shape: at p = 16384, building the leaders' lists for each of the 15
  // others of a node was a third of costing the algorithm.
  const AlgorithmChoice inter = *make_choice(params.at("inter"), {}, Collective::allreduce).choice;
  const Schedule among_leaders =
      leader ? generate_schedule(inter, leader_nodes(q), layout.node_of_rank[rank]) : Schedule{};
  const LeadersShape shape =
      leader ? LeadersShape{among_leaders.steps.size(), among_leaders.temp_copies} : leaders_shape(inter, q);

  Schedule schedule;
  schedule.temp_copies = std::max(others, shape.temp_copies);
  // The node's combined vector goes straight to where the leaders' schedule starts, and that
  // schedule's own first copy is left out (the window does the same: AllreduceWindowState).
  const std::optional<LocalCopy> inner_start = leaders_start(among_leaders);
  const bool combine_into_start = inner_start && others > 0;
  const Region start = combine_into_start ? expand_region(inner_start->to, q, p) : vector;

  // Step 0: the contribution into recv (nothing to do with MPI_IN_PLACE). Step 1: the node's other
  // ranks send theirs to the leader, member i into temp copy others - i. Step 2: the leader combines
  // them left to right, rank order: temp others-1 = recv (op) temp others-1, then temp i = temp i+1
  // (op) temp i, down to temp 0. Step 3: temp 0 to where the leaders' schedule starts (recursive
  // doubling's and multiplying's last temp copy is never temp 0: they have at least two).
  schedule.steps.resize(4);
  schedule.steps[0].copies.push_back({whole_vector(Buffer::send, p), vector});
  if (leader) {
    for (int i = 1; i <= others; ++i) {
      const Region receipt = whole_vector(Buffer::temp, p, others - i);
      schedule.steps[1].recvs.push_back({members[i], receipt});
      schedule.steps[2].reductions.push_back(
          {i == 1 ? vector : whole_vector(Buffer::temp, p, others - i + 1), receipt});
    }
    if (others > 0) schedule.steps[3].copies.push_back({whole_vector(Buffer::temp, p, 0), start});
  } else {
    schedule.steps[1].sends.push_back({members.front(), vector});
  }
  // The leaders' phase; the other ranks wait through its steps.
  schedule.steps.reserve(schedule.steps.size() + shape.steps + 1);
  if (!leader) schedule.steps.resize(schedule.steps.size() + shape.steps);
  for (const Step& inner : among_leaders.steps) {
    Step& step = schedule.steps.emplace_back();
    for (const LocalCopy& copy : inner.copies) {
      if (combine_into_start && &inner == &among_leaders.steps.front() && copy.from.buffer == Buffer::send) continue;
      step.copies.push_back({expand_region(copy.from, q, p), expand_region(copy.to, q, p)});
    }
    for (const LocalReduce& reduce : inner.reductions)
      step.reductions.push_back({expand_region(reduce.from, q, p), expand_region(reduce.into, q, p)});
    for (const Transfer& send : inner.sends)
      step.sends.push_back({layout.members[send.peer].front(), expand_region(send.region, q, p)});  // its leader
    for (const Transfer& recv : inner.recvs)
      step.recvs.push_back({layout.members[recv.peer].front(), expand_region(recv.region, q, p)});
  }
  // The result back to the node's other ranks.
  Step& broadcast = schedule.steps.emplace_back();
  if (leader) {
    for (int i = 1; i <= others; ++i) broadcast.sends.push_back({members[i], vector});
  } else {
    broadcast.recvs.push_back({members.front(), vector});
  }
  if (params.at("intra") == "shm") {
    // The window's phases model exactly the steps they replace: the gather's two as one, the
    // combining (reductions, the copy into recv), the send back.
    Step& gather = schedule.steps[0];
    for (Transfer& transfer : schedule.steps[1].sends) gather.sends.push_back(std::move(transfer));
    for (Transfer& transfer : schedule.steps[1].recvs) gather.recvs.push_back(std::move(transfer));
    gather.opaque = OpaquePhase{contributions_through_window, "contributions through the node's shared-memory window"};
    schedule.steps.erase(schedule.steps.begin() + 1);
    for (const int combining : {1, 2})
      schedule.steps[combining].opaque = OpaquePhase{combined_in_window, "combined in the node's shared-memory window"};
    schedule.steps.back().opaque = OpaquePhase{result_through_window, "result through the node's shared-memory window"};
  }
  return schedule;
}

namespace {

// The temp copy a leader's schedule among the leaders starts in (leaders_start), or -1: recvbuf, or
// not a leader with members.
int leaders_start_copy(const std::vector<int>& node_of_rank, int rank, const Params& params) {
  const auto shared_layout = shared_node_layout(node_of_rank);
  const NodeLayout& layout = *shared_layout;
  const std::vector<int>& members = layout.members[layout.node_of_rank[rank]];
  if (members.front() != rank || members.size() < 2) return -1;
  const int q = static_cast<int>(layout.members.size());
  const AlgorithmChoice inter = *make_choice(params.at("inter"), {}, Collective::allreduce).choice;
  const std::optional<LocalCopy> start =
      leaders_start(generate_schedule(inter, leader_nodes(q), layout.node_of_rank[rank]));
  if (!start || start->to.buffer != Buffer::temp || start->to.blocks.empty()) return -1;
  return static_cast<int>(*start->to.blocks.begin() / q);  // block c·q + segment of temp copy c
}

class AllreduceWindowState final : public AlgorithmState {
 public:
  AllreduceWindowState(Schedule window, Schedule point_to_point, int start_copy)
      : window_(std::move(window)), point_to_point_(std::move(point_to_point)), start_copy_(start_copy) {}

  // Collective over the shadow.
  int make_comms(CommContext& context) { return NodeComms::create(context.comm(), context.node_of_rank(), comms_); }

  // The window serves every call with data on nodes whose ranks share memory; every rank agrees
  // (the count and type signature are global, `shareable` was agreed when the communicators were made).
  const Schedule& schedule_for(const CallLayout& call) override {
    const TypedBuffer& recv = call.recv;
    count_ = recv.displacement(call.p - 1) + recv.count(call.p - 1);
    MPI_Aint true_extent = 0;
    PMPI_Type_get_true_extent(recv.type, &true_lb_, &true_extent);
    const MPI_Aint span = count_ == 0 ? 0 : (count_ - 1) * recv.extent + true_extent;
    slot_bytes_ = (span + slot_alignment - 1) / slot_alignment * slot_alignment;
    return comms_->shareable && count_ > 0 && recv.extent > 0 && slot_bytes_ > 0 ? window_ : point_to_point_;
  }

  int run_phase(int id, CallLayout& call, CommContext& context) override {
    NodeComms& comms = *comms_;
    const int rank = context.rank();
    const int local = comms.layout.local_index[rank];
    const int members = static_cast<int>(comms.layout.members[comms.layout.node_of_rank[rank]].size());
    const bool one_node = comms.layout.members.size() == 1;
    const MPI_Datatype type = call.recv.type;
    const auto copy = [&](const void* from, void* to) {
      return copy_typed(from, static_cast<int>(count_), type, to, static_cast<int>(count_), type, context.comm(), rank);
    };
    int first_error = MPI_SUCCESS;
    if (id == contributions_through_window) {
      // The contribution goes straight from the send buffer into the slot (recv gets the result later).
      if (members == 1) return call.send.base != call.recv.base ? copy(call.send.base, call.recv.base) : MPI_SUCCESS;
      const int rc = comms.fill_window(2 * members * slot_bytes_, [&] { return copy(call.send.base, slot(local)); });
      if (comms.window_base == nullptr) return rc;  // failed on every member: no window to use
      keep_first_error(first_error, rc);
      // This member's share: elements [first, end), in rank order across the slots.
      const long long first = count_ * local / members, end = count_ * (local + 1) / members;
      const MPI_Aint offset = static_cast<MPI_Aint>(first) * call.recv.extent;
      for (int i = 1; i < members && end > first; ++i)
        keep_first_error(first_error, PMPI_Reduce_local(slot(i - 1) + offset, slot(i) + offset,
                                                        static_cast<int>(end - first), type, call.op));
      keep_first_error(first_error, comms.synchronize_window());
      // The leader's copy goes where its schedule among the leaders starts (see the schedule).
      if (local == 0 || one_node)
        keep_first_error(first_error, copy(slot(members - 1), local == 0 ? start(call) : call.recv.base));
      return first_error;
    }
    if (id == combined_in_window || members == 1) return MPI_SUCCESS;
    // result_through_window. A window the first phase could not make failed on every member.
    if (comms.window_base == nullptr) return MPI_ERR_NO_MEM;
    if (!one_node) {
      if (local == 0) keep_first_error(first_error, copy(call.recv.base, slot(0)));
      keep_first_error(first_error, comms.synchronize_window());
      if (local != 0) keep_first_error(first_error, copy(slot(0), call.recv.base));
    }
    comms.window_half ^= 1;  // the next call uses the other half
    return first_error;
  }

 private:
  static constexpr MPI_Aint slot_alignment = 64;  // a cache line: no two members write one line
  // Slot `index` of this call's half as a vector in the user's layout: its true lower bound at the
  // slot's start.
  char* slot(int index) const {
    const MPI_Aint half = comms_->window_half ? comms_->window_bytes / 2 : 0;
    return reinterpret_cast<char*>(comms_->window_base) + half + static_cast<MPI_Aint>(index) * slot_bytes_ - true_lb_;
  }

  // The leader's schedule among the leaders starts in temp copy start_copy_, or in recvbuf (-1).
  char* start(const CallLayout& call) const {
    if (start_copy_ < 0) return call.recv.base;
    return call.temp.base + static_cast<MPI_Aint>(start_copy_) * call.temp.copy_displacement * call.temp.extent;
  }

  Schedule window_;
  Schedule point_to_point_;  // where the window cannot serve a call
  int start_copy_;
  std::unique_ptr<NodeComms> comms_;
  long long count_ = 0;
  MPI_Aint true_lb_ = 0;
  MPI_Aint slot_bytes_ = 0;
};

}  // namespace

int make_allreduce_hierarchical_state(const AlgorithmChoice& choice, CommContext& context,
                                      std::unique_ptr<AlgorithmState>& state) {
  const std::vector<int>& node_of_rank = context.node_of_rank();
  Schedule point_to_point =
      allreduce_hierarchical_schedule(node_of_rank, context.rank(), with_intra(choice.params, "p2p"));
  if (choice.params.at("intra") != "shm") {
    state = std::make_unique<FixedSchedule>(std::move(point_to_point));
    return MPI_SUCCESS;
  }
  auto made = std::make_unique<AllreduceWindowState>(
      allreduce_hierarchical_schedule(node_of_rank, context.rank(), choice.params), std::move(point_to_point),
      leaders_start_copy(node_of_rank, context.rank(), choice.params));
  if (const int rc = made->make_comms(context); rc != MPI_SUCCESS) return rc;
  state = std::move(made);
  return MPI_SUCCESS;
}

}  // namespace collshim
