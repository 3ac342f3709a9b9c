#include "model/cost/alltoall_profiles.hpp"

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

// A forwarding schedule's shape, one step of every rank at a time: the ranks' local copies (step 0:
// the own block, then the packing of the others; later steps: the delivery of what arrived) and
// their messages, with item counts; `payload` is filled with the items' bytes afterwards. Kept flat,
// a few arrays per step rather than a few per rank and step: at p = 16384 allocating the per-rank
// lists took about 40% of counting a node_grid.
struct CountedCopy {
  long long items = 0;
  long long payload = 0;
};
// `for_peer` of the items are for the receiver itself; the others are forwarded, so the engine sends
// their sizes in a header (wire_message's rule), and the receiver probes for the message.
struct CountedMessage {
  int sender = 0;
  int peer = 0;
  long long items = 0;
  long long for_peer = 0;
  long long payload = 0;
};
struct CountedProbe {
  int receiver = 0;
  int sender = 0;
  long long bytes = 0;  // on the wire (fill_probe_bytes())
};
struct CountedStep {
  int copies_per_rank = 1;
  std::vector<CountedCopy> copies;  // rank * copies_per_rank + i
  // Each sender's messages together, [sent_by[r].first, sent_by[r].second) rank r's, in the order
  // posted once the step is closed (close_step()); the probes grouped by receiver, rank r's from
  // first_probe[r] to first_probe[r + 1], in the order received.
  std::vector<CountedMessage> messages;
  std::vector<std::pair<std::size_t, std::size_t>> sent_by;
  std::vector<CountedProbe> probes;
  std::vector<std::size_t> first_probe;
};
struct Forwarding {
  int p = 1;
  std::vector<CountedStep> steps;
  // Where an item held by `current` goes in `phase` (current itself: it stays).
  std::function<int(int phase, int current, int origin, int destination)> next_hop;
  // The ranks whose profiles are wanted (none: every rank): only their messages and probes are kept.
  std::vector<bool> wanted;

  bool wants(int rank) const { return wanted.empty() || wanted[static_cast<std::size_t>(rank)]; }
};

// The forwarding schedule's order: from the next rank up, cyclically (peer and rank in [0, p); no
// division: it is compared in the inner loop that routes every block).
long long post_order(int peer, int rank, int p) {
  const long long ahead = static_cast<long long>(peer) - rank;
  return ahead < 0 ? ahead + p : ahead;
}

// The next step of every rank.
void begin_step(Forwarding& forwarding, int copies_per_rank) {
  CountedStep& step = forwarding.steps.emplace_back();
  step.copies_per_rank = copies_per_rank;
  step.copies.reserve(static_cast<std::size_t>(forwarding.p) * copies_per_rank);
  step.sent_by.assign(static_cast<std::size_t>(forwarding.p), {0, 0});
}

// Room for the current step's messages and probes, at most `messages` of each: a list of a million
// grown by doubling is copied and maps fresh memory at each growth.
void expect_messages(Forwarding& forwarding, std::size_t messages) {
  forwarding.steps.back().messages.reserve(messages);
  forwarding.steps.back().probes.reserve(messages);
}

// A message of the current step from `sender` to `receiver` (a sender's messages come together);
// the receiver probes for it if it carries forwarded blocks.
void add_message(Forwarding& forwarding, int sender, int receiver, long long items, long long for_peer) {
  if (!forwarding.wants(sender) && !forwarding.wants(receiver)) return;
  CountedStep& step = forwarding.steps.back();
  auto& [first, end] = step.sent_by[static_cast<std::size_t>(sender)];
  if (first == end) first = end = step.messages.size();
  if (end != step.messages.size()) throw std::logic_error("counted Alltoall: a rank's messages are not together");
  step.messages.push_back({sender, receiver, items, for_peer, 0});
  ++end;
  if (for_peer < items && forwarding.wants(receiver)) step.probes.push_back({receiver, sender, 0});
}

