#pragma once
// The decision of a call, whole: the forcing variable, the rules (Selector), the cost model
// (COLLSHIM_PLATFORM) and its confirmation or online tuning by trial calls, the pick's second look,
// and the per-communicator cache; with them the size the ranks agree on, the device-memory vote and,
// through the selector, the floating-point reorder guard. The shim, collshim-bench --rules and
// collshim-config explain all decide through it. It is free of MPI: the collective steps a decision
// needs come through CollectiveSteps (collective_steps.hpp), so unit tests run it with fake ranks.
#include <spdlog/logger.h>

#include <array>
#include <map>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "decide/collective_steps.hpp"
#include "decide/decision_cache.hpp"
#include "decide/model_step.hpp"
#include "decide/online_tuning.hpp"
#include "model/cost/model_decision.hpp"
#include "selector/mapping.hpp"
#include "selector/selector.hpp"

namespace collshim {

// What a communicator keeps of its decisions: p and the mapping are fixed for it.
struct CommDecisions {
  DecisionCache cache;  // every decision made, blocking and started calls' alike
  CommTuning tuning;    // the keys the model or online tuning settles, or has settled, by trial calls
  // Per collective, whether its decisions here depend on the size (0: not known yet, 1: no, 2: yes):
  // the ranks agree on a rank-local size only where they do.
  std::array<std::uint8_t, collective_count> size_dependence{};
  // The cost model's unconfirmed picks for started calls, by size bucket, so that each bucket is
  // costed once. Touched only by those calls, which decide in the same order on every rank.
  std::map<std::array<int, 3>, Decision> started_picks;  // (collective, bucket, properties)
};

// Where a call is decided, which says what its decision may use.
enum class DecidedAt : std::uint8_t {
  // A blocking call, every rank in it: the model's verdict is agreed, a key's session runs trial calls.
  blocking_call,
  // A nonblocking or persistent call as it starts: by this rank alone (a start never waits for other
  // ranks), at the same point of every rank's calls on the communicator, so a key the blocking
  // calls settled counts.
  start,
  // A started call that agreed on its size first, deciding during progress: alone, and at different
  // calls on different ranks, so only forcing, the rules and the model's pick count; and in any
  // thread, so not through the cache (Outcome::started).
  progress,
};

// Decision::substitution of a nonblocking or persistent call whose choice is blocking-only
// (Algorithm::blocking_only): `choice` is then its nonblocking fallback.
inline constexpr char blocking_only_substitution[] = "a form that runs nonblocking";  // one address

// What a reduction's decision depends on besides its size (the intercept reads them from the call's
// type and operation; every rank passes the same): a combination of these bits, part of the key.
enum ReductionProperty : int {
  non_commutative = 1,
  rounding_depends_on_order = 2,
};
// ", non-commutative operation" and the like, for the debug log; "" for none.
std::string properties_text(int properties);

// What the selector knows of a call on a communicator of `procs` ranks placed as `mapping`.
CallFacts call_facts(Collective collective, int procs, const CommMapping& mapping, long long block_bytes,
                     int properties = 0);

// A call as the policy decides it.
struct PolicyCall {
  CallFacts facts;                       // block_bytes: the size every rank agreed on
  int properties = 0;                    // of a reduction's operation and data (part of the key)
  const std::vector<int>& node_of_rank;  // the communicator's node map, which the model costs on
  // The call's data as the model costs it, asked only where the model decides: collective, as an
  // Alltoallv's pattern is only known to the ranks together (gather_alltoall_pattern: a summary of
  // each rank's counts, gathered).
  std::function<model::ModelCall(CollectiveSteps&)> model_call;
};

// One call of a key's session: what runs, how the report labels it, and whether its time counts.
struct Trial {
  const AlgorithmChoice* choice = nullptr;
  int rule_index = Decision::tuning_trial;  // the settled decision's for the pick's calls before its second look
  bool timed = false;
  bool trial_call = true;  // false: the pick's own call before its second look, not a trial
};

// What decide() says of a call: a decision (cached), or a trial call of `key` (trial() says what
// runs; the caller runs it through run_trial()). A pass-through is a decision whose choice passes
// through (native), or, after the vote, device memory (device_memory_agreed()).
struct Outcome {
  const Decision* decision = nullptr;  // a blocking call's, in the cache
  // A started call's, by value. One decided at its start is also cached; one decided during progress
  // is not: progress runs in any thread, and another thread's blocking call on the communicator may
  // be reading the cache, unlocked, at the same time.
  Decision started{};
  CommTuning::Key* key = nullptr;  // the key's session: the trial's, or the one settled in this call
  bool settled_now = false;        // `key` settled in this call (a job keeps it: Runtime::learned)
  // Where the model spoke in this call: its verdict as every rank has it, and on the rank that costed
  // it, as costed (every list whole; collshim-config explain prints it).
  std::optional<model::ModelVerdict> verdict;
  std::optional<model::ModelVerdict> costed;
};

class DecisionPolicy {
 public:
  // Everything a job decides by, read from `settings`: the rule files of COLLSHIM_CONFIG (or
  // `rules`), the forcing variables, COLLSHIM_PLATFORM and the library's decisions for the model, the
  // tuning policy. Rule problems go to `diagnostics`, the model's (a bad platform file) to
  // `model_errors`; a job stops at MPI_Init on either.
  DecisionPolicy(const EnvironmentSettings& settings, const ProcessLibrary& library,
                 std::vector<RuleDiagnostic>& diagnostics, std::vector<std::string>& model_errors);
  DecisionPolicy(const EnvironmentSettings& settings, RuleTable rules, const ProcessLibrary& library,
                 std::vector<RuleDiagnostic>& diagnostics, std::vector<std::string>& model_errors);
  // For tests: `model` given rather than read (settings.platform must be set, as the selector asks).
  DecisionPolicy(const EnvironmentSettings& settings, RuleTable rules, std::optional<model::ModelSettings> model,
                 std::vector<RuleDiagnostic>& diagnostics, JobFacts job = {});
  DecisionPolicy(const DecisionPolicy&) = delete;
  DecisionPolicy& operator=(const DecisionPolicy&) = delete;

