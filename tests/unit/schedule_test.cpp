// Every allgather-family schedule, for every p from 1 to 130 and every parameter variant: the
// simulation of all ranks must end with every block exactly once at every rank, never send a block
// before it is held, and match the algorithm's cost formula (steps, messages, blocks per rank).
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <tuple>
#include <string>

#include "algorithms/engine/algorithm_spec.hpp"
#include "algorithms/allgather/allgather_recursive_multiplying.hpp"
#include "algorithms/engine/schedule_check.hpp"
#include "process_counts.hpp"

namespace collshim {
namespace {

using test::max_procs;

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

// Recursive multiplying, independently of the generator's search: the fewest (stages, sum of f-1) over
// every way to write n as a product of factors in [2, k], by plain enumeration of non-increasing
// factor sequences. stages = -1 when n has a prime factor above k.
struct FactorCost {
  int stages = -1;
  int messages = 0;
};
FactorCost enumerate_factorisations(int n, int k, int max_factor) {
  if (n == 1) return {0, 0};
  FactorCost best;
  for (int f = std::min(max_factor, k); f >= 2; --f) {
    if (n % f != 0) continue;
    const FactorCost rest = enumerate_factorisations(n / f, k, f);
    if (rest.stages < 0) continue;
    const FactorCost here{rest.stages + 1, rest.messages + f - 1};
    if (best.stages < 0 || std::tie(here.stages, here.messages) < std::tie(best.stages, best.messages)) best = here;
  }
  return best;
}

// Steps and critical-path messages of the cheapest plan: the factorisation of p if there is one, else
// the cheapest collapse of groups of B <= k ranks (2 extra steps, B-1 messages each) to a factorable q.
FactorCost cheapest_recursive_multiplying(int p, int k) {
  if (const FactorCost direct = enumerate_factorisations(p, k, p); direct.stages >= 0) return direct;
  FactorCost best;
  for (int base = 2; base <= k; ++base) {
    for (int groups = 1; groups * base <= p; ++groups) {
      const FactorCost inner = enumerate_factorisations(p - groups * (base - 1), k, p);
      if (inner.stages < 0) continue;
      const FactorCost here{inner.stages + 2, inner.messages + 2 * (base - 1)};
      if (best.stages < 0 || std::tie(here.stages, here.messages) < std::tie(best.stages, best.messages)) best = here;
    }
  }
  return best;
}

// What each rank sends under a plan: a rank collapsed away sends its own block once; in stage i a
// virtual rank sends the blocks of its m-sub-cuboid to f-1 peers; a survivor also sends the p-1 blocks
// its B-1 group members lack.
std::string check_recursive_multiplying(int p, const RecursiveMultiplyingPlan& plan, const ScheduleStats& s) {
  const int base = plan.collapse_base, groups = plan.collapse_groups, shift = groups * (base - 1);
  long product = 1;
  for (int f : plan.factors) product *= f;
  auto e = expect_equal("product of factors", product, p - shift);
  if (e.empty()) e = expect_equal("steps", s.steps, static_cast<long>(plan.factors.size()) + (groups > 0 ? 2 : 0));
  const auto size_of = [&](long w) { return w < groups ? base : 1; };  // blocks a virtual rank stands for
  for (int r = 0; r < p && e.empty(); ++r) {
    long messages = 0, blocks = 0;
    const bool collapsed = r < groups * base && r % base != base - 1;
    if (collapsed) {
      messages = blocks = 1;
    } else {
      const long w = r < groups * base ? r / base : r - shift;
      long m = 1;
      for (int f : plan.factors) {
        long cuboid = 0;
        for (long v = w / m * m; v < w / m * m + m; ++v) cuboid += size_of(v);
        messages += f - 1;
        blocks += (f - 1) * cuboid;
        m *= f;
      }
      if (w < groups) {
        messages += base - 1;
        blocks += static_cast<long>(base - 1) * (p - 1);
      }
    }
    e = expect_equal(("messages of rank " + std::to_string(r)).c_str(), s.messages_sent[r], messages);
    if (e.empty()) e = expect_equal(("blocks of rank " + std::to_string(r)).c_str(), s.blocks_sent[r], blocks);
  }
  return e;
}

CostFormula recursive_multiplying_formula(int k) {
  const std::string spec = k == 4 ? "recursive_multiplying" : "recursive_multiplying:k=" + std::to_string(k);
  return {spec, [k](int p, const ScheduleStats& s) {
            const RecursiveMultiplyingPlan plan = plan_recursive_multiplying(p, k);
            for (int f : plan.factors) {
              if (f > k) return "factor " + std::to_string(f) + " exceeds k";
            }
            if (plan.collapse_base > k) return std::string("collapse groups exceed k");
            // The plan is the cheapest there is: fewest steps, then fewest critical-path messages.
            const FactorCost cheapest = cheapest_recursive_multiplying(p, k);
            auto e = expect_equal("steps of the plan", plan.steps(), cheapest.stages);
            if (e.empty())
              e = expect_equal("critical messages of the plan", plan.critical_messages(), cheapest.messages);
            if (e.empty() && k == 2) {
              // MPICH's recursive doubling (paper Eq. 2): floor(log2 p) stages, +2 unless p is a power of two.
              long log2 = 0;
              while ((2L << log2) <= p) ++log2;
              e = expect_equal("steps", s.steps, log2 + ((p & (p - 1)) == 0 ? 0 : 2));
            }
            if (e.empty()) e = check_recursive_multiplying(p, plan, s);
            return e;
          }};
}

// A fixed factor list runs exactly its stages, p-1 blocks per rank, at the one p it multiplies to.
CostFormula recursive_multiplying_factors_formula(const std::string& factors) {
  return {"recursive_multiplying:factors=" + factors, [factors](int p, const ScheduleStats& s) {
            const std::vector<int> list = parse_factor_list(factors).value();
            long messages = 0;
            for (int f : list) messages += f - 1;
            auto e = expect_equal("steps", s.steps, static_cast<long>(list.size()));
            if (e.empty()) e = per_rank("messages", s.messages_sent, messages);
            if (e.empty()) e = per_rank("blocks", s.blocks_sent, p - 1);
            return e;
          }};
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
      recursive_multiplying_formula(2),
      recursive_multiplying_formula(3),
      recursive_multiplying_formula(4),
      recursive_multiplying_formula(8),
      recursive_multiplying_factors_formula("8x3x4"),
      recursive_multiplying_factors_formula("2x5"),
      recursive_multiplying_factors_formula("3x2x2"),
      recursive_multiplying_factors_formula("7"),
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
    const CheckResult result =
        check_block_schedules(p, [&](int rank) { return algorithm.make_block_schedule(p, rank, choice.params); });
    ASSERT_TRUE(result.ok()) << formula.spec << " p=" << p << ": " << result.errors.front();
    if (p == 1) {  // one process: the own block's local copy is the whole schedule
      ASSERT_EQ(result.stats.steps, 1) << formula.spec;
      ASSERT_EQ(result.stats.messages_sent, std::vector<long>{0}) << formula.spec;
      continue;
    }
    const std::string mismatch = formula.check(p, result.stats);
    ASSERT_TRUE(mismatch.empty()) << formula.spec << " p=" << p << ": " << mismatch;
  }
}

INSTANTIATE_TEST_SUITE_P(AllgatherFamily, ScheduleTest, ::testing::ValuesIn(cost_formulas()), [](const auto& info) {
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
    if (!algorithm.make_block_schedule) continue;
    const bool covered = std::any_of(formulas.begin(), formulas.end(), [&](const CostFormula& f) {
      return parse_algorithm_spec(f.spec, Collective::allgather).choice->algorithm == &algorithm;
    });
    EXPECT_TRUE(covered) << algorithm.name << " has no schedule test";
  }
}

}  // namespace
}  // namespace collshim
