#include "algorithms/schedule_check.hpp"

#include <deque>
#include <map>
#include <sstream>
#include <unordered_map>
#include <utility>

namespace collshim {
namespace {

const char* buffer_name(Buffer buffer) {
  switch (buffer) {
    case Buffer::send: return "send";
    case Buffer::recv: return "recv";
    case Buffer::scratch: return "scratch";
    case Buffer::shared: return "shared";
  }
  return "?";
}

std::string region_text(const Region& region) {
  std::ostringstream out;
  out << buffer_name(region.buffer) << '{';
  for (std::size_t i = 0; i < region.blocks.size(); ++i) out << (i ? "," : "") << region.blocks[i];
  out << '}';
  return out.str();
}

std::int64_t slot_key(Buffer buffer, std::int64_t block) {
  return (static_cast<std::int64_t>(buffer) << 56) ^ block;
}

class Checker {
 public:
  Checker(const CheckSetup& setup, const std::function<Schedule(int rank)>& schedule_of) : setup_(setup) {
    schedules_.reserve(static_cast<std::size_t>(setup.p));
    for (int r = 0; r < setup.p; ++r) schedules_.push_back(schedule_of(r));
  }

  CheckResult run() {
    const int p = setup_.p;
    const std::size_t steps = schedules_.empty() ? 0 : schedules_[0].steps.size();
    for (int r = 0; r < p; ++r) {
      if (schedules_[r].steps.size() != steps)
        fail("rank " + std::to_string(r) + " has " + std::to_string(schedules_[r].steps.size()) +
             " steps, rank 0 has " + std::to_string(steps));
    }
    if (!result_.ok()) return std::move(result_);
    held_.assign(static_cast<std::size_t>(p), {});
    for (int r = 0; r < p; ++r) {
      if (setup_.naming == BlockNaming::allgather) {
        held_[r][slot_key(Buffer::send, r)] = r;
      } else {
        for (int d = 0; d < p; ++d) held_[r][slot_key(Buffer::send, d)] = datum_of(setup_.naming, p, r, Buffer::send, d);
      }
    }
    result_.stats.steps = static_cast<int>(steps);
    result_.stats.messages_sent.assign(static_cast<std::size_t>(p), 0);
    result_.stats.blocks_sent.assign(static_cast<std::size_t>(p), 0);
    result_.stats.bytes_sent.assign(static_cast<std::size_t>(p), 0);
    for (std::size_t s = 0; s < steps; ++s) run_step(s);
    for (int r = 0; r < p; ++r) {
      for (int b = 0; b < p; ++b) {
        const std::int64_t expected = datum_of(setup_.naming, p, r, Buffer::recv, b);
        const auto found = held_[r].find(slot_key(Buffer::recv, b));
        if (found == held_[r].end())
          fail("end: rank " + std::to_string(r) + " never holds block " + std::to_string(b) + " of its receive buffer");
        else if (found->second != expected)
          fail("end: rank " + std::to_string(r) + " holds block " + std::to_string(b) + " with datum " +
               std::to_string(found->second) + ", expected " + std::to_string(expected));
      }
    }
    return std::move(result_);
  }

 private:
  void fail(std::string message) {
    if (result_.errors.size() < 20) result_.errors.push_back(std::move(message));
  }

  const std::int64_t* holding(int rank, Buffer buffer, std::int64_t block) const {
    const auto found = held_[rank].find(slot_key(buffer, block));
    return found == held_[rank].end() ? nullptr : &found->second;
  }

  // Data `datum` lands in block `block` of `buffer` on `rank`.
  void write(const std::string& where, int rank, Buffer buffer, std::int64_t block, std::int64_t datum) {
    const std::string who = where + "rank " + std::to_string(rank) + " ";
    if (buffer == Buffer::send) {
      fail(who + "writes into the user's send buffer");
      return;
    }
    const std::int64_t expected = datum_of(setup_.naming, setup_.p, rank, buffer, block);
    if (datum != expected)
      fail(who + "gets datum " + std::to_string(datum) + " in " + buffer_name(buffer) + " block " +
           std::to_string(block) + ", which holds datum " + std::to_string(expected));
    auto [slot, inserted] = held_[rank].try_emplace(slot_key(buffer, block), datum);
    if (!inserted) fail(who + "receives " + buffer_name(buffer) + " block " + std::to_string(block) + " a second time");
  }

  long long datum_bytes(std::int64_t datum) const { return setup_.datum_bytes ? setup_.datum_bytes(datum) : 1; }

  // Whether the engine skips this message (both sides know it is empty), and its bytes on the wire.
  std::pair<bool, long long> wire(const Transfer& send, int sender) const {
    long long bytes = 0;
    for (const std::int64_t block : send.region.blocks)
      bytes += datum_bytes(datum_of(setup_.naming, setup_.p, sender, send.region.buffer, block));
    bool header = false;
    if (send.region.buffer == Buffer::scratch) {
      for (const std::int64_t block : send.region.blocks)
        header = header || !knows_scratch_bytes(setup_.naming, setup_.p, send.peer, block);
    }
    if (header) bytes += static_cast<long long>(send.region.blocks.size() * sizeof(std::int64_t));
    return {setup_.datum_bytes && !header && bytes == 0, bytes};
  }

