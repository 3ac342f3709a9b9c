// Rank symmetries (schedule.hpp) and the cost model's use of them (model/cost/rank_orbits.hpp): every
// declared symmetry holds for every rank at p = 1..130; the orbits the node maps allow; and costing
// one rank per orbit predicts exactly what costing every rank does.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "algorithms/engine/algorithm_spec.hpp"
#include "model/cost/alltoall_profiles.hpp"
#include "model/cost/cost_model.hpp"
#include "model/cost/rank_orbits.hpp"

#include "node_maps.hpp"

namespace collshim::model {
namespace {

struct Spec {
  Collective collective;
  std::string text;
  int min_symmetric_maps = 40;  // node-aware: maps it must declare a symmetry on to count as tested
};

// Every algorithm that declares a symmetry, with the parameters that change its shape.
const std::vector<Spec> symmetric_specs = {
    {Collective::allgather, "ring"},
    {Collective::allgather, "neighbor_exchange"},
    {Collective::allgather, "recursive_doubling"},
    {Collective::allgather, "bruck"},
    {Collective::allgather, "bruck:radix=3"},
    {Collective::allgather, "bruck:radix=8"},
    {Collective::allgather, "sparbit"},
    {Collective::allgather, "sparbit:coalesce=1"},
    {Collective::allgather, "recursive_multiplying"},
    {Collective::allgather, "recursive_multiplying:k=2"},
    {Collective::allgather, "recursive_multiplying:k=3"},
    {Collective::allgather, "recursive_multiplying:k=8"},
    {Collective::alltoall, "linear"},
    {Collective::alltoall, "pairwise"},
    {Collective::alltoall, "bruck"},
    {Collective::alltoall, "bruck:radix=3"},
    {Collective::alltoall, "grid"},
    {Collective::alltoall, "grid:dims=3"},
    {Collective::alltoall, "grid:dims=hypercube"},
    {Collective::allreduce, "ring"},
    {Collective::allreduce, "recursive_doubling"},
    {Collective::allreduce, "recursive_multiplying"},
    {Collective::allreduce, "recursive_multiplying:k=2"},
    {Collective::allreduce, "recursive_multiplying:k=3"},
};

// Node-aware algorithms whose declaration depends on the node map: checked on sequential and
// round-robin maps of whole nodes, where they declare one.
const std::vector<Spec> node_aware_specs = {
    {Collective::allgather, "hierarchical:inter=ring"},
    {Collective::allgather, "hierarchical:inter=bruck"},
    {Collective::allgather, "hierarchical:inter=sparbit"},
    {Collective::allgather, "hierarchical:inter=neighbor_exchange"},
    {Collective::allgather, "hierarchical:inter=recursive_doubling"},
    {Collective::allgather, "hierarchical:inter=recursive_multiplying"},
    {Collective::allgather, "hierarchical:inter=bruck,intra=shm"},
    {Collective::allgather, "hierarchical"},  // inter=native: modelled as a direct exchange among leaders
    {Collective::allgather, "hierarchical:intra=shm"},
    {Collective::allreduce, "hierarchical:inter=ring"},
    {Collective::allreduce, "hierarchical:inter=ring,intra=shm"},
    {Collective::allreduce, "hierarchical"},  // inter=recursive_doubling
    {Collective::allreduce, "hierarchical:intra=shm"},
    {Collective::allreduce, "hierarchical:inter=recursive_multiplying"},
    {Collective::allreduce, "hierarchical:inter=recursive_multiplying,intra=shm"},
    {Collective::alltoall, "node_grid"},
    {Collective::alltoall, "node_grid:dims=2"},
    {Collective::alltoall, "node_grid:dims=hypercube", 14},  // at least one rank per node, p = 2^k: 7 p, both maps
};

AlgorithmChoice choice_of(const Spec& spec) {
  const SpecParseResult parsed = parse_algorithm_spec(spec.text, spec.collective);
  EXPECT_TRUE(parsed.choice) << parsed.error;
  return *parsed.choice;
}

BlockNaming naming_of(Collective collective) {
  if (collective == Collective::alltoall) return BlockNaming::alltoall;
  return collective == Collective::allreduce ? BlockNaming::reduction : BlockNaming::allgather;
}

// Data of one size: what a symmetry needs.
CheckSetup uniform_call(Collective collective, int p, long long bytes) {
  return uniform_setup(naming_of(collective), p, bytes);
}

bool eligible(const AlgorithmChoice& choice, int p) {
  return !choice.algorithm->eligible || choice.algorithm->eligible(p, choice.params);
}

TEST(RankSymmetry, EveryDeclarationHoldsForEveryRank) {
  for (const Spec& spec : symmetric_specs) {
    const AlgorithmChoice choice = choice_of(spec);
    int symmetric_counts = 0;
    for (int p = 1; p <= 130; ++p) {
      if (!eligible(choice, p)) continue;
      const std::vector<int> one_node(static_cast<std::size_t>(p), 0);
      const RankSymmetry symmetry = rank_symmetry(choice, one_node);
      if (symmetry.kind == RankSymmetry::Kind::none) continue;
      ++symmetric_counts;
      EXPECT_EQ(rank_symmetry_violation(uniform_call(spec.collective, p, 24), symmetry,
                                        [&](int rank) { return generate_schedule(choice, one_node, rank); }),
                "")
          << collective_name(spec.collective) << " " << spec.text << " p=" << p;
    }
    EXPECT_GE(symmetric_counts, 7) << spec.text << " declares a symmetry at too few p to be tested";
  }
}

using test::round_robin;
using test::sequential;

// Node-aware: node indices relabeled as the leaders' algorithm allows, local indices fixed, where
// every node holds the same number of ranks in one run or round-robin; the check runs on those maps
// (every rank's schedule on it).
TEST(RankSymmetry, NodeAwareDeclarationsHoldForEveryRankOnWholeNodes) {
  for (const Spec& spec : node_aware_specs) {
    const AlgorithmChoice choice = choice_of(spec);
    int symmetric_maps = 0;
    for (int p = 1; p <= 130; ++p) {
      for (const int per_node : {1, 2, 3, 4, 8, 16}) {
        if (p % per_node != 0) continue;
        for (const std::vector<int>& nodes : {sequential(p, per_node), round_robin(p, p / per_node)}) {
          const RankSymmetry symmetry = rank_symmetry(choice, nodes);
          if (symmetry.kind == RankSymmetry::Kind::none) continue;
          ++symmetric_maps;
          const std::string what = spec.text + " p=" + std::to_string(p) + " " + std::to_string(per_node) +
                                   " per node" + (nodes == sequential(p, per_node) ? "" : " round-robin");
          // No relabeling moves a rank within its node: an orbit's ranks share their local index.
          const RankOrbits orbits(symmetry, nodes);
          for (int rank = 0; rank < p; ++rank) {
            const int model = orbits.representative_rank(orbits.orbit_of(rank));
            const auto local = [&](int r) {
              return static_cast<int>(std::count(nodes.begin(), nodes.begin() + r, nodes[r]));
            };
            ASSERT_EQ(local(rank), local(model)) << what << " rank " << rank;
          }
          EXPECT_EQ(rank_symmetry_violation(uniform_call(spec.collective, p, 24), symmetry,
                                            [&](int rank) { return generate_schedule(choice, nodes, rank); }),
                    "")
              << what;
        }
      }
    }
    EXPECT_GE(symmetric_maps, spec.min_symmetric_maps)
        << spec.text << " declares a symmetry on too few maps to be tested";
    // Elsewhere it declares none: one node, an uneven last node, nodes neither runs nor round-robin.
    EXPECT_EQ(rank_symmetry(choice, std::vector<int>(16, 0)).kind, RankSymmetry::Kind::none);
    EXPECT_EQ(rank_symmetry(choice, sequential(20, 8)).kind, RankSymmetry::Kind::none);
    EXPECT_EQ(rank_symmetry(choice, {0, 1, 1, 0, 0, 1, 1, 0}).kind, RankSymmetry::Kind::none);
    EXPECT_EQ(rank_symmetry(choice, {0, 0, 1, 2, 3, 3, 4, 4}).kind, RankSymmetry::Kind::none) << "two nodes in one run";
  }
  // And the check finds a shift by less than a node (a member would stand where a leader does).
  const AlgorithmChoice bruck = choice_of({Collective::allgather, "hierarchical:inter=bruck"});
  const std::vector<int> nodes = sequential(16, 4);
  EXPECT_NE(rank_symmetry_violation(uniform_call(Collective::allgather, 16, 24), {RankSymmetry::Kind::rotation, 2},
                                    [&](int rank) { return generate_schedule(bruck, nodes, rank); }),
            "");
  // The leaders run recursive doubling in place, where its last rank copies and the others do not;
  // the node's combined vector is copied to where each leader's schedule starts, but with one rank
  // per node nothing does that copy.
  EXPECT_EQ(
      rank_symmetry(choice_of({Collective::allreduce, "hierarchical:inter=recursive_doubling"}), sequential(32, 1))
          .kind,
      RankSymmetry::Kind::none);
}

// The lists above cover every declaration, so a new one cannot go unchecked.
TEST(RankSymmetry, EveryDeclaringAlgorithmIsChecked) {
  std::set<std::pair<Collective, std::string>> listed;
  for (const Spec& spec : symmetric_specs)
    listed.insert({spec.collective, std::string(choice_of(spec).algorithm->name)});
  for (const Spec& spec : node_aware_specs)
    listed.insert({spec.collective, std::string(choice_of(spec).algorithm->name)});
  for (const Algorithm& algorithm : algorithms()) {
    if (!algorithm.symmetry) continue;
    for (const Collective collective : algorithm.collectives) {
      const Collective checked = collective == Collective::allgatherv  ? Collective::allgather
                                 : collective == Collective::alltoallv ? Collective::alltoall
                                                                       : collective;
      EXPECT_TRUE(listed.contains({checked, std::string(algorithm.name)})) << algorithm.name;
    }
  }
}

// The check can fail: symmetries an algorithm does not have are found out.
TEST(RankSymmetry, AWrongDeclarationIsFound) {
  const int p = 8;
  const std::vector<int> one_node(p, 0);
  const auto schedules_of = [&](const std::string& spec) {
    const AlgorithmChoice choice = choice_of({Collective::allgather, spec});
    return [choice, one_node](int rank) { return generate_schedule(choice, one_node, rank); };
  };
  const CheckSetup call = uniform_call(Collective::allgather, p, 8);
  EXPECT_NE(rank_symmetry_violation(call, {RankSymmetry::Kind::rotation}, schedules_of("recursive_doubling")), "");
  EXPECT_NE(rank_symmetry_violation(call, {RankSymmetry::Kind::digits, 1, {2, 2, 2}}, schedules_of("ring")), "");
  EXPECT_NE(rank_symmetry_violation(call, {RankSymmetry::Kind::rotation}, schedules_of("neighbor_exchange")), "");
  EXPECT_NE(rank_symmetry_violation(call, {RankSymmetry::Kind::digits, 1, {2, 4}}, schedules_of("recursive_doubling")),
            "");
  EXPECT_NE(rank_symmetry_violation(call, {RankSymmetry::Kind::digits, 1, {3, 3}}, schedules_of("ring")), "")
      << "radices whose product is not p do not fit";
}

TEST(RankOrbits, TheNodeMapDecidesHowManyRanksAreCosted) {
  const RankSymmetry rotation{RankSymmetry::Kind::rotation};
  const RankSymmetry binary{RankSymmetry::Kind::digits, 1, {2, 2, 2, 2, 2, 2}};
  EXPECT_EQ(RankOrbits(rotation, sequential(64, 16)).representatives(), 16);
  EXPECT_EQ(RankOrbits(rotation, sequential(64, 16)).node_orbits(), 1);
  EXPECT_EQ(RankOrbits(rotation, round_robin(64, 4)).representatives(), 1);
  EXPECT_EQ(RankOrbits(rotation, round_robin(60, 4)).representatives(), 1);
  EXPECT_EQ(RankOrbits(rotation, sequential(60, 16)).representatives(), 60)
      << "an uneven last node: no shift keeps the nodes";
  EXPECT_EQ(RankOrbits({RankSymmetry::Kind::rotation, 2}, round_robin(64, 4)).representatives(), 2);
  EXPECT_EQ(RankOrbits(binary, sequential(64, 16)).representatives(), 1) << "XOR of the low bits stays in the node";
  EXPECT_EQ(RankOrbits(binary, round_robin(64, 4)).representatives(), 1);
  EXPECT_EQ(RankOrbits(binary, sequential(64, 12)).representatives(), 16)
      << "XOR 1 and 2 keep nodes of 12, XOR 4 splits them";
  EXPECT_EQ(RankOrbits(binary, sequential(64, 12)).kind(), RankSymmetry::Kind::digits);
  EXPECT_EQ(RankOrbits(binary, sequential(32, 4)).kind(), RankSymmetry::Kind::none) << "radices for 64, not 32";
  EXPECT_EQ(RankOrbits({}, sequential(64, 16)).representatives(), 64);
  // A row of 8 (the low digit) holds two nodes of 4: shifts by 4 along it keep them, by 1 or 2 not.
  EXPECT_EQ(RankOrbits(RankSymmetry{RankSymmetry::Kind::digits, 1, {8, 4}}, sequential(32, 4)).representatives(), 4);
  EXPECT_EQ(RankOrbits(RankSymmetry{RankSymmetry::Kind::digits, 1, {8, 4}}, sequential(32, 4)).orbit_of(8 * 3 + 4 + 2),
            2);
  // Fixed digits: a node-aware algorithm's local index. Nodes of 4 consecutive ranks, the node index
  // rotated: node 0's ranks represent their orbits.
  const RankOrbits by_node(RankSymmetry{RankSymmetry::Kind::digits, 1, {4, 16}, {0}}, sequential(64, 4));
  EXPECT_EQ(by_node.representatives(), 4);
  EXPECT_EQ(by_node.representative_rank(3), 3);
  EXPECT_EQ(by_node.orbit_of(4 * 9 + 3), 3);
  // Round-robin over 16 nodes, the node index (the low digit) rotated, the local index (the high one)
  // fixed: the representatives are node 0's ranks 0, 16, 32, 48.
  const RankOrbits round_robin_nodes(RankSymmetry{RankSymmetry::Kind::digits, 1, {16, 4}, {1}}, round_robin(64, 16));
  EXPECT_EQ(round_robin_nodes.representatives(), 4);
  EXPECT_EQ(round_robin_nodes.representative_rank(1), 16);
  EXPECT_EQ(round_robin_nodes.orbit_of(16 + 5), 1);
  EXPECT_TRUE(round_robin_nodes.is_representative(48));
  EXPECT_FALSE(round_robin_nodes.is_representative(49));
  EXPECT_EQ(round_robin_nodes.relabel(16, 16 + 5, 32 + 15), 32 + 4) << "node 15 + 5 wraps to node 4";
  // Start times that repeat every 4 ranks: only relabelings that keep them count.
  std::vector<double> every_fourth(64);
  for (int r = 0; r < 64; ++r) every_fourth[r] = 0.5 * (r % 4);
  EXPECT_EQ(RankOrbits(binary, sequential(64, 16), every_fourth).representatives(), 4);
  EXPECT_EQ(RankOrbits(rotation, round_robin(64, 2), every_fourth).representatives(), 4);
  EXPECT_EQ(RankOrbits(rotation, sequential(64, 16), every_fourth).representatives(), 16);
  // Nodes 0 and 1 hold 3 ranks each, nodes 2 and 3 one each: shifts by 4 map node 2 onto node 3, not
  // onto the 3-rank nodes; the orbits of nodes are {0, 1} and {2, 3}.
  const std::vector<int> mixed = {0, 0, 0, 2, 1, 1, 1, 3};
  const RankOrbits orbits(rotation, mixed);
  EXPECT_EQ(orbits.representatives(), 4);
  EXPECT_EQ(orbits.node_orbits(), 2);
  EXPECT_EQ(orbits.node_orbit(0), orbits.node_orbit(1));
  EXPECT_EQ(orbits.node_orbit(2), orbits.node_orbit(3));
  EXPECT_NE(orbits.node_orbit(0), orbits.node_orbit(2));
}

// Per-message overheads, a receive overhead, latency, an eager threshold inside the sizes used,
// memory loaded by the network, receivers that must post first: every mechanism that lets ranks
// drift apart.
Platform drifting_platform(bool wait_for_receiver) {
  Platform platform;
  platform.name = "symmetry test";
  for (Channel* channel : {&platform.shm, &platform.net}) {
    const bool net = channel == &platform.net;
    channel->overhead_us = net ? 1.3 : 0.4;
    channel->receive_overhead_us = net ? 0.9 : 0.2;
    channel->eager_threshold_bytes = 1000;
    for (int tau = 1; tau <= 16; tau *= 2)
      channel->transfer.push_back({tau, net ? 2.0 : 0.3, (net ? 1.5 : 9.0) / std::pow(static_cast<double>(tau), 0.7)});
  }
  platform.reduce_gbytes_per_s = 3;
  platform.network_crosses_memory = true;
  platform.transfers_wait_for_receiver = wait_for_receiver;
  return platform;
}

TEST(SymmetricCosting, PredictsWhatCostingEveryRankPredicts) {
  struct NodeMap {
    std::string name;
    std::vector<int> nodes;
  };
  int reduced = 0;
  for (const int p : {6, 8, 12, 16, 24, 27, 32, 48, 64}) {
    const std::vector<NodeMap> maps = {{"one node", sequential(p, p)},       {"sequential 2", sequential(p, 2)},
                                       {"sequential 4", sequential(p, 4)},   {"round robin 2", round_robin(p, 2)},
                                       {"round robin 3", round_robin(p, 3)}, {"round robin 4", round_robin(p, 4)},
                                       {"one per node", sequential(p, 1)}};
    std::vector<Spec> specs = symmetric_specs;
    specs.insert(specs.end(), node_aware_specs.begin(), node_aware_specs.end());
    for (const Spec& spec : specs) {
      const AlgorithmChoice choice = choice_of(spec);
      if (!eligible(choice, p)) continue;
      for (const NodeMap& map : maps) {
        const RankSymmetry symmetry = rank_symmetry(choice, map.nodes);
        for (const bool wait : {false, true}) {
          const Platform platform = drifting_platform(wait);
          const auto schedule_of = [&](int rank) { return generate_schedule(choice, map.nodes, rank); };
          const std::vector<double> start = dissemination_barrier_exit_us(platform, map.nodes);
          for (const long long bytes : {64LL, 4096LL}) {
            const CheckSetup call = uniform_call(spec.collective, p, bytes);
            const std::string what = spec.text + " p=" + std::to_string(p) + " " + map.name + (wait ? " waiting" : "") +
                                     " bytes=" + std::to_string(bytes);
            const Prediction every_rank = predict(platform, call, map.nodes, schedule_of, start);
            const Prediction by_orbit = predict(platform, call, map.nodes, schedule_of, start, symmetry);
            ASSERT_EQ(every_rank.ranks_costed, p) << what;
            if (by_orbit.ranks_costed < p) ++reduced;
            EXPECT_NEAR(by_orbit.us, every_rank.us, 1e-9 * every_rank.us) << what;
            ASSERT_EQ(by_orbit.steps.size(), every_rank.steps.size()) << what;
            for (std::size_t s = 0; s < every_rank.steps.size(); ++s)
              EXPECT_NEAR(by_orbit.steps[s].us, every_rank.steps[s].us, 1e-9 * every_rank.us) << what << " step " << s;
          }
        }
      }
    }
  }
  EXPECT_GT(reduced, 500) << "the symmetric costing must actually cost fewer ranks in most of these cells";
}

// With switches the relabelings must keep them whole too (a message across two costs more): the
// orbits' prediction is still every rank's, and the switches do cost something.
TEST(SymmetricCosting, SwitchesAreKeptWhole) {
  int reduced = 0, slower = 0, cells = 0;
  for (const int p : {8, 12, 16, 24, 32}) {
    for (const std::vector<int>& sizes : {std::vector<int>{2}, std::vector<int>{3}, std::vector<int>{1, 3}}) {
      for (const std::vector<int>& nodes : {sequential(p, 2), round_robin(p, 4), sequential(p, 1)}) {
        for (const Spec& spec : symmetric_specs) {
          const AlgorithmChoice choice = choice_of(spec);
          if (!eligible(choice, p)) continue;
          Platform platform = drifting_platform(true);
          platform.nodes_per_switch = sizes;
          platform.across_switches_latency_us = 5;
          const auto schedule_of = [&](int rank) { return generate_schedule(choice, nodes, rank); };
          const CheckSetup call = uniform_call(spec.collective, p, 64);
          const std::string what = spec.text + " p=" + std::to_string(p) + " switches of " + std::to_string(sizes[0]);
          const Prediction every_rank = predict(platform, call, nodes, schedule_of);
          const Prediction by_orbit = predict(platform, call, nodes, schedule_of, {}, rank_symmetry(choice, nodes));
          if (by_orbit.ranks_costed < p) ++reduced;
          ++cells;
          EXPECT_NEAR(by_orbit.us, every_rank.us, 1e-9 * every_rank.us) << what;
          platform.nodes_per_switch.clear();
          const Prediction one_switch = predict(platform, call, nodes, schedule_of);
          // Never faster; slower where a message across switches is on the critical path (not, say,
          // Alltoall linear's, whose last injected message stays on the switch).
          EXPECT_GE(every_rank.us, one_switch.us) << what;
          if (every_rank.us > one_switch.us) ++slower;
        }
      }
    }
  }
  EXPECT_GT(reduced, 50) << "the symmetric costing must still cost fewer ranks in many of these cells";
  EXPECT_GT(slower, cells * 3 / 4) << "crossing switches must cost something in most cells";
}

// A symmetry the schedules lack is caught on the ranks outside the representatives, not costed.
TEST(SymmetricCosting, AWrongDeclarationStopsThePrediction) {
  const AlgorithmChoice choice = choice_of({Collective::allgather, "recursive_doubling"});
  const std::vector<int> nodes = round_robin(32, 4);
  EXPECT_THROW(
      predict(drifting_platform(false), uniform_call(Collective::allgather, 32, 64), nodes,
              [&](int rank) { return generate_schedule(choice, nodes, rank); }, {}, {RankSymmetry::Kind::rotation}),
      std::logic_error);
}

// Where packing costs, which messages are scattered breaks the symmetry: every rank is costed.
TEST(SymmetricCosting, PackingTurnsItOff) {
  Platform platform = drifting_platform(false);
  platform.pack_gbytes_per_s = 2;
  const AlgorithmChoice choice = choice_of({Collective::allgather, "bruck"});
  const std::vector<int> nodes = sequential(32, 4);
  const Prediction prediction = predict(
      platform, uniform_call(Collective::allgather, 32, 64), nodes,
      [&](int rank) { return generate_schedule(choice, nodes, rank); }, {}, rank_symmetry(choice, nodes));
  EXPECT_EQ(prediction.ranks_costed, 32);
}

// At p = 1024 on nodes of 16 the representatives (256 of node_grid's 1024) are more than a few
// dozen: their profiles come from counts (profiles_of), and the prediction is every rank's.
TEST(SymmetricCosting, CountedProfilesOfTheRepresentativesPredictWhatEveryRankDoes) {
  const int p = 1024;
  const Platform platform = drifting_platform(false);
  for (const std::string spec : {"node_grid", "node_grid:dims=2", "node_grid:dims=hypercube"}) {
    const AlgorithmChoice choice = choice_of({Collective::alltoall, spec});
    for (const std::vector<int>& nodes : {sequential(p, 16), round_robin(p, 64)}) {
      const RankSymmetry symmetry = rank_symmetry(choice, nodes);
      ASSERT_NE(symmetry.kind, RankSymmetry::Kind::none) << spec;
      const CheckSetup call = uniform_call(Collective::alltoall, p, 8);
      const AlltoallBlocks blocks{8, {}};
      const std::vector<RankProfile> every = counted_alltoall_profiles(choice, nodes, blocks);
      const auto one = [&](int rank) { return every[static_cast<std::size_t>(rank)]; };
      const ProfilesOf some = [&](const std::vector<int>& ranks) {
        return counted_alltoall_profiles(choice, nodes, blocks, false, ranks);
      };
      const Prediction every_rank = predict(platform, call, nodes, one);
      const Prediction by_orbit = predict(platform, call, nodes, one, {}, symmetry, some);
      EXPECT_GT(by_orbit.ranks_costed, 32) << spec << ": profiles_of is used beyond a few dozen";
      EXPECT_LT(by_orbit.ranks_costed, p / 2) << spec;
      EXPECT_NEAR(by_orbit.us, every_rank.us, 1e-9 * every_rank.us) << spec;
    }
  }
}

}  // namespace
}  // namespace collshim::model
