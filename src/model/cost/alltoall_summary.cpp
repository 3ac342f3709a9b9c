#include "model/cost/alltoall_summary.hpp"

#include <algorithm>
#include <numeric>
#include <random>
#include <stdexcept>

namespace collshim::model {

AlltoallRankSummary summarize_rank(int rank, const std::vector<long long>& sent_by_destination,
                                   const std::vector<long long>& received_by_source,
                                   const std::vector<int>& node_of_rank) {
  const auto p = node_of_rank.size();
  if (sent_by_destination.size() != p || received_by_source.size() != p || rank < 0 ||
      static_cast<std::size_t>(rank) >= p)
    throw std::invalid_argument("summarize_rank: p counts each, and the rank among them");
  const int node = node_of_rank[static_cast<std::size_t>(rank)];
  AlltoallRankSummary summary;
  summary.own_bytes = sent_by_destination[static_cast<std::size_t>(rank)];
  for (std::size_t peer = 0; peer < p; ++peer) {
    if (static_cast<int>(peer) == rank) continue;
    const bool on_node = node_of_rank[peer] == node;
    if (const long long bytes = sent_by_destination[peer]; bytes > 0) {
      ++summary.destinations;
      summary.sent_bytes += bytes;
      summary.largest_bytes = std::max(summary.largest_bytes, bytes);
      if (on_node) ++summary.node_destinations, summary.node_sent_bytes += bytes;
    }
    if (received_by_source[peer] > 0) {
      ++summary.sources;
      if (on_node) ++summary.node_sources;
    }
  }
  return summary;
}

std::vector<long long> summary_values(const AlltoallRankSummary& s) {
  return {s.own_bytes,       s.sent_bytes,    s.destinations, s.node_destinations,
          s.node_sent_bytes, s.largest_bytes, s.sources,      s.node_sources};
}

std::vector<AlltoallRankSummary> summaries_of(const std::vector<long long>& values) {
  if (values.size() % summary_fields != 0) throw std::invalid_argument("summaries_of: not whole records");
  std::vector<AlltoallRankSummary> summaries;
  summaries.reserve(values.size() / summary_fields);
  for (std::size_t at = 0; at < values.size(); at += summary_fields) {
    const long long* v = values.data() + at;
    summaries.push_back({v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]});
  }
  return summaries;
}

namespace {

// The peers drawn for every origin, from pools of receivers (each as often as it receives), taken in
// order: a drawn receiver that does not fit (the origin itself, already drawn, or on the wrong side of
// the node boundary) is swapped with a later one that does, looked for a few places ahead (in the
// pool's tail, anywhere); failing that, any rank that fits is taken (the receivers' counts then
// drift a little).
class PeerDraw {
 public:
  explicit PeerDraw(int p) : drawn_by_(static_cast<std::size_t>(p), -1) {}

  void begin_origin(int origin) {
    origin_ = origin;
    drawn_by_[static_cast<std::size_t>(origin)] = origin;  // never its own peer
  }
  // Up to `count` peers from `pool` (from `next` on) for which `fits` holds, else from `any`
  // (cyclically from `any_from`, on from where the last fallback of this draw stopped).
  template <typename Fits>
  void draw(std::vector<int>& pool, std::size_t& next, long long count, const std::vector<int>& any,
            std::size_t any_from, Fits fits, std::vector<int>& peers) {
    std::size_t walked = 0;  // of `any`
    for (long long k = 0; k < count; ++k) {
      // (The pool's last few are all looked through: there, a fitting one is rarely near.)
      const std::size_t end = pool.size() - next <= whole_tail ? pool.size() : std::min(pool.size(), next + look_ahead);
      bool found = false;
      for (std::size_t i = next; i < end && !found; ++i) {
        if (!usable(pool[i]) || !fits(pool[i])) continue;
        std::swap(pool[next], pool[i]);
        take(pool[next++], peers);
        found = true;
      }
      for (; !found && walked < any.size(); ++walked) {
        const int peer = any[(any_from + walked) % any.size()];
        if (usable(peer) && fits(peer)) take(peer, peers), found = true;
      }
      if (!found) return;  // no rank left to send to
    }
  }

 private:
  static constexpr std::size_t look_ahead = 64, whole_tail = 1024;
  bool usable(int peer) const { return drawn_by_[static_cast<std::size_t>(peer)] != origin_; }
  void take(int peer, std::vector<int>& peers) {
    drawn_by_[static_cast<std::size_t>(peer)] = origin_;
    peers.push_back(peer);
  }
  std::vector<int> drawn_by_;  // the origin that last drew each rank
  int origin_ = -1;
};

// Fisher-Yates with a fixed generator: the same order on every machine.
void shuffle_pool(std::vector<int>& pool, std::uint64_t seed) {
  std::mt19937_64 random(seed);
  for (std::size_t i = pool.size(); i > 1; --i) std::swap(pool[i - 1], pool[random() % i]);
}

// `count` block sizes summing to `bytes`, the first `largest` where one is given (>= 0), the rest
// even (the remainder one byte each on the first ones).
std::vector<long long> spread_bytes(long long bytes, long long count, long long largest) {
  std::vector<long long> sizes;
  if (count <= 0) return sizes;
  if (largest >= 0) {
    sizes.push_back(largest);
    bytes -= largest;
    --count;
  }
  for (long long k = 0; k < count; ++k) sizes.push_back(bytes / count + (k < bytes % count ? 1 : 0));
  return sizes;
}

bool uniform_exchange(const std::vector<AlltoallRankSummary>& summaries) {
  const auto p = static_cast<long long>(summaries.size());
  const long long b = summaries.front().own_bytes;
  const AlltoallRankSummary every{b, (p - 1) * b, b > 0 ? p - 1 : 0, 0, 0, b > 0 && p > 1 ? b : 0, 0, 0};
  return std::all_of(summaries.begin(), summaries.end(), [&](const AlltoallRankSummary& s) {
    return s.own_bytes == every.own_bytes && s.sent_bytes == every.sent_bytes && s.destinations == every.destinations &&
           s.largest_bytes == every.largest_bytes;
  });
}

}  // namespace