  void run_step(std::size_t s) {
    const int p = setup_.p;
    const std::string where = "step " + std::to_string(s) + ": ";
    // Local operations first; a copy's result is usable at once.
    for (int r = 0; r < p; ++r) {
      const Step& step = schedules_[r].steps[s];
      if (!step.reductions.empty()) fail(where + "rank " + std::to_string(r) + " reduces: reductions are not modelled yet");
      for (const LocalCopy& copy : step.copies) {
        if (copy.from.blocks.size() != copy.to.blocks.size())
          fail(where + "rank " + std::to_string(r) + " copies " + region_text(copy.from) + " to " + region_text(copy.to));
        for (std::size_t i = 0; i < copy.from.blocks.size() && i < copy.to.blocks.size(); ++i) {
          const std::int64_t* datum = holding(r, copy.from.buffer, copy.from.blocks[i]);
          if (datum == nullptr) {
            fail(where + "rank " + std::to_string(r) + " copies " + buffer_name(copy.from.buffer) + " block " +
                 std::to_string(copy.from.blocks[i]) + " it does not hold");
            continue;
          }
          write(where, r, copy.to.buffer, copy.to.blocks[i], *datum);
        }
      }
    }
    // Messages, matched per (sender, receiver) in posting order as MPI matches them.
    std::map<std::pair<int, int>, std::deque<const Transfer*>> in_flight;
    for (int r = 0; r < p; ++r) {
      for (const Transfer& send : schedules_[r].steps[s].sends) {
        if (send.peer < 0 || send.peer >= p || send.peer == r) {
          fail(where + "rank " + std::to_string(r) + " sends to invalid peer " + std::to_string(send.peer));
          continue;
        }
        for (const std::int64_t block : send.region.blocks) {
          if (holding(r, send.region.buffer, block) == nullptr)
            fail(where + "rank " + std::to_string(r) + " sends " + buffer_name(send.region.buffer) + " block " +
                 std::to_string(block) + " it does not hold");
        }
        in_flight[{r, send.peer}].push_back(&send);
        const auto [skipped, bytes] = wire(send, r);
        if (skipped) continue;
        ++result_.stats.messages_sent[r];
        result_.stats.blocks_sent[r] += static_cast<long>(send.region.blocks.size());
        result_.stats.bytes_sent[r] += bytes;
      }
    }
    struct Arrival {
      int rank;
      Buffer buffer;
      std::int64_t block;
      std::int64_t datum;
    };
    std::vector<Arrival> arrivals;
    for (int r = 0; r < p; ++r) {
      for (const Transfer& recv : schedules_[r].steps[s].recvs) {
        auto queue = in_flight.find({recv.peer, r});
        if (queue == in_flight.end() || queue->second.empty()) {
          fail(where + "rank " + std::to_string(r) + " receives " + region_text(recv.region) + " from " +
               std::to_string(recv.peer) + " which sends nothing matching");
          continue;
        }
        const Transfer& send = *queue->second.front();
        queue->second.pop_front();
        // The two sides name the same data, each in its own buffer's terms.
        std::vector<std::int64_t> sent, expected;
        for (const std::int64_t block : send.region.blocks)
          sent.push_back(datum_of(setup_.naming, p, recv.peer, send.region.buffer, block));
        for (const std::int64_t block : recv.region.blocks)
          expected.push_back(datum_of(setup_.naming, p, r, recv.region.buffer, block));
        if (sent != expected || is_packed(send.region.buffer) != is_packed(recv.region.buffer)) {
          fail(where + "rank " + std::to_string(recv.peer) + " sends " + region_text(send.region) + " but rank " +
               std::to_string(r) + " expects " + region_text(recv.region));
          continue;
        }
        for (std::size_t i = 0; i < send.region.blocks.size(); ++i) {
          if (const std::int64_t* datum = holding(recv.peer, send.region.buffer, send.region.blocks[i]))
            arrivals.push_back({r, recv.region.buffer, recv.region.blocks[i], *datum});
        }
      }
    }
    for (const auto& [pair, queue] : in_flight) {
      if (!queue.empty())
        fail(where + "rank " + std::to_string(pair.first) + " sends " + std::to_string(queue.size()) +
             " message(s) to rank " + std::to_string(pair.second) + " that are never received");
    }
    // Received data becomes usable only in the next step.
    for (const Arrival& arrival : arrivals) write(where, arrival.rank, arrival.buffer, arrival.block, arrival.datum);
  }

  const CheckSetup& setup_;
  std::vector<Schedule> schedules_;
  std::vector<std::unordered_map<std::int64_t, std::int64_t>> held_;  // per rank: slot -> datum
  CheckResult result_;
};

}  // namespace

CheckResult check_schedules(const CheckSetup& setup, const std::function<Schedule(int rank)>& schedule_of) {
  return Checker(setup, schedule_of).run();
}

CheckResult check_block_schedules(int p, const std::function<BlockSchedule(int rank)>& schedule_of) {
  return check_schedules({BlockNaming::allgather, p, {}},
                         [&](int rank) { return lower_block_schedule(schedule_of(rank), rank); });
}

}  // namespace collshim
