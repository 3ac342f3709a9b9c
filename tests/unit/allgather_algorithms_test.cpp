// Properties of the logarithmic and neighbour allgather algorithms beyond "correct and at cost":
// eligibility and fallback of the restricted ones, Sparbit's step sequence as the thesis gives it,
// and the shape of the messages the executor will see.
#include <gtest/gtest.h>

#include <map>
#include <utility>
#include <vector>

#include "algorithms/engine/algorithm_spec.hpp"
#include "selector/selector.hpp"

namespace collshim {
namespace {

AlgorithmChoice choice_of(const std::string& spec) {
  SpecParseResult parsed = parse_algorithm_spec(spec, Collective::allgatherv);
  EXPECT_TRUE(parsed.choice) << parsed.error;
  return *parsed.choice;
}

BlockSchedule schedule_of(const std::string& spec, int p, int rank) {
  const AlgorithmChoice choice = choice_of(spec);
  return choice.algorithm->make_block_schedule(p, rank, choice.params);
}

bool power_of_two(int p) {
  int bits = 0;
  for (int v = p; v != 0; v >>= 1) bits += v & 1;
  return bits == 1;
}

TEST(AllgatherAlgorithms, RestrictedAlgorithmsStateTheirConditionAndFallBackLikeOpenMpi) {
  const AlgorithmChoice rd = choice_of("recursive_doubling");
  const AlgorithmChoice ne = choice_of("neighbor_exchange");
  EXPECT_EQ(rd.algorithm->eligibility, "p a power of two");
  EXPECT_EQ(rd.algorithm->fallback, "bruck");
  EXPECT_EQ(ne.algorithm->eligibility, "p even");
  EXPECT_EQ(ne.algorithm->fallback, "ring");
  EXPECT_FALSE(rd.algorithm->eligible(6, rd.params));
  EXPECT_FALSE(ne.algorithm->eligible(5, ne.params));
  for (int p = 1; p <= 1030; ++p) {
    EXPECT_EQ(rd.algorithm->eligible(p, rd.params), power_of_two(p)) << "recursive_doubling p=" << p;
    EXPECT_EQ(ne.algorithm->eligible(p, ne.params), p % 2 == 0) << "neighbor_exchange p=" << p;
  }
  for (const char* unrestricted : {"bruck", "bruck:radix=5", "sparbit", "sparbit:coalesce=1"}) {
    const AlgorithmChoice c = choice_of(unrestricted);
    EXPECT_FALSE(c.algorithm->eligible) << unrestricted;
  }
}

TEST(AllgatherAlgorithms, SelectorRunsTheFallbackAtIneligibleProcessCounts) {
  std::vector<RuleDiagnostic> diagnostics;
  const std::map<std::string, std::string> variables = {{"COLLSHIM_ALLGATHER", "recursive_doubling"},
                                                        {"COLLSHIM_ALLGATHERV", "neighbor_exchange"}};
  const Selector selector(read_environment([&](const char* name) -> const char* {
                            const auto found = variables.find(name);
                            return found == variables.end() ? nullptr : found->second.c_str();
                          }),
                          RuleTable{}, diagnostics);
  ASSERT_TRUE(diagnostics.empty());
  auto decide = [&](Collective c, int p) {
    return selector.decide({c, p, 64, MappingClass::single_node, 1, p, false});
  };
  EXPECT_EQ(decide(Collective::allgather, 8).choice->text(), "recursive_doubling");
  const Decision rd6 = decide(Collective::allgather, 6);
  EXPECT_EQ(rd6.choice->text(), "bruck");
  EXPECT_EQ(rd6.requested->text(), "recursive_doubling");
  EXPECT_EQ(decide(Collective::allgatherv, 6).choice->text(), "neighbor_exchange");
  EXPECT_EQ(decide(Collective::allgatherv, 5).choice->text(), "ring");
}

TEST(AllgatherAlgorithms, ParametersAreValidatedAndPrintedCanonically) {
  EXPECT_EQ(choice_of("bruck:radix=4").text(), "bruck:radix=4");
  EXPECT_EQ(choice_of("bruck:radix=2").text(), "bruck");
  EXPECT_EQ(choice_of("sparbit:coalesce=1").text(), "sparbit:coalesce=1");
  EXPECT_EQ(choice_of("sparbit:coalesce=0").text(), "sparbit");
  for (const char* bad : {"bruck:radix=1", "bruck:radix=65", "bruck:radix=x", "sparbit:coalesce=2"})
    EXPECT_FALSE(parse_algorithm_spec(bad, Collective::allgather).choice) << bad;
}

// (distance, blocks sent) per step of the thesis's Algorithm 1 (Loch, "Sparbit: a new logarithmic-cost
// and data locality-aware MPI Allgather algorithm", 2021), from an independent simulation of it.
TEST(AllgatherAlgorithms, SparbitStepsMatchTheThesis) {
  using Steps = std::vector<std::pair<int, int>>;
  const std::map<int, Steps> thesis = {
      {5, {{4, 1}, {2, 1}, {1, 2}}},
      {6, {{4, 1}, {2, 1}, {1, 3}}},
      {7, {{4, 1}, {2, 2}, {1, 3}}},
      {12, {{8, 1}, {4, 1}, {2, 3}, {1, 6}}},
      {21, {{16, 1}, {8, 1}, {4, 3}, {2, 5}, {1, 10}}},
      {31, {{16, 1}, {8, 2}, {4, 4}, {2, 8}, {1, 15}}},
      {100, {{64, 1}, {32, 2}, {16, 3}, {8, 6}, {4, 12}, {2, 25}, {1, 50}}},
  };
  std::map<int, Steps> powers_of_two;  // "p = 2^k: 1, 2, 4, ..., p/2 blocks; no ignores"
  for (int p = 2; p <= 128; p *= 2) {
    for (int d = p / 2, blocks = 1; d >= 1; d /= 2, blocks *= 2) powers_of_two[p].emplace_back(d, blocks);
  }
  for (const std::map<int, Steps>* table : {&thesis, &std::as_const(powers_of_two)}) {
    for (const auto& [p, expected] : *table) {
      for (const char* spec : {"sparbit", "sparbit:coalesce=1"}) {
        for (int rank = 0; rank < p; ++rank) {
          const BlockSchedule schedule = schedule_of(spec, p, rank);
          Steps actual;
          for (const BlockStep& step : schedule.steps) {
            // All of a step's messages go to rank+d and come from rank-d.
            const int d = (step.sends.front().peer - rank + p) % p;
            int blocks = 0;
            for (const BlockTransfer& send : step.sends) {
              EXPECT_EQ(send.peer, (rank + d) % p);
              blocks += static_cast<int>(send.blocks.size());
            }
            for (const BlockTransfer& recv : step.recvs) EXPECT_EQ(recv.peer, (rank - d + p) % p);
            actual.emplace_back(d, blocks);
            // Per-block messages are the thesis's version; coalesce=1 batches a step into one.
            const std::size_t messages = spec == std::string("sparbit") ? static_cast<std::size_t>(blocks) : 1;
            EXPECT_EQ(step.sends.size(), messages) << spec << " p=" << p;
          }
          EXPECT_EQ(actual, expected) << spec << " p=" << p << " rank=" << rank;
        }
      }
    }
  }
}

// Bruck messages carry blocks of consecutive ranks modulo p: at most two contiguous runs in recvbuf.
TEST(AllgatherAlgorithms, BruckMessagesAreRunsOfConsecutiveRanks) {
  for (int radix : {2, 3, 4, 8, 64}) {
    const std::string spec = "bruck:radix=" + std::to_string(radix);
    for (int p = 1; p <= 70; ++p) {
      for (int rank = 0; rank < p; ++rank) {
        for (const BlockStep& step : schedule_of(spec, p, rank).steps) {
          for (const auto* transfers : {&step.sends, &step.recvs}) {
            for (const BlockTransfer& t : *transfers) {
              int runs = 1;
              for (std::size_t i = 1; i < t.blocks.size(); ++i) {
                ASSERT_EQ(t.blocks[i], (t.blocks[i - 1] + 1) % p) << spec << " p=" << p;
                if (t.blocks[i] != t.blocks[i - 1] + 1) ++runs;
              }
              EXPECT_LE(runs, 2);
            }
          }
        }
      }
    }
  }
}

// Recursive doubling and neighbor exchange are pairwise: in each step a rank sends to and receives
// from the same single peer; neighbor exchange's peers are its two ring neighbours.
TEST(AllgatherAlgorithms, RecursiveDoublingAndNeighborExchangeArePairwise) {
  for (int p = 2; p <= 130; p += 2) {
    for (int rank = 0; rank < p; ++rank) {
      for (const char* spec : {"recursive_doubling", "neighbor_exchange"}) {
        const bool rd = spec == std::string("recursive_doubling");
        if (rd && !power_of_two(p)) continue;
        const BlockSchedule schedule = schedule_of(spec, p, rank);
        for (std::size_t s = 0; s < schedule.steps.size(); ++s) {
          const BlockStep& step = schedule.steps[s];
          ASSERT_EQ(step.sends.size(), 1u);
          ASSERT_EQ(step.recvs.size(), 1u);
          EXPECT_EQ(step.sends[0].peer, step.recvs[0].peer);
          const int peer = step.sends[0].peer;
          if (rd) {
            EXPECT_EQ(peer, rank ^ (1 << s));
          } else {
            // Thesis table: even r talks to r + (-1)^s, odd r to r - (-1)^s.
            const int sign = (s % 2 == 0) == (rank % 2 == 0) ? 1 : -1;
            EXPECT_EQ(peer, (rank + sign + p) % p) << "p=" << p << " rank=" << rank << " step=" << s;
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace collshim
