#include "model/alltoall_profiles.hpp"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string_view>

#include "algorithms/alltoall/grid_routing.hpp"
#include "algorithms/alltoall/node_grid_routing.hpp"
#include "algorithms/node/node_layout.hpp"

namespace collshim::model {

long long AlltoallBlocks::bytes(int origin, int destination) const {
  if (uniform()) return every_pair_bytes;
  const auto& row = sending[static_cast<std::size_t>(origin)];
  const auto at = std::lower_bound(row.begin(), row.end(), std::make_pair(destination, 0LL),
                                   [](const auto& a, const auto& b) { return a.first < b.first; });
  return at != row.end() && at->first == destination ? at->second : 0;
}

AlltoallBlocks alltoall_blocks(const std::vector<long long>& bytes_by_pair, int p) {
  AlltoallBlocks blocks;
  const auto pairs = static_cast<std::size_t>(p) * static_cast<std::size_t>(p);
  if (p > 0 && bytes_by_pair.size() == pairs &&
      std::all_of(bytes_by_pair.begin(), bytes_by_pair.end(),
                  [&](long long b) { return b == bytes_by_pair.front(); })) {
    blocks.every_pair_bytes = bytes_by_pair.front();
    return blocks;
  }
  for (int origin = 0; origin < p; ++origin) {
    blocks.sending.emplace_back();
    for (int destination = 0; destination < p; ++destination) {
      const long long bytes = bytes_by_pair[static_cast<std::size_t>(origin) * p + destination];
      if (bytes > 0) blocks.sending.back().emplace_back(destination, bytes);
    }
  }
  return blocks;
}

namespace {

// A forwarding schedule's shape, per rank and step: its local copies (step 0: its own block, then
// the packing of the others; later steps: the delivery of what arrived) and its messages, with item
// counts; `payload` is filled with the items' bytes afterwards.
struct CountedCopy {
  long long items = 0;
  long long payload = 0;
};
// `for_peer` of the items are for the receiver itself; the others are forwarded, so the engine sends
// their sizes in a header (wire_message's rule).
struct CountedMessage {
  int peer = 0;
  long long items = 0;
  long long for_peer = 0;
  long long payload = 0;
};
struct CountedStep {
  std::vector<CountedCopy> copies;
  std::vector<CountedMessage> messages;  // in the order they are posted
  std::vector<int> probed;               // senders of the messages with a header, in the order received
  std::vector<long long> probed_bytes;   // their bytes on the wire (fill_probe_bytes())
};
struct Forwarding {
  int p = 1;
  std::vector<std::vector<CountedStep>> steps;  // per rank, per step
  // Where an item held by `current` goes in `phase` (current itself: it stays).
  std::function<int(int phase, int current, int origin, int destination)> next_hop;
};

// The forwarding schedule's order: from the next rank up, cyclically (peer and rank in [0, p); no
// division: it is compared in the inner loop that routes every block).
long long post_order(int peer, int rank, int p) {
  const long long ahead = static_cast<long long>(peer) - rank;
  return ahead < 0 ? ahead + p : ahead;
}

// Sends from the next rank up, receives from the next rank down (the forwarding schedule's orders).
void sort_step(CountedStep& step, int rank, int p) {
  std::sort(step.messages.begin(), step.messages.end(), [p, rank](const CountedMessage& a, const CountedMessage& b) {
    return post_order(a.peer, rank, p) < post_order(b.peer, rank, p);
  });
  std::sort(step.probed.begin(), step.probed.end(),
            [p, rank](int a, int b) { return post_order(rank, a, p) < post_order(rank, b, p); });
}

// A message of the current step from `sender` to `receiver`; the receiver probes for it if it
// carries forwarded blocks.
void add_message(std::vector<std::vector<CountedStep>>& steps, int sender, int receiver, long long items,
                 long long for_peer) {
  steps[static_cast<std::size_t>(sender)].back().messages.push_back({receiver, items, for_peer});
  if (for_peer < items) steps[static_cast<std::size_t>(receiver)].back().probed.push_back(sender);
}

// Ends a phase: every rank's messages and probes of its step in the schedule's order, then the next
// step, whose copies are the deliveries of what arrived in this one.
void end_phase(Forwarding& forwarding, const std::vector<long long>& delivered) {
  for (std::size_t rank = 0; rank < forwarding.steps.size(); ++rank) {
    sort_step(forwarding.steps[rank].back(), static_cast<int>(rank), forwarding.p);
    forwarding.steps[rank].push_back({{{delivered[rank], 0}}, {}});
  }
}

// How many of lo, lo+1, ..., hi-1 are congruent to r modulo m (0 <= r < m).
long long congruent(int lo, int hi, int r, int m) {
  const auto below = [r, m](int n) { return n <= r ? 0LL : (n - r - 1) / m + 1; };  // in [0, n)
  return below(hi) - below(lo);
}

int residue(long long x, int m) { return static_cast<int>(((x % m) + m) % m); }

// Every rank's group in every phase, kept: a next hop is then an index (GridRouting::next_hop walks
// the blocks down from the top, O(phases), per call; routing a million blocks through 14 phases
// of a hypercube that way took seconds).
using GroupTable = std::vector<GridPhase>;  // phase * ranks + rank

std::shared_ptr<const GroupTable> group_table(const GridRouting& routing) {
  auto groups = std::make_shared<GroupTable>();
  for (int j = 0; j < routing.phases(); ++j)
    for (int x = 0; x < routing.size(); ++x) groups->push_back(routing.phase(j, x));
  return groups;
}

int hop_in(const GroupTable& groups, int ranks, int phase, int current, int destination) {
  const GridPhase& group = groups[static_cast<std::size_t>(phase) * ranks + current];
  return group.members[static_cast<std::size_t>(group.next_index(destination))];
}

// The phases of a grid among n groups of m lanes each (ranks: m = 1; nodes: node_grid's lanes), with
// `groups` the grid's groups per phase: held[X*m + a] counts the sources A = a (mod m) whose items for
// X's block at this depth sit on X (each on its lane (A + B) mod m for destination group B); at first
// every group's own. In phase j, X sends to its hop toward each other sub-block b, on every lane, the
// items of the destinations there on that lane: m² per source and destination group (m per source
// for the hop itself), and the hop's counts for b grow by X's.
void count_grid_phases(Forwarding& forwarding, const GroupTable& groups, int phases, int n, int m,
                       const std::function<int(int group, int lane)>& rank_at) {
  std::vector<long long> held(static_cast<std::size_t>(n) * m, 0), next(held.size()), arriving(forwarding.steps.size());
  for (int x = 0; x < n; ++x) held[static_cast<std::size_t>(x) * m + residue(x, m)] = 1;
  for (int j = 0; j < phases; ++j) {
    std::fill(next.begin(), next.end(), 0);
    std::fill(arriving.begin(), arriving.end(), 0);
    for (int x = 0; x < n; ++x) {
      const GridPhase& group = groups[static_cast<std::size_t>(j) * n + x];
      const int own = group.part_of(x);
      const long long* at_x = &held[static_cast<std::size_t>(x) * m];
      for (int b = 0; b < group.parts; ++b) {
        const int y = group.members[static_cast<std::size_t>(group.next_by_part[static_cast<std::size_t>(b)])];
        for (int a = 0; a < m; ++a) next[static_cast<std::size_t>(y) * m + a] += at_x[a];  // b == own: they stay
        if (b == own) continue;
        const int lo = group.part_begin(b), hi = lo + group.part_length(b);
        for (int lane = 0; lane < m; ++lane) {
          long long items = 0, for_peer = 0;
          for (int a = 0; a < m; ++a) {
            if (at_x[a] == 0) continue;
            const int r = residue(lane - a, m);  // the destination groups B on this lane
            items += at_x[a] * m * m * congruent(lo, hi, r, m);
            if (residue(y, m) == r) for_peer += at_x[a] * m;  // those for group y: one item per source rank
          }
          if (items == 0) continue;
          add_message(forwarding.steps, rank_at(x, lane), rank_at(y, lane), items, for_peer);
          arriving[static_cast<std::size_t>(rank_at(y, lane))] += for_peer;
        }
      }
    }
    held.swap(next);
    end_phase(forwarding, arriving);
  }
}

Forwarding grid_forwarding(int p, const std::vector<int>& shape) {
  const GridRouting routing(p, shape);
  const auto groups = group_table(routing);
  Forwarding forwarding{p, std::vector<std::vector<CountedStep>>(static_cast<std::size_t>(p)),
                        [groups, p](int phase, int current, int, int destination) {
                          return hop_in(*groups, p, phase, current, destination);
                        }};
  for (auto& steps : forwarding.steps) steps.push_back({{{1, 0}, {p - 1LL, 0}}, {}});  // own block, packing
  count_grid_phases(forwarding, *groups, routing.phases(), p, 1, [](int rank, int) { return rank; });
  return forwarding;
}

// Empty steps where the nodes differ in size.
Forwarding node_grid_forwarding(const std::vector<int>& node_of_rank, const GridDims& between_nodes) {
  const int p = static_cast<int>(node_of_rank.size());
  auto routing = std::make_shared<const NodeGridRouting>(node_of_rank, between_nodes);
  const NodeLayout& layout = routing->layout();
  const int n = routing->nodes();
  const int m = static_cast<int>(layout.members.front().size());
  const GridRouting& nodes = routing->between_nodes();
  const auto groups = group_table(nodes);  // among nodes
  Forwarding forwarding{p, {}, [routing, groups, n](int phase, int current, int origin, int destination) {
                          return routing->next_hop(phase, current, origin, destination, [&](int j, int node, int to) {
                            return hop_in(*groups, n, j, node, to);
                          });
                        }};
  if (std::any_of(layout.members.begin(), layout.members.end(),
                  [m](const auto& members) { return static_cast<int>(members.size()) != m; }))
    return forwarding;
  forwarding.steps.resize(static_cast<std::size_t>(p));
  const auto rank_at = [&](int node, int lane) {
    return layout.members[static_cast<std::size_t>(node)][static_cast<std::size_t>(lane)];
  };
  std::vector<long long> arriving(static_cast<std::size_t>(p), 0);

  // Combine: each rank hands every other rank of its node its block for it, and its blocks for the
  // nodes B that rank handles ((A + B) mod m is its lane), m each.
  for (auto& steps : forwarding.steps) steps.push_back({{{1, 0}, {p - 1LL, 0}}, {}});  // own block, packing
  for (int rank = 0; rank < p; ++rank) {
    const int a = layout.node_of_rank[rank];
    for (int lane = 0; lane < m; ++lane) {
      const int handler = rank_at(a, lane);
      if (handler == rank) continue;
      const int r = residue(lane - a, m);
      const long long bundles = congruent(0, n, r, m) - (residue(a, m) == r ? 1 : 0);  // B != A
      add_message(forwarding.steps, rank, handler, 1 + bundles * m, 1);
      arriving[handler] += 1;
    }
  }
  end_phase(forwarding, arriving);

  // Between nodes: node pairs' bundles along the grid among nodes, on their lanes.
  count_grid_phases(forwarding, *groups, nodes.phases(), n, m, rank_at);

  // Deliver: the handler of the pairs (A, B) on node B hands each other rank of B its items, one per
  // origin on A.
  std::fill(arriving.begin(), arriving.end(), 0);
  for (int rank = 0; rank < p; ++rank) {
    const int b = layout.node_of_rank[rank];
    const int r = residue(layout.local_index[rank] - b, m);
    const long long sources = congruent(0, n, r, m) - (residue(b, m) == r ? 1 : 0);  // A != B
    if (sources == 0) continue;
    for (int lane = 0; lane < m; ++lane) {
      const int destination = rank_at(b, lane);
      if (destination == rank) continue;
      add_message(forwarding.steps, rank, destination, sources * m, sources * m);
      arriving[destination] += sources * m;
    }
  }
  end_phase(forwarding, arriving);
  return forwarding;
}

// The bytes of every copy and message: items times the one size, or each non-empty block routed.
void fill_payloads(Forwarding& forwarding, const AlltoallBlocks& blocks) {
  const int p = forwarding.p;
  if (blocks.uniform()) {
    for (auto& steps : forwarding.steps) {
      for (CountedStep& step : steps) {
        for (CountedCopy& copy : step.copies) copy.payload = copy.items * blocks.every_pair_bytes;
        for (CountedMessage& message : step.messages) message.payload = message.items * blocks.every_pair_bytes;
      }
    }
    return;
  }
  // The blocks on their way, moved phase by phase; grouped by holder first, so that one rank's group
  // and messages are looked up for all its blocks together (a block at a time missed the cache).
  struct Moving {
    int at, origin, destination;
    long long bytes;
  };
  std::vector<Moving> moving, by_holder;
  for (int origin = 0; origin < p; ++origin) {
    auto& first_step = forwarding.steps[static_cast<std::size_t>(origin)].front();
    for (const auto& [destination, bytes] : blocks.sending[static_cast<std::size_t>(origin)]) {
      if (destination == origin) {
        first_step.copies[0].payload += bytes;  // the own block
        continue;
      }
      first_step.copies[1].payload += bytes;  // packed
      moving.push_back({origin, origin, destination, bytes});
    }
  }
  const int phases = static_cast<int>(forwarding.steps.front().size()) - 1;
  std::vector<std::size_t> start(static_cast<std::size_t>(p) + 1);
  std::vector<std::uint32_t> message_to_peer(static_cast<std::size_t>(p));  // of the holder being routed
  for (int j = 0; j < phases && !moving.empty(); ++j) {
    std::fill(start.begin(), start.end(), 0);
    for (const Moving& block : moving) ++start[static_cast<std::size_t>(block.at) + 1];
    for (int x = 0; x < p; ++x) start[x + 1] += start[x];
    by_holder.resize(moving.size());
    for (const Moving& block : moving) by_holder[start[block.at]++] = block;
    moving.clear();
    int indexed_holder = -1;  // whose messages message_to_peer indexes
    for (Moving block : by_holder) {
      auto& messages = forwarding.steps[static_cast<std::size_t>(block.at)][static_cast<std::size_t>(j)].messages;
      if (block.at != indexed_holder) {
        indexed_holder = block.at;
        for (std::uint32_t m = 0; m < messages.size(); ++m)
          message_to_peer[static_cast<std::size_t>(messages[m].peer)] = m;
      }
      const int next = forwarding.next_hop(j, block.at, block.origin, block.destination);
      if (next != block.at) {
        messages[message_to_peer[static_cast<std::size_t>(next)]].payload += block.bytes;
        block.at = next;
      }
      if (block.at == block.destination) {  // delivered the step after it arrives
        forwarding.steps[static_cast<std::size_t>(block.at)][static_cast<std::size_t>(j) + 1].copies[0].payload +=
            block.bytes;
      } else {
        moving.push_back(block);
      }
    }
  }
}

// The model's form, as rank_profile derives it from the schedule: copies that move bytes, then the
// messages the engine does not skip.
long long wire_bytes(const CountedMessage& message) {
  const bool header = message.for_peer < message.items;
  return message.payload + (header ? message.items * static_cast<long long>(sizeof(std::int64_t)) : 0);
}

// Each probed message's bytes, beside its sender in the receiver's list (which is in post order:
// from the next rank down), filled from the senders' side: a search among ints, not messages.
void fill_probe_bytes(Forwarding& forwarding) {
  const int p = forwarding.p;
  for (auto& steps : forwarding.steps)
    for (CountedStep& step : steps) step.probed_bytes.assign(step.probed.size(), 0);
  for (int sender = 0; sender < p; ++sender) {
    const auto& steps = forwarding.steps[static_cast<std::size_t>(sender)];
    for (std::size_t s = 0; s < steps.size(); ++s) {
      for (const CountedMessage& message : steps[s].messages) {
        if (message.for_peer >= message.items) continue;  // no header: not probed
        CountedStep& at = forwarding.steps[static_cast<std::size_t>(message.peer)][s];
        const auto found =
            std::lower_bound(at.probed.begin(), at.probed.end(), post_order(message.peer, sender, p),
                             [&](int probed, long long order) { return post_order(message.peer, probed, p) < order; });
        at.probed_bytes[static_cast<std::size_t>(found - at.probed.begin())] = wire_bytes(message);
      }
    }
  }
}

RankProfile profile_of(const Forwarding& forwarding, int rank) {
  const std::vector<CountedStep>& steps = forwarding.steps[static_cast<std::size_t>(rank)];
  RankProfile profile;
  profile.step_count = static_cast<std::uint32_t>(steps.size());
  std::size_t items = 0;  // at most: one allocation per rank
  for (const CountedStep& counted : steps)
    items += counted.copies.size() + counted.messages.size() + counted.probed.size();
  profile.items.reserve(items);
  profile.steps.reserve(steps.size());
  for (std::size_t s = 0; s < steps.size(); ++s) {
    const CountedStep& counted = steps[s];
    ProfileStep step;
    step.step = static_cast<std::uint32_t>(s);
    step.first = static_cast<std::uint32_t>(profile.items.size());
    for (const CountedCopy& copy : counted.copies)
      if (copy.payload > 0) profile.items.push_back({ProfileItem::Kind::copy, false, rank, copy.payload});
    for (const CountedMessage& message : counted.messages) {
      const long long bytes = wire_bytes(message);
      if (message.for_peer < message.items || bytes > 0)
        profile.items.push_back({ProfileItem::Kind::send, false, message.peer, bytes});
    }
    for (std::size_t i = 0; i < counted.probed.size(); ++i)
      profile.items.push_back({ProfileItem::Kind::probe, false, counted.probed[i], counted.probed_bytes[i]});
    step.count = static_cast<std::uint32_t>(profile.items.size() - step.first);
    if (step.count > 0) profile.steps.push_back(step);
  }
  return profile;
}

}  // namespace

std::vector<RankProfile> direct_alltoall_profiles(DirectOrder order, int p, const AlltoallBlocks& blocks,
                                                  bool sends_empty_messages, int throttle) {
  if (order == DirectOrder::scattered && throttle < 1) throw std::invalid_argument("scattered order: throttle < 1");
  if (order == DirectOrder::exclusive_or && !std::has_single_bit(static_cast<unsigned>(std::max(p, 1))))
    throw std::invalid_argument("exclusive-or order: p not a power of two");
  // Where `rank` posts its block to `destination` (the own block's copy first), and in which step.
  const auto position = [&](int rank, int destination) -> long long {
    if (destination == rank) return -1;
    if (order == DirectOrder::rank_order) return destination;
    if (order == DirectOrder::exclusive_or) return rank ^ destination;
    return order == DirectOrder::scattered ? post_order(rank, destination, p) : post_order(destination, rank, p);
  };
  const auto step_of = [&](long long position) -> std::uint32_t {
    if (position < 0) return 0;
    if (order == DirectOrder::pairwise || order == DirectOrder::exclusive_or)
      return static_cast<std::uint32_t>(position - 1);
    return order == DirectOrder::scattered ? static_cast<std::uint32_t>(position / throttle) : 0u;
  };
  // The destination a rank posts k-th after its own block (k = 1..p − 1): position()'s inverse.
  const auto destination_at = [&](int rank, int k) {
    switch (order) {
      case DirectOrder::rank_order: return k <= rank ? k - 1 : k;
      case DirectOrder::exclusive_or: return rank ^ k;
      case DirectOrder::scattered: return rank >= k ? rank - k : rank - k + p;
      case DirectOrder::from_next_rank:
      case DirectOrder::pairwise: break;
    }
    return rank + k < p ? rank + k : rank + k - p;
  };
  // Every order's last position is p − 1: the rank's last step is that position's.
  const std::uint32_t step_count = p > 1 ? step_of(p - 1) + 1 : 1;
  std::vector<RankProfile> profiles(static_cast<std::size_t>(p));
  std::vector<std::pair<int, long long>> sending;
  for (int rank = 0; rank < p; ++rank) {
    // The rank's blocks in the order it posts them, the own block first: every pair's listed in that
    // order (p² of them: no sorting), or the non-empty ones sorted.
    sending.clear();
    if (blocks.uniform() || sends_empty_messages) {
      sending.emplace_back(rank, blocks.bytes(rank, rank));
      for (int k = 1; k < p; ++k) {
        const int destination = destination_at(rank, k);
        sending.emplace_back(destination, blocks.bytes(rank, destination));
      }
    } else {
      sending = blocks.sending[static_cast<std::size_t>(rank)];
      std::sort(sending.begin(), sending.end(),
                [&](const auto& a, const auto& b) { return position(rank, a.first) < position(rank, b.first); });
    }
    RankProfile& profile = profiles[static_cast<std::size_t>(rank)];
    profile.step_count = step_count;
    profile.items.reserve(sending.size());
    for (const auto& [destination, bytes] : sending) {
      const bool own = destination == rank;
      if (bytes == 0 && (own || !sends_empty_messages)) continue;
      const std::uint32_t step = step_of(position(rank, destination));
      if (profile.steps.empty() || profile.steps.back().step != step)
        profile.steps.push_back({step, static_cast<std::uint32_t>(profile.items.size())});
      profile.items.push_back({own ? ProfileItem::Kind::copy : ProfileItem::Kind::send, false, destination, bytes});
      ++profile.steps.back().count;
    }
  }
  return profiles;
}

std::vector<RankProfile> counted_alltoall_profiles(const AlgorithmChoice& choice, const std::vector<int>& node_of_rank,
                                                   const AlltoallBlocks& blocks, bool sends_empty_messages) {
  const int p = static_cast<int>(node_of_rank.size());
  const std::string_view name = choice.algorithm->name;
  if (name == "linear" || name == "pairwise") {
    if (blocks.uniform()) return {};  // the rank symmetry serves
    return direct_alltoall_profiles(name == "linear" ? DirectOrder::from_next_rank : DirectOrder::pairwise, p, blocks,
                                    sends_empty_messages);
  }
  Forwarding forwarding;
  if (name == "grid") {
    forwarding = grid_forwarding(p, grid_shape(p, parse_grid_dims(choice.params.at("dims")).value_or(GridDims{})));
  } else if (name == "node_grid") {
    forwarding =
        node_grid_forwarding(node_of_rank, parse_node_grid_dims(choice.params.at("dims")).value_or(GridDims{1, false}));
  }
  if (forwarding.steps.empty()) return {};
  fill_payloads(forwarding, blocks);
  fill_probe_bytes(forwarding);
  std::vector<RankProfile> profiles;
  profiles.reserve(forwarding.steps.size());
  for (std::size_t rank = 0; rank < forwarding.steps.size(); ++rank)
    profiles.push_back(profile_of(forwarding, static_cast<int>(rank)));
  return profiles;
}

}  // namespace collshim::model
