#pragma once
// Decides which algorithm runs a call: a forcing variable beats every rule; otherwise the first
// matching rule of the rule tables; otherwise `native`; an ineligible choice runs its algorithm's
// fallback. Every input of a decision is known identically on all ranks of the call (rank-local
// sizes are agreed first; see entry_points.cpp).
#include <array>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "algorithms/algorithm_spec.hpp"
#include "selector/environment.hpp"
#include "selector/rule_table.hpp"

namespace collshim {

struct Decision {
  const AlgorithmChoice* choice = nullptr;     // what runs
  const AlgorithmChoice* requested = nullptr;  // what the configuration asked for; differs after a fallback
  const char* reason = "";                     // why `requested` was chosen ("rule at file:line:column", ...)
  int rule_index = no_rule;                    // index in rules(), or no_rule / forced_rule
  const char* substitution = "";               // after a fallback: what `requested` needed and the call lacked
  static constexpr int no_rule = -1;
  static constexpr int forced_rule = -2;
};

class Selector {
 public:
  // Reads the forcing variables and the rule files of COLLSHIM_CONFIG (default: the shipped rules).
  // Problems are appended to `diagnostics`, each naming its variable or file:line:column.
  Selector(const EnvironmentSettings& settings, std::vector<RuleDiagnostic>& diagnostics);
  // For tests and tools: an explicit rule table instead of COLLSHIM_CONFIG.
  Selector(const EnvironmentSettings& settings, RuleTable rules, std::vector<RuleDiagnostic>& diagnostics);
  // Decisions point into the selector's tables: it stays where it was made.
  Selector(const Selector&) = delete;
  Selector& operator=(const Selector&) = delete;

  // Called with each rule of the call's collective that a decision tries, in order, and whether it
  // matched (the last one tried, if any matched); for explanations (collshim-config explain).
  using RuleTried = std::function<void(const Rule& rule, bool matched)>;
  // The one decision procedure: the entry points, collshim-config explain and the tests all call it.
  // Allocates nothing without `on_rule_tried`.
  Decision decide(const CallFacts& facts, const RuleTried& on_rule_tried = nullptr) const;

  // True when nothing can ever choose an algorithm other than native for `collective`: calls then
  // pass through without touching per-communicator state.
  bool always_native(Collective collective) const { return always_native_[static_cast<int>(collective)]; }
  // True when a decision for `collective` depends on a size that is not the same on every rank
  // (SizeAgreement other than global) and some rule of it tests block_bytes: the ranks must agree on
  // the size first.
  bool needs_agreed_size(Collective collective) const { return needs_agreed_size_[static_cast<int>(collective)]; }

  const std::deque<AlgorithmChoice>& choices() const { return choices_; }
  const RuleTable& rules() const { return rules_; }
  // Rule files in the order given, for reports; "default" is the shipped table.
  const std::vector<std::string>& rule_files() const { return rule_files_; }

 private:
  void finish(const EnvironmentSettings& settings, std::vector<RuleDiagnostic>& diagnostics);
  const AlgorithmChoice* intern(const AlgorithmChoice& choice);

  RuleTable rules_;
  std::vector<std::string> rule_files_;
  std::vector<const AlgorithmChoice*> rule_choice_;  // by rule index
  std::vector<std::string> rule_reason_;             // "rule at file:line:column"
  std::deque<AlgorithmChoice> choices_;              // deque: pointers stay valid as it grows
  std::vector<const AlgorithmChoice*> fallback_;     // by choice id; null when the algorithm has none
  std::array<const AlgorithmChoice*, collective_count> forced_{};
  std::array<std::string, collective_count> forced_reason_;
  std::array<bool, collective_count> always_native_{};
  std::array<bool, collective_count> needs_agreed_size_{};
  const AlgorithmChoice* native_ = nullptr;
  bool allreduce_reorder_ = false;  // COLLSHIM_ALLREDUCE_REORDER
};

}  // namespace collshim
