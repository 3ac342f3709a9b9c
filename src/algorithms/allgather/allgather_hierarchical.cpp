#include "algorithms/allgather/allgather_hierarchical.hpp"

#include <algorithm>
#include <climits>
#include <numeric>

#include "algorithms/engine/algorithm_spec.hpp"
#include "algorithms/engine/block_schedule.hpp"
#include "algorithms/engine/comm_context.hpp"
#include "algorithms/engine/kept_per_thread.hpp"
#include "algorithms/engine/local_copy.hpp"
#include "algorithms/node/node_comms.hpp"

namespace collshim {
namespace {

// Flat algorithms the leaders can run: schedule algorithms of the allgather family, and native.
bool usable_as_inter(const Algorithm& algorithm) {
  return algorithm.supports(Collective::allgather) && algorithm.supports(Collective::allgatherv) &&
         (algorithm.passes_through || algorithm.make_block_schedule);
}

// All blocks but `excluded`, in rank order: what a broadcast sends to the rank that owns `excluded`.
std::vector<int> blocks_except(int p, int excluded) {
  std::vector<int> blocks(static_cast<std::size_t>(p > 0 ? p - 1 : 0));
  std::iota(blocks.begin(), blocks.begin() + excluded, 0);
  std::iota(blocks.begin() + excluded, blocks.end(), excluded + 1);
  return blocks;
}

// All blocks but `excluded` of `buffer`, in rank order.
Region all_but(Buffer buffer, int p, int excluded) {
  Region region{buffer, {}};
  region.blocks.append_run(0, excluded);  // two runs, not p blocks one by one (p = 16384 in the model)
  region.blocks.append_run(excluded + 1, p - excluded - 1);
  return region;
}

// One step of the broadcast down a binomial tree over the node's members, for one rank: with
// distance d, members 0..d-1 hold everything and member i sends it to member i+d. Every node runs as
// many steps as the largest. -1: nobody.
struct TreeStep {
  int child = -1;   // sent every block but the child's
  int parent = -1;  // received from: every block but the rank's own
};
std::vector<TreeStep> node_broadcast(const NodeLayout& layout, int rank) {
  const std::vector<int>& mine = layout.members[static_cast<std::size_t>(layout.node_of_rank[rank])];
  const int local = layout.local_index[rank], node_size = static_cast<int>(mine.size());
  std::vector<TreeStep> steps(static_cast<std::size_t>(hierarchical_broadcast_steps(layout)));
  for (int distance = 1; TreeStep & step : steps) {
    if (local < distance && local + distance < node_size) {
      step.child = mine[static_cast<std::size_t>(local + distance)];
    } else if (local >= distance && local < 2 * distance) {
      step.parent = mine[static_cast<std::size_t>(local - distance)];
    }
    distance *= 2;
  }
  return steps;
}

// How many steps the leaders' schedule has (every leader's as many): what a non-leader waits
// through. Kept per thread: most ranks are not leaders, and the cost model builds every rank's schedule.
std::size_t leaders_steps(const AlgorithmChoice& inter, int nodes) {
  return kept_per_thread(std::pair{inter.text(), nodes}, [&](const auto&) {
    return inter.algorithm->make_block_schedule(nodes, 0, inter.params).steps.size();
  });
}

// A flat transfer among leaders, with node indices as blocks, as a transfer among ranks.
BlockTransfer expand_transfer(const BlockTransfer& among_leaders, const NodeLayout& layout) {
  BlockTransfer transfer{layout.members[among_leaders.peer].front(), {}};
  for (const int node : among_leaders.blocks) {
    const auto& members = layout.members[node];
    transfer.blocks.insert(transfer.blocks.end(), members.begin(), members.end());
  }
  return transfer;
}

}  // namespace

ParamSpec hierarchical_inter_param(const std::vector<Algorithm>& algorithms) {
  std::string names;
  for (const Algorithm& algorithm : algorithms) {
    if (!usable_as_inter(algorithm)) continue;
    names += names.empty() ? "" : ", ";
    names += algorithm.name;
  }
  return ParamSpec{"inter", "one of: " + names, "native", [](std::string_view value) {
                     const Algorithm* algorithm = find_algorithm(value, Collective::allgatherv);
                     return algorithm != nullptr && usable_as_inter(*algorithm);
                   }};
}

AlgorithmChoice hierarchical_inter_choice(const Params& params, int nodes) {
  const Algorithm* inter = find_algorithm(params.at("inter"), Collective::allgatherv);
  AlgorithmChoice choice = *make_choice(inter->name, {}, Collective::allgatherv).choice;
  if (inter->eligible && !inter->eligible(nodes, choice.params)) {
    choice = *make_choice(inter->fallback, {}, Collective::allgatherv).choice;
  }
  return choice;
}

RankSymmetry hierarchical_symmetry(const std::vector<int>& node_of_rank, const Params& params) {
  const int nodes = static_cast<int>(shared_node_layout(node_of_rank)->members.size());
  const AlgorithmChoice inter = hierarchical_inter_choice(params, nodes);
  // A library collective among leaders is modelled as a direct exchange, the next node first.
  if (inter.algorithm->passes_through) return node_aware_symmetry(node_of_rank, {RankSymmetry::Kind::rotation});
  return node_aware_symmetry(node_of_rank, rank_symmetry(inter, std::vector<int>(static_cast<std::size_t>(nodes), 0)));
}

int hierarchical_broadcast_steps(const NodeLayout& layout) {
  std::size_t largest_node = 0;
  for (const auto& members : layout.members) largest_node = std::max(largest_node, members.size());
  int steps = 0;
  while ((std::size_t{1} << steps) < largest_node) ++steps;
  return steps;
}

namespace {

// The gather to the leaders and the leaders' exchange; the broadcast after them is built by the
// callers, as blocks or as regions of two runs each.
BlockSchedule gather_and_leaders(const std::vector<int>& node_of_rank, int rank, const Params& params) {
  const auto shared_layout = shared_node_layout(node_of_rank);
  const NodeLayout& layout = *shared_layout;
  const int nodes = static_cast<int>(layout.members.size());
  const int node = layout.node_of_rank[rank];
  const int local = layout.local_index[rank];
  const std::vector<int>& mine = layout.members[node];
  const int node_size = static_cast<int>(mine.size());
  BlockSchedule schedule;

  // Gather: every member hands its block to the leader, one message each.
  BlockStep gather;
  if (local == 0) {
    for (int i = 1; i < node_size; ++i) gather.recvs.push_back({mine[i], {mine[i]}});
  } else {
    gather.sends.push_back({mine[0], {rank}});
  }
  schedule.steps.push_back(std::move(gather));

  // Leaders: the flat algorithm over nodes; the other ranks wait the same number of steps (every
  // leader's schedule has as many), so that step indices (the executor's tags) agree everywhere.
  const AlgorithmChoice inter = hierarchical_inter_choice(params, nodes);
  if (inter.algorithm->passes_through || nodes < 2) return schedule;
  if (local != 0) {
    schedule.steps.resize(schedule.steps.size() + leaders_steps(inter, nodes));
    return schedule;
  }
  const BlockSchedule among_leaders = inter.algorithm->make_block_schedule(nodes, node, inter.params);
  for (const BlockStep& flat : among_leaders.steps) {
    BlockStep& step = schedule.steps.emplace_back();
    for (const BlockTransfer& send : flat.sends) step.sends.push_back(expand_transfer(send, layout));
    for (const BlockTransfer& recv : flat.recvs) step.recvs.push_back(expand_transfer(recv, layout));
  }
  return schedule;
}

}  // namespace

BlockSchedule hierarchical_block_schedule(const std::vector<int>& node_of_rank, int rank, const Params& params) {
  BlockSchedule schedule = gather_and_leaders(node_of_rank, rank, params);
  const int p = static_cast<int>(node_of_rank.size());
  for (const TreeStep& tree : node_broadcast(*shared_node_layout(node_of_rank), rank)) {
    BlockStep& step = schedule.steps.emplace_back();
    if (tree.child >= 0) step.sends.push_back({tree.child, blocks_except(p, tree.child)});
    if (tree.parent >= 0) step.recvs.push_back({tree.parent, blocks_except(p, rank)});
  }
  return schedule;
}

namespace {

// The opaque phases. Their steps model them for the checker and the cost model: the leaders'
// Allgatherv as a direct exchange of node regions among leaders; the window as a gather to the
// leader and a broadcast from it, of packed blocks.
enum HierarchicalPhase : int {
  leaders_allgatherv,         // inter=native, intra=p2p: MPI_Allgatherv on the leaders' communicator
  window_in,                  // intra=shm: pack the own block into the node's window; node barrier
  window_leaders_allgatherv,  // intra=shm, inter=native: the leaders exchange their nodes' window regions
  window_out,                 // intra=shm: node barrier; unpack every other block from the window
  window_out_copies,          // modelled only: the unpacking window_out does
};

// A step in which every leader sends its node's blocks of `buffer` to every other leader, the next
// node up first: the same exchange seen from every node, so that it has the rotation symmetry of
// the nodes (hierarchical_symmetry) and the model costs one leader per node orbit.
Step leaders_direct_exchange(const NodeLayout& layout, int rank, Buffer buffer, HierarchicalPhase phase,
                             std::string_view what) {
  Step step;
  step.opaque = OpaquePhase{phase, what};
  const int node = layout.node_of_rank[rank];
  if (layout.local_index[rank] != 0) return step;
  const auto blocks_of = [&](int n) { return Region{buffer, {layout.members[n].begin(), layout.members[n].end()}}; };
  const int nodes = static_cast<int>(layout.members.size());
  for (int k = 1; k < nodes; ++k) {
    const int other = (node + k) % nodes;
    step.sends.push_back({layout.members[other].front(), blocks_of(node)});
    step.recvs.push_back({layout.members[other].front(), blocks_of(other)});
  }
  return step;
}

// intra=shm: the node's blocks meet in a shared-memory window instead of messages. Every rank
// packs its block once into the window, the leaders exchange their nodes' regions (the inter
// schedule's steps on the packed bytes, or the MPI library's Allgatherv), and every rank unpacks
// the others' blocks once: two node barriers instead of a gather and ceil(log2 ppn) broadcast steps.
Schedule window_schedule(const std::vector<int>& node_of_rank, int rank, const Params& params) {
  const auto shared_layout = shared_node_layout(node_of_rank);
  const NodeLayout& layout = *shared_layout;
  const int p = static_cast<int>(node_of_rank.size());
  const int nodes = static_cast<int>(layout.members.size());
  const int node = layout.node_of_rank[rank];
  const bool leader = layout.local_index[rank] == 0;
  const std::vector<int>& mine = layout.members[node];
  Schedule schedule;

  Step& in = schedule.steps.emplace_back();
  in.opaque = OpaquePhase{window_in, "pack into the node's shared-memory window"};
  in.copies.push_back({{Buffer::send, {rank}}, {Buffer::recv, {rank}}});
  in.copies.push_back({{Buffer::recv, {rank}}, {Buffer::shared, {rank}}});
  for (const int member : mine) {
    if (member == rank) continue;
    if (leader) in.recvs.push_back({member, {Buffer::shared, {member}}});
  }
  if (!leader) in.sends.push_back({mine.front(), {Buffer::shared, {rank}}});

  const AlgorithmChoice inter = hierarchical_inter_choice(params, nodes);
  if (inter.algorithm->passes_through) {
    schedule.steps.push_back(leaders_direct_exchange(layout, rank, Buffer::shared, window_leaders_allgatherv,
                                                     "leaders' MPI_Allgatherv of the window's node regions"));
  } else if (nodes > 1 && !leader) {
    schedule.steps.resize(schedule.steps.size() + leaders_steps(inter, nodes));
  } else if (nodes > 1) {
    const BlockSchedule among_leaders = inter.algorithm->make_block_schedule(nodes, node, inter.params);
    for (const BlockStep& flat : among_leaders.steps) {
      Step& step = schedule.steps.emplace_back();
      for (const BlockTransfer& send : flat.sends) {
        const BlockTransfer expanded = expand_transfer(send, layout);
        step.sends.push_back({expanded.peer, {Buffer::shared, {expanded.blocks.begin(), expanded.blocks.end()}}});
      }
      for (const BlockTransfer& recv : flat.recvs) {
        const BlockTransfer expanded = expand_transfer(recv, layout);
        step.recvs.push_back({expanded.peer, {Buffer::shared, {expanded.blocks.begin(), expanded.blocks.end()}}});
      }
    }
  }

  Step& out = schedule.steps.emplace_back();
  out.opaque = OpaquePhase{window_out, "unpack from the node's shared-memory window"};
  for (const int member : mine) {
    if (member == rank) continue;
    if (leader) out.sends.push_back({member, all_but(Buffer::shared, p, member)});
  }
  if (!leader) out.recvs.push_back({mine.front(), all_but(Buffer::shared, p, rank)});
  Step& unpack = schedule.steps.emplace_back();
  unpack.opaque = OpaquePhase{window_out_copies, "unpack from the node's shared-memory window"};
  unpack.copies.push_back({all_but(Buffer::shared, p, rank), all_but(Buffer::recv, p, rank)});
  return schedule;
}

}  // namespace

Schedule hierarchical_schedule(const std::vector<int>& node_of_rank, int rank, const Params& params) {
  if (params.at("intra") == "shm") return window_schedule(node_of_rank, rank, params);
  Schedule schedule = lower_block_schedule(gather_and_leaders(node_of_rank, rank, params), rank);
  const auto shared_layout = shared_node_layout(node_of_rank);
  const NodeLayout& layout = *shared_layout;
  // The broadcast as regions of two runs: p − 1 blocks one by one cost the model seconds at p = 16384.
  const int p = static_cast<int>(node_of_rank.size());
  for (const TreeStep& tree : node_broadcast(layout, rank)) {
    Step& step = schedule.steps.emplace_back();
    if (tree.child >= 0) step.sends.push_back({tree.child, all_but(Buffer::recv, p, tree.child)});
    if (tree.parent >= 0) step.recvs.push_back({tree.parent, all_but(Buffer::recv, p, rank)});
  }
  if (hierarchical_inter_choice(params, static_cast<int>(layout.members.size())).algorithm->passes_through) {
    const auto after_gather = schedule.steps.begin() + hierarchical_gather_steps;
    schedule.steps.insert(after_gather, leaders_direct_exchange(layout, rank, Buffer::recv, leaders_allgatherv,
                                                                "leaders' MPI_Allgatherv"));
  }
  return schedule;
}

namespace {

// Elements of each node's blocks; whether they lie back to back in member order (then a node's
// blocks are one run of recvtype starting at `first`).
struct NodeGroup {
  long long elements = 0;
  MPI_Aint first = 0;
  bool one_run = true;
};

NodeGroup node_group(const TypedBuffer& recv, const std::vector<int>& members) {
  NodeGroup group;
  MPI_Aint next = 0;
  for (const int rank : members) {
    if (recv.count(rank) == 0) continue;
    if (group.elements == 0) {
      group.first = recv.displacement(rank);
    } else if (recv.displacement(rank) != next) {
      group.one_run = false;
    }
    next = recv.displacement(rank) + recv.count(rank);
    group.elements += recv.count(rank);
  }
  return group;
}

// The leaders' Allgatherv through the MPI library. Each node's blocks are one contribution: in
// place when every node's blocks form one run of recvtype, otherwise through a staging buffer in
// node order. Counts and displacements are in units of `unit` consecutive recvtype elements, the
// largest that divides them all, so that an Allgather of more than INT_MAX elements still fits (its
// node runs are whole multiples of its count).
struct LeaderExchange {
  bool in_place = true;
  bool fits = true;  // false: the counts need more than int even in units (the phase runs as modelled)
  long long unit = 0;
  long long total = 0;  // elements of all blocks
};

// Every rank computes this (it depends on the call's counts only), so all agree on `fits`.
LeaderExchange plan_leader_exchange(const TypedBuffer& recv, NodeComms& leaders) {
  const auto& members = leaders.layout.members;
  LeaderExchange plan;
  std::vector<NodeGroup> groups(members.size());
  for (std::size_t n = 0; n < members.size(); ++n) {
    groups[n] = node_group(recv, members[n]);
    plan.in_place = plan.in_place && groups[n].one_run;
    plan.unit = std::gcd(plan.unit, groups[n].elements);
  }
  for (const NodeGroup& group : groups) {
    plan.unit = std::gcd(plan.unit, plan.in_place ? static_cast<long long>(group.first) : plan.total);
    plan.total += group.elements;
  }
  plan.unit = std::max(plan.unit, 1LL);
  long long staged = 0;  // elements before each node in the staging buffer
  for (std::size_t n = 0; n < members.size(); ++n) {
    const long long displacement = plan.in_place ? static_cast<long long>(groups[n].first) : staged;
    staged += groups[n].elements;
    const long long count = groups[n].elements / plan.unit, offset = displacement / plan.unit;
    plan.fits = plan.fits && count <= INT_MAX && offset <= INT_MAX && offset >= INT_MIN && plan.unit <= INT_MAX;
    leaders.counts[n] = static_cast<int>(count);
    leaders.displs[n] = static_cast<int>(offset);
  }
  return plan;
}

// A committed hindexed type over the receive buffer's blocks, freed when it goes.
class BlocksType {
 public:
  template <typename Blocks>
  BlocksType(const TypedBuffer& recv, const Blocks& blocks, CommContext& context) {
    status_ = create_blocks_type(recv, blocks, context.engine.type_lengths, context.engine.type_offsets, type_);
  }
  ~BlocksType() {
    if (type_ != MPI_DATATYPE_NULL) PMPI_Type_free(&type_);
  }
  BlocksType(const BlocksType&) = delete;
  BlocksType& operator=(const BlocksType&) = delete;
  int status() const { return status_; }
  MPI_Datatype get() const { return type_; }

