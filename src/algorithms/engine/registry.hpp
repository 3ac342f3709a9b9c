#pragma once
// The algorithm registry: every algorithm the shim can run, with its parameters and eligibility.
// Names and parameters are part of the user interface (COLLSHIM_ALLGATHER=bruck:radix=4, rule tables).
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "algorithms/engine/block_schedule.hpp"
#include "algorithms/engine/collective.hpp"
#include "algorithms/engine/schedule.hpp"

namespace collshim {

// Parameter values stay text after validation; every declared parameter is present (defaults filled in).
using Params = std::map<std::string, std::string, std::less<>>;
int param_int(const Params& params, std::string_view name);

struct ParamSpec {
  std::string name;
  std::string expected;  // what a valid value looks like, for error messages
  std::string default_value;
  std::function<bool(std::string_view)> accepts;
};
ParamSpec integer_param(std::string name, int min_value, int max_value, int default_value);

struct AlgorithmChoice;
class AlgorithmState;
class CommContext;
// The allgather family's compact form (block_schedule.hpp); the registry lowers it to make_schedule.
using BlockScheduleGenerator = std::function<BlockSchedule(int p, int rank, const Params& params)>;
// Rank `rank`'s schedule on a communicator whose ranks run on node_of_rank (p entries).
using ScheduleGenerator = std::function<Schedule(const std::vector<int>& node_of_rank, int rank, const Params& params)>;
// Makes a choice's per-communicator state when it keeps more than its schedule (collective over the
// context's shadow communicator). Returns an MPI error code.
using StateFactory = int (*)(const AlgorithmChoice& choice, CommContext& context,
                             std::unique_ptr<AlgorithmState>& state);

struct Algorithm {
  std::string_view name;
  std::string_view summary;  // one line, shown by `collshim-config list`
  std::vector<Collective> collectives;
  std::vector<ParamSpec> params;
  // Parameters that name other algorithms of the table (a composite's `inter`): made, in place of
  // `params`, once the whole table is registered, so that they accept and list every qualifying
  // algorithm wherever it is registered.
  std::function<std::vector<ParamSpec>(const std::vector<Algorithm>& table)> make_params;
  // Empty means eligible for every p. An ineligible choice runs `fallback` (with its default
  // parameters) instead; the entry point logs the substitution (COLLSHIM_LOG=debug).
  std::function<bool(int p, const Params& params)> eligible;
  std::string_view eligibility;  // human-readable condition, e.g. "p a power of two"
  std::string_view fallback;
  // Reductions: whether the algorithm (with these parameters) cannot keep rank order, so that a
  // non-commutative operation runs `fallback`. Empty: it keeps rank order.
  std::function<bool(const Params& params)> needs_commutative;
  // Reductions: rank order holds only where every node holds one run of consecutive ranks (node-aware
  // algorithms combine node by node); elsewhere a non-commutative operation runs `fallback`.
  bool order_needs_consecutive_nodes = false;
  BlockScheduleGenerator make_block_schedule;  // allgather family; composite algorithms reuse it
  ScheduleGenerator make_schedule;             // every algorithm but native
  // The relabelings of ranks under which its schedules on this node map repeat (schedule.hpp), for
  // the cost model; empty or Kind::none: none declared. Flat algorithms' depend on p alone. The
  // unit tests check every declaration.
  std::function<RankSymmetry(const std::vector<int>& node_of_rank, const Params& params)> symmetry;
  // Node-aware algorithms: the flat choice (spec text) this one runs as where every node holds one
  // rank, the same messages in the same order; empty function or text: none. Tuning then leaves the
  // node-aware form out where that choice is a candidate too (Selector::tuning_candidates): costing
  // or timing one exchange twice buys nothing, and a duplicate takes a confirmation slot.
  std::function<std::string(const Params& params)> one_rank_per_node_runs_as;
  StateFactory make_state = nullptr;  // null: the state is the schedule alone
  // Why it cannot run as a nonblocking or persistent collective with these parameters, where its
  // state synchronizes ranks (a node's shared-memory window, a library collective among leaders, a
  // blocking exchange before the schedule): such a call must never wait for other ranks when it
  // starts. Empty function or text: it can. Such a call runs `nonblocking_fallback` (spec text).
  std::function<std::string_view(const Params& params)> blocking_only;
  std::function<std::string(const Params& params)> nonblocking_fallback;
  bool passes_through = false;  // `native`: hand the call to the MPI library unchanged

  bool supports(Collective collective) const;
  // Whether the shim can run it as a schedule: a registry schedule, or a state that makes one per
  // call (the rooted collectives' schedules depend on the root and counts).
  bool runs_schedules() const { return static_cast<bool>(make_schedule) || make_state != nullptr; }
};

const std::vector<Algorithm>& algorithms();
// `choice`'s schedule for `rank` of a communicator whose ranks run on node_of_rank (p entries).
Schedule generate_schedule(const AlgorithmChoice& choice, const std::vector<int>& node_of_rank, int rank);
// The relabelings under which `choice`'s schedules on node_of_rank repeat (none if it declares none).
RankSymmetry rank_symmetry(const AlgorithmChoice& choice, const std::vector<int>& node_of_rank);
// The per-communicator state of `choice` (CommContext::state makes it through this).
int make_algorithm_state(const AlgorithmChoice& choice, CommContext& context, std::unique_ptr<AlgorithmState>& state);
// The algorithm `name` (of `collective` where given: names repeat across collectives, e.g. `ring`).
const Algorithm* find_algorithm(std::string_view name, std::optional<Collective> collective = std::nullopt);
// Comma-separated names of the algorithms available for a collective, for error messages.
std::string algorithm_names(Collective collective);

}  // namespace collshim
