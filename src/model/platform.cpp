#include "model/platform.hpp"
#include "model/yaml_reader.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>

namespace collshim::model {

double Channel::overhead(long long bytes) const {
  const bool rendezvous = protocol_threshold_bytes > 0 && bytes >= protocol_threshold_bytes;
  return overhead_us + (rendezvous ? protocol_overhead_us : 0.0);
}

const SizeFactor& Channel::size_factor(long long bytes) const {
  static const SizeFactor none;
  const SizeFactor* factor = &none;
  for (const SizeFactor& candidate : size_factors) {
    if (candidate.from_bytes <= bytes) factor = &candidate;
  }
  return *factor;
}

int Platform::switch_of_node(int node) const {
  if (nodes_per_switch.empty()) return 0;
  int index = 0;
  for (const int size : nodes_per_switch) {
    if (node < size) return index;
    node -= size;
    ++index;
  }
  return index + node / nodes_per_switch.back();  // beyond the list, the last size repeats
}

double Channel::transfer_time(long long bytes, double tau) const {
  const SizeFactor& factor = size_factor(bytes);
  const auto time = [bytes, factor](double latency_us, double us_per_byte) {
    return latency_us * factor.latency_factor + static_cast<double>(bytes) * us_per_byte / factor.bandwidth_factor;
  };
  const auto us_per_byte = [](const TransferPoint& point) { return 1e-3 / point.gbytes_per_s; };
  tau = std::max(tau, 1.0);
  const TransferPoint& first = transfer.front();
  const TransferPoint& last = transfer.back();
  if (tau <= first.tau) return time(first.latency_us, us_per_byte(first));
  if (tau >= last.tau)  // beyond what was described the bandwidth is shared: per-byte time grows with τ
    return time(last.latency_us, us_per_byte(last) * tau / last.tau);
  const auto high =
      std::find_if(transfer.begin(), transfer.end(), [tau](const TransferPoint& point) { return point.tau >= tau; });
  const auto low = high - 1;
  const double w = (tau - low->tau) / (high->tau - low->tau);
  return time((1 - w) * low->latency_us + w * high->latency_us, (1 - w) * us_per_byte(*low) + w * us_per_byte(*high));
}

namespace {

// Reads one description, reporting the first problem with its place in the file.
class PlatformReader : public YamlReader<PlatformError> {
 public:
  using YamlReader::YamlReader;

  Platform read(const std::string& text) {
    YAML::Node root;
    try {
      root = YAML::Load(text);
    } catch (const YAML::ParserException& e) {
      fail(e.mark, "malformed YAML: " + e.msg);
    }
    if (!root.IsMap()) fail(root.Mark(), "expected a map with keys 'name', 'shm' and 'net'");
    Platform platform;
    bool have_shm = false, have_net = false;
    for_each_key(
        root, "the platform",
        {{"name", [&](const YAML::Node& v) { platform.name = scalar(v, "name"); }},
         {"shm", [&](const YAML::Node& v) { platform.shm = channel(v, "shm"), have_shm = true; }},
         {"net", [&](const YAML::Node& v) { platform.net = channel(v, "net"), have_net = true; }},
         {"shm_copies_per_message",
          [&](const YAML::Node& v) { platform.shm_copies_per_message = integer(v, "shm_copies_per_message", 0, 8); }},
         {"nic_copies_per_message",
          [&](const YAML::Node& v) { platform.nic_copies_per_message = integer(v, "nic_copies_per_message", 0, 8); }},
         {"transfers_wait_for_receiver",
          [&](const YAML::Node& v) {
            platform.transfers_wait_for_receiver = boolean(v, "transfers_wait_for_receiver");
          }},
         {"probe_us", [&](const YAML::Node& v) { platform.probe_us = number(v, "probe_us"); }},
         {"network_crosses_memory",
          [&](const YAML::Node& v) { platform.network_crosses_memory = boolean(v, "network_crosses_memory"); }},
         {"local_copies_free",
          [&](const YAML::Node& v) { platform.local_copies_free = boolean(v, "local_copies_free"); }},
         {"pack_gbytes_per_s",
          [&](const YAML::Node& v) { platform.pack_gbytes_per_s = number(v, "pack_gbytes_per_s"); }},
         {"reduce_gbytes_per_s",
          [&](const YAML::Node& v) { platform.reduce_gbytes_per_s = number(v, "reduce_gbytes_per_s"); }},
         {"switches", [&](const YAML::Node& v) { switches(v, platform); }}});
    if (!have_shm) fail(root.Mark(), "missing 'shm', the channel inside a node");
    if (!have_net) fail(root.Mark(), "missing 'net', the channel between nodes");
    return platform;
  }