 private:
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
  int status_ = MPI_SUCCESS;
};

int allgather_among_leaders(const TypedBuffer& recv, const LeaderExchange& plan, NodeComms& leaders,
                            CommContext& context) {
  const NodeLayout& layout = leaders.layout;
  MPI_Datatype unit_type = recv.type;
  if (plan.unit > 1) {
    int rc = PMPI_Type_contiguous(static_cast<int>(plan.unit), recv.type, &unit_type);
    if (rc == MPI_SUCCESS) rc = PMPI_Type_commit(&unit_type);
    if (rc != MPI_SUCCESS) return rc;
  }
  int rc = MPI_SUCCESS;
  if (plan.in_place) {
    rc = PMPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv.base, leaders.counts.data(), leaders.displs.data(),
                         unit_type, leaders.leaders);
  } else {
    MPI_Aint true_lb = 0, true_extent = 0;
    PMPI_Type_get_true_extent(recv.type, &true_lb, &true_extent);
    context.staging.resize(static_cast<std::size_t>((plan.total - 1) * recv.extent + true_extent));
    std::byte* const staging = context.staging.data() - true_lb;  // element i at staging + i * extent
    const int node = layout.node_of_rank[context.rank()];
    // The own node's blocks go to the staging buffer first and the exchange runs in place there
    // (sending them from recvbuf as one hindexed element gave wrong bytes under Open MPI 4.1.4 after
    // calls with other counts; cause not pinned down).
    const BlocksType own(recv, layout.members[node], context);
    rc = own.status();
    if (rc == MPI_SUCCESS)
      rc = copy_typed(recv.base, 1, own.get(),
                      staging + static_cast<MPI_Aint>(leaders.displs[node]) * plan.unit * recv.extent,
                      leaders.counts[node], unit_type, context.comm(), context.rank());
    if (rc == MPI_SUCCESS)
      rc = PMPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, staging, leaders.counts.data(), leaders.displs.data(),
                           unit_type, leaders.leaders);
    // Back to the user's displacements: all blocks in node order (the own node's come back unchanged).
    const BlocksType all(recv, layout.ranks_in_node_order, context);
    if (rc == MPI_SUCCESS) rc = all.status();
    if (rc == MPI_SUCCESS)
      rc = copy_typed(staging, static_cast<int>(plan.total / plan.unit), unit_type, recv.base, 1, all.get(),
                      context.comm(), context.rank());
  }
  if (unit_type != recv.type) PMPI_Type_free(&unit_type);
  return rc;
}