AlltoallBlocks blocks_from_summaries(const std::vector<AlltoallRankSummary>& summaries,
                                     const std::vector<int>& node_of_rank, long long average_bytes) {
  const int p = static_cast<int>(summaries.size());
  AlltoallBlocks blocks{average_bytes, {}};
  if (p == 0 || node_of_rank.size() != summaries.size()) return blocks;
  if (uniform_exchange(summaries)) return {summaries.front().own_bytes, {}};
  long long block_count = 0;
  for (const AlltoallRankSummary& s : summaries) block_count += s.destinations + (s.own_bytes > 0 ? 1 : 0);
  if (block_count > max_rebuilt_blocks_per_rank * p) return blocks;

  // Every node's ranks (nodes by index: node_of_rank may hold any identifiers), and the receivers'
  // pools: on-node (per node) and off-node.
  std::vector<int> ids = node_of_rank;
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  const auto index_of = [&](int rank) {
    return static_cast<std::size_t>(
        std::lower_bound(ids.begin(), ids.end(), node_of_rank[static_cast<std::size_t>(rank)]) - ids.begin());
  };
  std::vector<std::vector<int>> members(ids.size()), node_pool(ids.size());
  std::vector<int> remote_pool, every_rank(static_cast<std::size_t>(p));
  std::vector<std::size_t> local_index(static_cast<std::size_t>(p));
  std::iota(every_rank.begin(), every_rank.end(), 0);
  for (int rank = 0; rank < p; ++rank) {
    const AlltoallRankSummary& s = summaries[static_cast<std::size_t>(rank)];
    const std::size_t node = index_of(rank);
    local_index[static_cast<std::size_t>(rank)] = members[node].size();
    members[node].push_back(rank);
    node_pool[node].insert(node_pool[node].end(), static_cast<std::size_t>(std::max(0LL, s.node_sources)), rank);
    remote_pool.insert(remote_pool.end(), static_cast<std::size_t>(std::max(0LL, s.sources - s.node_sources)), rank);
  }
  for (std::size_t node = 0; node < node_pool.size(); ++node) shuffle_pool(node_pool[node], 2 * node + 1);
  shuffle_pool(remote_pool, 0);
  std::vector<std::size_t> node_next(node_pool.size(), 0);
  std::size_t remote_next = 0;

  // The origins with most peers draw first, while the pools still hold many different receivers.
  std::vector<int> order(static_cast<std::size_t>(p));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return summaries[static_cast<std::size_t>(a)].destinations > summaries[static_cast<std::size_t>(b)].destinations;
  });
  PeerDraw draw(p);
  blocks.sending.assign(static_cast<std::size_t>(p), {});
  std::vector<int> node_peers, remote_peers;
  for (const int origin : order) {
    const AlltoallRankSummary& s = summaries[static_cast<std::size_t>(origin)];
    const int node = node_of_rank[static_cast<std::size_t>(origin)];
    const std::size_t n = index_of(origin);
    node_peers.clear();
    remote_peers.clear();
    draw.begin_origin(origin);
    draw.draw(
        node_pool[n], node_next[n], s.node_destinations, members[n], local_index[static_cast<std::size_t>(origin)] + 1,
        [](int) { return true; }, node_peers);
    draw.draw(
        remote_pool, remote_next, s.destinations - s.node_destinations, every_rank,
        static_cast<std::size_t>(origin) + 1,
        [&](int peer) { return node_of_rank[static_cast<std::size_t>(peer)] != node; }, remote_peers);
    // The largest block goes with the off-node blocks where it fits there.
    const long long remote_bytes = s.sent_bytes - s.node_sent_bytes;
    const long long remote_count = s.destinations - s.node_destinations;
    const bool largest_remote = remote_count > 0 && s.largest_bytes <= remote_bytes;
    const bool largest_on_node = !largest_remote && s.node_destinations > 0 && s.largest_bytes <= s.node_sent_bytes;
    const std::vector<long long> node_sizes =
        spread_bytes(s.node_sent_bytes, s.node_destinations, largest_on_node ? s.largest_bytes : -1);
    const std::vector<long long> remote_sizes =
        spread_bytes(remote_bytes, remote_count, largest_remote ? s.largest_bytes : -1);
    auto& row = blocks.sending[static_cast<std::size_t>(origin)];
    if (s.own_bytes > 0) row.emplace_back(origin, s.own_bytes);
    for (std::size_t i = 0; i < node_peers.size(); ++i)
      if (node_sizes[i] > 0) row.emplace_back(node_peers[i], node_sizes[i]);
    for (std::size_t i = 0; i < remote_peers.size(); ++i)
      if (remote_sizes[i] > 0) row.emplace_back(remote_peers[i], remote_sizes[i]);
    std::sort(row.begin(), row.end());
  }
  return blocks;
}

}  // namespace collshim::model
