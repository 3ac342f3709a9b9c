// Online tuning without MPI: the session's state machine (what a sequence of agreed times makes
// every rank choose), the selector's candidates and the rule file written at MPI_Finalize.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "decide/online_tuning.hpp"
#include "selector/selector.hpp"

namespace collshim {
namespace {

EnvironmentSettings environment(const std::map<std::string, std::string>& variables) {
  return read_environment([&](const char* name) -> const char* {
    const auto found = variables.find(name);
    return found == variables.end() ? nullptr : found->second.c_str();
  });
}

// Three distinct choices to tune between (their identity is all a session looks at).
struct ThreeChoices {
  AlgorithmChoice a, b, c;
  std::vector<const AlgorithmChoice*> all() const { return {&a, &b, &c}; }
};

// A policy whose candidates get exactly `timed` timed calls, however short the calls, and a pick no
// second look (the tests of the second look set it).
TuningPolicy fixed_calls(int warmup, int timed, double drop_factor, double first_margin) {
  return {.warmup_calls = warmup,
          .timed_calls = timed,
          .drop_factor = drop_factor,
          .first_margin = first_margin,
          .timed_seconds = 0,
          .recheck_after_calls = 0};
}

// Drives a session with a time per candidate (every call of a candidate takes its time).
const AlgorithmChoice* drive(TuningSession& session, const std::map<const AlgorithmChoice*, double>& time,
                             std::vector<const AlgorithmChoice*>* ran = nullptr) {
  for (int call = 0; call < 100 && !session.done(); ++call) {
    if (ran) ran->push_back(session.current());
    session.finish_call(session.next_call_timed() ? time.at(session.current()) : -1.0);
  }
  return session.done() ? session.best() : nullptr;
}

// Drives a session until its (first) trial has a winner.
void drive_until_settled(TuningSession& session, const std::map<const AlgorithmChoice*, double>& time) {
  for (int call = 0; call < 100 && !session.settled(); ++call)
    session.finish_call(session.next_call_timed() ? time.at(session.current()) : -1.0);
}

// A widened trial: native, the first trial's winner and the new candidates, from fresh warm-up calls;
// the fastest of them wins, and what the first trial measured is kept.
TEST(TuningSession, AWidenedTrialTimesNativeTheWinnerAndTheNewCandidates) {
  const ThreeChoices c;
  AlgorithmChoice d, e;
  TuningSession session({&c.a, &c.b, &c.c}, fixed_calls(1, 2, 100.0, 1.05));
  const std::map<const AlgorithmChoice*, double> time{{&c.a, 3e-6}, {&c.b, 2e-6}, {&c.c, 4e-6}, {&d, 1e-6}, {&e, 5e-6}};
  drive_until_settled(session, time);
  ASSERT_EQ(session.best(), &c.b);
  const int first_calls = session.trial_calls();
  session.widen({&d, &c.b, &e});  // b, the winner, is in once
  EXPECT_TRUE(session.widened());
  EXPECT_FALSE(session.settled());
  EXPECT_EQ(session.candidates(), (std::vector<const AlgorithmChoice*>{&c.a, &c.b, &d, &e}));
  EXPECT_EQ(session.first_measured().size(), 3u);
  EXPECT_EQ(session.current(), &c.a);  // warm-up calls first again
  EXPECT_EQ(drive(session, time), &d);
  EXPECT_GT(session.trial_calls(), first_calls);
  // At most once.
  session.widen({&e});
  EXPECT_TRUE(session.done());
}

TEST(TuningSession, WarmsEveryCandidateUpFirstThenTimesThemInRoundsAndLocksTheFastest) {
  const ThreeChoices c;
  TuningSession session(c.all(), fixed_calls(1, 2, 100.0, 1.0));
  std::vector<const AlgorithmChoice*> ran;
  EXPECT_EQ(drive(session, {{&c.a, 3e-6}, {&c.b, 1e-6}, {&c.c, 2e-6}}, &ran), &c.b);
  // Every candidate's warm-up call before any timed call: what the first calls of a job pay once
  // falls on no candidate's time. Then rounds: a drift falls on every candidate, not on the first.
  const std::vector<const AlgorithmChoice*> expected = {&c.a, &c.b, &c.c, &c.a, &c.b, &c.c, &c.a, &c.b, &c.c};
  EXPECT_EQ(ran, expected);
  EXPECT_EQ(session.trial_calls(), 9);
  EXPECT_DOUBLE_EQ(session.best_seconds(), 1e-6);
  EXPECT_DOUBLE_EQ(session.first_candidate_seconds(), 3e-6);
  EXPECT_EQ(session.current(), &c.b);  // what every later call runs
  EXPECT_FALSE(session.next_call_timed());
}

// The node slows down for the first timed calls (a job settling): in rounds the slow calls fall on
// every candidate, so native (first) is not the one that looks slow.
TEST(TuningSession, ADriftOverTheFirstTimedCallsFallsOnEveryCandidate) {
  const ThreeChoices c;
  TuningSession session({&c.a, &c.b}, fixed_calls(0, 4, 100.0, 1.05));
  const double base[] = {1.0e-6, 1.03e-6};  // b is 3% slower: native must stay
  int call = 0;
  while (!session.done()) {
    const double settling = call < 4 ? 10.0 : 1.0;  // the first four timed calls are ten times slower
    session.finish_call(base[session.current() == &c.a ? 0 : 1] * settling);
    ++call;
  }
  EXPECT_EQ(session.best(), &c.a);
  EXPECT_DOUBLE_EQ(session.first_candidate_seconds(), 1e-6);  // lower median of 10, 10, 1, 1 (us)
}

TEST(TuningSession, WarmupTimesNeverCount) {
  const ThreeChoices c;
  TuningSession session({&c.a, &c.b}, fixed_calls(1, 1, 100.0, 1.0));
  // b's warm-up call is very slow (it sets up state), its timed call fast: b wins.
  EXPECT_FALSE(session.next_call_timed());
  session.finish_call(1.0);  // a warm-up
  EXPECT_FALSE(session.next_call_timed());
  EXPECT_EQ(session.current(), &c.b);
  session.finish_call(5.0);  // b warm-up
  EXPECT_TRUE(session.next_call_timed());
  EXPECT_EQ(session.current(), &c.a);
  session.finish_call(2e-6);  // a timed
  session.finish_call(1e-6);  // b timed
  ASSERT_TRUE(session.done());
  EXPECT_EQ(session.best(), &c.b);
}

TEST(TuningSession, ACandidateFarSlowerOnItsFirstTimedCallIsDropped) {
  const ThreeChoices c;
  TuningSession session(c.all(), fixed_calls(0, 3, 2.0, 1.0));
  std::vector<const AlgorithmChoice*> ran;
  EXPECT_EQ(drive(session, {{&c.a, 1e-6}, {&c.b, 5e-6}, {&c.c, 1.5e-6}}, &ran), &c.a);
  EXPECT_EQ(std::count(ran.begin(), ran.end(), &c.b), 1);  // one call, 5x the best: dropped
  EXPECT_EQ(std::count(ran.begin(), ran.end(), &c.c), 3);  // within 2x: kept to the end
  EXPECT_EQ(session.dropped(), 1);
}

// Native, the first candidate, is what every other must beat: never dropped, even when the others'
// first calls are far faster (a dropped native would leave nothing to compare with).
TEST(TuningSession, TheFirstCandidateIsNeverDropped) {
  const ThreeChoices c;
  TuningSession session({&c.a, &c.b}, fixed_calls(0, 2, 2.0, 1.05));
  for (const double t : {50e-6, 1e-6, 1e-6, 1e-6}) session.finish_call(t);  // rounds: a, b, a, b
  ASSERT_TRUE(session.done());
  EXPECT_EQ(session.dropped(), 0);
  EXPECT_DOUBLE_EQ(session.first_candidate_seconds(), 1e-6);
  EXPECT_EQ(session.best(), &c.a);  // b is not 5% faster once a is warm
}

TEST(TuningSession, TheFastestOfTwoTimedCallsIsACandidatesTime) {
  const ThreeChoices c;
  TuningSession session({&c.a, &c.b}, fixed_calls(0, 2, 100.0, 1.0));
  for (const double t : {4e-6, 2e-6, 1e-6, 3e-6}) session.finish_call(t);  // rounds: a, b, a, b
  ASSERT_TRUE(session.done());
  EXPECT_EQ(session.best(), &c.a);  // a: 1 us at best; b: 2 us
  EXPECT_DOUBLE_EQ(session.best_seconds(), 1e-6);
}

// From three timed calls on, the lower median: one lucky fast call does not make a candidate win.
TEST(TuningSession, TheLowerMedianOfMoreTimedCallsResistsOneLuckyCall) {
  const ThreeChoices c;
  TuningSession session({&c.a, &c.b}, fixed_calls(0, 4, 100.0, 1.0));
  // Rounds of (a, b): a steady at 5 us, b at 9 us but for one 1 us call.
  for (const double t : {5e-6, 9e-6, 5e-6, 1e-6, 5e-6, 9e-6, 5e-6, 9e-6}) session.finish_call(t);
  ASSERT_TRUE(session.done());
  EXPECT_EQ(session.best(), &c.a);
  EXPECT_DOUBLE_EQ(session.first_candidate_seconds(), 5e-6);
  const std::vector<TuningSession::Measured> measured = session.measured();
  ASSERT_EQ(measured.size(), 2u);
  EXPECT_DOUBLE_EQ(measured[1].seconds, 9e-6);
  EXPECT_EQ(measured[1].timed_calls, 4);
}

// Short calls get more rounds of timed calls, until the rounds times the fastest candidate's time
// reach the policy's time, at most max_timed_calls; every candidate gets the same number of calls.
TEST(TuningSession, ShortCallsGetMoreRoundsUpToTheCap) {
  const ThreeChoices c;
  const TuningPolicy policy{.warmup_calls = 0,
                            .timed_calls = 2,
                            .drop_factor = 100.0,
                            .timed_seconds = 100e-6,
                            .max_timed_calls = 16,
                            .recheck_after_calls = 0};
  const auto rounds = [&](std::map<const AlgorithmChoice*, double> times) {
    TuningSession session(c.all(), policy);
    std::vector<const AlgorithmChoice*> ran;
    drive(session, times, &ran);
    EXPECT_EQ(std::count(ran.begin(), ran.end(), &c.a), std::count(ran.begin(), ran.end(), &c.c));
    return std::count(ran.begin(), ran.end(), &c.b);
  };
  EXPECT_EQ(rounds({{&c.a, 10e-6}, {&c.b, 20e-6}, {&c.c, 30e-6}}), 10);  // 10 x 10 us reach 100 us
  EXPECT_EQ(rounds({{&c.a, 10e-6}, {&c.b, 1e-6}, {&c.c, 60e-6}}), 16);   // 1 us calls: the cap
  EXPECT_EQ(rounds({{&c.a, 60e-6}, {&c.b, 70e-6}, {&c.c, 80e-6}}), 2);   // 60 us calls: the minimum
}

// A slow stretch (a job's first calls, a node's hiccup) on one candidate's calls does not end the
// trial early: the count follows the fastest candidate's lower median.
TEST(TuningSession, ASlowStretchDoesNotCutACandidatesTrialShort) {
  const ThreeChoices c;
  const TuningPolicy policy{.warmup_calls = 0, .timed_calls = 2, .drop_factor = 100.0, .timed_seconds = 100e-6};
  TuningSession session({&c.a}, policy);  // one candidate: no trial at all
  EXPECT_TRUE(session.done());
  TuningSession two({&c.a, &c.b}, policy);
  std::vector<double> a_calls;
  for (int call = 0; call < 100 && !two.done(); ++call) {
    const bool a = two.current() == &c.a;
    const double t = a && a_calls.size() < 2 ? 600e-6 : 5e-6;  // a's first two calls: 120 times the rest
    if (a) a_calls.push_back(t);
    two.finish_call(t);
  }
  EXPECT_EQ(a_calls.size(), 16u);
  EXPECT_DOUBLE_EQ(two.first_candidate_seconds(), 5e-6);
  EXPECT_EQ(two.best(), &c.a);  // b is no faster once a is past its slow stretch
}

// Online tuning of every candidate keeps two timed calls each however short the calls; the model's
// confirmation of a few candidates gets the extra calls.
TEST(CommTuning, OnlyTheModelsFewCandidatesGetExtraTimedCalls) {
  const ThreeChoices c;
  CommTuning tuning;
  const TuningPolicy policy{.warmup_calls = 0, .recheck_after_calls = 0};
  const std::map<const AlgorithmChoice*, double> short_calls{{&c.a, 1.5e-6}, {&c.b, 1e-6}, {&c.c, 1.2e-6}};
  CommTuning::Key& online = tuning.add(Collective::allgather, 3, 0, c.all(), policy, KeySource::online);
  drive(online.session, short_calls);
  EXPECT_EQ(online.session.trial_calls(), 3 * policy.timed_calls);
  CommTuning::Key& confirmed = tuning.add(Collective::allgather, 4, 0, c.all(), policy, KeySource::model_confirmed);
  drive(confirmed.session, short_calls);
  EXPECT_EQ(confirmed.session.trial_calls(), 3 * policy.max_timed_calls);
  EXPECT_EQ(confirmed.session.best(), &c.b);
  // One call far slower than the rest (a job's first) drops a candidate of online tuning, not one
  // of the model's.
  const std::map<const AlgorithmChoice*, double> slow_b_once{{&c.a, 2e-6}, {&c.b, 1e-6}, {&c.c, 3e-6}};
  for (const KeySource source : {KeySource::online, KeySource::model_confirmed}) {
    CommTuning::Key& key = tuning.add(Collective::allgather, 5, static_cast<int>(source), c.all(), policy, source);
    bool b_first = true;
    while (!key.session.done()) {
      const AlgorithmChoice* now = key.session.current();
      double t = slow_b_once.at(now);
      if (now == &c.b && b_first) t = 1e-3, b_first = false;
      key.session.finish_call(t);
    }
    EXPECT_EQ(key.session.dropped(), source == KeySource::online ? 1 : 0);
    EXPECT_EQ(key.session.best(), source == KeySource::online ? &c.a : &c.b);
  }
}

// The first trial runs at a key's first calls. On a real node the library's own call measured two to
// four times its warm time there for dozens of calls, and a pick confirmed on that ran at a third of
// native's speed for the rest of the job. A pick that left native is timed against native once more
// after it has run `recheck_after_calls` calls; native returns unless the pick still beats it.
TEST(TuningSession, APickThatLeftNativeIsTimedAgainOnceWarmAndNativeReturnsWhereItWins) {
  const ThreeChoices c;
  TuningPolicy policy = fixed_calls(1, 2, 100.0, 1.05);
  policy.recheck_after_calls = 5;
  TuningSession session(c.all(), policy);
  // Cold: native (a) at 30 us, b at 20 us, c at 40 us; b is picked for now.
  drive_until_settled(session, {{&c.a, 30e-6}, {&c.b, 20e-6}, {&c.c, 40e-6}});
  ASSERT_TRUE(session.settled());
  EXPECT_FALSE(session.done());
  EXPECT_EQ(session.best(), &c.b);
  EXPECT_EQ(session.trial_calls(), 9);
  // The pick's own calls: untimed, not trial calls.
  for (int call = 0; call < 5; ++call) {
    EXPECT_EQ(session.current(), &c.b);
    EXPECT_FALSE(session.next_call_timed());
    EXPECT_FALSE(session.rechecked());
    session.finish_call(-1.0);
  }
  EXPECT_EQ(session.trial_calls(), 9);
  // The second look: native against the pick alone, warm-up calls first, then timed rounds.
  ASSERT_TRUE(session.rechecked());
  EXPECT_FALSE(session.settled());
  std::vector<const AlgorithmChoice*> ran;
  EXPECT_EQ(drive(session, {{&c.a, 7e-6}, {&c.b, 20e-6}}, &ran), &c.a);  // warm native wins
  const std::vector<const AlgorithmChoice*> expected = {&c.a, &c.b, &c.a, &c.b, &c.a, &c.b};
  EXPECT_EQ(ran, expected);
  EXPECT_EQ(session.trial_calls(), 15);
  EXPECT_DOUBLE_EQ(session.best_seconds(), 7e-6);
  EXPECT_DOUBLE_EQ(session.first_candidate_seconds(), 7e-6);
  EXPECT_EQ(session.measured().size(), 2u);  // the second look's
  EXPECT_TRUE(session.done());
  EXPECT_EQ(session.current(), &c.a);
}

TEST(TuningSession, APickThatStillWinsOnTheSecondLookStaysAndNativeKeptIsNotLookedAtAgain) {
  const ThreeChoices c;
  TuningPolicy policy = fixed_calls(0, 2, 100.0, 1.05);
  policy.recheck_after_calls = 3;
  TuningSession wins({&c.a, &c.b}, policy);
  std::vector<const AlgorithmChoice*> ran;
  EXPECT_EQ(drive(wins, {{&c.a, 30e-6}, {&c.b, 20e-6}}, &ran), &c.b);
  EXPECT_TRUE(wins.rechecked());
  // Four timed calls, three of the pick's own, four timed calls of the second look.
  EXPECT_EQ(ran.size(), 11u);
  EXPECT_EQ(wins.trial_calls(), 8);

  TuningSession native_kept({&c.a, &c.b}, policy);
  EXPECT_EQ(drive(native_kept, {{&c.a, 20e-6}, {&c.b, 30e-6}}), &c.a);
  EXPECT_FALSE(native_kept.rechecked());
  EXPECT_EQ(native_kept.trial_calls(), 4);

  policy.recheck_after_calls = 0;  // COLLSHIM_TUNE_RECHECK=0
  TuningSession no_look({&c.a, &c.b}, policy);
  drive_until_settled(no_look, {{&c.a, 30e-6}, {&c.b, 20e-6}});
  EXPECT_TRUE(no_look.done());
  EXPECT_EQ(no_look.best(), &c.b);
}

TEST(TuningSession, TheFirstCandidateStaysUnlessAnotherBeatsItByTheMargin) {
  const ThreeChoices c;
  TuningSession close(c.all(), fixed_calls(0, 1, 100.0, 1.05));
  EXPECT_EQ(drive(close, {{&c.a, 1.0e-6}, {&c.b, 0.97e-6}, {&c.c, 2e-6}}), &c.a);  // 3% faster: noise
  EXPECT_DOUBLE_EQ(close.best_seconds(), 1.0e-6);
  TuningSession clear(c.all(), fixed_calls(0, 1, 100.0, 1.05));
  EXPECT_EQ(drive(clear, {{&c.a, 1.0e-6}, {&c.b, 0.9e-6}, {&c.c, 2e-6}}), &c.b);  // 10% faster
}

TEST(TuningSession, OneCandidateNeedsNoTrial) {
  const ThreeChoices c;
  const TuningSession session({&c.a}, TuningPolicy{});
  EXPECT_TRUE(session.done());
  EXPECT_EQ(session.best(), &c.a);
  EXPECT_EQ(session.trial_calls(), 0);
}

TEST(OnlineTuningEnvironment, ReadsAndChecksTheVariables) {
  const auto on = environment({{"COLLSHIM_TUNE", "online"}, {"COLLSHIM_TUNE_OUT", "learned.yaml"}});
  EXPECT_TRUE(on.tune_online);
  EXPECT_EQ(on.tune_out, "learned.yaml");
  EXPECT_TRUE(on.errors.empty());
  const auto bad = environment({{"COLLSHIM_TUNE", "auto"}});
  ASSERT_EQ(bad.errors.size(), 1u);
  EXPECT_EQ(bad.errors[0].rfind("COLLSHIM_TUNE=auto: expected confirm (", 0), 0u) << bad.errors[0];
  EXPECT_NE(bad.errors[0].find("online (learn the algorithms during the job) or off"), std::string::npos);
  const auto out_alone = environment({{"COLLSHIM_TUNE_OUT", "x.yaml"}});
  ASSERT_EQ(out_alone.errors.size(), 1u);
  EXPECT_NE(out_alone.errors[0].find("COLLSHIM_TUNE_OUT=x.yaml needs COLLSHIM_TUNE=online or COLLSHIM_PLATFORM"),
            std::string::npos);
}

// With a platform description the model settles what no rule decides, confirmed unless COLLSHIM_TUNE
// says otherwise; confirm without one is a warning (only rules decide), a bad margin an error.
TEST(ModelEnvironment, PlatformMarginAndTuneModes) {
  const auto plain = environment({{"COLLSHIM_PLATFORM", "p.yaml"}});
  EXPECT_TRUE(plain.model_decides());
  EXPECT_TRUE(plain.confirms());
  EXPECT_DOUBLE_EQ(plain.model_margin, 0.10);
  EXPECT_TRUE(plain.errors.empty() && plain.warnings.empty());
  const auto off =
      environment({{"COLLSHIM_PLATFORM", "p.yaml"}, {"COLLSHIM_TUNE", "off"}, {"COLLSHIM_MODEL_MARGIN", "0.25"}});
  EXPECT_FALSE(off.confirms());
  EXPECT_DOUBLE_EQ(off.model_margin, 0.25);
  const auto online = environment({{"COLLSHIM_PLATFORM", "p.yaml"}, {"COLLSHIM_TUNE", "online"}});
  EXPECT_FALSE(online.confirms());
  EXPECT_TRUE(online.tune_online);
  const auto no_platform = environment({{"COLLSHIM_TUNE", "confirm"}});
  EXPECT_FALSE(no_platform.model_decides());
  ASSERT_EQ(no_platform.warnings.size(), 1u);
  EXPECT_NE(no_platform.warnings[0].find("needs COLLSHIM_PLATFORM"), std::string::npos);
  for (const char* margin : {"-0.1", "ten", "", "11"}) {
    const auto bad = environment({{"COLLSHIM_PLATFORM", "p.yaml"}, {"COLLSHIM_MODEL_MARGIN", margin}});
    ASSERT_EQ(bad.errors.size(), 1u) << margin;
    EXPECT_EQ(bad.errors[0].rfind(std::string("COLLSHIM_MODEL_MARGIN=") + margin + ": expected a fraction", 0), 0u);
  }
  EXPECT_FALSE(environment({{"COLLSHIM_PLATFORM", ""}}).errors.empty());
  const auto with_out = environment({{"COLLSHIM_PLATFORM", "p.yaml"}, {"COLLSHIM_TUNE_OUT", "out.yaml"}});
  EXPECT_TRUE(with_out.errors.empty());
  EXPECT_EQ(tuning_policy(environment({})).recheck_after_calls, TuningPolicy{}.recheck_after_calls);
  EXPECT_EQ(tuning_policy(environment({{"COLLSHIM_TUNE_RECHECK", "0"}})).recheck_after_calls, 0);
  EXPECT_EQ(tuning_policy(environment({{"COLLSHIM_TUNE_RECHECK", "500"}})).recheck_after_calls, 500);
  for (const char* calls : {"-1", "ten", "", "1.5"}) {
    const auto bad = environment({{"COLLSHIM_TUNE_RECHECK", calls}});
    ASSERT_EQ(bad.errors.size(), 1u) << calls;
    EXPECT_EQ(bad.errors[0].rfind(std::string("COLLSHIM_TUNE_RECHECK=") + calls + ": expected a number of calls", 0),
              0u);
  }
}

TEST(TuningPolicy, WideningIsSetByTheEnvironment) {
  EXPECT_EQ(tuning_policy(environment({})).widen_candidates, 3);
  EXPECT_EQ(tuning_policy(environment({{"COLLSHIM_TUNE_WIDEN", "0"}})).widen_candidates, 0);
  EXPECT_EQ(tuning_policy(environment({{"COLLSHIM_TUNE_WIDEN", "5"}})).widen_candidates, 5);
  for (const char* candidates : {"-1", "6", "two", ""}) {
    const auto bad = environment({{"COLLSHIM_TUNE_WIDEN", candidates}});
    ASSERT_EQ(bad.errors.size(), 1u) << candidates;
    EXPECT_EQ(bad.errors[0].rfind(std::string("COLLSHIM_TUNE_WIDEN=") + candidates + ": expected a number", 0), 0u);
  }
}

CallFacts allgather_facts(int procs) {
  return {Collective::allgather, procs, 64, MappingClass::sequential, 2, (procs + 1) / 2};
}

TEST(OnlineTuningSelector, CandidatesAreNativeFirstAndOnlyWhatRunsUnchanged) {
  std::vector<RuleDiagnostic> diagnostics;
  const Selector selector(environment({{"COLLSHIM_TUNE", "online"}}), RuleTable{}, diagnostics);
  EXPECT_FALSE(selector.always_native(Collective::allgather));
  EXPECT_TRUE(selector.needs_agreed_size(Collective::alltoallv));  // keys on the size bucket
  const auto at6 = selector.tuning_candidates(allgather_facts(6));
  ASSERT_FALSE(at6.empty());
  EXPECT_EQ(at6.front()->text(), "native");
  auto has = [](const std::vector<const AlgorithmChoice*>& list, const std::string& text) {
    return std::any_of(list.begin(), list.end(), [&](const AlgorithmChoice* c) { return c->text() == text; });
  };
  // Recursive doubling needs a power of two: a candidate at 8 ranks, not at 6.
  EXPECT_FALSE(has(at6, "recursive_doubling"));
  EXPECT_TRUE(has(selector.tuning_candidates(allgather_facts(8)), "recursive_doubling"));
  EXPECT_TRUE(has(at6, "bruck:radix=4"));
  // Floating-point sums that may not be reordered: nothing but native, so nothing to try.
  CallFacts sum{Collective::allreduce, 8, 64, MappingClass::sequential, 2, 4};
  sum.order_changes_rounding = true;
  const auto floating = selector.tuning_candidates(sum);
  ASSERT_EQ(floating.size(), 1u);
  EXPECT_EQ(floating.front()->text(), "native");
}

// One rank per node: a node-aware candidate runs as a flat one (hierarchical:inter=X as X, node_grid
// as linear or a grid among ranks), which is timed and costed once, under its own name.
TEST(OnlineTuningSelector, OneRankPerNodeLeavesOutNodeAwareCandidatesThatRunAsAnother) {
  std::vector<RuleDiagnostic> diagnostics;
  const Selector selector(environment({{"COLLSHIM_TUNE", "online"}, {"COLLSHIM_TUNE_EXCLUDE", "pairwise;linear"}}),
                          RuleTable{}, diagnostics);
  // The candidates' names for 8 ranks on `nodes` nodes of 8 / nodes ranks.
  auto candidates = [&](Collective collective, int nodes) {
    std::set<std::string> names;
    for (const AlgorithmChoice* c :
         selector.tuning_candidates({collective, 8, 64, MappingClass::sequential, nodes, 8 / nodes}))
      names.insert(c->text());
    return names;
  };
  const auto one_per_node = candidates(Collective::allreduce, 8);
  const auto two_per_node = candidates(Collective::allreduce, 4);
  // Allreduce's `inter` is always a flat candidate: every hierarchical form leaves.
  for (const char* text : {"hierarchical", "hierarchical:inter=recursive_multiplying",
                           "hierarchical:inter=ring,intra=shm", "hierarchical:intra=shm"}) {
    EXPECT_FALSE(one_per_node.contains(text)) << text;
    EXPECT_TRUE(two_per_node.contains(text)) << text;
  }
  for (const char* text : {"native", "recursive_doubling", "recursive_multiplying", "ring"})
    EXPECT_TRUE(one_per_node.contains(text)) << text;
  EXPECT_EQ(std::count_if(one_per_node.begin(), one_per_node.end(),
                          [](const std::string& text) { return text.starts_with("hierarchical"); }),
            0);

  // Allgather's default `inter` is the library's own exchange among the leaders, an Allgatherv of its
  // own choice, not a candidate: that form stays, and its shared-memory twin leaves.
  const auto allgather = candidates(Collective::allgather, 8);
  EXPECT_TRUE(allgather.contains("hierarchical"));
  EXPECT_FALSE(allgather.contains("hierarchical:intra=shm"));
  EXPECT_FALSE(allgather.contains("hierarchical:inter=sparbit"));
  EXPECT_TRUE(allgather.contains("sparbit"));

  // node_grid among 8 nodes of one rank is a grid among the 8 ranks; dims=1 is `linear`, excluded
  // here, so that form stays.
  const auto alltoall = candidates(Collective::alltoall, 8);
  EXPECT_FALSE(alltoall.contains("node_grid:dims=2"));
  EXPECT_FALSE(alltoall.contains("node_grid:dims=hypercube"));
  EXPECT_TRUE(alltoall.contains("grid"));
  EXPECT_TRUE(alltoall.contains("node_grid"));
  EXPECT_FALSE(alltoall.contains("linear"));
  EXPECT_TRUE(candidates(Collective::alltoall, 4).contains("node_grid:dims=2"));
}

TEST(OnlineTuningSelector, TunesNeitherForcedCallsNorRulesLearnedBefore) {
  const std::string learned =
      "version: 1\nrules:\n  - collective: allgather\n    when: { procs: 4 }\n    use: ring\n"
      "  - collective: allgatherv\n    when: { procs: 4 }\n    use: ring\n";
  std::vector<RuleDiagnostic> diagnostics;
  RuleTable table;
  table.add_file_text(learned, "learned.yaml", diagnostics);
  const Selector selector(
      environment(
          {{"COLLSHIM_TUNE", "online"}, {"COLLSHIM_TUNE_OUT", "learned.yaml"}, {"COLLSHIM_ALLTOALLV", "pairwise"}}),
      std::move(table), diagnostics);
  ASSERT_TRUE(diagnostics.empty());
  EXPECT_FALSE(selector.tunes(selector.decide(allgather_facts(4))));  // a rule of COLLSHIM_TUNE_OUT
  EXPECT_TRUE(selector.tunes(selector.decide(allgather_facts(6))));   // no rule
  CallFacts alltoallv = allgather_facts(6);
  alltoallv.collective = Collective::alltoallv;
  EXPECT_FALSE(selector.tunes(selector.decide(alltoallv)));  // forced
  std::vector<RuleDiagnostic> other_diagnostics;
  RuleTable other;
  other.add_file_text(learned, "site.yaml", other_diagnostics);
  const Selector site(environment({{"COLLSHIM_TUNE", "online"}, {"COLLSHIM_TUNE_OUT", "learned.yaml"}}),
                      std::move(other), other_diagnostics);
  EXPECT_TRUE(site.tunes(site.decide(allgather_facts(4))));  // another file's rule is only a start
}

LearnedChoice learned_choice(int choice_id, double best_seconds, int bucket = 6) {
  return {static_cast<int>(Collective::allgather),
          16,
          2,
          8,
          static_cast<int>(MappingClass::sequential),
          bucket,
          0,
          choice_id,
          40,
          best_seconds,
          3 * best_seconds};
}

TEST(LearnedRules, OneRulePerKeyByMajorityParsedBackToTheSameDecision) {
  const std::vector<std::string> choices = {"native", "ring", "bruck:radix=4"};
  // Key 1 (64 B - 127 B): two ranks chose ring, one bruck (faster, but outvoted). Key 2 (4 KiB): bruck.
  const std::vector<LearnedChoice> learned = {learned_choice(1, 2e-6), learned_choice(1, 2.1e-6),
                                              learned_choice(2, 1e-6), learned_choice(2, 5e-6, 12)};
  const std::string yaml = learned_rules_yaml(learned, choices, {"Open MPI v4.1.4", {}, "2026-11-24", {"default"}});
  std::vector<RuleDiagnostic> diagnostics;
  RuleTable table;
  table.add_file_text(yaml, "learned.yaml", diagnostics);
  ASSERT_TRUE(diagnostics.empty()) << yaml;
  ASSERT_EQ(table.rules().size(), 2u) << yaml;
  EXPECT_NE(yaml.find("Learned online (2026-11-24): 40 trial calls; best 2.0 us, native 6.0 us (3.00x)"),
            std::string::npos)
      << yaml;
  EXPECT_NE(yaml.find("2 of 3 communicator ranks chose this"), std::string::npos) << yaml;
  std::vector<RuleDiagnostic> none;
  const Selector selector(environment({}), std::move(table), none);
  auto decided = [&](long long bytes, int procs = 16) {
    CallFacts facts{Collective::allgather, procs, bytes, MappingClass::sequential, 2, 8};
    return selector.decide(facts).choice->text();
  };
  EXPECT_EQ(decided(64), "ring");
  EXPECT_EQ(decided(127), "ring");
  EXPECT_EQ(decided(128), "native");  // outside the tuned bucket: nothing claimed
  EXPECT_EQ(decided(4096), "bruck:radix=4");
  EXPECT_EQ(decided(8191), "bruck:radix=4");
  EXPECT_EQ(decided(64, 32), "native");  // another process count
}

// A rule learned under one library is evidence for that library only: it names it, with its version.
TEST(LearnedRules, NameTheLibraryTheyWereLearnedUnder) {
  const std::vector<std::string> choices = {"native", "ring"};
  const MpiLibrary ompi{"ompi", {4, 1, 4}, "4.1.4", "Open MPI 4.1.4"};
  const std::string yaml =
      learned_rules_yaml({learned_choice(1, 1e-6)}, choices, {"Open MPI v4.1.4", ompi, "2026-11-24", {"default"}});
  EXPECT_NE(yaml.find("    when: { library: \"ompi 4.1.4\", procs: 16, block_bytes: 64-127, mapping: sequential, "
                      "nodes: 2, ppn: 8 }\n"),
            std::string::npos)
      << yaml;
  auto decided = [&](const std::string& text, const MpiLibrary& library) {
    std::vector<RuleDiagnostic> diagnostics;
    RuleTable table;
    table.add_file_text(text, "learned.yaml", diagnostics);
    EXPECT_TRUE(diagnostics.empty()) << text;
    const Selector selector(environment({}), std::move(table), diagnostics, {library});
    return selector.decide({Collective::allgather, 16, 64, MappingClass::sequential, 2, 8}).choice->text();
  };
  EXPECT_EQ(decided(yaml, ompi), "ring");
  EXPECT_EQ(decided(yaml, {"ompi", {4, 1, 5}, "4.1.5", ""}), "native");
  EXPECT_EQ(decided(yaml, {"mpich", {4, 0, 2}, "4.0.2", ""}), "native");
  // A library the shim cannot name: no condition to write, and the evidence says so.
  const std::string unnamed =
      learned_rules_yaml({learned_choice(1, 1e-6)}, choices, {"Intel(R) MPI Library 2021.6", {}, "2026-11-24", {}});
  EXPECT_EQ(unnamed.find("when: { library"), std::string::npos) << unnamed;
  EXPECT_NE(unnamed.find("when: { procs: 16"), std::string::npos) << unnamed;
  EXPECT_NE(unnamed.find("# MPI library: Intel(R) MPI Library 2021.6 (not identified: the rule cannot name it, so it "
                         "applies under any library)"),
            std::string::npos)
      << unnamed;
  EXPECT_EQ(decided(unnamed, {}), "ring");
}

TEST(LearnedRules, MergeKeepsTheExistingRulesAndCommentsAfterTheNewOnes) {
  const std::vector<std::string> choices = {"native", "ring"};
  const std::string learned = learned_rules_yaml({learned_choice(1, 1e-6)}, choices, {"MPI", {}, "today", {}});
  const std::string existing =
      "# site notes\nversion: 1\nrules:\n  # old evidence\n  - collective: allgather\n"
      "    when: { procs: 64 }\n    use: bruck\n";
  const std::string merged = merge_rule_files(existing, learned);
  ASSERT_FALSE(merged.empty());
  EXPECT_EQ(merged.rfind("# site notes\nversion: 1\nrules:\n  # Learned online", 0), 0u) << merged;
  EXPECT_NE(merged.find("  # old evidence\n  - collective: allgather\n    when: { procs: 64 }"), std::string::npos);
  std::vector<RuleDiagnostic> diagnostics;
  RuleTable table;
  table.add_file_text(merged, "merged.yaml", diagnostics);
  EXPECT_TRUE(diagnostics.empty());
  EXPECT_EQ(table.rules().size(), 2u);
  // An empty list is replaced; an empty or missing file is the learned file; other shapes are refused.
  EXPECT_NE(merge_rule_files("version: 1\nrules: []\n", learned).find("rules:\n  # Learned online"), std::string::npos);
  EXPECT_EQ(merge_rule_files("", learned), learned);
  EXPECT_EQ(merge_rule_files("version: 1\nrules: [ {collective: allgather, use: ring} ]\n", learned), "");
  // Nothing learned: the existing file stays as it is.
  EXPECT_EQ(merge_rule_files(existing, learned_rules_yaml({}, choices, {"MPI", {}, "today", {}})), existing);
}

}  // namespace
}  // namespace collshim
