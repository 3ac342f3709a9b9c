// The schedule checker itself must catch every kind of broken schedule, or the schedule tests
// prove nothing.
#include <gtest/gtest.h>

#include <functional>

#include "algorithms/engine/schedule_check.hpp"
#include "algorithms/alltoall/alltoallv_algorithms.hpp"
#include "algorithms/allgather/allgather_algorithms.hpp"

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

// The rules of the common form that the allgather block form cannot break.
std::function<Schedule(int)> linear_alltoallv_of(int p) {
  return [p](int rank) { return linear_alltoallv_schedule(std::vector<int>(p, 0), rank, {}); };
}

TEST(ScheduleCheck, AcceptsTheLinearAlltoallv) {
  EXPECT_TRUE(check_schedules({BlockNaming::alltoall, 5, {}}, linear_alltoallv_of(5)).ok());
}

TEST(ScheduleCheck, RejectsWritingIntoTheSendBuffer) {
  auto broken = [](int rank) {
    Schedule s = lower_block_schedule(ring(4, rank), rank);
    s.steps[1].recvs[0].region.buffer = Buffer::send;  // typed both ways, so only the target is wrong
    return s;
  };
  EXPECT_TRUE(mentions(check_schedules({BlockNaming::allgather, 4, {}}, broken), "writes into the user's send buffer"));
}

TEST(ScheduleCheck, RejectsTheWrongDataInABlock) {
  // A message: rank 1 sends rank 0 its data for rank 2 where rank 0 expects rank 2's data for it.
  auto wrong_message = [](int rank) {
    Schedule s = linear_alltoallv_of(3)(rank);
    for (Transfer& send : s.steps[0].sends)
      if (rank == 1 && send.peer == 0) send.region.blocks = {2};
    for (Transfer& recv : s.steps[0].recvs)
      if (rank == 0 && recv.peer == 1) recv.region.blocks = {2};
    return s;
  };
  EXPECT_TRUE(mentions(check_schedules({BlockNaming::alltoall, 3, {}}, wrong_message),
                       "rank 1 sends send{2} but rank 0 expects recv{2}"));
  // A copy: rank 0 puts its own block where rank 1's data for it belongs.
  auto wrong_copy = [](int rank) {
    Schedule s = linear_alltoallv_of(3)(rank);
    if (rank == 0) s.steps[0].copies[0].to.blocks = {1};
    return s;
  };
  const CheckResult result = check_schedules({BlockNaming::alltoall, 3, {}}, wrong_copy);
  EXPECT_TRUE(mentions(result, "gets datum 0 in recv block 1, which holds datum 3")) << result.errors.front();
}

TEST(ScheduleCheck, RejectsTypedSentAndPackedReceived) {
  auto broken = [](int rank) {
    Schedule s = linear_alltoallv_of(3)(rank);
    for (Transfer& recv : s.steps[0].recvs) recv.region.buffer = Buffer::scratch;
    return s;
  };
  EXPECT_TRUE(mentions(check_schedules({BlockNaming::alltoall, 3, {}}, broken), "expects scratch{"));
}

TEST(ScheduleCheck, RejectsForwardingBeforeHolding) {
  // Rank 0 forwards rank 1's block for rank 2 in the step it arrives.
  auto broken = [](int rank) {
    Schedule s = linear_alltoallv_of(3)(rank);
    if (rank == 1) s.steps[0].copies.push_back({{Buffer::send, {2}}, {Buffer::scratch, {1 * 3 + 2}}});
    if (rank == 1) s.steps[0].sends.push_back({0, {Buffer::scratch, {1 * 3 + 2}}});
    if (rank == 0) s.steps[0].recvs.push_back({1, {Buffer::scratch, {1 * 3 + 2}}});
    if (rank == 0) s.steps[0].sends.push_back({2, {Buffer::scratch, {1 * 3 + 2}}});
    if (rank == 2) s.steps[0].recvs.push_back({0, {Buffer::scratch, {1 * 3 + 2}}});
    return s;
  };
  const CheckResult result = check_schedules({BlockNaming::alltoall, 3, {}}, broken);
  EXPECT_TRUE(mentions(result, "rank 0 sends scratch block 5 it does not hold")) << result.errors.front();
}

TEST(ScheduleCheck, CountsSkippedMessagesAndHeaders) {
  // Three ranks, rank 0 sends nothing: its two messages are empty on both sides and skipped.
  const auto bytes = [](std::int64_t datum) { return datum / 3 == 0 ? 0LL : 4LL; };
  const CheckResult result = check_schedules({BlockNaming::alltoall, 3, bytes}, linear_alltoallv_of(3));
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result.stats.messages_sent, (std::vector<long>{0, 2, 2}));
  EXPECT_EQ(result.stats.bytes_sent, (std::vector<long long>{0, 8, 8}));
}

// Reductions belong to reduction collectives (their model: allreduce_schedule_test.cpp).
TEST(ScheduleCheck, FlagsReductionsOutsideAReduction) {
  auto reducing = [](int rank) {
    Schedule s = lower_block_schedule(ring(2, rank), rank);
    s.steps[0].reductions.push_back({{Buffer::recv, {rank}}, {Buffer::recv, {rank}}});
    return s;
  };
  EXPECT_TRUE(mentions(check_schedules({BlockNaming::allgather, 2, {}}, reducing), "not a reduction"));
}

}  // namespace
}  // namespace collshim
