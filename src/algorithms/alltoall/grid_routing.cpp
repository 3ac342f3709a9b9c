#include "algorithms/alltoall/grid_routing.hpp"

#include <algorithm>
#include <charconv>
#include <limits>

namespace collshim {
namespace {

constexpr long long saturated = std::numeric_limits<long long>::max() / 4;

long long saturating_multiply(long long a, long long b) { return (b != 0 && a > saturated / b) ? saturated : a * b; }

long long ceil_div(long long a, long long b) { return (a + b - 1) / b; }

// Depth-first search over ascending side sequences; the bound prunes any branch whose remaining sides
// (each at least the current one) cannot beat the best sum found so far.
struct ShapeSearch {
  long long p;
  int k;
  long long best_sum;
  long long best_holes;
  std::vector<int> best;
  std::vector<int> current;

  void consider(long long sum, long long product) {
    const long long holes = product - p;
    if (sum < best_sum || (sum == best_sum && holes < best_holes)) {
      best_sum = sum;
      best_holes = holes;
      best = current;
    }
  }

  void run(int j, long long product, long long sum, int min_side) {
    const int remaining = k - j;
    if (remaining == 1) {
      const long long last = std::max<long long>(min_side, ceil_div(p, product));
      current[j] = static_cast<int>(last);
      consider(sum + last, saturating_multiply(product, last));
      return;
    }
    for (int side = min_side; sum + static_cast<long long>(remaining) * side <= best_sum; ++side) {
      current[j] = side;
      run(j + 1, saturating_multiply(product, side), sum + side, side);
    }
  }
};

}  // namespace

std::optional<GridDims> parse_grid_dims(std::string_view text) {
  if (text == "hypercube") return GridDims{0, true};
  int count = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), count);
  if (error != std::errc{} || end != text.data() + text.size() || count < 2 || count > grid_max_dims) {
    return std::nullopt;
  }
  return GridDims{count, false};
}

std::vector<int> grid_shape(int p, const GridDims& dims) {
  if (dims.hypercube) {
    int k = 0;
    while ((1LL << k) < p) ++k;
    return std::vector<int>(static_cast<std::size_t>(k), 2);
  }
  const int k = dims.count;
  // Start from the equal shape a^k >= p, which is always valid.
  int a = 1;
  auto power = [k](long long side) {
    long long product = 1;
    for (int i = 0; i < k; ++i) product = saturating_multiply(product, side);
    return product;
  };
  while (power(a) < p) ++a;
  ShapeSearch search{p,
                     k,
                     static_cast<long long>(k) * a,
                     power(a) - p,
                     std::vector<int>(static_cast<std::size_t>(k), a),
                     std::vector<int>(static_cast<std::size_t>(k), 1)};
  search.run(0, 1, 0, 1);
  return search.best;
}

int GridPhase::part_of(int rank) const {
  const int offset = rank - block_begin;
  const int long_span = long_parts * (part_size + 1);
  return offset < long_span ? offset / (part_size + 1) : long_parts + (offset - long_span) / part_size;
}

int GridRouting::Cut::part_of(int offset) const {
  const int long_span = long_parts * (q + 1);
  return offset < long_span ? offset / (q + 1) : long_parts + (offset - long_span) / q;
}

GridRouting::GridRouting(int p, std::vector<int> dims) : p_(p), dims_(std::move(dims)) {
  capacity_.assign(dims_.size() + 1, 1);
  for (int j = static_cast<int>(dims_.size()) - 1; j >= 0; --j) {
    capacity_[j] = saturating_multiply(capacity_[j + 1], dims_[j]);
  }
}

GridRouting::Cut GridRouting::cut(int depth, int block_size) const {
  const int parts = static_cast<int>(ceil_div(block_size, capacity_[depth + 1]));
  return {parts, block_size / parts, block_size % parts};
}

GridRouting::Block GridRouting::block(int depth, int rank) const {
  Block b{0, p_};
  for (int j = 0; j < depth; ++j) {
    const Cut c = cut(j, b.size);
    const int part = c.part_of(rank - b.begin);
    b = {b.begin + c.begin(part), c.size(part)};
  }
  return b;
}

int GridRouting::line(const Cut& c, int part, int index) const {
  // index == q only in a long sub-block: that line crosses holes, so the rank is a guest of line part mod q.
  return index < c.q ? index : part % c.q;
}

std::vector<int> GridRouting::coordinates(int rank) const {
  std::vector<int> coords;
  Block b{0, p_};
  for (int j = 0; j < phases(); ++j) {
    const Cut c = cut(j, b.size);
    const int part = c.part_of(rank - b.begin);
    coords.push_back(part);
    b = {b.begin + c.begin(part), c.size(part)};
  }
  return coords;
}

int GridRouting::rank_at(std::span<const int> coordinates) const {
  if (static_cast<int>(coordinates.size()) != phases()) return -1;
  Block b{0, p_};
  for (int j = 0; j < phases(); ++j) {
    const Cut c = cut(j, b.size);
    if (coordinates[j] < 0 || coordinates[j] >= c.parts) return -1;
    b = {b.begin + c.begin(coordinates[j]), c.size(coordinates[j])};
  }
  return b.size == 1 ? b.begin : -1;
}

int GridRouting::next_hop(int phase, int current, int destination) const {
  const Block b = block(phase, current);
  if (destination < b.begin || destination >= b.begin + b.size) return -1;
  const Cut c = cut(phase, b.size);
  const int part = c.part_of(current - b.begin);
  const int target_part = c.part_of(destination - b.begin);
  if (part == target_part) return current;
  const int index = current - b.begin - c.begin(part);
  return b.begin + c.begin(target_part) + line(c, part, index);
}

GridPhase GridRouting::phase(int phase, int rank) const {
  const Block b = block(phase, rank);
  const Cut c = cut(phase, b.size);
  const int part = c.part_of(rank - b.begin);
  const int g = line(c, part, rank - b.begin - c.begin(part));
  GridPhase result;
  result.block_begin = b.begin;
  result.block_size = b.size;
  result.parts = c.parts;
  result.part_size = c.q;
  result.long_parts = c.long_parts;
  for (int other = 0; other < c.parts; ++other) result.members.push_back(b.begin + c.begin(other) + g);
  for (int guest = g; guest < c.long_parts; guest += c.q) result.members.push_back(b.begin + c.begin(guest) + c.q);
  std::sort(result.members.begin(), result.members.end());
  const auto index_of = [&](int member) {
    return static_cast<int>(std::lower_bound(result.members.begin(), result.members.end(), member) -
                            result.members.begin());
  };
  result.my_index = index_of(rank);
  for (int other = 0; other < c.parts; ++other) {
    result.next_by_part.push_back(other == part ? result.my_index : index_of(b.begin + c.begin(other) + g));
  }
  return result;
}

}  // namespace collshim
