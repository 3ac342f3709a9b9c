// The decision policy (src/decide) without MPI: p fake ranks, each a thread, whose collective steps
// meet at a barrier as ShadowSteps' PMPI calls do on the shadow communicator.
#include <gtest/gtest.h>

#include <barrier>
#include <cstdio>
#include <fstream>
#include <map>
#include <thread>

#include "decide/decision_policy.hpp"
#include "selector/environment_impl.hpp"
#include "test_platforms.hpp"

namespace collshim {
namespace {

// What the p ranks share: one slot each per step, and the time every candidate's call takes.
struct FakeRanks {
  explicit FakeRanks(int p) : p(p), barrier(p), longs(p), ints(p), doubles(p), gathered(p) {}
  int p;
  std::barrier<> barrier;
  std::vector<long long> longs;
  std::vector<int> ints;
  std::vector<double> doubles;
  std::vector<std::vector<long long>> gathered;
  std::vector<unsigned char> broadcast;
  // A candidate's call on the slowest rank (1 ms where not listed), and once the ranks are warm.
  std::map<std::string, double> seconds, warm_seconds;
  std::atomic<int> collective_steps{0};  // how many steps rank 0 took (each is a message in a job)
};

class FakeSteps final : public CollectiveSteps {
 public:
  FakeSteps(FakeRanks& ranks, int rank) : ranks_(ranks), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return ranks_.p; }
  long long sum(long long value) override {
    count();
    ranks_.longs[rank_] = value;
    ranks_.barrier.arrive_and_wait();
    long long total = 0;
    for (long long v : ranks_.longs) total += v;
    ranks_.barrier.arrive_and_wait();
    return total;
  }
  int max(int value) override {
    count();
    ranks_.ints[rank_] = value;
    ranks_.barrier.arrive_and_wait();
    const int most = *std::max_element(ranks_.ints.begin(), ranks_.ints.end());
    ranks_.barrier.arrive_and_wait();
    return most;
  }
  void broadcast(void* data, std::size_t bytes, int root) override {
    count();
    const auto* from = static_cast<unsigned char*>(data);
    if (rank_ == root) ranks_.broadcast.assign(from, from + bytes);
    ranks_.barrier.arrive_and_wait();
    if (rank_ != root) std::copy(ranks_.broadcast.begin(), ranks_.broadcast.end(), static_cast<unsigned char*>(data));
    ranks_.barrier.arrive_and_wait();
  }
  std::vector<long long> gather(const std::vector<long long>& values) override {
    count();
    ranks_.gathered[rank_] = values;
    ranks_.barrier.arrive_and_wait();
    std::vector<long long> all;
    if (rank_ == 0)
      for (const auto& v : ranks_.gathered) all.insert(all.end(), v.begin(), v.end());
    ranks_.barrier.arrive_and_wait();
    return all;
  }
  // The call's time is its candidate's (`running`, set by the caller's run), the slowest rank's
  // where timed: this rank's is a little less.
  double time_trial(bool timed, const std::function<int()>& run, int& rc, double& own_seconds) override {
    rc = run();
    const auto& seconds = warm && ranks_.warm_seconds.count(running) ? ranks_.warm_seconds : ranks_.seconds;
    const auto found = seconds.find(running);
    own_seconds = (found == seconds.end() ? 1e-3 : found->second) * (1.0 - 0.01 * rank_);
    if (!timed) return own_seconds;
    ranks_.doubles[rank_] = own_seconds;
    ranks_.barrier.arrive_and_wait();
    const double slowest = *std::max_element(ranks_.doubles.begin(), ranks_.doubles.end());
    ranks_.barrier.arrive_and_wait();
    return slowest;
  }
  std::string running;
  bool warm = false;  // this rank's calls take warm_seconds from now on