  const Selector& selector() const { return selector_; }
  const model::ModelSettings* model() const { return model_ ? &*model_ : nullptr; }
  const TuningPolicy& tuning_policy() const { return tuning_; }
  // The debug lines of decisions (the cost model's verdict, a fallback) go here; none without.
  void set_log(std::shared_ptr<spdlog::logger> log) { log_ = std::move(log); }
  // collshim-config explain: the model costs every candidate whole, to list them all. The pick and
  // the plan are the same (model_decision: the pick is that of costing every candidate).
  void rank_every_candidate() { rank_every_candidate_ = true; }

  // A repeated call's decision: a cache hit, a few instructions; null when not decided yet.
  static const Decision* cached(const CommDecisions& comm, Collective collective, long long block_bytes,
                                int properties) {
    return comm.cache.find(collective, block_bytes, properties);
  }

  // Whether the ranks must agree on a rank-local size before deciding: only where some size-keyed
  // rule could apply to this communicator (or the model or online tuning decides), worked out on the
  // first call. `facts`: the call's, its size ignored.
  bool size_must_be_agreed(CommDecisions& comm, const CallFacts& facts) const {
    if (!selector_.needs_agreed_size(facts.collective)) return false;
    std::uint8_t& known = comm.size_dependence[static_cast<int>(facts.collective)];
    if (known == 0) known = selector_.decision_depends_on_size(facts) ? 2 : 1;
    return known == 2;
  }
  // The size a decision is keyed on, the average block that rules test as block_bytes, for the
  // collectives whose ranks hold different sizes (SizeAgreement local or root; global ones and
  // reductions compute it alone): `received_bytes` is this rank's (rooted: the root's total there).
  long long agreed_block_bytes(CommDecisions& comm, const CallFacts& facts, CollectiveSteps& steps,
                               long long received_bytes, int root) const;

  // The one decision of every call form: a blocking call's where cached() gave null, stored in the
  // communicator's cache once settled (`decision`); a started call's always (`started`). In
  // order: for a start, a key the blocking calls settled; the forcing variable and the rules
  // (Selector); where they leave it to tuning or the model, a blocking call's key session (the model's
  // confirmation, online tuning: trial calls, null until settled), or for a started call the model's
  // pick costed here alone (every rank costs the same call the same way; an Alltoallv as uniform at
  // its average block; `call.model_call` gets `steps`, SoloSteps) or native; then for a started call
  // the choice's nonblocking form (Selector::nonblocking_form).
  Outcome decide(CommDecisions& comm, const PolicyCall& call, CollectiveSteps& steps,
                 DecidedAt at = DecidedAt::blocking_call) const;

  // The next call of a key decide() left to trial calls.
  Trial trial(const CommTuning::Key& key) const;
  // Runs that call through `steps` (`run` returns an MPI error code, which it returns) and advances
  // the key's session by the agreed time. `own_seconds`: this rank's time of the call; `settled_now`:
  // the key settled with this call.
  int run_trial(CommTuning::Key& key, CollectiveSteps& steps, const std::function<int()>& run, double& own_seconds,
                bool& settled_now) const;

  // Whether some rank's buffers of a call about to run one of the shim's algorithms are device
  // memory (`mine`: this rank's): every rank must take the same path, and then the call passes
  // through (the algorithms touch host memory only).
  static bool device_memory_agreed(CollectiveSteps& steps, bool mine) { return steps.max(mine ? 1 : 0) != 0; }

 private:
  CommTuning::Key& key_session(CommDecisions& comm, const PolicyCall& call, CollectiveSteps& steps,
                               Outcome& outcome) const;
  // A started call's pick where tuning or the model decides: the model's, unconfirmed, costed once per
  // bucket; native without a model.
  Decision started_pick(CommDecisions& comm, const PolicyCall& call, CollectiveSteps& alone, bool model_step) const;
  // The choice's form that runs nonblocking, where it is blocking-only.
  Decision started_form(Decision decision) const;
  // A confirmation's first trial just settled: widens it where its measured times disagree with the
  // predictions (model::check_predictions). The times are the agreed ones, so every rank widens alike.
  void widen_if_mispredicted(CommTuning::Key& key) const;

  Selector selector_;
  std::optional<model::ModelSettings> model_;
  TuningPolicy tuning_;
  std::shared_ptr<spdlog::logger> log_;
  bool rank_every_candidate_ = false;
};

}  // namespace collshim