// Closes a step: sends from the next rank up, receives from the next rank down (the forwarding
// schedule's orders); the probes grouped by receiver (a counting sort).
void close_step(CountedStep& step, int p) {
  for (int rank = 0; rank < p; ++rank) {
    const auto [first, end] = step.sent_by[static_cast<std::size_t>(rank)];
    std::sort(step.messages.begin() + static_cast<std::ptrdiff_t>(first),
              step.messages.begin() + static_cast<std::ptrdiff_t>(end),
              [p, rank](const CountedMessage& a, const CountedMessage& b) {
                return post_order(a.peer, rank, p) < post_order(b.peer, rank, p);
              });
  }
  step.first_probe.assign(static_cast<std::size_t>(p) + 1, 0);
  for (const CountedProbe& probe : step.probes) ++step.first_probe[static_cast<std::size_t>(probe.receiver) + 1];
  for (int r = 0; r < p; ++r) step.first_probe[r + 1] += step.first_probe[r];
  std::vector<CountedProbe> grouped(step.probes.size());
  std::vector<std::size_t> next(step.first_probe.begin(), step.first_probe.end() - 1);
  for (const CountedProbe& probe : step.probes) grouped[next[static_cast<std::size_t>(probe.receiver)]++] = probe;
  for (int rank = 0; rank < p; ++rank)
    std::sort(grouped.begin() + static_cast<std::ptrdiff_t>(step.first_probe[rank]),
              grouped.begin() + static_cast<std::ptrdiff_t>(step.first_probe[rank + 1]),
              [p, rank](const CountedProbe& a, const CountedProbe& b) {
                return post_order(rank, a.sender, p) < post_order(rank, b.sender, p);
              });
  step.probes.swap(grouped);
}

// The first step: every rank copies its own block and packs the p - 1 others.
void begin_forwarding(Forwarding& forwarding) {
  begin_step(forwarding, 2);
  for (int rank = 0; rank < forwarding.p; ++rank)
    forwarding.steps.back().copies.insert(forwarding.steps.back().copies.end(), {{1, 0}, {forwarding.p - 1LL, 0}});
}

// Ends a phase: its step is closed, and the next one's copies are the deliveries of what arrived.
void end_phase(Forwarding& forwarding, const std::vector<long long>& delivered) {
  close_step(forwarding.steps.back(), forwarding.p);
  begin_step(forwarding, 1);
  for (const long long items : delivered) forwarding.steps.back().copies.push_back({items, 0});
}

// The last step: nothing is sent in it.
void end_forwarding(Forwarding& forwarding) { close_step(forwarding.steps.back(), forwarding.p); }

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
  std::vector<long long> held(static_cast<std::size_t>(n) * m, 0), next(held.size()), arriving(forwarding.p);
  // Each lane's rank, and whether its profile is wanted: looked up in the inner loop.
  std::vector<int> rank_of(held.size());
  std::vector<bool> wanted(held.size());
  for (int x = 0; x < n; ++x) {
    for (int lane = 0; lane < m; ++lane) {
      const std::size_t at = static_cast<std::size_t>(x) * m + lane;
      rank_of[at] = rank_at(x, lane);
      wanted[at] = forwarding.wants(rank_of[at]);
    }
  }
  // Of X's sub-blocks in the phase: each one's hop, and per residue r how many of its groups are ≡ r.
  std::vector<int> hop, held_here;
  std::vector<long long> in_part;
  for (int x = 0; x < n; ++x) held[static_cast<std::size_t>(x) * m + residue(x, m)] = 1;
  for (int j = 0; j < phases; ++j) {
    std::fill(next.begin(), next.end(), 0);
    std::fill(arriving.begin(), arriving.end(), 0);
    std::size_t messages = 0;  // at most: every lane to the hop of every other sub-block
    for (int x = 0; x < n; ++x)
      messages += static_cast<std::size_t>(groups[static_cast<std::size_t>(j) * n + x].parts - 1) * m;
    expect_messages(forwarding, messages);
    for (int x = 0; x < n; ++x) {
      const GridPhase& group = groups[static_cast<std::size_t>(j) * n + x];
      const int own = group.part_of(x);
      const long long* at_x = &held[static_cast<std::size_t>(x) * m];
      held_here.clear();  // the residues a of sources held at X (one, in the first phase)
      for (int a = 0; a < m; ++a)
        if (at_x[a] != 0) held_here.push_back(a);
      hop.resize(static_cast<std::size_t>(group.parts));
      in_part.resize(static_cast<std::size_t>(group.parts) * m);
      for (int b = 0; b < group.parts; ++b) {
        const int y = hop[b] = group.members[static_cast<std::size_t>(group.next_by_part[static_cast<std::size_t>(b)])];
        for (int a = 0; a < m; ++a) next[static_cast<std::size_t>(y) * m + a] += at_x[a];  // b == own: they stay
        const int lo = group.part_begin(b), hi = lo + group.part_length(b);
        for (int r = 0; r < m; ++r) in_part[static_cast<std::size_t>(b) * m + r] = congruent(lo, hi, r, m);
      }
      for (int lane = 0; lane < m; ++lane) {  // a lane's messages together
        const std::size_t from = static_cast<std::size_t>(x) * m + lane;
        for (int b = 0; b < group.parts; ++b) {
          const std::size_t to = static_cast<std::size_t>(hop[b]) * m + lane;
          if (b == own || (!wanted[from] && !wanted[to])) continue;  // neither end's profile is wanted
          const int y = hop[b], y_residue = residue(y, m);
          const long long* groups_in_b = &in_part[static_cast<std::size_t>(b) * m];
          long long items = 0, for_peer = 0;
          for (const int a : held_here) {
            const int r = lane >= a ? lane - a : lane - a + m;  // the destination groups B on this lane
            items += at_x[a] * m * m * groups_in_b[r];
            if (y_residue == r) for_peer += at_x[a] * m;  // those for group y: one item per source rank
          }
          if (items == 0) continue;
          add_message(forwarding, rank_of[from], rank_of[to], items, for_peer);
          arriving[static_cast<std::size_t>(rank_of[to])] += for_peer;
        }
      }
    }
    held.swap(next);
    end_phase(forwarding, arriving);
  }
}

