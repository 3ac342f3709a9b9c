#include "algorithms/schedule_simulation.hpp"

#include <algorithm>
#include <deque>
#include <map>
#include <sstream>
#include <utility>

namespace collshim {
namespace {

std::string blocks_text(const std::vector<int>& blocks) {
  std::ostringstream out;
  out << '{';
  for (std::size_t i = 0; i < blocks.size(); ++i) out << (i ? "," : "") << blocks[i];
  out << '}';
  return out.str();
}

}  // namespace

SimulationResult simulate_allgather(int p, const std::function<Schedule(int rank)>& schedule_of) {
  SimulationResult result;
  auto fail = [&](std::string message) {
    if (result.errors.size() < 20) result.errors.push_back(std::move(message));
  };

  std::vector<Schedule> schedules;
  schedules.reserve(p);
  for (int r = 0; r < p; ++r) schedules.push_back(schedule_of(r));

  std::size_t steps = schedules.empty() ? 0 : schedules[0].steps.size();
  for (int r = 0; r < p; ++r) {
    if (schedules[r].steps.size() != steps)
      fail("rank " + std::to_string(r) + " has " + std::to_string(schedules[r].steps.size()) +
           " steps, rank 0 has " + std::to_string(steps));
  }
  if (!result.ok()) return result;

  // held[r][b]: how many times rank r has obtained block b (its own block counts once).
  std::vector<std::vector<int>> held(p, std::vector<int>(p, 0));
  for (int r = 0; r < p; ++r) held[r][r] = 1;
  result.stats.steps = static_cast<int>(steps);
  result.stats.messages_sent.assign(p, 0);
  result.stats.blocks_sent.assign(p, 0);

  for (std::size_t s = 0; s < steps; ++s) {
    const std::string where = "step " + std::to_string(s) + ": ";
    // Pending messages per (sender, receiver) in posting order, as MPI would match them.
    std::map<std::pair<int, int>, std::deque<const BlockTransfer*>> in_flight;
    for (int r = 0; r < p; ++r) {
      for (const BlockTransfer& send : schedules[r].steps[s].sends) {
        if (send.peer < 0 || send.peer >= p || send.peer == r) {
          fail(where + "rank " + std::to_string(r) + " sends to invalid peer " + std::to_string(send.peer));
          continue;
        }
        for (int b : send.blocks) {
          if (b < 0 || b >= p || held[r][b] == 0)
            fail(where + "rank " + std::to_string(r) + " sends block " + std::to_string(b) +
                 " it does not hold");
        }
        in_flight[{r, send.peer}].push_back(&send);
        ++result.stats.messages_sent[r];
        result.stats.blocks_sent[r] += static_cast<long>(send.blocks.size());
      }
    }
    std::vector<std::vector<int>> arrived(p);
    for (int r = 0; r < p; ++r) {
      for (const BlockTransfer& recv : schedules[r].steps[s].recvs) {
        auto queue = in_flight.find({recv.peer, r});
        if (queue == in_flight.end() || queue->second.empty()) {
          fail(where + "rank " + std::to_string(r) + " receives " + blocks_text(recv.blocks) + " from " +
               std::to_string(recv.peer) + " which sends nothing matching");
          continue;
        }
        const BlockTransfer* send = queue->second.front();
        queue->second.pop_front();
        if (send->blocks != recv.blocks)
          fail(where + "rank " + std::to_string(recv.peer) + " sends " + blocks_text(send->blocks) +
               " but rank " + std::to_string(r) + " expects " + blocks_text(recv.blocks));
        for (int b : recv.blocks) {
          if (b >= 0 && b < p) arrived[r].push_back(b);
        }
      }
    }
    for (const auto& [pair, queue] : in_flight) {
      if (!queue.empty())
        fail(where + "rank " + std::to_string(pair.first) + " sends " + std::to_string(queue.size()) +
             " message(s) to rank " + std::to_string(pair.second) + " that are never received");
    }
    // Received blocks become usable only in the next step.
    for (int r = 0; r < p; ++r) {
      for (int b : arrived[r]) {
        if (held[r][b] != 0)
          fail(where + "rank " + std::to_string(r) + " receives block " + std::to_string(b) +
               " a second time");
        ++held[r][b];
      }
    }
  }
  for (int r = 0; r < p; ++r) {
    for (int b = 0; b < p; ++b) {
      if (held[r][b] != 1)
        fail("end: rank " + std::to_string(r) + " holds block " + std::to_string(b) + " " +
             std::to_string(held[r][b]) + " times");
    }
  }
  return result;
}

}  // namespace collshim
