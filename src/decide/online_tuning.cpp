#include "decide/online_tuning.hpp"

#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <climits>
#include <limits>
#include <map>
#include <tuple>

#include "selector/rule_table.hpp"
#include "selector/selector.hpp"

namespace collshim {

namespace {

// The lower median: the fastest of two calls, robust to a slow outlier and, from three calls on, to a
// lucky fast one too (the benchmarks report medians).
double lower_median(std::vector<double> times) {
  if (times.empty()) return 0;
  const auto median = times.begin() + static_cast<std::ptrdiff_t>((times.size() - 1) / 2);
  std::nth_element(times.begin(), median, times.end());
  return *median;
}

}  // namespace

TuningPolicy tuning_policy(const EnvironmentSettings& settings) {
  TuningPolicy policy;
  if (settings.tune_recheck_calls) policy.recheck_after_calls = *settings.tune_recheck_calls;
  if (settings.tune_widen_candidates) policy.widen_candidates = *settings.tune_widen_candidates;
  return policy;
}

TuningSession::TuningSession(std::vector<const AlgorithmChoice*> candidates, const TuningPolicy& policy)
    : candidates_(std::move(candidates)), policy_(policy) {
  policy_.timed_calls = std::max(policy_.timed_calls, 1);
  begin_trial();
  // A single candidate needs no trial: it is the answer.
  if (candidates_.size() <= 1) {
    warming_ = false;
    next_ = candidates_.size();
  }
}

void TuningSession::begin_trial() {
  times_.assign(candidates_.size(), {});
  dropped_flags_.assign(candidates_.size(), false);
  fastest_first_ = 0;
  warming_ = policy_.warmup_calls > 0;
  warmup_calls_made_ = 0;
  next_ = 0;
  best_ = 0;
}

void TuningSession::widen(const std::vector<const AlgorithmChoice*>& more) {
  if (!settled() || rechecked_ || widened_) return;
  std::vector<const AlgorithmChoice*> trial{candidates_[0]};
  if (best_ > 0) trial.push_back(candidates_[best_]);
  for (const AlgorithmChoice* choice : more)
    if (std::find(trial.begin(), trial.end(), choice) == trial.end()) trial.push_back(choice);
  if (trial.size() <= (best_ > 0 ? 2U : 1U)) return;  // nothing new to try
  first_measured_ = measured();
  candidates_ = std::move(trial);
  widened_ = true;
  calls_before_recheck_ = 0;  // the widened trial's winner gets the second look, if it leaves native
  begin_trial();
}

void TuningSession::begin_recheck() {
  candidates_ = {candidates_[0], candidates_[best_]};
  rechecked_ = true;
  begin_trial();
}

bool TuningSession::another_round() const {
  // Every candidate left has had as many timed calls as native (never dropped).
  const int rounds = static_cast<int>(times_[0].size());
  if (rounds < policy_.timed_calls) return true;
  if (rounds >= policy_.max_timed_calls) return false;
  // The fastest candidate sets the count, so that a slow stretch on one candidate's first calls does
  // not end its trial early: every candidate left gets the same number of calls.
  double fastest = std::numeric_limits<double>::infinity();
  for (std::size_t c = 0; c < candidates_.size(); ++c)
    if (!dropped_flags_[c]) fastest = std::min(fastest, lower_median(times_[c]));
  return rounds * fastest < policy_.timed_seconds;
}

void TuningSession::finish_call(double agreed_seconds) {
  if (done()) return;
  if (settled()) {  // the pick's own calls before its second look: not trial calls
    if (--calls_before_recheck_ == 0) begin_recheck();
    return;
  }
  ++trial_calls_;
  if (warming_) {
    if (++warmup_calls_made_ < policy_.warmup_calls) return;
    warmup_calls_made_ = 0;
    if (++next_ < candidates_.size()) return;
    warming_ = false;
    next_ = 0;
    return;
  }
  std::vector<double>& times = times_[next_];
  times.push_back(agreed_seconds);
  if (times.size() == 1) {
    // Far slower than the fastest first timed call so far: more calls would not save it. Native, the
    // first candidate, is never dropped: it is what every other must beat.
    if (next_ > 0 && fastest_first_ > 0 && agreed_seconds > policy_.drop_factor * fastest_first_) {
      dropped_flags_[next_] = true;
    } else if (fastest_first_ == 0 || agreed_seconds < fastest_first_) {
      fastest_first_ = agreed_seconds;
    }
  }
  move_on();
}

void TuningSession::move_on() {
  // The next candidate of this round that is still in; after the last, another round or the end.
  for (std::size_t candidate = next_ + 1; candidate < candidates_.size(); ++candidate) {
    if (!dropped_flags_[candidate]) {
      next_ = candidate;
      return;
    }
  }
  if (another_round()) {
    next_ = 0;  // native, never dropped
    return;
  }
  settle();
}

void TuningSession::settle() {
  next_ = candidates_.size();
  const std::vector<Measured> all = measured();
  best_ = 0;
  first_seconds_ = best_seconds_ = all[0].seconds;  // native: never dropped
  for (std::size_t c = 1; c < all.size(); ++c) {
    if (!all[c].dropped && all[c].seconds < best_seconds_) {
      best_ = c;
      best_seconds_ = all[c].seconds;
    }
  }
  // The first candidate (native) stays unless the fastest beats it by the margin.
  if (best_ > 0 && best_seconds_ * policy_.first_margin > first_seconds_) {
    best_ = 0;
    best_seconds_ = first_seconds_;
  }
  if (best_ > 0 && !rechecked_) calls_before_recheck_ = std::max(policy_.recheck_after_calls, 0);
}

std::vector<TuningSession::Measured> TuningSession::measured() const {
  std::vector<Measured> all;
  for (std::size_t c = 0; c < candidates_.size(); ++c)
    all.push_back({candidates_[c], lower_median(times_[c]), static_cast<int>(times_[c].size()), dropped_flags_[c]});
  return all;
}

std::string measured_text(const TuningSession& session) {
  std::string text;
  for (const TuningSession::Measured& m : session.measured()) {
    text += fmt::format("{}{} {:.1f} us ({}{})", text.empty() ? "" : ", ", m.choice->text(), m.seconds * 1e6,
                        m.timed_calls, m.dropped ? ", dropped" : "");
  }
  return text;
}

Decision settled_decision(const CommTuning::Key& key, const AlgorithmChoice* native) {
  const AlgorithmChoice* best = key.session.best();
  switch (key.source) {
    case KeySource::online: return {best, best, "tuned online", Decision::tuned_online};
    case KeySource::model_not_costed:
      return {best, best, "no rule matches; the cost model cannot cost native here", Decision::no_rule};
    case KeySource::model:
    case KeySource::model_confirmed:
    case KeySource::model_online:
      // A widened trial says so, whatever it kept, until a second look brings native back.
      if (!key.widened.empty() && !(best == native && key.session.rechecked()))
        return {best, best, "model, confirmed by a widened trial", Decision::model_widened};
      if (best == native) return {best, best, "model, kept native", Decision::model_kept_native};
      if (key.source == KeySource::model) return {best, best, "model", Decision::model_pick};
      return {best, best, "model, confirmed", Decision::model_confirmed};
  }
  return {best, best, "", Decision::no_rule};
}

namespace {

std::string microseconds(double seconds) { return fmt::format("{:.1f} us", seconds * 1e6); }

}  // namespace

std::string learned_rules_yaml(const std::vector<LearnedChoice>& learned, const std::vector<std::string>& choice_text,
                               const LearnedRulesHeader& header) {
  // Per key, the votes of every rank of every communicator that learned it.
  using Key = std::tuple<int, int, int, int, int, int>;  // collective, procs, mapping, nodes, ppn, bucket
  struct Tally {
    int votes = 0;
    LearnedChoice fastest;
  };
  std::map<Key, std::map<int, Tally>> by_key;
  for (const LearnedChoice& l : learned) {
    if (l.properties != 0 || l.choice_id < 0 || l.choice_id >= static_cast<int>(choice_text.size())) continue;
    Tally& tally = by_key[{l.collective, l.procs, l.mapping, l.nodes, l.ppn, l.bucket}][l.choice_id];
    if (tally.votes++ == 0 || l.best_seconds < tally.fastest.best_seconds) tally.fastest = l;
  }
  std::string files;
  for (const std::string& f : header.started_from) files += (files.empty() ? "" : ", ") + f;
  std::string rules;
  for (const auto& [key, tallies] : by_key) {
    const auto winner = std::max_element(tallies.begin(), tallies.end(), [](const auto& a, const auto& b) {
      return std::tuple(a.second.votes, -a.second.fastest.best_seconds) <
             std::tuple(b.second.votes, -b.second.fastest.best_seconds);
    });
    const LearnedChoice& l = winner->second.fastest;
    RuleConditions when;
    // Evidence against this job's library only: under another one the rule must not apply.
    if (!header.library.name.empty()) when.library = std::vector{LibraryRange::exactly(header.library)};
    when.procs = Range{l.procs, l.procs};
    when.nodes = Range{l.nodes, l.nodes};
    when.ppn = Range{l.ppn, l.ppn};
    when.mapping = std::vector<MappingClass>{static_cast<MappingClass>(l.mapping)};
    // The size bucket the tuner keyed on: [2^b, 2^(b+1) - 1], or exactly 0.
    when.block_bytes =
        l.bucket < 0 ? Range{0, 0} : Range{1LL << l.bucket, l.bucket >= 62 ? LLONG_MAX : (2LL << l.bucket) - 1};
    const auto source = static_cast<KeySource>(l.source);
    const std::string measured =
        fmt::format("{} trial calls; best {}{}", l.trial_calls, microseconds(l.best_seconds),
                    l.native_seconds > 0 ? fmt::format(", native {} ({:.2f}x)", microseconds(l.native_seconds),
                                                       l.native_seconds / std::max(l.best_seconds, 1e-12))
                                         : std::string());
    std::vector<std::string> evidence;
    if (source == KeySource::online) {
      evidence.push_back(fmt::format("Learned online ({}): {}", header.date, measured));
    } else if (source == KeySource::model_not_costed) {
      evidence.push_back(
          fmt::format("Cost model ({}): left native, the library's own choice could not be costed "
                      "here; platform {}",
                      header.date, header.platform_file));
    } else {
      const std::string pick = l.predicted_pick_id >= 0 && l.predicted_pick_id < static_cast<int>(choice_text.size())
                                   ? choice_text[l.predicted_pick_id]
                                   : "native";
      const std::string native =
          l.predicted_native_us > 0
              ? fmt::format("{}{:.1f} us", l.predicted_native_at_least ? "at least " : "", l.predicted_native_us)
              : std::string("not costed (its choice is not modelled)");
      evidence.push_back(
          fmt::format("Cost model ({}): picked {}; predicted best candidate {:.1f} us, native {}; "
                      "platform {}",
                      header.date, pick, l.predicted_pick_us, native, header.platform_file));
      if (l.trial_calls > 0) evidence.push_back("Confirmed by timed calls: " + measured);
      if (l.widened_candidates > 0)
        evidence.push_back(
            fmt::format("The trial was widened by {} more of the model's ranked candidates: its "
                        "measured/predicted ratios were {:.2f}x apart, beyond the model's error",
                        l.widened_candidates, l.widened_spread));
    }
    evidence.push_back("MPI library: " + header.mpi_library +
                       (header.library.name.empty() ? " (not identified: the rule cannot name it, so it applies "
                                                      "under any library)"
                                                    : ""));
    if (tallies.size() > 1)
      evidence.push_back(fmt::format("{} of {} communicator ranks chose this", winner->second.votes, [&] {
        int total = 0;
        for (const auto& [id, t] : tallies) total += t.votes;
        return total;
      }()));
    rules += rule_yaml(static_cast<Collective>(l.collective), when, choice_text[l.choice_id], evidence);
  }
  return "# Written by collshim at MPI_Finalize (COLLSHIM_TUNE_OUT): what online tuning learned and the cost model\n"
         "# decided; the job started from: " +
         (files.empty() ? std::string("(no rule files)") : files) +
         ".\n# Each rule is one (communicator size, mapping, collective, size bucket) the job settled; a measured time "
         "is\n"
         "# the slowest rank's, the fastest of the timed trial calls. Calls that no rule matches run native.\n"
         "version: 1\n" +
         (rules.empty() ? std::string("rules: []\n") : "rules:\n" + rules);
}

std::string merge_rule_files(const std::string& existing_text, const std::string& learned) {
  if (existing_text.find_first_not_of(" \t\r\n") == std::string::npos) return learned;
  const std::string existing = existing_text.back() == '\n' ? existing_text : existing_text + "\n";
  // The learned rules: everything after the learned file's own "rules:" line.
  const auto learned_rules = learned.find("\nrules:\n");
  if (learned_rules == std::string::npos) return existing;  // nothing learned ("rules: []")
  const std::string rules = learned.substr(learned_rules + 8);
  // The existing file's top-level rules line: "rules:" (a list follows) or "rules: []".
  std::size_t at = 0;
  while (at < existing.size()) {
    const std::size_t end = std::min(existing.find('\n', at), existing.size());
    std::string line = existing.substr(at, end - at);
    while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.pop_back();
    if (line == "rules:")
      return existing.substr(0, end + 1) + rules + existing.substr(std::min(end + 1, existing.size()));
    if (line == "rules: []")
      return existing.substr(0, at) + "rules:\n" + rules + existing.substr(std::min(end + 1, existing.size()));
    at = end + 1;
  }
  return "";
}

}  // namespace collshim
