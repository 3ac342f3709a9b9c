#include <gtest/gtest.h>

#include "algorithms/engine/algorithm_spec.hpp"

namespace collshim {
namespace {

TEST(AlgorithmSpec, ParsesNamesForTheirCollectives) {
  auto ring = parse_algorithm_spec("ring", Collective::allgather);
  ASSERT_TRUE(ring.choice) << ring.error;
  EXPECT_EQ(ring.choice->algorithm->name, "ring");
  EXPECT_EQ(ring.choice->text(), "ring");
  EXPECT_TRUE(parse_algorithm_spec(" native ", Collective::alltoallv).choice);
  EXPECT_TRUE(parse_algorithm_spec("pairwise", Collective::alltoallv).choice);
}

TEST(AlgorithmSpec, RejectsUnknownNamesListingTheValidOnes) {
  auto result = parse_algorithm_spec("brick", Collective::allgather);
  EXPECT_FALSE(result.choice);
  EXPECT_NE(result.error.find("unknown algorithm 'brick' for allgather"), std::string::npos) << result.error;
  // Every allgather algorithm, in registry order: the list the message gives is the registry's.
  EXPECT_NE(result.error.find("expected one of: " + algorithm_names(Collective::allgather)), std::string::npos)
      << result.error;
}

TEST(AlgorithmSpec, RejectsAlgorithmsOfAnotherCollective) {
  auto result = parse_algorithm_spec("ring", Collective::alltoallv);
  EXPECT_FALSE(result.choice);
  EXPECT_NE(result.error.find("for alltoallv"), std::string::npos);
  EXPECT_EQ(result.error.find("ring"), result.error.find("'ring'") + 1) << "ring must not be listed as valid";
}

TEST(AlgorithmSpec, RejectsUnknownAndMalformedParameters) {
  auto unknown = parse_algorithm_spec("ring:radix=4", Collective::allgather);
  EXPECT_FALSE(unknown.choice);
  EXPECT_NE(unknown.error.find("unknown parameter 'radix' for ring; expected: none"), std::string::npos)
      << unknown.error;
  auto malformed = parse_algorithm_spec("ring:radix", Collective::allgather);
  EXPECT_FALSE(malformed.choice);
  EXPECT_NE(malformed.error.find("expected key=value"), std::string::npos) << malformed.error;
  EXPECT_FALSE(parse_algorithm_spec("", Collective::allgather).choice);
  EXPECT_FALSE(parse_algorithm_spec(":x=1", Collective::allgather).choice);
}

TEST(AlgorithmSpec, IntegerParametersCheckRangeAndSyntax) {
  const ParamSpec radix = integer_param("radix", 2, 64, 2);
  EXPECT_TRUE(radix.accepts("2"));
  EXPECT_TRUE(radix.accepts("64"));
  EXPECT_FALSE(radix.accepts("1"));
  EXPECT_FALSE(radix.accepts("65"));
  EXPECT_FALSE(radix.accepts("4x"));
  EXPECT_FALSE(radix.accepts(""));
  EXPECT_FALSE(radix.accepts("-3"));
  EXPECT_EQ(radix.expected, "an integer from 2 to 64");
  EXPECT_EQ(radix.default_value, "2");
}

TEST(AlgorithmSpec, GridDimsIsACountOrHypercube) {
  const auto grid = parse_algorithm_spec("grid", Collective::alltoallv);
  ASSERT_TRUE(grid.choice) << grid.error;
  EXPECT_EQ(grid.choice->params.at("dims"), "2");
  EXPECT_EQ(grid.choice->text(), "grid");
  EXPECT_EQ(parse_algorithm_spec("grid:dims=2", Collective::alltoallv).choice->text(), "grid");
  EXPECT_EQ(parse_algorithm_spec("grid:dims=3", Collective::alltoallv).choice->text(), "grid:dims=3");
  EXPECT_EQ(parse_algorithm_spec("grid:dims=hypercube", Collective::alltoallv).choice->text(), "grid:dims=hypercube");
  for (const char* bad : {"grid:dims=1", "grid:dims=17", "grid:dims=cube", "grid:dims="}) {
    const auto result = parse_algorithm_spec(bad, Collective::alltoallv);
    EXPECT_FALSE(result.choice) << bad;
    EXPECT_NE(result.error.find("for grid parameter 'dims'; expected an integer from 2 to 16, or hypercube"),
              std::string::npos)
        << result.error;
  }
  EXPECT_FALSE(parse_algorithm_spec("grid", Collective::allgather).choice) << "grid is an Alltoallv algorithm";
}

}  // namespace
}  // namespace collshim
