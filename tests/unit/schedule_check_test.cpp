// The schedule checker itself must catch every kind of broken schedule, or the schedule tests
// prove nothing.
#include <gtest/gtest.h>

#include <functional>

#include "algorithms/schedule_check.hpp"
#include "algorithms/schedules.hpp"

namespace collshim {
namespace {

BlockSchedule ring(int p, int rank) { return ring_schedule(p, rank, {}); }
// The ring for p ranks as the simulator wants it.
std::function<BlockSchedule(int)> ring_of(int p) {
  return [p](int rank) { return ring(p, rank); };
}

bool mentions(const CheckResult& result, const std::string& text) {
  for (const auto& e : result.errors) {
    if (e.find(text) != std::string::npos) return true;
  }
  return false;
}

TEST(ScheduleCheck, AcceptsTheRing) { EXPECT_TRUE(check_block_schedules(7, ring_of(7)).ok()); }

TEST(ScheduleCheck, RejectsSendingABlockNotYetHeld) {
  // Rank 0 forwards in step 0 the block it only receives in step 0.
  auto broken = [](int rank) {
    BlockSchedule s = ring(5, rank);
    if (rank == 0) s.steps[0].sends[0].blocks = {4};
    if (rank == 1) s.steps[0].recvs[0].blocks = {4};
    return s;
  };
  const auto result = check_block_schedules(5, broken);
  EXPECT_FALSE(result.ok());
  EXPECT_TRUE(mentions(result, "does not hold"));
}

TEST(ScheduleCheck, RejectsAMissingBlock) {
  auto broken = [](int rank) {
    BlockSchedule s = ring(4, rank);
    s.steps.back().sends.clear();
    s.steps.back().recvs.clear();
    return s;
  };
  const auto result = check_block_schedules(4, broken);
  EXPECT_FALSE(result.ok());
  EXPECT_TRUE(mentions(result, "holds block"));
}

TEST(ScheduleCheck, RejectsABlockReceivedTwice) {
  auto broken = [](int rank) {
    BlockSchedule s = ring(3, rank);
    s.steps.push_back(s.steps.front());
    return s;
  };
  const auto result = check_block_schedules(3, broken);
  EXPECT_FALSE(result.ok());
  EXPECT_TRUE(mentions(result, "a second time"));
}

TEST(ScheduleCheck, RejectsSenderAndReceiverDisagreeingOnBlockOrder) {
  auto broken = [](int rank) {
    BlockSchedule s = ring(4, rank);
    // Step 1: send two blocks; the receiver lists them in the other order.
    if (rank == 0) s.steps[1].sends[0].blocks = {0, 3};
    if (rank == 1) s.steps[1].recvs[0].blocks = {3, 0};
    return s;
  };
  const auto result = check_block_schedules(4, broken);
  EXPECT_FALSE(result.ok());
  EXPECT_TRUE(mentions(result, "expects"));
}

TEST(ScheduleCheck, RejectsUnmatchedSendsAndUnequalStepCounts) {
  auto extra_send = [](int rank) {
    BlockSchedule s = ring(3, rank);
    if (rank == 2) s.steps[0].sends.push_back({0, {2}});
    return s;
  };
  EXPECT_TRUE(mentions(check_block_schedules(3, extra_send), "never received"));
  auto short_rank = [](int rank) {
    BlockSchedule s = ring(3, rank);
    if (rank == 1) s.steps.pop_back();
    return s;
  };
  EXPECT_TRUE(mentions(check_block_schedules(3, short_rank), "steps"));
}

TEST(ScheduleCheck, CountsStepsMessagesAndBlocks) {
  const auto result = check_block_schedules(6, ring_of(6));
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result.stats.steps, 5);
  EXPECT_EQ(result.stats.messages_sent, std::vector<long>(6, 5));
  EXPECT_EQ(result.stats.blocks_sent, std::vector<long>(6, 5));
}

}  // namespace
}  // namespace collshim
