#include "model/forwarding_profiles.hpp"

#include <algorithm>
#include <cstdint>

#include "algorithms/grid_routing.hpp"
#include "algorithms/hierarchical.hpp"
#include "algorithms/node_grid_routing.hpp"

namespace collshim::model {
namespace {

// A message of a phase: `items` blocks, `for_peer` of them for the receiver itself (the others are
// forwarded, so the engine sends their sizes in a header: wire_message's rule).
struct CountedMessage {
  int peer = 0;
  long long items = 0;
  long long for_peer = 0;
};

// Appends one step to a rank's profile as rank_profile would derive it: copies (bytes each, empty
// ones left out), then messages in the forwarding schedule's order (from the next rank up, cyclically).
void append_step(RankProfile& profile, int rank, int p, long long datum_bytes, std::initializer_list<long long> copy_items,
                 std::vector<CountedMessage> messages) {
  ProfileStep step;
  step.first = static_cast<std::uint32_t>(profile.items.size());
  for (const long long items : copy_items)
    if (items * datum_bytes > 0) profile.items.push_back({ProfileItem::Kind::copy, false, rank, items * datum_bytes});
  std::sort(messages.begin(), messages.end(), [p, rank](const CountedMessage& a, const CountedMessage& b) {
    return (a.peer - rank + p) % p < (b.peer - rank + p) % p;
  });
  for (const CountedMessage& message : messages) {
    const bool header = message.for_peer < message.items;
    const long long bytes = message.items * datum_bytes + (header ? message.items * static_cast<long long>(sizeof(std::int64_t)) : 0);
    if (header || bytes > 0) profile.items.push_back({ProfileItem::Kind::send, false, message.peer, bytes});
  }
  step.count = static_cast<std::uint32_t>(profile.items.size() - step.first);
  profile.steps.push_back(step);
  profile.opaque.push_back(false);
}

// How many of lo, lo+1, ..., hi-1 are congruent to r modulo m (0 <= r < m).
long long congruent(int lo, int hi, int r, int m) {
  const auto below = [r, m](int n) { return n <= r ? 0LL : (n - r - 1) / m + 1; };  // in [0, n)
  return below(hi) - below(lo);
}

int residue(long long x, int m) { return static_cast<int>(((x % m) + m) % m); }

}  // namespace

std::vector<RankProfile> grid_alltoall_profiles(int p, const std::vector<int>& shape, long long datum_bytes) {
  const GridRouting routing(p, shape);
  const int phases = routing.phases();
  std::vector<RankProfile> profiles(static_cast<std::size_t>(p));
  // held[x]: origins whose items for x's block at this depth sit at x (at first each its own);
  // delivered[x]: items for x that arrived in the phase before.
  std::vector<long long> held(profiles.size(), 1), next(profiles.size()), delivered(profiles.size(), 0), arriving(profiles.size());
  for (int j = 0; j <= phases; ++j) {
    std::fill(next.begin(), next.end(), 0);
    std::fill(arriving.begin(), arriving.end(), 0);
    for (int x = 0; x < p; ++x) {
      std::vector<CountedMessage> messages;
      if (j < phases) {
        const GridPhase group = routing.phase(j, x);
        const int own = group.part_of(x);
        for (int b = 0; b < group.parts; ++b) {
          const int hop = group.members[static_cast<std::size_t>(group.next_by_part[static_cast<std::size_t>(b)])];
          next[hop] += held[x];  // x itself for its own sub-block: those stay
          if (b == own) continue;
          messages.push_back({hop, held[x] * group.part_length(b), held[x]});
          arriving[hop] += held[x];
        }
      }
      RankProfile& profile = profiles[static_cast<std::size_t>(x)];
      if (j == 0) {
        append_step(profile, x, p, datum_bytes, {1, p - 1LL}, std::move(messages));  // own block, packing
      } else {
        append_step(profile, x, p, datum_bytes, {delivered[x]}, std::move(messages));
      }
    }
    held.swap(next);
    delivered.swap(arriving);
  }
  return profiles;
}

std::vector<RankProfile> node_grid_alltoall_profiles(const std::vector<int>& node_of_rank, const GridDims& between_nodes,
                                                     long long datum_bytes) {
  const int p = static_cast<int>(node_of_rank.size());
  const NodeLayout layout = make_node_layout(node_of_rank);
  const int n = static_cast<int>(layout.members.size());
  const int m = static_cast<int>(layout.members.front().size());
  if (std::any_of(layout.members.begin(), layout.members.end(), [m](const auto& members) { return static_cast<int>(members.size()) != m; }))
    return {};
  const GridRouting nodes(n, grid_shape(n, between_nodes));
  const auto rank_at = [&](int node, int lane) { return layout.members[static_cast<std::size_t>(node)][static_cast<std::size_t>(lane)]; };
  std::vector<RankProfile> profiles(static_cast<std::size_t>(p));
  std::vector<long long> delivered(profiles.size(), 0), arriving(profiles.size(), 0);
  const auto end_phase = [&](std::vector<std::vector<CountedMessage>>& messages, bool first) {
    for (int rank = 0; rank < p; ++rank) {
      RankProfile& profile = profiles[static_cast<std::size_t>(rank)];
      auto& own = messages[static_cast<std::size_t>(rank)];
      if (first) {
        append_step(profile, rank, p, datum_bytes, {1, p - 1LL}, std::move(own));
      } else {
        append_step(profile, rank, p, datum_bytes, {delivered[rank]}, std::move(own));
      }
    }
    delivered.swap(arriving);
    std::fill(arriving.begin(), arriving.end(), 0);
  };
  std::vector<std::vector<CountedMessage>> messages(profiles.size());

  // Combine: each rank hands every other rank of its node its block for it, and its blocks for the
  // nodes B that rank handles ((A + B) mod m is its lane), m each.
  for (int rank = 0; rank < p; ++rank) {
    const int a = layout.node_of_rank[rank];
    for (int lane = 0; lane < m; ++lane) {
      const int handler = rank_at(a, lane);
      if (handler == rank) continue;
      const int r = residue(lane - a, m);
      const long long bundles = congruent(0, n, r, m) - (residue(a, m) == r ? 1 : 0);  // B != A
      messages[rank].push_back({handler, 1 + bundles * m, 1});
      arriving[handler] += 1;
    }
  }
  end_phase(messages, true);

  // Between nodes: held[X*m + a], the source nodes A = a (mod m) whose bundles for X's node block at
  // this depth sit on X (each on its lane); at first every node's own.
  std::vector<long long> held(static_cast<std::size_t>(n) * m, 0), next(held.size());
  for (int x = 0; x < n; ++x) held[static_cast<std::size_t>(x) * m + residue(x, m)] = 1;
  for (int j = 0; j < nodes.phases(); ++j) {
    std::fill(next.begin(), next.end(), 0);
    for (auto& list : messages) list.clear();
    for (int x = 0; x < n; ++x) {
      const GridPhase group = nodes.phase(j, x);
      const int own = group.part_of(x);
      const long long* at_x = &held[static_cast<std::size_t>(x) * m];
      for (int b = 0; b < group.parts; ++b) {
        const int y = group.members[static_cast<std::size_t>(group.next_by_part[static_cast<std::size_t>(b)])];
        for (int a = 0; a < m; ++a) next[static_cast<std::size_t>(y) * m + a] += at_x[a];
        if (b == own) continue;
        const int lo = group.part_begin(b), hi = lo + group.part_length(b);
        for (int lane = 0; lane < m; ++lane) {
          long long items = 0, for_peer = 0;
          for (int a = 0; a < m; ++a) {
            if (at_x[a] == 0) continue;
            const int r = residue(lane - a, m);  // the destination nodes B on this lane
            items += at_x[a] * m * m * congruent(lo, hi, r, m);
            if (residue(y, m) == r) for_peer += at_x[a] * m;  // bundles for node y: one item per origin
          }
          if (items == 0) continue;
          messages[rank_at(x, lane)].push_back({rank_at(y, lane), items, for_peer});
          arriving[rank_at(y, lane)] += for_peer;
        }
      }
    }
    held.swap(next);
    end_phase(messages, false);
  }

  // Deliver: the handler of the pairs (A, B) on node B hands each other rank of B its items, one per
  // origin on A.
  for (auto& list : messages) list.clear();
  for (int rank = 0; rank < p; ++rank) {
    const int b = layout.node_of_rank[rank];
    const int r = residue(layout.local_index[rank] - b, m);
    const long long sources = congruent(0, n, r, m) - (residue(b, m) == r ? 1 : 0);  // A != B
    if (sources == 0) continue;
    for (int lane = 0; lane < m; ++lane) {
      const int destination = rank_at(b, lane);
      if (destination == rank) continue;
      messages[rank].push_back({destination, sources * m, sources * m});
      arriving[destination] += sources * m;
    }
  }
  end_phase(messages, false);
  for (auto& list : messages) list.clear();
  end_phase(messages, false);
  return profiles;
}

std::vector<RankProfile> counted_alltoall_profiles(const AlgorithmChoice& choice, const std::vector<int>& node_of_rank,
                                                   long long datum_bytes) {
  const int p = static_cast<int>(node_of_rank.size());
  if (choice.algorithm->name == "grid")
    return grid_alltoall_profiles(p, grid_shape(p, parse_grid_dims(choice.params.at("dims")).value_or(GridDims{})), datum_bytes);
  if (choice.algorithm->name == "node_grid") {
    const GridDims dims = parse_node_grid_dims(choice.params.at("dims")).value_or(GridDims{1, false});
    return node_grid_alltoall_profiles(node_of_rank, dims, datum_bytes);
  }
  return {};
}

}  // namespace collshim::model
