#include <gtest/gtest.h>

#include <map>

#include "selector/selector.hpp"

namespace collshim {
namespace {

EnvironmentSettings environment(const std::map<std::string, std::string>& variables) {
  return read_environment([&](const char* name) -> const char* {
    const auto found = variables.find(name);
    return found == variables.end() ? nullptr : found->second.c_str();
  });
}

TEST(Environment, DefaultsToEnabledSilentAndUnforced) {
  const auto settings = environment({});
  EXPECT_FALSE(settings.disabled);
  EXPECT_EQ(settings.log_level, LogLevel::off);
  EXPECT_TRUE(settings.errors.empty());
  for (const auto& forced : settings.forced) EXPECT_FALSE(forced);
}

TEST(Environment, DisableSkipsEverythingElse) {
  const auto settings = environment({{"COLLSHIM_DISABLE", "1"}, {"COLLSHIM_LOG", "nonsense"}});
  EXPECT_TRUE(settings.disabled);
  EXPECT_TRUE(settings.errors.empty());
}

TEST(Environment, BadValuesNameTheVariable) {
  const auto settings = environment({{"COLLSHIM_DISABLE", "yes"}, {"COLLSHIM_LOG", "verbose"}});
  ASSERT_EQ(settings.errors.size(), 2u);
  EXPECT_EQ(settings.errors[0].rfind("COLLSHIM_DISABLE=yes: ", 0), 0u) << settings.errors[0];
  EXPECT_EQ(settings.errors[1].rfind("COLLSHIM_LOG=verbose: unknown log level", 0), 0u) << settings.errors[1];
}

TEST(Environment, ReadsLogLevels) {
  EXPECT_EQ(environment({{"COLLSHIM_LOG", "debug"}}).log_level, LogLevel::debug);
  EXPECT_EQ(environment({{"COLLSHIM_LOG", "trace"}}).log_level, LogLevel::trace);
  EXPECT_EQ(environment({{"COLLSHIM_LOG", "warn"}}).log_level, LogLevel::warn);
}

TEST(Selector, ForcingVariableChoosesTheAlgorithmOfItsCollectiveOnly) {
  std::vector<std::string> errors;
  const Selector selector(environment({{"COLLSHIM_ALLGATHER", "ring"}, {"COLLSHIM_ALLTOALLV", "pairwise"}}), errors);
  EXPECT_TRUE(errors.empty());
  EXPECT_EQ(selector.decide(Collective::allgather, 5).choice->algorithm->name, "ring");
  EXPECT_EQ(selector.decide(Collective::allgatherv, 5).choice->algorithm->name, "native");
  EXPECT_EQ(selector.decide(Collective::alltoallv, 5).choice->algorithm->name, "pairwise");
}

TEST(Selector, RepeatedDecisionsReturnTheSameInternedChoice) {
  std::vector<std::string> errors;
  const Selector selector(environment({{"COLLSHIM_ALLGATHER", "ring"}, {"COLLSHIM_ALLGATHERV", "ring"}}), errors);
  const Decision a = selector.decide(Collective::allgather, 8);
  const Decision b = selector.decide(Collective::allgatherv, 8);
  EXPECT_EQ(a.choice, b.choice);
  EXPECT_EQ(a.choice->id, b.choice->id);
  EXPECT_EQ(&selector.choices()[a.choice->id], a.choice);
}

TEST(Selector, BadForcingValuesAreErrorsNamingTheVariable) {
  std::vector<std::string> errors;
  const Selector selector(environment({{"COLLSHIM_ALLGATHERV", "brick"}, {"COLLSHIM_ALLTOALLV", "ring"}}), errors);
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_EQ(errors[0].rfind("COLLSHIM_ALLGATHERV=brick: unknown algorithm 'brick' for allgatherv", 0), 0u)
      << errors[0];
  EXPECT_EQ(errors[1].rfind("COLLSHIM_ALLTOALLV=ring: unknown algorithm 'ring' for alltoallv", 0), 0u) << errors[1];
}

}  // namespace
}  // namespace collshim
