// The cost model against the τ-Lop thesis's closed forms (Rico Gallego, "τ-Lop: Scalably and
// Accurately Modeling Contention and Mapping Effects in Multi-core Clusters", 2015, chapters 4 and
// 5): the registry's ring and recursive doubling schedules on one shared channel, a binomial
// scatter's tree, and recursive doubling on two channels under sequential and round-robin mapping.
// Transfer times are linear in m (no latency term), as the closed forms assume
// (L(A·m, τ) = A·L(m, τ)), and differ with every τ, so a wrong concurrency count shows.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "algorithms/engine/algorithm_spec.hpp"
#include "model/cost/cost_model.hpp"

#include "node_maps.hpp"

namespace collshim::model {
namespace {

constexpr double o_shm = 0.7, o_net = 3.1;

// Bandwidth that falls with τ, and not in proportion (so L(m, τ) at one τ cannot stand in for another).
Channel channel(double gbytes_at_one, double overhead, int max_tau) {
  Channel result;
  result.overhead_us = overhead;
  for (int tau = 1; tau <= max_tau; ++tau)
    result.transfer.push_back({tau, 0.0, gbytes_at_one / std::pow(static_cast<double>(tau), 0.8)});
  return result;
}

Platform two_channels() {
  Platform platform;
  platform.name = "closed-form test";
  platform.shm = channel(10.0, o_shm, 64);
  platform.net = channel(1.0, o_net, 64);
  return platform;
}

AlgorithmChoice choice_of(const std::string& spec, Collective collective = Collective::allgather) {
  const SpecParseResult parsed = parse_algorithm_spec(spec, collective);
  EXPECT_TRUE(parsed.choice) << parsed.error;
  return *parsed.choice;
}

Prediction predict_allgather(const Platform& platform, const std::string& spec, const std::vector<int>& node_of_rank,
                             long long block) {
  const int p = static_cast<int>(node_of_rank.size());
  const AlgorithmChoice choice = choice_of(spec);
  const CheckSetup call{BlockNaming::allgather, p, [block](std::int64_t) { return block; }};
  return predict(platform, call, node_of_rank, [&](int rank) { return generate_schedule(choice, node_of_rank, rank); });
}

using test::round_robin;
using test::sequential;

void expect_close(double predicted, double expected, const std::string& what) {
  EXPECT_NEAR(predicted, expected, 1e-9 * std::max(1.0, expected)) << what;
}

constexpr long long m = 4096;

// Eq. 4.14: Θ_Ring(m) = c(m, P) + (P−1)·o(m) + 2(P−1)·L(m, P), with the local copy c(m, P) = L(m, P).
TEST(CostModel, RingOnOneChannelIsTheThesisClosedForm) {
  const Platform platform = two_channels();
  for (const int p : {2, 3, 5, 8, 13, 32}) {
    const double L = platform.shm.transfer_time(m, p);
    const double expected = L + (p - 1) * (o_shm + 2 * L);
    expect_close(predict_allgather(platform, "ring", sequential(p, p), m).us, expected, "ring p=" + std::to_string(p));
  }
}

// Eq. 4.8: Θ_RDA(m) = c(m, P) + log2 P·o(m) + 2(P−1)·L(m, P).
TEST(CostModel, RecursiveDoublingOnOneChannelIsTheThesisClosedForm) {
  Platform platform = two_channels();
  for (const int p : {2, 4, 8, 16, 64}) {
    const double L = platform.shm.transfer_time(m, p);
    const double expected = L + std::log2(p) * o_shm + 2 * (p - 1) * L;
    expect_close(predict_allgather(platform, "recursive_doubling", sequential(p, p), m).us, expected,
                 "recursive doubling p=" + std::to_string(p));
  }
  platform.local_copies_free = true;  // the initial copy c(m, P) drops out
  const double L = platform.shm.transfer_time(m, 8);
  expect_close(predict_allgather(platform, "recursive_doubling", sequential(8, 8), m).us, 3 * o_shm + 14 * L,
               "free copies");
}

// Eq. 4.19: Θ_BinSct(m) = log2 P·o(m) + Σ_i 2·L(m/2^(i+1), 2^i), for a binomial tree written out by
// hand: in step i the 2^i holders send half of what they hold.
TEST(CostModel, BinomialScatterTreeIsTheThesisClosedForm) {
  const Platform platform = two_channels();
  for (const int p : {2, 8, 32}) {
    const long long total = m * p;
    const int steps = static_cast<int>(std::log2(p));
    const auto schedule_of = [&](int rank) {
      Schedule schedule;
      for (int i = 0; i < steps; ++i) {
        Step step;
        const int span = p >> i, half = span / 2;
        Region blocks{Buffer::recv, {}};
        for (int b = 0; b < half; ++b) blocks.blocks.push_back(rank - rank % span + half + b);
        if (rank % span == 0) step.sends.push_back({rank + half, blocks});
        if (rank % span == half) step.recvs.push_back({rank - half, blocks});
        schedule.steps.push_back(std::move(step));
      }
      return schedule;
    };
    const CheckSetup call{BlockNaming::allgather, p, [&](std::int64_t) { return total / p; }};
    double expected = 0;
    for (int i = 0; i < steps; ++i) expected += o_shm + 2 * platform.shm.transfer_time(total >> (i + 1), 1 << i);
    expect_close(predict(platform, call, sequential(p, p), schedule_of).us, expected,
                 "binomial p=" + std::to_string(p));
  }
}

// Eq. 5.17 (P = 16 on 4 nodes, sequential): 2·o0 + 2·o1 + 30·L0(m, 4) + 12·L1(m, 4), and the same
// rules at P = 32, Q = 8: 3·o0 + 2·o1 + 62·L0(m, 8) + 24·L1(m, 8); the initial copy c(m, Q) on top.
TEST(CostModel, RecursiveDoublingOnTwoChannelsSequentialIsTheThesisForm) {
  const Platform platform = two_channels();
  struct Case {
    int p, q;
    double shm_overheads, net_overheads, shm_transfers, net_transfers;
  };
  for (const Case& c : {Case{16, 4, 2, 2, 30, 12}, Case{32, 8, 3, 2, 62, 24}}) {
    const double L0 = platform.shm.transfer_time(m, c.q), L1 = platform.net.transfer_time(m, c.q);
    const double expected =
        L0 + c.shm_overheads * o_shm + c.net_overheads * o_net + c.shm_transfers * L0 + c.net_transfers * L1;
    expect_close(predict_allgather(platform, "recursive_doubling", sequential(c.p, c.q), m).us, expected,
                 "sequential p=" + std::to_string(c.p));
  }
}

// Round-robin (the summary's derived form, P = 16 on 4 nodes): the network stages come first with
// small messages: 2·o1 + 2·o0 + 30·L0(m, 4) + 3·L1(m, 4). Mapping changes the cost; LogGP cannot see it.
TEST(CostModel, RecursiveDoublingRoundRobinMovesLessOverTheNetwork) {
  const Platform platform = two_channels();
  const double L0 = platform.shm.transfer_time(m, 4), L1 = platform.net.transfer_time(m, 4);
  const double expected = L0 + 2 * o_net + 2 * o_shm + 30 * L0 + 3 * L1;
  const double round_robin_us = predict_allgather(platform, "recursive_doubling", round_robin(16, 4), m).us;
  expect_close(round_robin_us, expected, "round robin p=16");
  EXPECT_LT(round_robin_us, predict_allgather(platform, "recursive_doubling", sequential(16, 4), m).us);
}

// Messages the engine skips (empty Alltoallv pairs) cost nothing, and a rank's overheads add up: one
// rank sending to all others pays p−1 overheads, its transfers overlap.
TEST(CostModel, EmptyPairsAreFreeAndOverheadsAddUp) {
  const Platform platform = two_channels();
  const int p = 9;
  const AlgorithmChoice linear = choice_of("linear", Collective::alltoallv);
  const std::vector<int> one_node(p, 0);
  const auto schedule_of = [&](int rank) { return generate_schedule(linear, one_node, rank); };
  const auto hub_only = [](std::int64_t datum) { return datum / 9 == 0 && datum % 9 != 0 ? m : 0LL; };
  const Prediction hub = predict(platform, {BlockNaming::alltoall, p, hub_only}, one_node, schedule_of);
  expect_close(hub.us, (p - 1) * o_shm + 2 * platform.shm.transfer_time(m, p - 1), "rank 0 to all");
  const auto one_pair = [](std::int64_t datum) { return datum == 1 * 9 + 2 ? m : 0LL; };
  const Prediction single = predict(platform, {BlockNaming::alltoall, p, one_pair}, one_node, schedule_of);
  expect_close(single.us, o_shm + 2 * platform.shm.transfer_time(m, 1), "one pair");
  EXPECT_FALSE(single.approximated);
}

// Messages of different sizes on one channel share it fairly: the small ones finish first and leave
// it to the large one, which waits for Σ_j min(m_j, m) bytes, an effective τ of that over m (a
// count of messages would charge it as if all eight were as large as it).
TEST(CostModel, UnequalMessagesShareAChannelByTheirBytes) {
  Platform platform = two_channels();
  platform.shm.overhead_us = 0;  // every send starts at once
  const int p = 9;
  const AlgorithmChoice linear = choice_of("linear", Collective::alltoallv);
  const std::vector<int> one_node(p, 0);
  const auto schedule_of = [&](int rank) { return generate_schedule(linear, one_node, rank); };
  // Rank 0 sends 8m to rank 1 and m to ranks 2..8.
  const auto one_large = [](std::int64_t datum) { return datum / 9 != 0 || datum == 0 ? 0LL : datum == 1 ? 8 * m : m; };
  const Prediction hub = predict(platform, {BlockNaming::alltoall, p, one_large}, one_node, schedule_of);
  const double large = platform.shm.transfer_time(8 * m, (8.0 * m + 7.0 * m) / (8.0 * m));
  ASSERT_GT(large, platform.shm.transfer_time(m, 8));  // the large message ends the call
  expect_close(hub.us, 2 * large, "one large among small ones");
  EXPECT_LT(hub.us, 2 * platform.shm.transfer_time(8 * m, 8));
}

// Opaque phases (the node's shared-memory window, the leaders' library Allgatherv) are costed by
// their modelled messages and flagged; schedules of messages only are not.
TEST(CostModel, OpaquePhasesAreFlaggedAsApproximated) {
  const Platform platform = two_channels();
  EXPECT_TRUE(predict_allgather(platform, "hierarchical:inter=bruck,intra=shm", sequential(16, 4), m).approximated);
  EXPECT_TRUE(predict_allgather(platform, "hierarchical", sequential(16, 4), m).approximated);  // inter=native
  EXPECT_FALSE(predict_allgather(platform, "hierarchical:inter=bruck", sequential(16, 4), m).approximated);
  EXPECT_FALSE(predict_allgather(platform, "bruck", sequential(16, 4), m).approximated);
}

// Latency-only channels (bandwidth so high that a few bytes cost nothing), for the timing rules.
Platform latency_only(double shm_latency, double net_latency, double receive_overhead, long long eager_below) {
  Platform platform;
  for (auto [channel, latency] : {std::pair{&platform.shm, shm_latency}, std::pair{&platform.net, net_latency}}) {
    channel->transfer = {{1, latency, 1e9}};
    channel->receive_overhead_us = receive_overhead;
    channel->eager_threshold_bytes = eager_below;
  }
  platform.shm_copies_per_message = 1;
  platform.nic_copies_per_message = 0;
  return platform;
}

// Ranks leave a dissemination barrier at different times when its rounds mix the channels: with
// sequential nodes {0, 1} {2, 3} ranks 1 and 3 wait for one network message, 0 and 2 for two
// (round 0: 0.6 or 4.6 us + 1 us to take it in; round 1 from there: 4.6 + 1), with cyclic nodes
// every rank waits for one network and one node-local message.
TEST(CostModel, DisseminationBarrierExitTimesShowTheSkew) {
  const Platform platform = latency_only(0.6, 4.6, 1.0, 1 << 20);
  const std::vector<double> sequential_exit = dissemination_barrier_exit_us(platform, {0, 0, 1, 1});
  const std::vector<double> expected_sequential{11.2, 7.2, 11.2, 7.2};
  for (int r = 0; r < 4; ++r) EXPECT_NEAR(sequential_exit[r], expected_sequential[r], 1e-6) << "rank " << r;
  for (const double exit : dissemination_barrier_exit_us(platform, {0, 1, 0, 1})) EXPECT_NEAR(exit, 7.2, 1e-6);
}

// Rank 0 receives from ranks 1 and 2 in `order`, one Alltoall block each: forwarded blocks (scratch,
// sizes in a header: probed) or the senders' own (typed, not probed).
std::function<Schedule(int)> receiving(bool scratch, std::vector<int> order) {
  return [scratch, order](int rank) {
    Step step;
    const auto region = [scratch](int from) {
      return scratch ? Region{Buffer::scratch, {from * 3 + (3 - from)}} : Region{Buffer::recv, {from}};
    };
    if (rank == 0) {
      for (const int from : order) step.recvs.push_back({from, region(from)});
    } else {
      step.sends.push_back({0, scratch ? region(rank) : Region{Buffer::send, {0}}});
    }
    return Schedule{{step}, 0};
  };
}

// Messages whose blocks' sizes travel in a header are probed for, one after another in the order
// the receives are listed: rank 0 takes two forwarded blocks, from rank 1 on another node (arrives
// at 4.6 us) and from rank 2 on its own (at 0.6 us). Listed 2 then 1, it takes 2's at 0.6 + 1 and
// 1's at 4.6 + 1 = 5.6 us; listed 1 then 2, it waits for 1's first and ends at 4.6 + 1 + 1 = 6.6 us.
// Without headers (typed blocks the receiver knows) the order does not matter.
TEST(CostModel, ProbedReceivesAreTakenInTheOrderListed) {
  const Platform platform = latency_only(0.6, 4.6, 1.0, 1 << 20);
  const std::vector<int> nodes{0, 1, 0};
  const CheckSetup call = uniform_setup(BlockNaming::alltoall, 3, 8);
  EXPECT_NEAR(predict(platform, call, nodes, receiving(true, {2, 1})).us, 5.6, 1e-6);
  EXPECT_NEAR(predict(platform, call, nodes, receiving(true, {1, 2})).us, 6.6, 1e-6);
  EXPECT_NEAR(predict(platform, call, nodes, receiving(false, {1, 2})).us, 5.6, 1e-6);
  const RankProfile probing = rank_profile(call, 0, receiving(true, {1, 2})(0));
  ASSERT_EQ(probing.items.size(), 2u);
  EXPECT_EQ(probing.items[0].kind, ProfileItem::Kind::probe);
  EXPECT_EQ(probing.items[0].peer, 1);
}

// Where a message moves only once its receiver has posted the receive (SMPI), a probe sees the
// message as soon as it is sent, and the receive is posted after the probe (0.1 us each): the
// message moves from there. Rank 0 takes forwarded blocks from ranks 1 and 2 on other nodes (4.6 us
// each); rank 1 starts at 10 us. Listed 1 then 2, the probe for 1's holds back 2's: both move from
// 10.1 and 10.2, and are taken in one after the other from 14.7: 14.7 + 1 + 1 = 16.7 us. Listed 2
// then 1, 2's moves from 0.1 and is taken in once the probes are done (10.1 + 1), 1's at 14.7 + 1 =
// 15.7 us. Typed blocks, not probed, move as their senders send them: 4.6 + 1, then 14.6 + 1 = 15.6 us.
// Where senders wait for delivery (no eager messages) the held-back sender waits too: with rank 0
// from 10 us and rank 1 from 20 us, rank 2's message moves from 20.2 and rank 2, which started at
// 0, is done at 24.8 us (rank 0 takes 16.7 us from its start).
TEST(CostModel, ProbedMessagesMoveOnlyOnceProbedWhereTransfersWaitForTheReceiver) {
  Platform platform = latency_only(0.6, 4.6, 1.0, 1 << 20);
  platform.transfers_wait_for_receiver = true;
  platform.probe_us = 0.1;
  const CheckSetup call = uniform_setup(BlockNaming::alltoall, 3, 8);
  const std::vector<int> nodes{0, 1, 2};
  const std::vector<double> start{0.0, 10.0, 0.0};
  EXPECT_NEAR(predict(platform, call, nodes, receiving(true, {1, 2}), start).us, 16.7, 1e-6);
  EXPECT_NEAR(predict(platform, call, nodes, receiving(true, {2, 1}), start).us, 15.7, 1e-6);
  EXPECT_NEAR(predict(platform, call, nodes, receiving(false, {1, 2}), start).us, 15.6, 1e-6);
  platform.shm.eager_threshold_bytes = platform.net.eager_threshold_bytes = 0;
  EXPECT_NEAR(predict(platform, call, nodes, receiving(true, {1, 2}), {10.0, 20.0, 0.0}).us, 24.8, 1e-6);
}

// One message from rank 0 to rank 1, which starts 10 us later: an eager sender is done once it has
// injected (1 us of overhead); otherwise it waits for delivery (2 us later), and where transfers
// wait for the receiver, delivery starts only when rank 1 posts, at 10 us.
TEST(CostModel, EagerSendsAndTransfersThatWaitForTheReceiver) {
  const auto schedule_of = [](int rank) {
    Step step;
    if (rank == 0) step.sends.push_back({1, Region{Buffer::recv, {0}}});
    if (rank == 1) step.recvs.push_back({0, Region{Buffer::recv, {0}}});
    return Schedule{{step}, 0};
  };
  const CheckSetup call{BlockNaming::allgather, 2, [](std::int64_t) { return 100LL; }};
  struct Case {
    long long eager_below;
    bool wait;
    double expected;
  };
  for (const Case& c : {Case{1000, false, 1.0}, Case{0, false, 3.0}, Case{1000, true, 2.0}, Case{0, true, 12.0}}) {
    Platform platform = latency_only(2.0, 2.0, 0.0, c.eager_below);
    platform.shm.overhead_us = 1.0;
    platform.transfers_wait_for_receiver = c.wait;
    EXPECT_NEAR(predict(platform, call, {0, 0}, schedule_of, {0.0, 10.0}).us, c.expected, 1e-6)
        << "eager below " << c.eager_below << ", wait " << c.wait;
  }
}

// Two network messages leave node 0 together: τ = 2 on the NIC, and where network messages cross
// the memory channel, τ = 2 there too, and the slower of the two links sets the time.
TEST(CostModel, NetworkMessagesCanLoadTheNodesMemory) {
  Platform platform = two_channels();
  platform.shm = channel(0.5, 0.0, 8);  // memory slower than the network here
  platform.net = channel(10.0, 0.0, 8);
  platform.nic_copies_per_message = 0;
  const auto schedule_of = [](int rank) {
    Step step;
    if (rank < 2)
      step.sends.push_back({rank + 2, Region{Buffer::recv, {rank}}});
    else
      step.recvs.push_back({rank - 2, Region{Buffer::recv, {rank - 2}}});
    return Schedule{{step}, 0};
  };
  const CheckSetup call{BlockNaming::allgather, 4, [](std::int64_t) { return m; }};
  const std::vector<int> nodes{0, 0, 1, 1};
  expect_close(predict(platform, call, nodes, schedule_of).us, platform.net.transfer_time(m, 2), "apart");
  platform.network_crosses_memory = true;
  expect_close(predict(platform, call, nodes, schedule_of).us, platform.shm.transfer_time(m, 2), "memory crossed");
}

// A message over scattered blocks of the user's buffer (an hindexed type) is packed before it is
// injected and unpacked after it arrives; one run of blocks, or the engine's packed scratch, is not.
TEST(CostModel, ScatteredTypedMessagesCostPackingAtBothEnds) {
  Platform platform = latency_only(2.0, 2.0, 0.0, 1 << 20);
  platform.pack_gbytes_per_s = 1.0;  // 1000 bytes per microsecond
  const CheckSetup call{BlockNaming::allgather, 2, [](std::int64_t) { return 100LL; }};
  const auto one_message = [](Region region) {
    return [region](int rank) {
      Step step;
      if (rank == 0) step.sends.push_back({1, region});
      if (rank == 1) step.recvs.push_back({0, region});
      return Schedule{{step}, 0};
    };
  };
  EXPECT_NEAR(predict(platform, call, {0, 0}, one_message({Buffer::recv, {0, 2}})).us, 0.2 + 2.0 + 0.2, 1e-9);
  EXPECT_NEAR(predict(platform, call, {0, 0}, one_message({Buffer::recv, {0, 1}})).us, 2.0, 1e-9);
  EXPECT_NEAR(predict(platform, call, {0, 0}, one_message({Buffer::scratch, {0, 2}})).us, 2.0, 1e-9);
}

TEST(CostModel, RanksWithDifferentStepCountsAreRejected) {
  const Platform platform = two_channels();
  const auto uneven = [](int rank) { return Schedule{std::vector<Step>(static_cast<std::size_t>(rank + 1)), 0}; };
  EXPECT_THROW(predict(platform, {BlockNaming::allgather, 2, {}}, {0, 0}, uneven), std::invalid_argument);
}

}  // namespace
}  // namespace collshim::model
