// Node-aware Allreduce: each node's ranks hand their vectors to the node's leader (its lowest rank),
// which combines them in rank order; the leaders run a flat Allreduce schedule among themselves
// (`inter`); each leader sends the result back to its node's ranks. One schedule over the shadow
// communicator, so the checker verifies it like every flat one.
//
// Order: the leaders' algorithm combines nodes in leader order. Where every node holds one run of
// consecutive ranks (sequential mapping, one node), that is rank order, so a non-commutative
// operation gets the MPI library's order; elsewhere the selector requires a commutative operation.
#include <algorithm>
#include <numeric>

#include "algorithms/algorithm_spec.hpp"
#include "algorithms/allreduce_algorithms.hpp"
#include "algorithms/hierarchical.hpp"

namespace collshim {
namespace {

// The flat schedule algorithms of Allreduce (everything but native and this one).
bool usable_as_allreduce_inter(const Algorithm& algorithm) {
  return algorithm.supports(Collective::allreduce) && algorithm.make_schedule && !algorithm.passes_through &&
         algorithm.name != "hierarchical";
}

// The leaders' schedule, written in the ranks' terms: leader index i is rank leaders[i]; the flat
// schedule's segment j of q is segments [j*p/q, (j+1)*p/q) of p (never empty, as q <= p), and its
// temp copy c is temp copy c of p segments; its send buffer is the leader's receive buffer, which
// already holds the node's combined vector.
Region expand_region(const Region& inner, int q, int p) {
  Region outer{inner.buffer == Buffer::send ? Buffer::recv : inner.buffer, {}};
  for (const std::int64_t block : inner.blocks) {
    const std::int64_t copy = block / q, segment = block % q;
    for (std::int64_t b = segment * p / q; b < (segment + 1) * p / q; ++b) outer.blocks.push_back(copy * p + b);
  }
  return outer;
}

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

Schedule allreduce_hierarchical_schedule(const std::vector<int>& node_of_rank, int rank, const Params& params) {
  const int p = static_cast<int>(node_of_rank.size());
  const auto shared_layout = shared_node_layout(node_of_rank);
  const NodeLayout& layout = *shared_layout;
  const int q = static_cast<int>(layout.members.size());
  const std::vector<int>& members = layout.members[layout.node_of_rank[rank]];
  const bool leader = members.front() == rank;
  const int others = static_cast<int>(members.size()) - 1;
  const Region vector = whole_vector(Buffer::recv, p);

  // The leaders' flat schedule (every leader's has as many steps: the step index is the tag).
  const AlgorithmChoice inter = *make_choice(params.at("inter"), {}, Collective::allreduce).choice;
  std::vector<int> leaders(static_cast<std::size_t>(q));
  for (int node = 0; node < q; ++node) leaders[node] = layout.members[node].front();
  const std::vector<int> leader_nodes = [&] {
    std::vector<int> nodes(static_cast<std::size_t>(q));
    std::iota(nodes.begin(), nodes.end(), 0);
    return nodes;
  }();
  const Schedule among_leaders = generate_schedule(inter, leader_nodes, leader ? layout.node_of_rank[rank] : 0);

  Schedule schedule;
  schedule.temp_copies = std::max(others, among_leaders.temp_copies);
  // Step 0: the contribution into recv (nothing to do with MPI_IN_PLACE). Step 1: the node's other
  // ranks send theirs to the leader, each into its own temp copy. Step 2: the leader combines them
  // left to right, rank order: temp 0 = recv (op) temp 0, temp i = temp i-1 (op) temp i. Step 3: the
  // last one back into recv.
  schedule.steps.resize(4);
  schedule.steps[0].copies.push_back({whole_vector(Buffer::send, p), vector});
  if (leader) {
    for (int i = 0; i < others; ++i) {
      schedule.steps[1].recvs.push_back({members[i + 1], whole_vector(Buffer::temp, p, i)});
      schedule.steps[2].reductions.push_back(
          {i == 0 ? vector : whole_vector(Buffer::temp, p, i - 1), whole_vector(Buffer::temp, p, i)});
    }
    if (others > 0) schedule.steps[3].copies.push_back({whole_vector(Buffer::temp, p, others - 1), vector});
  } else {
    schedule.steps[1].sends.push_back({members.front(), vector});
  }
  // The leaders' phase; the other ranks wait through its steps.
  for (const Step& inner : among_leaders.steps) {
    Step& step = schedule.steps.emplace_back();
    if (!leader) continue;
    for (const LocalCopy& copy : inner.copies)
      step.copies.push_back({expand_region(copy.from, q, p), expand_region(copy.to, q, p)});
    for (const LocalReduce& reduce : inner.reductions)
      step.reductions.push_back({expand_region(reduce.from, q, p), expand_region(reduce.into, q, p)});
    for (const Transfer& send : inner.sends) step.sends.push_back({leaders[send.peer], expand_region(send.region, q, p)});
    for (const Transfer& recv : inner.recvs) step.recvs.push_back({leaders[recv.peer], expand_region(recv.region, q, p)});
  }
  // The result back to the node's other ranks.
  Step& broadcast = schedule.steps.emplace_back();
  if (leader) {
    for (int i = 1; i <= others; ++i) broadcast.sends.push_back({members[i], vector});
  } else {
    broadcast.recvs.push_back({members.front(), vector});
  }
  return schedule;
}

}  // namespace collshim
