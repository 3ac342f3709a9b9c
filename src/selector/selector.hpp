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

#include "algorithms/engine/algorithm_spec.hpp"
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
  static constexpr int tuned_online = -3;   // chosen by online tuning (COLLSHIM_TUNE=online) in this job
  static constexpr int tuning_trial = -4;   // a trial call of online tuning (report rows only)
  static constexpr int device_memory = -5;  // passed through: device memory in the buffers (report rows only)
  // Settled by the cost model (COLLSHIM_PLATFORM) where no rule matched: its pick alone, its pick
  // after timed calls against native, or native (predicted or measured no faster).
  static constexpr int model_pick = -6;
  static constexpr int model_confirmed = -7;
  static constexpr int model_kept_native = -8;
  // Confirmed by a trial widened beyond the model's three best, its measured times having disagreed
  // with its predictions beyond the model's error (model_step.hpp, check_predictions).
  static constexpr int model_widened = -9;
};

class Selector {
 public:
  // Reads the forcing variables and the rule files of COLLSHIM_CONFIG (default: the shipped rules).
  // Problems are appended to `diagnostics`, each naming its variable or file:line:column. `job`: what
  // is fixed for the process (the MPI library); rules whose conditions on it fail are resolved here,
  // once, and never tried (default: an unidentified library, which no `library` condition matches).
  Selector(const EnvironmentSettings& settings, std::vector<RuleDiagnostic>& diagnostics, JobFacts job = {});
  // For tests and tools: an explicit rule table instead of COLLSHIM_CONFIG.
  Selector(const EnvironmentSettings& settings, RuleTable rules, std::vector<RuleDiagnostic>& diagnostics,
           JobFacts job = {});
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
  // Narrower, per communicator: true when the decision for a call with `facts` (its block_bytes
  // ignored) can depend on the size: some rule testing block_bytes matches the other facts before a
  // rule matches them whatever the size (or online tuning keys on the size). Rules for other process
  // counts or placements then cost those communicators nothing.
  bool decision_depends_on_size(const CallFacts& facts) const;

  // Online tuning (COLLSHIM_TUNE=online): true when `decision` may be replaced by what the job learns,
  // i.e. no forcing variable fixed it and no rule of COLLSHIM_TUNE_OUT (learned by an earlier job) did.
  bool tunes(const Decision& decision) const {
    return tune_online_ && decision.rule_index != Decision::forced_rule &&
           (decision.rule_index < 0 || !learned_rule_[decision.rule_index]);
  }
  // True when a call of `collective` that no rule decides is settled by the cost model
  // (COLLSHIM_PLATFORM): not forced, and a collective the model costs (not the rooted ones).
  bool model_decides(Collective collective) const { return model_decides_[static_cast<int>(collective)]; }
  TuneMode tune_mode() const { return tune_mode_; }
  bool confirms() const { return confirms_; }

  // The tuning candidates (tuning_candidates.hpp) that would run unchanged for `facts`: eligible for
  // its process count and its operation's properties. In the same order on every rank; native first.
  // Where every node holds one rank, a node-aware candidate whose flat twin is listed is left out.
  std::vector<const AlgorithmChoice*> tuning_candidates(const CallFacts& facts) const;

  // The choice a nonblocking or persistent call runs in place of `choice` (interned): itself, or
  // where its algorithm is blocking-only with these parameters (Algorithm::blocking_only), its
  // nonblocking fallback.
  const AlgorithmChoice* nonblocking_form(const AlgorithmChoice& choice) const { return nonblocking_[choice.id]; }
  // For tools and tests: the selector's copy of `choice`, added if new (with its fallbacks).
  const AlgorithmChoice* interned(const AlgorithmChoice& choice) { return intern(choice); }

  const std::deque<AlgorithmChoice>& choices() const { return choices_; }
  const AlgorithmChoice* native_choice() const { return native_; }
  // Every rule of the files, those for another library included (explanations, reports).
  const RuleTable& rules() const { return rules_; }
  // Whether rules()[index] can match in this job: its conditions on JobFacts hold.
  bool applies(std::size_t index) const { return applies_[index] != 0; }
  const JobFacts& job() const { return job_; }
  // Rule files in the order given, for reports; "default" is the shipped table.
  const std::vector<std::string>& rule_files() const { return rule_files_; }

 private:
  void finish(const EnvironmentSettings& settings, std::vector<RuleDiagnostic>& diagnostics);
  const AlgorithmChoice* intern(const AlgorithmChoice& choice);

  RuleTable rules_;
  JobFacts job_;
  std::vector<char> applies_;  // by rule index: its JobFacts conditions hold (char: a plain load per call)
  std::vector<std::string> rule_files_;
  std::vector<const AlgorithmChoice*> rule_choice_;  // by rule index
  std::vector<std::string> rule_reason_;             // "rule at file:line:column"
  std::deque<AlgorithmChoice> choices_;              // deque: pointers stay valid as it grows
  std::vector<const AlgorithmChoice*> fallback_;     // by choice id; null when the algorithm has none
  std::vector<const AlgorithmChoice*> nonblocking_;  // by choice id: nonblocking_form()
  std::array<const AlgorithmChoice*, collective_count> forced_{};
  std::array<std::string, collective_count> forced_reason_;
  std::array<bool, collective_count> always_native_{};
  std::array<bool, collective_count> needs_agreed_size_{};
  // The first of the call-property checks of decide() that `choice` fails, or nullptr.
  // `reorder`: floating-point reductions may change order (COLLSHIM_ALLREDUCE_REORDER or the rule).
  const char* unmet_need(const AlgorithmChoice& choice, const CallFacts& facts, bool reorder) const;

  const AlgorithmChoice* native_ = nullptr;
  bool allreduce_reorder_ = false;  // COLLSHIM_ALLREDUCE_REORDER
  bool tune_online_ = false;        // COLLSHIM_TUNE=online
  TuneMode tune_mode_ = TuneMode::unset;
  bool confirms_ = false;
  std::array<bool, collective_count> model_decides_{};
  std::vector<bool> learned_rule_;  // by rule index: from COLLSHIM_TUNE_OUT
  std::array<std::vector<const AlgorithmChoice*>, collective_count> tuning_candidates_;
  // Per tuning candidate, the flat candidate it runs as where every node holds one rank (null: none;
  // Algorithm::one_rank_per_node_runs_as).
  std::array<std::vector<const AlgorithmChoice*>, collective_count> one_rank_per_node_twin_;
};

}  // namespace collshim
