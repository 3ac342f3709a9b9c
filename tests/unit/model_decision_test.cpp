// The cost model as a decision (model_decision.hpp): the margin a candidate must beat native by
// (twice it for a prediction with an opaque phase), and native wherever the library's own choice
// cannot be costed.
#include <gtest/gtest.h>

#include <limits>

#include "algorithms/engine/algorithm_spec.hpp"
#include "model/library/library_alltoall.hpp"
#include "model/cost/model_decision.hpp"
#include "decide/model_step.hpp"
#include "selector/environment_impl.hpp"
#include "test_platforms.hpp"

namespace collshim::model {
namespace {

using test::two_level_platform;

// A library that runs `stand_in` (a collshim Allgather spec) for every Allgather.
LibraryDecision library_running_its(const std::string& stand_in) {
  return [stand_in](Collective collective, const LibraryFacts&) {
    return NativeDecision{"its_" + stand_in, collective, stand_in, ""};
  };
}

struct Candidates {
  std::vector<AlgorithmChoice> owned;
  std::vector<const AlgorithmChoice*> pointers;
  AlgorithmChoice native = *make_choice("native", {}, Collective::allgather).choice;
  explicit Candidates(const std::vector<std::string>& specs) {
    for (const std::string& spec : specs) owned.push_back(*parse_algorithm_spec(spec, Collective::allgather).choice);
    for (std::size_t i = 0; i < owned.size(); ++i) {
      owned[i].id = static_cast<int>(i);
      pointers.push_back(&owned[i]);
    }
  }
};

std::vector<int> nodes_of(int p, int per_node) {
  std::vector<int> node_of_rank(p);
  for (int r = 0; r < p; ++r) node_of_rank[r] = r / per_node;
  return node_of_rank;
}

TEST(ModelDecision, AnUnknownLibraryOrANativeChoiceWithoutStandInStaysNativeButRanksTheCandidates) {
  Candidates c({"ring", "bruck", "sparbit"});
  ModelSettings settings{two_level_platform(), "test.yaml", {}, "MyMPI 1.0: no decisions of this library are known"};
  const ModelCall call{Collective::allgather, 32, 8};
  // The ranking a known library gets, for comparison: it does not depend on the library.
  ModelSettings known = settings;
  known.library = library_running_its("ring");
  const ModelVerdict costed = model_decision(known, call, nodes_of(32, 8), c.pointers, &c.native, true, 2);
  ASSERT_TRUE(costed.why_native.empty());
  ASSERT_GE(costed.ranked.size(), 2u);

  const ModelVerdict unknown = model_decision(settings, call, nodes_of(32, 8), c.pointers, &c.native, true, 2);
  EXPECT_EQ(unknown.pick, &c.native);
  EXPECT_EQ(unknown.native_us, 0);
  EXPECT_NE(unknown.why_native.find("MyMPI 1.0"), std::string::npos) << unknown.why_native;
  // Ranked with no bound from native: at least the two fastest, exactly as where native is known.
  ASSERT_GE(unknown.ranked.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(unknown.ranked[i].choice, costed.ranked[i].choice);
    EXPECT_DOUBLE_EQ(unknown.ranked[i].us, costed.ranked[i].us);
  }
  EXPECT_NE(verdict_text(unknown).find("MyMPI 1.0"), std::string::npos) << verdict_text(unknown);

  settings.library = [](Collective collective, const LibraryFacts&) {
    return NativeDecision{"two_level", collective, "", "no stand-in for its two-level algorithm"};
  };
  const ModelVerdict not_modelled = model_decision(settings, call, nodes_of(32, 8), c.pointers, &c.native, true, 2);
  EXPECT_EQ(not_modelled.pick, &c.native);
  EXPECT_NE(not_modelled.why_native.find("no stand-in for its two-level algorithm"), std::string::npos);
  ASSERT_GE(not_modelled.ranked.size(), 2u);
  EXPECT_EQ(not_modelled.ranked[0].choice, costed.ranked[0].choice);
}

TEST(ModelDecision, TheFastestCandidateWinsOnlyByTheMargin) {
  Candidates c({"ring", "bruck", "sparbit"});
  ModelSettings settings{two_level_platform(), "test.yaml", library_running_its("ring"), "test", 0.0};
  const ModelCall call{Collective::allgather, 64, 8};
  // Every candidate costed whole, to see them all (by default only those that may win are).
  const ModelVerdict free_margin = model_decision(settings, call, nodes_of(64, 8), c.pointers, &c.native, true,
                                                  std::numeric_limits<std::size_t>::max());
  ASSERT_TRUE(free_margin.why_native.empty()) << free_margin.why_native;
  ASSERT_EQ(free_margin.ranked.size(), 3u);
  for (std::size_t i = 1; i < free_margin.ranked.size(); ++i)
    EXPECT_LE(free_margin.ranked[i - 1].us, free_margin.ranked[i].us);
  const CandidateCost best = free_margin.ranked.front();
  ASSERT_NE(best.choice->algorithm->name, "ring") << "ring over 64 ranks of 8-byte blocks should lose";
  EXPECT_EQ(free_margin.pick, best.choice);
  // The library runs ring; collshim's ring costs the same: it never beats native by any margin.
  for (const CandidateCost& cost : free_margin.ranked)
    if (cost.choice->algorithm->name == "ring") EXPECT_NEAR(cost.us, free_margin.native_us, 1e-9);
  const double lead = free_margin.native_us / best.us - 1;
  settings.margin = lead * 0.99;
  EXPECT_EQ(model_decision(settings, call, nodes_of(64, 8), c.pointers, &c.native).pick, best.choice);
  settings.margin = lead * 1.01;
  EXPECT_NE(model_decision(settings, call, nodes_of(64, 8), c.pointers, &c.native).pick, best.choice);
  settings.margin = 100;
  const ModelVerdict kept = model_decision(settings, call, nodes_of(64, 8), c.pointers, &c.native);
  EXPECT_EQ(kept.pick, &c.native);
  EXPECT_TRUE(kept.why_native.empty());
  EXPECT_NE(verdict_text(kept).find("native (its_ring)"), std::string::npos) << verdict_text(kept);
}

// Open MPI's basic linear Alltoallv posts in rank order: no rank symmetry, so each of its p² messages
// is costed. Beyond 2^19 of them (p > 724) a call with blocks of one size is costed as collshim's
// linear (the same messages from the next rank up, with a symmetry), marked approximated; the model
// costs the two orders nearly the same (here, with a last node of 5 ranks, 0.06% apart at p = 725).
TEST(ModelDecision, ARankOrderExchangeBeyondItsLimitCostsAsLinear) {
  const NativeDecision basic_linear{"basic_linear", Collective::alltoallv, std::string(ompi_linear_alltoallv_stand_in),
                                    ""};
  for (const int p : {724, 725}) {
    const std::vector<int> nodes = nodes_of(p, 8);
    const ModelCall call{Collective::alltoallv, p, 1024};
    const std::optional<CallPrediction> native = predict_library(two_level_platform(), call, nodes, basic_linear);
    ASSERT_TRUE(native);
    EXPECT_EQ(native->prediction.approximated, p > 724) << p;
    EXPECT_EQ(native->note.empty(), p <= 724) << native->note;
    CheckSetup setup = model_setup(call);
    setup.every_size_known = true;
    const Prediction exact =
        predict(two_level_platform(), setup, nodes, [p](int rank) { return ompi_linear_alltoallv_schedule(p, rank); });
    EXPECT_NEAR(native->prediction.us, exact.us, (p > 724 ? 1e-2 : 1e-9) * exact.us) << p;
  }
}

// Open MPI's pairwise Alltoallv posts every pair's message, empty or not (sends_empty_messages): on a
// sparse pattern it costs far more than the same exchange with the empty ones skipped, as collshim's
// engine skips them; where no block is empty, the two cost the same.
TEST(ModelDecision, ALibrarysEmptyMessagesAreCosted) {
  const int p = 16;
  ModelCall sparse{Collective::alltoallv, p, 64};
  sparse.pairs.sending.resize(static_cast<std::size_t>(p));
  for (int o = 0; o < p; ++o) sparse.pairs.sending[static_cast<std::size_t>(o)].emplace_back((o + 1) % p, 64);
  const ModelCall uniform{Collective::alltoallv, p, 64};
  NativeDecision skipping{"pairwise", Collective::alltoallv, "pairwise", ""}, sending = skipping;
  sending.sends_empty_messages = true;
  const auto us = [&](const ModelCall& call, const NativeDecision& decision) {
    const std::optional<CallPrediction> predicted =
        predict_library(two_level_platform(), call, nodes_of(p, 8), decision);
    EXPECT_TRUE(predicted);
    return predicted ? predicted->prediction.us : 0.0;
  };
  EXPECT_GT(us(sparse, sending), 2 * us(sparse, skipping));
  EXPECT_DOUBLE_EQ(us(uniform, sending), us(uniform, skipping));
}

TEST(ModelDecision, AnApproximatedPredictionMustBeatNativeByTwiceTheMargin) {
  Candidates c({"hierarchical"});  // inter=native: an opaque phase, costed approximately
  ModelSettings settings{two_level_platform(), "test.yaml", library_running_its("ring"), "test", 0.0};
  const ModelCall call{Collective::allgather, 64, 8};
  // Native costed whole (by default it is costed only as far as the pick needs), for the lead.
  const ModelVerdict verdict = model_decision(settings, call, nodes_of(64, 8), c.pointers, &c.native, true,
                                              std::numeric_limits<std::size_t>::max());
  ASSERT_FALSE(verdict.native_at_least);
  ASSERT_EQ(verdict.ranked.size(), 1u);
  ASSERT_TRUE(verdict.ranked[0].approximated);
  const double lead = verdict.native_us / verdict.ranked[0].us - 1;
  ASSERT_GT(lead, 0) << "hierarchical should beat ring here";
  settings.margin = lead / 2 * 0.99;
  EXPECT_EQ(model_decision(settings, call, nodes_of(64, 8), c.pointers, &c.native).pick, &c.owned[0]);
  settings.margin = lead / 2 * 1.01;  // an exact prediction with this lead would still win
  EXPECT_EQ(model_decision(settings, call, nodes_of(64, 8), c.pointers, &c.native).pick, &c.native);
}

// What a key tries after the verdict (plan_key), by COLLSHIM_TUNE, on a hand-made verdict over the
// selector's own candidates.
struct PlanFixture {
  std::vector<RuleDiagnostic> diagnostics;
  Selector selector;
  std::vector<const AlgorithmChoice*> candidates;
  explicit PlanFixture(const char* tune)
      : selector(read_environment([tune](const char* name) -> const char* {
                   if (std::string(name) == "COLLSHIM_TUNE") return tune;
                   if (std::string(name) == "COLLSHIM_PLATFORM") return "platform.yaml";
                   return nullptr;
                 }),
                 RuleTable{}, diagnostics),
        candidates(selector.tuning_candidates({Collective::allgather, 16, 64, MappingClass::sequential, 2, 8})) {}
  const AlgorithmChoice* candidate(const std::string& text) const {
    for (const AlgorithmChoice* c : candidates)
      if (c->text() == text) return c;
    ADD_FAILURE() << text << " is not a candidate";
    return selector.native_choice();
  }
  // ring 10 us, bruck 11 us, sparbit 12 us, recursive_doubling 13 us, neighbor_exchange 14 us,
  // recursive_multiplying 15 us; native 20 us (or not costed).
  ModelVerdict verdict(bool native_costed) const {
    ModelVerdict v;
    for (const auto& [text, us] : std::vector<std::pair<std::string, double>>{{"ring", 10},
                                                                              {"bruck", 11},
                                                                              {"sparbit", 12},
                                                                              {"recursive_doubling", 13},
                                                                              {"neighbor_exchange", 14},
                                                                              {"recursive_multiplying", 15}})
      v.ranked.push_back({candidate(text), us, false, 0});
    v.pick = native_costed ? v.ranked[0].choice : selector.native_choice();
    v.native_us = native_costed ? 20 : 0;
    if (!native_costed) v.why_native = "the library's choice is not modelled: test";
    return v;
  }
  std::vector<std::string> trial(const ModelVerdict& v, KeySource* source = nullptr) const {
    const KeyPlan plan = plan_key(selector, v, candidates);
    if (source) *source = plan.source;
    std::vector<std::string> texts;
    for (const AlgorithmChoice* c : plan.trial) texts.push_back(c->text());
    return texts;
  }
};

TEST(KeyPlan, ConfirmTriesNativeAndTheModelsThreeBest) {
  const PlanFixture f("confirm");
  ASSERT_TRUE(f.diagnostics.empty());
  KeySource source{};
  const std::vector<std::string> best3{"native", "ring", "bruck", "sparbit"};
  EXPECT_EQ(f.trial(f.verdict(true), &source), best3);
  EXPECT_EQ(source, KeySource::model_confirmed);
  // A pick after the fastest (the fastest did not beat native by its margin): the pick, then the fastest.
  ModelVerdict second = f.verdict(true);
  second.pick = second.ranked[1].choice;
  EXPECT_EQ(f.trial(second), (std::vector<std::string>{"native", "bruck", "ring", "sparbit"}));
  // The model keeps native: timed calls of native and its three best all the same (a native predicted
  // fast may be slow).
  ModelVerdict kept = f.verdict(true);
  kept.pick = f.selector.native_choice();
  EXPECT_EQ(f.trial(kept, &source), best3);
  EXPECT_EQ(source, KeySource::model_confirmed);
  // Native not costed: the pick is native, and timed calls of native and the best three decide.
  EXPECT_EQ(f.trial(f.verdict(false), &source), best3);
  EXPECT_EQ(source, KeySource::model_confirmed);
  // Nothing ranked (the model failed): native alone.
  ModelVerdict failed = f.verdict(false);
  failed.ranked.clear();
  EXPECT_EQ(f.trial(failed, &source), (std::vector<std::string>{"native"}));
  EXPECT_EQ(source, KeySource::model_not_costed);
}

TEST(KeyPlan, OffTrustsThePickAndNeverLeavesAnUncostedNative) {
  const PlanFixture f("off");
  KeySource source{};
  EXPECT_EQ(f.trial(f.verdict(true), &source), (std::vector<std::string>{"ring"}));
  EXPECT_EQ(source, KeySource::model);
  EXPECT_EQ(f.trial(f.verdict(false), &source), (std::vector<std::string>{"native"}));
  EXPECT_EQ(source, KeySource::model_not_costed);
}

TEST(KeyPlan, OnlineTriesNativeAndTheBestFiveOrEveryCandidateWithoutARanking) {
  const PlanFixture f("online");
  KeySource source{};
  const std::vector<std::string> best5{"native", "ring", "bruck", "sparbit", "recursive_doubling", "neighbor_exchange"};
  EXPECT_EQ(f.trial(f.verdict(true), &source), best5);
  EXPECT_EQ(source, KeySource::model_online);
  EXPECT_EQ(f.trial(f.verdict(false), &source), best5);
  EXPECT_EQ(source, KeySource::model_online);
  ModelVerdict failed = f.verdict(false);
  failed.ranked.clear();
  EXPECT_EQ(f.trial(failed, &source).size(), f.candidates.size());
  EXPECT_EQ(source, KeySource::online);
  EXPECT_EQ(candidates_to_rank(TuneMode::online), 5u);
  EXPECT_EQ(candidates_to_rank(TuneMode::confirm), 3u);
}

// Confirmation keeps the next of the ranking, beyond its trial, for a widened trial, with every trial
// candidate's prediction (native's only where costed exactly).
TEST(KeyPlan, ConfirmKeepsTheNextRankedForAWidenedTrial) {
  const PlanFixture f("confirm");
  const KeyPlan plan = plan_key(f.selector, f.verdict(true), f.candidates, 2);
  EXPECT_EQ(plan.predicted_us, (std::vector<double>{20, 10, 11, 12}));
  std::vector<std::string> next;
  for (const AlgorithmChoice* c : plan.widen_to) next.push_back(c->text());
  EXPECT_EQ(next, (std::vector<std::string>{"recursive_doubling", "neighbor_exchange"}));
  EXPECT_EQ(plan.widen_to_us, (std::vector<double>{13, 14}));
  // Native only bounded: no prediction to compare its time with.
  ModelVerdict bounded = f.verdict(true);
  bounded.native_at_least = true;
  EXPECT_EQ(plan_key(f.selector, bounded, f.candidates, 2).predicted_us, (std::vector<double>{0, 10, 11, 12}));
  // No widening asked, or not confirming: nothing kept.
  EXPECT_TRUE(plan_key(f.selector, f.verdict(true), f.candidates).widen_to.empty());
  const PlanFixture online("online");
  EXPECT_TRUE(plan_key(online.selector, online.verdict(true), online.candidates, 2).widen_to.empty());
  EXPECT_EQ(candidates_to_rank(TuneMode::confirm, 3), 6u);
  EXPECT_EQ(candidates_to_rank(TuneMode::online, 3), 5u);
}

// The disagreement rule: measured / predicted ratios further apart than the model's own error allows.
TEST(PredictionCheck, RatiosApartBeyondTheModelsErrorDisagree) {
  const PlanFixture f("confirm");
  const AlgorithmChoice &a = *f.candidate("ring"), &b = *f.candidate("bruck"), &c = *f.candidate("sparbit");
  using M = TuningSession::Measured;
  // A description off by a common factor (everything 3x slower than predicted): the ranking holds.
  const PredictionCheck scaled = check_predictions({M{&a, 30e-6, 4, false}, M{&b, 60e-6, 4, false}}, {10, 20});
  EXPECT_FALSE(scaled.disagrees);
  EXPECT_DOUBLE_EQ(scaled.lowest, 3.0);
  EXPECT_DOUBLE_EQ(scaled.highest, 3.0);
  // Within the model's error either way: 1.3x apart.
  EXPECT_FALSE(check_predictions({M{&a, 13e-6, 4, false}, M{&b, 20e-6, 4, false}}, {10, 20}).disagrees);
  // b predicted twice a's time and measured the same: 2x apart.
  const PredictionCheck apart = check_predictions({M{&a, 10e-6, 4, false}, M{&b, 10e-6, 4, false}}, {10, 20});
  EXPECT_TRUE(apart.disagrees);
  EXPECT_DOUBLE_EQ(apart.highest / apart.lowest, 2.0);
  EXPECT_GT(widen_ratio_spread, 1.3);
  EXPECT_LT(widen_ratio_spread, 2.0);
  // Candidates without an exact prediction, or never timed, are not compared: one ratio is no spread.
  EXPECT_FALSE(
      check_predictions({M{&a, 10e-6, 4, false}, M{&b, 100e-6, 4, false}, M{&c, 0, 0, false}}, {0, 20, 5}).disagrees);
}

}  // namespace
}  // namespace collshim::model