 private:
  // switches: {nodes_per_switch: [N, ...], across_latency_us: L}
  void switches(const YAML::Node& node, Platform& platform) {
    bool have_sizes = false;
    for_each_key(
        node, "'switches'",
        {{"nodes_per_switch",
          [&](const YAML::Node& v) {
            if (!v.IsSequence() || v.size() == 0)
              fail(v.Mark(), "'nodes_per_switch' must be a list of node counts, e.g. [16]");
            for (const YAML::Node& count : v)
              platform.nodes_per_switch.push_back(static_cast<int>(integer(count, "nodes_per_switch", 1, 1 << 20)));
            have_sizes = true;
          }},
         {"across_latency_us",
          [&](const YAML::Node& v) { platform.across_switches_latency_us = number(v, "across_latency_us"); }}});
    if (!have_sizes) fail(node.Mark(), "'switches' needs 'nodes_per_switch'");
  }

  std::string scalar(const YAML::Node& node, const std::string& what) const {
    if (!node.IsScalar()) fail(node.Mark(), "'" + what + "' must be a single value");
    return node.Scalar();
  }

  double number(const YAML::Node& node, const std::string& what) const {
    const std::string text = scalar(node, what);
    double value = 0;
    std::size_t used = 0;
    try {
      value = std::stod(text, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != text.size() || !std::isfinite(value) || value < 0)
      fail(node.Mark(), "bad value '" + text + "' for '" + what + "', expected a number, 0 or more");
    return value;
  }

  bool boolean(const YAML::Node& node, const std::string& what) const {
    const std::string text = scalar(node, what);
    if (text == "true") return true;
    if (text == "false") return false;
    fail(node.Mark(), "bad value '" + text + "' for '" + what + "', expected true or false");
  }

  long long integer(const YAML::Node& node, const std::string& what, long long minimum, long long maximum) const {
    const std::string text = scalar(node, what);
    long long value = 0;
    std::size_t used = 0;
    try {
      value = std::stoll(text, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != text.size() || value < minimum || value > maximum)
      fail(node.Mark(), "bad value '" + text + "' for '" + what + "', expected a whole number from " +
                            std::to_string(minimum) + " to " + std::to_string(maximum));
    return value;
  }

  Channel channel(const YAML::Node& node, const std::string& name) {
    Channel channel;
    bool have_transfer = false;
    for_each_key(node, "channel '" + name + "'",
                 {{"overhead_us", [&](const YAML::Node& v) { channel.overhead_us = number(v, "overhead_us"); }},
                  {"protocol_overhead_us",
                   [&](const YAML::Node& v) { channel.protocol_overhead_us = number(v, "protocol_overhead_us"); }},
                  {"protocol_threshold_bytes",
                   [&](const YAML::Node& v) {
                     channel.protocol_threshold_bytes = integer(v, "protocol_threshold_bytes", 0, 1LL << 40);
                   }},
                  {"receive_overhead_us",
                   [&](const YAML::Node& v) { channel.receive_overhead_us = number(v, "receive_overhead_us"); }},
                  {"eager_threshold_bytes",
                   [&](const YAML::Node& v) {
                     channel.eager_threshold_bytes = integer(v, "eager_threshold_bytes", 0, 1LL << 40);
                   }},
                  {"transfer",
                   [&](const YAML::Node& v) {
                     channel.transfer = points(v, name);
                     have_transfer = true;
                   }},
                  {"size_factors", [&](const YAML::Node& v) { channel.size_factors = factors(v, name); }}});
    if (!have_transfer) fail(node.Mark(), "channel '" + name + "' has no 'transfer' list (L(m, tau) per tau)");
    return channel;
  }

  std::vector<TransferPoint> points(const YAML::Node& list, const std::string& name) {
    if (!list.IsSequence() || list.size() == 0)
      fail(list.Mark(),
           "'transfer' of channel '" + name + "' must be a non-empty list of {tau, latency_us, gbytes_per_s}");
    std::vector<TransferPoint> result;
    for (const YAML::Node& item : list) {
      TransferPoint point;
      bool have_tau = false, have_latency = false, have_bandwidth = false;
      for_each_key(
          item, "a transfer point of channel '" + name + "'",
          {{"tau",
            [&](const YAML::Node& v) { point.tau = static_cast<int>(integer(v, "tau", 1, 1 << 24)), have_tau = true; }},
           {"latency_us",
            [&](const YAML::Node& v) { point.latency_us = number(v, "latency_us"), have_latency = true; }},
           {"gbytes_per_s", [&](const YAML::Node& v) {
              point.gbytes_per_s = number(v, "gbytes_per_s");
              if (point.gbytes_per_s <= 0) fail(v.Mark(), "'gbytes_per_s' must be above 0");
              have_bandwidth = true;
            }}});
      if (!have_tau || !have_latency || !have_bandwidth)
        fail(item.Mark(), "a transfer point needs 'tau', 'latency_us' and 'gbytes_per_s'");
      if (!result.empty() && point.tau <= result.back().tau)
        fail(item.Mark(), "transfer points of channel '" + name + "' must have ascending tau (" +
                              std::to_string(point.tau) + " after " + std::to_string(result.back().tau) + ")");
      result.push_back(point);
    }
    return result;
  }

  std::vector<SizeFactor> factors(const YAML::Node& list, const std::string& name) {
    if (!list.IsSequence())
      fail(list.Mark(),
           "'size_factors' of channel '" + name + "' must be a list of {from_bytes, latency_factor, bandwidth_factor}");
    std::vector<SizeFactor> result;
    for (const YAML::Node& item : list) {
      SizeFactor factor;
      bool have_from = false;
      for_each_key(
          item, "a size factor of channel '" + name + "'",
          {{"from_bytes",
            [&](const YAML::Node& v) { factor.from_bytes = integer(v, "from_bytes", 0, 1LL << 40), have_from = true; }},
           {"latency_factor", [&](const YAML::Node& v) { factor.latency_factor = number(v, "latency_factor"); }},
           {"bandwidth_factor", [&](const YAML::Node& v) {
              factor.bandwidth_factor = number(v, "bandwidth_factor");
              if (factor.bandwidth_factor <= 0) fail(v.Mark(), "'bandwidth_factor' must be above 0");
            }}});
      if (!have_from) fail(item.Mark(), "a size factor needs 'from_bytes'");
      if (!result.empty() && factor.from_bytes <= result.back().from_bytes)
        fail(item.Mark(), "size factors of channel '" + name + "' must have ascending from_bytes");
      result.push_back(factor);
    }
    return result;
  }
};

}  // namespace

Platform parse_platform(const std::string& yaml_text, const std::string& source_name) {
  return PlatformReader(source_name).read(yaml_text);
}

Platform load_platform(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw PlatformError(path + ": cannot open the platform description");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_platform(text.str(), path);
}

namespace {

void emit_channel(YAML::Emitter& out, const char* key, const Channel& channel) {
  out << YAML::Key << key << YAML::Value << YAML::BeginMap;
  out << YAML::Key << "overhead_us" << YAML::Value << channel.overhead_us;
  out << YAML::Key << "protocol_overhead_us" << YAML::Value << channel.protocol_overhead_us;
  out << YAML::Key << "protocol_threshold_bytes" << YAML::Value << channel.protocol_threshold_bytes;
  out << YAML::Key << "receive_overhead_us" << YAML::Value << channel.receive_overhead_us;
  out << YAML::Key << "eager_threshold_bytes" << YAML::Value << channel.eager_threshold_bytes;
  out << YAML::Key << "transfer" << YAML::Value << YAML::BeginSeq;
  for (const TransferPoint& point : channel.transfer)
    out << YAML::Flow << YAML::BeginMap << YAML::Key << "tau" << YAML::Value << point.tau << YAML::Key << "latency_us"
        << YAML::Value << point.latency_us << YAML::Key << "gbytes_per_s" << YAML::Value << point.gbytes_per_s
        << YAML::EndMap;
  out << YAML::EndSeq;
  if (!channel.size_factors.empty()) {
    out << YAML::Key << "size_factors" << YAML::Value << YAML::BeginSeq;
    for (const SizeFactor& factor : channel.size_factors)
      out << YAML::Flow << YAML::BeginMap << YAML::Key << "from_bytes" << YAML::Value << factor.from_bytes << YAML::Key
          << "latency_factor" << YAML::Value << factor.latency_factor << YAML::Key << "bandwidth_factor" << YAML::Value
          << factor.bandwidth_factor << YAML::EndMap;
    out << YAML::EndSeq;
  }
  out << YAML::EndMap;
}

}  // namespace

std::string platform_yaml(const Platform& platform) {
  YAML::Emitter out;
  out.SetDoublePrecision(9);
  out.SetBoolFormat(YAML::TrueFalseBool);
  out.SetBoolFormat(YAML::LowerCase);
  out << YAML::BeginMap;
  out << YAML::Key << "name" << YAML::Value << platform.name;
  out << YAML::Key << "shm_copies_per_message" << YAML::Value << platform.shm_copies_per_message;
  out << YAML::Key << "nic_copies_per_message" << YAML::Value << platform.nic_copies_per_message;
  out << YAML::Key << "reduce_gbytes_per_s" << YAML::Value << platform.reduce_gbytes_per_s;
  out << YAML::Key << "pack_gbytes_per_s" << YAML::Value << platform.pack_gbytes_per_s;
  out << YAML::Key << "transfers_wait_for_receiver" << YAML::Value << platform.transfers_wait_for_receiver;
  out << YAML::Key << "probe_us" << YAML::Value << platform.probe_us;
  out << YAML::Key << "network_crosses_memory" << YAML::Value << platform.network_crosses_memory;
  out << YAML::Key << "local_copies_free" << YAML::Value << platform.local_copies_free;
  if (!platform.nodes_per_switch.empty()) {
    out << YAML::Key << "switches" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "nodes_per_switch" << YAML::Value << YAML::Flow << platform.nodes_per_switch;
    out << YAML::Key << "across_latency_us" << YAML::Value << platform.across_switches_latency_us;
    out << YAML::EndMap;
  }
  emit_channel(out, "shm", platform.shm);
  emit_channel(out, "net", platform.net);
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

}  // namespace collshim::model