Forwarding grid_forwarding(int p, const std::vector<int>& shape, std::vector<bool> wanted) {
  const GridRouting routing(p, shape);
  const auto groups = group_table(routing);
  Forwarding forwarding{p, {}, [groups, p](int phase, int current, int, int destination) {
                          return hop_in(*groups, p, phase, current, destination);
                        }};
  forwarding.wanted = std::move(wanted);
  begin_forwarding(forwarding);
  count_grid_phases(forwarding, *groups, routing.phases(), p, 1, [](int rank, int) { return rank; });
  end_forwarding(forwarding);
  return forwarding;
}

// No steps where the nodes differ in size.
Forwarding node_grid_forwarding(const std::vector<int>& node_of_rank, const GridDims& between_nodes,
                                std::vector<bool> wanted) {
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
  forwarding.wanted = std::move(wanted);
  if (std::any_of(layout.members.begin(), layout.members.end(),
                  [m](const auto& members) { return static_cast<int>(members.size()) != m; }))
    return forwarding;
  const auto rank_at = [&](int node, int lane) {
    return layout.members[static_cast<std::size_t>(node)][static_cast<std::size_t>(lane)];
  };
  std::vector<long long> arriving(static_cast<std::size_t>(p), 0);

  // Combine: each rank hands every other rank of its node its block for it, and its blocks for the
  // nodes B that rank handles ((A + B) mod m is its lane), m each.
  const std::size_t within_nodes = static_cast<std::size_t>(p) * (m - 1);  // messages
  begin_forwarding(forwarding);
  expect_messages(forwarding, within_nodes);
  for (int rank = 0; rank < p; ++rank) {
    const int a = layout.node_of_rank[rank];
    for (int lane = 0; lane < m; ++lane) {
      const int handler = rank_at(a, lane);
      if (handler == rank) continue;
      const int r = residue(lane - a, m);
      const long long bundles = congruent(0, n, r, m) - (residue(a, m) == r ? 1 : 0);  // B != A
      add_message(forwarding, rank, handler, 1 + bundles * m, 1);
      arriving[handler] += 1;
    }
  }
  end_phase(forwarding, arriving);

  // Between nodes: node pairs' bundles along the grid among nodes, on their lanes.
  count_grid_phases(forwarding, *groups, nodes.phases(), n, m, rank_at);

  // Deliver: the handler of the pairs (A, B) on node B hands each other rank of B its items, one per
  // origin on A.
  expect_messages(forwarding, within_nodes);
  std::fill(arriving.begin(), arriving.end(), 0);
  for (int rank = 0; rank < p; ++rank) {
    const int b = layout.node_of_rank[rank];
    const int r = residue(layout.local_index[rank] - b, m);
    const long long sources = congruent(0, n, r, m) - (residue(b, m) == r ? 1 : 0);  // A != B
    if (sources == 0) continue;
    for (int lane = 0; lane < m; ++lane) {
      const int destination = rank_at(b, lane);
      if (destination == rank) continue;
      add_message(forwarding, rank, destination, sources * m, sources * m);
      arriving[destination] += sources * m;
    }
  }
  end_phase(forwarding, arriving);
  end_forwarding(forwarding);
  return forwarding;
}

