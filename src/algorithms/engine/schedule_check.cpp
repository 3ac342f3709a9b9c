#include "algorithms/engine/schedule_check.hpp"

#include <deque>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <unordered_map>
#include <utility>

namespace collshim {

CheckSetup uniform_setup(BlockNaming naming, int p, long long bytes) {
  CheckSetup setup{naming, p, [bytes](std::int64_t) { return bytes; }};
  setup.datum_run_bytes = [bytes](std::int64_t, std::int64_t count) { return count * bytes; };
  return setup;
}

long long payload_bytes(const CheckSetup& setup, int holder, const Region& region) {
  if (!setup.datum_bytes) return static_cast<long long>(region.blocks.size());
  long long bytes = 0;
  for (const BlockList::Run& run : region.blocks.runs()) {
    for (std::int64_t block = run.first, left = run.count; left > 0;) {
      const std::int64_t datum = datum_of(setup.naming, setup.p, holder, region.buffer, block);
      const std::int64_t n = consecutive_datums(setup.naming, setup.p, region.buffer, block, left);
      if (setup.datum_run_bytes) {
        bytes += setup.datum_run_bytes(datum, n);
      } else {
        for (std::int64_t i = 0; i < n; ++i) bytes += setup.datum_bytes(datum + i);
      }
      block += n;
      left -= n;
    }
  }
  return bytes;
}

WireMessage wire_message(const CheckSetup& setup, int holder, const Region& region, int receiver) {
  long long bytes = payload_bytes(setup, holder, region);
  bool header = false;
  if (region.buffer == Buffer::scratch && !setup.every_size_known) {
    for (const std::int64_t block : region.blocks)
      header = header || !knows_scratch_bytes(setup.naming, setup.p, setup.root, receiver, block);
  }
  if (header) bytes += static_cast<long long>(region.blocks.size() * sizeof(std::int64_t));
  return {static_cast<bool>(setup.datum_bytes) && !header && bytes == 0 && !setup.sends_empty_messages, bytes, header};
}

namespace {

// Whether `rank`'s receive buffer holds block `block` when the call is done. A rooted collective's
// receive buffer exists only where the call defines it: a Gatherv's at the root, a Scatterv's as
// the rank's own block (elsewhere it is not the user's memory to write). Every other collective's
// holds every block.
bool has_recv_block(const CheckSetup& setup, int rank, std::int64_t block) {
  if (setup.naming == BlockNaming::gather) return rank == setup.root;
  if (setup.naming == BlockNaming::scatter) return block == rank;
  return true;
}

const char* buffer_name(Buffer buffer) {
  switch (buffer) {
    case Buffer::send: return "send";
    case Buffer::recv: return "recv";
    case Buffer::scratch: return "scratch";
    case Buffer::shared: return "shared";
    case Buffer::temp: return "temp";
  }
  return "?";
}

std::string region_text(const Region& region) {
  std::ostringstream out;
  out << buffer_name(region.buffer) << '{';
  const char* separator = "";
  for (const BlockList::Run& run : region.blocks.runs()) {
    out << separator << run.first;
    if (run.count > 1) out << ".." << run.first + run.count - 1;
    separator = ",";
  }
  out << '}';
  return out.str();
}

std::int64_t slot_key(Buffer buffer, std::int64_t block) { return (static_cast<std::int64_t>(buffer) << 56) ^ block; }

// The ranks whose contributions a reduction slot combines.
class Contributions {
 public:
  Contributions() = default;
  Contributions(int p, int rank) : words_(static_cast<std::size_t>((p + 63) / 64)) { set(rank); }
  bool disjoint(const Contributions& other) const {
    for (std::size_t i = 0; i < words_.size(); ++i)
      if (words_[i] & other.words_[i]) return false;
    return true;
  }
  void add(const Contributions& other) {
    for (std::size_t i = 0; i < words_.size(); ++i) words_[i] |= other.words_[i];
  }
  bool has(int rank) const { return (words_[rank / 64] >> (rank % 64)) & 1; }
  int count() const {
    int n = 0;
    for (const std::uint64_t w : words_) n += __builtin_popcountll(w);
    return n;
  }
  // [lowest, highest] if the ranks form one interval, else nullopt.
  std::optional<std::pair<int, int>> interval() const {
    int low = -1, high = -1;
    for (int r = 0; r < static_cast<int>(words_.size()) * 64; ++r) {
      if (!has(r)) continue;
      if (low < 0) low = r;
      if (high >= 0 && high != r - 1) return std::nullopt;
      high = r;
    }
    if (low < 0) return std::nullopt;
    return std::pair{low, high};
  }
  std::string text() const {
    std::string out = "{";
    for (int r = 0; r < static_cast<int>(words_.size()) * 64; ++r)
      if (has(r)) out += (out.size() > 1 ? "," : "") + std::to_string(r);
    return out + "}";
  }

