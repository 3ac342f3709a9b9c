#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <set>
#include <utility>

#include "algorithms/engine/algorithm_spec.hpp"
#include "algorithms/engine/registry.hpp"
#include "algorithms/engine/schedule_check.hpp"
#include "model/cost/call_prediction.hpp"
#include "selector/tuning_candidates.hpp"

namespace collshim {
namespace {

bool contains(const std::vector<std::string>& specs, const std::string& spec) {
  return std::find(specs.begin(), specs.end(), spec) != specs.end();
}

TEST(TuningCandidates, AllgatherSweepsTheVariantsThatChangeTraffic) {
  const auto specs = tuning_candidates(Collective::allgather);
  ASSERT_FALSE(specs.empty());
  EXPECT_EQ(specs.front(), "native");
  for (const char* spec :
       {"bruck", "bruck:radix=4", "bruck:radix=8", "recursive_multiplying:k=2", "recursive_multiplying",
        "recursive_multiplying:k=8", "sparbit", "sparbit:coalesce=1", "ring", "neighbor_exchange", "recursive_doubling",
        "hierarchical", "hierarchical:intra=shm", "hierarchical:inter=bruck", "hierarchical:inter=sparbit,intra=shm"})
    EXPECT_TRUE(contains(specs, spec)) << spec;
  EXPECT_FALSE(contains(specs, "bruck:radix=16"));  // only the swept values
}

TEST(TuningCandidates, AlltoallvSweepsGridShapes) {
  const auto specs = tuning_candidates(Collective::alltoallv);
  for (const char* spec : {"native", "linear", "pairwise", "grid", "grid:dims=3", "grid:dims=hypercube", "node_grid",
                           "node_grid:dims=2", "node_grid:dims=3", "node_grid:dims=hypercube"})
    EXPECT_TRUE(contains(specs, spec)) << spec;
  EXPECT_FALSE(contains(specs, "grid:dims=1"));  // node_grid's direct shape is not a flat grid
  EXPECT_FALSE(contains(specs, "bruck"));        // not an Alltoallv algorithm
}

TEST(TuningCandidates, EveryCandidateIsCanonicalAndUnique) {
  for (const CollectiveInfo& info : collectives) {
    const auto specs = tuning_candidates(info.collective);
    EXPECT_EQ(std::set<std::string>(specs.begin(), specs.end()).size(), specs.size()) << info.name;
    // Every algorithm of the collective is among them.
    for (const Algorithm& algorithm : algorithms()) {
      if (algorithm.supports(info.collective) && (algorithm.runs_schedules() || algorithm.passes_through))
        EXPECT_TRUE(std::any_of(specs.begin(), specs.end(),
                                [&](const std::string& s) { return s.rfind(algorithm.name, 0) == 0; }))
            << info.name << " lacks " << algorithm.name;
    }
    for (const std::string& spec : specs) {
      const SpecParseResult parsed = parse_algorithm_spec(spec, info.collective);
      ASSERT_TRUE(parsed.choice) << spec << ": " << parsed.error;
      EXPECT_EQ(parsed.choice->text(), spec);
    }
  }
}

// A rank's messages, step by step (steps without any left out): sends as (peer, bytes on the wire),
// receives as (-1 - peer, bytes).
using RankMessages = std::vector<std::vector<std::pair<int, long long>>>;
RankMessages messages_of(const CheckSetup& setup, const Schedule& schedule, int rank) {
  RankMessages steps;
  for (const Step& step : schedule.steps) {
    std::vector<std::pair<int, long long>> messages;
    for (const Transfer& send : step.sends) {
      const WireMessage wire = wire_message(setup, rank, send.region, send.peer);
      if (!wire.skipped) messages.emplace_back(send.peer, wire.bytes);
    }
    for (const Transfer& recv : step.recvs) {
      const WireMessage wire = wire_message(setup, rank, recv.region, rank);
      if (!wire.skipped) messages.emplace_back(-1 - recv.peer, wire.bytes);
    }
    if (!messages.empty()) steps.push_back(std::move(messages));
  }
  return steps;
}

// Where every node holds one rank the selector leaves a node-aware candidate out for the flat one it
// declares it runs as (Algorithm::one_rank_per_node_runs_as). That holds only if the two send the
// same messages in the same order on every rank: checked here, and that the flat one is a candidate.
TEST(TuningCandidates, NodeAwareCandidatesSendWhatTheirFlatTwinSendsWithOneRankPerNode) {
  int twins = 0;
  for (const Collective collective : {Collective::allgather, Collective::allgatherv, Collective::allreduce,
                                      Collective::alltoall, Collective::alltoallv}) {
    const auto specs = tuning_candidates(collective);
    for (const std::string& spec : specs) {
      const AlgorithmChoice choice = *parse_algorithm_spec(spec, collective).choice;
      const auto& runs_as = choice.algorithm->one_rank_per_node_runs_as;
      const std::string twin_text = runs_as ? runs_as(choice.params) : "";
      if (twin_text.empty()) continue;
      const SpecParseResult twin = parse_algorithm_spec(twin_text, collective);
      ASSERT_TRUE(twin.choice) << spec << " runs as " << twin_text << ": " << twin.error;
      EXPECT_TRUE(contains(specs, twin.choice->text())) << spec << " runs as " << twin_text << ", not a candidate";
      ++twins;
      for (int p = 2; p <= 40; p += (p < 20 ? 1 : 7)) {
        // Where the flat one is not eligible the selector keeps both (and `inter` runs its fallback).
        if (twin.choice->algorithm->eligible && !twin.choice->algorithm->eligible(p, twin.choice->params)) continue;
        std::vector<int> one_per_node(static_cast<std::size_t>(p));
        std::iota(one_per_node.begin(), one_per_node.end(), 0);
        const CheckSetup setup = model::model_setup({collective, p, 24LL * p});
        for (int rank = 0; rank < p; ++rank) {
          ASSERT_EQ(messages_of(setup, generate_schedule(choice, one_per_node, rank), rank),
                    messages_of(setup, generate_schedule(*twin.choice, one_per_node, rank), rank))
              << collective_name(collective) << " " << spec << " against " << twin_text << ", p=" << p << ", rank "
              << rank;
        }
      }
    }
  }
  EXPECT_GE(twins, 20);  // hierarchical's inter and intra forms, node_grid's shapes
}

}  // namespace
}  // namespace collshim