// The bytes of every copy and message: items times the one size, or each non-empty block routed.
void fill_payloads(Forwarding& forwarding, const AlltoallBlocks& blocks) {
  const int p = forwarding.p;
  if (blocks.uniform()) {
    for (CountedStep& step : forwarding.steps) {
      for (CountedCopy& copy : step.copies) copy.payload = copy.items * blocks.every_pair_bytes;
      for (CountedMessage& message : step.messages) message.payload = message.items * blocks.every_pair_bytes;
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
  std::vector<CountedCopy>& first_copies = forwarding.steps.front().copies;
  for (int origin = 0; origin < p; ++origin) {
    for (const auto& [destination, bytes] : blocks.sending[static_cast<std::size_t>(origin)]) {
      if (destination == origin) {
        first_copies[static_cast<std::size_t>(origin) * 2].payload += bytes;  // the own block
        continue;
      }
      first_copies[static_cast<std::size_t>(origin) * 2 + 1].payload += bytes;  // packed
      moving.push_back({origin, origin, destination, bytes});
    }
  }
  const int phases = static_cast<int>(forwarding.steps.size()) - 1;
  std::vector<std::size_t> start(static_cast<std::size_t>(p) + 1);
  std::vector<std::size_t> message_to_peer(static_cast<std::size_t>(p));  // of the holder being routed
  for (int j = 0; j < phases && !moving.empty(); ++j) {
    std::fill(start.begin(), start.end(), 0);
    for (const Moving& block : moving) ++start[static_cast<std::size_t>(block.at) + 1];
    for (int x = 0; x < p; ++x) start[x + 1] += start[x];
    by_holder.resize(moving.size());
    for (const Moving& block : moving) by_holder[start[block.at]++] = block;
    moving.clear();
    CountedStep& step = forwarding.steps[static_cast<std::size_t>(j)];
    std::vector<CountedCopy>& delivered = forwarding.steps[static_cast<std::size_t>(j) + 1].copies;
    int indexed_holder = -1;  // whose messages message_to_peer indexes
    for (Moving block : by_holder) {
      if (block.at != indexed_holder) {
        indexed_holder = block.at;
        for (std::size_t m = step.sent_by[block.at].first; m < step.sent_by[block.at].second; ++m)
          message_to_peer[static_cast<std::size_t>(step.messages[m].peer)] = m;
      }
      const int next = forwarding.next_hop(j, block.at, block.origin, block.destination);
      if (next != block.at) {
        step.messages[message_to_peer[static_cast<std::size_t>(next)]].payload += block.bytes;
        block.at = next;
      }
      if (block.at == block.destination) {  // delivered the step after it arrives
        delivered[static_cast<std::size_t>(block.at)].payload += block.bytes;
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

// Each probed message's bytes, in the receiver's list (which is in post order: from the next rank
// down), filled from the senders' side.
void fill_probe_bytes(Forwarding& forwarding) {
  const int p = forwarding.p;
  for (CountedStep& step : forwarding.steps) {
    for (const CountedMessage& message : step.messages) {
      if (message.for_peer >= message.items || !forwarding.wants(message.peer)) continue;  // not probed (here)
      const auto begin = step.probes.begin() + static_cast<std::ptrdiff_t>(step.first_probe[message.peer]);
      const auto end = step.probes.begin() + static_cast<std::ptrdiff_t>(step.first_probe[message.peer + 1]);
      const auto found = std::lower_bound(begin, end, post_order(message.peer, message.sender, p),
                                          [&](const CountedProbe& probe, long long order) {
                                            return post_order(message.peer, probe.sender, p) < order;
                                          });
      found->bytes = wire_bytes(message);
    }
  }
}

RankProfile profile_of(const Forwarding& forwarding, int rank) {
  const auto r = static_cast<std::size_t>(rank);
  RankProfile profile;
  profile.step_count = static_cast<std::uint32_t>(forwarding.steps.size());
  std::size_t items = 0;  // at most: one allocation per rank
  for (const CountedStep& counted : forwarding.steps)
    items += static_cast<std::size_t>(counted.copies_per_rank) + counted.sent_by[r].second - counted.sent_by[r].first +
             counted.first_probe[r + 1] - counted.first_probe[r];
  profile.items.reserve(items);
  profile.steps.reserve(forwarding.steps.size());
  for (std::size_t s = 0; s < forwarding.steps.size(); ++s) {
    const CountedStep& counted = forwarding.steps[s];
    ProfileStep step;
    step.step = static_cast<std::uint32_t>(s);
    step.first = static_cast<std::uint32_t>(profile.items.size());
    for (int i = 0; i < counted.copies_per_rank; ++i) {
      const CountedCopy& copy = counted.copies[r * static_cast<std::size_t>(counted.copies_per_rank) + i];
      if (copy.payload > 0) profile.items.push_back({ProfileItem::Kind::copy, false, rank, copy.payload});
    }
    for (std::size_t m = counted.sent_by[r].first; m < counted.sent_by[r].second; ++m) {
      const CountedMessage& message = counted.messages[m];
      const long long bytes = wire_bytes(message);
      if (message.for_peer < message.items || bytes > 0)
        profile.items.push_back({ProfileItem::Kind::send, false, message.peer, bytes});
    }
    for (std::size_t i = counted.first_probe[r]; i < counted.first_probe[r + 1]; ++i)
      profile.items.push_back({ProfileItem::Kind::probe, false, counted.probes[i].sender, counted.probes[i].bytes});
    step.count = static_cast<std::uint32_t>(profile.items.size() - step.first);
    if (step.count > 0) profile.steps.push_back(step);
  }
  return profile;
}

}  // namespace

std::vector<RankProfile> direct_alltoall_profiles(DirectOrder order, int p, const AlltoallBlocks& blocks,
                                                  bool sends_empty_messages, int throttle,
                                                  const std::vector<int>& ranks) {
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
  for (std::size_t i = 0; i < (ranks.empty() ? static_cast<std::size_t>(p) : ranks.size()); ++i) {
    const int rank = ranks.empty() ? static_cast<int>(i) : ranks[i];
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
                                                   const AlltoallBlocks& blocks, bool sends_empty_messages,
                                                   const std::vector<int>& ranks) {
  const int p = static_cast<int>(node_of_rank.size());
  const std::string_view name = choice.algorithm->name;
  if (name == "linear" || name == "pairwise") {
    if (blocks.uniform()) return {};  // the rank symmetry serves
    return direct_alltoall_profiles(name == "linear" ? DirectOrder::from_next_rank : DirectOrder::pairwise, p, blocks,
                                    sends_empty_messages, 0, ranks);
  }
  // Blocks of different sizes are routed one by one through every message (fill_payloads()): every
  // rank's are kept.
  std::vector<bool> wanted;
  if (blocks.uniform() && !ranks.empty()) {
    wanted.assign(static_cast<std::size_t>(p), false);
    for (const int rank : ranks) wanted[static_cast<std::size_t>(rank)] = true;
  }
  Forwarding forwarding;
  if (name == "grid") {
    forwarding = grid_forwarding(p, grid_shape(p, parse_grid_dims(choice.params.at("dims")).value_or(GridDims{})),
                                 std::move(wanted));
  } else if (name == "node_grid") {
    forwarding = node_grid_forwarding(
        node_of_rank, parse_node_grid_dims(choice.params.at("dims")).value_or(GridDims{1, false}), std::move(wanted));
  }
  if (forwarding.steps.empty()) return {};
  fill_payloads(forwarding, blocks);
  fill_probe_bytes(forwarding);
  std::vector<RankProfile> profiles(static_cast<std::size_t>(p));
  for (int rank = 0; rank < p; ++rank)
    if (forwarding.wants(rank)) profiles[static_cast<std::size_t>(rank)] = profile_of(forwarding, rank);
  return profiles;
}

}  // namespace collshim::model
