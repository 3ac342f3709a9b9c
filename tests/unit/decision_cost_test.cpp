// What makes the cost model's decision cheap without changing it (model_decision.hpp,
// bench/model/decision_cost): one rank's own work is a lower bound of every prediction; a prediction
// costed a few steps at a time is the prediction; the decision with pruning picks what costing every
// candidate picks and ranks its fastest alike; an Allreduce vector that does not split evenly keeps
// the symmetry of algorithms whose messages hold the whole vector; an Alltoallv whose pairs all hold
// the same bytes costs as the uniform call.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "algorithms/engine/algorithm_spec.hpp"
#include "algorithms/engine/registry.hpp"
#include "model/cost/call_prediction.hpp"
#include "model/cost/cost_model.hpp"
#include "model/cost/model_decision.hpp"
#include "model/library/native_decision.hpp"
#include "selector/tuning_candidates.hpp"

#include "node_maps.hpp"

namespace collshim::model {
namespace {

using test::round_robin;
using test::sequential;

// Platforms that exercise every timing rule: overheads on both ends, eager and rendezvous sizes,
// transfers that wait for the receiver (and probes), reductions, packing, memory crossed by the
// network, switches, and a transfer time that is not monotone in τ.
std::vector<Platform> platforms() {
  std::vector<Platform> result;
  for (int variant = 0; variant < 4; ++variant) {
    Platform platform;
    platform.name = "variant " + std::to_string(variant);
    for (Channel* channel : {&platform.shm, &platform.net}) {
      const bool net = channel == &platform.net;
      channel->overhead_us = net ? 1.3 : 0.4;
      channel->protocol_overhead_us = variant == 1 ? 0.7 : 0;
      channel->protocol_threshold_bytes = variant == 1 ? 2048 : 0;
      channel->receive_overhead_us = variant == 2 ? 0 : (net ? 0.9 : 0.2);
      channel->eager_threshold_bytes = variant == 3 ? 0 : 1000;
      for (int tau = 1; tau <= 16; tau *= 2) {
        // Variant 3: latency that dips at τ = 4 (a calibrated fit may do that).
        const double latency = (net ? 2.0 : 0.3) * (variant == 3 && tau == 4 ? 0.5 : 1.0);
        channel->transfer.push_back({tau, latency, (net ? 1.5 : 9.0) / std::pow(tau, 0.7)});
      }
      if (variant == 1) channel->size_factors = {{0, 1.0, 1.0}, {512, 1.8, 0.6}, {4096, 0.9, 1.3}};
    }
    platform.reduce_gbytes_per_s = variant == 0 ? 3 : 0;
    platform.pack_gbytes_per_s = variant == 2 ? 4 : 0;
    platform.network_crosses_memory = variant % 2 == 0;
    platform.transfers_wait_for_receiver = variant >= 1;
    platform.probe_us = variant >= 1 ? 0.3 : 0;
    platform.local_copies_free = variant == 1;
    if (variant == 3) platform.nodes_per_switch = {2}, platform.across_switches_latency_us = 3;
    result.push_back(platform);
  }
  return result;
}

std::vector<AlgorithmChoice> candidates_of(Collective collective) {
  std::vector<AlgorithmChoice> choices;
  for (const std::string& spec : tuning_candidates(collective)) {
    const SpecParseResult parsed = parse_algorithm_spec(spec, collective);
    if (parsed.choice && parsed.choice->algorithm->make_schedule) choices.push_back(*parsed.choice);
  }
  return choices;
}

bool eligible(const AlgorithmChoice& choice, int p) {
  return !choice.algorithm->eligible || choice.algorithm->eligible(p, choice.params);
}

// The calls of the tests: the collectives the model decides, sizes small to large, an Allreduce
// vector that does not split evenly, and an irregular Alltoallv.
std::vector<ModelCall> calls(int p) {
  std::vector<ModelCall> result;
  for (const Collective collective : {Collective::allgather, Collective::allgatherv, Collective::alltoall,
                                      Collective::alltoallv, Collective::allreduce}) {
    for (const long long bytes : {8LL, 3000LL}) result.push_back({collective, p, bytes});
  }
  result.push_back({Collective::allreduce, p, 8LL * (p + 3)});  // p + 3 elements: uneven segments
  ModelCall irregular{Collective::alltoallv, p, 64};
  for (int origin = 0; origin < p; ++origin) {
    irregular.pairs.sending.emplace_back();
    for (int destination = 0; destination < p; ++destination)
      if ((origin * 7 + destination * 3) % 5 == 0)
        irregular.pairs.sending.back().emplace_back(destination, 64 + origin);
  }
  result.push_back(irregular);
  return result;
}

TEST(DecisionCost, OneRanksOwnWorkBoundsEveryPrediction) {
  int cells = 0, positive = 0;
  for (const int p : {5, 8, 16}) {
    for (const std::vector<int>& nodes : {sequential(p, 4), round_robin(p, 3), sequential(p, 1)}) {
      for (const Platform& platform : platforms()) {
        for (const ModelCall& call : calls(p)) {
          for (const AlgorithmChoice& choice : candidates_of(call.collective)) {
            if (!eligible(choice, p)) continue;
            const double predicted = predict_algorithm(platform, call, nodes, choice).prediction.us;
            const AlgorithmCosting costing(platform, call, nodes, choice);
            // The bound the decision uses (rank 0's), and every other rank's.
            EXPECT_LE(costing.lower_bound_us(), predicted) << choice.text() << " p=" << p << " " << platform.name;
            const CheckSetup setup =
                plan_cost(
                    call, false, [&](int r) { return generate_schedule(choice, nodes, r); }, {}, "")
                    .setup;
            for (int rank = 0; rank < p; ++rank) {
              const double bound =
                  rank_work_lower_bound_us(platform, setup, nodes, rank, generate_schedule(choice, nodes, rank));
              EXPECT_LE(bound, predicted) << choice.text() << " p=" << p << " rank " << rank << " " << platform.name;
            }
            ++cells;
            if (costing.lower_bound_us() > 0.2 * predicted) ++positive;
          }
        }
      }
    }
  }
  EXPECT_GT(positive, cells / 3) << "the bound should not be trivially small";
}

TEST(DecisionCost, ASteppedPredictionIsThePrediction) {
  const Platform platform = platforms()[1];
  for (const ModelCall& call : calls(24)) {
    for (const std::vector<int>& nodes : {sequential(24, 4), round_robin(24, 3)}) {
      for (const AlgorithmChoice& choice : candidates_of(call.collective)) {
        if (!eligible(choice, 24)) continue;
        const CallPrediction whole = predict_algorithm(platform, call, nodes, choice);
        AlgorithmCosting costing(platform, call, nodes, choice);
        // A step at a time: each limit is what it has spent so far.
        double before = costing.lower_bound_us();
        while (!costing.advance(costing.lower_bound_us())) {
          const CallPrediction partial = costing.prediction();
          ASSERT_TRUE(partial.prediction.lower_bound);
          EXPECT_GE(partial.prediction.us, before);
          EXPECT_LE(partial.prediction.us, whole.prediction.us) << choice.text();
          before = partial.prediction.us;
        }
        const CallPrediction stepped = costing.prediction();
        EXPECT_FALSE(stepped.prediction.lower_bound);
        EXPECT_EQ(stepped.prediction.us, whole.prediction.us) << choice.text();
        EXPECT_EQ(stepped.prediction.approximated, whole.prediction.approximated) << choice.text();
        ASSERT_EQ(stepped.prediction.steps.size(), whole.prediction.steps.size()) << choice.text();
        for (std::size_t s = 0; s < whole.prediction.steps.size(); ++s)
          EXPECT_EQ(stepped.prediction.steps[s].us, whole.prediction.steps[s].us) << choice.text() << " step " << s;
      }
    }
  }
}

// A library that runs `stand_in` for every call of its collective.
LibraryDecision library_running(const std::string& stand_in) {
  return [stand_in](Collective collective, const LibraryFacts&) {
    return NativeDecision{stand_in, collective, stand_in, ""};
  };
}

TEST(DecisionCost, PruningKeepsThePickAndTheFastest) {
  const AlgorithmChoice native = *make_choice("native", {}, Collective::allgather).choice;
  int decisions = 0, pruned = 0, native_bounded = 0;
  for (const int p : {16, 24}) {
    for (const std::vector<int>& nodes : {sequential(p, 4), round_robin(p, 4), sequential(p, 1)}) {
      for (const Platform& platform : platforms()) {
        for (const ModelCall& call : calls(p)) {
          std::vector<AlgorithmChoice> owned = candidates_of(call.collective);
          std::vector<const AlgorithmChoice*> candidates;
          for (std::size_t i = 0; i < owned.size(); ++i) {
            owned[i].id = static_cast<int>(i);
            if (eligible(owned[i], p)) candidates.push_back(&owned[i]);
          }
          const std::vector<std::string> libraries =
              call.collective == Collective::alltoall    ? std::vector<std::string>{"linear", "bruck"}
              : call.collective == Collective::alltoallv ? std::vector<std::string>{"linear", "pairwise"}
                                                         : std::vector<std::string>{"ring", "recursive_doubling"};
          for (const std::string& library : libraries) {
            if (!eligible(*parse_algorithm_spec(library, call.collective).choice, p)) continue;
            for (const double margin : {0.0, 0.5}) {
              const ModelSettings settings{platform, "test.yaml", library_running(library), "test", margin};
              const ModelVerdict every = model_decision(settings, call, nodes, candidates, &native, true,
                                                        std::numeric_limits<std::size_t>::max());
              ASSERT_TRUE(every.pruned.empty());
              for (const std::size_t exactly : {std::size_t{1}, std::size_t{3}}) {
                const ModelVerdict verdict = model_decision(settings, call, nodes, candidates, &native, true, exactly);
                const std::string what = std::string(collective_name(call.collective)) + " p=" + std::to_string(p) +
                                         " bytes=" + std::to_string(call.bytes) + " " + platform.name +
                                         " native=" + library + " margin=" + std::to_string(margin);
                ++decisions;
                pruned += verdict.pruned.empty() ? 0 : 1;
                EXPECT_EQ(verdict.pick, every.pick) << what;
                // Native is costed only as far as the pick needs: exactly, or to a bound that the
                // fastest candidate beats by twice the margin.
                if (verdict.native_at_least) {
                  ++native_bounded;
                  EXPECT_LE(verdict.native_us, every.native_us) << what;
                  ASSERT_FALSE(verdict.ranked.empty()) << what;
                  EXPECT_GE(verdict.native_us, verdict.ranked.front().us * (1 + 2 * margin)) << what;
                } else {
                  EXPECT_EQ(verdict.native_us, every.native_us) << what;
                }
                ASSERT_EQ(verdict.ranked.size() + verdict.pruned.size(), every.ranked.size()) << what;
                ASSERT_GE(verdict.ranked.size(), std::min(exactly, every.ranked.size())) << what;
                for (std::size_t i = 0; i < std::min(exactly, every.ranked.size()); ++i) {
                  EXPECT_EQ(verdict.ranked[i].choice, every.ranked[i].choice) << what << " rank " << i;
                  EXPECT_EQ(verdict.ranked[i].us, every.ranked[i].us) << what << " rank " << i;
                }
                for (const CandidateCost& bound : verdict.pruned) {
                  for (const CandidateCost& exact : every.ranked)
                    if (exact.choice == bound.choice)
                      EXPECT_LE(bound.us, exact.us) << what << " " << exact.choice->text();
                }
              }
            }
          }
        }
      }
    }
  }
  EXPECT_GT(pruned, decisions / 2) << "most decisions should skip some candidate";
  EXPECT_GT(native_bounded, 0) << "some decisions should need native only to a bound";
}

TEST(DecisionCost, AnUnevenVectorKeepsTheSymmetryOfWholeVectorMessages) {
  const Platform platform = platforms()[0];
  int symmetric = 0;
  for (const int p : {6, 8, 12, 16, 32}) {
    for (const std::vector<int>& nodes : {sequential(p, 2), round_robin(p, 2), sequential(p, 1)}) {
      for (const std::string& spec :
           {"recursive_doubling", "recursive_multiplying", "recursive_multiplying:k=3", "ring", "rabenseifner"}) {
        const AlgorithmChoice choice = *parse_algorithm_spec(spec, Collective::allreduce).choice;
        if (!eligible(choice, p)) continue;
        for (const long long elements : {1LL, 3LL, p - 1LL, p + 1LL, 3LL * p + 2}) {
          const ModelCall call{Collective::allreduce, p, 8 * elements};
          ASSERT_FALSE(call.one_size());
          const CallPrediction by_plan = predict_algorithm(platform, call, nodes, choice);
          CheckSetup setup = model_setup(call);
          setup.every_size_known = false;
          const Prediction every_rank =
              predict(platform, setup, nodes, [&](int rank) { return generate_schedule(choice, nodes, rank); });
          const std::string what = spec + " p=" + std::to_string(p) + " elements=" + std::to_string(elements);
          EXPECT_NEAR(by_plan.prediction.us, every_rank.us, 1e-9 * every_rank.us) << what;
          if (spec == "ring" || spec == "rabenseifner") {
            EXPECT_EQ(by_plan.prediction.ranks_costed, p) << what << ": segments of different sizes";
          } else if (by_plan.prediction.ranks_costed < p) {
            ++symmetric;
          }
        }
      }
    }
  }
  EXPECT_GT(symmetric, 60) << "recursive doubling and multiplying should keep their symmetry";
}

TEST(DecisionCost, AnAlltoallvOfEqualPairsCostsAsTheUniformCall) {
  const int p = 24;
  std::vector<long long> equal(static_cast<std::size_t>(p) * p, 40);
  const AlltoallBlocks blocks = alltoall_blocks(equal, p);
  ASSERT_TRUE(blocks.uniform());
  EXPECT_EQ(blocks.every_pair_bytes, 40);
  std::vector<long long> holes = equal;
  holes[5] = 0, holes[30] = 7;
  const AlltoallBlocks irregular = alltoall_blocks(holes, p);
  ASSERT_FALSE(irregular.uniform());
  EXPECT_EQ(irregular.bytes(0, 5), 0);
  EXPECT_EQ(irregular.bytes(1, 6), 7);
  EXPECT_EQ(irregular.bytes(2, 2), 40);
  EXPECT_EQ(irregular.sending[0].size(), static_cast<std::size_t>(p - 1));

  // Every pair listed with the same bytes (what the shim gathered before) predicts what the uniform
  // call does, at a fraction of the work.
  ModelCall listed{Collective::alltoallv, p, 40};
  for (int origin = 0; origin < p; ++origin) {
    listed.pairs.sending.emplace_back();
    for (int destination = 0; destination < p; ++destination) listed.pairs.sending.back().emplace_back(destination, 40);
  }
  const ModelCall uniform{Collective::alltoallv, p, 40};
  for (const std::vector<int>& nodes : {sequential(p, 4), round_robin(p, 3)}) {
    for (const Platform& platform : platforms()) {
      for (const AlgorithmChoice& choice : candidates_of(Collective::alltoallv)) {
        const double a = predict_algorithm(platform, listed, nodes, choice).prediction.us;
        const double b = predict_algorithm(platform, uniform, nodes, choice).prediction.us;
        EXPECT_NEAR(a, b, 1e-9 * b) << choice.text() << " " << platform.name;
      }
    }
  }
}

// Beyond ModelCall::exact_up_to_p the model costs a sample of ranks under an assumed rotation
// (predict's sampled_ranks). Where the schedules have that rotation, the sample is exact.
Prediction sampled_prediction(const Platform& platform, const std::vector<int>& nodes, const AlgorithmChoice& choice,
                              long long bytes, int sampled_ranks) {
  const int p = static_cast<int>(nodes.size());
  const CheckSetup setup = uniform_setup(BlockNaming::alltoall, p, bytes);
  return predict(
      platform, setup, nodes,
      [&](int rank) { return rank_profile(setup, rank, generate_schedule(choice, nodes, rank)); }, {}, {}, {},
      sampled_ranks);
}

TEST(DecisionCost, ASampleOfRanksIsExactWhereTheRotationHolds) {
  const int p = 64;
  const SpecParseResult linear = parse_algorithm_spec("linear", Collective::alltoall);
  ASSERT_TRUE(linear.choice);
  int compared = 0;
  // Nodes in order: the sample moves whole nodes, which is the exchange's rotation by their ranks.
  for (const std::vector<int>& nodes : {sequential(p, 4), sequential(p, 8), sequential(p, 1)}) {
    for (const Platform& platform : platforms()) {
      if (platform.pack_gbytes_per_s > 0) continue;  // no relabeling is a symmetry there: never sampled
      for (const long long bytes : {8LL, 3000LL}) {
        // No symmetry declared: every rank costed, or ranks 0..7 for all under the shift by 8, which
        // is one of the exchange's (rank r sends to r + i).
        const Prediction exact = sampled_prediction(platform, nodes, *linear.choice, bytes, 0);
        const Prediction sampled = sampled_prediction(platform, nodes, *linear.choice, bytes, 8);
        EXPECT_EQ(exact.ranks_costed, p);
        EXPECT_FALSE(exact.sampled);
        // At least 8 ranks of whole nodes (16 where switches hold two nodes of 8).
        EXPECT_GE(sampled.ranks_costed, 8) << platform.name;
        EXPECT_LE(sampled.ranks_costed, 16) << platform.name;
        EXPECT_TRUE(sampled.sampled && sampled.approximated);
        EXPECT_NEAR(sampled.us, exact.us, 1e-9 * exact.us) << platform.name << " " << bytes << " B";
        ++compared;
      }
    }
  }
  EXPECT_EQ(compared, 18);
}

TEST(DecisionCost, ASampleOfAGridWithHolesStaysNearTheExactCost) {
  // 60 ranks in a 4 x 4 x 4 grid: four holes, no rank symmetry. A sample of whole nodes, at least 12
  // ranks, against all 60.
  const int p = 60;
  const SpecParseResult grid = parse_algorithm_spec("grid:dims=3", Collective::alltoall);
  ASSERT_TRUE(grid.choice);
  double worst = 0;
  for (const std::vector<int>& nodes : {sequential(p, 4), round_robin(p, 4)}) {
    for (const Platform& platform : platforms()) {
      // Packing: never sampled; switches of two nodes: no shift by three nodes keeps them.
      if (platform.pack_gbytes_per_s > 0 || !platform.nodes_per_switch.empty()) continue;
      for (const long long bytes : {8LL, 3000LL}) {
        const Prediction exact = sampled_prediction(platform, nodes, *grid.choice, bytes, 0);
        const Prediction sampled = sampled_prediction(platform, nodes, *grid.choice, bytes, 12);
        ASSERT_EQ(sampled.ranks_costed, nodes[1] == 0 ? 12 : 15);  // three nodes of 4, one of 15
        ASSERT_TRUE(sampled.approximated);
        const double error = std::abs(sampled.us - exact.us) / exact.us;
        EXPECT_LE(error, 0.15) << platform.name << " " << bytes << " B: " << sampled.us << " against " << exact.us;
        worst = std::max(worst, error);
      }
    }
  }
  std::printf("grid:dims=3 at p = 60, a sample of whole nodes: at most %.2f%% from the exact cost\n", 100 * worst);
}

TEST(DecisionCost, CallsUpToTheLimitAreCostedExactly) {
  const int p = 544;  // a three-dimensional grid with holes: no rank symmetry
  const std::vector<int> nodes = sequential(p, 4);
  const SpecParseResult grid = parse_algorithm_spec("grid:dims=3", Collective::alltoall);
  ASSERT_TRUE(grid.choice);
  ModelCall call{Collective::alltoall, p, 8};
  const CallPrediction exact = predict_algorithm(platforms()[0], call, nodes, *grid.choice);
  EXPECT_EQ(exact.prediction.ranks_costed, p);
  EXPECT_FALSE(exact.prediction.approximated);
  call.exact_up_to_p = 543;  // beyond the limit: a sample of 272 ranks (the first divisor of p from 256)
  const CallPrediction sampled = predict_algorithm(platforms()[0], call, nodes, *grid.choice);
  EXPECT_EQ(sampled.prediction.ranks_costed, 272);
  EXPECT_TRUE(sampled.prediction.approximated);
  EXPECT_NE(sampled.note.find("costed by 272 ranks"), std::string::npos) << sampled.note;
}

}  // namespace
}  // namespace collshim::model
