// The forwarding Alltoalls' profiles from counts (forwarding_profiles.hpp) against the model's
// profiles of their real schedules (rank_profile of grid and node_grid), rank by rank, item by item:
// every p from 1 to 130, every shape, blocks of some bytes and of none (the skipped empty messages).
#include <gtest/gtest.h>

#include "algorithms/algorithm_spec.hpp"
#include "model/forwarding_profiles.hpp"
#include "node_maps.hpp"

namespace collshim::model {
namespace {

AlgorithmChoice alltoall_choice(const std::string& spec) {
  const SpecParseResult parsed = parse_algorithm_spec(spec, Collective::alltoall);
  EXPECT_TRUE(parsed.choice) << parsed.error;
  return *parsed.choice;
}

// The first rank whose counted profile differs from its schedule's, or -1.
int first_difference(const AlgorithmChoice& choice, const std::vector<int>& node_of_rank, long long bytes) {
  const int p = static_cast<int>(node_of_rank.size());
  const std::vector<RankProfile> counted = counted_alltoall_profiles(choice, node_of_rank, bytes);
  if (counted.empty()) return -2;
  const CheckSetup call = uniform_setup(BlockNaming::alltoall, p, bytes);
  for (int rank = 0; rank < p; ++rank)
    if (counted[static_cast<std::size_t>(rank)] != rank_profile(call, rank, generate_schedule(choice, node_of_rank, rank))) return rank;
  return -1;
}

TEST(ForwardingProfiles, GridCountsEqualItsSchedules) {
  for (const std::string spec : {"grid", "grid:dims=3", "grid:dims=4", "grid:dims=hypercube"}) {
    const AlgorithmChoice choice = alltoall_choice(spec);
    for (int p = 1; p <= 130; ++p) {
      for (const long long bytes : {24LL, 0LL}) {
        EXPECT_EQ(first_difference(choice, std::vector<int>(static_cast<std::size_t>(p), 0), bytes), -1)
            << spec << ", p = " << p << ", " << bytes << " B per block";
      }
    }
  }
}

TEST(ForwardingProfiles, NodeGridCountsEqualItsSchedulesOnEvenNodes) {
  int compared = 0;
  for (const std::string spec : {"node_grid", "node_grid:dims=2", "node_grid:dims=3", "node_grid:dims=hypercube"}) {
    const AlgorithmChoice choice = alltoall_choice(spec);
    for (int p = 1; p <= 130; ++p) {
      for (const test::NodeMap& map : test::node_maps(p)) {
        std::map<int, int> ranks_on;
        for (const int node : map.node_of_rank) ++ranks_on[node];
        const bool even = std::all_of(ranks_on.begin(), ranks_on.end(),
                                      [&](const auto& entry) { return entry.second == ranks_on.begin()->second; });
        const long long bytes = p % 2 == 0 ? 24 : 0;
        const int difference = first_difference(choice, map.node_of_rank, bytes);
        if (!even) {
          EXPECT_EQ(difference, -2) << spec << ", p = " << p << ", " << map.name << ": uneven nodes have no counted form";
          continue;
        }
        ++compared;
        EXPECT_EQ(difference, -1) << spec << ", p = " << p << ", " << map.name << ", " << bytes << " B per block";
      }
    }
  }
  EXPECT_GT(compared, 1000);
}

TEST(ForwardingProfiles, OtherAlgorithmsHaveNoCountedForm) {
  EXPECT_TRUE(counted_alltoall_profiles(alltoall_choice("bruck"), std::vector<int>(8, 0), 8).empty());
  EXPECT_TRUE(counted_alltoall_profiles(alltoall_choice("pairwise"), std::vector<int>(8, 0), 8).empty());
}

}  // namespace
}  // namespace collshim::model
