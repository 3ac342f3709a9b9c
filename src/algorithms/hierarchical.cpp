#include "algorithms/hierarchical.hpp"

#include <algorithm>
#include <climits>
#include <numeric>

#include "algorithms/algorithm_spec.hpp"
#include "algorithms/allgatherv_executor.hpp"
#include "algorithms/comm_context.hpp"
#include "algorithms/local_copy.hpp"

namespace collshim {
namespace {

// Flat algorithms the leaders can run: schedule algorithms of the allgather family, and native.
bool usable_as_inter(const Algorithm& algorithm) {
  return algorithm.supports(Collective::allgather) && algorithm.supports(Collective::allgatherv) &&
         (algorithm.passes_through || algorithm.make_schedule);
}

// All blocks but `excluded`, in rank order: what a broadcast sends to the rank that owns `excluded`.
std::vector<int> blocks_except(int p, int excluded) {
  std::vector<int> blocks;
  blocks.reserve(p > 0 ? p - 1 : 0);
  for (int block = 0; block < p; ++block) {
    if (block != excluded) blocks.push_back(block);
  }
  return blocks;
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

NodeLayout make_node_layout(const std::vector<int>& node_of_rank) {
  NodeLayout layout;
  const int p = static_cast<int>(node_of_rank.size());
  layout.node_of_rank.resize(p);
  layout.local_index.resize(p);
  std::vector<int> ids;  // node identifiers in order of first appearance
  for (int rank = 0; rank < p; ++rank) {
    const auto found = std::find(ids.begin(), ids.end(), node_of_rank[rank]);
    const int node = static_cast<int>(found - ids.begin());
    if (found == ids.end()) {
      ids.push_back(node_of_rank[rank]);
      layout.members.emplace_back();
    }
    layout.node_of_rank[rank] = node;
    layout.local_index[rank] = static_cast<int>(layout.members[node].size());
    layout.members[node].push_back(rank);
  }
  for (const auto& members : layout.members)
    layout.ranks_in_node_order.insert(layout.ranks_in_node_order.end(), members.begin(), members.end());
  return layout;
}

ParamSpec hierarchical_inter_param(const std::vector<Algorithm>& algorithms) {
  std::string names;
  for (const Algorithm& algorithm : algorithms) {
    if (!usable_as_inter(algorithm)) continue;
    names += names.empty() ? "" : ", ";
    names += algorithm.name;
  }
  return ParamSpec{"inter", "one of: " + names, "native", [](std::string_view value) {
                     const Algorithm* algorithm = find_algorithm(value);
                     return algorithm != nullptr && usable_as_inter(*algorithm);
                   }};
}

ParamSpec hierarchical_intra_param() {
  return ParamSpec{"intra", "p2p or shm", "p2p",
                   [](std::string_view value) { return value == "p2p" || value == "shm"; }};
}

AlgorithmChoice hierarchical_inter_choice(const Params& params, int nodes) {
  const Algorithm* inter = find_algorithm(params.at("inter"));
  AlgorithmChoice choice = *make_choice(inter->name, {}, Collective::allgatherv).choice;
  if (inter->eligible && !inter->eligible(nodes, choice.params)) {
    choice = *make_choice(inter->fallback, {}, Collective::allgatherv).choice;
  }
  return choice;
}

int hierarchical_broadcast_steps(const NodeLayout& layout) {
  std::size_t largest_node = 0;
  for (const auto& members : layout.members) largest_node = std::max(largest_node, members.size());
  int steps = 0;
  while ((std::size_t{1} << steps) < largest_node) ++steps;
  return steps;
}

Schedule hierarchical_schedule(const std::vector<int>& node_of_rank, int rank, const Params& params) {
  const NodeLayout layout = make_node_layout(node_of_rank);
  const int p = static_cast<int>(node_of_rank.size());
  const int nodes = static_cast<int>(layout.members.size());
  const int node = layout.node_of_rank[rank];
  const int local = layout.local_index[rank];
  const std::vector<int>& mine = layout.members[node];
  const int node_size = static_cast<int>(mine.size());
  Schedule schedule;

  // Gather: every member hands its block to the leader, one message each.
  ScheduleStep gather;
  if (local == 0) {
    for (int i = 1; i < node_size; ++i) gather.recvs.push_back({mine[i], {mine[i]}});
  } else {
    gather.sends.push_back({mine[0], {rank}});
  }
  schedule.steps.push_back(std::move(gather));

  // Leaders: the flat algorithm over nodes; the other ranks wait the same number of steps, so that
  // step indices (the executor's tags) agree everywhere.
  const AlgorithmChoice inter = hierarchical_inter_choice(params, nodes);
  if (!inter.algorithm->passes_through && nodes > 1) {
    const Schedule among_leaders = inter.algorithm->make_schedule(nodes, local == 0 ? node : 0, inter.params);
    for (const ScheduleStep& flat : among_leaders.steps) {
      ScheduleStep step;
      if (local == 0) {
        for (const BlockTransfer& send : flat.sends) step.sends.push_back(expand_transfer(send, layout));
        for (const BlockTransfer& recv : flat.recvs) step.recvs.push_back(expand_transfer(recv, layout));
      }
      schedule.steps.push_back(std::move(step));
    }
  }

  // Broadcast down a binomial tree over the node's members: with distance d, members 0..d-1 hold
  // everything and member i sends it to member i+d. Every node runs as many steps as the largest.
  const int broadcast_steps = hierarchical_broadcast_steps(layout);
  for (int s = 0, distance = 1; s < broadcast_steps; ++s, distance *= 2) {
    ScheduleStep step;
    if (local < distance && local + distance < node_size) {
      const int child = mine[local + distance];
      step.sends.push_back({child, blocks_except(p, child)});
    } else if (local >= distance && local < 2 * distance) {
      step.recvs.push_back({mine[local - distance], blocks_except(p, rank)});
    }
    schedule.steps.push_back(std::move(step));
  }
  return schedule;
}

namespace {

// The MPI library's own collective for the whole call, on the shadow.
int run_native(const AllgathervCall& call, MPI_Comm comm) {
  if (call.recvcounts == nullptr)
    return PMPI_Allgather(call.sendbuf, call.sendcount, call.sendtype, call.recvbuf, call.uniform_count,
                          call.recvtype, comm);
  return PMPI_Allgatherv(call.sendbuf, call.sendcount, call.sendtype, call.recvbuf, call.recvcounts, call.displs,
                         call.recvtype, comm);
}

// Elements of each node's blocks; whether they lie back to back in member order (then a node's
// blocks are one run of recvtype starting at `first`).
struct NodeGroup {
  long long elements = 0;
  MPI_Aint first = 0;
  bool one_run = true;
};

NodeGroup node_group(const AllgathervCall& call, const std::vector<int>& members) {
  NodeGroup group;
  MPI_Aint next = 0;
  for (const int rank : members) {
    if (call.count(rank) == 0) continue;
    if (group.elements == 0) {
      group.first = call.displacement(rank);
    } else if (call.displacement(rank) != next) {
      group.one_run = false;
    }
    next = call.displacement(rank) + call.count(rank);
    group.elements += call.count(rank);
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
  bool fits = true;     // false: the counts need more than int even in units (the call runs natively)
  long long unit = 0;
  long long total = 0;  // elements of all blocks
};

// Every rank computes this (it depends on the call's counts only), so all agree on `fits`.
LeaderExchange plan_leader_exchange(const AllgathervCall& call, NodeComms& leaders) {
  const auto& members = leaders.layout.members;
  LeaderExchange plan;
  std::vector<NodeGroup> groups(members.size());
  for (std::size_t n = 0; n < members.size(); ++n) {
    groups[n] = node_group(call, members[n]);
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

int allgather_among_leaders(const AllgathervCall& call, const LeaderExchange& plan, NodeComms& leaders,
                            CommContext& context) {
  const NodeLayout& layout = leaders.layout;
  MPI_Datatype unit_type = call.recvtype;
  if (plan.unit > 1) {
    int rc = PMPI_Type_contiguous(static_cast<int>(plan.unit), call.recvtype, &unit_type);
    if (rc == MPI_SUCCESS) rc = PMPI_Type_commit(&unit_type);
    if (rc != MPI_SUCCESS) return rc;
  }
  int rc = MPI_SUCCESS;
  if (plan.in_place) {
    rc = PMPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, call.recvbuf, leaders.counts.data(),
                         leaders.displs.data(), unit_type, leaders.leaders);
  } else {
    MPI_Aint lower_bound = 0, extent = 0, true_lb = 0, true_extent = 0;
    PMPI_Type_get_extent(call.recvtype, &lower_bound, &extent);
    PMPI_Type_get_true_extent(call.recvtype, &true_lb, &true_extent);
    context.staging.resize(static_cast<std::size_t>((plan.total - 1) * extent + true_extent));
    std::byte* const staging = context.staging.data() - true_lb;  // element i at staging + i * extent
    const int node = layout.node_of_rank[context.rank()];
    MPI_Datatype own = MPI_DATATYPE_NULL, all = MPI_DATATYPE_NULL;
    rc = create_blocks_type(call, layout.members[node], extent, context, own);
    // The own node's blocks go to the staging buffer first and the exchange runs in place there
    // (sending them from recvbuf as one hindexed element gave wrong bytes under Open MPI 4.1.4 after
    // calls with other counts; cause not pinned down).
    if (rc == MPI_SUCCESS)
      rc = copy_typed(call.recvbuf, 1, own, staging + static_cast<MPI_Aint>(leaders.displs[node]) * plan.unit * extent,
                      leaders.counts[node], unit_type, context.comm(), context.rank());
    if (rc == MPI_SUCCESS)
      rc = PMPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, staging, leaders.counts.data(), leaders.displs.data(),
                           unit_type, leaders.leaders);
    // Back to the user's displacements: all blocks in node order (the own node's come back unchanged).
    if (rc == MPI_SUCCESS) rc = create_blocks_type(call, layout.ranks_in_node_order, extent, context, all);
    if (rc == MPI_SUCCESS)
      rc = copy_typed(staging, static_cast<int>(plan.total / plan.unit), unit_type, call.recvbuf, 1, all,
                      context.comm(), context.rank());
    if (own != MPI_DATATYPE_NULL) PMPI_Type_free(&own);
    if (all != MPI_DATATYPE_NULL) PMPI_Type_free(&all);
  }
  if (unit_type != call.recvtype) PMPI_Type_free(&unit_type);
  return rc;
}

// intra=shm: the node's blocks meet in a shared-memory window instead of messages. Every rank packs
// its block once into the window (packed bytes, nodes one after the other), the leaders exchange
// their nodes' regions, and every rank unpacks the others' blocks once: two node barriers instead of
// a gather and ceil(log2 ppn) broadcast steps of the whole result. Successive calls use the two
// halves of the window in turn, so a fast rank packing the next call's block never overwrites
// what a slow one is still reading. Returns false (having done nothing) when the packed result
// does not fit int offsets; the caller then runs the point-to-point phases.
bool run_through_window(const AllgathervCall& call, const Schedule& schedule, bool native_inter, NodeComms& comms,
                        CommContext& context, int& rc) {
  const NodeLayout& layout = comms.layout;
  const long long element_bytes = type_size(call.recvtype);
  long long total = 0;
  for (const auto& members : layout.members) {
    for (const int rank : members) {
      const long long bytes = static_cast<long long>(call.count(rank)) * element_bytes;
      if (bytes > INT_MAX || total > INT_MAX) return false;
      comms.packed_bytes[rank] = static_cast<int>(bytes);
      comms.packed_offsets[rank] = static_cast<int>(total);
      total += bytes;
    }
  }
  if (total > INT_MAX) return false;
  rc = MPI_SUCCESS;
  if (total == 0) return true;
  if ((rc = comms.reserve_window(2 * static_cast<MPI_Aint>(total))) != MPI_SUCCESS) return true;
  std::byte* const region = comms.window_base + (comms.window_half ? comms.window_bytes / 2 : 0);
  comms.window_half ^= 1;

  const int me = context.rank();
  MPI_Aint lower_bound = 0, extent = 0;
  PMPI_Type_get_extent(call.recvtype, &lower_bound, &extent);
  char* const recvbuf = static_cast<char*>(call.recvbuf);
  if ((rc = copy_own_block(call, context)) != MPI_SUCCESS) return true;
  int position = 0;
  rc = PMPI_Pack(recvbuf + call.displacement(me) * extent, call.count(me), call.recvtype,
                 region + comms.packed_offsets[me], comms.packed_bytes[me], &position, context.comm());
  if (rc == MPI_SUCCESS) rc = comms.synchronize_window();
  if (rc != MPI_SUCCESS) return true;

  const auto nodes = layout.members.size();
  if (comms.leaders != MPI_COMM_NULL && nodes > 1) {
    if (native_inter) {
      for (std::size_t n = 0; n < nodes; ++n) {
        const int first = layout.members[n].front(), last = layout.members[n].back();
        comms.displs[n] = comms.packed_offsets[first];
        comms.counts[n] = comms.packed_offsets[last] + comms.packed_bytes[last] - comms.packed_offsets[first];
      }
      rc = PMPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, region, comms.counts.data(), comms.displs.data(),
                           MPI_BYTE, comms.leaders);
    } else {
      // The schedule's own inter steps, on the packed bytes: a node's blocks are one run there.
      const AllgathervCall packed{MPI_IN_PLACE, 0, MPI_BYTE, region, comms.packed_bytes.data(),
                                  comms.packed_offsets.data(), 0, MPI_BYTE};
      const std::size_t inter_end = schedule.steps.size() - hierarchical_broadcast_steps(layout);
      rc = run_schedule_steps(schedule, hierarchical_gather_steps, inter_end, packed, context);
    }
  }
  if (rc == MPI_SUCCESS) rc = comms.synchronize_window();
  for (int rank = 0; rc == MPI_SUCCESS && rank < context.size(); ++rank) {
    if (rank == me || comms.packed_bytes[rank] == 0) continue;
    position = 0;
    rc = PMPI_Unpack(region + comms.packed_offsets[rank], comms.packed_bytes[rank], &position,
                     recvbuf + call.displacement(rank) * extent, call.count(rank), call.recvtype, context.comm());
  }
  return true;
}

}  // namespace

int run_hierarchical_allgatherv(const AllgathervCall& call, const AlgorithmChoice& choice, CommContext& context) {
  const Schedule& schedule = context.schedule(choice);
  const bool native_inter = find_algorithm(choice.params.at("inter"))->passes_through;
  const bool shared_memory = choice.params.at("intra") == "shm";
  if (!native_inter && !shared_memory) return run_allgatherv_schedule(schedule, call, context);

  // Collective over the shadow on the first call, before any rank goes its own way.
  if (!context.node_comms) {
    const int rc = NodeComms::create(context.comm(), context.node_of_rank(), context.node_comms);
    if (rc != MPI_SUCCESS) return rc;
  }
  NodeComms& comms = *context.node_comms;
  int rc = MPI_SUCCESS;
  if (shared_memory && comms.shareable && run_through_window(call, schedule, native_inter, comms, context, rc))
    return rc;
  if (!native_inter) return run_allgatherv_schedule(schedule, call, context);

  const LeaderExchange plan = plan_leader_exchange(call, comms);
  // Beyond int even in units (node blocks of more than INT_MAX elements with no common divisor):
  // the MPI library's own collective, which has its own large-count handling.
  if (!plan.fits) return run_native(call, context.comm());
  rc = copy_own_block(call, context);
  if (rc == MPI_SUCCESS) rc = run_schedule_steps(schedule, 0, hierarchical_gather_steps, call, context);
  if (rc == MPI_SUCCESS && comms.leaders != MPI_COMM_NULL && comms.layout.members.size() > 1 && plan.total > 0)
    rc = allgather_among_leaders(call, plan, comms, context);
  if (rc == MPI_SUCCESS) rc = run_schedule_steps(schedule, hierarchical_gather_steps, schedule.steps.size(), call, context);
  return rc;
}

}  // namespace collshim
