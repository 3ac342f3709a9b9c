// Calibration: measurements taken the way collshim-bench --calibrate takes them, but produced by the
// cost model itself from a known description, must fit back to that description; bent curves (the
// simulator's size factors) must be reproduced at every measured size; and the fit must survive the
// noise real machines give (negative latencies, missing fan slopes); switches must be read back from
// latency probes as --calibrate takes them.
#include <gtest/gtest.h>

#include <cmath>

#include "model/platform/calibration.hpp"
#include "model/cost/cost_model.hpp"

namespace collshim::model {
namespace {

constexpr int per_node = 8;  // two nodes of 8 ranks, sequential

// One message from `from` to `to` in a step of a schedule over 2·per_node ranks.
void add_message(std::vector<Step>& steps, std::size_t step, int rank, int from, int to) {
  if (steps.size() <= step) steps.resize(step + 1);
  if (rank == from) steps[step].sends.push_back({to, Region{Buffer::recv, {from}}});
  if (rank == to) steps[step].recvs.push_back({from, Region{Buffer::recv, {from}}});
}

// The model's time of a schedule that moves `bytes` per message.
double model_us(const Platform& platform, long long bytes, const std::function<std::vector<Step>(int)>& steps_of) {
  const int p = 2 * per_node;
  std::vector<int> nodes;
  for (int r = 0; r < p; ++r) nodes.push_back(r / per_node);
  const CheckSetup call = uniform_setup(BlockNaming::allgather, p, bytes);
  return predict(platform, call, nodes, [&](int rank) { return Schedule{steps_of(rank), 0}; }).us;
}

// A step of what --calibrate times: τ = 1 a ping-pong (half the round trip); on shm a ring of τ
// ranks of node 0; on net a ring of 2τ ranks alternating between the nodes (τ messages each way).
double step_us(const Platform& platform, bool network, int tau, long long bytes) {
  const auto steps_of = [&](int rank) {
    std::vector<Step> steps;
    if (tau == 1) {
      const int partner = network ? per_node : 1;
      add_message(steps, 0, rank, 0, partner);
      add_message(steps, 1, rank, partner, 0);
    } else if (network) {
      std::vector<int> ring;
      for (int i = 0; i < tau; ++i) ring.insert(ring.end(), {i, per_node + i});
      for (std::size_t i = 0; i < ring.size(); ++i) add_message(steps, 0, rank, ring[i], ring[(i + 1) % ring.size()]);
    } else {
      for (int i = 0; i < tau; ++i) add_message(steps, 0, rank, i, (i + 1) % tau);
    }
    return steps;
  };
  return model_us(platform, bytes, steps_of) / (tau == 1 ? 2.0 : 1.0);
}

// The model skips empty messages (the engine does); one byte stands for none.
constexpr long long empty = 1;

// Zero-byte fan-out (rank 0 to k peers) or fan-in (k peers to rank 0), k = 1 and 4: the slope.
double fan_slope(const Platform& platform, bool network, bool in) {
  const auto fan = [&](int k) {
    return model_us(platform, empty, [&](int rank) {
      std::vector<Step> steps;
      for (int i = 0; i < k; ++i) {
        const int peer = network ? per_node + i : 1 + i;
        add_message(steps, 0, rank, in ? peer : 0, in ? 0 : peer);
      }
      return steps;
    });
  };
  return (fan(4) - fan(1)) / 3.0;
}

ChannelMeasurements measure(const Platform& platform, bool network, const std::vector<int>& taus) {
  ChannelMeasurements measured;
  for (const int tau : taus)
    for (long long bytes = 1; bytes <= (1 << 20); bytes *= 4)
      measured.steps.push_back({tau, bytes, step_us(platform, network, tau, bytes)});
  measured.zero_byte_step_us = step_us(platform, network, 1, empty);
  measured.send_overhead_us = fan_slope(platform, network, false);
  measured.receive_overhead_us = fan_slope(platform, network, true);
  measured.largest_size_tested = 1 << 20;
  return measured;
}

Channel linear_channel(double overhead, double receive_overhead, std::vector<TransferPoint> points) {
  Channel channel;
  channel.overhead_us = overhead;
  channel.receive_overhead_us = receive_overhead;
  channel.transfer = std::move(points);
  return channel;
}

// Latency the same at every τ: a fan's k messages share the channel, so a latency that grew with τ
// would enter its slope (as on a real machine, where it is small beside the overhead).
Platform known_platform() {
  Platform platform;
  platform.name = "known";
  platform.shm_copies_per_message = 1;
  platform.nic_copies_per_message = 0;
  platform.shm = linear_channel(0.4, 0.3, {{1, 0.5, 8.0}, {2, 0.5, 6.0}, {4, 0.5, 3.5}, {8, 0.5, 1.9}});
  platform.net = linear_channel(1.5, 0.8, {{1, 2.0, 10.0}, {2, 2.0, 7.0}, {4, 2.0, 4.0}, {8, 2.0, 2.2}});
  return platform;
}

TEST(Calibration, FitsBackTheDescriptionThatProducedTheMeasurements) {
  const Platform known = known_platform();
  CalibrationMeasurements measured;
  measured.name = "fitted";
  measured.shm = measure(known, false, {1, 2, 4, 8});
  measured.net = measure(known, true, {1, 2, 4, 8});
  const Calibration fitted = fit_platform(measured);
  EXPECT_EQ(fitted.platform.name, "fitted");
  for (const auto& [fit, truth] :
       {std::pair{&fitted.platform.shm, &known.shm}, std::pair{&fitted.platform.net, &known.net}}) {
    // Within what the one-byte stand-in for an empty message adds (about 10^-4 µs).
    EXPECT_NEAR(fit->overhead_us, truth->overhead_us, 1e-3);
    EXPECT_NEAR(fit->receive_overhead_us, truth->receive_overhead_us, 1e-3);
    ASSERT_EQ(fit->transfer.size(), truth->transfer.size());
    for (std::size_t i = 0; i < fit->transfer.size(); ++i) {
      EXPECT_EQ(fit->transfer[i].tau, truth->transfer[i].tau);
      EXPECT_NEAR(fit->transfer[i].latency_us, truth->transfer[i].latency_us, 2e-3) << "tau " << fit->transfer[i].tau;
      EXPECT_NEAR(fit->transfer[i].gbytes_per_s, truth->transfer[i].gbytes_per_s,
                  1e-3 * truth->transfer[i].gbytes_per_s);
    }
    for (const SizeFactor& factor : fit->size_factors) EXPECT_NEAR(factor.latency_factor, 1.0, 1e-3);
  }
  EXPECT_LT(fitted.shm.max_error, 1.001);
  EXPECT_LT(fitted.net.max_error, 1.001);
  // Nothing waited: every size was eager, up to what was tested.
  EXPECT_EQ(fitted.platform.net.eager_threshold_bytes, (1 << 20) + 1);
  EXPECT_FALSE(fitted.platform.transfers_wait_for_receiver);
}

// A channel the measured τ do not share (a fat pipe) stays unshared beyond them: 64 transfers at once
// take what one does, where the description would otherwise share the bandwidth 64 / 8 ways.
TEST(Calibration, AChannelThatNeverContendedStaysUnsharedBeyondTheMeasuredTau) {
  Platform known = known_platform();
  known.shm = linear_channel(0.4, 0.3, {{1, 0.5, 8.0}, {unshared_tau, 0.5, 8.0}});
  CalibrationMeasurements measured;
  measured.shm = measure(known, false, {1, 2, 4, 8});
  measured.net = measure(known, true, {1, 2, 4, 8});
  const Calibration fitted = fit_platform(measured);
  ASSERT_EQ(fitted.platform.shm.transfer.back().tau, unshared_tau);
  EXPECT_NEAR(fitted.platform.shm.transfer_time(1 << 20, 64), fitted.platform.shm.transfer_time(1 << 20, 1), 1e-6);
  // The network here is shared: it keeps its measured points, and 64 transfers share it.
  EXPECT_EQ(fitted.platform.net.transfer.back().tau, 8);
  EXPECT_GT(fitted.platform.net.transfer_time(1 << 20, 64), 7 * fitted.platform.net.transfer_time(1 << 20, 8));
}

// Whether network traffic loads the nodes' memory is read off a ring that runs beside network pairs:
// the fit must find what the description that produced the measurements said, either way.
TEST(Calibration, FindsWhetherNetworkTrafficCrossesTheNodesMemory) {
  for (const bool crossing : {false, true}) {
    Platform known = known_platform();
    known.network_crosses_memory = crossing;
    CalibrationMeasurements measured;
    measured.shm = measure(known, false, {1, 2, 4, 8});
    measured.net = measure(known, true, {1, 2, 4, 8});
    for (const long long bytes : {16384LL, 262144LL}) {
      const MixedIteration mixed{4, 4, bytes, 0.0};
      measured.mixed.push_back({4, 4, bytes, predicted_mixed_us(known, mixed)});
    }
    const Calibration fitted = fit_platform(measured);
    EXPECT_EQ(fitted.platform.network_crosses_memory, crossing);
    ASSERT_TRUE(fitted.crossing_errors);
    const auto [without, with] = *fitted.crossing_errors;
    EXPECT_GT(crossing ? without : with, 1.05) << "the two readings must be told apart";
  }
}

// SMPI-like corrections by message size bend L(m, τ) away from a line, latency and bandwidth apart;
// the fitted description must still give every measured step back (one factor per size for both
// parts was up to 1.28 off where the bandwidth part weighs).
TEST(Calibration, SizeFactorsReproduceABentCurveAtEveryMeasuredSize) {
  Platform known = known_platform();
  const std::vector<SizeFactor> bends = {
      {0, 2.0, 0.8}, {257, 1.95, 0.34}, {1426, 1.6, 0.6}, {15424, 3.5, 0.7}, {65472, 11.6, 0.94}};
  known.shm.size_factors = known.net.size_factors = bends;
  CalibrationMeasurements measured;
  measured.shm = measure(known, false, {1, 2, 4, 8});
  measured.net = measure(known, true, {1, 2, 4, 8});
  const Calibration fitted = fit_platform(measured);
  EXPECT_LT(fitted.shm.max_error, 1.05) << "worst at " << fitted.shm.worst.bytes << " B, tau " << fitted.shm.worst.tau;
  EXPECT_LT(fitted.net.max_error, 1.05) << "worst at " << fitted.net.worst.bytes << " B, tau " << fitted.net.worst.tau;
  EXPECT_LT(fitted.shm.median_error, 1.1);
  EXPECT_LT(fitted.net.median_error, 1.1);
  // Without the factors a line per τ is far off somewhere.
  Channel straight = fitted.platform.net;
  straight.size_factors.clear();
  double worst = 1;
  for (const StepTime& step : measured.net.steps) {
    const double predicted = predicted_step_us(straight, step.bytes, step.tau);
    worst = std::max(worst, std::max(predicted, step.us) / std::min(predicted, step.us));
  }
  EXPECT_GT(worst, 1.5);
}

TEST(Calibration, ProtocolAndEagerThresholdsAndWaitingForTheReceiver) {
  CalibrationMeasurements measured;
  for (ChannelMeasurements* channel : {&measured.shm, &measured.net}) {
    channel->steps = {{1, 1024, 3.0}, {1, 4096, 4.0}};
    channel->zero_byte_step_us = 2.0;
    channel->synchronous_zero_byte_step_us = 5.5;
    channel->largest_size_tested = 4096;
  }
  measured.net.eager_threshold_bytes = 2048;
  measured.net.waits_for_receiver = true;
  const Calibration fitted = fit_platform(measured);
  EXPECT_EQ(fitted.platform.net.eager_threshold_bytes, 2048);
  EXPECT_EQ(fitted.platform.net.protocol_threshold_bytes, 2048);
  EXPECT_NEAR(fitted.platform.net.protocol_overhead_us, 3.5, 1e-9);
  EXPECT_EQ(fitted.platform.shm.protocol_threshold_bytes, 0);
  EXPECT_EQ(fitted.platform.shm.eager_threshold_bytes, 4097);
  EXPECT_TRUE(fitted.platform.transfers_wait_for_receiver);
  // Without fan slopes the whole zero-byte step is the sender's overhead.
  EXPECT_NEAR(fitted.platform.shm.overhead_us, 2.0, 1e-9);
  EXPECT_EQ(fitted.platform.shm.receive_overhead_us, 0.0);
  EXPECT_TRUE(fitted.platform.local_copies_free == false);
}

// Noise: a small-size step below the overhead (negative transfer time) and fan slopes that exceed
// the zero-byte step must not give negative latencies, bandwidths or overheads.
TEST(Calibration, NoisyMeasurementsGiveAUsableDescription) {
  CalibrationMeasurements measured;
  for (ChannelMeasurements* channel : {&measured.shm, &measured.net}) {
    channel->steps = {{1, 1, 0.9}, {1, 64, 1.0}, {1, 4096, 1.2}, {1, 65536, 6.0}, {2, 1, 1.3}, {2, 65536, 20.0}};
    channel->zero_byte_step_us = 1.0;
    channel->send_overhead_us = 0.9;
    channel->receive_overhead_us = 0.6;
    channel->largest_size_tested = 65536;
  }
  measured.copies_take_time = false;
  const Calibration fitted = fit_platform(measured);
  const Platform& platform = fitted.platform;
  EXPECT_TRUE(platform.local_copies_free);
  EXPECT_NEAR(platform.shm.overhead_us + platform.shm.receive_overhead_us, 1.0, 1e-9);
  for (const Channel* channel : {&platform.shm, &platform.net}) {
    for (const TransferPoint& point : channel->transfer) {
      EXPECT_GE(point.latency_us, 0.0);
      EXPECT_GT(point.gbytes_per_s, 0.0);
    }
    for (const SizeFactor& factor : channel->size_factors) EXPECT_GT(factor.latency_factor, 0.0);
  }
  // And the description reads back as written.
  const Platform reread = parse_platform(platform_yaml(platform), "fitted.yaml");
  EXPECT_EQ(platform_yaml(reread), platform_yaml(platform));
}

// Half a ping-pong of `bytes` between the only ranks of nodes `from` and `to` of a job with one rank
// on each of `nodes` nodes, as the model costs it: what --calibrate's switch probe measures.
double probe_us(const Platform& platform, int nodes, int from, int to, long long bytes) {
  std::vector<int> node_of_rank(static_cast<std::size_t>(nodes));
  for (int r = 0; r < nodes; ++r) node_of_rank[static_cast<std::size_t>(r)] = r;
  const auto steps_of = [&](int rank) {
    std::vector<Step> steps;
    add_message(steps, 0, rank, from, to);
    add_message(steps, 1, rank, to, from);
    return steps;
  };
  const CheckSetup call = uniform_setup(BlockNaming::allgather, nodes, bytes);
  return predict(platform, call, node_of_rank, [&](int rank) { return Schedule{steps_of(rank), 0}; }).us / 2;
}

// The probes --calibrate takes: from node 0, then from the first node past each run of near ones.
std::vector<SwitchProbe> probes(const Platform& platform, int nodes, const std::vector<int>& node_order = {}) {
  std::vector<SwitchProbe> result;
  const auto node = [&](int i) { return node_order.empty() ? i : node_order[static_cast<std::size_t>(i)]; };
  for (int from = 0; from < nodes - 1;) {
    SwitchProbe probe{from, {}};
    for (int to = from + 1; to < nodes; ++to)
      probe.us.push_back(probe_us(platform, nodes, node(from), node(to), empty));
    result.push_back(probe);
    const std::optional<int> run = switch_run(probe.us);
    if (!run) break;
    from += 1 + *run;
  }
  return result;
}

TEST(Calibration, SwitchesAreReadBackFromLatencyProbes) {
  const Platform known = known_platform();
  CalibrationMeasurements measured;
  measured.shm = measure(known, false, {1, 2, 4, 8});
  measured.net = measure(known, true, {1, 2, 4, 8});
  measured.switch_probe_bytes = empty;
  EXPECT_EQ(fit_platform(measured).switches_note, "not measured (fewer than three nodes)");

  Platform cabinets = known;  // 10 nodes: 4 per switch, the last switch partly used
  cabinets.nodes_per_switch = {4};
  cabinets.across_switches_latency_us = 2.5;
  measured.switch_probes = probes(cabinets, 10);
  ASSERT_EQ(measured.switch_probes.size(), 3u);
  Calibration fitted = fit_platform(measured);
  EXPECT_EQ(fitted.platform.nodes_per_switch, std::vector<int>{4}) << fitted.switches_note;
  EXPECT_NEAR(fitted.platform.across_switches_latency_us, 2.5, 1e-3);

  Platform uneven = known;  // Yahoo's two cabinets of 5 and 11 nodes
  uneven.nodes_per_switch = {5, 11};
  uneven.across_switches_latency_us = 12;
  measured.switch_probes = probes(uneven, 16);
  fitted = fit_platform(measured);
  EXPECT_EQ(fitted.platform.nodes_per_switch, (std::vector<int>{5, 11})) << fitted.switches_note;
  EXPECT_NEAR(fitted.platform.across_switches_latency_us, 12, 1e-3);

  measured.switch_probes = probes(known, 6);  // one switch
  fitted = fit_platform(measured);
  EXPECT_TRUE(fitted.platform.nodes_per_switch.empty());
  EXPECT_EQ(fitted.switches_note, "one switch: no step up in latency among 6 nodes");

  // The job's nodes alternate between two switches: no run to describe, so no switches.
  measured.switch_probes = probes(cabinets, 8, {0, 4, 1, 5, 2, 6, 3, 7});
  fitted = fit_platform(measured);
  EXPECT_TRUE(fitted.platform.nodes_per_switch.empty());
  EXPECT_NE(fitted.switches_note.find("not the ones right after it"), std::string::npos) << fitted.switches_note;
}

TEST(Calibration, ASwitchRunEndsAtTheFirstStepUpInLatency) {
  EXPECT_EQ(switch_run({}), 0);
  EXPECT_EQ(switch_run({3.0, 3.1, 2.9}), 3);        // no step: all near
  EXPECT_EQ(switch_run({3.0, 3.2, 5.5, 5.4}), 2);   // 2.3 µs up
  EXPECT_EQ(switch_run({3.0, 3.3, 3.6}), 3);        // steps below 0.5 µs
  EXPECT_EQ(switch_run({20.0, 21.5, 22.5}), 3);     // below a tenth of 20 µs
  EXPECT_EQ(switch_run({106.0, 106.0, 130.0}), 2);  // Yahoo: 24 µs up from 106
  EXPECT_EQ(switch_run({5.5, 3.0}), std::nullopt);  // the near node comes after a far one
}

}  // namespace
}  // namespace collshim::model
