#pragma once
// Online tuning (COLLSHIM_TUNE=online, docs/rules-and-tuning.md): a communicator's first calls of each
// (collective, size bucket, operation properties) try the tuning candidates in one order that every
// rank knows, a few calls each, and the fastest runs the rest of the job. Only the state machine is
// here, free of MPI: DecisionPolicy::run_trial (decision_policy.hpp) has each trial timed from a
// barrier and its time agreed (the slowest rank's, CollectiveSteps::time_trial), so every rank
// advances the same way and locks the same choice. What was learned becomes rules at MPI_Finalize (learned_rules_yaml).
#include <algorithm>
#include <cstdint>
#include <deque>
#include <limits>
#include <string>
#include <vector>

#include "algorithms/engine/algorithm_spec.hpp"
#include "selector/environment.hpp"
#include "selector/mapping.hpp"
#include "selector/mpi_library.hpp"

namespace collshim {

struct TuningPolicy {
  int warmup_calls = 1;  // untimed first calls of a candidate (its first call may set up state)
  int timed_calls = 2;   // timed calls at least; a candidate's time is the lower median of them
  // A candidate whose first timed call is this much slower than the fastest first call so far is dropped.
  double drop_factor = 2.0;
  // The first candidate (native) stays unless another is faster by more than this factor: within a few
  // percent the difference is the noise of a handful of calls, and passing through is never slower.
  double first_margin = 1.05;
  // Short calls get more timed calls, in more rounds (one call per candidate each), up to
  // `max_timed_calls`, until the rounds times the fastest candidate's lower median reach this much: two
  // calls of a few microseconds cannot separate candidates 10% apart (one real node, docs/results.md),
  // while sixteen of the model's four candidates cost a key well under a millisecond. The median, not
  // the sum: one slow call at a job's start must not end the trial early. Calls of half this or
  // longer get `timed_calls`.
  double timed_seconds = 200e-6;
  int max_timed_calls = 16;
  // A pick that left native gets a second look once warm: after it has run this many calls, native
  // and it are timed again (one warm-up call and the rounds above each), and native returns unless
  // the pick still beats it by `first_margin`. The first trial runs at the key's first calls, where a
  // real node slowed the library's own call for dozens of calls (docs/results.md, "On one real 16-core
  // node"), and a pick confirmed there then ran at a third of native's speed for the rest of the job.
  // 0: no second look (COLLSHIM_TUNE_RECHECK).
  int recheck_after_calls = 64;
  // Model confirmation only: where the trial's measured times disagree with the model's predictions
  // beyond its own error (model::check_predictions, model_step.hpp), the trial is widened once to this
  // many more of the model's ranked candidates (COLLSHIM_TUNE_WIDEN; 0: never).
  int widen_candidates = 3;
};

// The policy with what the environment sets (COLLSHIM_TUNE_RECHECK, COLLSHIM_TUNE_WIDEN).
TuningPolicy tuning_policy(const EnvironmentSettings& settings);

// One key on one communicator. Every candidate's warm-up calls come first, in order, before any call
// is timed: what a job pays once (connections made on first use, cold caches, communicators made
// lazily) then lands in no candidate's time, whichever is tried first. The timed calls then go round
// the candidates, one call each per round: whatever still drifts (a node settling after the job's
// first calls) spreads over every candidate instead of landing on the first, native.
class TuningSession {
 public:
  // `candidates`: the choices to try, in the same order on every rank; at least one.
  TuningSession(std::vector<const AlgorithmChoice*> candidates, const TuningPolicy& policy);

  // A trial has a winner (best()): the first, or the second look's once it is over.
  bool settled() const { return next_ >= candidates_.size(); }
  // Settled for good: no second look pending. Until then every call goes through finish_call().
  bool done() const { return settled() && calls_before_recheck_ == 0; }
  // The choice the next call runs: the candidate on trial, or the winner once settled().
  const AlgorithmChoice* current() const { return settled() ? best() : candidates_[next_]; }
  // True when the next call's time counts, so every rank must agree on it and pass it to finish_call().
  bool next_call_timed() const { return !settled() && !warming_; }
  // After each call until done(): `agreed_seconds` is the slowest rank's time of a timed call (ignored
  // for a warm-up call, and for the pick's calls before its second look). The same sequence of
  // arguments on every rank gives the same state on every rank.
  void finish_call(double agreed_seconds);
  // The second look (TuningPolicy::recheck_after_calls) has begun: the trial is native against the
  // first trial's pick, and measured() is its.
  bool rechecked() const { return rechecked_; }
  // Once the first trial has settled (and before any second look): a new trial of native, the first
  // trial's winner and `more` (those not among them), from fresh warm-up calls, whose fastest wins as
  // before. At most once; `first_measured()` keeps what the first trial measured.
  void widen(const std::vector<const AlgorithmChoice*>& more);
  bool widened() const { return widened_; }

