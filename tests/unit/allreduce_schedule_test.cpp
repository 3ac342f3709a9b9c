// Every Allreduce schedule for p = 1..130, checked without MPI: every rank ends with every segment
// combining all p contributions exactly once, in rank order where the schedule claims to keep it;
// and the checker's reduction model rejects schedules that reduce twice, out of order or miss one.
#include <gtest/gtest.h>

#include <functional>
#include <set>

#include "algorithms/allreduce/allreduce_algorithms.hpp"
#include "algorithms/engine/schedule_check.hpp"

namespace collshim {
namespace {

using Generator = std::function<Schedule(const std::vector<int>&, int, const Params&)>;

CheckResult check_allreduce(int p, bool ordered, const std::function<Schedule(int)>& schedule_of) {
  CheckSetup setup;
  setup.naming = BlockNaming::reduction;
  setup.p = p;
  setup.ordered = ordered;
  return check_schedules(setup, schedule_of);
}

CheckResult check_generator(const Generator& generate, int p, bool ordered, const Params& params = {}) {
  const std::vector<int> nodes(static_cast<std::size_t>(p), 0);
  return check_allreduce(p, ordered, [&](int rank) { return generate(nodes, rank, params); });
}

std::string first_error(const CheckResult& result) { return result.ok() ? "" : result.errors.front(); }

bool mentions(const CheckResult& result, const std::string& text) {
  for (const auto& e : result.errors)
    if (e.find(text) != std::string::npos) return true;
  return false;
}

Params multiplying_params(int k, std::string factors = "auto", std::string primes = "split") {
  return {{"k", std::to_string(k)}, {"factors", factors}, {"primes", primes}};
}

TEST(AllreduceSchedules, RecursiveDoublingKeepsRankOrderForEveryP) {
  for (int p = 1; p <= 130; ++p) {
    const auto result = check_generator(allreduce_recursive_doubling_schedule, p, true);
    ASSERT_TRUE(result.ok()) << "p=" << p << ": " << first_error(result);
  }
}

TEST(AllreduceSchedules, RabenseifnerKeepsRankOrderForEveryP) {
  for (int p = 1; p <= 130; ++p) {
    const auto result = check_generator(allreduce_rabenseifner_schedule, p, true);
    ASSERT_TRUE(result.ok()) << "p=" << p << ": " << first_error(result);
  }
}

TEST(AllreduceSchedules, RecursiveMultiplyingKeepsRankOrderForEveryPAndK) {
  for (const int k : {2, 3, 4, 8}) {
    for (int p = 1; p <= 130; ++p) {
      const auto result = check_generator(allreduce_recursive_multiplying_schedule, p, true, multiplying_params(k));
      ASSERT_TRUE(result.ok()) << "k=" << k << " p=" << p << ": " << first_error(result);
    }
  }
}

TEST(AllreduceSchedules, RecursiveMultiplyingWithTheFactorsOfThePaper) {
  for (const auto& [p, factors] :
       std::vector<std::pair<int, std::string>>{{8, "2x4"}, {12, "3x4"}, {96, "8x3x4"}, {128, "8x4x4"}, {6, "6"}}) {
    const auto result =
        check_generator(allreduce_recursive_multiplying_schedule, p, true, multiplying_params(4, factors));
    EXPECT_TRUE(result.ok()) << factors << ": " << first_error(result);
  }
}

TEST(AllreduceSchedules, RecursiveMultiplyingWithPrimeMergingForEveryPAndK) {
  for (const int k : {2, 3, 4, 8}) {
    for (int p = 1; p <= 130; ++p) {
      const auto result =
          check_generator(allreduce_recursive_multiplying_schedule, p, false, multiplying_params(k, "auto", "merge"));
      ASSERT_TRUE(result.ok()) << "k=" << k << " p=" << p << ": " << first_error(result);
    }
  }
}

// Merging takes no extra steps where splitting takes two, and does not keep rank order.
TEST(AllreduceSchedules, PrimeMergingSavesTheCollapseAndExpandButNeedsCommutativity) {
  const std::vector<int> nodes7(7, 0);
  const auto split = allreduce_recursive_multiplying_schedule(nodes7, 0, multiplying_params(4));
  const auto merge = allreduce_recursive_multiplying_schedule(nodes7, 0, multiplying_params(4, "auto", "merge"));
  const auto merging = plan_prime_merging(7, 4);
  ASSERT_TRUE(merging);
  EXPECT_EQ(merging->factors, (std::vector<int>{3, 2}));
  // Rounds of messages: merging's are its two stages; splitting adds collapse and expand to its one.
  const auto message_rounds = [](const std::function<Schedule(int)>& schedule_of, int p) {
    std::set<std::size_t> rounds;
    for (int rank = 0; rank < p; ++rank) {
      const Schedule s = schedule_of(rank);
      for (std::size_t i = 0; i < s.steps.size(); ++i)
        if (!s.steps[i].sends.empty()) rounds.insert(i);
    }
    return rounds.size();
  };
  EXPECT_EQ(message_rounds(
                [&](int r) {
                  return allreduce_recursive_multiplying_schedule(nodes7, r, multiplying_params(4, "auto", "merge"));
                },
                7),
            2u);
  EXPECT_EQ(message_rounds(
                [&](int r) { return allreduce_recursive_multiplying_schedule(nodes7, r, multiplying_params(4)); }, 7),
            3u);
  EXPECT_EQ(split.steps.size(), merge.steps.size() - 1);
  EXPECT_FALSE(plan_prime_merging(8, 4));  // 8 factors: nothing to merge
  const auto result =
      check_generator(allreduce_recursive_multiplying_schedule, 7, true, multiplying_params(4, "auto", "merge"));
  EXPECT_TRUE(mentions(result, "out of rank order"));
}

TEST(AllreduceSchedules, RingIsCorrectForCommutativeOperations) {
  for (int p = 1; p <= 130; ++p) {
    const auto result = check_generator(allreduce_ring_schedule, p, false);
    ASSERT_TRUE(result.ok()) << "p=" << p << ": " << first_error(result);
  }
}

// The ring combines around the ring, not in rank order: the checker must see it.
TEST(AllreduceSchedules, RingIsRejectedWhereOrderMatters) {
  const auto result = check_generator(allreduce_ring_schedule, 5, true);
  EXPECT_FALSE(result.ok());
  EXPECT_TRUE(mentions(result, "out of rank order"));
}

TEST(AllreduceSchedules, StepCounts) {
  const std::vector<int> nodes8(8, 0);
  // One step per stage, plus the first copy, the last reduction and the expand step (the messages
  // of the fold and unfold share the first and last).
  EXPECT_EQ(allreduce_recursive_doubling_schedule(nodes8, 0, {}).steps.size(), 3u + 3u);
  EXPECT_EQ(allreduce_recursive_doubling_schedule(std::vector<int>(12, 0), 0, {}).steps.size(), 3u + 3u);
  EXPECT_EQ(allreduce_ring_schedule(nodes8, 0, {}).steps.size(), 14u);
  EXPECT_EQ(allreduce_recursive_multiplying_schedule(nodes8, 0, multiplying_params(8)).steps.size(), 1u + 3u);
  EXPECT_EQ(allreduce_rabenseifner_schedule(nodes8, 0, {}).steps.size(), 2u * 3u + 3u);
}

// Checker self-tests: broken reductions.
Schedule doubling(int p, int rank) { return allreduce_recursive_doubling_schedule(std::vector<int>(p, 0), rank, {}); }

TEST(AllreduceCheck, RejectsAContributionReducedTwice) {
  // Rank 1 adds what it received a second time.
  auto broken = [](int rank) {
    Schedule s = doubling(4, rank);
    if (rank == 1) s.steps[2].reductions.push_back(s.steps[2].reductions.front());
    return s;
  };
  const auto result = check_allreduce(4, false, broken);
  EXPECT_FALSE(result.ok());
  EXPECT_TRUE(mentions(result, "twice"));
}

TEST(AllreduceCheck, RejectsOperandsOutOfOrder) {
  // Rank 1 puts its own result on the left of rank 0's (and moves the result to recvbuf from where
  // that leaves it).
  auto broken = [](int rank) {
    Schedule s = doubling(2, rank);
    if (rank == 1) {
      LocalReduce& reduce = s.steps[2].reductions.front();
      std::swap(reduce.from, reduce.into);
      s.steps[3].copies.front().from = reduce.into;
    }
    return s;
  };
  EXPECT_TRUE(check_allreduce(2, false, broken).ok());  // commutative: either side is fine
  const auto result = check_allreduce(2, true, broken);
  EXPECT_FALSE(result.ok());
  EXPECT_TRUE(mentions(result, "out of rank order"));
}

TEST(AllreduceCheck, RejectsAMissingContribution) {
  // Rank 3 drops its last reduction.
  auto broken = [](int rank) {
    Schedule s = doubling(4, rank);
    if (rank == 3) s.steps[3].reductions.clear();
    return s;
  };
  const auto result = check_allreduce(4, false, broken);
  EXPECT_FALSE(result.ok());
  EXPECT_TRUE(mentions(result, "not all 4 ranks"));
}

TEST(AllreduceCheck, RejectsReadingTheSendBufferAfterWritingRecv) {
  // With MPI_IN_PLACE, send is recv: sending the "send" segment after recv changed is wrong.
  auto broken = [](int rank) {
    Schedule s = doubling(2, rank);
    s.steps[1].sends.front().region.buffer = Buffer::send;
    return s;
  };
  const auto result = check_allreduce(2, false, broken);
  EXPECT_FALSE(result.ok());
  EXPECT_TRUE(mentions(result, "does not hold"));
}

TEST(AllreduceCheck, RejectsReducingDifferentSegments) {
  auto broken = [](int rank) {
    Schedule s = allreduce_ring_schedule(std::vector<int>(3, 0), rank, {});
    if (rank == 0) s.steps[1].reductions.front().into.blocks = {1};
    return s;
  };
  EXPECT_FALSE(check_allreduce(3, false, broken).ok());
}

TEST(AllreduceCheck, RejectsReceivingIntoWhatTheStepSends) {
  auto broken = [](int rank) {
    Schedule s = doubling(2, rank);
    s.steps[1].recvs.front().region = s.steps[1].sends.front().region;
    return s;
  };
  const auto result = check_allreduce(2, false, broken);
  EXPECT_FALSE(result.ok());
  EXPECT_TRUE(mentions(result, "while the same step sends it"));
}

}  // namespace
}  // namespace collshim
