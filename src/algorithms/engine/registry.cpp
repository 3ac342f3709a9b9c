#include "algorithms/engine/registry.hpp"

#include <algorithm>

#include "algorithms/engine/algorithm_spec.hpp"
#include "algorithms/allreduce/allreduce_algorithms.hpp"
#include "algorithms/alltoall/alltoallv_algorithms.hpp"
#include "algorithms/engine/comm_context.hpp"
#include "algorithms/allgather/allgather_hierarchical.hpp"
#include "algorithms/node/node_comms.hpp"
#include "algorithms/allgather/allgather_recursive_multiplying.hpp"
#include "algorithms/rooted/rooted_algorithms.hpp"

#include "algorithms/alltoall/grid_routing.hpp"
#include "algorithms/alltoall/node_grid_routing.hpp"
#include "algorithms/allgather/allgather_algorithms.hpp"

namespace collshim {

// Generators that nothing but this table calls are declared here, next to their entries, rather
// than in their folder's header; a declaration that does not match its definition fails to link.
BlockSchedule recursive_multiplying_schedule(int p, int rank, const Params& params);
BlockSchedule neighbor_exchange_schedule(int p, int rank, const Params& params);
BlockSchedule recursive_doubling_schedule(int p, int rank, const Params& params);
BlockSchedule bruck_schedule(int p, int rank, const Params& params);
BlockSchedule sparbit_schedule(int p, int rank, const Params& params);

using enum Collective;

namespace {

ParamSpec grid_dims_param() {
  return ParamSpec{"dims", "an integer from 2 to " + std::to_string(grid_max_dims) + ", or hypercube", "2",
                   [](std::string_view value) { return parse_grid_dims(value).has_value(); }};
}

// node_grid's shape among nodes: dims=1 is one direct exchange between every pair of nodes.
ParamSpec node_grid_dims_param() {
  return ParamSpec{"dims",
                   "1 (direct between nodes), an integer up to " + std::to_string(grid_max_dims) +
                       " (a grid among nodes), or hypercube",
                   "1", [](std::string_view value) { return parse_node_grid_dims(value).has_value(); }};
}

// Peers at fixed distances (ring, Bruck): the same schedule from every rank, shifted.
RankSymmetry rotation(const std::vector<int>&, const Params&) { return {RankSymmetry::Kind::rotation}; }

// Partners rank XOR 2^s: the binary digits of a power of two.
RankSymmetry binary_digits(const std::vector<int>& node_of_rank, const Params&) {
  const int p = static_cast<int>(node_of_rank.size());
  if (p < 2 || (p & (p - 1)) != 0) return {};
  RankSymmetry symmetry{RankSymmetry::Kind::digits};
  for (int place = 1; place < p; place *= 2) symmetry.radices.push_back(2);
  return symmetry;
}

// Groups of the plan's factors, the first stage's the least significant digit; a collapse breaks it.
RankSymmetry multiplying_digits(const std::vector<int>& node_of_rank, const Params& params) {
  const auto plan = recursive_multiplying_plan(static_cast<int>(node_of_rank.size()), params);
  if (!plan || plan->collapses() || plan->factors.empty()) return {};
  return {RankSymmetry::Kind::digits, 1, plan->factors};
}

// Nodes of one rank each: the leaders are every rank, the node phases move nothing, and `inter`
// runs alone; with the library's exchange among the leaders, the shared-memory window adds nothing.
std::string hierarchical_one_rank_per_node(const Params& params) {
  if (params.at("inter") != "native") return params.at("inter");
  return params.at("intra") == "shm" ? "hierarchical" : "";
}

}  // namespace

bool Algorithm::supports(Collective collective) const {
  return std::find(collectives.begin(), collectives.end(), collective) != collectives.end();
}

const std::vector<Algorithm>& algorithms() {
  static const std::vector<Algorithm> table = [] {
    std::vector<Algorithm> list;
    list.push_back({.name = "native",
                    .summary = "pass the call to the MPI library unchanged",
                    .collectives = all_collectives(),
                    .passes_through = true});
    list.push_back({.name = "ring",
                    .summary = "classic ring: p-1 steps, neighbour traffic only",
                    .collectives = {allgather, allgatherv},
                    .make_block_schedule = ring_schedule,
                    .symmetry = rotation});
    // k = 4: the paper's pipelining model with its measured overlap ratio (alpha_p/alpha_r ~ 4 on
    // ARCHER) puts the optimum near 4-5 peers per stage, and 4 divides the usual power-of-two p.
    // A `factors` list is a schedule for one p; for any other p the choice falls back to the
    // automatic plan (k = 4) rather than to a different algorithm.
    list.push_back({.name = "recursive_multiplying",
                    .summary = "stages of groups of up to k ranks exchange all they hold; collapse/expand "
                               "when p has a prime factor above k",
                    .collectives = {allgather, allgatherv},
                    .params = {integer_param("k", 2, 64, 4), recursive_multiplying_factors_param()},
                    .eligible = recursive_multiplying_eligible,
                    .eligibility = "p equal to the product of `factors`",
                    .fallback = "recursive_multiplying",
                    .make_block_schedule = recursive_multiplying_schedule,
                    .symmetry = multiplying_digits});
    // Fallbacks follow Open MPI's coll/base, which switches neighbor exchange to the ring at odd p
    // and recursive doubling to Bruck (radix 2) at non-power-of-two p.
    list.push_back({.name = "neighbor_exchange",
                    .summary = "Chen et al.: p/2 pairwise steps with alternating neighbours, 2 blocks per step",
                    .collectives = {allgather, allgatherv},
                    .eligible = [](int p, const Params&) { return p % 2 == 0; },
                    .eligibility = "p even",
                    .fallback = "ring",
                    .make_block_schedule = neighbor_exchange_schedule,
                    .symmetry =
                        [](const std::vector<int>&, const Params&) {
                          return RankSymmetry{RankSymmetry::Kind::rotation, 2};
                        }});
    list.push_back({.name = "recursive_doubling",
                    .summary = "log2 p pairwise steps with rank XOR 2^s; the data doubles every step",
                    .collectives = {allgather, allgatherv},
                    .eligible = [](int p, const Params&) { return p > 0 && (p & (p - 1)) == 0; },
                    .eligibility = "p a power of two",
                    .fallback = "bruck",
                    .make_block_schedule = recursive_doubling_schedule,
                    .symmetry = binary_digits});
    // 64 is far beyond any useful radix (a stage posts radix-1 messages); radix >= p is one stage of
    // p-1 direct messages.
    list.push_back({.name = "bruck",
                    .summary = "radix-k Bruck: ceil(log_k p) stages of up to k-1 messages, any p",
                    .collectives = {allgather, allgatherv},
                    .params = {integer_param("radix", 2, 64, 2)},
                    .make_block_schedule = bruck_schedule,
                    .symmetry = rotation});
    list.push_back({.name = "sparbit",
                    .summary = "Loch's Sparbit: Bruck's exchange with halving distances, ceil(log2 p) steps",
                    .collectives = {allgather, allgatherv},
                    .params = {integer_param("coalesce", 0, 1, 0)},
                    .make_block_schedule = sparbit_schedule,
                    .symmetry = rotation});
    // Composed of the flat algorithms (`inter` names them, wherever they are registered).
    list.push_back({.name = "hierarchical",
                    .summary = "node-aware: gather to each node's leader, `inter` among leaders, binomial "
                               "broadcast within nodes",
                    .collectives = {allgather, allgatherv},
                    .make_params =
                        [](const std::vector<Algorithm>& table) {
                          return std::vector{hierarchical_inter_param(table), hierarchical_intra_param()};
                        },
                    .make_schedule = hierarchical_schedule,
                    .symmetry = hierarchical_symmetry,
                    .one_rank_per_node_runs_as = hierarchical_one_rank_per_node,
                    .make_state = make_hierarchical_state,
                    .blocking_only = hierarchical_blocking_only,
                    .nonblocking_fallback = hierarchical_nonblocking_fallback});
    list.push_back({.name = "linear",
                    .summary = "every Irecv and Isend posted at once, one Waitall",
                    .collectives = {alltoallv, alltoall},
                    .make_schedule = linear_alltoallv_schedule,
                    .symmetry = rotation});
    list.push_back({.name = "pairwise",
                    .summary = "p-1 steps; in step k send to rank+k, receive from rank-k",
                    .collectives = {alltoallv, alltoall},
                    .make_schedule = pairwise_alltoallv_schedule,
                    .symmetry = rotation});
    // Eligible for every p: shapes that do not fit p get holes (grid_routing.hpp).
    list.push_back({.name = "grid",
                    .summary = "k-dimensional grid indirection: about sum(d_j - 1) start-ups instead of p-1, "
                               "each byte forwarded up to k times",
                    .collectives = {alltoallv, alltoall},
                    .params = {grid_dims_param()},
                    .make_schedule = grid_alltoallv_schedule,
                    .symmetry = grid_symmetry});
    // Eligible everywhere: one node is an intra-node exchange (combine and deliver phases of nothing
    // but direct blocks), one rank per node the `dims` grid among nodes.
    list.push_back({.name = "node_grid",
                    .summary = "node-aware grid: blocks combined per destination node inside the node, one "
                               "message per node pair (dims=1) or a `dims` grid among nodes, delivered inside",
                    .collectives = {alltoallv, alltoall},
                    .params = {node_grid_dims_param()},
                    .make_schedule = node_grid_alltoallv_schedule,
                    .symmetry = node_grid_symmetry,
                    // Nodes of one rank: nothing to combine or deliver, the grid among nodes alone.
                    .one_rank_per_node_runs_as = [](const Params& params) {
                      return params.at("dims") == "1" ? std::string("linear") : "grid:dims=" + params.at("dims");
                    }});
    // Alltoall only: its blocks are equal, so forwarding them log_k p times costs what the textbook says.
    list.push_back({.name = "bruck",
                    .summary = "radix-k Bruck: ceil(log_k p) phases of up to k-1 messages; blocks travel their "
                               "distance digit by digit",
                    .collectives = {alltoall},
                    .params = {integer_param("radix", 2, 64, 2)},
                    .make_schedule = bruck_alltoall_schedule,
                    .symmetry = rotation});
    // Allreduce. Recursive doubling, Rabenseifner and recursive multiplying combine partners'
    // results in rank order, so they serve non-commutative operations; the ring does not.
    list.push_back({.name = "recursive_doubling",
                    .summary = "whole vectors exchanged with rank XOR 2^s, MPICH's fold for p not a power of two",
                    .collectives = {allreduce},
                    .make_schedule = allreduce_recursive_doubling_schedule,
                    .symmetry = binary_digits});
    list.push_back(
        {.name = "recursive_multiplying",
         .summary = "stages of groups of up to k ranks exchange whole vectors; collapse/expand when p "
                    "has a prime factor above k",
         .collectives = {allreduce},
         .params = {integer_param("k", 2, 64, 4), recursive_multiplying_factors_param(), allreduce_primes_param()},
         .eligible = recursive_multiplying_eligible,
         .eligibility = "p equal to the product of `factors`; with primes=merge a commutative operation",
         .fallback = "recursive_multiplying",
         .needs_commutative = [](const Params& params) { return params.at("primes") == "merge"; },
         .make_schedule = allreduce_recursive_multiplying_schedule,
         .symmetry = multiplying_digits});
    list.push_back({.name = "rabenseifner",
                    .summary = "reduce-scatter by recursive halving, allgather by recursive doubling, MPICH's fold",
                    .collectives = {allreduce},
                    .make_schedule = allreduce_rabenseifner_schedule});
    list.push_back({.name = "ring",
                    .summary = "reduce-scatter and allgather around the ring: 2(p-1) steps of 1/p of the vector",
                    .collectives = {allreduce},
                    .eligibility = "a commutative operation",
                    .fallback = "rabenseifner",
                    .needs_commutative = [](const Params&) { return true; },
                    .make_schedule = allreduce_ring_schedule,
                    .symmetry = rotation});
    // Composed of the flat ones (`inter` names them). Rank order holds only where each node is
    // one run of consecutive ranks; the selector checks the call's mapping.
    list.push_back({.name = "hierarchical",
                    .summary = "node-aware: combine at each node's leader in rank order, `inter` among the leaders, "
                               "send the result back (through a shared-memory window with intra=shm)",
                    .collectives = {allreduce},
                    .make_params =
                        [](const std::vector<Algorithm>& table) {
                          return std::vector{allreduce_hierarchical_inter_param(table), hierarchical_intra_param()};
                        },
                    .eligibility = "for a non-commutative operation: nodes of consecutive ranks, and an `inter` "
                                   "other than ring",
                    .fallback = "rabenseifner",
                    .needs_commutative = [](const Params& params) { return params.at("inter") == "ring"; },
                    .order_needs_consecutive_nodes = true,
                    .make_schedule = allreduce_hierarchical_schedule,
                    .symmetry = allreduce_hierarchical_symmetry,
                    .one_rank_per_node_runs_as = hierarchical_one_rank_per_node,
                    .make_state = make_allreduce_hierarchical_state,
                    .blocking_only = hierarchical_blocking_only,
                    .nonblocking_fallback = hierarchical_nonblocking_fallback});
    // Gatherv and Scatterv: their states make each call's schedule (root- and count-dependent).
    list.push_back({.name = "linear",
                    .summary = "the root posts all p-1 receives (sends) at once; no forwarding",
                    .collectives = {gatherv, scatterv},
                    .make_state = make_linear_rooted_state});
    list.push_back({.name = "binomial",
                    .summary = "fixed binomial tree around the root, ceil(log2 p) rounds, blind to block sizes",
                    .collectives = {gatherv, scatterv},
                    .make_state = make_binomial_rooted_state});
    list.push_back({.name = "traff",
                    .summary = "Traff's data-aware binomial trees: ceil(log2 p) rounds, no block forwarded where it "
                               "delays; built per call in ceil(log2 p) constant-size rounds",
                    .collectives = {gatherv, scatterv},
                    .params = {traff_own_block_param(), traff_linear_above_param()},
                    .make_state = make_traff_state,
                    .blocking_only = [](const Params&) -> std::string_view {
                      return "its trees are built in a blocking exchange of the counts before the schedule";
                    },
                    .nonblocking_fallback = [](const Params&) { return std::string("binomial"); }});
    for (Algorithm& algorithm : list) {
      if (algorithm.make_params) algorithm.params = algorithm.make_params(list);
    }
    // The compact allgather schedules run in their common form.
    for (Algorithm& algorithm : list) {
      if (!algorithm.make_block_schedule || algorithm.make_schedule) continue;
      algorithm.make_schedule = [generate = algorithm.make_block_schedule](const std::vector<int>& node_of_rank,
                                                                           int rank, const Params& params) {
        return lower_block_schedule(generate(static_cast<int>(node_of_rank.size()), rank, params), rank);
      };
    }
    return list;
  }();
  return table;
}

RankSymmetry rank_symmetry(const AlgorithmChoice& choice, const std::vector<int>& node_of_rank) {
  return choice.algorithm->symmetry ? choice.algorithm->symmetry(node_of_rank, choice.params) : RankSymmetry{};
}

Schedule generate_schedule(const AlgorithmChoice& choice, const std::vector<int>& node_of_rank, int rank) {
  return choice.algorithm->make_schedule(node_of_rank, rank, choice.params);
}

int make_algorithm_state(const AlgorithmChoice& choice, CommContext& context, std::unique_ptr<AlgorithmState>& state) {
  if (choice.algorithm->make_state != nullptr) return choice.algorithm->make_state(choice, context, state);
  state = std::make_unique<FixedSchedule>(generate_schedule(choice, context.node_of_rank(), context.rank()));
  return MPI_SUCCESS;
}

const Algorithm* find_algorithm(std::string_view name, std::optional<Collective> collective) {
  const auto& table = algorithms();
  const auto found = std::find_if(table.begin(), table.end(), [&](const Algorithm& a) {
    return a.name == name && (!collective || a.supports(*collective));
  });
  return found == table.end() ? nullptr : &*found;
}

std::string algorithm_names(Collective collective) {
  std::string names;
  for (const Algorithm& algorithm : algorithms()) {
    if (!algorithm.supports(collective)) continue;
    if (!names.empty()) names += ", ";
    names += algorithm.name;
  }
  return names;
}

}  // namespace collshim
