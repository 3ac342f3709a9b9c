#include "model/cost_model.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>

#include "algorithms/call_layout.hpp"

namespace collshim::model {
namespace {

// Per step and node: the counts that set τ.
struct Concurrency {
  std::size_t nodes = 0;
  std::vector<int> inside;    // messages that start and end in the node
  std::vector<int> leaving;   // network messages leaving the node
  std::vector<int> arriving;  // network messages arriving at the node
  std::vector<int> copying;   // ranks of the node that copy or reduce locally

  void resize(std::size_t steps) {
    for (auto* counts : {&inside, &leaving, &arriving, &copying}) counts->assign(steps * nodes, 0);
  }
  std::size_t at(std::size_t step, int node) const { return step * nodes + static_cast<std::size_t>(node); }
};

// What one rank does in one step, kept compactly between the two passes: its messages (peer and
// bytes) and local copies (bytes) are items [first, first + count) of the rank's item list.
struct Item {
  enum class Kind : std::uint8_t { send, copy } kind = Kind::send;
  bool scattered = false;  // a send of the user's datatype over blocks that are not back to back
  int peer = 0;
  long long bytes = 0;
};
struct RankStep {
  std::uint32_t first = 0, count = 0;
  long long reduced_bytes = 0;
  long long unpacked_bytes = 0;  // received into scattered blocks of the user's datatype
};

// Where the executor builds an `hindexed` type (a typed region whose blocks are not one run), the
// MPI library packs on send and unpacks on receipt: the thesis's p(m), first and last transfer only.
bool scattered(const Region& region) {
  if (is_packed(region.buffer)) return false;
  for (std::size_t i = 1; i < region.blocks.size(); ++i) {
    if (region.blocks[i] != region.blocks[i - 1] + 1) return true;
  }
  return false;
}

class CostModel {
 public:
  CostModel(const Platform& platform, const CheckSetup& call, const std::vector<int>& node_of_rank)
      : platform_(platform), call_(call) {
    if (static_cast<int>(node_of_rank.size()) != call.p)
      throw std::invalid_argument("node_of_rank has " + std::to_string(node_of_rank.size()) + " entries for p = " +
                                  std::to_string(call.p));
    std::map<int, int> index;  // node ids as given to 0..M-1
    for (const int node : node_of_rank) node_.push_back(index.try_emplace(node, static_cast<int>(index.size())).first->second);
    concurrency_.nodes = index.size();
  }

  Prediction run(const std::function<Schedule(int rank)>& schedule_of, const std::vector<double>& start_us,
                 std::vector<double>* end_us = nullptr) {
    if (!start_us.empty() && static_cast<int>(start_us.size()) != call_.p)
      throw std::invalid_argument("start_us has " + std::to_string(start_us.size()) + " entries for p = " + std::to_string(call_.p));
    steps_of_.resize(static_cast<std::size_t>(call_.p));
    items_of_.resize(static_cast<std::size_t>(call_.p));
    for (int r = 0; r < call_.p; ++r) record(r, schedule_of(r));

    std::vector<double> clock = start_us.empty() ? std::vector<double>(static_cast<std::size_t>(call_.p), 0.0) : start_us;
    std::vector<double> posted_at(clock.size()), busy_until(clock.size()), sends_done(clock.size());
    std::vector<std::vector<std::pair<double, bool>>> arrivals(clock.size());  // (time, between nodes)
    Prediction prediction;
    prediction.steps.resize(steps_);
    for (std::size_t s = 0; s < steps_; ++s) {
      for (int r = 0; r < call_.p; ++r) posted_at[r] = posted(r, s, clock[r]);
      for (int r = 0; r < call_.p; ++r) send(r, s, posted_at, busy_until[r], sends_done[r], arrivals);
      StepPrediction& step = prediction.steps[s];
      step.opaque = opaque_[s];
      for (int r = 0; r < call_.p; ++r) {
        auto& incoming = arrivals[static_cast<std::size_t>(r)];
        std::sort(incoming.begin(), incoming.end());
        double t = busy_until[r];
        for (const auto& [arrival, between_nodes] : incoming)
          t = std::max(t, arrival) + (between_nodes ? platform_.net : platform_.shm).receive_overhead_us;
        incoming.clear();
        t += pack_us(steps_of_[static_cast<std::size_t>(r)][s].unpacked_bytes);
        const double end = std::max(t, sends_done[r]);
        if (end - clock[r] > step.us) step.us = end - clock[r], step.slowest_rank = r;
        clock[r] = end;
      }
      prediction.approximated = prediction.approximated || step.opaque;
    }
    for (int r = 0; r < call_.p; ++r) prediction.us = std::max(prediction.us, clock[r] - (start_us.empty() ? 0.0 : start_us[r]));
    if (end_us) *end_us = std::move(clock);
    return prediction;
  }

