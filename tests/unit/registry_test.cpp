// Invariants of the registry that the selector and executor rely on.
#include <gtest/gtest.h>

#include <set>

#include "algorithms/engine/algorithm_spec.hpp"

namespace collshim {
namespace {

// A name may serve several collectives with different entries (`ring` for Allgather and for
// Allreduce), but each collective has one algorithm of a name.
TEST(Registry, NamesAreUniquePerCollectiveAndEveryAlgorithmCanRun) {
  std::set<std::pair<std::string_view, Collective>> names;
  for (const Algorithm& algorithm : algorithms()) {
    for (Collective c : algorithm.collectives)
      EXPECT_TRUE(names.insert({algorithm.name, c}).second) << "duplicate " << algorithm.name;
    EXPECT_FALSE(algorithm.collectives.empty()) << algorithm.name;
    for (Collective c : algorithm.collectives) {
      const bool runnable = algorithm.passes_through || algorithm.runs_schedules();
      EXPECT_TRUE(runnable) << algorithm.name << " cannot run " << collective_name(c);
    }
    for (const ParamSpec& param : algorithm.params) {
      EXPECT_TRUE(param.accepts(param.default_value)) << algorithm.name << ":" << param.name;
    }
  }
  EXPECT_TRUE(names.contains({"native", Collective::allreduce}));
  EXPECT_NE(find_algorithm("ring", Collective::allreduce), find_algorithm("ring", Collective::allgather));
  EXPECT_TRUE(find_algorithm("ring", Collective::allreduce)->needs_commutative({}));
}

TEST(Registry, RestrictedAlgorithmsFallBackToAnUnrestrictedOneForTheSameCollectives) {
  for (const Algorithm& algorithm : algorithms()) {
    if (!algorithm.eligible && !algorithm.needs_commutative && !algorithm.order_needs_consecutive_nodes) continue;
    EXPECT_FALSE(algorithm.eligibility.empty()) << algorithm.name;
    const Algorithm* fallback = find_algorithm(algorithm.fallback, algorithm.collectives.front());
    ASSERT_NE(fallback, nullptr) << algorithm.name << " falls back to unknown '" << algorithm.fallback << "'";
    for (Collective c : algorithm.collectives) EXPECT_TRUE(fallback->supports(c)) << algorithm.name;
    // The selector runs the fallback with its default parameters, so those must take every p (an
    // algorithm may fall back to its own defaults, e.g. a fixed factor list to automatic factors).
    if (fallback->needs_commutative) {
      const auto defaults = make_choice(fallback->name, {}, fallback->collectives.front());
      EXPECT_FALSE(fallback->needs_commutative(defaults.choice->params))
          << algorithm.name << " falls back to " << fallback->name;
    }
    if (!fallback->eligible) continue;
    const auto defaults = make_choice(fallback->name, {}, fallback->collectives.front());
    ASSERT_TRUE(defaults.choice) << defaults.error;
    for (int p = 1; p <= 1024; ++p) {
      EXPECT_TRUE(fallback->eligible(p, defaults.choice->params))
          << algorithm.name << " falls back to " << fallback->name << ", which is restricted at p=" << p;
    }
  }
}

TEST(Registry, NativeServesEveryCollective) {
  const Algorithm* native = find_algorithm("native");
  ASSERT_NE(native, nullptr);
  EXPECT_TRUE(native->passes_through);
  for (int c = 0; c < collective_count; ++c) EXPECT_TRUE(native->supports(static_cast<Collective>(c)));
}

}  // namespace
}  // namespace collshim
