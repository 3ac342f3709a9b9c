#pragma once
// Runs the schedules of all p ranks against each other without MPI and checks the properties every
// allgather-family schedule must have. Used by the unit tests and by cost models.
#include <functional>
#include <string>
#include <vector>

#include "algorithms/schedule.hpp"

namespace collshim {

struct ScheduleStats {
  int steps = 0;                     // max steps over ranks
  std::vector<long> messages_sent;   // per rank
  std::vector<long> blocks_sent;     // per rank
};

struct SimulationResult {
  std::vector<std::string> errors;  // empty when the schedules are a correct allgather
  ScheduleStats stats;
  bool ok() const { return errors.empty(); }
};

// schedule_of(rank) gives rank's schedule for communicator size p. Checks: every rank has the same
// number of steps; in every step each send matches exactly one receive posted by its peer in the same
// step, with the same blocks in the same order; a rank only sends blocks it holds at the start of the
// step; a block is never received twice or received by its owner; every rank ends with all p blocks.
SimulationResult simulate_allgather(int p, const std::function<Schedule(int rank)>& schedule_of);

}  // namespace collshim