 private:
  // Pass 1: the step's concurrency (τ per node) and the rank's compact steps.
  void record(int rank, const Schedule& schedule) {
    if (rank == 0) {
      steps_ = schedule.steps.size();
      concurrency_.resize(steps_);
      opaque_.assign(steps_, false);
    } else if (schedule.steps.size() != steps_) {
      throw std::invalid_argument("rank " + std::to_string(rank) + " has " + std::to_string(schedule.steps.size()) +
                                  " steps, rank 0 has " + std::to_string(steps_));
    }
    const int node = node_[rank];
    auto& steps = steps_of_[static_cast<std::size_t>(rank)];
    auto& items = items_of_[static_cast<std::size_t>(rank)];
    steps.resize(steps_);
    for (std::size_t s = 0; s < steps_; ++s) {
      const Step& step = schedule.steps[s];
      RankStep& compact = steps[s];
      compact.first = static_cast<std::uint32_t>(items.size());
      opaque_[s] = opaque_[s] || step.opaque.has_value();
      for (const LocalCopy& copy : step.copies) {
        const long long bytes = payload_bytes(call_, rank, copy.from);
        if (copy.from == copy.to || bytes == 0) continue;  // in place or empty: the engine moves nothing
        items.push_back({Item::Kind::copy, false, rank, bytes});
      }
      for (const LocalReduce& reduce : step.reductions) compact.reduced_bytes += payload_bytes(call_, rank, reduce.from);
      if (items.size() > compact.first || compact.reduced_bytes > 0) ++concurrency_.copying[concurrency_.at(s, node)];
      for (const Transfer& send : step.sends) {
        const auto [skipped, bytes] = wire_message(call_, rank, send.region, send.peer);
        if (skipped) continue;
        items.push_back({Item::Kind::send, scattered(send.region), send.peer, bytes});
        const int destination = node_[send.peer];
        if (destination == node) {
          ++concurrency_.inside[concurrency_.at(s, node)];
        } else {
          ++concurrency_.leaving[concurrency_.at(s, node)];
          ++concurrency_.arriving[concurrency_.at(s, destination)];
        }
      }
      compact.count = static_cast<std::uint32_t>(items.size() - compact.first);
      for (const Transfer& recv : step.recvs) {
        if (!scattered(recv.region)) continue;
        const auto [skipped, bytes] = wire_message(call_, rank, recv.region, rank);
        if (!skipped) compact.unpacked_bytes += bytes;
      }
    }
  }

  double pack_us(long long bytes) const {
    return platform_.pack_gbytes_per_s > 0 ? static_cast<double>(bytes) * 1e-3 / platform_.pack_gbytes_per_s : 0.0;
  }

  // τ on a node's memory channel: its messages inside, and with network_crosses_memory also the
  // network messages leaving and arriving there.
  int memory_tau(std::size_t s, int node) const {
    const std::size_t at = concurrency_.at(s, node);
    const int network = platform_.network_crosses_memory ? concurrency_.leaving[at] + concurrency_.arriving[at] : 0;
    return concurrency_.inside[at] + network;
  }

  // Pass 2, per step. First the rank's local copies and reductions from its clock: then it posts
  // its receives and sends.
  double posted(int rank, std::size_t s, double clock) const {
    const RankStep& compact = steps_of_[static_cast<std::size_t>(rank)][s];
    const auto& items = items_of_[static_cast<std::size_t>(rank)];
    double t = clock;
    if (platform_.reduce_gbytes_per_s > 0) t += static_cast<double>(compact.reduced_bytes) * 1e-3 / platform_.reduce_gbytes_per_s;
    const int copiers = concurrency_.copying[concurrency_.at(s, node_[rank])];
    for (std::uint32_t i = compact.first; i < compact.first + compact.count && items[i].kind == Item::Kind::copy; ++i)
      if (!platform_.local_copies_free) t += platform_.shm.transfer_time(items[i].bytes, copiers);
    return t;
  }

