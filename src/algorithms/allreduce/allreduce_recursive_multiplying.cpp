// Recursive multiplying Allreduce (Ruefenacht, Bull, Booth, "Generalisation of recursive doubling
// for AllReduce", 2017): in stage i each virtual rank sends its whole partial result to the f_i - 1
// other members of its group (the ranks that differ from it only in digit i) and combines the f_i
// results. Virtual ranks map to ascending intervals of real ranks, so a group's members hold
// adjacent rank intervals in group order, and combining them in that order keeps non-commutative
// operations right. p with a prime factor above k collapse first (each group of `base` ranks
// reduces into its last rank) and expand at the end (the paper's "splitting", the default), or,
// with primes=merge, use the paper's prime merging: p = R + q with q factorable; rank r < R sends
// its vector to the first-stage group r mod G (whose members add it once, with their group's
// results) and receives the pre-final results of last-stage group r mod G', which together combine
// everything, itself included. No extra stages, but contributions of ranks below R join out of rank
// order, so merging needs a commutative operation.
#include <algorithm>

#include "algorithms/allreduce/allreduce_algorithms.hpp"

namespace collshim {
namespace {

// Where a partial result lies: the receive buffer, or a temp copy.
struct Place {
  Buffer buffer = Buffer::recv;
  int copy = 0;
};

// Adds to `step` the reductions that combine the partial results at `places` (in rank order; the
// rank's own at `own`) and returns where the result is. Left neighbours fold into the own result
// (into = from (op) into); right ones fold right to left into the last place, which then takes the
// own result as its left operand.
Place combine_in_order(Step& step, const std::vector<Place>& places, std::size_t own, int p) {
  const auto region = [p](Place at) { return whole_vector(at.buffer, p, at.copy); };
  Place result = places[own];
  for (std::size_t i = own; i-- > 0;) step.reductions.push_back({region(places[i]), region(result)});
  if (own + 1 < places.size()) {
    const Place right = places.back();
    for (std::size_t i = places.size() - 1; i-- > own + 1;)
      step.reductions.push_back({region(places[i]), region(right)});
    step.reductions.push_back({region(result), region(right)});
    result = right;
  }
  return result;
}

}  // namespace

Schedule allreduce_multiplying_schedule_of(const RecursiveMultiplyingPlan& plan, int p, int rank, int merged_ranks) {
  const int base = plan.collapse_base;
  const int groups = plan.collapse_groups;
  const int shift = groups * (base - 1) + merged_ranks;  // real rank - virtual rank, from threshold() up
  const auto real_rank = [&](int w) { return w < groups ? w * base + base - 1 : w + shift; };
  int wid = rank - shift;  // virtual rank; -1 for a rank collapsed away or merged
  if (rank < plan.threshold()) wid = rank % base == base - 1 ? rank / base : -1;
  const bool merges = merged_ranks > 0 && plan.factors.size() >= 2 && !plan.collapses();
  const bool merged = merges && rank < merged_ranks;
  if (merged) wid = -1;
  const int first_groups = merges ? (p - merged_ranks) / plan.factors.front() : 1;  // G of the first stage
  const int survivor = rank / base * base + base - 1;                               // meaningful below threshold()
  const auto region = [p](Place at) { return whole_vector(at.buffer, p, at.copy); };

  Schedule schedule;
  // A group of f receives f - 1 results, and the own result may sit in one more temp copy.
  int largest_group = plan.collapses() ? base : 1;
  for (const int f : plan.factors) largest_group = std::max(largest_group, f);
  // Merging: a first-stage member also receives the vectors of up to ceil(R / G) merged ranks.
  const int merged_per_group = merges ? (merged_ranks + first_groups - 1) / first_groups : 0;
  if (merges) largest_group = std::max(largest_group, plan.factors.front() - 1 + merged_per_group);
  schedule.temp_copies = p > 1 ? largest_group : 0;

  // The own partial result starts in the receive buffer (with MPI_IN_PLACE no copy at all) and moves
  // to a temp copy at the first stage where the rank is not its group's last; only the rank last in
  // every group would end there and skip the final copy into recvbuf. It starts in the last temp copy
  // instead: one more copy on that rank (at the end; with MPI_IN_PLACE also one before its first
  // send), and every rank's schedule the same up to relabeling (the cost model's digit symmetry).
  Place own_result;
  if (p > 1 && !merges && wid == plan.virtual_ranks() - 1) own_result = {Buffer::temp, schedule.temp_copies - 1};
  std::vector<Place> to_combine;  // received in the previous step, combined in this one
  std::size_t own_index = 0;
  Step& first = schedule.steps.emplace_back();
  first.copies.push_back({whole_vector(Buffer::send, p), region(own_result)});
  if (plan.collapses()) {
    if (wid < 0) first.sends.push_back({survivor, region(own_result)});
    if (wid >= 0 && wid < groups) {
      for (int m = 0; m < base - 1; ++m) {
        const Place place{Buffer::temp, m};
        first.recvs.push_back({rank - base + 1 + m, region(place)});
        to_combine.push_back(place);
      }
      to_combine.push_back(own_result);
      own_index = static_cast<std::size_t>(base - 1);
    }
  }
  std::vector<Place> merged_in;  // merged ranks' vectors, added after the first stage's exchange
  int held = 1;                  // the size of the sub-cuboid every virtual rank has combined before the stage
  for (std::size_t stage = 0; stage < plan.factors.size(); ++stage) {
    const int f = plan.factors[stage];
    Step& step = schedule.steps.emplace_back();
    if (!to_combine.empty()) own_result = combine_in_order(step, to_combine, own_index, p);
    to_combine.clear();
    const bool last_stage = stage + 1 == plan.factors.size();
    // Merging, first stage: merged rank r gives its vector to every member of first-stage group
    // r mod G, alongside the group's exchange; the members receive it into copies past the exchange's.
    if (merges && stage == 0) {
      if (merged) {
        for (int i = 0; i < f; ++i) step.sends.push_back({real_rank(rank % first_groups * f + i), region(own_result)});
      } else {
        for (int r = wid / f; r < merged_ranks; r += first_groups) {
          const Place place{Buffer::temp, f - 1 + static_cast<int>(merged_in.size())};
          step.recvs.push_back({r, region(place)});
          merged_in.push_back(place);
        }
      }
    }
    if (merged && last_stage) {
      // The pre-final results of last-stage group r mod G' (G' = held) cover every rank once.
      for (int i = 0; i < f; ++i) {
        const Place place{Buffer::temp, i};
        step.recvs.push_back({real_rank(rank % held + i * held), region(place)});
        to_combine.push_back(place);
      }
      own_index = 0;
    }
    if (merges && last_stage && wid >= 0) {
      for (int r = wid % held; r < merged_ranks; r += held) step.sends.push_back({r, region(own_result)});
    }
    if (wid >= 0) {
      const int span = f * held;
      const int group_start = wid / span * span;
      own_index = static_cast<std::size_t>(wid % span / held);
      int next_copy = 0;  // temp copies for the receipts, past the one holding the own result
      for (int i = 0; i < f; ++i) {
        if (static_cast<std::size_t>(i) == own_index) {
          to_combine.push_back(own_result);
          continue;
        }
        if (own_result.buffer == Buffer::temp && next_copy == own_result.copy) ++next_copy;
        to_combine.push_back({Buffer::temp, next_copy++});
      }
      // Posted from the next member on, cyclically: members start with different partners, and
      // relabelings that add to this digit keep the order (the cost model's digit symmetry).
      for (int j = 1; j < f; ++j) {
        const int i = (static_cast<int>(own_index) + j) % f;
        const int member = real_rank(group_start + i * held + wid % held);
        step.sends.push_back({member, region(own_result)});
        step.recvs.push_back({member, region(to_combine[static_cast<std::size_t>(i)])});
      }
      if (stage == 0) to_combine.insert(to_combine.end(), merged_in.begin(), merged_in.end());
    }
    held *= f;
  }
  Step& last = schedule.steps.emplace_back();
  if (!to_combine.empty()) own_result = combine_in_order(last, to_combine, own_index, p);
  // Copies run before a step's reductions, so the result moves to recvbuf one step later.
  Step& expand = schedule.steps.emplace_back();
  if (own_result.buffer == Buffer::temp) expand.copies.push_back({region(own_result), whole_vector(Buffer::recv, p)});
  if (plan.collapses()) {
    if (wid < 0) expand.recvs.push_back({survivor, whole_vector(Buffer::recv, p)});
    if (wid >= 0 && wid < groups) {
      for (int member = rank - base + 1; member < rank; ++member)
        expand.sends.push_back({member, whole_vector(Buffer::recv, p)});
    }
  }
  return schedule;
}

std::optional<RecursiveMultiplyingPlan> plan_prime_merging(int p, int k) {
  if (!plan_recursive_multiplying(p, k).collapses()) return std::nullopt;
  for (int q = p - 1; q >= 4; --q) {
    RecursiveMultiplyingPlan plan = plan_recursive_multiplying(q, k);
    if (!plan.collapses() && plan.factors.size() >= 2) return plan;
  }
  return std::nullopt;
}

ParamSpec allreduce_primes_param() {
  return ParamSpec{"primes",
                   "split (collapse/expand, keeps rank order) or merge (prime merging: no extra stages, commutative "
                   "operations only)",
                   "split", [](std::string_view value) { return value == "split" || value == "merge"; }};
}

Schedule allreduce_recursive_multiplying_schedule(const std::vector<int>& node_of_rank, int rank,
                                                  const Params& params) {
  const int p = static_cast<int>(node_of_rank.size());
  if (params.at("primes") == "merge" && params.at("factors") == "auto") {
    if (const auto merging = plan_prime_merging(p, param_int(params, "k"))) {
      return allreduce_multiplying_schedule_of(*merging, p, rank, p - merging->virtual_ranks());
    }
  }
  const auto plan = recursive_multiplying_plan(p, params);
  return allreduce_multiplying_schedule_of(plan ? *plan : plan_recursive_multiplying(p, param_int(params, "k")), p,
                                           rank);
}

}  // namespace collshim
