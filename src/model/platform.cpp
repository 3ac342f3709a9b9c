#include "model/platform.hpp"

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

// Sets `field` where `value` read cleanly (a bad value is reported and leaves the default).
template <typename Field, typename Value>
void set(Field& field, const std::optional<Value>& value) {
  if (value) field = static_cast<Field>(*value);
}

// Reads one description, reporting every problem with its place in the file.
class PlatformReader {
 public:
  PlatformReader(std::string source, std::vector<Diagnostic>& problems) : doc_(std::move(source), problems) {}

  Platform read(const std::string& text) {
    Platform platform;
    const std::optional<YAML::Node> root = doc_.load(text);
    if (!root) return platform;
    if (!root->IsMap()) {
      doc_.error(root->Mark(), "expected a map with keys 'name', 'shm' and 'net'");
      return platform;
    }
    bool have_shm = false, have_net = false;
    doc_.for_each_key(
        *root, "the platform",
        {{"name", [&](const YAML::Node& v) { set(platform.name, doc_.scalar(v, "name")); }},
         {"shm", [&](const YAML::Node& v) { platform.shm = channel(v, "shm"), have_shm = true; }},
         {"net", [&](const YAML::Node& v) { platform.net = channel(v, "net"), have_net = true; }},
         {"shm_copies_per_message",
          [&](const YAML::Node& v) {
            set(platform.shm_copies_per_message, doc_.integer(v, "shm_copies_per_message", 0, 8));
          }},
         {"nic_copies_per_message",
          [&](const YAML::Node& v) {
            set(platform.nic_copies_per_message, doc_.integer(v, "nic_copies_per_message", 0, 8));
          }},
         {"transfers_wait_for_receiver",
          [&](const YAML::Node& v) {
            set(platform.transfers_wait_for_receiver, doc_.boolean(v, "transfers_wait_for_receiver"));
          }},
         {"probe_us", [&](const YAML::Node& v) { set(platform.probe_us, doc_.number(v, "probe_us")); }},
         {"network_crosses_memory",
          [&](const YAML::Node& v) {
            set(platform.network_crosses_memory, doc_.boolean(v, "network_crosses_memory"));
          }},
         {"local_copies_free",
          [&](const YAML::Node& v) { set(platform.local_copies_free, doc_.boolean(v, "local_copies_free")); }},
         {"pack_gbytes_per_s",
          [&](const YAML::Node& v) { set(platform.pack_gbytes_per_s, doc_.number(v, "pack_gbytes_per_s")); }},
         {"reduce_gbytes_per_s",
          [&](const YAML::Node& v) { set(platform.reduce_gbytes_per_s, doc_.number(v, "reduce_gbytes_per_s")); }},
         {"switches", [&](const YAML::Node& v) { switches(v, platform); }}});
    if (!have_shm) doc_.error(root->Mark(), "missing 'shm', the channel inside a node");
    if (!have_net) doc_.error(root->Mark(), "missing 'net', the channel between nodes");
    return platform;
  }

  void throw_if_errors() const { doc_.throw_if_errors<PlatformError>(); }

 private:
  // switches: {nodes_per_switch: [N, ...], across_latency_us: L}
  void switches(const YAML::Node& node, Platform& platform) {
    bool have_sizes = false;
    doc_.for_each_key(node, "'switches'",
                      {{"nodes_per_switch",
                        [&](const YAML::Node& v) {
                          have_sizes = true;
                          if (!v.IsSequence() || v.size() == 0) {
                            doc_.error(v.Mark(), "'nodes_per_switch' must be a list of node counts, e.g. [16]");
                            return;
                          }
                          for (const YAML::Node& count : v) {
                            if (const auto nodes = doc_.integer(count, "nodes_per_switch", 1, 1 << 20))
                              platform.nodes_per_switch.push_back(static_cast<int>(*nodes));
                          }
                        }},
                       {"across_latency_us", [&](const YAML::Node& v) {
                          set(platform.across_switches_latency_us, doc_.number(v, "across_latency_us"));
                        }}});
    if (node.IsMap() && !have_sizes) doc_.error(node.Mark(), "'switches' needs 'nodes_per_switch'");
  }

