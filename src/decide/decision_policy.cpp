#include "decide/decision_policy.hpp"

#include <algorithm>
#include <limits>

#include <spdlog/fmt/fmt.h>

#include "model/platform/model_settings.hpp"
#include "decide/size_agreement.hpp"
#include "decide/size_bucket.hpp"

namespace collshim {

std::string properties_text(int properties) {
  std::string text;
  if (properties & non_commutative) text += ", non-commutative operation";
  if (properties & rounding_depends_on_order) text += ", floating-point data";
  return text;
}

CallFacts call_facts(Collective collective, int procs, const CommMapping& mapping, long long block_bytes,
                     int properties) {
  return {collective,
          procs,
          block_bytes,
          mapping.mapping,
          mapping.nodes,
          mapping.ppn,
          mapping.oversubscribed,
          (properties & non_commutative) == 0,
          (properties & rounding_depends_on_order) != 0};
}

DecisionPolicy::DecisionPolicy(const EnvironmentSettings& settings, const ProcessLibrary& library,
                               std::vector<RuleDiagnostic>& diagnostics, std::vector<std::string>& model_errors)
    : selector_(settings, diagnostics, JobFacts{library.library}),
      model_(model::load_model_settings(settings, library, model_errors)),
      tuning_(collshim::tuning_policy(settings)) {}

DecisionPolicy::DecisionPolicy(const EnvironmentSettings& settings, RuleTable rules, const ProcessLibrary& library,
                               std::vector<RuleDiagnostic>& diagnostics, std::vector<std::string>& model_errors)
    : selector_(settings, std::move(rules), diagnostics, JobFacts{library.library}),
      model_(model::load_model_settings(settings, library, model_errors)),
      tuning_(collshim::tuning_policy(settings)) {}

DecisionPolicy::DecisionPolicy(const EnvironmentSettings& settings, RuleTable rules,
                               std::optional<model::ModelSettings> model, std::vector<RuleDiagnostic>& diagnostics,
                               JobFacts job)
    : selector_(settings, std::move(rules), diagnostics, std::move(job)),
      model_(std::move(model)),
      tuning_(collshim::tuning_policy(settings)) {}

long long DecisionPolicy::agreed_block_bytes(CommDecisions& comm, const CallFacts& facts, CollectiveSteps& steps,
                                             long long received_bytes, int root) const {
  const int p = facts.procs;
  const SizeAgreement agreement = collective_info(facts.collective).size_agreement;
  // A rank-local (Alltoallv) or root-only (Gatherv, Scatterv) size: one 8-byte sum on the shadow
  // communicator (a latency-bound O(log p) step), paid only where some rule of the collective that
  // tests block_bytes could apply to this communicator. Otherwise the decision ignores the size.
  if (!size_must_be_agreed(comm, facts))
    return own_block_bytes(facts.collective, p, steps.rank(), root, received_bytes);
  return block_bytes_from_sum(agreement, steps.sum(size_contribution(agreement, steps.rank(), root, received_bytes)),
                              p);
}

// The session that settles a key no forcing variable fixed, on its communicator: created on the key's
// first call. Online tuning without a platform tries every candidate. With one (COLLSHIM_PLATFORM)
// the model costs them first and the session holds what plan_key says: its pick alone
// (COLLSHIM_TUNE=off), native and its best three (confirm), or native and its best few in predicted
// order (online). Where the model cannot cost native, it never leaves native on its own word.
CommTuning::Key& DecisionPolicy::key_session(CommDecisions& comm, const PolicyCall& call, CollectiveSteps& steps,
                                             Outcome& outcome) const {
  const CallFacts& facts = call.facts;
  const int bucket = size_bucket(facts.block_bytes);
  if (CommTuning::Key* known = comm.tuning.find(facts.collective, bucket, call.properties)) return *known;
  std::vector<const AlgorithmChoice*> candidates = selector_.tuning_candidates(facts);
  const AlgorithmChoice* native = selector_.native_choice();
  if (!model_ || !selector_.model_decides(facts.collective))
    return comm.tuning.add(facts.collective, bucket, call.properties, std::move(candidates), tuning_);

  // Nothing but native may run (e.g. floating-point sums without reordering): nothing to cost.
  if (model::nothing_to_cost(candidates, native) && selector_.tune_mode() != TuneMode::online) {
    outcome.settled_now = true;
    return comm.tuning.add(facts.collective, bucket, call.properties, {native}, tuning_, KeySource::model_not_costed);
  }
  // The model costs whole only the candidates that may be its pick or among the few the key's trial
  // calls need (plan_key).
  const auto widen = static_cast<std::size_t>(std::max(tuning_.widen_candidates, 0));
  const std::size_t ranked_exactly = rank_every_candidate_ ? std::numeric_limits<std::size_t>::max()
                                                           : model::candidates_to_rank(selector_.tune_mode(), widen);
  const model::ModelCall model_call = call.model_call(steps);
  model::ModelVerdict verdict = model::agree_on_verdict(
      steps,
      [&] {
        outcome.costed = model::model_decision(*model_, model_call, call.node_of_rank, candidates, native,
                                               facts.commutative, ranked_exactly);
        return *outcome.costed;
      },
      selector_.choices(), native);
  if (log_)
    log_->debug("{}: p={} block {}: cost model: {}; picks {}", mpi_function_name(facts.collective), facts.procs,
                bucket_text(bucket), model::verdict_text(verdict), verdict.pick->text());
  model::KeyPlan plan = model::plan_key(selector_, verdict, candidates, widen);
  outcome.verdict = std::move(verdict);
  CommTuning::Key& key = comm.tuning.add(facts.collective, bucket, call.properties, std::move(plan.trial), tuning_,
                                         plan.source, plan.evidence);
  key.predicted_us = std::move(plan.predicted_us);
  key.widen_to = std::move(plan.widen_to);
  key.widen_to_us = std::move(plan.widen_to_us);
  outcome.settled_now = key.session.done();  // the model's pick alone, or nothing else to try
  return key;
}

Outcome DecisionPolicy::decide(CommDecisions& comm, const PolicyCall& call, CollectiveSteps& steps,
                               DecidedAt at) const {
  const CallFacts& facts = call.facts;
  const bool started = at != DecidedAt::blocking_call;
  Outcome outcome;
  const auto store = [&](const Decision& decision) {
    if (!started) {
      comm.cache.store(facts.collective, facts.block_bytes, decision, call.properties);
      outcome.decision = comm.cache.find(facts.collective, facts.block_bytes, call.properties);
      return outcome;
    }
    outcome.started = started_form(decision);
    if (at == DecidedAt::start)
      comm.cache.store(facts.collective, facts.block_bytes, outcome.started, call.properties, true);
    return outcome;
  };
  if (at == DecidedAt::start) {
    // A key the blocking calls settled, as every rank has it here; else this start's own earlier decision.
    if (const Decision* settled = comm.cache.find(facts.collective, facts.block_bytes, call.properties))
      return store(*settled);
    if (const CommTuning::Key* key =
            comm.tuning.find(facts.collective, size_bucket(facts.block_bytes), call.properties);
        key != nullptr && key->session.settled())
      return store(settled_decision(*key, selector_.native_choice()));
    if (const Decision* known = comm.cache.find(facts.collective, facts.block_bytes, call.properties, true)) {
      outcome.started = *known;
      return outcome;
    }
  }
  Decision decision = selector_.decide(facts);
  const bool model_step = decision.rule_index == Decision::no_rule && selector_.model_decides(facts.collective);
  if (facts.procs > 1 && (selector_.tunes(decision) || model_step)) {
    if (started) return store(started_pick(comm, call, steps, model_step));
    CommTuning::Key& key = key_session(comm, call, steps, outcome);
    outcome.key = &key;
    if (!key.session.done()) return outcome;
    decision = settled_decision(key, selector_.native_choice());
  }
  if (!started && decision.choice != decision.requested && log_) {
    log_->debug("{}: {} is not eligible for p={}{} (needs {}); running {} instead", mpi_function_name(facts.collective),
                decision.requested->text(), facts.procs, properties_text(call.properties), decision.substitution,
                decision.choice->text());
  }
  return store(decision);
}

Decision DecisionPolicy::started_pick(CommDecisions& comm, const PolicyCall& call, CollectiveSteps& alone,
                                      bool model_step) const {
  const CallFacts& facts = call.facts;
  const int bucket = size_bucket(facts.block_bytes);
  const std::array<int, 3> key{static_cast<int>(facts.collective), bucket, call.properties};
  if (const auto known = comm.started_picks.find(key); known != comm.started_picks.end()) return known->second;
  const AlgorithmChoice* native = selector_.native_choice();
  Decision decision{native, native, "online tuning times blocking calls only", Decision::no_rule};
  if (model_ && model_step) {
    const std::vector<const AlgorithmChoice*> candidates = selector_.tuning_candidates(facts);
    if (!model::nothing_to_cost(candidates, native)) {
      const model::ModelVerdict verdict = model::model_decision(*model_, call.model_call(alone), call.node_of_rank,
                                                                candidates, native, facts.commutative);
      decision = {verdict.pick, verdict.pick, "model's pick, not confirmed (nonblocking)",
                  verdict.pick == native ? Decision::model_kept_native : Decision::model_pick};
      if (log_)
        log_->debug("{}: p={} block {}: cost model (nonblocking): {}; picks {}", mpi_function_name(facts.collective),
                    facts.procs, bucket_text(bucket), model::verdict_text(verdict), verdict.pick->text());
    }
  }
  comm.started_picks.emplace(key, decision);
  return decision;
}

Decision DecisionPolicy::started_form(Decision decision) const {
  const AlgorithmChoice* form = selector_.nonblocking_form(*decision.choice);
  if (form != decision.choice) {
    decision.substitution = blocking_only_substitution;
    decision.choice = form;
  }
  return decision;
}

Trial DecisionPolicy::trial(const CommTuning::Key& key) const {
  const TuningSession& session = key.session;
  // Settled, with the pick's second look pending: the pick's own call, not a trial.
  const bool settled = session.settled();
  return {session.current(),
          settled ? settled_decision(key, selector_.native_choice()).rule_index : Decision::tuning_trial,
          session.next_call_timed(), !settled};
}

int DecisionPolicy::run_trial(CommTuning::Key& key, CollectiveSteps& steps, const std::function<int()>& run,
                              double& own_seconds, bool& settled_now) const {
  const bool settled = key.session.settled();
  int rc = 0;
  const double agreed = steps.time_trial(key.session.next_call_timed(), run, rc, own_seconds);
  key.session.finish_call(agreed);
  if (key.session.settled() && !settled) widen_if_mispredicted(key);
  // Newly settled: by the first trial (the pick runs until its second look), or by the second look.
  settled_now = key.session.settled() && !settled;
  return rc;
}

void DecisionPolicy::widen_if_mispredicted(CommTuning::Key& key) const {
  TuningSession& session = key.session;
  if (key.widen_to.empty() || session.widened() || session.rechecked()) return;
  const model::PredictionCheck check = model::check_predictions(session.measured(), key.predicted_us);
  if (!check.disagrees) return;
  std::string tried;
  for (std::size_t i = 0; i < key.widen_to.size(); ++i)
    tried += fmt::format("{}{} (predicted {:.1f} us)", i == 0 ? "" : ", ", key.widen_to[i]->text(), key.widen_to_us[i]);
  key.widened_spread = check.highest / check.lowest;
  key.widened =
      fmt::format("measured / predicted {}: {:.2f}x apart, beyond the model's {:.2f}x; first trial {}; widened to {}",
                  check.ratios, key.widened_spread, model::widen_ratio_spread, measured_text(session), tried);
  session.widen(key.widen_to);
  if (log_)
    log_->info("{}: block {}: the trial's measured times disagree with the cost model's predictions: {}",
               mpi_function_name(key.collective), bucket_text(key.bucket), key.widened);
}

}  // namespace collshim