  const AlgorithmChoice* best() const { return candidates_[best_]; }
  // The candidates of the current trial (the first, or the second look's), in the order they run.
  const std::vector<const AlgorithmChoice*>& candidates() const { return candidates_; }
  double best_seconds() const { return best_seconds_; }
  // The first candidate's (native's, as tuning_candidates() lists it first) time; 0 if it was never timed.
  double first_candidate_seconds() const { return first_seconds_; }
  int trial_calls() const { return trial_calls_; }
  int dropped() const { return static_cast<int>(std::count(dropped_flags_.begin(), dropped_flags_.end(), true)); }
  // What the trials measured, once done(): a candidate's time (the lower median of its timed calls)
  // and how many timed calls it had (1 for a dropped one).
  struct Measured {
    const AlgorithmChoice* choice;
    double seconds;
    int timed_calls;
    bool dropped;
  };
  std::vector<Measured> measured() const;
  // What the first trial measured, once widen() started another (empty otherwise).
  const std::vector<Measured>& first_measured() const { return first_measured_; }

 private:
  bool another_round() const;  // once every candidate left has had this round's call
  void move_on();              // to the next candidate of the round, the next round, or settle
  void settle();
  void begin_trial();    // warm-up calls first, then timed rounds
  void begin_recheck();  // native against the pick, from a fresh trial

  std::vector<const AlgorithmChoice*> candidates_;
  TuningPolicy policy_;
  bool warming_ = true;
  int warmup_calls_made_ = 0;               // of the candidate warming up
  std::size_t next_ = 0;                    // the candidate the next call runs; candidates_.size() once done
  std::vector<std::vector<double>> times_;  // the timed calls of each candidate
  std::vector<bool> dropped_flags_;
  double fastest_first_ = 0;  // the fastest first timed call so far (0: none yet)
  std::size_t best_ = 0;
  double best_seconds_ = 0;
  double first_seconds_ = 0;
  int trial_calls_ = 0;
  int calls_before_recheck_ = 0;  // the pick's calls left before its second look
  bool rechecked_ = false;
  bool widened_ = false;
  std::vector<Measured> first_measured_;
};

// What each candidate measured, for logs: "native 7.9 us (16), bruck 6.1 us (16), ring 20.0 us (1, dropped)".
std::string measured_text(const TuningSession& session);

// Who settles a key that no forcing variable or rule decided, or that online tuning re-tunes.
enum class KeySource : std::uint8_t {
  online,            // COLLSHIM_TUNE=online without a platform: every tuning candidate is tried
  model,             // the cost model's pick alone (COLLSHIM_TUNE=off with COLLSHIM_PLATFORM)
  model_confirmed,   // native and the model's three best run timed calls, the fastest stays (confirm)
  model_online,      // online tuning over native and the model's best few, in predicted order
  model_not_costed,  // the model could not cost native (unknown library, not modelled) and no trial
                     // may leave it (COLLSHIM_TUNE=off, or nothing ranked): native
};

// What the cost model said of a key (times in microseconds; 0 where not costed).
struct ModelEvidence {
  const AlgorithmChoice* pick = nullptr;  // the model's decision (native where nothing beat it)
  double pick_us = 0, native_us = 0;
  bool native_at_least = false;  // native_us is a lower bound (the pick did not need more)
};

// The tuning sessions of one communicator, by key (collective, size bucket, operation properties).
// A communicator sees few keys: a linear search. A deque, so sessions stay where they are.
class CommTuning {
 public:
  struct Key {
    Collective collective;
    int bucket, properties;
    TuningSession session;
    KeySource source = KeySource::online;
    ModelEvidence evidence;
    int learned_index = -1;  // where Runtime::learned keeps the key (-1: not yet)
    // Model confirmation: the model's predictions of the trial's candidates in microseconds (0 where it
    // has none exactly: native not costed or only bounded), and the next candidates of its ranking with
    // theirs, which a widened trial tries (DecisionPolicy::run_trial).
    std::vector<double> predicted_us{};
    std::vector<const AlgorithmChoice*> widen_to{};
    std::vector<double> widen_to_us{};
    std::string widened{};      // once widened: why and what it tried, for logs and the written rules
    double widened_spread = 0;  // the measured/predicted ratios' spread that widened it
  };
  Key* find(Collective collective, int bucket, int properties) {
    for (Key& entry : sessions_) {
      if (entry.collective == collective && entry.bucket == bucket && entry.properties == properties) return &entry;
    }
    return nullptr;
  }
  // A key that tries every candidate (online tuning without a platform, some 25 of them) keeps the
  // policy's minimum of timed calls per candidate and drops the hopeless after one. The model's few
  // get the extra calls of short ones and are never dropped: one call at a job's start can be many
  // times a warm one (measured on a real node: 8 ms against 6 us), and dropping on it lost the best.
  Key& add(Collective collective, int bucket, int properties, std::vector<const AlgorithmChoice*> candidates,
           TuningPolicy policy, KeySource source = KeySource::online, ModelEvidence evidence = {}) {
    if (source == KeySource::online) {
      policy.max_timed_calls = policy.timed_calls;
    } else {
      policy.drop_factor = std::numeric_limits<double>::infinity();
    }
    sessions_.push_back(
        {collective, bucket, properties, TuningSession(std::move(candidates), policy), source, evidence});
    return sessions_.back();
  }

