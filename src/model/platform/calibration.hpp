#pragma once
// A platform description from measurements on a real allocation, after the τ-Lop thesis's method
// (Rico Gallego, "τ-Lop: Scalably and Accurately Modeling Contention and Mapping Effects in
// Multi-core Clusters", 2015, chapter 7): zero-byte round trips give the overhead, ring operations
// with τ concurrent transfers give L(m, τ) per channel. `collshim-bench --calibrate` takes the
// measurements (it needs MPI); fitting them is here, so it can be tested without MPI.
//
// Every operation is timed as the cost model would cost it with the description it yields, so a
// description fitted to the model's own predictions gives those predictions back:
//   - a step of a ring (τ ranks of one node each send to the next and receive from the previous), of
//     a ping-pong (τ = 1), or of a ring of 2τ ranks alternating between two nodes (τ messages each
//     way across the network, the thesis's Ring^1_τ): o(m) + L(m, τ) + o_r;
//   - o_s and o_r, the per-message costs of sending and receiving, from how a zero-byte fan-out and
//     fan-in grow with their number of peers (the model injects a rank's messages one after another
//     and takes its arrivals one after another);
//   - the eager threshold: the smallest size whose blocking send waits for a late receiver;
//   - the protocol overhead: a zero-byte synchronous round trip's excess over an eager one;
//   - whether network messages also load the nodes' memory: a ring inside a node while other ranks
//     of it exchange with another node, predicted by the cost model both ways; the closer wins.
// L(m, τ) is fitted per τ as latency + m / bandwidth by least squares on proportional error, then
// corrected per measured size by a latency factor and a bandwidth factor (least squares over τ; one
// factor for both, the geometric mean over τ of measured / fitted, where τ cannot tell them apart):
// eager and rendezvous regimes, caches and the simulator's size factors bend the curve, and a
// straight line would miss them by up to 2×.
#include <optional>
#include <string>
#include <vector>

#include "model/platform/platform.hpp"

namespace collshim::model {

// One timed operation: what one transfer of `bytes` took with τ of them concurrent, per step.
struct StepTime {
  int tau = 1;
  long long bytes = 0;
  double us = 0;
};

struct ChannelMeasurements {
  std::vector<StepTime> steps;   // ring or paired steps, every τ and size measured
  double zero_byte_step_us = 0;  // half a zero-byte round trip
  // Per-message slopes of a fan-out and a fan-in; unknown where too few ranks share the channel (the
  // round trip's overhead is then all charged to the sender, as τ-Lop does).
  std::optional<double> send_overhead_us, receive_overhead_us;
  std::optional<double> synchronous_zero_byte_step_us;  // MPI_Ssend round trip / 2
  // Smallest size measured whose blocking send waited for the receiver; none: every size was eager.
  std::optional<long long> eager_threshold_bytes;
  long long largest_size_tested = 0;
  // Whether an eager message waited for its receiver to post before it moved (it took about a
  // transfer time to receive after a delay); unknown if no size was eager.
  std::optional<bool> waits_for_receiver;
};

// Both channels at once: a ring of `ring` ranks inside node A while `pairs` ranks of A exchange with
// B, both ways at once (each iteration two such steps); `us` per iteration.
// Whether the ring slows down says whether network traffic crosses the nodes' memory channel.
struct MixedIteration {
  int ring = 0, pairs = 0;
  long long bytes = 0;
  double us = 0;
};

// Network switches, seen from latencies: half a small round trip from the first rank of node
// `from_node` (the job's node order) to the first rank of every later node, us[j] to node
// from_node + 1 + j. The first probe is from node 0; each next one from the first node not on the
// switches found so far (switch_run).
struct SwitchProbe {
  int from_node = 0;
  std::vector<double> us;
};

struct CalibrationMeasurements {
  std::string name;
  ChannelMeasurements shm, net;
  std::vector<MixedIteration> mixed;
  std::vector<SwitchProbe> switch_probes;  // none with fewer than three nodes
  long long switch_probe_bytes = 1;
  std::optional<double> reduce_gbytes_per_s;  // one rank combining doubles; none: took no time
  std::optional<double> pack_gbytes_per_s;    // MPI_Pack of a strided type; none: took no time
  bool copies_take_time = true;               // a large memcpy took measurable time
};

// How well the description reproduces what was measured: per channel, the median and largest
// proportional error (max(predicted, measured) / min) of the step times.
struct FitQuality {
  double median_error = 1, max_error = 1;
  StepTime worst;
};

struct Calibration {
  Platform platform;
  FitQuality shm, net;
  // The mixed iterations' proportional error (geometric mean) with network_crosses_memory false and
  // true: the description takes the better; none if nothing mixed was measured.
  std::optional<std::pair<double, double>> crossing_errors;
  std::string switches_note;  // how the switches were read from the probes, or why none were
};

Calibration fit_platform(const CalibrationMeasurements& measurements);

// How many nodes right after a probe's node share its switch: the run of nodes before the first
// step up in latency of at least 0.5 µs and a tenth of the nearest (all of them where there is
// none). None where nodes beyond the step are as near as those before it: the switches do not hold
// runs of the job's nodes, which a description cannot say.
std::optional<int> switch_run(const std::vector<double>& probe_us);

// A channel whose bandwidth at the largest τ measured is at least this fraction of τ = 1's is taken
// not to contend at all: its description repeats that point at τ = unshared_tau.
inline constexpr double unshared_fraction = 0.95;
inline constexpr int unshared_tau = 1 << 20;

// The step time the description predicts for a measured operation (o(m) + L(m, τ) + o_r).
double predicted_step_us(const Channel& channel, long long bytes, int tau);
// The cost model's time for one mixed iteration (ranks as MixedIteration describes).
double predicted_mixed_us(const Platform& platform, const MixedIteration& mixed);

}  // namespace collshim::model
