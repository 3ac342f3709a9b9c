#include "model/cost_model.hpp"

#include <algorithm>
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

  Prediction run(const std::function<Schedule(int rank)>& schedule_of) {
    for (int r = 0; r < call_.p; ++r) count(r, schedule_of(r));
    Prediction prediction;
    prediction.steps.resize(steps_);
    for (int r = 0; r < call_.p; ++r) {
      const Schedule schedule = schedule_of(r);
      for (std::size_t s = 0; s < steps_; ++s) {
        const double us = step_cost(r, s, schedule.steps[s]);
        StepPrediction& step = prediction.steps[s];
        if (us > step.us) step.us = us, step.slowest_rank = r;
        step.opaque = schedule.steps[s].opaque.has_value();
      }
    }
    for (const StepPrediction& step : prediction.steps) {
      prediction.us += step.us;
      prediction.approximated = prediction.approximated || step.opaque;
    }
    return prediction;
  }

 private:
  long long datum_bytes(std::int64_t datum) const { return call_.datum_bytes ? call_.datum_bytes(datum) : 1; }

  long long region_bytes(int rank, const Region& region) const {
    long long bytes = 0;
    for (const std::int64_t block : region.blocks) bytes += datum_bytes(datum_of(call_.naming, call_.p, rank, region.buffer, block));
    return bytes;
  }

  // In place (same source and destination) or empty: the engine moves nothing.
  bool copies_nothing(int rank, const LocalCopy& copy) const { return copy.from == copy.to || region_bytes(rank, copy.from) == 0; }

  void count(int rank, const Schedule& schedule) {
    if (rank == 0) {
      steps_ = schedule.steps.size();
      concurrency_.resize(steps_);
    } else if (schedule.steps.size() != steps_) {
      throw std::invalid_argument("rank " + std::to_string(rank) + " has " + std::to_string(schedule.steps.size()) +
                                  " steps, rank 0 has " + std::to_string(steps_));
    }
    const int node = node_[rank];
    for (std::size_t s = 0; s < steps_; ++s) {
      const Step& step = schedule.steps[s];
      const bool local_work = !step.reductions.empty() ||
                              std::any_of(step.copies.begin(), step.copies.end(), [&](const LocalCopy& c) { return !copies_nothing(rank, c); });
      if (local_work) ++concurrency_.copying[concurrency_.at(s, node)];
      for (const Transfer& send : step.sends) {
        if (wire_message(call_, rank, send.region, send.peer).skipped) continue;
        const int destination = node_[send.peer];
        if (destination == node) {
          ++concurrency_.inside[concurrency_.at(s, node)];
        } else {
          ++concurrency_.leaving[concurrency_.at(s, node)];
          ++concurrency_.arriving[concurrency_.at(s, destination)];
        }
      }
    }
  }

  double step_cost(int rank, std::size_t s, const Step& step) const {
    const int node = node_[rank];
    const Channel& shm = platform_.shm;
    const Channel& net = platform_.net;
    double sequential = 0;  // what the rank's processor does one thing after another
    const int copiers = concurrency_.copying[concurrency_.at(s, node)];
    for (const LocalCopy& copy : step.copies) {
      if (!copies_nothing(rank, copy)) sequential += shm.transfer_time(region_bytes(rank, copy.from), copiers);
    }
    if (platform_.reduce_gbytes_per_s > 0) {
      for (const LocalReduce& reduce : step.reductions)
        sequential += static_cast<double>(region_bytes(rank, reduce.from)) * 1e-3 / platform_.reduce_gbytes_per_s;
    }
    double slowest_transfer = 0;
    for (const Transfer& send : step.sends) {
      const auto [skipped, bytes] = wire_message(call_, rank, send.region, send.peer);
      if (skipped) continue;
      const int destination = node_[send.peer];
      double transfer = 0;
      if (destination == node) {
        sequential += shm.overhead(bytes);
        transfer = platform_.shm_copies_per_message * shm.transfer_time(bytes, concurrency_.inside[concurrency_.at(s, node)]);
      } else {
        const int tau = std::max(concurrency_.leaving[concurrency_.at(s, node)], concurrency_.arriving[concurrency_.at(s, destination)]);
        sequential += net.overhead(bytes);
        transfer = platform_.nic_copies_per_message * shm.transfer_time(bytes, tau) + net.transfer_time(bytes, tau);
      }
      slowest_transfer = std::max(slowest_transfer, transfer);
    }
    for (const Transfer& recv : step.recvs) {
      if (wire_message(call_, rank, recv.region, rank).skipped) continue;  // as the engine posts it
      sequential += (node_[recv.peer] == node ? shm : net).receive_overhead_us;
    }
    return sequential + slowest_transfer;
  }

  const Platform& platform_;
  const CheckSetup& call_;
  std::vector<int> node_;  // rank -> node index 0..M-1
  std::size_t steps_ = 0;
  Concurrency concurrency_;
};

}  // namespace

Prediction predict(const Platform& platform, const CheckSetup& call, const std::vector<int>& node_of_rank,
                   const std::function<Schedule(int rank)>& schedule_of) {
  return CostModel(platform, call, node_of_rank).run(schedule_of);
}

}  // namespace collshim::model
