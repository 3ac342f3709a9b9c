// Every allgather-family schedule, for every p from 1 to 130 and every parameter variant: the
// simulation of all ranks must end with every block exactly once at every rank, never send a block
// before it is held, and match the algorithm's cost formula (steps, messages, blocks per rank).
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <string>

#include "algorithms/algorithm_spec.hpp"
#include "algorithms/schedule_simulation.hpp"

namespace collshim {
namespace {

constexpr int max_procs = 130;

struct CostFormula {
  std::string spec;
  // Returns an empty string if the stats match the formula for p, else what differs.
  std::function<std::string(int p, const ScheduleStats& stats)> check;
};

std::string expect_equal(const char* what, long actual, long expected) {
  if (actual == expected) return {};
  return std::string(what) + " is " + std::to_string(actual) + ", formula says " + std::to_string(expected);
}

// Every rank sends the same number of messages and blocks.
std::string per_rank(const char* what, const std::vector<long>& values, long expected) {
  for (std::size_t r = 0; r < values.size(); ++r) {
    if (values[r] != expected)
      return std::string(what) + " of rank " + std::to_string(r) + " is " + std::to_string(values[r]) +
             ", formula says " + std::to_string(expected);
  }
  return {};
}

// ceil(log_k p) by repeated multiplication, independent of the generators' loops.
long ceil_log(long k, long p) {
  long steps = 0;
  for (long reach = 1; reach < p; reach *= k) ++steps;
  return steps;
}

// Steps, messages per rank and blocks per rank all as given.
std::string expect_costs(const ScheduleStats& s, long steps, long messages, long blocks) {
  auto e = expect_equal("steps", s.steps, steps);
  if (e.empty()) e = per_rank("messages", s.messages_sent, messages);
  if (e.empty()) e = per_rank("blocks", s.blocks_sent, blocks);
  return e;
}

// Radix-k Bruck: stage s has distance D = k^s and one message per j in 1..k-1 with j*D < p, that is
// min(k-1, ceil(p/D)-1) messages; every rank receives each of the other p-1 blocks once.
CostFormula bruck_formula(int radix) {
  return {radix == 2 ? std::string("bruck") : "bruck:radix=" + std::to_string(radix),
          [radix](int p, const ScheduleStats& s) {
            long messages = 0;
            for (long distance = 1; distance < p; distance *= radix)
              messages += std::min<long>(radix - 1, (p + distance - 1) / distance - 1);
            return expect_costs(s, ceil_log(radix, p), messages, p - 1);
          }};
}

std::vector<CostFormula> cost_formulas() {
  return {
      {"ring",
       [](int p, const ScheduleStats& s) {
         // p-1 steps, one block per step.
         auto e = expect_equal("steps", s.steps, p - 1);
         if (e.empty()) e = per_rank("messages", s.messages_sent, p - 1);
         if (e.empty()) e = per_rank("blocks", s.blocks_sent, p - 1);
         return e;
       }},
      // Chen et al.: p/2 steps, one message each; one block in step 0, two in each later step:
      // 1 + 2(p/2 - 1) = p-1 blocks.
      {"neighbor_exchange", [](int p, const ScheduleStats& s) { return expect_costs(s, p / 2, p / 2, p - 1); }},
      // log2 p steps, one message each, 2^s blocks in step s: 2^log2(p) - 1 = p-1 blocks.
      {"recursive_doubling",
       [](int p, const ScheduleStats& s) { return expect_costs(s, ceil_log(2, p), ceil_log(2, p), p - 1); }},
      bruck_formula(2),
      bruck_formula(3),
      bruck_formula(4),
      bruck_formula(8),
      // Sparbit sends data-ignore blocks per step, p-1 in all (thesis 1.6). Per-block messages: p-1.
      {"sparbit", [](int p, const ScheduleStats& s) { return expect_costs(s, ceil_log(2, p), p - 1, p - 1); }},
      // Coalesced: one message per step that has something to send. The first step sends the own
      // block (d = 2^(L-1) is never an ignored distance, since 2^L - p < 2^(L-1)), so data is 2 after
      // it and data - ignore >= 1 from then on: no step is empty, ceil(log2 p) messages.
      {"sparbit:coalesce=1",
       [](int p, const ScheduleStats& s) { return expect_costs(s, ceil_log(2, p), ceil_log(2, p), p - 1); }},
  };
}

class ScheduleTest : public ::testing::TestWithParam<CostFormula> {};

TEST_P(ScheduleTest, EveryRankGetsEveryBlockOnceForAllProcessCounts) {
  const CostFormula& formula = GetParam();
  for (int p = 1; p <= max_procs; ++p) {
    SpecParseResult parsed = parse_algorithm_spec(formula.spec, Collective::allgatherv);
    ASSERT_TRUE(parsed.choice) << parsed.error;
    const AlgorithmChoice& choice = *parsed.choice;
    const Algorithm& algorithm = *choice.algorithm;
    if (algorithm.eligible && !algorithm.eligible(p, choice.params)) continue;
    const SimulationResult result =
        simulate_allgather(p, [&](int rank) { return algorithm.make_schedule(p, rank, choice.params); });
    ASSERT_TRUE(result.ok()) << formula.spec << " p=" << p << ": " << result.errors.front();
    const std::string mismatch = formula.check(p, result.stats);
    ASSERT_TRUE(mismatch.empty()) << formula.spec << " p=" << p << ": " << mismatch;
  }
}

INSTANTIATE_TEST_SUITE_P(AllgatherFamily, ScheduleTest, ::testing::ValuesIn(cost_formulas()),
                         [](const auto& info) {
                           std::string name = info.param.spec;
                           for (char& c : name) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

// Every registered allgather-family algorithm must appear in the table above.
TEST(ScheduleTest, EveryScheduleAlgorithmHasACostFormula) {
  const auto formulas = cost_formulas();
  for (const Algorithm& algorithm : algorithms()) {
    if (!algorithm.make_schedule) continue;
    const bool covered = std::any_of(formulas.begin(), formulas.end(), [&](const CostFormula& f) {
      return parse_algorithm_spec(f.spec, Collective::allgather).choice->algorithm == &algorithm;
    });
    EXPECT_TRUE(covered) << algorithm.name << " has no schedule test";
  }
}

}  // namespace
}  // namespace collshim
