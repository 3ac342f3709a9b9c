// Every Alltoallv schedule for every p from 1 to 130, with irregular count matrices (zero rows and
// columns, one heavy pair, sparse): every block reaches its destination exactly once, nothing is
// forwarded before it is held, nothing is written into the send buffer, and what travels adds up:
// each byte of the matrix leaves its origin once, and is forwarded at most (phases - 1) times more.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "algorithms/engine/algorithm_spec.hpp"
#include "algorithms/alltoall/grid_routing.hpp"
#include "algorithms/engine/schedule_check.hpp"
#include "process_counts.hpp"

namespace collshim {
namespace {

using test::max_procs;

struct CountMatrix {
  std::string name;
  std::function<long long(int origin, int destination)> bytes;
};

std::vector<CountMatrix> count_matrices(int p) {
  return {
      {"uniform", [](int, int) { return 8LL; }},
      {"zero_row_and_column", [](int o, int d) { return o == 0 || d == 1 ? 0LL : 4LL; }},
      {"one_heavy_pair", [p](int o, int d) { return o == 0 && d == p - 1 ? 1LL << 20 : 1LL; }},
      {"sparse", [](int o, int d) { return (o * 7 + d * 3) % 5 == 0 ? static_cast<long long>(o + d + 1) : 0LL; }},
      {"all_zero", [](int, int) { return 0LL; }},
  };
}

std::vector<std::string> alltoallv_specs() {
  return {"linear", "pairwise", "grid", "grid:dims=3", "grid:dims=4", "grid:dims=hypercube"};
}

long long sum_off_diagonal(int p, const CountMatrix& matrix) {
  long long total = 0;
  for (int o = 0; o < p; ++o) {
    for (int d = 0; d < p; ++d) total += o == d ? 0 : matrix.bytes(o, d);
  }
  return total;
}

int phases_of(const AlgorithmChoice& choice, int p) {
  if (choice.algorithm->name != "grid") return 1;
  return static_cast<int>(grid_shape(p, *parse_grid_dims(choice.params.at("dims"))).size());
}

TEST(AlltoallvSchedules, EveryByteReachesItsDestinationOnceForAllProcessCounts) {
  for (const std::string& spec : alltoallv_specs()) {
    const SpecParseResult parsed = parse_algorithm_spec(spec, Collective::alltoallv);
    ASSERT_TRUE(parsed.choice) << parsed.error;
    const AlgorithmChoice& choice = *parsed.choice;
    for (int p = 1; p <= max_procs; ++p) {
      const std::vector<int> one_node(static_cast<std::size_t>(p), 0);
      std::vector<Schedule> schedules;
      for (int rank = 0; rank < p; ++rank) schedules.push_back(generate_schedule(choice, one_node, rank));
      for (const CountMatrix& matrix : count_matrices(p)) {
        const auto datum_bytes = [&](std::int64_t datum) { return matrix.bytes(datum / p, datum % p); };
        const CheckResult result =
            check_schedules({BlockNaming::alltoall, p, datum_bytes}, [&](int rank) { return schedules[rank]; });
        const std::string where = spec + " p=" + std::to_string(p) + " " + matrix.name;
        ASSERT_TRUE(result.ok()) << where << ": " << result.errors.front();

        // Payload on the wire: every byte leaves its origin once and is forwarded at most
        // (phases - 1) times; a direct algorithm sends exactly the matrix. Size headers come on top.
        long long headers = 0, sent = 0;
        for (const long long bytes : result.stats.bytes_sent) sent += bytes;
        const long long payload = sum_off_diagonal(p, matrix);
        if (choice.algorithm->name == "grid") {
          for (const Schedule& schedule : schedules) {
            for (const Step& step : schedule.steps) {
              for (const Transfer& send : step.sends) {  // a header has a size for every block of its message
                const auto& blocks = send.region.blocks;
                if (!std::all_of(blocks.begin(), blocks.end(), [&](std::int64_t block) {
                      return knows_scratch_bytes(BlockNaming::alltoall, p, 0, send.peer, block);
                    }))
                  headers += 8 * static_cast<long long>(blocks.size());
              }
            }
          }
          ASSERT_GE(sent - headers, payload) << where;
          ASSERT_LE(sent - headers, static_cast<long long>(phases_of(choice, p)) * payload) << where;
        } else {
          ASSERT_EQ(sent, payload) << where;
        }
      }
    }
  }
}

// The start-ups the grid promises: about sum(d_j - 1) messages per rank instead of p - 1 (a few more
// for ranks that join a line around a hole), and the direct algorithms' p - 1.
TEST(AlltoallvSchedules, StartupsPerRank) {
  for (int p = 2; p <= max_procs; ++p) {
    const std::vector<int> one_node(static_cast<std::size_t>(p), 0);
    for (const std::string& spec : alltoallv_specs()) {
      const AlgorithmChoice choice = *parse_algorithm_spec(spec, Collective::alltoallv).choice;
      const CheckResult result = check_schedules({BlockNaming::alltoall, p, {}},
                                                 [&](int rank) { return generate_schedule(choice, one_node, rank); });
      ASSERT_TRUE(result.ok()) << spec << " p=" << p << ": " << result.errors.front();
      long most = 0;
      for (const long messages : result.stats.messages_sent) most = std::max(most, messages);
      if (choice.algorithm->name != "grid") {
        ASSERT_EQ(most, p - 1) << spec << " p=" << p;
        continue;
      }
      const std::vector<int> dims = grid_shape(p, *parse_grid_dims(choice.params.at("dims")));
      long bound = 0;  // a group has up to d_j + ceil((d_j - 1) / q) members (grid_routing.hpp)
      for (const int side : dims) bound += 2 * (side - 1);
      ASSERT_LE(most, std::max(bound, 1L)) << spec << " p=" << p;
      ASSERT_LE(most, p - 1) << spec << " p=" << p;
    }
  }
}

// Alltoall runs the same engine with equal counts. Its schedules (the Alltoallv ones it shares and
// Bruck's) for every p to 130 and radix 2..9, under the uniform matrix and the all-zero one (a
// zero count is legal in MPI_Alltoall): every block reaches its destination exactly once, nothing is
// forwarded before it is held, and Bruck forwards each byte at most ceil(log_k p) times.
std::vector<std::string> alltoall_specs() {
  std::vector<std::string> specs = {"linear", "pairwise", "grid", "grid:dims=hypercube"};
  for (int radix = 2; radix <= 9; ++radix) specs.push_back("bruck:radix=" + std::to_string(radix));
  return specs;
}

int bruck_phases(int p, int radix) {
  int phases = 0;
  for (long long reach = 1; reach < p; reach *= radix) ++phases;
  return phases;
}

TEST(AlltoallSchedules, EveryBlockReachesItsDestinationOnceForAllProcessCounts) {
  for (const std::string& spec : alltoall_specs()) {
    const SpecParseResult parsed = parse_algorithm_spec(spec, Collective::alltoall);
    ASSERT_TRUE(parsed.choice) << spec << ": " << parsed.error;
    const AlgorithmChoice& choice = *parsed.choice;
    for (int p = 1; p <= max_procs; ++p) {
      const std::vector<int> one_node(static_cast<std::size_t>(p), 0);
      std::vector<Schedule> schedules;
      for (int rank = 0; rank < p; ++rank) schedules.push_back(generate_schedule(choice, one_node, rank));
      for (const long long block : {8LL, 0LL}) {
        const CheckResult result = check_schedules({BlockNaming::alltoall, p, [&](std::int64_t) { return block; }},
                                                   [&](int rank) { return schedules[rank]; });
        const std::string where = spec + " p=" + std::to_string(p) + " block=" + std::to_string(block);
        ASSERT_TRUE(result.ok()) << where << ": " << result.errors.front();
        if (choice.algorithm->name != "bruck" || block == 0) continue;
        const int radix = param_int(choice.params, "radix");
        long long sent = 0, most = 0;
        for (const long long bytes : result.stats.bytes_sent) sent += bytes;
        for (const long messages : result.stats.messages_sent) most = std::max<long long>(most, messages);
        const long long payload = 8LL * p * (p - 1);
        // Headers (8 bytes per forwarded block) come on top of the payload, and never exceed it here.
        ASSERT_GE(sent, payload) << where;
        ASSERT_LE(sent, 2 * bruck_phases(p, radix) * payload) << where;
        // Start-ups: at most k-1 per phase (the point of the algorithm), instead of p-1.
        ASSERT_LE(most, static_cast<long long>(radix - 1) * bruck_phases(p, radix)) << where;
      }
    }
  }
}

// Bruck radix 2 at a power of two is the textbook: log2 p phases, one message each, each carrying
// half of the p-1 foreign blocks' worth of traffic (p/2 blocks per message).
TEST(AlltoallSchedules, BruckRadixTwoIsTheTextbookAtPowersOfTwo) {
  const AlgorithmChoice choice = *parse_algorithm_spec("bruck", Collective::alltoall).choice;
  for (const int p : {2, 4, 8, 16, 32, 64, 128}) {
    const std::vector<int> one_node(static_cast<std::size_t>(p), 0);
    for (int rank = 0; rank < p; rank += std::max(1, p / 4)) {
      const Schedule schedule = generate_schedule(choice, one_node, rank);
      int phases_with_traffic = 0;
      for (const Step& step : schedule.steps) {
        if (step.sends.empty()) continue;
        ++phases_with_traffic;
        ASSERT_EQ(step.sends.size(), 1u) << "p=" << p;
        ASSERT_EQ(step.recvs.size(), 1u) << "p=" << p;
        EXPECT_EQ(step.sends[0].region.blocks.size(), static_cast<std::size_t>(p / 2)) << "p=" << p;
        EXPECT_EQ(step.sends[0].peer, (rank + (1 << (phases_with_traffic - 1))) % p) << "p=" << p;
      }
      EXPECT_EQ(phases_with_traffic, bruck_phases(p, 2)) << "p=" << p;
    }
  }
}

}  // namespace
}  // namespace collshim
