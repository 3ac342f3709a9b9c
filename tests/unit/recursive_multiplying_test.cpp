// Recursive multiplying beyond the generic schedule checks: the plans match the paper's notation for
// its worked examples, the `factors` parameter is validated and restricts eligibility, and the
// collapse/expand messages carry what the paper says they carry.
#include <gtest/gtest.h>

#include "algorithms/engine/algorithm_spec.hpp"
#include "algorithms/allgather/allgather_recursive_multiplying.hpp"
#include "algorithms/engine/schedule_check.hpp"
#include "algorithms/allgather/allgather_algorithms.hpp"

namespace collshim {
namespace {

TEST(RecursiveMultiplying, PlansUseTheFewestStagesWithGroupsOfAtMostK) {
  EXPECT_EQ(plan_recursive_multiplying(1, 4).notation(), "");
  EXPECT_EQ(plan_recursive_multiplying(4, 4).notation(), "a4");
  EXPECT_EQ(plan_recursive_multiplying(64, 4).notation(), "a4,a4,a4");
  EXPECT_EQ(plan_recursive_multiplying(64, 8).notation(), "a8,a8");
  EXPECT_EQ(plan_recursive_multiplying(6, 8).notation(), "a6");  // paper Table 2, N=6
  EXPECT_EQ(plan_recursive_multiplying(12, 4).notation(), "a4,a3");
  // 96 in three stages of at most 8: 6,4,4 needs 11 messages, the paper's measured a8,a3,a4 needs 12.
  EXPECT_EQ(plan_recursive_multiplying(96, 8).notation(), "a6,a4,a4");
}

TEST(RecursiveMultiplying, AwkwardProcessCountsCollapseAndExpand) {
  // The paper's splitting example for N=7 (Fig. 20) is exactly what k=2 gives; it is MPICH's
  // recursive doubling for non-powers of two.
  EXPECT_EQ(plan_recursive_multiplying(7, 2).notation(), "c6m2,a2,a2,e6m2");
  // With groups of 4 one stage suffices after pairing ranks 0..5.
  EXPECT_EQ(plan_recursive_multiplying(7, 4).notation(), "c6m2,a4,e6m2");
  // p=13: three groups of 4 ranks collapse onto ranks 3, 7, 11, which with rank 12 are 4 virtual
  // ranks: one a4 stage, 3 steps in all (pairs, c12m2..., would need 4).
  EXPECT_EQ(plan_recursive_multiplying(13, 4).notation(), "c12m4,a4,e12m4");
  // 10 = 2x5 factors only from k = 5 up.
  EXPECT_TRUE(plan_recursive_multiplying(10, 4).collapses());
  EXPECT_EQ(plan_recursive_multiplying(10, 5).notation(), "a5,a2");
}

TEST(RecursiveMultiplying, CollapseSendsOwnBlockAndExpandSendsTheRest) {
  // p=7, k=2: c6m2,a2,a2,e6m2. Rank 0 gives its block to 1 and gets the other six back at the end;
  // rank 1 (virtual 0) exchanges {0,1} with rank 3 (virtual 1), then {0..3} with rank 5 (virtual 2),
  // which holds the blocks of virtual ranks 2 and 3 (ranks 4, 5 and 6).
  const auto plan = plan_recursive_multiplying(7, 2);
  const BlockSchedule rank0 = recursive_multiplying_schedule_of(plan, 7, 0);
  ASSERT_EQ(rank0.steps.size(), 4u);
  ASSERT_EQ(rank0.steps[0].sends.size(), 1u);
  EXPECT_EQ(rank0.steps[0].sends[0].peer, 1);
  EXPECT_EQ(rank0.steps[0].sends[0].blocks, std::vector<int>({0}));
  EXPECT_TRUE(rank0.steps[1].sends.empty() && rank0.steps[1].recvs.empty());
  ASSERT_EQ(rank0.steps[3].recvs.size(), 1u);
  EXPECT_EQ(rank0.steps[3].recvs[0].blocks, std::vector<int>({1, 2, 3, 4, 5, 6}));

  const BlockSchedule rank1 = recursive_multiplying_schedule_of(plan, 7, 1);
  ASSERT_EQ(rank1.steps[1].sends.size(), 1u);
  EXPECT_EQ(rank1.steps[1].sends[0].peer, 3);
  EXPECT_EQ(rank1.steps[1].sends[0].blocks, std::vector<int>({0, 1}));
  EXPECT_EQ(rank1.steps[1].recvs[0].blocks, std::vector<int>({2, 3}));
  EXPECT_EQ(rank1.steps[2].sends[0].peer, 5);
  EXPECT_EQ(rank1.steps[2].recvs[0].blocks, std::vector<int>({4, 5, 6}));
  ASSERT_EQ(rank1.steps[3].sends.size(), 1u);
  EXPECT_EQ(rank1.steps[3].sends[0].peer, 0);
}

TEST(RecursiveMultiplying, LargeProcessCountsPlanQuickly) {
  // The collapse search runs once per communicator; a prime p of a million must stay cheap and valid.
  const auto plan = plan_recursive_multiplying(999983, 64);
  ASSERT_TRUE(plan.collapses());
  long long product = 1;
  for (int f : plan.factors) product *= f;
  EXPECT_EQ(product, 999983 - plan.collapse_groups * (plan.collapse_base - 1));
  EXPECT_LE(plan.steps(), 6);
}

TEST(RecursiveMultiplying, FactorListsAreValidated) {
  for (const char* good : {"8x3x4", "2", "7", "64x64", "auto"}) {
    EXPECT_TRUE(
        parse_algorithm_spec(std::string("recursive_multiplying:factors=") + good, Collective::allgather).choice)
        << good;
  }
  for (const char* bad : {"", "1", "8x1", "x", "4x", "x4", "8xx3", "0", "-2", "3.5", "8*3", "65536x65536", "Auto"}) {
    const auto parsed =
        parse_algorithm_spec(std::string("recursive_multiplying:factors=") + bad, Collective::allgather);
    EXPECT_FALSE(parsed.choice) << bad;
    EXPECT_NE(parsed.error.find("joined by 'x'"), std::string::npos) << parsed.error;
  }
  for (const char* bad : {"1", "65", "four"}) {
    EXPECT_FALSE(parse_algorithm_spec(std::string("recursive_multiplying:k=") + bad, Collective::allgather).choice)
        << bad;
  }
}

TEST(RecursiveMultiplying, FactorListIsEligibleOnlyWhereItsProductIsP) {
  const auto parsed = parse_algorithm_spec("recursive_multiplying:factors=8x3x4", Collective::allgatherv);
  ASSERT_TRUE(parsed.choice) << parsed.error;
  const AlgorithmChoice& choice = *parsed.choice;
  EXPECT_EQ(choice.text(), "recursive_multiplying:factors=8x3x4");
  for (int p = 1; p <= 200; ++p) EXPECT_EQ(choice.algorithm->eligible(p, choice.params), p == 96) << p;
  // The stages run in the order given, not re-sorted.
  const BlockSchedule rank0 = choice.algorithm->make_block_schedule(96, 0, choice.params);
  ASSERT_EQ(rank0.steps.size(), 3u);
  EXPECT_EQ(rank0.steps[0].sends.size(), 7u);
  EXPECT_EQ(rank0.steps[1].sends.size(), 2u);
  EXPECT_EQ(rank0.steps[2].sends.size(), 3u);
  // The fallback is the automatic plan.
  EXPECT_EQ(choice.algorithm->fallback, "recursive_multiplying");
}

TEST(RecursiveMultiplying, AllParameterCombinationsGiveCorrectSchedulesForEveryK) {
  // Every k the parameter accepts, not only those with a cost formula; p beyond 130 included.
  for (int k = 2; k <= 64; ++k) {
    for (int p : {1, 2, 3, 5, 7, 11, 13, 17, 31, 61, 67, 127, 131, 211, 257}) {
      const auto plan = plan_recursive_multiplying(p, k);
      const auto result =
          check_block_schedules(p, [&](int rank) { return recursive_multiplying_schedule_of(plan, p, rank); });
      ASSERT_TRUE(result.ok()) << "k=" << k << " p=" << p << " " << plan.notation() << ": " << result.errors.front();
    }
  }
}

}  // namespace
}  // namespace collshim
