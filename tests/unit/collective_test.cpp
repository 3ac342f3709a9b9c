// The collective table: every name, MPI function and forcing variable the shim uses comes from it.
#include <gtest/gtest.h>

#include <cctype>
#include <set>

#include "algorithms/engine/registry.hpp"

namespace collshim {
namespace {

std::string upper(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

TEST(Collectives, EveryEntryRoundTripsThroughItsName) {
  ASSERT_EQ(collective_count, static_cast<int>(collectives.size()));
  std::set<std::string_view> names;
  for (int c = 0; c < collective_count; ++c) {
    const auto collective = static_cast<Collective>(c);
    const CollectiveInfo& info = collective_info(collective);
    EXPECT_EQ(info.collective, collective);
    EXPECT_TRUE(names.insert(info.name).second) << "duplicate " << info.name;
    EXPECT_EQ(find_collective(collective_name(collective)), collective);
  }
  EXPECT_EQ(find_collective("allreduce"), Collective::allreduce);
  EXPECT_FALSE(find_collective("reduce"));
  EXPECT_FALSE(find_collective(""));
  EXPECT_FALSE(find_collective("Allgather"));
}

// The names users type follow one pattern: allgather, MPI_Allgather, COLLSHIM_ALLGATHER.
TEST(Collectives, MpiFunctionAndForcingVariableFollowTheName) {
  for (const CollectiveInfo& info : collectives) {
    std::string mpi_name = "MPI_" + std::string(info.name);
    mpi_name[4] = static_cast<char>(std::toupper(static_cast<unsigned char>(mpi_name[4])));
    EXPECT_EQ(mpi_function_name(info.collective), mpi_name);
    EXPECT_EQ(std::string(forcing_variable(info.collective)), "COLLSHIM_" + upper(info.name));
  }
  EXPECT_STREQ(forcing_variable(Collective::alltoallv), "COLLSHIM_ALLTOALLV");
  EXPECT_EQ(mpi_function_name(Collective::allgatherv), "MPI_Allgatherv");
}

TEST(Collectives, NamesForMessages) {
  // Every name of the table, in table order, the last after "or".
  std::string expected;
  for (const CollectiveInfo& info : collectives)
    expected += (expected.empty() ? "" : &info == &collectives.back() ? " or " : ", ") + std::string(info.name);
  EXPECT_EQ(collective_names(), expected);
  EXPECT_EQ(collective_names().rfind("allgather, allgatherv, alltoallv, allreduce, ", 0), 0u) << collective_names();
  EXPECT_EQ(alternatives_text(std::vector<std::string>{"a"}), "a");
  EXPECT_EQ(alternatives_text(std::vector<std::string>{"a", "b"}), "a or b");
  EXPECT_EQ(alternatives_text(std::vector<std::string>{}), "");
}

// Only Alltoallv's counts are rank-local; the allgathers' sizes are the same on every rank.
TEST(Collectives, SizeAgreement) {
  EXPECT_EQ(collective_info(Collective::allgather).size_agreement, SizeAgreement::global);
  EXPECT_EQ(collective_info(Collective::allgatherv).size_agreement, SizeAgreement::global);
  EXPECT_EQ(collective_info(Collective::alltoallv).size_agreement, SizeAgreement::local);
}

}  // namespace
}  // namespace collshim
