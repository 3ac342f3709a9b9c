#include "model/cost/model_decision.hpp"

#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <ctime>
#include <deque>
#include <limits>
#include <numeric>
#include <optional>

namespace collshim::model {

LibraryFacts library_facts(const ModelCall& call, const std::vector<int>& node_of_rank, bool commutative) {
  LibraryFacts facts{call.p, call.bytes, library_placement(node_of_rank)};
  facts.commutative = commutative;
  facts.builtin_op = call.builtin_op;
  facts.in_place = call.in_place;
  if (collective_info(call.collective).shape == CallShape::reduction)
    facts.element_bytes = static_cast<int>(std::max<long long>(1, call.element_bytes));
  // Blocks of different sizes: the library sees their total and the largest.
  if (!call.block_bytes.empty()) {
    facts.total_bytes = std::accumulate(call.block_bytes.begin(), call.block_bytes.end(), 0LL);
    facts.max_bytes = *std::max_element(call.block_bytes.begin(), call.block_bytes.end());
  } else if (!call.pairs.uniform()) {
    long long total = 0, largest = 0;
    for (const auto& sends : call.pairs.sending) {
      for (const auto& [destination, bytes] : sends) total += bytes, largest = std::max(largest, bytes);
    }
    facts.total_bytes = total;
    facts.max_bytes = largest;
  }
  return facts;
}

ModelVerdict model_decision(const ModelSettings& settings, const ModelCall& call, const std::vector<int>& node_of_rank,
                            const std::vector<const AlgorithmChoice*>& candidates, const AlgorithmChoice* native,
                            bool commutative, std::size_t ranked_exactly) {
  ModelVerdict verdict;
  verdict.pick = native;
  // Processor time, not wall time: what costing took of a core, whatever else the machine runs.
  const auto seconds_since = [](std::clock_t start) {
    return static_cast<double>(std::clock() - start) / CLOCKS_PER_SEC;
  };
  // An irregular Alltoallv whose library exchange posts every empty message too, beyond 2^24 of them
  // (p > 4096): that is costed on the uniform call at the average block (what the shim costed the
  // whole pattern as above 4096 ranks before it gathered a summary), 171 s at p = 16384 otherwise.
  const ModelCall average_call{call.collective, call.p, call.bytes};
  const auto native_call = [&](const NativeDecision& decision) -> const ModelCall& {
    constexpr long long exact_empty_messages = 1LL << 24;
    const bool huge = static_cast<long long>(call.p) * call.p > exact_empty_messages;
    return decision.sends_empty_messages && !call.pairs.uniform() && huge ? average_call : call;
  };
  // Where native cannot be costed, the candidates are still ranked (against no bound from native):
  // the pick stays native, and only timed calls of native and the best few may leave it (plan_key).
  std::optional<AlgorithmCosting> native_costing = [&]() -> std::optional<AlgorithmCosting> {
    if (!settings.library) {
      verdict.why_native = "the MPI library's own choice is not known (" + settings.library_name + ")";
      return std::nullopt;
    }
    const NativeDecision decision = settings.library(call.collective, library_facts(call, node_of_rank, commutative));
    verdict.native_algorithm = decision.library_algorithm;
    const std::clock_t native_start = std::clock();
    std::optional<AlgorithmCosting> costing =
        AlgorithmCosting::of_library(settings.platform, native_call(decision), node_of_rank, decision);
    verdict.native_seconds = seconds_since(native_start);
    if (!costing) verdict.why_native = "the library's choice is not modelled: " + decision.why_not;
    return costing;
  }();
  // Native is costed like a candidate, by the same branch and bound (below), and only as far as the
  // pick needs: once its lower bound beats the fastest candidate by twice the margin, that candidate
  // is the pick whatever native costs exactly (a one-step exchange of p² messages, Open MPI's basic
  // linear Alltoallv, is most of a key's cost where it is costed whole).
  const bool native_whole = ranked_exactly == std::numeric_limits<std::size_t>::max();
  bool native_done = false;
  double native_us = std::numeric_limits<double>::infinity();  // exact, once native_done
  const auto native_at_least = [&] {                           // what native is known to cost at least
    return native_done ? native_us : native_costing ? native_costing->lower_bound_us() : native_us;
  };

  // Branch and bound, best first: every candidate starts with a lower bound from rank 0's schedule
  // alone; the one with the lowest bound is costed on until it is done or its bound (the longest a
  // rank has spent so far) passes the next lowest well, and so on, until the lowest bound left is
  // certain to lose. Only candidates that might win are costed whole.
  struct Pending {
    const AlgorithmChoice* choice;
    std::size_t order;  // in `candidates`: ties in `ranked` keep it
    AlgorithmCosting costing;
    double seconds;
    bool open;
  };
  std::deque<Pending> pending;  // a deque: an AlgorithmCosting does not move once made
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const AlgorithmChoice* candidate = candidates[i];
    if (candidate->algorithm->passes_through || !candidate->algorithm->make_schedule) continue;
    const std::clock_t start = std::clock();
    pending.push_back({candidate, i, AlgorithmCosting(settings.platform, call, node_of_rank, *candidate), 0, true});
    pending.back().seconds = seconds_since(start);
  }