 private:
  void set(int rank) { words_[rank / 64] |= std::uint64_t{1} << (rank % 64); }
  std::vector<std::uint64_t> words_;
};

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
    contributions_.assign(static_cast<std::size_t>(p), {});
    for (int r = 0; r < p; ++r) {
      if (reduction()) {
        // Every segment of the send buffer holds the rank's own contribution.
        for (int b = 0; b < p; ++b) {
          held_[r][slot_key(Buffer::send, b)] = b;
          contributions_[r][slot_key(Buffer::send, b)] = Contributions(p, r);
        }
      } else if (setup_.naming == BlockNaming::allgather || setup_.naming == BlockNaming::gather) {
        held_[r][slot_key(Buffer::send, r)] = r;
      } else if (setup_.naming == BlockNaming::scatter) {
        if (r == setup_.root)
          for (int b = 0; b < p; ++b) held_[r][slot_key(Buffer::send, b)] = b;
      } else {
        for (int d = 0; d < p; ++d)
          held_[r][slot_key(Buffer::send, d)] = datum_of(setup_.naming, p, r, Buffer::send, d);
      }
    }
    result_.stats.steps = static_cast<int>(steps);
    result_.stats.messages_sent.assign(static_cast<std::size_t>(p), 0);
    result_.stats.blocks_sent.assign(static_cast<std::size_t>(p), 0);
    result_.stats.bytes_sent.assign(static_cast<std::size_t>(p), 0);
    for (std::size_t s = 0; s < steps; ++s) run_step(s);
    for (int r = 0; r < p; ++r) {
      for (int b = 0; b < p; ++b) {
        if (!has_recv_block(setup_, r, b)) continue;
        const std::int64_t expected = datum_of(setup_.naming, p, r, Buffer::recv, b);
        const auto found = held_[r].find(slot_key(Buffer::recv, b));
        if (found == held_[r].end())
          fail("end: rank " + std::to_string(r) + " never holds block " + std::to_string(b) + " of its receive buffer");
        else if (found->second != expected)
          fail("end: rank " + std::to_string(r) + " holds block " + std::to_string(b) + " with datum " +
               std::to_string(found->second) + ", expected " + std::to_string(expected));
        else if (reduction() && contributions_[r][slot_key(Buffer::recv, b)].count() != p)
          fail("end: rank " + std::to_string(r) + " segment " + std::to_string(b) + " combines only " +
               contributions_[r][slot_key(Buffer::recv, b)].text() + ", not all " + std::to_string(p) + " ranks");
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

  bool reduction() const { return setup_.naming == BlockNaming::reduction; }

  // Data `datum` lands in block `block` of `buffer` on `rank` (for reductions, with `combined`).
  void write(const std::string& where, int rank, Buffer buffer, std::int64_t block, std::int64_t datum,
             const Contributions* combined = nullptr) {
    // Messages are built only on failure: the checker runs millions of writes.
    const auto who = [&] { return where + "rank " + std::to_string(rank) + " "; };
    if (buffer == Buffer::send) {
      fail(who() + "writes into the user's send buffer");
      return;
    }
    if (reduction()) {
      const std::int64_t limit =
          buffer == Buffer::temp ? std::int64_t{schedules_[rank].temp_copies} * setup_.p : std::int64_t{setup_.p};
      if (block < 0 || block >= limit || is_packed(buffer)) {
        fail(who() + "writes " + buffer_name(buffer) + " block " + std::to_string(block) +
             ", which a reduction does not have");
        return;
      }
      const std::int64_t expected = datum_of(setup_.naming, setup_.p, rank, buffer, block);
      if (datum != expected)
        fail(who() + "gets segment " + std::to_string(datum) + " in " + buffer_name(buffer) + " block " +
             std::to_string(block) + ", which holds segment " + std::to_string(expected));
      // A reduction's slots are rewritten as partial results grow: a write replaces the slot. With
      // MPI_IN_PLACE the send buffer is recvbuf, so writing recv block b ends send block b.
      held_[rank][slot_key(buffer, block)] = datum;
      contributions_[rank][slot_key(buffer, block)] = combined ? *combined : Contributions{};
      if (buffer == Buffer::recv) {
        held_[rank].erase(slot_key(Buffer::send, block));
        contributions_[rank].erase(slot_key(Buffer::send, block));
      }
      return;
    }
    if (buffer == Buffer::recv && !has_recv_block(setup_, rank, block)) {
      fail(who() + "writes recv block " + std::to_string(block) + ", which its call has no receive buffer for");
      return;
    }
    const std::int64_t expected = datum_of(setup_.naming, setup_.p, rank, buffer, block);
    if (datum != expected)
      fail(who() + "gets datum " + std::to_string(datum) + " in " + buffer_name(buffer) + " block " +
           std::to_string(block) + ", which holds datum " + std::to_string(expected));
    auto [slot, inserted] = held_[rank].try_emplace(slot_key(buffer, block), datum);
    if (!inserted)
      fail(who() + "receives " + buffer_name(buffer) + " block " + std::to_string(block) + " a second time");
  }

  void run_step(std::size_t s) {
    const int p = setup_.p;
    const std::string where = "step " + std::to_string(s) + ": ";
    // Local operations first; a copy's result is usable at once.
    for (int r = 0; r < p; ++r) {
      const Step& step = schedules_[r].steps[s];
      if (!step.reductions.empty() && !reduction())
        fail(where + "rank " + std::to_string(r) + " reduces in a collective that is not a reduction");
      for (const LocalCopy& copy : step.copies) {
        if (copy.from.blocks.size() != copy.to.blocks.size())
          fail(where + "rank " + std::to_string(r) + " copies " + region_text(copy.from) + " to " +
               region_text(copy.to));
        for_each_pair(copy.from.blocks, copy.to.blocks, [&](std::int64_t from, std::int64_t to) {
          const std::int64_t* datum = holding(r, copy.from.buffer, from);
          if (datum == nullptr) {
            fail(where + "rank " + std::to_string(r) + " copies " + buffer_name(copy.from.buffer) + " block " +
                 std::to_string(from) + " it does not hold");
            return;
          }
          const Contributions moved =
              reduction() ? contributions_[r][slot_key(copy.from.buffer, from)] : Contributions{};
          write(where, r, copy.to.buffer, to, *datum, &moved);
        });
      }
      for (const LocalReduce& reduce : step.reductions) run_reduce(where, r, reduce);
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
        const WireMessage message = wire_message(setup_, r, send.region, send.peer);
        if (message.skipped) continue;
        ++result_.stats.messages_sent[r];
        result_.stats.blocks_sent[r] += static_cast<long>(send.region.blocks.size());
        result_.stats.bytes_sent[r] += message.bytes;
      }
    }
    struct Arrival {
      int rank;
      Buffer buffer;
      std::int64_t block;
      std::int64_t datum;
      Contributions combined;
    };
    // A reduction's slot may be rewritten, but not by two receives of one step, nor while the same
    // step sends it: MPI leaves both undefined.
    std::vector<std::set<std::int64_t>> sent_slots(static_cast<std::size_t>(reduction() ? p : 0)),
        received_slots(static_cast<std::size_t>(reduction() ? p : 0));
    if (reduction()) {
      for (int r = 0; r < p; ++r)
        for (const Transfer& send : schedules_[r].steps[s].sends)
          for (const std::int64_t block : send.region.blocks) sent_slots[r].insert(slot_key(send.region.buffer, block));
    }
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
        for_each_pair(send.region.blocks, recv.region.blocks,
                      [&](std::int64_t sent_block, std::int64_t received_block) {
                        if (reduction()) {
                          const std::int64_t slot = slot_key(recv.region.buffer, received_block);
                          if (sent_slots[r].contains(slot) || !received_slots[r].insert(slot).second)
                            fail(where + "rank " + std::to_string(r) + " receives into " +
                                 buffer_name(recv.region.buffer) + " block " + std::to_string(received_block) +
                                 " while the same step sends it or receives it again");
                        }
                        if (const std::int64_t* datum = holding(recv.peer, send.region.buffer, sent_block)) {
                          Contributions combined;
                          if (reduction())
                            combined = contributions_[recv.peer][slot_key(send.region.buffer, sent_block)];
                          arrivals.push_back({r, recv.region.buffer, received_block, *datum, std::move(combined)});
                        }
                      });
      }
    }
    for (const auto& [pair, queue] : in_flight) {
      if (!queue.empty())
        fail(where + "rank " + std::to_string(pair.first) + " sends " + std::to_string(queue.size()) +
             " message(s) to rank " + std::to_string(pair.second) + " that are never received");
    }
    // Received data becomes usable only in the next step.
    for (const Arrival& arrival : arrivals)
      write(where, arrival.rank, arrival.buffer, arrival.block, arrival.datum, &arrival.combined);
  }

