// Platform descriptions: L(m, τ) between and beyond the τ described, o(m) across the protocol
// threshold, and errors that name the file, line and column.
#include <gtest/gtest.h>

#include "model/platform/platform.hpp"

namespace collshim::model {
namespace {

const char* const good = R"(name: two-tier
shm:
  overhead_us: 0.5
  transfer:
    - {tau: 1, latency_us: 0.2, gbytes_per_s: 10}
    - {tau: 5, latency_us: 0.6, gbytes_per_s: 2}
net:
  size_factors:
    - {from_bytes: 0, latency_factor: 2, bandwidth_factor: 0.5}
    - {from_bytes: 1024, latency_factor: 1, bandwidth_factor: 1}
  overhead_us: 2
  protocol_overhead_us: 5
  protocol_threshold_bytes: 65536
  receive_overhead_us: 1
  transfer:
    - {tau: 1, latency_us: 3, gbytes_per_s: 1.25}
nic_copies_per_message: 0
transfers_wait_for_receiver: true
probe_us: 0.25
network_crosses_memory: false
local_copies_free: true
)";

TEST(Platform, TransferTimeInterpolatesInTauAndSharesBeyondTheLastTau) {
  const Platform platform = parse_platform(good, "good.yaml");
  EXPECT_EQ(platform.name, "two-tier");
  EXPECT_EQ(platform.nic_copies_per_message, 0);
  EXPECT_EQ(platform.shm_copies_per_message, 2);
  EXPECT_TRUE(platform.transfers_wait_for_receiver);
  EXPECT_DOUBLE_EQ(platform.probe_us, 0.25);
  EXPECT_DOUBLE_EQ(parse_platform(platform_yaml(platform), "again.yaml").probe_us, 0.25);
  EXPECT_FALSE(platform.network_crosses_memory);
  EXPECT_TRUE(platform.local_copies_free);
  const Channel& shm = platform.shm;
  // 10 GB/s = 10,000 bytes per microsecond.
  EXPECT_DOUBLE_EQ(shm.transfer_time(10000, 1), 0.2 + 1.0);
  EXPECT_DOUBLE_EQ(shm.transfer_time(10000, 0), 0.2 + 1.0);
  EXPECT_DOUBLE_EQ(shm.transfer_time(10000, 5), 0.6 + 5.0);
  // Halfway between tau 1 and 5: latency and microseconds per byte halfway.
  EXPECT_DOUBLE_EQ(shm.transfer_time(10000, 3), 0.4 + 3.0);
  // Beyond the last tau the bandwidth is shared: twice the concurrency, twice the time per byte.
  EXPECT_DOUBLE_EQ(shm.transfer_time(10000, 10), 0.6 + 2 * 5.0);
  // Size factors: below 1 KiB latency doubled and bandwidth halved, from 1 KiB on neither.
  EXPECT_DOUBLE_EQ(platform.net.transfer_time(0, 1), 6.0);
  EXPECT_DOUBLE_EQ(platform.net.transfer_time(1000, 1), 6.0 + 1000 / 1250.0 * 2);
  EXPECT_DOUBLE_EQ(platform.net.transfer_time(1250, 1), 3.0 + 1.0);
}

TEST(Platform, OverheadStepsUpAtTheProtocolThreshold) {
  const Platform platform = parse_platform(good, "good.yaml");
  EXPECT_DOUBLE_EQ(platform.net.overhead(65535), 2.0);
  EXPECT_DOUBLE_EQ(platform.net.overhead(65536), 7.0);
  EXPECT_DOUBLE_EQ(platform.shm.overhead(1 << 30), 0.5);  // no threshold: no protocol switch
  EXPECT_DOUBLE_EQ(platform.net.receive_overhead_us, 1.0);
}

void expect_error(const std::string& text, const std::string& message) {
  try {
    parse_platform(text, "bad.yaml");
    ADD_FAILURE() << "accepted: " << text;
  } catch (const PlatformError& e) {
    EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
  }
}

TEST(Platform, ErrorsNameFileLineColumnAndWhatWasExpected) {
  const std::string net = "net:\n  transfer: [{tau: 1, latency_us: 1, gbytes_per_s: 1}]\n";
  expect_error("shm:\n  overhead_us: fast\n  transfer: [{tau: 1, latency_us: 1, gbytes_per_s: 1}]\n" + net,
               "bad.yaml:2:16: bad value 'fast' for 'overhead_us', expected a number, 0 or more");
  expect_error("shm:\n  overhaed_us: 1\n" + net,
               "bad.yaml:2:3: unknown key 'overhaed_us' in channel 'shm', expected one of");
  expect_error(net, "bad.yaml:1:1: missing 'shm'");
  expect_error(
      "shm:\n  transfer:\n    - {tau: 4, latency_us: 1, gbytes_per_s: 1}\n    - {tau: 2, latency_us: 1, gbytes_per_s: "
      "1}\n" +
          net,
      "bad.yaml:4:7: transfer points of channel 'shm' must have ascending tau (2 after 4)");
  expect_error("shm:\n  transfer: [{tau: 1, latency_us: 1, gbytes_per_s: 0}]\n" + net,
               "bad.yaml:2:52: 'gbytes_per_s' must be above 0");
  expect_error("shm:\n  transfer: [{tau: 1, latency_us: 1}]\n" + net, "needs 'tau', 'latency_us' and 'gbytes_per_s'");
  expect_error("shm:\n  size_factors: [{from_bytes: 8}, {from_bytes: 8}]\n" + net,
               "bad.yaml:2:35: size factors of channel 'shm' must have ascending from_bytes");
  expect_error("probe_us: -1\n", "bad.yaml:1:11: bad value '-1' for 'probe_us', expected a number, 0 or more");
  expect_error("transfers_wait_for_receiver: maybe\n",
               "bad.yaml:1:30: bad value 'maybe' for 'transfers_wait_for_receiver', expected true or false");
  expect_error("shm: [1, 2\n", "bad.yaml:2:1: malformed YAML");
  expect_error("name: a\nname: b\n", "bad.yaml:2:1: key 'name' given twice");
}

// A job's nodes fill the switches in turn, the last size repeating; the description reads and
// writes them back, and names what is wrong with them.
TEST(Platform, SwitchesTakeTheJobsNodesInTurn) {
  const std::string net =
      "net:\n  transfer: [{tau: 1, latency_us: 1, gbytes_per_s: 1}]\nshm:\n  transfer: [{tau: 1, latency_us: 1, "
      "gbytes_per_s: 1}]\n";
  const Platform platform =
      parse_platform("switches: {nodes_per_switch: [5, 11], across_latency_us: 12}\n" + net, "s.yaml");
  EXPECT_EQ(platform.nodes_per_switch, (std::vector<int>{5, 11}));
  EXPECT_DOUBLE_EQ(platform.across_switches_latency_us, 12.0);
  EXPECT_EQ(platform.switch_of_node(0), 0);
  EXPECT_EQ(platform.switch_of_node(4), 0);
  EXPECT_EQ(platform.switch_of_node(5), 1);
  EXPECT_EQ(platform.switch_of_node(15), 1);
  EXPECT_EQ(platform.switch_of_node(16), 2);  // the last size repeats
  EXPECT_EQ(platform.switch_of_node(26), 2);
  EXPECT_EQ(platform.switch_of_node(27), 3);
  EXPECT_EQ(Platform{}.switch_of_node(1000), 0);
  const Platform again = parse_platform(platform_yaml(platform), "again.yaml");
  EXPECT_EQ(again.nodes_per_switch, platform.nodes_per_switch);
  EXPECT_DOUBLE_EQ(again.across_switches_latency_us, 12.0);
  expect_error("switches: {across_latency_us: 3}\n" + net, "bad.yaml:1:11: 'switches' needs 'nodes_per_switch'");
  expect_error("switches: {nodes_per_switch: [0]}\n" + net, "bad.yaml:1:31: bad value '0' for 'nodes_per_switch'");
  expect_error("switches: {nodes_per_switch: 16}\n" + net, "bad.yaml:1:30: 'nodes_per_switch' must be a list");
  expect_error("switches: {nodes: [4]}\n" + net, "bad.yaml:1:12: unknown key 'nodes' in 'switches'");
}

TEST(Platform, AMissingFileIsNamed) { EXPECT_THROW(load_platform("/nonexistent/platform.yaml"), PlatformError); }

}  // namespace
}  // namespace collshim::model
