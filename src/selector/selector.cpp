#include "selector/selector.hpp"

#include <algorithm>
#include <sstream>

#include "selector/tuning_candidates.hpp"

namespace collshim {
namespace {

constexpr const char* default_config_name = "default";
constexpr const char* no_rules_name = "none";
constexpr const char* rounding_need =
    "exact data, COLLSHIM_ALLREDUCE_REORDER=1 or a rule with reorder: true (floating-point data would round "
    "differently)";

// COLLSHIM_CONFIG entries, in the order given; "default" names the shipped table.
std::vector<std::string> split_config_list(const std::string& text) {
  std::vector<std::string> files;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ':')) {
    if (!item.empty()) files.push_back(item);
  }
  return files;
}

}  // namespace

Selector::Selector(const EnvironmentSettings& settings, std::vector<RuleDiagnostic>& diagnostics, JobFacts job)
    : job_(std::move(job)) {
  rule_files_ = settings.config ? split_config_list(*settings.config) : std::vector<std::string>{default_config_name};
  if (settings.config && rule_files_.empty())
    diagnostics.push_back({{"COLLSHIM_CONFIG=" + *settings.config, 0, 0}, "empty list of rule files", true});
  for (const std::string& file : rule_files_) {
    if (file == no_rules_name) continue;  // no rules at all, not even the shipped table
    if (file == default_config_name) {
      rules_.add_file_text(default_rules_yaml, "default.yaml (shipped)", diagnostics);
    } else {
      rules_.add_file(file, diagnostics);
    }
  }
  finish(settings, diagnostics);
}

Selector::Selector(const EnvironmentSettings& settings, RuleTable rules, std::vector<RuleDiagnostic>& diagnostics,
                   JobFacts job)
    : rules_(std::move(rules)), job_(std::move(job)) {
  finish(settings, diagnostics);
}

void Selector::finish(const EnvironmentSettings& settings, std::vector<RuleDiagnostic>& diagnostics) {
  allreduce_reorder_ = settings.allreduce_reorder;
  rules_.check_shadowed(diagnostics);
  native_ = intern(*make_choice("native", {}, Collective::allgather).choice);
  tune_online_ = settings.tune_online;
  tune_mode_ = settings.tune;
  confirms_ = settings.confirms();
  for (const Rule& rule : rules_.rules()) {
    // The job's facts never change: a rule for another library is settled here, not per call.
    applies_.push_back(rule.when.matches(job_) ? 1 : 0);
    rule_choice_.push_back(intern(rule.use));
    rule_reason_.push_back("rule at " + rule.where.text());
    learned_rule_.push_back(settings.tune_out && rule.where.file == *settings.tune_out);
  }
  for (const CollectiveInfo& info : collectives) {
    const int c = static_cast<int>(info.collective);
    always_native_[c] = true;
    bool tests_block_bytes = false;  // some rule of it that applies tests block_bytes
    for (std::size_t i = 0; i < rules_.rules().size(); ++i) {
      const Rule& rule = rules_.rules()[i];
      if (rule.collective != info.collective || !applies_[i]) continue;
      if (!rule_choice_[i]->algorithm->passes_through) always_native_[c] = false;
      tests_block_bytes |= rule.when.block_bytes.has_value();
    }
    if (settings.forced[c]) {
      SpecParseResult parsed = parse_algorithm_spec(*settings.forced[c], info.collective);
      if (parsed.choice) {
        forced_[c] = intern(*parsed.choice);
        forced_reason_[c] = std::string("forced by ") + info.forcing_variable;
        always_native_[c] = forced_[c]->algorithm->passes_through;
      } else {
        diagnostics.push_back(
            {{std::string(info.forcing_variable) + "=" + *settings.forced[c], 0, 0}, parsed.error, true});
      }
    }
    model_decides_[c] = settings.model_decides() && !forced_[c] && info.shape != CallShape::rooted;
    // Online tuning and the model key on the size bucket, like a rule testing block_bytes.
    if ((tune_online_ || model_decides_[c]) && !forced_[c]) {
      always_native_[c] = false;
      for (const std::string& spec : collshim::tuning_candidates(info.collective)) {
        const bool excluded =
            std::any_of(settings.tune_exclude.begin(), settings.tune_exclude.end(),
                        [&](const std::string& text) { return spec.find(text) != std::string::npos; });
        if (!excluded || spec == "native")
          tuning_candidates_[c].push_back(intern(*parse_algorithm_spec(spec, info.collective).choice));
      }
      // Each node-aware candidate's flat twin where nodes hold one rank, if that is a candidate too.
      for (const AlgorithmChoice* candidate : tuning_candidates_[c]) {
        const Algorithm& algorithm = *candidate->algorithm;
        const std::string twin_text =
            algorithm.one_rank_per_node_runs_as ? algorithm.one_rank_per_node_runs_as(candidate->params) : "";
        const SpecParseResult twin =
            twin_text.empty() ? SpecParseResult{} : parse_algorithm_spec(twin_text, info.collective);
        const auto& listed = tuning_candidates_[c];
        const auto found = std::find_if(listed.begin(), listed.end(), [&](const AlgorithmChoice* other) {
          return twin.choice && other->algorithm == twin.choice->algorithm && other->params == twin.choice->params;
        });
        one_rank_per_node_twin_[c].push_back(found != listed.end() ? *found : nullptr);
      }
    }
    // A forced choice ignores the size, so there is nothing to agree on.
    needs_agreed_size_[c] = info.size_agreement != SizeAgreement::global && !forced_[c] &&
                            (tests_block_bytes || tune_online_ || model_decides_[c]);
  }
}

