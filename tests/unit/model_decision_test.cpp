// The cost model as a decision (model_decision.hpp): the margin a candidate must beat native by
// (twice it for a prediction with an opaque phase), and native wherever the library's own choice
// cannot be costed.
#include <gtest/gtest.h>

#include <limits>

#include "algorithms/engine/algorithm_spec.hpp"
#include "model/model_decision.hpp"

namespace collshim::model {
namespace {

Platform two_level_platform() {
  Platform platform;
  platform.name = "test";
  platform.shm.overhead_us = 0.5;
  platform.shm.transfer = {{1, 0.2, 10.0}};
  platform.net.overhead_us = 1.5;
  platform.net.transfer = {{1, 3.0, 5.0}};
  return platform;
}

// A library that runs `stand_in` (a collshim Allgather spec) for every Allgather.
LibraryDecision runs(const std::string& stand_in) {
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

TEST(ModelDecision, AnUnknownLibraryOrANativeChoiceWithoutStandInStaysNative) {
  Candidates c({"ring", "bruck"});
  ModelSettings settings{two_level_platform(), "test.yaml", {}, "MyMPI 1.0: no decisions of this library are known"};
  const ModelCall call{Collective::allgather, 32, 8};
  const ModelVerdict unknown = model_decision(settings, call, nodes_of(32, 8), c.pointers, &c.native);
  EXPECT_EQ(unknown.pick, &c.native);
  EXPECT_TRUE(unknown.ranked.empty());
  EXPECT_NE(unknown.why_native.find("MyMPI 1.0"), std::string::npos) << unknown.why_native;
  settings.library = [](Collective collective, const LibraryFacts&) {
    return NativeDecision{"two_level", collective, "", "no stand-in for its two-level algorithm"};
  };
  const ModelVerdict not_modelled = model_decision(settings, call, nodes_of(32, 8), c.pointers, &c.native);
  EXPECT_EQ(not_modelled.pick, &c.native);
  EXPECT_NE(not_modelled.why_native.find("no stand-in for its two-level algorithm"), std::string::npos);
}

TEST(ModelDecision, TheFastestCandidateWinsOnlyByTheMargin) {
  Candidates c({"ring", "bruck", "sparbit"});
  ModelSettings settings{two_level_platform(), "test.yaml", runs("ring"), "test", 0.0};
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

TEST(ModelDecision, AnApproximatedPredictionMustBeatNativeByTwiceTheMargin) {
  Candidates c({"hierarchical"});  // inter=native: an opaque phase, costed approximately
  ModelSettings settings{two_level_platform(), "test.yaml", runs("ring"), "test", 0.0};
  const ModelCall call{Collective::allgather, 64, 8};
  const ModelVerdict verdict = model_decision(settings, call, nodes_of(64, 8), c.pointers, &c.native);
  ASSERT_EQ(verdict.ranked.size(), 1u);
  ASSERT_TRUE(verdict.ranked[0].approximated);
  const double lead = verdict.native_us / verdict.ranked[0].us - 1;
  ASSERT_GT(lead, 0) << "hierarchical should beat ring here";
  settings.margin = lead / 2 * 0.99;
  EXPECT_EQ(model_decision(settings, call, nodes_of(64, 8), c.pointers, &c.native).pick, &c.owned[0]);
  settings.margin = lead / 2 * 1.01;  // an exact prediction with this lead would still win
  EXPECT_EQ(model_decision(settings, call, nodes_of(64, 8), c.pointers, &c.native).pick, &c.native);
}

}  // namespace
}  // namespace collshim::model