 private:
  std::deque<Key> sessions_;
};

// The decision of a settled key (its session done), labelled by who settled it; `native` passes through.
struct Decision;
Decision settled_decision(const CommTuning::Key& key, const AlgorithmChoice* native);

// What a communicator learned for one key, in a fixed layout: rank 0 gathers these from every rank at
// MPI_Finalize (every rank runs the same binary).
struct LearnedChoice {
  int collective = 0;  // Collective
  int procs = 0, nodes = 0, ppn = 0;
  int mapping = 0;     // MappingClass
  int bucket = 0;      // size_bucket(): -1 for 0 bytes, else floor(log2(block_bytes))
  int properties = 0;  // reduction properties (0: commutative and exact, the only ones written as rules)
  int choice_id = 0;   // in the selector's choice table
  int trial_calls = 0;
  double best_seconds = 0, native_seconds = 0;
  int source = 0;                                         // KeySource
  double predicted_pick_us = 0, predicted_native_us = 0;  // the model's (0: not costed)
  int predicted_native_at_least = 0;                      // predicted_native_us is a lower bound
  int predicted_pick_id = -1;                             // the model's pick (a choice id)
  int widened_candidates = 0;                             // candidates a widened confirmation added (0: not widened)
  double widened_spread = 0;                              // the measured/predicted ratios' spread that widened it
};

struct LearnedRulesHeader {
  std::string mpi_library;  // MPI_Get_library_version's first line, for the evidence
  MpiLibrary library;       // what every rule's `library` condition names: learned here, evidence only here
  std::string date;
  std::vector<std::string> started_from;  // the rule files of the job
  std::string platform_file;              // COLLSHIM_PLATFORM, where the model decided
};

// The learned choices as rules (one per key, duplicates from several communicators or ranks resolved
// by majority, then by the faster time), each with its evidence as a comment and `library:` naming
// the job's library and version (none where it was not identified). Keys whose operation properties
// a rule cannot express are left out. `choice_text` maps a choice id to its spec.
std::string learned_rules_yaml(const std::vector<LearnedChoice>& learned, const std::vector<std::string>& choice_text,
                               const LearnedRulesHeader& header);

// `learned` (a rule file from learned_rules_yaml) merged into an existing rule file's text: its rules
// go first (they are newer), then the existing rules, comments kept. Empty `existing`: `learned`.
// Returns "" when `existing` has no top-level "rules:" line to merge into.
std::string merge_rule_files(const std::string& existing, const std::string& learned);

}  // namespace collshim
