// Regions keep their blocks as runs: the list must read exactly as the sequence it was given,
// compare by content, and the bytes summed per run must equal the bytes summed per block.
#include <gtest/gtest.h>

#include <numeric>
#include <random>
#include <vector>

#include "algorithms/engine/block_list.hpp"
#include "algorithms/engine/call_layout.hpp"
#include "algorithms/engine/schedule_check.hpp"

namespace collshim {
namespace {

std::vector<std::int64_t> as_vector(const BlockList& list) { return {list.begin(), list.end()}; }

TEST(BlockList, ReadsAsTheSequenceItWasGiven) {
  std::mt19937 random(7);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<std::int64_t> blocks;
    BlockList list;
    const int n = static_cast<int>(random() % 40);
    for (int i = 0; i < n; ++i) {
      // Runs, repeats, steps back and gaps, as schedules make them.
      const std::int64_t next = blocks.empty() ? random() % 8 : blocks.back() + static_cast<int>(random() % 5) - 1;
      if (random() % 3 == 0) {
        const std::int64_t count = random() % 6;
        list.append_run(next, count);
        for (std::int64_t j = 0; j < count; ++j) blocks.push_back(next + j);
      } else {
        list.push_back(next);
        blocks.push_back(next);
      }
    }
    ASSERT_EQ(list.size(), blocks.size());
    EXPECT_EQ(list.empty(), blocks.empty());
    EXPECT_EQ(as_vector(list), blocks);
    for (std::size_t i = 0; i < blocks.size(); ++i) ASSERT_EQ(list[i], blocks[i]) << "index " << i;
    if (!blocks.empty()) {
      EXPECT_EQ(list.front(), blocks.front());
      EXPECT_EQ(list.back(), blocks.back());
    }
    // Built block by block or from the vector: the same list, the same runs.
    EXPECT_EQ(BlockList(blocks), list);
    EXPECT_EQ(BlockList(blocks.begin(), blocks.end()).runs(), list.runs());
    // Runs are maximal: no run continues the one before it.
    for (std::size_t r = 1; r < list.runs().size(); ++r)
      EXPECT_NE(list.runs()[r - 1].first + list.runs()[r - 1].count, list.runs()[r].first);
  }
}

TEST(BlockList, ComparesByContent) {
  BlockList a, b;
  a.append_run(3, 4);
  for (const std::int64_t block : {3, 4, 5, 6}) b.push_back(block);
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.runs().size(), 1U);
  b.push_back(8);
  EXPECT_NE(a, b);
  EXPECT_EQ(b.runs().size(), 2U);
  EXPECT_NE(BlockList({1, 2}), BlockList({2, 1}));
  a.clear();
  EXPECT_EQ(a, BlockList{});
  a.append_run(5, 0);
  EXPECT_TRUE(a.empty());
}

TEST(BlockList, PairsTwoListsUpToTheShorter) {
  BlockList a, b;
  a.append_run(10, 5);
  b.push_back(1);
  b.append_run(7, 2);
  std::vector<std::pair<std::int64_t, std::int64_t>> pairs;
  for_each_pair(a, b, [&](std::int64_t x, std::int64_t y) { pairs.emplace_back(x, y); });
  EXPECT_EQ(pairs, (std::vector<std::pair<std::int64_t, std::int64_t>>{{10, 1}, {11, 7}, {12, 8}}));
}

TEST(SegmentsElements, IsTheSumOfItsSegments) {
  for (const int p : {1, 2, 3, 7, 16, 33}) {
    for (const long long count : {0LL, 1LL, 5LL, 16LL, 100LL, 1001LL}) {
      for (int first = 0; first <= p; ++first) {
        for (int n = 0; first + n <= p; ++n) {
          long long sum = 0;
          for (int s = first; s < first + n; ++s) sum += segment_elements(count, p, s);
          ASSERT_EQ(segments_elements(count, p, first, n), sum)
              << "p " << p << " count " << count << " [" << first << ", " << first + n << ")";
        }
      }
    }
  }
}

// payload_bytes sums runs of datums where it may: the same bytes as datum by datum, for every
// naming and buffer, with runs that cross a reduction's temp copies and an Alltoall's receive rows.
TEST(PayloadBytes, SummedPerRunEqualsSummedPerDatum) {
  const int p = 7;
  const auto datum_bytes = [](std::int64_t datum) { return 3 * datum * datum % 11 + 1; };
  const auto run_bytes = [&](std::int64_t first, std::int64_t count) {
    long long bytes = 0;
    for (std::int64_t d = first; d < first + count; ++d) bytes += datum_bytes(d);
    return bytes;
  };
  for (const BlockNaming naming :
       {BlockNaming::allgather, BlockNaming::alltoall, BlockNaming::reduction, BlockNaming::gather}) {
    CheckSetup per_datum{naming, p, datum_bytes};
    CheckSetup per_run = per_datum;
    per_run.datum_run_bytes = run_bytes;
    for (const Buffer buffer : {Buffer::send, Buffer::recv, Buffer::scratch, Buffer::temp}) {
      Region region{buffer, {}};
      region.blocks.append_run(2, 12);  // over temp copies 0 and 1 of a reduction
      region.blocks.push_back(20);
      for (int holder = 0; holder < p; ++holder) {
        long long expected = 0;
        for (const std::int64_t block : region.blocks)
          expected += datum_bytes(datum_of(naming, p, holder, buffer, block));
        EXPECT_EQ(payload_bytes(per_datum, holder, region), expected);
        EXPECT_EQ(payload_bytes(per_run, holder, region), expected)
            << "naming " << static_cast<int>(naming) << " buffer " << static_cast<int>(buffer);
      }
    }
  }
}

}  // namespace
}  // namespace collshim
