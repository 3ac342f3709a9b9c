#pragma once
// The τ-Lop cost of a collective's schedules (../shared/papers/003_taulop.md), step by step, without
// running them. Within a step every message is a transmission on one channel: inside a node
// o(m) + n·L_shm(m, τ) (eq. 3.1, n = shm_copies_per_message), between nodes
// o(m) + n·L_shm(m, τ) + L_net(m, τ) (eq. 3.3, n = nic_copies_per_message). τ comes from the
// concurrency the schedules create in that step (the ∥ operator): inside a node, the messages that
// start and end in it; between nodes, the larger of the network messages arriving at the destination
// node and leaving the source node (the thesis counts arrivals; leaving covers a NIC that sends many).
// A rank's step costs its overheads in sequence (its local copies and reductions, o(m) per message
// sent, the receive overhead per message received) plus its slowest transfer; a step costs its
// slowest rank, and the collective the sum of its steps, as the thesis sums stages.
//
// Opaque phases (a library collective, a shared-memory window) are costed as the messages the
// schedule models them by, and the prediction says it is approximated. Packing of non-contiguous
// messages is not costed (the thesis takes p(m) = 0), nor is an in-place call's saved copy.
#include <functional>
#include <vector>

#include "algorithms/schedule.hpp"
#include "algorithms/schedule_check.hpp"
#include "model/platform.hpp"

namespace collshim::model {

struct StepPrediction {
  double us = 0;
  int slowest_rank = 0;
  bool opaque = false;  // an opaque phase, costed by its modelled messages
};

struct Prediction {
  double us = 0;
  std::vector<StepPrediction> steps;
  bool approximated = false;  // some step was an opaque phase
};

// `call` gives the collective's block naming, p, the bytes of every datum and the root (as for the
// checker); node_of_rank has p entries. schedule_of is called twice per rank (the concurrency of a
// step is counted over all ranks first), so memory stays proportional to one schedule plus the
// per-step, per-node counters. Throws std::invalid_argument if the ranks' step counts differ.
Prediction predict(const Platform& platform, const CheckSetup& call, const std::vector<int>& node_of_rank,
                   const std::function<Schedule(int rank)>& schedule_of);

}  // namespace collshim::model
