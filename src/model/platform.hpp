#pragma once
// A machine for the cost model, in the τ-Lop thesis's terms (Rico Gallego, "τ-Lop: Scalably and
// Accurately Modeling Contention and Mapping Effects in Multi-core Clusters", 2015): per
// communication channel, the overhead o(m) and the transfer time L(m, τ) of m bytes while τ
// transfers share the channel. Channel `shm` is a node's memory (messages inside a node, local
// copies and the copies to and from the NIC), channel `net` the network between nodes.
//
// The description is YAML (config/platforms/*.yaml): times in microseconds, bandwidths in GB/s
// (10^9 bytes per second). L(m, τ) = latency(τ) + m / bandwidth(τ), with latency and seconds per byte
// interpolated linearly between the τ listed; beyond the largest τ listed the bandwidth is taken as
// shared by all τ transfers (time per byte · τ / τ_max, latency unchanged), which stays within the
// thesis's bound L(m, A·τ) ≤ A·L(m, τ). One point at τ = 1 thus describes a fair-shared link.
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "selector/yaml_document.hpp"

namespace collshim::model {

// L(m, τ) at one concurrency τ.
struct TransferPoint {
  int tau = 1;
  double latency_us = 0;
  double gbytes_per_s = 1;
};

// From `from_bytes` on (up to the next entry), latency × latency_factor and bandwidth ×
// bandwidth_factor: a network model's piecewise corrections by message size (SMPI's default
// smpi/lat-factor and smpi/bw-factor, for instance).
struct SizeFactor {
  long long from_bytes = 0;
  double latency_factor = 1;
  double bandwidth_factor = 1;
};

struct Channel {
  // o(m): O_S below the protocol threshold H, O_S + O_P from it on (rendezvous).
  double overhead_us = 0;
  double protocol_overhead_us = 0;
  long long protocol_threshold_bytes = 0;  // 0: no protocol switch
  double receive_overhead_us = 0;          // per message received (LogGP's o_r; τ-Lop folds it into o)
  // Messages below this size are eager: the sender is done once it has injected them (MPI's eager
  // protocol, SMPI's detached sends). From it on, and with 0 always, the sender waits for delivery.
  long long eager_threshold_bytes = 0;
  std::vector<TransferPoint> transfer;   // ascending τ, at least one point
  std::vector<SizeFactor> size_factors;  // ascending from_bytes; none: factors of 1

  double overhead(long long bytes) const;
  double transfer_time(long long bytes, double tau) const;  // L(m, τ), µs (τ may be an effective, fractional one)
  const SizeFactor& size_factor(long long bytes) const;     // the one that applies to `bytes`
};

struct Platform {
  std::string name;
  Channel shm;
  Channel net;
  int shm_copies_per_message = 2;  // transfers of a message inside a node (2: through a shared buffer, eq. 3.1)
  int nic_copies_per_message = 2;  // shm transfers of a network message (user to NIC and NIC to user, eq. 3.3)
  double reduce_gbytes_per_s = 0;  // γ: bytes combined per second by one rank; 0: reductions are free
  double pack_gbytes_per_s = 0;    // p(m): packing or unpacking a scattered message; 0: free
  // A message starts moving only once its receiver has posted the receive (SimGrid's mailboxes with
  // smpi/async-small-thresh 0); otherwise at once (eager buffering at the receiver).
  bool transfers_wait_for_receiver = false;
  // One MPI_Probe that finds its message (SMPI: smpi/iprobe per poll). Where transfers wait for the
  // receiver, a probed message starts moving only once the receiver has probed it and posted its receive.
  double probe_us = 0;
  // Network messages also cross the memory channel of both nodes (as in bench/sim's contending
  // platforms, where a node's memory link carries everything in, out of and inside the node): τ on a
  // node's memory counts them, and a network message is as slow as the slowest of NIC and memories.
  bool network_crosses_memory = false;
  // Local copies cost nothing (a simulator that does not time computation, as bench/sim runs SMPI);
  // otherwise a copy costs one transfer on the memory channel, τ = the node's ranks copying (c(m, τ)).
  bool local_copies_free = false;
  // Network switches: a job's nodes, in the order it uses them, fill the switches in turn
  // (nodes_per_switch[i] on switch i, the last size repeating), and a message between nodes on two
  // switches takes across_switches_latency_us more, scaled like the network's latency (a fat tree's
  // leaves, a cluster's two cabinets). Empty: one switch, the network's latency for every pair.
  std::vector<int> nodes_per_switch;
  double across_switches_latency_us = 0;
  int switch_of_node(int node) const;
};

// A description that cannot be used: every problem of the file (problems()), each naming the file,
// line and column and what was expected; what() is their texts, one a line.
class PlatformError : public YamlFileError {
 public:
  using YamlFileError::YamlFileError;
};

// `source_name` is what error messages call the text (a file name).
Platform parse_platform(const std::string& yaml_text, const std::string& source_name);
Platform load_platform(const std::string& path);

// The description as YAML that parse_platform reads back to the same Platform (every field written,
// numbers with enough digits to round-trip).
std::string platform_yaml(const Platform& platform);

}  // namespace collshim::model
