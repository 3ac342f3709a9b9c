#include "model/platform/calibration.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "model/cost/cost_model.hpp"

namespace collshim::model {
namespace {

// L = latency + per_byte · m, in µs.
struct Line {
  double latency_us = 0, us_per_byte = 0;
  double at(long long bytes) const { return latency_us + us_per_byte * static_cast<double>(bytes); }
};

struct Sample {
  long long bytes = 0;
  double transfer_us = 0;  // L(m, τ): the step less the overheads
  double step_us = 0;      // the whole step, whose proportion the fit minimises
};

// Least squares on proportional error: minimise Σ ((latency + β·m − L) / step)². A negative latency
// (noise at the small end) is refitted through the origin; a line that does not rise with m keeps
// its mean level with a negligible slope.
Line fit_line(const std::vector<Sample>& samples) {
  double s00 = 0, s01 = 0, s11 = 0, r0 = 0, r1 = 0;
  for (const Sample& sample : samples) {
    const double w = 1.0 / (sample.step_us * sample.step_us);
    const double m = static_cast<double>(sample.bytes);
    s00 += w, s01 += w * m, s11 += w * m * m, r0 += w * sample.transfer_us, r1 += w * m * sample.transfer_us;
  }
  constexpr double negligible_us_per_byte = 1e-9;  // 10^6 GB/s
  const double determinant = s00 * s11 - s01 * s01;
  Line line;
  if (samples.size() >= 2 && determinant > 0) {
    line.us_per_byte = (s00 * r1 - s01 * r0) / determinant;
    line.latency_us = (r0 - s01 * line.us_per_byte) / s00;
  }
  if (samples.size() < 2 || determinant <= 0 || line.us_per_byte <= 0) {
    line = {std::max(0.0, r0 / s00), negligible_us_per_byte};
  } else if (line.latency_us < 0) {
    line = {0.0, std::max(r1 / s11, negligible_us_per_byte)};
  }
  return line;
}

double proportional_error(double a, double b) {
  if (a <= 0 || b <= 0) return a == b ? 1.0 : INFINITY;
  return std::max(a, b) / std::min(a, b);
}

Channel fit_channel(const ChannelMeasurements& measured) {
  Channel channel;
  // Overheads: the fan slopes where measured, scaled down if noise makes them exceed the whole
  // zero-byte step; otherwise τ-Lop's o = RTT(0)/2, all of it the sender's.
  if (measured.send_overhead_us && measured.receive_overhead_us) {
    double send = std::max(0.0, *measured.send_overhead_us), receive = std::max(0.0, *measured.receive_overhead_us);
    if (send + receive > measured.zero_byte_step_us && send + receive > 0) {
      const double scale = measured.zero_byte_step_us / (send + receive);
      send *= scale, receive *= scale;
    }
    channel.overhead_us = send, channel.receive_overhead_us = receive;
  } else {
    channel.overhead_us = std::max(0.0, measured.zero_byte_step_us);
  }
  // Eager below the first size that waited; a rendezvous from there on, whose cost is the synchronous
  // round trip's excess. If every size tested was eager, so is everything up to the largest tested.
  if (measured.eager_threshold_bytes) {
    channel.eager_threshold_bytes = *measured.eager_threshold_bytes;
    channel.protocol_threshold_bytes = *measured.eager_threshold_bytes;
    if (measured.synchronous_zero_byte_step_us)
      channel.protocol_overhead_us =
          std::max(0.0, *measured.synchronous_zero_byte_step_us - measured.zero_byte_step_us);
  } else {
    channel.eager_threshold_bytes = measured.largest_size_tested + 1;
  }

  std::map<int, std::vector<Sample>> by_tau;
  for (const StepTime& step : measured.steps) {
    if (step.us <= 0) continue;
    const double transfer = step.us - channel.overhead(step.bytes) - channel.receive_overhead_us;
    by_tau[step.tau].push_back({step.bytes, transfer, step.us});
  }
  std::map<int, Line> lines;
  for (const auto& [tau, samples] : by_tau) {
    const Line line = fit_line(samples);
    lines[tau] = line;
    channel.transfer.push_back({tau, line.latency_us, 1e-3 / line.us_per_byte});
  }
  if (channel.transfer.empty()) channel.transfer.push_back({1, 0.0, 1e6});
  // Beyond the largest τ measured the model shares the bandwidth among all transfers. Where the
  // measured τ saw no sharing at all (a fat pipe, as SimGrid's loopback), none is assumed beyond
  // them either: a node runs more transfers at once than it has ranks (Bruck's radix 8, Sparbit), and
  // sharing extrapolated from nothing over-predicted those up to 6x.
  if (channel.transfer.size() > 1 &&
      channel.transfer.back().gbytes_per_s >= unshared_fraction * channel.transfer.front().gbytes_per_s) {
    TransferPoint flat = channel.transfer.back();
    flat.tau = unshared_tau;
    channel.transfer.push_back(flat);
  }

  // Per measured size, factors on the lines' latency (a) and per-byte (b) parts: least squares over τ
  // of (a·latency + b·β·m − L) / step. Simulators correct the two apart (SMPI at 2 KiB: latency ×1.6,
  // bandwidth ×0.6), and the τ where the bandwidth part weighs tell them apart; one factor for both
  // came out right at τ = 1 and 1.5-2× fast where many transfers share a NIC. Where that cannot be
  // told (one τ, or a fit that is not positive) one factor, the geometric mean of measured / fitted.
  struct Sums {
    double ll = 0, lb = 0, bb = 0, lt = 0, bt = 0, log_ratio = 0;
    int count = 0;
  };
  std::map<long long, Sums> by_size;
  for (const auto& [tau, samples] : by_tau) {
    for (const Sample& sample : samples) {
      const Line& line = lines[tau];
      const double fitted = line.at(sample.bytes);
      if (sample.transfer_us <= 0 || fitted <= 0) continue;
      Sums& sums = by_size[sample.bytes];
      const double w = 1.0 / (sample.step_us * sample.step_us);
      const double l = line.latency_us, b = line.us_per_byte * static_cast<double>(sample.bytes);
      sums.ll += w * l * l, sums.lb += w * l * b, sums.bb += w * b * b;
      sums.lt += w * l * sample.transfer_us, sums.bt += w * b * sample.transfer_us;
      sums.log_ratio += std::log(sample.transfer_us / fitted), ++sums.count;
    }
  }
  for (const auto& [bytes, sums] : by_size) {
    const long long from = channel.size_factors.empty() ? 0 : bytes;
    const double determinant = sums.ll * sums.bb - sums.lb * sums.lb;
    if (determinant > 1e-9 * sums.ll * sums.bb) {
      const double a = (sums.lt * sums.bb - sums.bt * sums.lb) / determinant;
      const double b = (sums.bt * sums.ll - sums.lt * sums.lb) / determinant;
      if (a > 0 && b > 0) {
        channel.size_factors.push_back({from, a, 1.0 / b});
        continue;
      }
    }
    const double factor = std::exp(sums.log_ratio / sums.count);
    channel.size_factors.push_back({from, factor, 1.0 / factor});
  }
  return channel;
}

double median_of(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

FitQuality quality(const Channel& channel, const std::vector<StepTime>& steps) {
  FitQuality result;
  std::vector<double> errors;
  for (const StepTime& step : steps) {
    const double error = proportional_error(predicted_step_us(channel, step.bytes, step.tau), step.us);
    errors.push_back(error);
    if (error > result.max_error) result.max_error = error, result.worst = step;
  }
  if (!errors.empty()) result.median_error = median_of(std::move(errors));
  return result;
}

}  // namespace

double predicted_mixed_us(const Platform& platform, const MixedIteration& mixed) {
  // Node A: pair ranks 0..pairs-1, then the ring; node B: their partners.
  const int a_size = mixed.pairs + mixed.ring, p = a_size + mixed.pairs;
  std::vector<int> node_of_rank(static_cast<std::size_t>(p), 0);
  for (int r = a_size; r < p; ++r) node_of_rank[static_cast<std::size_t>(r)] = 1;
  const auto schedule_of = [&](int rank) {
    Schedule schedule;
    schedule.steps.resize(2);
    const auto message = [&](Step& step, int from, int to) {
      if (rank == from) step.sends.push_back({to, Region{Buffer::recv, {from}}});
      if (rank == to) step.recvs.push_back({from, Region{Buffer::recv, {from}}});
    };
    for (int s = 0; s < 2; ++s) {
      Step& step = schedule.steps[static_cast<std::size_t>(s)];
      for (int i = 0; i < mixed.pairs; ++i) message(step, i, a_size + i), message(step, a_size + i, i);
      for (int i = 0; i < mixed.ring; ++i) message(step, mixed.pairs + i, mixed.pairs + (i + 1) % mixed.ring);
    }
    return schedule;
  };
  const long long bytes = mixed.bytes;
  const CheckSetup call = uniform_setup(BlockNaming::allgather, p, bytes);
  return predict(platform, call, node_of_rank, schedule_of).us;
}

double predicted_step_us(const Channel& channel, long long bytes, int tau) {
  return channel.overhead(bytes) + channel.transfer_time(bytes, tau) + channel.receive_overhead_us;
}

std::optional<int> switch_run(const std::vector<double>& probe_us) {
  if (probe_us.empty()) return 0;
  std::vector<double> sorted = probe_us;
  std::sort(sorted.begin(), sorted.end());
  const double step = std::max(0.5, 0.1 * sorted.front());
  double near_limit = sorted.back();  // no step: every node is near
  for (std::size_t i = 0; i + 1 < sorted.size(); ++i) {
    if (sorted[i + 1] - sorted[i] >= step) {
      near_limit = sorted[i];
      break;
    }
  }
  int run = 0;
  while (run < static_cast<int>(probe_us.size()) && probe_us[static_cast<std::size_t>(run)] <= near_limit) ++run;
  for (std::size_t j = static_cast<std::size_t>(run); j < probe_us.size(); ++j)
    if (probe_us[j] <= near_limit) return std::nullopt;  // a near node after a far one
  return run;
}

namespace {

// Switch sizes and the latency across them from the probes: each probe's node starts a switch of
// itself and the run of nodes near it; the extra latency is the median over probes of the far
// nodes' median latency less the near ones', as the network's latency factor at the probe's size
// will scale it back.
void fit_switches(const CalibrationMeasurements& measurements, Calibration& result) {
  Platform& platform = result.platform;
  if (measurements.switch_probes.empty()) {
    result.switches_note = "not measured (fewer than three nodes)";
    return;
  }
  std::vector<int> sizes;
  std::vector<double> extra;
  for (const SwitchProbe& probe : measurements.switch_probes) {
    const std::optional<int> run = switch_run(probe.us);
    if (!run) {
      result.switches_note = "node " + std::to_string(probe.from_node) +
                             "'s nearest nodes are not the ones right after it: switches that do not hold runs of the "
                             "job's nodes cannot be described; none written";
      return;
    }
    sizes.push_back(1 + *run);
    if (*run > 0 && *run < static_cast<int>(probe.us.size())) {
      const auto split = probe.us.begin() + *run;
      extra.push_back(median_of({split, probe.us.end()}) - median_of({probe.us.begin(), split}));
    }
  }
  const int nodes = measurements.switch_probes.back().from_node + sizes.back();
  if (extra.empty()) {
    result.switches_note = "one switch: no step up in latency among " + std::to_string(nodes) + " nodes";
    return;
  }
  // The last switch may be one the job used only part of: where every other is the same size and
  // the last no larger, that size repeats.
  if (std::all_of(sizes.begin(), sizes.end() - 1, [&](int size) { return size == sizes.front(); }) &&
      sizes.back() <= sizes.front())
    sizes.resize(1);
  platform.nodes_per_switch = sizes;
  platform.across_switches_latency_us =
      median_of(extra) / platform.net.size_factor(measurements.switch_probe_bytes).latency_factor;
  result.switches_note =
      std::to_string(measurements.switch_probes.size()) + " switches among " + std::to_string(nodes) + " nodes";
}

}  // namespace

Calibration fit_platform(const CalibrationMeasurements& measurements) {
  Calibration result;
  Platform& platform = result.platform;
  platform.name = measurements.name;
  // Each step time is a whole transmission as measured: one transfer per message on either channel.
  platform.shm_copies_per_message = 1;
  platform.nic_copies_per_message = 0;
  platform.shm = fit_channel(measurements.shm);
  platform.net = fit_channel(measurements.net);
  const auto& shm_waits = measurements.shm.waits_for_receiver;
  const auto& net_waits = measurements.net.waits_for_receiver;
  platform.transfers_wait_for_receiver = shm_waits.value_or(false) || net_waits.value_or(false);
  platform.reduce_gbytes_per_s = measurements.reduce_gbytes_per_s.value_or(0.0);
  platform.pack_gbytes_per_s = measurements.pack_gbytes_per_s.value_or(0.0);
  platform.local_copies_free = !measurements.copies_take_time;
  if (!measurements.mixed.empty()) {
    double error[2] = {0, 0};
    for (const bool crossing : {false, true}) {
      platform.network_crosses_memory = crossing;
      for (const MixedIteration& mixed : measurements.mixed)
        error[crossing] += std::abs(std::log(predicted_mixed_us(platform, mixed) / mixed.us));
      error[crossing] = std::exp(error[crossing] / static_cast<double>(measurements.mixed.size()));
    }
    platform.network_crosses_memory = error[1] < error[0];
    result.crossing_errors = {error[0], error[1]};
  }
  result.shm = quality(platform.shm, measurements.shm.steps);
  result.net = quality(platform.net, measurements.net.steps);
  fit_switches(measurements, result);
  return result;
}

}  // namespace collshim::model
