#include "model/model_decision.hpp"

#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <chrono>

namespace collshim::model {

ModelVerdict model_decision(const ModelSettings& settings, const ModelCall& call, const std::vector<int>& node_of_rank,
                            const std::vector<const AlgorithmChoice*>& candidates, const AlgorithmChoice* native,
                            bool commutative) {
  ModelVerdict verdict;
  verdict.pick = native;
  if (!settings.library) {
    verdict.why_native = "the MPI library's own choice is not known (" + settings.library_name + ")";
    return verdict;
  }
  const NativeDecision decision = settings.library(call.collective, call.p, call.bytes,
                                                   library_placement(node_of_rank), commutative);
  verdict.native_algorithm = decision.library_algorithm;
  const auto seconds_since = [](std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  const auto native_start = std::chrono::steady_clock::now();
  const std::optional<CallPrediction> library = predict_library(settings.platform, call, node_of_rank, decision);
  verdict.native_seconds = seconds_since(native_start);
  if (!library) {
    verdict.why_native = "the library's choice is not modelled: " + decision.why_not;
    return verdict;
  }
  verdict.native_us = library->prediction.us;
  for (const AlgorithmChoice* candidate : candidates) {
    if (candidate->algorithm->passes_through || !candidate->algorithm->make_schedule) continue;
    const auto start = std::chrono::steady_clock::now();
    const CallPrediction costed = predict_algorithm(settings.platform, call, node_of_rank, *candidate);
    verdict.ranked.push_back({candidate, costed.prediction.us, costed.prediction.approximated, seconds_since(start)});
  }
  std::stable_sort(verdict.ranked.begin(), verdict.ranked.end(),
                   [](const CandidateCost& a, const CandidateCost& b) { return a.us < b.us; });
  for (const CandidateCost& candidate : verdict.ranked) {
    const double margin = settings.margin * (candidate.approximated ? 2 : 1);
    if (candidate.us * (1 + margin) <= verdict.native_us) {
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
    text += fmt::format("{}{} {:.1f} us{}", text.empty() ? "" : ", ", c.choice->text(), c.us, c.approximated ? "~" : "");
  }
  if (verdict.why_native.empty())
    text += fmt::format("{}native ({}) {:.1f} us", text.empty() ? "" : ", ", verdict.native_algorithm, verdict.native_us);
  else
    text += std::string(text.empty() ? "" : "; ") + verdict.why_native;
  return text;
}

}  // namespace collshim::model