class HierarchicalState final : public AlgorithmState {
 public:
  HierarchicalState(Schedule schedule, Schedule point_to_point)
      : schedule_(std::move(schedule)), point_to_point_(std::move(point_to_point)) {}

  // Collective over the shadow.
  int make_comms(CommContext& context) { return NodeComms::create(context.comm(), context.node_of_rank(), comms_); }

  const Schedule& schedule_for(const CallLayout& call) override {
    if (point_to_point_.steps.empty()) return schedule_;
    // intra=shm: the window serves the call if every node's ranks share memory and the packed
    // result fits int offsets; all ranks agree (the counts are global, `shareable` was agreed).
    return comms_->shareable && pack_layout(call.recv) ? schedule_ : point_to_point_;
  }

  int run_phase(int id, CallLayout& call, CommContext& context) override {
    NodeComms& comms = *comms_;
    const bool leads = comms.leaders != MPI_COMM_NULL && comms.layout.members.size() > 1;
    switch (id) {
      case leaders_allgatherv: {
        const LeaderExchange plan = plan_leader_exchange(call.recv, comms);
        // Beyond int even in units: the modelled direct exchange, with the engine's datatypes.
        if (!plan.fits) return runs_as_modelled;
        if (!leads || plan.total == 0) return MPI_SUCCESS;
        return allgather_among_leaders(call.recv, plan, comms, context);
      }
      case window_in: return fill_window(call, context);
      case window_leaders_allgatherv: {
        if (!leads) return MPI_SUCCESS;
        for (std::size_t n = 0; n < comms.layout.members.size(); ++n) {
          const int first = comms.layout.members[n].front(), last = comms.layout.members[n].back();
          comms.displs[n] = comms.packed_offsets[first];
          comms.counts[n] = comms.packed_offsets[last] + comms.packed_bytes[last] - comms.packed_offsets[first];
        }
        return PMPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, call.shared.base, comms.counts.data(),
                               comms.displs.data(), MPI_BYTE, comms.leaders);
      }
      case window_out: return empty_window(call, context);
      default: return MPI_SUCCESS;  // window_out_copies: done by window_out
    }
  }

 private:
  // Packed offsets of every block in node order; false when they do not fit int or there is nothing.
  bool pack_layout(const TypedBuffer& recv) {
    NodeComms& comms = *comms_;
    long long total = 0;
    for (const int rank : comms.layout.ranks_in_node_order) {
      const long long bytes = recv.bytes(rank);
      if (bytes > INT_MAX || total > INT_MAX) return false;
      comms.packed_bytes[rank] = static_cast<int>(bytes);
      comms.packed_offsets[rank] = static_cast<int>(total);
      total += bytes;
    }
    packed_total_ = total;
    return total > 0 && total <= INT_MAX;
  }

  // Successive calls use the two halves of the window in turn, so a fast rank packing the next
  // call's block never overwrites what a slow one is still reading.
  int fill_window(CallLayout& call, CommContext& context) {
    return comms_->fill_window(2 * static_cast<MPI_Aint>(packed_total_), [&] { return pack_own_block(call, context); });
  }

  // The own block to its place in the receive buffer and, packed, into this call's half of the window.
  int pack_own_block(CallLayout& call, CommContext& context) {
    NodeComms& comms = *comms_;
    std::byte* const region = comms.window_base + (comms.window_half ? comms.window_bytes / 2 : 0);
    call.shared = {region, comms.packed_offsets.data(), comms.packed_bytes.data()};
    const int me = context.rank();
    const TypedBuffer &send = call.send, &recv = call.recv;
    int first_error = MPI_SUCCESS;
    if (send.address(me) != recv.address(me))
      keep_first_error(first_error, copy_typed(send.address(me), send.count(me), send.type, recv.address(me),
                                               recv.count(me), recv.type, context.comm(), me));
    int position = 0;
    keep_first_error(first_error,
                     PMPI_Pack(recv.address(me), recv.count(me), recv.type, region + comms.packed_offsets[me],
                               comms.packed_bytes[me], &position, context.comm()));
    return first_error;
  }

  int empty_window(CallLayout& call, CommContext& context) {
    NodeComms& comms = *comms_;
    int first_error = comms.synchronize_window();
    comms.window_half ^= 1;  // the next call packs into the other half
    const TypedBuffer& recv = call.recv;
    for (int rank = 0; rank < context.size(); ++rank) {
      if (rank == context.rank() || comms.packed_bytes[rank] == 0) continue;
      int position = 0;
      keep_first_error(first_error,
                       PMPI_Unpack(call.shared.base + comms.packed_offsets[rank], comms.packed_bytes[rank], &position,
                                   recv.address(rank), recv.count(rank), recv.type, context.comm()));
    }
    return first_error;
  }

  Schedule schedule_;
  Schedule point_to_point_;  // intra=shm only: what runs when the window cannot serve a call
  std::unique_ptr<NodeComms> comms_;
  long long packed_total_ = 0;
};

}  // namespace

int make_hierarchical_state(const AlgorithmChoice& choice, CommContext& context,
                            std::unique_ptr<AlgorithmState>& state) {
  const std::vector<int>& node_of_rank = context.node_of_rank();
  const Params& params = choice.params;
  const bool window = params.at("intra") == "shm";
  const bool native_inter = find_algorithm(params.at("inter"), Collective::allgatherv)->passes_through;
  auto made = std::make_unique<HierarchicalState>(
      hierarchical_schedule(node_of_rank, context.rank(), params),
      window ? hierarchical_schedule(node_of_rank, context.rank(), with_intra(params, "p2p")) : Schedule{});
  if (window || native_inter) {
    const int rc = made->make_comms(context);
    if (rc != MPI_SUCCESS) return rc;
  }
  state = std::move(made);
  return MPI_SUCCESS;
}

}  // namespace collshim
