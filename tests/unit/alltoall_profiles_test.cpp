// Alltoall(v) profiles from counts (alltoall_profiles.hpp) against the model's profiles of the real
// schedules (rank_profile), rank by rank, item by item: every p from 1 to 130, every shape, blocks of
// one size (some bytes, none) and irregular ones (a sparse pattern of different sizes, a hot spot).
#include <gtest/gtest.h>

#include <bit>
#include <map>

#include "algorithms/engine/algorithm_spec.hpp"
#include "algorithms/engine/registry.hpp"
#include "model/cost/alltoall_profiles.hpp"
#include "model/library/library_alltoall.hpp"
#include "node_maps.hpp"

namespace collshim::model {
namespace {

AlgorithmChoice alltoall_choice(const std::string& spec) {
  const SpecParseResult parsed = parse_algorithm_spec(spec, Collective::alltoallv);
  EXPECT_TRUE(parsed.choice) << parsed.error;
  return *parsed.choice;
}

AlltoallBlocks every_pair(long long bytes) { return {bytes, {}}; }

// About one pair in five sends, 1-9 bytes, the own block among them for some ranks.
AlltoallBlocks sparse(int p) {
  AlltoallBlocks blocks;
  blocks.sending.resize(static_cast<std::size_t>(p));
  for (int o = 0; o < p; ++o)
    for (int d = 0; d < p; ++d)
      if ((o * 7 + d * 3) % 5 == 0) blocks.sending[o].emplace_back(d, 1 + (o + 2 * d) % 9);
  return blocks;
}

// Everyone to rank 0 (its own block too), 8 bytes.
AlltoallBlocks hot_spot(int p) {
  AlltoallBlocks blocks;
  blocks.sending.resize(static_cast<std::size_t>(p));
  for (int o = 0; o < p; ++o) blocks.sending[o].emplace_back(0, 8);
  return blocks;
}

// The first rank whose counted profile differs from its schedule's; -1 if none; -2 if no counted form.
int first_difference(const AlgorithmChoice& choice, const std::vector<int>& node_of_rank,
                     const AlltoallBlocks& blocks) {
  const int p = static_cast<int>(node_of_rank.size());
  const std::vector<RankProfile> counted = counted_alltoall_profiles(choice, node_of_rank, blocks);
  if (counted.empty()) return -2;
  const CheckSetup call{BlockNaming::alltoall, p, [&](std::int64_t datum) {
                          return blocks.bytes(static_cast<int>(datum / p), static_cast<int>(datum % p));
                        }};
  for (int rank = 0; rank < p; ++rank)
    if (counted[static_cast<std::size_t>(rank)] !=
        rank_profile(call, rank, generate_schedule(choice, node_of_rank, rank)))
      return rank;
  return -1;
}

TEST(AlltoallProfiles, GridCountsEqualItsSchedules) {
  for (const std::string spec : {"grid", "grid:dims=3", "grid:dims=4", "grid:dims=hypercube"}) {
    const AlgorithmChoice choice = alltoall_choice(spec);
    for (int p = 1; p <= 130; ++p) {
      const std::vector<int> one_node(static_cast<std::size_t>(p), 0);
      for (const AlltoallBlocks& blocks : {every_pair(24), every_pair(0), sparse(p), hot_spot(p)})
        EXPECT_EQ(first_difference(choice, one_node, blocks), -1)
            << spec << ", p = " << p
            << (blocks.uniform() ? ", one size " + std::to_string(blocks.every_pair_bytes) : ", irregular");
    }
  }
}

TEST(AlltoallProfiles, NodeGridCountsEqualItsSchedulesOnEvenNodes) {
  int compared = 0;
  for (const std::string spec : {"node_grid", "node_grid:dims=2", "node_grid:dims=3", "node_grid:dims=hypercube"}) {
    const AlgorithmChoice choice = alltoall_choice(spec);
    for (int p = 1; p <= 130; ++p) {
      for (const test::NodeMap& map : test::node_maps(p)) {
        std::map<int, int> ranks_on;
        for (const int node : map.node_of_rank) ++ranks_on[node];
        const bool even = std::all_of(ranks_on.begin(), ranks_on.end(),
                                      [&](const auto& entry) { return entry.second == ranks_on.begin()->second; });
        // Sizes in turn, so that every kind meets every map and shape.
        const AlltoallBlocks blocks = p % 3 == 0 ? every_pair(24) : p % 3 == 1 ? sparse(p) : every_pair(0);
        const int difference = first_difference(choice, map.node_of_rank, blocks);
        if (!even) {
          EXPECT_EQ(difference, -2) << spec << ", p = " << p << ", " << map.name
                                    << ": uneven nodes have no counted form";
          continue;
        }
        ++compared;
        EXPECT_EQ(difference, -1) << spec << ", p = " << p << ", " << map.name;
      }
    }
  }
  EXPECT_GT(compared, 1000);
}

TEST(AlltoallProfiles, DirectAlgorithmsFromTheNonEmptyBlocks) {
  for (const std::string spec : {"linear", "pairwise"}) {
    const AlgorithmChoice choice = alltoall_choice(spec);
    for (int p = 1; p <= 130; ++p) {
      const std::vector<int> one_node(static_cast<std::size_t>(p), 0);
      for (const AlltoallBlocks& blocks : {sparse(p), hot_spot(p)})
        EXPECT_EQ(first_difference(choice, one_node, blocks), -1) << spec << ", p = " << p;
      // Blocks of one size: their rank symmetry serves.
      EXPECT_EQ(first_difference(choice, one_node, every_pair(8)), -2) << spec;
    }
  }
}

// The direct exchanges that stand for a library's code (native_decision.cpp), every rank's profile
// from counts, uniform blocks included: Open MPI's Alltoallv basic linear in rank order, collshim's
// pairwise posting empty messages too, as Open MPI's pairwise Alltoallv does, and MPICH's scattered
// exchange in rounds of 4 (SMPI's) and 32 pairs, the XOR exchange at powers of two.
TEST(AlltoallProfiles, LibraryDirectExchangesEqualTheirSchedules) {
  const AlgorithmChoice pairwise = alltoall_choice("pairwise"), linear = alltoall_choice("linear");
  for (int p = 1; p <= 130; ++p) {
    const std::vector<int> one_node(static_cast<std::size_t>(p), 0);
    for (const AlltoallBlocks& blocks : {sparse(p), hot_spot(p), every_pair(8), every_pair(0)}) {
      for (const bool empty : {false, true}) {
        CheckSetup call{BlockNaming::alltoall, p, [&](std::int64_t datum) {
                          return blocks.bytes(static_cast<int>(datum / p), static_cast<int>(datum % p));
                        }};
        call.sends_empty_messages = empty;
        const std::vector<RankProfile> in_rank_order =
                                           direct_alltoall_profiles(DirectOrder::rank_order, p, blocks, empty),
                                       shifted = direct_alltoall_profiles(DirectOrder::pairwise, p, blocks, empty),
                                       from_next =
                                           direct_alltoall_profiles(DirectOrder::from_next_rank, p, blocks, empty),
                                       by_4 = direct_alltoall_profiles(DirectOrder::scattered, p, blocks, empty,
                                                                       scatter_dest_throttle),
                                       by_32 = direct_alltoall_profiles(DirectOrder::scattered, p, blocks, empty,
                                                                        mpich_alltoall_throttle);
        for (int rank = 0; rank < p; ++rank) {
          const std::string where = "p = " + std::to_string(p) + ", rank " + std::to_string(rank) +
                                    (empty ? ", empty messages sent" : "") +
                                    (blocks.uniform() ? ", every pair " + std::to_string(blocks.every_pair_bytes) : "");
          ASSERT_EQ(in_rank_order[static_cast<std::size_t>(rank)],
                    rank_profile(call, rank, ompi_linear_alltoallv_schedule(p, rank)))
              << where;
          ASSERT_EQ(shifted[static_cast<std::size_t>(rank)],
                    rank_profile(call, rank, generate_schedule(pairwise, one_node, rank)))
              << where;
          ASSERT_EQ(from_next[static_cast<std::size_t>(rank)],
                    rank_profile(call, rank, generate_schedule(linear, one_node, rank)))
              << where;
          ASSERT_EQ(by_4[static_cast<std::size_t>(rank)],
                    rank_profile(call, rank, scatter_dest_alltoall_schedule(p, rank)))
              << where;
          ASSERT_EQ(by_32[static_cast<std::size_t>(rank)],
                    rank_profile(call, rank, mpich_scattered_alltoall_schedule(p, rank)))
              << where;
          if (std::has_single_bit(static_cast<unsigned>(p)))
            ASSERT_EQ(
                direct_alltoall_profiles(DirectOrder::exclusive_or, p, blocks, empty)[static_cast<std::size_t>(rank)],
                rank_profile(call, rank, xor_pairwise_alltoall_schedule(p, rank)))
                << where;
        }
      }
    }
  }
  // An empty block is a message of its own only where the library sends empty messages.
  const AlltoallBlocks one_pair{0, {{{1, 8}}, {}, {}, {}}};
  EXPECT_EQ(direct_alltoall_profiles(DirectOrder::pairwise, 4, one_pair, false)[0].items.size(), 1u);
  EXPECT_EQ(direct_alltoall_profiles(DirectOrder::pairwise, 4, one_pair, true)[0].items.size(), 3u);
  EXPECT_EQ(direct_alltoall_profiles(DirectOrder::pairwise, 4, one_pair, true)[1].items.size(), 3u);
}

// Some ranks' profiles (the representatives a rank symmetry leaves): theirs are every rank's; the
// others are left out, except a forwarding's over irregular blocks (each block is routed through all).
TEST(AlltoallProfiles, SomeRanksProfilesAreThoseOfEveryRank) {
  for (const std::string spec : {"grid", "grid:dims=3", "node_grid", "node_grid:dims=2", "linear"}) {
    const AlgorithmChoice choice = alltoall_choice(spec);
    for (const int p : {12, 48, 96, 128}) {
      for (const std::vector<int>& nodes : {test::sequential(p, 4), test::round_robin(p, 3)}) {
        std::vector<int> some;
        for (int rank = 1; rank < p; rank += 5) some.push_back(rank);
        for (const AlltoallBlocks& blocks : {every_pair(24), sparse(p)}) {
          const std::string what = spec + ", p = " + std::to_string(p) + (blocks.uniform() ? ", one size" : ", sparse");
          const std::vector<RankProfile> every = counted_alltoall_profiles(choice, nodes, blocks);
          const std::vector<RankProfile> wanted = counted_alltoall_profiles(choice, nodes, blocks, false, some);
          if (every.empty()) {
            EXPECT_TRUE(wanted.empty()) << what;
            continue;
          }
          ASSERT_EQ(wanted.size(), every.size()) << what;
          for (int rank = 0; rank < p; ++rank) {
            const bool asked = std::find(some.begin(), some.end(), rank) != some.end();
            // A direct exchange's ranks are listed one by one, whatever the blocks.
            if (asked || (!blocks.uniform() && spec != "linear"))
              EXPECT_EQ(wanted[rank], every[rank]) << what << ", rank " << rank;
            else
              EXPECT_TRUE(wanted[rank].items.empty()) << what << ", rank " << rank << " was not asked for";
          }
        }
      }
    }
  }
}

TEST(AlltoallProfiles, OtherAlgorithmsHaveNoCountedForm) {
  const SpecParseResult bruck = parse_algorithm_spec("bruck", Collective::alltoall);
  ASSERT_TRUE(bruck.choice);
  EXPECT_TRUE(counted_alltoall_profiles(*bruck.choice, std::vector<int>(8, 0), every_pair(8)).empty());
}

}  // namespace
}  // namespace collshim::model
