#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "algorithms/engine/algorithm_spec.hpp"
#include "algorithms/engine/registry.hpp"
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

}  // namespace
}  // namespace collshim
