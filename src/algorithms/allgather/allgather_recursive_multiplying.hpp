#pragma once
// Recursive multiplying (Ruefenacht, Bull, Booth, "Generalisation of recursive doubling for
// AllReduce", 2017) adapted to Allgather, which the paper does not treat: the plan that covers p
// ranks, exposed so that tests and tools can check and print it.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "algorithms/engine/registry.hpp"
#include "algorithms/engine/block_schedule.hpp"

namespace collshim {

// How p ranks are covered, in the paper's schedule notation `cTmB, aF1, aF2, ..., eTmB`:
// - collapse (only when collapse_groups > 0): the ranks below T = collapse_base * collapse_groups form
//   groups of collapse_base consecutive ranks; each group's last rank survives and receives the
//   others' blocks;
// - one exchange stage per factor on the q = p - collapse_groups * (collapse_base - 1) virtual ranks
//   (survivors, then the ranks from T up), product of factors = q;
// - expand: each survivor sends the complete result to the other ranks of its group.
struct RecursiveMultiplyingPlan {
  int collapse_base = 1;
  int collapse_groups = 0;
  std::vector<int> factors;

  bool collapses() const { return collapse_groups > 0; }
  int threshold() const { return collapse_base * collapse_groups; }
  int steps() const { return static_cast<int>(factors.size()) + (collapses() ? 2 : 0); }
  int virtual_ranks() const;  // the product of the factors: the ranks the stages run among
  // Messages on the critical path under the paper's pipelining model: a survivor receives B-1
  // messages in the collapse and sends B-1 in the expand; a stage with factor f costs f-1.
  int critical_messages() const;
  // The paper's notation, e.g. "c6m2,a4,e6m2" or "a8,a3,a4"; "" for p = 1.
  std::string notation() const;
};

// The plan for group size at most k. p whose prime factors are all <= k is factorised into factors
// <= k with the fewest stages, then the fewest messages (sum of f-1), largest factor first. Other p
// get the collapse/expand that, over every base B in 2..k and group count, gives the fewest steps,
// then the fewest critical-path messages, then the most virtual ranks.
RecursiveMultiplyingPlan plan_recursive_multiplying(int p, int k);

// "8x3x4" -> {8, 3, 4}: each factor >= 2 and the product within int. nullopt if malformed.
std::optional<std::vector<int>> parse_factor_list(std::string_view text);

// The registry entry's plan for (p, params): the `factors` parameter if given (nullopt unless its
// product is p), else plan_recursive_multiplying(p, k).
std::optional<RecursiveMultiplyingPlan> recursive_multiplying_plan(int p, const Params& params);

// Rank's schedule for a plan that covers p ranks.
BlockSchedule recursive_multiplying_schedule_of(const RecursiveMultiplyingPlan& plan, int p, int rank);

// Registry pieces.
ParamSpec recursive_multiplying_factors_param();
bool recursive_multiplying_eligible(int p, const Params& params);

}  // namespace collshim
