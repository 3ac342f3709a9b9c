#include <gtest/gtest.h>

#include "selector/mapping.hpp"

namespace collshim {
namespace {

TEST(Mapping, ClassifiesHandWrittenPlacements) {
  const auto single = classify_mapping({7, 7, 7}, false);
  EXPECT_EQ(single.mapping, MappingClass::single_node);
  EXPECT_EQ(single.nodes, 1);
  EXPECT_EQ(single.ppn, 3);

  const auto sequential = classify_mapping({0, 0, 0, 0, 4, 4, 4, 4}, false);
  EXPECT_EQ(sequential.mapping, MappingClass::sequential);
  EXPECT_EQ(sequential.nodes, 2);
  EXPECT_EQ(sequential.ppn, 4);
  EXPECT_EQ(sequential.node_of_rank, (std::vector<int>{0, 0, 0, 0, 1, 1, 1, 1}));

  const auto cyclic = classify_mapping({0, 1, 2, 0, 1, 2, 0}, true);
  EXPECT_EQ(cyclic.mapping, MappingClass::cyclic);
  EXPECT_EQ(cyclic.nodes, 3);
  EXPECT_EQ(cyclic.ppn, 3);
  EXPECT_TRUE(cyclic.oversubscribed);

  const auto irregular = classify_mapping({5, 5, 9, 5, 9, 9}, false);
  EXPECT_EQ(irregular.mapping, MappingClass::irregular);
  EXPECT_EQ(irregular.nodes, 2);
}

TEST(Mapping, UnevenRanksPerNode) {
  const auto sequential = classify_mapping({3, 3, 3, 8, 8, 1}, false);  // 3 + 2 + 1 ranks
  EXPECT_EQ(sequential.mapping, MappingClass::sequential);
  EXPECT_EQ(sequential.nodes, 3);
  EXPECT_EQ(sequential.ppn, 3);
  const auto cyclic = classify_mapping({0, 1, 0, 1, 0}, false);  // 3 + 2
  EXPECT_EQ(cyclic.mapping, MappingClass::cyclic);
  EXPECT_EQ(cyclic.ppn, 3);
}

TEST(Mapping, OneRankPerNodeIsSequential) {
  EXPECT_EQ(classify_mapping({0, 1, 2, 3}, false).mapping, MappingClass::sequential);
}

TEST(Mapping, TopologyOverrideProducesEveryClass) {
  for (const auto& [text, expected] :
       std::vector<std::pair<std::string, MappingClass>>{{"nodes=4,mapping=cyclic", MappingClass::cyclic},
                                                         {"nodes=3,mapping=sequential", MappingClass::sequential},
                                                         {"mapping=single_node", MappingClass::single_node},
                                                         {"nodes=2,mapping=irregular", MappingClass::irregular},
                                                         {"nodes=3,mapping=irregular", MappingClass::irregular}}) {
    const auto parsed = parse_topology_override(text);
    ASSERT_TRUE(parsed.topology) << text << ": " << parsed.error;
    for (int p : {8, 12, 16}) {
      std::vector<int> nodes;
      for (int r = 0; r < p; ++r) nodes.push_back(parsed.topology->node_of_world_rank(r, p));
      EXPECT_EQ(classify_mapping(nodes, false).mapping, expected) << text << " p=" << p;
    }
  }
}

TEST(Mapping, TopologyOverrideErrorsSayWhatWasExpected) {
  EXPECT_NE(parse_topology_override("nodes=4").error.find("no mapping given"), std::string::npos);
  EXPECT_NE(parse_topology_override("nodes=0,mapping=cyclic").error.find("bad nodes '0'"), std::string::npos);
  EXPECT_NE(parse_topology_override("nodes=2,mapping=ring").error.find("unknown mapping 'ring'"), std::string::npos);
  EXPECT_NE(parse_topology_override("racks=2,mapping=cyclic").error.find("unknown key 'racks'"), std::string::npos);
  EXPECT_NE(parse_topology_override("mapping=cyclic,oversubscribed=maybe").error.find("expected yes or no"),
            std::string::npos);
  const auto over = parse_topology_override("nodes=2,mapping=cyclic,oversubscribed=yes");
  ASSERT_TRUE(over.topology);
  EXPECT_TRUE(over.topology->oversubscribed.value_or(false));
}

}  // namespace
}  // namespace collshim
