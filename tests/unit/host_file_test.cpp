// Host files for collshim-model --hostfile: the three formats mpirun, mpiexec and smpirun read, nodes
// named by a pattern, and errors with file, line and column.
#include <gtest/gtest.h>

#include "model/platform/host_file.hpp"

namespace collshim::model {
namespace {

TEST(HostFile, OpenMpiMpichAndOneHostPerLineFillSlotsInOrder) {
  const std::vector<std::string> slots = read_host_file_text(
      "# a comment\nnode1 slots=2 max_slots=4\n\nnode2:3   # MPICH\nnode3\nnode3\nnode1\n", "hosts", "");
  EXPECT_EQ(slots, (std::vector<std::string>{"node1", "node1", "node2", "node2", "node2", "node3", "node3", "node1"}));
  // A host named again is the same node, numbered by first appearance.
  EXPECT_EQ(node_of_rank_from_slots(slots, 8, "hosts"), (std::vector<int>{0, 0, 1, 1, 1, 2, 2, 0}));
  EXPECT_EQ(node_of_rank_from_slots(slots, 3, "hosts"), (std::vector<int>{0, 0, 1}));
}

TEST(HostFile, APatternGroupsAHostPerCoreIntoNodes) {
  const std::vector<std::string> slots =
      read_host_file_text("fattree-0-c0\nfattree-0-c1\nfattree-1-c0\nfattree-0-c2\n", "hosts", "(.*)-c[0-9]+");
  EXPECT_EQ(node_of_rank_from_slots(slots, 4, "hosts"), (std::vector<int>{0, 0, 1, 0}));
}

std::string error_of(const std::string& text, const std::string& pattern = "") {
  try {
    read_host_file_text(text, "hosts.txt", pattern);
  } catch (const HostFileError& e) {
    return e.what();
  }
  return "no error";
}

TEST(HostFile, ErrorsNameFileLineAndColumn) {
  EXPECT_EQ(error_of("a\nnode2 slots=x\n"), "hosts.txt:2:13: bad slot count 'x', expected an integer, 1 or more");
  EXPECT_EQ(error_of("node1:0\n"), "hosts.txt:1:7: bad slot count '0', expected an integer, 1 or more");
  EXPECT_EQ(error_of("node1 cpus=4\n"),
            "hosts.txt:1:7: unexpected 'cpus=4', expected slots=N (or host:N, or a host name alone)");
  EXPECT_EQ(error_of("  gpu7\n", "(.*)-c[0-9]+"),
            "hosts.txt:1:3: host 'gpu7' does not match --node-pattern '(.*)-c[0-9]+' (with a group naming its node)");
  EXPECT_NE(error_of("n\n", "(.*"), "no error");
  try {
    node_of_rank_from_slots({"a", "b"}, 3, "hosts.txt");
    FAIL() << "3 ranks on 2 slots";
  } catch (const HostFileError& e) {
    EXPECT_STREQ(e.what(), "hosts.txt: 2 slots, fewer than the 3 processes asked for");
  }
}

}  // namespace
}  // namespace collshim::model
