#include "model/model_decision.hpp"

#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <numeric>

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
                            bool commutative) {
  ModelVerdict verdict;
  verdict.pick = native;
  if (!settings.library) {
    verdict.why_native = "the MPI library's own choice is not known (" + settings.library_name + ")";
    return verdict;
  }
  const NativeDecision decision = settings.library(call.collective, library_facts(call, node_of_rank, commutative));
  verdict.native_algorithm = decision.library_algorithm;
  const std::optional<CallPrediction> library = predict_library(settings.platform, call, node_of_rank, decision);
  if (!library) {
    verdict.why_native = "the library's choice is not modelled: " + decision.why_not;
    return verdict;
  }
  verdict.native_us = library->prediction.us;
  for (const AlgorithmChoice* candidate : candidates) {
    if (candidate->algorithm->passes_through || !candidate->algorithm->make_schedule) continue;
    const CallPrediction costed = predict_algorithm(settings.platform, call, node_of_rank, *candidate);
    verdict.ranked.push_back({candidate, costed.prediction.us, costed.prediction.approximated});
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