 private:
  void count() {
    if (rank_ == 0) ++ranks_.collective_steps;
  }
  FakeRanks& ranks_;
  int rank_;
};

// Runs `body(rank, steps)` on every rank, each on its own thread.
template <class Body>
void on_every_rank(FakeRanks& ranks, Body body) {
  std::vector<std::thread> threads;
  for (int rank = 0; rank < ranks.p; ++rank)
    threads.emplace_back([&, rank] {
      FakeSteps steps(ranks, rank);
      body(rank, steps);
    });
  for (std::thread& t : threads) t.join();
}

EnvironmentSettings environment(const std::map<std::string, std::string>& variables) {
  return read_environment([&](const char* name) -> const char* {
    const auto found = variables.find(name);
    return found == variables.end() ? nullptr : found->second.c_str();
  });
}

RuleTable rules_of(const std::string& rules) {
  RuleTable table;
  std::vector<RuleDiagnostic> diagnostics;
  table.add_file_text("version: 1\nrules:\n" + rules, "test.yaml", diagnostics);
  EXPECT_TRUE(diagnostics.empty());
  return table;
}

using test::two_level_platform;

// The model over that platform, the library running `stand_in` (empty: a library not known).
model::ModelSettings model_of(const std::string& stand_in, double margin) {
  model::LibraryDecision library;
  if (!stand_in.empty())
    library = [stand_in](Collective collective, const model::LibraryFacts&) {
      return model::NativeDecision{"its_" + stand_in, collective, stand_in, ""};
    };
  return {two_level_platform(), "test.yaml", library, stand_in.empty() ? "not known" : "test", margin};
}

// 8 ranks on 2 nodes of 4 (sequential).
CommMapping two_nodes(int p = 8) {
  CommMapping mapping;
  mapping.mapping = MappingClass::sequential;
  mapping.nodes = 2;
  mapping.ppn = p / 2;
  for (int r = 0; r < p; ++r) mapping.node_of_rank.push_back(r / (p / 2));
  return mapping;
}

PolicyCall allgather_call(const CommMapping& mapping, long long block_bytes, int p = 8, int properties = 0,
                          Collective collective = Collective::allgather) {
  return {call_facts(collective, p, mapping, block_bytes, properties), properties, mapping.node_of_rank,
          [=](CollectiveSteps&) {
            return model::ModelCall{collective, p, block_bytes};
          }};
}

struct Settled {
  const AlgorithmChoice* choice = nullptr;
  std::string reason;
  int rule_index = 0;
  int trial_calls = 0;
  std::vector<std::string> verdict_picks;  // every rank's view of the model's pick
};

// Every rank decides the same call until the key settles, running the trials the policy asks for;
// rank 0's result (and a check that every rank settled the same).
Settled settle(const DecisionPolicy& policy, FakeRanks& ranks, const PolicyCall& call) {
  std::vector<Settled> by_rank(ranks.p);
  on_every_rank(ranks, [&](int rank, FakeSteps& steps) {
    CommDecisions comm;
    Settled& mine = by_rank[rank];
    Outcome outcome = policy.decide(comm, call, steps);
    if (outcome.verdict) mine.verdict_picks.push_back(outcome.verdict->pick->text());
    while (outcome.decision == nullptr) {
      const Trial trial = policy.trial(*outcome.key);
      double own = 0;
      bool settled_now = false;
      steps.running = trial.choice->text();
      policy.run_trial(
          *outcome.key, steps, [] { return 0; }, own, settled_now);
      mine.trial_calls += trial.trial_call ? 1 : 0;
      outcome = policy.decide(comm, call, steps);
    }
    mine.choice = outcome.decision->choice;
    mine.reason = outcome.decision->reason;
    mine.rule_index = outcome.decision->rule_index;
    // A repeated call is a hit, with no step at all.
    EXPECT_EQ(DecisionPolicy::cached(comm, call.facts.collective, call.facts.block_bytes, call.properties),
              outcome.decision);
  });
  for (const Settled& s : by_rank) {
    EXPECT_EQ(s.choice, by_rank[0].choice);
    EXPECT_EQ(s.verdict_picks, by_rank[0].verdict_picks);
  }
  return by_rank[0];
}

TEST(DecidePolicy, ForcingBeatsRulesAndRulesBeatTheModel) {
  const std::string rules = "  - collective: allgather\n    when: { procs: 8 }\n    use: bruck\n";
  std::vector<RuleDiagnostic> diagnostics;
  const DecisionPolicy forced(environment({{"COLLSHIM_ALLGATHER", "ring"}, {"COLLSHIM_PLATFORM", "test.yaml"}}),
                              rules_of(rules), model_of("ring", 0.1), diagnostics);
  const DecisionPolicy ruled(environment({{"COLLSHIM_PLATFORM", "test.yaml"}}), rules_of(rules), model_of("ring", 0.1),
                             diagnostics);
  ASSERT_TRUE(diagnostics.empty());
  const CommMapping mapping = two_nodes();
  FakeRanks ranks(8);
  const Settled by_force = settle(forced, ranks, allgather_call(mapping, 64));
  EXPECT_EQ(by_force.choice->text(), "ring");
  EXPECT_EQ(by_force.rule_index, Decision::forced_rule);
  const Settled by_rule = settle(ruled, ranks, allgather_call(mapping, 64));
  EXPECT_EQ(by_rule.choice->text(), "bruck");
  EXPECT_EQ(by_rule.rule_index, 0);
  // Neither asked anything of the other ranks: the model never spoke.
  EXPECT_TRUE(by_rule.verdict_picks.empty());
  EXPECT_EQ(ranks.collective_steps, 0);
}

// Where no rule matches, the model decides: every rank gets rank 0's verdict (one broadcast). Its
// pick must beat native by the margin: with a huge margin native stays.
TEST(DecidePolicy, TheModelPicksOnlyByItsMargin) {
  std::vector<RuleDiagnostic> diagnostics;
  const auto settings = environment({{"COLLSHIM_PLATFORM", "test.yaml"}, {"COLLSHIM_TUNE", "off"}});
  const DecisionPolicy modest(settings, rules_of("  []\n"), model_of("ring", 0.0), diagnostics);
  const DecisionPolicy demanding(settings, rules_of("  []\n"), model_of("ring", 9.0), diagnostics);
  const CommMapping mapping = two_nodes();
  FakeRanks ranks(8);
  const Settled picked = settle(modest, ranks, allgather_call(mapping, 8));
  EXPECT_EQ(ranks.collective_steps, 1);  // the verdict's broadcast, nothing else
  EXPECT_NE(picked.choice->text(), "native") << "ring over 8 ranks of 8-byte blocks should lose";
  EXPECT_EQ(picked.rule_index, Decision::model_pick);
  EXPECT_EQ(picked.trial_calls, 0);
  ASSERT_EQ(picked.verdict_picks.size(), 1u);
  EXPECT_EQ(picked.verdict_picks[0], picked.choice->text());
  const Settled kept = settle(demanding, ranks, allgather_call(mapping, 8));
  EXPECT_EQ(kept.choice->text(), "native");
  EXPECT_EQ(kept.rule_index, Decision::model_kept_native);
}

// Confirmation (the default with a platform): native and the model's best three run timed calls,
// and the fastest measured stays, whatever the model predicted.
TEST(DecidePolicy, ConfirmationKeepsTheFastestMeasured) {
  std::vector<RuleDiagnostic> diagnostics;
  // Confirmation alone: every candidate measured alike disagrees with the predictions, which would
  // widen the trial (tested below).
  auto settings =
      environment({{"COLLSHIM_PLATFORM", "test.yaml"}, {"COLLSHIM_TUNE_RECHECK", "0"}, {"COLLSHIM_TUNE_WIDEN", "0"}});
  const DecisionPolicy policy(settings, rules_of("  []\n"), model_of("ring", 0.0), diagnostics);
  const CommMapping mapping = two_nodes();
  FakeRanks ranks(8);
  // Every candidate as slow as native (1 ms) but the model's third best.
  CommDecisions probe;
  SoloSteps solo(8);
  const Outcome planned = policy.decide(probe, allgather_call(mapping, 8), solo);
  ASSERT_NE(planned.key, nullptr);
  const auto& trial = planned.key->session.candidates();
  ASSERT_GE(trial.size(), 3u);
  EXPECT_EQ(trial.front()->text(), "native");
  const std::string fastest = trial.back()->text();  // the model's third best
  ranks.seconds[fastest] = 1e-4;
  const Settled confirmed = settle(policy, ranks, allgather_call(mapping, 8));
  EXPECT_EQ(confirmed.choice->text(), fastest);
  EXPECT_EQ(confirmed.rule_index, Decision::model_confirmed);
  EXPECT_GT(confirmed.trial_calls, 0);
  // Native faster than all: kept.
  ranks.seconds[fastest] = 1e-3;
  ranks.seconds["native"] = 1e-4;
  EXPECT_EQ(settle(policy, ranks, allgather_call(mapping, 8)).choice->text(), "native");
}

// When the description is wrong: the confirmation's measured times set against the predictions. Each
// candidate of the first trial runs `ratio` times its prediction, the model's own pick `pick_ratio`
// times; the last of the candidates kept for widening is the fastest of all.
struct WideningCase {
  const DecisionPolicy& policy;
  FakeRanks ranks{8};
  std::string fastest_beyond;  // the last candidate kept for widening
  WideningCase(const DecisionPolicy& policy, double ratio, double pick_ratio, std::size_t kept = 3) : policy(policy) {
    CommDecisions probe;
    SoloSteps solo(8);
    const Outcome planned = policy.decide(probe, allgather_call(two_nodes(), 8), solo);
    const CommTuning::Key& key = *planned.key;
    const auto& trial = key.session.candidates();
    EXPECT_EQ(key.predicted_us.size(), trial.size());
    EXPECT_EQ(key.widen_to.size(), kept);
    double slowest = 0;
    for (std::size_t i = 0; i < trial.size(); ++i) {
      const double us = key.predicted_us[i] > 0 ? key.predicted_us[i] : 1000;
      ranks.seconds[trial[i]->text()] = us * 1e-6 * (i == 1 ? pick_ratio : ratio);
      slowest = std::max(slowest, ranks.seconds[trial[i]->text()]);
    }
    if (key.widen_to.empty()) return;
    for (std::size_t i = 0; i < key.widen_to.size(); ++i) ranks.seconds[key.widen_to[i]->text()] = slowest * 2;
    fastest_beyond = key.widen_to.back()->text();
    double fastest = slowest;
    for (const auto& [text, seconds] : ranks.seconds) fastest = std::min(fastest, seconds);
    ranks.seconds[fastest_beyond] = fastest / 2;
  }
};

TEST(DecidePolicy, ConfirmationWidensWhereMeasuredTimesDisagreeWithThePredictions) {
  std::vector<RuleDiagnostic> diagnostics;
  const DecisionPolicy policy(environment({{"COLLSHIM_PLATFORM", "test.yaml"}, {"COLLSHIM_TUNE_RECHECK", "0"}}),
                              rules_of("  []\n"), model_of("ring", 0.0), diagnostics);
  // The pick 3x slower than predicted against the others: every rank widens alike (settle checks),
  // and the fastest of the widened trial, beyond the model's three best, stays.
  WideningCase apart(policy, 2.0, 6.0);
  const Settled widened = settle(policy, apart.ranks, allgather_call(two_nodes(), 8));
  EXPECT_EQ(widened.choice->text(), apart.fastest_beyond);
  EXPECT_EQ(widened.rule_index, Decision::model_widened);
  // Every candidate 2x slower than predicted: a common factor, within the model's error; not widened,
  // so the candidate beyond the three best is never tried.
  WideningCase scaled(policy, 2.0, 2.0);
  const Settled confirmed = settle(policy, scaled.ranks, allgather_call(two_nodes(), 8));
  EXPECT_NE(confirmed.choice->text(), scaled.fastest_beyond);
  EXPECT_NE(confirmed.rule_index, Decision::model_widened);
  EXPECT_LT(confirmed.trial_calls, widened.trial_calls);
  // COLLSHIM_TUNE_WIDEN=0: never.
  const DecisionPolicy never(
      environment({{"COLLSHIM_PLATFORM", "test.yaml"}, {"COLLSHIM_TUNE_RECHECK", "0"}, {"COLLSHIM_TUNE_WIDEN", "0"}}),
      rules_of("  []\n"), model_of("ring", 0.0), diagnostics);
  WideningCase off(never, 2.0, 6.0, 0);
  EXPECT_TRUE(off.fastest_beyond.empty());
  EXPECT_NE(settle(never, off.ranks, allgather_call(two_nodes(), 8)).rule_index, Decision::model_widened);
}

// A pick that left native gets a second look once warm: native returns if the pick no longer beats
// it then (here native's first calls were slow, as a real node's are).
TEST(DecidePolicy, TheSecondLookTakesNativeBackWhenThePickNoLongerWins) {
  std::vector<RuleDiagnostic> diagnostics;
  auto settings = environment({{"COLLSHIM_PLATFORM", "test.yaml"}, {"COLLSHIM_TUNE_RECHECK", "3"}});
  const DecisionPolicy policy(settings, rules_of("  []\n"), model_of("ring", 0.0), diagnostics);
  const CommMapping mapping = two_nodes();
  FakeRanks ranks(8);
  for (const AlgorithmChoice& choice : policy.selector().choices()) ranks.seconds[choice.text()] = 1e-4;
  ranks.seconds["native"] = 1e-3;
  ranks.warm_seconds["native"] = 0.5e-4;
  std::vector<std::string> decided(ranks.p);
  on_every_rank(ranks, [&](int rank, FakeSteps& steps) {
    CommDecisions comm;
    const PolicyCall call = allgather_call(mapping, 8);
    Outcome outcome = policy.decide(comm, call, steps);
    bool second_look = false;
    while (outcome.decision == nullptr) {
      const Trial trial = policy.trial(*outcome.key);
      // Once the first trial is over, native warms up: twice as fast as every candidate.
      if (!trial.trial_call) {
        second_look = true;
        steps.warm = true;
      }
      double own = 0;
      bool settled_now = false;
      steps.running = trial.choice->text();
      policy.run_trial(
          *outcome.key, steps, [] { return 0; }, own, settled_now);
      outcome = policy.decide(comm, call, steps);
    }
    EXPECT_TRUE(second_look);
    EXPECT_TRUE(outcome.key->session.rechecked());
    decided[rank] = outcome.decision->choice->text();
  });
  for (const std::string& d : decided) EXPECT_EQ(d, "native");
}

// A library the model cannot cost: it never leaves native on its own word (COLLSHIM_TUNE=off).
TEST(DecidePolicy, AnUnknownLibraryStaysNative) {
  std::vector<RuleDiagnostic> diagnostics;
  const DecisionPolicy policy(environment({{"COLLSHIM_PLATFORM", "test.yaml"}, {"COLLSHIM_TUNE", "off"}}),
                              rules_of("  []\n"), model_of("", 0.0), diagnostics);
  FakeRanks ranks(8);
  const Settled settled = settle(policy, ranks, allgather_call(two_nodes(), 8));
  EXPECT_EQ(settled.choice->text(), "native");
  EXPECT_EQ(std::string(settled.reason), "no rule matches; the cost model cannot cost native here");
}

// Floating-point sums: without reordering only native may run (the rule's pick falls back to it, and
// the model has nothing to cost); with COLLSHIM_ALLREDUCE_REORDER=1 the rule's pick runs.
TEST(DecidePolicy, TheReorderGuardKeepsFloatingPointSumsNative) {
  const std::string rules = "  - collective: allreduce\n    when: { procs: 8 }\n    use: ring\n";
  std::vector<RuleDiagnostic> diagnostics;
  const DecisionPolicy strict(environment({}), rules_of(rules), std::nullopt, diagnostics);
  const DecisionPolicy reordering(environment({{"COLLSHIM_ALLREDUCE_REORDER", "1"}}), rules_of(rules), std::nullopt,
                                  diagnostics);
  const DecisionPolicy modelled(environment({{"COLLSHIM_PLATFORM", "test.yaml"}}), rules_of("  []\n"),
                                model_of("ring", 0.0), diagnostics);
  const CommMapping mapping = two_nodes();
  const PolicyCall sum = allgather_call(mapping, 64, 8, rounding_depends_on_order, Collective::allreduce);
  FakeRanks ranks(8);
  EXPECT_EQ(settle(strict, ranks, sum).choice->text(), "native");
  EXPECT_EQ(settle(reordering, ranks, sum).choice->text(), "ring");
  const Settled by_model = settle(modelled, ranks, sum);
  EXPECT_EQ(by_model.choice->text(), "native");
  EXPECT_TRUE(by_model.verdict_picks.empty());  // nothing to cost
  EXPECT_EQ(settle(modelled, ranks, allgather_call(mapping, 64, 8, 0, Collective::allreduce)).verdict_picks.size(), 1u);
}

// One rank's device buffers send every rank's call to the MPI library.
TEST(DecidePolicy, OneRanksDeviceMemoryPassesEveryRankThrough) {
  FakeRanks ranks(4);
  std::vector<int> passes(4);
  on_every_rank(ranks, [&](int rank, FakeSteps& steps) {
    passes[rank] = DecisionPolicy::device_memory_agreed(steps, rank == 2) ? 1 : 0;
  });
  EXPECT_EQ(passes, std::vector<int>(4, 1));
  on_every_rank(ranks, [&](int rank, FakeSteps& steps) {
    passes[rank] = DecisionPolicy::device_memory_agreed(steps, false) ? 1 : 0;
  });
  EXPECT_EQ(passes, std::vector<int>(4, 0));
}

// Rank-local sizes (Alltoallv) are agreed where a rule tests block_bytes: the average over all p^2
// blocks; with no such rule, no step is taken and each rank keeps its own.
TEST(DecidePolicy, RankLocalSizesAreAgreedOnlyWhereARuleTestsThem) {
  std::vector<RuleDiagnostic> diagnostics;
  const DecisionPolicy sized(
      environment({}), rules_of("  - collective: alltoallv\n    when: { block_bytes: 1KiB- }\n    use: pairwise\n"),
      std::nullopt, diagnostics);
  const DecisionPolicy unsized(environment({}), rules_of("  []\n"), std::nullopt, diagnostics);
  ASSERT_TRUE(diagnostics.empty());
  const CommMapping mapping = two_nodes(4);
  FakeRanks ranks(4);
  std::vector<long long> agreed(4), own(4);
  on_every_rank(ranks, [&](int rank, FakeSteps& steps) {
    CommDecisions a, b;
    const CallFacts facts = call_facts(Collective::alltoallv, 4, mapping, 0);
    agreed[rank] = sized.agreed_block_bytes(a, facts, steps, 16 * (rank + 1), 0);
    own[rank] = unsized.agreed_block_bytes(b, facts, steps, 16 * (rank + 1), 0);
  });
  EXPECT_EQ(agreed, std::vector<long long>(4, 16 * 10 / 16));
  EXPECT_EQ(own, (std::vector<long long>{4, 8, 12, 16}));
}

// A platform file that is not one stops the job (a model error), before any call.
TEST(DecidePolicy, ABadPlatformFileIsAnError) {
  const std::string path = ::testing::TempDir() + "decide_bad_platform.yaml";
  std::ofstream(path) << "name: [unclosed\n";
  std::vector<RuleDiagnostic> diagnostics;
  std::vector<std::string> model_errors;
  const DecisionPolicy policy(environment({{"COLLSHIM_PLATFORM", path}}), rules_of("  []\n"), ProcessLibrary{},
                              diagnostics, model_errors);
  EXPECT_FALSE(model_errors.empty());
  EXPECT_EQ(policy.model(), nullptr);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace collshim

namespace collshim {
namespace {

// A nonblocking call decides alone: forcing and rules as a blocking call, the model's pick without
// trial calls or any step with other ranks, and where the blocking form settled its key (and the
// call decides as it starts) that key's decision. A blocking-only choice runs its nonblocking
// fallback, named as such.

// A started call's decision, as collective_operation.hpp asks it: alone.
Decision decide_started(const DecisionPolicy& policy, CommDecisions& comm, const PolicyCall& call, DecidedAt at) {
  SoloSteps alone(call.facts.procs);
  return policy.decide(comm, call, alone, at).started;
}

TEST(DecideNonblocking, DecidesAloneFromForcingRulesTheModelAndSettledKeys) {
  std::vector<RuleDiagnostic> diagnostics;
  const auto with_platform =
      environment({{"COLLSHIM_PLATFORM", "test.yaml"}, {"COLLSHIM_TUNE_RECHECK", "0"}, {"COLLSHIM_TUNE_WIDEN", "0"}});
  const DecisionPolicy model_policy(with_platform, rules_of("  []\n"), model_of("ring", 0.0), diagnostics);
  const DecisionPolicy ruled(with_platform, rules_of("  - collective: allgather\n    use: bruck\n"),
                             model_of("ring", 0.0), diagnostics);
  ASSERT_TRUE(diagnostics.empty());
  const CommMapping mapping = two_nodes();

  CommDecisions alone;
  const Decision by_rule = decide_started(ruled, alone, allgather_call(mapping, 8), DecidedAt::start);
  EXPECT_EQ(by_rule.choice->text(), "bruck");
  EXPECT_EQ(by_rule.rule_index, 0);

  // The model's pick as the blocking form's model picks it (the same costing), unconfirmed. (A
  // communicator's decisions are its policy's: the cache holds the ruled policy's now.)
  CommDecisions modelled;
  const Decision picked = decide_started(model_policy, modelled, allgather_call(mapping, 8), DecidedAt::start);
  EXPECT_EQ(picked.rule_index, Decision::model_pick);
  CommDecisions blocking_probe;
  SoloSteps solo(8);
  const Outcome planned = model_policy.decide(blocking_probe, allgather_call(mapping, 8), solo);
  ASSERT_NE(planned.verdict, std::nullopt);
  EXPECT_EQ(picked.choice, planned.verdict->pick);

  // A key the blocking form settled by confirmation (here on native, the fastest measured) is taken
  // where the call decides as it starts, not during progress.
  FakeRanks ranks(8);
  ranks.seconds["native"] = 1e-5;
  std::vector<CommDecisions> comms(8);
  on_every_rank(ranks, [&](int rank, FakeSteps& steps) {
    Outcome outcome = model_policy.decide(comms[rank], allgather_call(mapping, 8), steps);
    while (outcome.decision == nullptr) {
      const Trial trial = model_policy.trial(*outcome.key);
      double own = 0;
      bool settled_now = false;
      steps.running = trial.choice->text();
      model_policy.run_trial(
          *outcome.key, steps, [] { return 0; }, own, settled_now);
      outcome = model_policy.decide(comms[rank], allgather_call(mapping, 8), steps);
    }
  });
  const int steps_before = ranks.collective_steps;
  const Decision settled = decide_started(model_policy, comms[0], allgather_call(mapping, 8), DecidedAt::start);
  EXPECT_EQ(settled.choice->text(), "native");
  EXPECT_EQ(settled.rule_index, Decision::model_kept_native);
  const Decision in_progress = decide_started(model_policy, comms[1], allgather_call(mapping, 8), DecidedAt::progress);
  EXPECT_EQ(in_progress.choice, picked.choice);
  EXPECT_EQ(ranks.collective_steps, steps_before);  // nothing asked of other ranks

  // Blocking-only: hierarchical with its window runs hierarchical by messages; Traff's trees binomial.
  const DecisionPolicy windowed(
      environment({{"COLLSHIM_ALLGATHER", "hierarchical:inter=ring,intra=shm"}, {"COLLSHIM_GATHERV", "traff"}}),
      rules_of("  []\n"), std::nullopt, diagnostics);
  CommDecisions fresh;
  const Decision window = decide_started(windowed, fresh, allgather_call(mapping, 8), DecidedAt::start);
  EXPECT_EQ(window.choice->text(), "hierarchical:inter=ring");
  EXPECT_EQ(window.requested->text(), "hierarchical:inter=ring,intra=shm");
  EXPECT_EQ(std::string_view(window.substitution), blocking_only_substitution);
  const Decision tree =
      decide_started(windowed, fresh, allgather_call(mapping, 8, 8, 0, Collective::gatherv), DecidedAt::start);
  EXPECT_EQ(tree.choice->text(), "binomial");
}

// Every choice's nonblocking form can run nonblocking: the fallbacks end in a choice that is not
// blocking-only, for every algorithm's default parameters and the parameters that make it so.
TEST(DecideNonblocking, EveryNonblockingFormRunsNonblocking) {
  std::vector<RuleDiagnostic> diagnostics;
  Selector selector(environment({}), rules_of("  []\n"), diagnostics);
  for (const Algorithm& algorithm : algorithms()) {
    for (const Collective collective : algorithm.collectives) {
      for (const char* intra : {"p2p", "shm"}) {
        std::vector<std::pair<std::string, std::string>> params;
        if (algorithm.name == "hierarchical") params = {{"intra", intra}};
        const SpecParseResult parsed = make_choice(algorithm.name, params, collective);
        ASSERT_TRUE(parsed.choice) << parsed.error;
        const AlgorithmChoice* form = selector.nonblocking_form(*selector.interned(*parsed.choice));
        ASSERT_NE(form, nullptr);
        const bool blocking_only =
            form->algorithm->blocking_only && !form->algorithm->blocking_only(form->params).empty();
        EXPECT_FALSE(blocking_only) << parsed.choice->text() << " runs " << form->text();
        const bool declared = algorithm.blocking_only && !algorithm.blocking_only(parsed.choice->params).empty();
        EXPECT_EQ(form != selector.interned(*parsed.choice), declared) << parsed.choice->text();
      }
    }
  }
}

}  // namespace
}  // namespace collshim
