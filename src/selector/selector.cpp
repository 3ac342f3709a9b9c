#include "selector/selector.hpp"

namespace collshim {

Selector::Selector(const EnvironmentSettings& settings, std::vector<std::string>& errors) {
  native_ = intern(*make_choice("native", {}, Collective::allgather).choice);
  for (int c = 0; c < collective_count; ++c) {
    const auto collective = static_cast<Collective>(c);
    if (!settings.forced[c]) continue;
    SpecParseResult parsed = parse_algorithm_spec(*settings.forced[c], collective);
    if (!parsed.choice) {
      errors.push_back(std::string(forcing_variable(collective)) + "=" + *settings.forced[c] + ": " + parsed.error);
      continue;
    }
    forced_[c] = intern(std::move(*parsed.choice));
    forced_reason_[c] = std::string("forced by ") + forcing_variable(collective);
  }
}

const AlgorithmChoice* Selector::intern(AlgorithmChoice choice) {
  for (const AlgorithmChoice& existing : choices_) {
    if (existing.algorithm == choice.algorithm && existing.params == choice.params) return &existing;
  }
  choice.id = static_cast<int>(choices_.size());
  choices_.push_back(std::move(choice));
  const AlgorithmChoice* interned = &choices_.back();
  fallback_.push_back(nullptr);
  if (!interned->algorithm->fallback.empty()) {
    // The fallback runs with its default parameters; resolve it now so decide() never allocates.
    const Collective any = interned->algorithm->collectives.front();
    const AlgorithmChoice* fallback = intern(*make_choice(interned->algorithm->fallback, {}, any).choice);
    fallback_[interned->id] = fallback;
  }
  return interned;
}

Decision Selector::decide(Collective collective, int comm_size) const {
  const AlgorithmChoice* requested = forced_[static_cast<int>(collective)];
  const char* reason = forced_reason_[static_cast<int>(collective)].c_str();
  if (requested == nullptr) {
    requested = native_;
    reason = "no rule selects an algorithm";
  }
  const Algorithm& algorithm = *requested->algorithm;
  if (algorithm.eligible && !algorithm.eligible(comm_size, requested->params)) {
    return {fallback_[requested->id], requested, reason};
  }
  return {requested, requested, reason};
}

}  // namespace collshim
