// The hierarchical schedule, for every p from 1 to 130, every inter-node algorithm and node maps of
// every shape (one node, one rank per node, sequential, cyclic, irregular, uneven): a correct
// allgather in the simulation, inter-node traffic only between leaders and exactly the flat
// algorithm's messages at the node count, and the step count the design gives.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "algorithms/engine/algorithm_spec.hpp"
#include "algorithms/allgather/allgather_hierarchical.hpp"
#include "algorithms/engine/schedule_check.hpp"
#include "algorithms/node/node_layout.hpp"
#include "node_maps.hpp"
#include "process_counts.hpp"

namespace collshim {
namespace {

using test::NodeMap;
using test::node_maps;

using test::max_procs;

AlgorithmChoice hierarchical(const std::string& inter) {
  SpecParseResult parsed = parse_algorithm_spec("hierarchical:inter=" + inter, Collective::allgatherv);
  EXPECT_TRUE(parsed.choice) << parsed.error;
  return *parsed.choice;
}

std::vector<std::string> inter_algorithms() {
  std::vector<std::string> names;
  for (const Algorithm& algorithm : algorithms()) {
    if (algorithm.make_block_schedule && algorithm.supports(Collective::allgatherv)) names.emplace_back(algorithm.name);
  }
  return names;
}

int ceil_log2(int n) {
  int steps = 0;
  while ((1 << steps) < n) ++steps;
  return steps;
}

TEST(NodeLayout, LeadersAreTheLowestRankOfEachNodeAndNodesNumberByFirstAppearance) {
  const NodeLayout layout = make_node_layout({9, 4, 9, 4, 2});
  ASSERT_EQ(layout.members.size(), 3u);
  EXPECT_EQ(layout.members[0], (std::vector<int>{0, 2}));
  EXPECT_EQ(layout.members[1], (std::vector<int>{1, 3}));
  EXPECT_EQ(layout.members[2], (std::vector<int>{4}));
  EXPECT_EQ(layout.node_of_rank, (std::vector<int>{0, 1, 0, 1, 2}));
  EXPECT_EQ(layout.local_index, (std::vector<int>{0, 0, 1, 1, 0}));
  EXPECT_EQ(layout.ranks_in_node_order, (std::vector<int>{0, 2, 1, 3, 4}));
}

TEST(Hierarchical, EveryRankGetsEveryBlockOnceAndOnlyLeadersCrossNodes) {
  for (const std::string& inter : inter_algorithms()) {
    const AlgorithmChoice choice = hierarchical(inter);
    for (int p = 1; p <= max_procs; ++p) {
      for (const NodeMap& map : node_maps(p)) {
        const std::string where = "inter=" + inter + " p=" + std::to_string(p) + " " + map.name;
        std::vector<BlockSchedule> schedules;
        const CheckResult result = check_block_schedules(p, [&](int rank) {
          schedules.push_back(hierarchical_block_schedule(map.node_of_rank, rank, choice.params));
          return schedules.back();
        });
        ASSERT_TRUE(result.ok()) << where << ": " << result.errors.front();

        const NodeLayout layout = make_node_layout(map.node_of_rank);
        const int nodes = static_cast<int>(layout.members.size());
        const AlgorithmChoice flat = hierarchical_inter_choice(choice.params, nodes);
        int largest_node = 0;
        for (const auto& members : layout.members) largest_node = std::max(largest_node, int(members.size()));
        const int flat_steps =
            nodes > 1 ? static_cast<int>(flat.algorithm->make_block_schedule(nodes, 0, flat.params).steps.size()) : 0;
        ASSERT_EQ(result.stats.steps, hierarchical_gather_steps + flat_steps + ceil_log2(largest_node)) << where;

        for (int rank = 0; rank < p; ++rank) {
          const int node = layout.node_of_rank[rank];
          long crossing = 0;
          for (const BlockStep& step : schedules[rank].steps) {
            for (const BlockTransfer& send : step.sends) crossing += layout.node_of_rank[send.peer] != node;
          }
          long flat_messages = 0;
          if (layout.local_index[rank] == 0 && nodes > 1) {
            for (const BlockStep& step : flat.algorithm->make_block_schedule(nodes, node, flat.params).steps)
              flat_messages += static_cast<long>(step.sends.size());
          }
          ASSERT_EQ(crossing, flat_messages) << where << " rank " << rank;
        }
      }
    }
  }
}

// With inter=native the leaders' phase runs in the MPI library; the schedule is the intra phases of
// any schedule-based variant, which the test above checks, with no step of its own in between.
TEST(Hierarchical, NativeInterKeepsOnlyTheIntraPhases) {
  const AlgorithmChoice native = hierarchical("native");
  const AlgorithmChoice ring = hierarchical("ring");
  for (int p = 1; p <= max_procs; ++p) {
    for (const NodeMap& map : node_maps(p)) {
      const int nodes = static_cast<int>(make_node_layout(map.node_of_rank).members.size());
      const int ring_steps = nodes > 1 ? nodes - 1 : 0;
      for (int rank = 0; rank < p; ++rank) {
        const BlockSchedule intra = hierarchical_block_schedule(map.node_of_rank, rank, native.params);
        const BlockSchedule full = hierarchical_block_schedule(map.node_of_rank, rank, ring.params);
        ASSERT_EQ(intra.steps.size() + ring_steps, full.steps.size()) << map.name << " p=" << p;
        for (std::size_t s = 0; s < intra.steps.size(); ++s) {
          const std::size_t in_full = s < hierarchical_gather_steps ? s : s + ring_steps;
          const auto same = [](const std::vector<BlockTransfer>& a, const std::vector<BlockTransfer>& b) {
            return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                              [](const BlockTransfer& x, const BlockTransfer& y) {
                                return x.peer == y.peer && x.blocks == y.blocks;
                              });
          };
          ASSERT_TRUE(same(intra.steps[s].sends, full.steps[in_full].sends)) << map.name << " p=" << p;
          ASSERT_TRUE(same(intra.steps[s].recvs, full.steps[in_full].recvs)) << map.name << " p=" << p;
        }
      }
    }
  }
}

// Every variant in the form the engine runs: the opaque phases (the leaders' MPI_Allgatherv, the
// shared-memory window) are checked through the transfers that model them.
TEST(Hierarchical, EveryVariantIsACorrectAllgatherInItsCommonForm) {
  for (const std::string spec : {"inter=native", "inter=native,intra=shm", "inter=bruck,intra=shm", "inter=sparbit",
                                 "inter=recursive_doubling,intra=shm"}) {
    const SpecParseResult parsed = parse_algorithm_spec("hierarchical:" + spec, Collective::allgatherv);
    ASSERT_TRUE(parsed.choice) << parsed.error;
    for (int p = 1; p <= max_procs; ++p) {
      for (const NodeMap& map : node_maps(p)) {
        const CheckResult result = check_schedules({BlockNaming::allgather, p, {}}, [&](int rank) {
          return generate_schedule(*parsed.choice, map.node_of_rank, rank);
        });
        ASSERT_TRUE(result.ok()) << spec << " p=" << p << " " << map.name << ": " << result.errors.front();
      }
    }
  }
}

TEST(Hierarchical, InterFollowsTheFlatAlgorithmsFallbackAtTheNodeCount) {
  const AlgorithmChoice choice = hierarchical("recursive_doubling");
  EXPECT_EQ(hierarchical_inter_choice(choice.params, 4).algorithm->name, "recursive_doubling");
  EXPECT_EQ(hierarchical_inter_choice(choice.params, 3).algorithm->name, "bruck");
  EXPECT_EQ(hierarchical_inter_choice(hierarchical("neighbor_exchange").params, 5).algorithm->name, "ring");
}

TEST(Hierarchical, ParametersNameWhatIsAccepted) {
  for (const std::string bad : {"hierarchical", "grid", "linear", "bogus"}) {
    const SpecParseResult parsed = parse_algorithm_spec("hierarchical:inter=" + bad, Collective::allgather);
    ASSERT_FALSE(parsed.choice) << bad;
    EXPECT_NE(parsed.error.find("bad value '" + bad + "' for hierarchical parameter 'inter'"), std::string::npos)
        << parsed.error;
    const auto list = parsed.error.find("expected one of: ");
    ASSERT_NE(list, std::string::npos) << parsed.error;
    const std::string names = parsed.error.substr(list);
    // Whole names, split at the separators: no rule on what an algorithm may be called.
    std::vector<std::string> listed;
    for (std::size_t at = std::string("expected one of: ").size(); at < names.size();) {
      std::size_t end = names.find_first_of(",;)\n", at);
      if (end == std::string::npos) end = names.size();
      std::string name = names.substr(at, end - at);
      name.erase(0, name.find_first_not_of(" "));
      if (name.rfind("or ", 0) == 0) name.erase(0, 3);
      if (!name.empty()) listed.push_back(name);
      at = end + 1;
    }
    // The list is exactly what `inter` accepts, from the whole registry wherever it is registered:
    // every allgather algorithm that runs as a flat schedule, and native; no node-aware or other
    // collective's algorithm.
    std::vector<std::string> accepted;
    for (const Algorithm& algorithm : algorithms()) {
      const std::string name(algorithm.name);
      if (parse_algorithm_spec("hierarchical:inter=" + name, Collective::allgather).choice &&
          std::find(accepted.begin(), accepted.end(), name) == accepted.end())
        accepted.push_back(name);
      if (algorithm.supports(Collective::allgather) && algorithm.make_block_schedule)
        EXPECT_NE(std::find(listed.begin(), listed.end(), name), listed.end()) << name << ": " << parsed.error;
    }
    EXPECT_EQ(listed, accepted) << parsed.error;
    for (const char* excluded : {"grid", "linear", "hierarchical", "binomial"})
      EXPECT_EQ(std::find(listed.begin(), listed.end(), excluded), listed.end()) << parsed.error;
  }
  const SpecParseResult intra = parse_algorithm_spec("hierarchical:intra=carrier_pigeon", Collective::allgatherv);
  ASSERT_FALSE(intra.choice);
  EXPECT_NE(intra.error.find("'intra'"), std::string::npos) << intra.error;
  EXPECT_FALSE(parse_algorithm_spec("hierarchical", Collective::alltoallv).choice);
  EXPECT_EQ(parse_algorithm_spec("hierarchical:inter=sparbit", Collective::allgather).choice->text(),
            "hierarchical:inter=sparbit");
  EXPECT_EQ(parse_algorithm_spec("hierarchical:intra=shm,inter=bruck", Collective::allgather).choice->text(),
            "hierarchical:inter=bruck,intra=shm");
  EXPECT_EQ(parse_algorithm_spec("hierarchical:intra=p2p", Collective::allgather).choice->text(), "hierarchical");
}

// Allreduce's hierarchical: for every p to 130 and every node map, every rank ends with every
// segment combining all p contributions once; where each node is one run of consecutive ranks the
// combination is in rank order (the checker's ordered model), and only leaders talk across nodes.
bool nodes_are_consecutive(const std::vector<int>& node_of_rank) {
  std::vector<int> seen;
  for (std::size_t r = 0; r < node_of_rank.size(); ++r) {
    if (r > 0 && node_of_rank[r] == node_of_rank[r - 1]) continue;
    if (std::find(seen.begin(), seen.end(), node_of_rank[r]) != seen.end()) return false;
    seen.push_back(node_of_rank[r]);
  }
  return true;
}

TEST(HierarchicalAllreduce, EveryRankGetsTheWholeReductionForEveryNodeMap) {
  const std::vector<std::string> inters = {"recursive_doubling", "recursive_multiplying", "rabenseifner", "ring"};
  for (int p = 1; p <= 130; ++p) {
    for (const NodeMap& map : node_maps(p)) {
      const std::string& inter = inters[static_cast<std::size_t>(p + map.name.size()) % inters.size()];
      const std::string intra = p % 2 == 0 ? "p2p" : "shm";
      const SpecParseResult parsed =
          parse_algorithm_spec("hierarchical:inter=" + inter + ",intra=" + intra, Collective::allreduce);
      ASSERT_TRUE(parsed.choice) << parsed.error;
      const NodeLayout layout = make_node_layout(map.node_of_rank);
      std::vector<Schedule> schedules;
      for (int rank = 0; rank < p; ++rank)
        schedules.push_back(generate_schedule(*parsed.choice, map.node_of_rank, rank));
      CheckSetup setup;
      setup.naming = BlockNaming::reduction;
      setup.p = p;
      setup.ordered = nodes_are_consecutive(map.node_of_rank) && inter != "ring";
      const CheckResult result = check_schedules(setup, [&](int rank) { return schedules[rank]; });
      const std::string where = map.name + " p=" + std::to_string(p) + " inter=" + inter + " intra=" + intra;
      ASSERT_TRUE(result.ok()) << where << ": " << result.errors.front();
      for (int rank = 0; rank < p; ++rank) {
        const bool leader = layout.members[layout.node_of_rank[rank]].front() == rank;
        for (const Step& step : schedules[rank].steps) {
          for (const Transfer& send : step.sends) {
            if (layout.node_of_rank[send.peer] != layout.node_of_rank[rank]) ASSERT_TRUE(leader) << where;
          }
        }
      }
    }
  }
}

// intra=shm models the p2p schedule's steps exactly: the gather's two steps as one opaque phase, the
// leader's combining (reductions, the copy to where the leaders' phase starts) and the send back as
// others; the leaders' phase between them is unchanged.
TEST(HierarchicalAllreduce, WindowPhasesModelThePointToPointSteps) {
  const auto transfers = [](const Step& step) {
    std::vector<std::pair<int, BlockList>> all;
    for (const Transfer& send : step.sends) all.push_back({send.peer, send.region.blocks});
    for (const Transfer& recv : step.recvs) all.push_back({-1 - recv.peer, recv.region.blocks});
    return all;
  };
  const auto copies = [](const Step& step) {
    std::vector<std::pair<Region, Region>> all;
    for (const LocalCopy& copy : step.copies) all.push_back({copy.from, copy.to});
    return all;
  };
  for (const std::vector<int>& node_of_rank :
       {std::vector<int>{0, 0, 0, 1, 1}, std::vector<int>{0, 1, 0, 1, 0, 1, 2}}) {
    const int p = static_cast<int>(node_of_rank.size());
    const AlgorithmChoice p2p = *parse_algorithm_spec("hierarchical", Collective::allreduce).choice;
    const AlgorithmChoice shm = *parse_algorithm_spec("hierarchical:intra=shm", Collective::allreduce).choice;
    for (int rank = 0; rank < p; ++rank) {
      const Schedule a = generate_schedule(p2p, node_of_rank, rank), b = generate_schedule(shm, node_of_rank, rank);
      ASSERT_EQ(b.steps.size() + 1, a.steps.size());
      EXPECT_EQ(b.temp_copies, a.temp_copies);
      ASSERT_TRUE(b.steps.front().opaque && b.steps.back().opaque);
      auto gathered = transfers(a.steps[0]);
      const auto second = transfers(a.steps[1]);
      gathered.insert(gathered.end(), second.begin(), second.end());
      EXPECT_EQ(transfers(b.steps[0]), gathered) << "rank " << rank;
      EXPECT_EQ(b.steps[0].copies.size(), a.steps[0].copies.size());
      for (std::size_t i = 1; i < b.steps.size(); ++i) {
        EXPECT_EQ(transfers(b.steps[i]), transfers(a.steps[i + 1])) << "rank " << rank << " step " << i;
        EXPECT_EQ(b.steps[i].reductions.size(), a.steps[i + 1].reductions.size());
        EXPECT_EQ(copies(b.steps[i]), copies(a.steps[i + 1])) << "rank " << rank << " step " << i;
        EXPECT_EQ(b.steps[i].opaque.has_value(), i <= 2 || i + 1 == b.steps.size());
      }
    }
  }
}

// Why the selector asks for a commutative operation off consecutive nodes: the leaders combine node
// by node, and a cyclic node holds ranks 0 and 2 without 1.
TEST(HierarchicalAllreduce, CyclicNodesDoNotKeepRankOrder) {
  const SpecParseResult parsed = parse_algorithm_spec("hierarchical", Collective::allreduce);
  ASSERT_TRUE(parsed.choice) << parsed.error;
  const std::vector<int> cyclic = {0, 1, 0, 1};
  CheckSetup setup;
  setup.naming = BlockNaming::reduction;
  setup.p = 4;
  setup.ordered = true;
  const CheckResult result =
      check_schedules(setup, [&](int rank) { return generate_schedule(*parsed.choice, cyclic, rank); });
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.errors.front().find("order"), std::string::npos) << result.errors.front();
  setup.ordered = false;  // as a commutative reduction it is right
  EXPECT_TRUE(check_schedules(setup, [&](int rank) { return generate_schedule(*parsed.choice, cyclic, rank); }).ok());
  EXPECT_EQ(parsed.choice->text(), "hierarchical");
  EXPECT_FALSE(parse_algorithm_spec("hierarchical:inter=native", Collective::allreduce).choice);
  EXPECT_FALSE(parse_algorithm_spec("hierarchical:inter=hierarchical", Collective::allreduce).choice);
}

}  // namespace
}  // namespace collshim