const AlgorithmChoice* Selector::intern(const AlgorithmChoice& choice) {
  for (const AlgorithmChoice& existing : choices_) {
    if (existing.algorithm == choice.algorithm && existing.params == choice.params) return &existing;
  }
  AlgorithmChoice copy = choice;
  copy.id = static_cast<int>(choices_.size());
  choices_.push_back(std::move(copy));
  const AlgorithmChoice* interned = &choices_.back();
  fallback_.push_back(nullptr);
  nonblocking_.push_back(interned);
  if (!interned->algorithm->fallback.empty()) {
    // The fallback runs with its default parameters; resolve it now so decide() never allocates.
    const Collective any = interned->algorithm->collectives.front();
    const AlgorithmChoice* fallback = intern(*make_choice(interned->algorithm->fallback, {}, any).choice);
    fallback_[interned->id] = fallback;
  }
  const Algorithm& algorithm = *interned->algorithm;
  if (algorithm.blocking_only && !algorithm.blocking_only(interned->params).empty()) {
    const Collective any = algorithm.collectives.front();
    const SpecParseResult parsed = parse_algorithm_spec(algorithm.nonblocking_fallback(interned->params), any);
    const AlgorithmChoice* fallback = intern(*parsed.choice);  // the registry's own text: always valid
    nonblocking_[interned->id] = nonblocking_[fallback->id];
  }
  return interned;
}

Decision Selector::decide(const CallFacts& facts, const RuleTried& on_rule_tried) const {
  Decision decision;
  const int c = static_cast<int>(facts.collective);
  // One process has nothing to exchange: every algorithm is a local copy, so the MPI library does it
  // (and its result, even where it departs from the standard, stays the user's result).
  if (facts.procs == 1) return {native_, native_, "one process: nothing to exchange", Decision::no_rule};
  if (forced_[c]) {
    decision = {forced_[c], forced_[c], forced_reason_[c].c_str(), Decision::forced_rule};
  } else {
    decision = {native_, native_, "no rule matches", Decision::no_rule};
    const auto& rules = rules_.rules();
    for (std::size_t i = 0; i < rules.size(); ++i) {
      if (rules[i].collective != facts.collective) continue;
      const bool matched = applies_[i] && rules[i].when.matches(facts);
      if (on_rule_tried) on_rule_tried(rules[i], matched);
      if (matched) {
        decision = {rule_choice_[i], rule_choice_[i], rule_reason_[i].c_str(), static_cast<int>(i)};
        break;
      }
    }
  }
  // Each unmet need substitutes: the algorithm's fallback, or, for rounding, the library's own order.
  const bool reorder = allreduce_reorder_ || (decision.rule_index >= 0 && rules_.rules()[decision.rule_index].reorder);
  while (const char* need = unmet_need(*decision.choice, facts, reorder)) {
    const AlgorithmChoice* fallback = fallback_[decision.choice->id];
    decision.choice = need == rounding_need || fallback == nullptr ? native_ : fallback;
    decision.substitution = need;
  }
  return decision;
}

bool Selector::decision_depends_on_size(const CallFacts& facts) const {
  const int c = static_cast<int>(facts.collective);
  if (!needs_agreed_size_[c] || facts.procs == 1) return false;
  if (tune_online_) return true;
  for (std::size_t i = 0; i < rules_.rules().size(); ++i) {
    const Rule& rule = rules_.rules()[i];
    if (rule.collective != facts.collective || !applies_[i]) continue;
    if (!rule.when.block_bytes) {
      if (rule.when.matches(facts)) return false;  // decides every size that gets this far
      continue;
    }
    CallFacts inside = facts;  // a size the rule accepts: then only the other conditions count
    inside.block_bytes = rule.when.block_bytes->low;
    if (rule.when.matches(inside)) return true;
  }
  return model_decides_[c];  // no rule decides: the model keys on the size bucket
}

const char* Selector::unmet_need(const AlgorithmChoice& choice, const CallFacts& facts, bool reorder) const {
  const Algorithm& algorithm = *choice.algorithm;
  if (algorithm.eligible && !algorithm.eligible(facts.procs, choice.params)) return algorithm.eligibility.data();
  // A non-commutative operation needs an algorithm that keeps rank order.
  if (!facts.commutative && algorithm.needs_commutative && algorithm.needs_commutative(choice.params))
    return "a commutative operation";
  if (!facts.commutative && algorithm.order_needs_consecutive_nodes && facts.mapping != MappingClass::single_node &&
      facts.mapping != MappingClass::sequential)
    return "a commutative operation, or nodes of consecutive ranks (sequential mapping)";
  // Floating-point sums and products round differently in another order: unless allowed, the
  // library's own order (pass through) keeps the user's results.
  if (facts.order_changes_rounding && !reorder && !algorithm.passes_through) return rounding_need;
  return nullptr;
}

std::vector<const AlgorithmChoice*> Selector::tuning_candidates(const CallFacts& facts) const {
  const int c = static_cast<int>(facts.collective);
  const bool one_rank_per_node = facts.procs > 1 && facts.nodes == facts.procs;
  const auto runs = [&](const AlgorithmChoice* choice) {
    return unmet_need(*choice, facts, allreduce_reorder_) == nullptr;
  };
  std::vector<const AlgorithmChoice*> runnable;
  for (std::size_t i = 0; i < tuning_candidates_[c].size(); ++i) {
    const AlgorithmChoice* candidate = tuning_candidates_[c][i];
    const AlgorithmChoice* twin = one_rank_per_node_twin_[c][i];
    if (runs(candidate) && !(one_rank_per_node && twin && runs(twin))) runnable.push_back(candidate);
  }
  return runnable;
}

}  // namespace collshim