  Channel channel(const YAML::Node& node, const std::string& name) {
    Channel channel;
    bool have_transfer = false;
    doc_.for_each_key(
        node, "channel '" + name + "'",
        {{"overhead_us", [&](const YAML::Node& v) { set(channel.overhead_us, doc_.number(v, "overhead_us")); }},
         {"protocol_overhead_us",
          [&](const YAML::Node& v) { set(channel.protocol_overhead_us, doc_.number(v, "protocol_overhead_us")); }},
         {"protocol_threshold_bytes",
          [&](const YAML::Node& v) {
            set(channel.protocol_threshold_bytes, doc_.integer(v, "protocol_threshold_bytes", 0, 1LL << 40));
          }},
         {"receive_overhead_us",
          [&](const YAML::Node& v) { set(channel.receive_overhead_us, doc_.number(v, "receive_overhead_us")); }},
         {"eager_threshold_bytes",
          [&](const YAML::Node& v) {
            set(channel.eager_threshold_bytes, doc_.integer(v, "eager_threshold_bytes", 0, 1LL << 40));
          }},
         {"transfer",
          [&](const YAML::Node& v) {
            channel.transfer = points(v, name);
            have_transfer = true;
          }},
         {"size_factors", [&](const YAML::Node& v) { channel.size_factors = factors(v, name); }}});
    if (node.IsMap() && !have_transfer)
      doc_.error(node.Mark(), "channel '" + name + "' has no 'transfer' list (L(m, tau) per tau)");
    if (channel.transfer.empty()) channel.transfer.emplace_back();  // a bad file's: never used, but never empty
    return channel;
  }

  std::vector<TransferPoint> points(const YAML::Node& list, const std::string& name) {
    std::vector<TransferPoint> result;
    if (!list.IsSequence() || list.size() == 0) {
      doc_.error(list.Mark(),
                 "'transfer' of channel '" + name + "' must be a non-empty list of {tau, latency_us, gbytes_per_s}");
      return result;
    }
    for (const YAML::Node& item : list) {
      const std::size_t before = doc_.errors();
      TransferPoint point;
      bool have_tau = false, have_latency = false, have_bandwidth = false;
      doc_.for_each_key(item, "a transfer point of channel '" + name + "'",
                        {{"tau",
                          [&](const YAML::Node& v) {
                            set(point.tau, doc_.integer(v, "tau", 1, 1 << 24));
                            have_tau = true;
                          }},
                         {"latency_us",
                          [&](const YAML::Node& v) {
                            set(point.latency_us, doc_.number(v, "latency_us"));
                            have_latency = true;
                          }},
                         {"gbytes_per_s", [&](const YAML::Node& v) {
                            const std::optional<double> bandwidth = doc_.number(v, "gbytes_per_s");
                            if (bandwidth && *bandwidth <= 0) doc_.error(v.Mark(), "'gbytes_per_s' must be above 0");
                            set(point.gbytes_per_s, bandwidth);
                            have_bandwidth = true;
                          }}});
      if (item.IsMap() && (!have_tau || !have_latency || !have_bandwidth))
        doc_.error(item.Mark(), "a transfer point needs 'tau', 'latency_us' and 'gbytes_per_s'");
      if (doc_.errors() != before) continue;
      if (!result.empty() && point.tau <= result.back().tau)
        doc_.error(item.Mark(), "transfer points of channel '" + name + "' must have ascending tau (" +
                                    std::to_string(point.tau) + " after " + std::to_string(result.back().tau) + ")");
      else
        result.push_back(point);
    }
    return result;
  }

  std::vector<SizeFactor> factors(const YAML::Node& list, const std::string& name) {
    std::vector<SizeFactor> result;
    if (!list.IsSequence()) {
      doc_.error(list.Mark(), "'size_factors' of channel '" + name +
                                  "' must be a list of {from_bytes, latency_factor, bandwidth_factor}");
      return result;
    }
    for (const YAML::Node& item : list) {
      const std::size_t before = doc_.errors();
      SizeFactor factor;
      bool have_from = false;
      doc_.for_each_key(item, "a size factor of channel '" + name + "'",
                        {{"from_bytes",
                          [&](const YAML::Node& v) {
                            set(factor.from_bytes, doc_.integer(v, "from_bytes", 0, 1LL << 40));
                            have_from = true;
                          }},
                         {"latency_factor",
                          [&](const YAML::Node& v) { set(factor.latency_factor, doc_.number(v, "latency_factor")); }},
                         {"bandwidth_factor", [&](const YAML::Node& v) {
                            const std::optional<double> bandwidth = doc_.number(v, "bandwidth_factor");
                            if (bandwidth && *bandwidth <= 0)
                              doc_.error(v.Mark(), "'bandwidth_factor' must be above 0");
                            set(factor.bandwidth_factor, bandwidth);
                          }}});
      if (item.IsMap() && !have_from) doc_.error(item.Mark(), "a size factor needs 'from_bytes'");
      if (doc_.errors() != before) continue;
      if (!result.empty() && factor.from_bytes <= result.back().from_bytes)
        doc_.error(item.Mark(), "size factors of channel '" + name + "' must have ascending from_bytes");
      else
        result.push_back(factor);
    }
    return result;
  }

  YamlDocument doc_;
};

}  // namespace

Platform parse_platform(const std::string& yaml_text, const std::string& source_name) {
  std::vector<Diagnostic> problems;
  PlatformReader reader(source_name, problems);
  Platform platform = reader.read(yaml_text);
  reader.throw_if_errors();
  return platform;
}

Platform load_platform(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw PlatformError(std::vector<Diagnostic>{{{path}, "cannot open the platform description"}});
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