  // Then its sends, one after another from when it posted; a message moves from its injection (or,
  // where transfers wait for the receiver, from when the receiver posted, if later) for one
  // transmission time.
  void send(int rank, std::size_t s, const std::vector<double>& posted_at, double& busy_until, double& sends_done,
            std::vector<std::vector<std::pair<double, bool>>>& arrivals) const {
    const int node = node_[rank];
    const Channel& shm = platform_.shm;
    const Channel& net = platform_.net;
    const RankStep& compact = steps_of_[static_cast<std::size_t>(rank)][s];
    const auto& items = items_of_[static_cast<std::size_t>(rank)];
    double t = posted_at[rank];
    sends_done = t;
    for (std::uint32_t i = compact.first; i < compact.first + compact.count; ++i) {
      const Item& item = items[i];
      if (item.kind == Item::Kind::copy) continue;
      const int destination = node_[item.peer];
      const Channel& channel = destination == node ? shm : net;
      double transfer = 0;
      if (destination == node) {
        transfer = platform_.shm_copies_per_message * shm.transfer_time(item.bytes, memory_tau(s, node));
      } else {
        const int tau = std::max(concurrency_.leaving[concurrency_.at(s, node)], concurrency_.arriving[concurrency_.at(s, destination)]);
        transfer = platform_.nic_copies_per_message * shm.transfer_time(item.bytes, tau) + net.transfer_time(item.bytes, tau);
        if (platform_.network_crosses_memory)  // the slowest of the NIC and the two nodes' memory links
          transfer = std::max({transfer, shm.transfer_time(item.bytes, memory_tau(s, node)),
                               shm.transfer_time(item.bytes, memory_tau(s, destination))});
      }
      t += channel.overhead(item.bytes) + (item.scattered ? pack_us(item.bytes) : 0.0);
      const double start = platform_.transfers_wait_for_receiver ? std::max(t, posted_at[item.peer]) : t;
      arrivals[static_cast<std::size_t>(item.peer)].emplace_back(start + transfer, destination != node);
      const bool eager = item.bytes < channel.eager_threshold_bytes;
      sends_done = std::max(sends_done, eager ? t : start + transfer);
    }
    busy_until = t;
  }

  const Platform& platform_;
  const CheckSetup call_;  // a copy: callers may pass a temporary
  std::vector<int> node_;  // rank -> node index 0..M-1
  std::size_t steps_ = 0;
  Concurrency concurrency_;
  std::vector<bool> opaque_;                   // per step
  std::vector<std::vector<RankStep>> steps_of_;  // per rank, per step
  std::vector<std::vector<Item>> items_of_;      // per rank
};

}  // namespace

Prediction predict(const Platform& platform, const CheckSetup& call, const std::vector<int>& node_of_rank,
                   const std::function<Schedule(int rank)>& schedule_of, const std::vector<double>& start_us) {
  return CostModel(platform, call, node_of_rank).run(schedule_of, start_us);
}

std::vector<double> dissemination_barrier_exit_us(const Platform& platform, const std::vector<int>& node_of_rank) {
  const int p = static_cast<int>(node_of_rank.size());
  // Round k: send to rank + 2^k, receive from rank - 2^k (one byte stands for the empty message).
  const auto schedule_of = [p](int rank) {
    Schedule schedule;
    for (int distance = 1; distance < p; distance *= 2) {
      Step step;
      step.sends.push_back({(rank + distance) % p, Region{Buffer::recv, {rank}}});
      step.recvs.push_back({(rank - distance + p) % p, Region{Buffer::recv, {(rank - distance + p) % p}}});
      schedule.steps.push_back(std::move(step));
    }
    return schedule;
  };
  CostModel model(platform, CheckSetup{BlockNaming::allgather, p, {}}, node_of_rank);
  std::vector<double> exit(static_cast<std::size_t>(p), 0.0);
  model.run(schedule_of, {}, &exit);
  return exit;
}

}  // namespace collshim::model
