// An Alltoallv's pattern as the shim gathers it (alltoall_summary.hpp, model_step.hpp): each rank's
// summary holds what its counts say, the pattern rebuilt from the summaries keeps every rank's
// totals and degrees, and the uniform exchange comes back as the uniform call, costed alike.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "decide/collective_steps.hpp"
#include "decide/model_step.hpp"
#include "model/cost/alltoall_summary.hpp"
#include "model/cost/call_prediction.hpp"
#include "model/cost/model_decision.hpp"
#include "model/library/native_decision.hpp"
#include "selector/tuning_candidates.hpp"

#include "node_maps.hpp"

namespace collshim::model {
namespace {

using test::round_robin;
using test::sequential;

// A pattern as every origin's bytes to each destination (p x p, origin by origin).
using PairBytes = std::vector<std::vector<long long>>;

std::vector<long long> received_by(const PairBytes& bytes, int destination) {
  std::vector<long long> received;
  for (const auto& row : bytes) received.push_back(row[static_cast<std::size_t>(destination)]);
  return received;
}

std::vector<AlltoallRankSummary> summaries_by_rank(const PairBytes& bytes, const std::vector<int>& nodes) {
  std::vector<AlltoallRankSummary> all;
  for (int rank = 0; rank < static_cast<int>(bytes.size()); ++rank)
    all.push_back(summarize_rank(rank, bytes[static_cast<std::size_t>(rank)], received_by(bytes, rank), nodes));
  return all;
}

// collshim's Alltoallv candidates that the model costs.
std::vector<AlgorithmChoice> alltoallv_choices() {
  std::vector<AlgorithmChoice> choices;
  for (const std::string& spec : tuning_candidates(Collective::alltoallv)) {
    const SpecParseResult parsed = parse_algorithm_spec(spec, Collective::alltoallv);
    if (parsed.choice && parsed.choice->algorithm->make_schedule) choices.push_back(*parsed.choice);
  }
  return choices;
}

PairBytes pair_bytes_of(const AlltoallBlocks& blocks, int p) {
  PairBytes bytes(static_cast<std::size_t>(p), std::vector<long long>(static_cast<std::size_t>(p), 0));
  for (int origin = 0; origin < p; ++origin)
    for (int destination = 0; destination < p; ++destination)
      bytes[static_cast<std::size_t>(origin)][static_cast<std::size_t>(destination)] =
          blocks.bytes(origin, destination);
  return bytes;
}

TEST(AlltoallSummary, ARanksSummaryIsWhatItsCountsSay) {
  // Two nodes of four: rank 0 keeps 3 B, sends 10 B on its node (to 1) and 20 B and 5 B off it (to 5
  // and 6), and receives from 2 (on its node) and 7 (off it).
  const std::vector<int> nodes = sequential(8, 4);
  const std::vector<long long> sent{3, 10, 0, 0, 0, 20, 5, 0};
  const std::vector<long long> received{9, 0, 4, 0, 0, 0, 0, 1};
  const AlltoallRankSummary summary = summarize_rank(0, sent, received, nodes);
  const AlltoallRankSummary expected{.own_bytes = 3,
                                     .sent_bytes = 35,
                                     .destinations = 3,
                                     .node_destinations = 1,
                                     .node_sent_bytes = 10,
                                     .largest_bytes = 20,
                                     .sources = 2,
                                     .node_sources = 1};
  EXPECT_EQ(summary, expected);
  // Gathered as summary_fields values per rank, and read back.
  const std::vector<long long> values = summary_values(summary);
  ASSERT_EQ(values.size(), summary_fields);
  std::vector<long long> two = values;
  two.insert(two.end(), values.begin(), values.end());
  EXPECT_EQ(summaries_of(two), (std::vector<AlltoallRankSummary>{expected, expected}));
  EXPECT_THROW(summaries_of({1, 2, 3}), std::invalid_argument);
}

// Every rank's record of the rebuilt pattern is the original's: the same own block, bytes and
// destinations on and off its node, largest block. The receivers are drawn: a hot spot stays one
// exactly, and elsewhere few ranks receive from one more or one fewer than they do.
TEST(AlltoallSummary, TheRebuiltPatternKeepsEveryRanksSummary) {
  const int p = 48;
  for (const std::vector<int>& nodes : {sequential(p, 8), round_robin(p, 6), sequential(p, 1)}) {
    PairBytes hot_spot(p, std::vector<long long>(p, 0)), shift = hot_spot, mixed = hot_spot;
    for (int r = 1; r < p; ++r) hot_spot[static_cast<std::size_t>(r)][0] = 64;
    for (int r = 0; r < p; ++r) {
      for (const int k : {1, 3, 7}) shift[static_cast<std::size_t>(r)][static_cast<std::size_t>((r + k) % p)] = 100;
      // Blocks of different sizes, some ranks sending to many, own blocks on some.
      for (int d = 0; d < p; ++d)
        if ((r * 7 + d * 3) % (r % 5 + 2) == 0)
          mixed[static_cast<std::size_t>(r)][static_cast<std::size_t>(d)] = 1 + (r * d) % 97;
    }
    for (const auto& [name, pattern] : {std::pair{"hot_spot", hot_spot}, {"shift", shift}, {"mixed", mixed}}) {
      const std::vector<AlltoallRankSummary> original = summaries_by_rank(pattern, nodes);
      const AlltoallBlocks rebuilt = blocks_from_summaries(original, nodes, 1);
      ASSERT_FALSE(rebuilt.uniform()) << name;
      const std::vector<AlltoallRankSummary> again = summaries_by_rank(pair_bytes_of(rebuilt, p), nodes);
      long long sources = 0, drift = 0;
      for (int r = 0; r < p; ++r) {
        AlltoallRankSummary got = again[static_cast<std::size_t>(r)];
        const AlltoallRankSummary& expected = original[static_cast<std::size_t>(r)];
        sources += expected.sources;
        drift += std::abs(got.sources - expected.sources) + std::abs(got.node_sources - expected.node_sources);
        if (std::string(name) == "hot_spot") EXPECT_EQ(got, expected) << name << " rank " << r;
        got.sources = expected.sources, got.node_sources = expected.node_sources;
        EXPECT_EQ(got, expected) << name << " rank " << r;
      }
      EXPECT_LE(drift * 20, sources) << name << ": receivers drawn more than 5% off";
      // Deterministic: the same summaries give the same blocks.
      EXPECT_EQ(blocks_from_summaries(original, nodes, 1).sending, rebuilt.sending) << name;
    }
  }
}

// Nearly every pair non-empty, and not uniform, at a p where that would list nearly p² blocks:
// every pair at the average instead.
TEST(AlltoallSummary, ADenseIrregularPatternIsCostedAtTheAverage) {
  const int p = 2 * static_cast<int>(max_rebuilt_blocks_per_rank);
  PairBytes dense(p, std::vector<long long>(p, 8));
  dense[3][5] = 9;
  const AlltoallBlocks blocks =
      blocks_from_summaries(summaries_by_rank(dense, sequential(p, 16)), sequential(p, 16), 8);
  ASSERT_TRUE(blocks.uniform());
  EXPECT_EQ(blocks.every_pair_bytes, 8);
}

// Every pair holding the same bytes: the summary gives the uniform call, which the model costs as
// it costs that call (the rank symmetry applies), pick and predictions alike.
TEST(AlltoallSummary, AUniformExchangeCostsAsTheUniformCall) {
  const int p = 32;
  for (const std::vector<int>& nodes : {sequential(p, 8), round_robin(p, 4)}) {
    for (const long long bytes : {0LL, 8LL, 4096LL}) {
      // collshim-config explain's steps: one process standing for every rank, all holding its counts.
      SoloSteps steps(p);
      const std::vector<long long> every(static_cast<std::size_t>(p), bytes);
      ModelCall summarized{Collective::alltoallv, p, bytes};
      summarized.pairs = gather_alltoall_pattern(steps, every, every, nodes, bytes + 1);
      ASSERT_TRUE(summarized.pairs.uniform()) << bytes;
      EXPECT_EQ(summarized.pairs.every_pair_bytes, bytes);
      summarized.bytes = summarized.pairs.every_pair_bytes;
      const ModelCall uniform{Collective::alltoallv, p, bytes};
      if (bytes == 0) continue;
      Platform platform;
      platform.name = "test";
      for (Channel* channel : {&platform.shm, &platform.net}) {
        channel->overhead_us = channel == &platform.net ? 1.3 : 0.4;
        channel->transfer.push_back({1, channel == &platform.net ? 2.0 : 0.3, 1.5});
      }
      for (const AlgorithmChoice& choice : alltoallv_choices()) {
        const Prediction a = predict_algorithm(platform, summarized, nodes, choice).prediction;
        const Prediction b = predict_algorithm(platform, uniform, nodes, choice).prediction;
        EXPECT_EQ(a.us, b.us) << choice.text();
        EXPECT_EQ(a.ranks_costed, b.ranks_costed) << choice.text();
      }
    }
  }
}

}  // namespace
}  // namespace collshim::model