  // into[i] = from[i] (op) into[i]: both held, the same segment, every contribution at most once,
  // and, where order matters, from's ranks directly before into's.
  void run_reduce(const std::string& where, int r, const LocalReduce& reduce) {
    const auto who = [&] { return where + "rank " + std::to_string(r) + " "; };
    if (reduce.from.blocks.size() != reduce.into.blocks.size() || is_packed(reduce.from.buffer) ||
        is_packed(reduce.into.buffer)) {
      fail(who() + "reduces " + region_text(reduce.from) + " into " + region_text(reduce.into));
      return;
    }
    for_each_pair(reduce.from.blocks, reduce.into.blocks, [&](std::int64_t from, std::int64_t into) {
      const std::int64_t* from_datum = holding(r, reduce.from.buffer, from);
      const std::int64_t* into_datum = holding(r, reduce.into.buffer, into);
      if (from_datum == nullptr || into_datum == nullptr) {
        fail(who() + "reduces " + buffer_name(reduce.from.buffer) + " block " + std::to_string(from) + " into " +
             buffer_name(reduce.into.buffer) + " block " + std::to_string(into) + ", which it does not both hold");
        return;
      }
      if (*from_datum != *into_datum) {
        fail(who() + "reduces segment " + std::to_string(*from_datum) + " into segment " + std::to_string(*into_datum));
        return;
      }
      const Contributions& left = contributions_[r][slot_key(reduce.from.buffer, from)];
      Contributions right = contributions_[r][slot_key(reduce.into.buffer, into)];
      const auto operands = [&] {
        return left.text() + " (op) " + right.text() + " in segment " + std::to_string(*into_datum);
      };
      if (!left.disjoint(right)) {
        fail(who() + "combines a contribution twice: " + operands());
        return;
      }
      if (setup_.ordered) {
        const auto a = left.interval(), b = right.interval();
        if (!a || !b || a->second + 1 != b->first) {
          fail(who() + "combines out of rank order: " + operands());
          return;
        }
      }
      right.add(left);
      write(where, r, reduce.into.buffer, into, *into_datum, &right);
    });
  }

  const CheckSetup& setup_;
  std::vector<Schedule> schedules_;
  std::vector<std::unordered_map<std::int64_t, std::int64_t>> held_;            // per rank: slot -> datum
  std::vector<std::unordered_map<std::int64_t, Contributions>> contributions_;  // reductions: per rank, slot -> ranks
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
