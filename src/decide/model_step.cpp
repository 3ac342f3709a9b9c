#include "decide/model_step.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <exception>
#include <limits>
#include <string>

#include <spdlog/fmt/fmt.h>

namespace collshim::model {
namespace {

// A verdict in a fixed layout for one MPI_Bcast: choice ids of the selector's table, texts cut to
// their fields (they only feed logs and rule comments).
struct PackedVerdict {
  static constexpr int kept = 8;  // ranked candidates kept: enough for logs and online tuning's few
  int pick_id = -1;               // -1: native
  int ranked = 0;
  std::array<int, kept> ids{};
  std::array<double, kept> us{};
  std::array<unsigned char, kept> approximated{};
  double native_us = 0;
  unsigned char native_at_least = 0;
  std::array<char, 64> native_algorithm{};
  std::array<char, 256> why_native{};
};

template <std::size_t n>
void copy_text(std::array<char, n>& to, const std::string& text) {
  const std::size_t length = std::min(text.size(), n - 1);
  std::memcpy(to.data(), text.data(), length);
  to[length] = '\0';
}

PackedVerdict pack(const ModelVerdict& verdict, const AlgorithmChoice* native) {
  PackedVerdict packed;
  packed.pick_id = verdict.pick == nullptr || verdict.pick == native ? -1 : verdict.pick->id;
  packed.ranked = static_cast<int>(std::min<std::size_t>(verdict.ranked.size(), PackedVerdict::kept));
  for (int i = 0; i < packed.ranked; ++i) {
    packed.ids[i] = verdict.ranked[i].choice->id;
    packed.us[i] = verdict.ranked[i].us;
    packed.approximated[i] = verdict.ranked[i].approximated ? 1 : 0;
  }
  packed.native_us = verdict.native_us;
  packed.native_at_least = verdict.native_at_least ? 1 : 0;
  copy_text(packed.native_algorithm, verdict.native_algorithm);
  copy_text(packed.why_native, verdict.why_native);
  return packed;
}

}  // namespace

ModelVerdict agree_on_verdict(CollectiveSteps& steps, const std::function<ModelVerdict()>& compute,
                              const std::deque<AlgorithmChoice>& choices, const AlgorithmChoice* native) {
  PackedVerdict packed;
  if (steps.rank() == 0) {
    try {
      packed = pack(compute(), native);
    } catch (const std::exception& e) {
      packed = {};
      copy_text(packed.why_native, std::string("the cost model failed: ") + e.what());
    }
  }
  steps.broadcast(&packed, sizeof packed, 0);
  ModelVerdict verdict;
  const auto choice = [&](int id) { return id >= 0 && id < static_cast<int>(choices.size()) ? &choices[id] : native; };
  verdict.pick = choice(packed.pick_id);
  for (int i = 0; i < packed.ranked; ++i)
    verdict.ranked.push_back({choice(packed.ids[i]), packed.us[i], packed.approximated[i] != 0});
  verdict.native_us = packed.native_us;
  verdict.native_at_least = packed.native_at_least != 0;
  verdict.native_algorithm = packed.native_algorithm.data();
  verdict.why_native = packed.why_native.data();
  return verdict;
}

AlltoallBlocks gather_alltoall_pattern(CollectiveSteps& steps, const std::vector<long long>& sent_bytes,
                                       const std::vector<long long>& received_bytes,
                                       const std::vector<int>& node_of_rank, long long average_bytes) {
  const auto p = static_cast<std::size_t>(steps.size());
  AlltoallBlocks pattern{average_bytes, {}};
  // (The same on every rank: the communicator's size and node map.)
  if (node_of_rank.size() != p || p > max_summarized_procs) return pattern;
  // A malformed count list still takes part in the gather, as an empty record.
  const AlltoallRankSummary own = sent_bytes.size() == p && received_bytes.size() == p
                                      ? summarize_rank(steps.rank(), sent_bytes, received_bytes, node_of_rank)
                                      : AlltoallRankSummary{};
  const std::vector<long long> all = steps.gather(summary_values(own));
  return steps.rank() == 0 ? blocks_from_summaries(summaries_of(all), node_of_rank, average_bytes) : pattern;
}

bool nothing_to_cost(const std::vector<const AlgorithmChoice*>& candidates, const AlgorithmChoice* native) {
  return std::none_of(candidates.begin(), candidates.end(),
                      [&](const AlgorithmChoice* c) { return c != native && c->algorithm->make_schedule; });
}

KeyPlan plan_key(const Selector& selector, const ModelVerdict& verdict,
                 const std::vector<const AlgorithmChoice*>& candidates, std::size_t widen) {
  const AlgorithmChoice* native = selector.native_choice();
  KeyPlan plan{{native},
               KeySource::model,
               {verdict.pick, verdict.ranked.empty() ? 0.0 : verdict.ranked.front().us, verdict.native_us,
                verdict.native_at_least}};
  const TuneMode mode = selector.tune_mode();
  const bool online = mode == TuneMode::online;
  const bool confirm = !online && selector.confirms();
  // Native, the pick, then the fastest others, up to `count` besides native.
  const auto try_best = [&](std::size_t count) {
    if (verdict.pick != native) plan.trial.push_back(verdict.pick);
    for (const CandidateCost& c : verdict.ranked) {
      if (plan.trial.size() > count) break;
      const bool eligible = std::find(candidates.begin(), candidates.end(), c.choice) != candidates.end();
      if (eligible && c.choice != native &&
          std::find(plan.trial.begin(), plan.trial.end(), c.choice) == plan.trial.end())
        plan.trial.push_back(c.choice);
    }
  };
  if ((online || confirm) && !verdict.ranked.empty()) {
    plan.source = online ? KeySource::model_online : KeySource::model_confirmed;
    try_best(online ? online_model_candidates : confirm_model_candidates);
    if (confirm) {
      const auto predicted = [&](const AlgorithmChoice* choice) {
        if (choice == native) return verdict.native_at_least ? 0.0 : verdict.native_us;
        const auto found = std::find_if(verdict.ranked.begin(), verdict.ranked.end(),
                                        [&](const CandidateCost& c) { return c.choice == choice; });
        return found == verdict.ranked.end() ? 0.0 : found->us;
      };
      for (const AlgorithmChoice* choice : plan.trial) plan.predicted_us.push_back(predicted(choice));
      // The next in the ranking, as try_best would have taken them.
      for (const CandidateCost& c : verdict.ranked) {
        if (plan.widen_to.size() >= widen) break;
        const bool eligible = std::find(candidates.begin(), candidates.end(), c.choice) != candidates.end();
        if (eligible && c.choice != native &&
            std::find(plan.trial.begin(), plan.trial.end(), c.choice) == plan.trial.end()) {
          plan.widen_to.push_back(c.choice);
          plan.widen_to_us.push_back(c.us);
        }
      }
    }
  } else if (!verdict.why_native.empty()) {
    plan.source = KeySource::model_not_costed;
    if (online) plan.trial = candidates, plan.source = KeySource::online;  // nothing ranked: every candidate
  } else {
    plan.trial = {verdict.pick};
  }
  return plan;
}

std::size_t candidates_to_rank(TuneMode mode, std::size_t widen) {
  return mode == TuneMode::online ? online_model_candidates : confirm_model_candidates + widen;
}

PredictionCheck check_predictions(const std::vector<TuningSession::Measured>& measured,
                                  const std::vector<double>& predicted_us) {
  PredictionCheck check;
  double lowest = std::numeric_limits<double>::infinity(), highest = 0;
  int compared = 0;
  for (std::size_t i = 0; i < measured.size() && i < predicted_us.size(); ++i) {
    const TuningSession::Measured& m = measured[i];
    if (predicted_us[i] <= 0 || m.timed_calls == 0 || m.seconds <= 0) continue;
    const double ratio = m.seconds * 1e6 / predicted_us[i];
    check.ratios += fmt::format("{}{} {:.2f}", check.ratios.empty() ? "" : ", ", m.choice->text(), ratio);
    lowest = std::min(lowest, ratio);
    highest = std::max(highest, ratio);
    ++compared;
  }
  if (compared < 2) return check;
  check.lowest = lowest;
  check.highest = highest;
  check.disagrees = highest > widen_ratio_spread * lowest;
  return check;
}

}  // namespace collshim::model
