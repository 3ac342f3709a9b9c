// The node-aware grid Alltoallv for every p from 1 to 130 and node maps of every shape (one node,
// one rank per node, sequential, cyclic, irregular, uneven): every block reaches its destination
// exactly once and nothing is forwarded before it is held, under irregular count matrices; what
// crosses nodes is what the shape between nodes says (one message per ordered pair of nodes for
// dims=1), and only the combine and deliver phases talk inside a node.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "algorithms/engine/algorithm_spec.hpp"
#include "algorithms/alltoall/node_grid_routing.hpp"
#include "algorithms/engine/schedule_check.hpp"
#include "node_maps.hpp"
#include "process_counts.hpp"

namespace collshim {
namespace {

using test::NodeMap;
using test::node_maps;

using test::max_procs;

struct CountMatrix {
  std::string name;
  std::function<long long(int origin, int destination)> bytes;
};

// The matrices of the flat Alltoallv schedule tests.
std::vector<CountMatrix> count_matrices(int p) {
  return {
      {"uniform", [](int, int) { return 8LL; }},
      {"zero_row_and_column", [](int o, int d) { return o == 0 || d == 1 ? 0LL : 4LL; }},
      {"one_heavy_pair", [p](int o, int d) { return o == 0 && d == p - 1 ? 1LL << 20 : 1LL; }},
      {"sparse", [](int o, int d) { return (o * 7 + d * 3) % 5 == 0 ? static_cast<long long>(o + d + 1) : 0LL; }},
      {"all_zero", [](int, int) { return 0LL; }},
  };
}

AlgorithmChoice node_grid(const std::string& dims) {
  const SpecParseResult parsed = parse_algorithm_spec("node_grid:dims=" + dims, Collective::alltoallv);
  EXPECT_TRUE(parsed.choice) << parsed.error;
  return *parsed.choice;
}

struct Traffic {
  std::vector<long> inter_node_messages;                   // per rank
  std::map<std::pair<int, int>, long> node_pair_messages;  // (source node, destination node)
};

// Counts messages between nodes, and checks that the combine (first) and deliver (last) phases
// stay inside the node and the phases between them only cross nodes.
Traffic traffic(const std::vector<Schedule>& schedules, const NodeGridRouting& routing, const std::string& where) {
  const NodeLayout& layout = routing.layout();
  Traffic result;
  result.inter_node_messages.assign(schedules.size(), 0);
  for (std::size_t rank = 0; rank < schedules.size(); ++rank) {
    const int node = layout.node_of_rank[rank];
    EXPECT_EQ(schedules[rank].steps.size(), static_cast<std::size_t>(routing.phases() + 1)) << where;
    for (std::size_t j = 0; j < schedules[rank].steps.size(); ++j) {
      for (const Transfer& send : schedules[rank].steps[j].sends) {
        const int peer_node = layout.node_of_rank[send.peer];
        const bool inside = j == 0 || static_cast<int>(j) == routing.phases() - 1;
        EXPECT_EQ(peer_node == node, inside) << where << " rank " << rank << " step " << j << " to " << send.peer;
        if (peer_node == node) continue;
        ++result.inter_node_messages[rank];
        ++result.node_pair_messages[{node, peer_node}];
      }
    }
  }
  return result;
}

// The point of the algorithm: few large messages between nodes. dims=1: exactly one message for
// every ordered pair of nodes, whatever the placement, and a rank sends at most ceil(N / m) of them.
// A grid or hypercube among nodes: with equal ranks per node every lane is its own node-level grid,
// so a rank sends what one rank of the flat grid on N ranks sends (at most 2(d_j - 1) per phase,
// grid_routing.hpp); with uneven nodes a rank serves up to ceil(2N / m) lanes, each of which meets
// ranks of nodes of any size.
void expect_shape_traffic(const std::string& dims, const Traffic& counted, const NodeGridRouting& routing,
                          const std::string& where) {
  const NodeLayout& layout = routing.layout();
  const long nodes = routing.nodes();
  if (dims == "1") {
    ASSERT_EQ(static_cast<long>(counted.node_pair_messages.size()), nodes * (nodes - 1)) << where;
    for (const auto& [pair, messages] : counted.node_pair_messages) ASSERT_EQ(messages, 1) << where;
  }
  long per_lane = 0;
  for (const int side : routing.between_nodes().dims()) per_lane += 2 * (side - 1);
  per_lane = std::min(per_lane, nodes - 1);
  std::set<std::size_t> sizes;
  for (const auto& members : layout.members) sizes.insert(members.size());
  for (std::size_t rank = 0; rank < counted.inter_node_messages.size(); ++rank) {
    const long m = static_cast<long>(layout.members[layout.node_of_rank[rank]].size());
    const long sent = counted.inter_node_messages[rank];
    if (dims == "1") {
      ASSERT_LE(sent, (nodes + m - 1) / m) << where << " rank " << rank;
    } else if (sizes.size() == 1) {
      ASSERT_LE(sent, per_lane) << where << " rank " << rank;
    } else {
      ASSERT_LE(sent, (2 * nodes + m - 1) / m * per_lane * static_cast<long>(*sizes.rbegin()))
          << where << " rank " << rank;
    }
  }
}

// Every shape, p and node map: a correct Alltoallv under one of the five matrices (rotating with p
// and map, so every matrix meets every map and shape at many p; the routing does not depend on the
// counts, the empty-message skipping does), bytes on the wire within the forwarding bound, and the
// traffic between nodes the shape promises. Each p checks every other map with the grid shapes and
// the maps between with dims=1 (alternating with p), so every (p, map) is checked and each shape
// meets every map at half the p (dims=1 on every map made the test half as slow again).
TEST(NodeGrid, EveryBlockArrivesOnceAndFewMessagesCrossNodesForAllProcessCountsAndNodeMaps) {
  for (const std::string dims : {"1", "2", "3", "hypercube"}) {
    const AlgorithmChoice choice = node_grid(dims);
    for (int p = 1; p <= max_procs; ++p) {
      const std::vector<NodeMap> maps = node_maps(p);
      const std::vector<CountMatrix> matrices = count_matrices(p);
      for (std::size_t k = 0; k < maps.size(); ++k) {
        if ((k + static_cast<std::size_t>(p)) % 2 == (dims == "1" ? 0u : 1u)) continue;
        const NodeMap& map = maps[k];
        const CountMatrix& matrix = matrices[(k + static_cast<std::size_t>(p)) % matrices.size()];
        const std::string where = "dims=" + dims + " p=" + std::to_string(p) + " " + map.name + " " + matrix.name;
        std::vector<Schedule> schedules;
        for (int rank = 0; rank < p; ++rank) schedules.push_back(generate_schedule(choice, map.node_of_rank, rank));
        const NodeGridRouting routing(map.node_of_rank, *parse_node_grid_dims(dims));

        const auto datum_bytes = [&](std::int64_t datum) { return matrix.bytes(datum / p, datum % p); };
        const CheckResult result =
            check_schedules({BlockNaming::alltoall, p, datum_bytes}, [&](int rank) { return schedules[rank]; });
        ASSERT_TRUE(result.ok()) << where << ": " << result.errors.front();
        // Every byte leaves its origin once and is forwarded at most phases - 1 times (one local
        // combine, K - 1 intermediate nodes, one local delivery); 8-byte size headers come on top.
        long long payload = 0, sent = 0, blocks_sent = 0;
        for (int o = 0; o < p; ++o) {
          for (int d = 0; d < p; ++d) payload += o == d ? 0 : matrix.bytes(o, d);
        }
        for (const long long bytes : result.stats.bytes_sent) sent += bytes;
        for (const Schedule& schedule : schedules) {
          for (const Step& step : schedule.steps) {
            for (const Transfer& send : step.sends) blocks_sent += static_cast<long long>(send.region.blocks.size());
          }
        }
        ASSERT_GE(sent, payload) << where;
        ASSERT_LE(sent, routing.phases() * payload + 8 * blocks_sent) << where;

        expect_shape_traffic(dims, traffic(schedules, routing, where), routing, where);
        if (HasFatalFailure()) return;
      }
    }
  }
}

// Node map {0,0,0,1,1,2}: nodes of 3, 2 and 1 ranks. The handler of pair (A, B) on node X is local
// rank (A + B) mod m_X. Rank 1 (node 0) to rank 4 (node 1): combined on local rank 1 of node 0
// (rank 1 itself), sent to local rank 1 of node 1 (rank 4), which is the destination.
// Rank 0 to rank 5 (node 2): combined on local rank 2 of node 0 (rank 2), sent to rank 5.
// Rank 5 to rank 3: node 2 has one rank, so it handles every pair; it sends to local rank
// (2 + 1) mod 2 = 1 of node 1 (rank 4), which delivers to rank 3.
TEST(NodeGrid, HandlersOfAnUnevenExample) {
  const NodeGridRouting routing({0, 0, 0, 1, 1, 2}, GridDims{1, false});
  ASSERT_EQ(routing.phases(), 3);
  EXPECT_EQ(routing.next_hop(0, 1, 1, 4), 1);
  EXPECT_EQ(routing.next_hop(1, 1, 1, 4), 4);
  EXPECT_EQ(routing.next_hop(0, 0, 0, 5), 2);
  EXPECT_EQ(routing.next_hop(1, 2, 0, 5), 5);
  EXPECT_EQ(routing.next_hop(0, 5, 5, 3), 5);
  EXPECT_EQ(routing.next_hop(1, 5, 5, 3), 4);
  EXPECT_EQ(routing.next_hop(2, 4, 5, 3), 3);
  EXPECT_EQ(routing.next_hop(0, 0, 0, 2), 2);  // inside the node: directly in the combine phase
  // What rank 4 receives between nodes: node 0's and node 2's blocks for node 1 ((0+1) mod 2 and
  // (2+1) mod 2 are both local rank 1), from their handlers: rank 1 (node 0) and rank 5.
  const auto incoming = routing.incoming(1, 4);
  ASSERT_EQ(incoming.size(), 2u);
  EXPECT_EQ(incoming.at(1),
            (std::vector<std::int64_t>{0 * 6 + 3, 0 * 6 + 4, 1 * 6 + 3, 1 * 6 + 4, 2 * 6 + 3, 2 * 6 + 4}));
  EXPECT_EQ(incoming.at(5), (std::vector<std::int64_t>{5 * 6 + 3, 5 * 6 + 4}));
}

TEST(NodeGrid, DimsParameterNamesWhatItAccepts) {
  for (const char* good : {"1", "2", "16", "hypercube"}) EXPECT_TRUE(parse_node_grid_dims(good)) << good;
  for (const char* bad : {"0", "17", "", "direct", "2x2"}) EXPECT_FALSE(parse_node_grid_dims(bad)) << bad;
  const SpecParseResult parsed = parse_algorithm_spec("node_grid:dims=0", Collective::alltoall);
  ASSERT_FALSE(parsed.choice);
  EXPECT_NE(parsed.error.find("bad value '0' for node_grid parameter 'dims'"), std::string::npos) << parsed.error;
  EXPECT_EQ(parse_algorithm_spec("node_grid", Collective::alltoall).choice->params.at("dims"), "1");
}

}  // namespace
}  // namespace collshim