  ranked_exactly = std::max<std::size_t>(ranked_exactly, 1);
  std::vector<double> fastest;  // the `ranked_exactly` fastest exact predictions so far, ascending
  const auto margin_of = [&](const CandidateCost& c) { return settings.margin * (c.approximated ? 2 : 1); };
  // The fastest exact prediction known to beat native by the margin.
  const auto best_qualified = [&] {
    double best = std::numeric_limits<double>::infinity();
    for (const CandidateCost& c : verdict.ranked)
      if (c.us * (1 + margin_of(c)) <= native_at_least()) best = std::min(best, c.us);
    return best;
  };
  // Whether a candidate whose prediction is at least `bound` is certain to be neither the pick nor among
  // the `ranked_exactly` fastest. The margin is the smaller one of exact predictions, so it holds for
  // approximated ones too; ties are kept (the earlier candidate wins them). Monotone in `bound`.
  const auto loses = [&](double bound) {
    const bool outranked = fastest.size() >= ranked_exactly && bound > fastest.back();
    return outranked && (bound * (1 + settings.margin) > native_us || bound > best_qualified());
  };
  // Where loses() starts to hold, or about (loses() decides).
  const auto give_up_above = [&] {
    const double pick_limit = std::min(native_us / (1 + settings.margin), best_qualified());
    return fastest.size() >= ranked_exactly ? std::max(fastest.back(), pick_limit)
                                            : std::numeric_limits<double>::infinity();
  };
  // Native no longer matters once its bound beats the fastest candidate so far by twice the margin:
  // the pick is then that candidate or a faster one, whatever native costs. Infinite while it must be
  // costed whole.
  const auto native_matters_below = [&] {
    return native_whole || fastest.empty() ? std::numeric_limits<double>::infinity()
                                           : fastest.front() * (1 + 2 * settings.margin);
  };
  const auto native_settled = [&] {
    return native_done || !native_costing || native_costing->lower_bound_us() >= native_matters_below();
  };
  // Costs native on from its bound up to `limit` (at least one step); true once it is done.
  const auto advance_native = [&](double limit) {
    const std::clock_t start = std::clock();
    limit = std::min(limit, native_matters_below());
    native_done = native_costing->advance(std::max(limit, native_costing->lower_bound_us()));
    verdict.native_seconds += seconds_since(start);
    if (native_done) native_us = native_costing->prediction().prediction.us;
  };
  std::vector<std::size_t> order_of;  // per ranked entry, its order in `candidates`
  for (;;) {
    Pending* lowest = nullptr;
    double lowest_bound = 0, next_bound = std::numeric_limits<double>::infinity();
    for (Pending& candidate : pending) {
      if (!candidate.open) continue;
      const double bound = candidate.costing.lower_bound_us();
      if (!lowest || bound < lowest_bound) {
        if (lowest) next_bound = lowest_bound;
        lowest = &candidate, lowest_bound = bound;
      } else {
        next_bound = std::min(next_bound, bound);
      }
    }
    // Native first where its bound is the lowest: once known, it prunes every candidate it beats.
    if (!native_settled() && (!lowest || native_costing->lower_bound_us() <= lowest_bound)) {
      advance_native(lowest ? 2 * lowest_bound : std::numeric_limits<double>::infinity());
      continue;
    }
    if (!lowest) break;
    if (loses(lowest_bound)) {  // and so does every other one left
      for (Pending& candidate : pending) {
        if (!candidate.open) continue;
        const CallPrediction bound = candidate.costing.prediction();
        verdict.pruned.push_back(
            {candidate.choice, bound.prediction.us, bound.prediction.approximated, candidate.seconds});
        candidate.open = false;
      }
      continue;  // native may be left to settle
    }
    const std::clock_t start = std::clock();
    // Taking a candidate's profiles costs more than a step: it is costed on until it loses or its
    // bound is twice the next one's. At least one step: the limit is never below its bound.
    const double next = std::min(next_bound, native_settled() ? next_bound : native_costing->lower_bound_us());
    const double limit = std::max(std::min(give_up_above(), 2 * next), lowest_bound);
    const bool done = lowest->costing.advance(limit);
    lowest->seconds += seconds_since(start);
    if (!done) continue;
    const CallPrediction costed = lowest->costing.prediction();
    const CandidateCost cost{lowest->choice, costed.prediction.us, costed.prediction.approximated, lowest->seconds};
    lowest->open = false;
    verdict.ranked.push_back(cost);
    order_of.push_back(lowest->order);
    fastest.insert(std::upper_bound(fastest.begin(), fastest.end(), cost.us), cost.us);
    if (fastest.size() > ranked_exactly) fastest.pop_back();
  }
  if (native_costing) {
    verdict.native_us = native_at_least();
    verdict.native_at_least = !native_done;
  }
  // Fastest first; ties in the order of `candidates`.
  std::vector<std::size_t> index(verdict.ranked.size());
  for (std::size_t i = 0; i < index.size(); ++i) index[i] = i;
  std::sort(index.begin(), index.end(), [&](std::size_t a, std::size_t b) {
    const double x = verdict.ranked[a].us, y = verdict.ranked[b].us;
    return x != y ? x < y : order_of[a] < order_of[b];
  });
  std::vector<CandidateCost> ranked;
  for (const std::size_t i : index) ranked.push_back(verdict.ranked[i]);
  verdict.ranked = std::move(ranked);
  for (const CandidateCost& candidate : verdict.ranked) {
    if (!verdict.why_native.empty()) break;
    if (candidate.us * (1 + margin_of(candidate)) <= verdict.native_us) {
      verdict.pick = candidate.choice;
      break;
    }
  }
  return verdict;
}

std::string verdict_text(const ModelVerdict& verdict, std::size_t count) {
  std::string text;
  for (std::size_t i = 0; i < std::min(count, verdict.ranked.size()); ++i) {
    const CandidateCost& c = verdict.ranked[i];
    text +=
        fmt::format("{}{} {:.1f} us{}", text.empty() ? "" : ", ", c.choice->text(), c.us, c.approximated ? "~" : "");
  }
  if (verdict.why_native.empty())
    text += fmt::format("{}native ({}) {}{:.1f} us", text.empty() ? "" : ", ", verdict.native_algorithm,
                        verdict.native_at_least ? "at least " : "", verdict.native_us);
  if (!verdict.pruned.empty()) text += fmt::format(", {} more shown to lose by a lower bound", verdict.pruned.size());
  if (!verdict.why_native.empty()) text += std::string(text.empty() ? "" : "; ") + verdict.why_native;
  return text;
}

}  // namespace collshim::model
