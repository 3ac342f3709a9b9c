#include "model/cost/rank_orbits.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <numeric>

namespace collshim::model {

RankOrbits::RankOrbits(const RankSymmetry& symmetry, const std::vector<int>& node_of_rank,
                       const std::vector<double>& start_us, const std::vector<int>& switch_of_rank)
    : p_(std::max(1, static_cast<int>(node_of_rank.size()))) {
  const int nodes = node_of_rank.empty() ? 0 : *std::max_element(node_of_rank.begin(), node_of_rank.end()) + 1;
  // The generators of G: G is what they generate, and it keeps the nodes if each of them does.
  std::vector<int> generators;
  int period = p_;  // rotation: G's shifts are the multiples of this
  if (symmetry.kind == RankSymmetry::Kind::rotation && symmetry.period > 0 && p_ % symmetry.period == 0) {
    kind_ = symmetry.kind;  // no shift until one keeps the nodes
    for (int t = symmetry.period; t < p_; t += symmetry.period) {
      if (p_ % t == 0 && keeps(t, node_of_rank, start_us, switch_of_rank)) {
        period = t;
        generators = {t};
        break;
      }
    }
  } else if (symmetry.kind == RankSymmetry::Kind::digits) {
    long long product = 1;
    for (const int radix : symmetry.radices) product *= radix;
    if (product == p_ && std::all_of(symmetry.radices.begin(), symmetry.radices.end(), [](int r) { return r >= 2; })) {
      kind_ = symmetry.kind;
      radices_ = symmetry.radices;
      for (int place = 1; const int radix : radices_) places_.push_back(place), place *= radix;
      // Digit-wise addition with masks where every radix is a power of two (recursive doubling's 2s).
      for (const int radix : radices_) power_of_two_radices_ = power_of_two_radices_ && (radix & (radix - 1)) == 0;
      // Adding s at digit j generates the additions of multiples of s there: per digit not fixed,
      // the smallest s (a divisor of its radix, a multiple of the declared stride) that keeps the
      // nodes (a row of a grid keeps nodes of 16 ranks when shifted by 16, not by 1).
      steps_.assign(radices_.size(), 0);
      for (std::size_t j = 0; j < places_.size(); ++j) {
        if (symmetry.fixes(j)) continue;
        for (int s = symmetry.stride(j); s < radices_[j] && steps_[j] == 0; s += symmetry.stride(j)) {
          if (radices_[j] % s == 0 && keeps(s * places_[j], node_of_rank, start_us, switch_of_rank)) {
            steps_[j] = s;
            generators.push_back(s * places_[j]);
          }
        }
      }
    }
  }

  // Orbits: a rotation's are the residues mod its period; under digits a rank's representative has
  // each generating digit reduced mod its step (it is no larger, so it is numbered first).
  orbit_of_.resize(static_cast<std::size_t>(p_));
  // Where every radix and step is a power of two, reducing the digits is masking their high bits.
  unsigned kept_bits = ~0u;
  for (std::size_t j = 0; kind_ == RankSymmetry::Kind::digits && power_of_two_radices_ && j < places_.size(); ++j)
    if (steps_[j] > 0)
      kept_bits &= ~((static_cast<unsigned>(radices_[j] - 1) & ~static_cast<unsigned>(steps_[j] - 1))
                     << std::countr_zero(static_cast<unsigned>(places_[j])));
  for (int rank = 0; rank < p_; ++rank) {
    int representative = rank;
    if (kind_ == RankSymmetry::Kind::rotation) representative = rank % period;
    if (kind_ == RankSymmetry::Kind::digits && power_of_two_radices_) {
      representative = static_cast<int>(static_cast<unsigned>(rank) & kept_bits);
    } else {
      for (std::size_t j = 0; kind_ == RankSymmetry::Kind::digits && j < places_.size(); ++j) {
        if (steps_[j] == 0) continue;
        const int digit = rank / places_[j] % radices_[j];
        representative -= (digit - digit % steps_[j]) * places_[j];
      }
    }
    if (representative == rank) {
      orbit_of_[static_cast<std::size_t>(rank)] = static_cast<int>(ranks_.size());
      ranks_.push_back(rank);
    } else {
      orbit_of_[static_cast<std::size_t>(rank)] = orbit_of_[static_cast<std::size_t>(representative)];
    }
  }

  // Node orbits: the nodes each generator's relabeling joins (union-find).
  std::vector<int> parent(static_cast<std::size_t>(nodes));
  std::iota(parent.begin(), parent.end(), 0);
  const auto root = [&parent](int node) {
    while (parent[node] != node) node = parent[node] = parent[parent[node]];
    return node;
  };
  for (const int x : generators) {
    const auto image = generator(x);
    for (int r = 0; r < p_; ++r) parent[root(node_of_rank[r])] = root(node_of_rank[image(r)]);
  }
  std::vector<int> orbit_of_root(static_cast<std::size_t>(nodes), -1);
  node_orbit_.resize(static_cast<std::size_t>(nodes));
  for (int node = 0; node < nodes; ++node) {
    int& orbit = orbit_of_root[root(node)];
    if (orbit < 0) orbit = static_cast<int>(orbit_size_.size()), orbit_size_.push_back(0);
    node_orbit_[node] = orbit;
    ++orbit_size_[orbit];
  }
}

int RankOrbits::add(int x, int rank) const {
  if (kind_ == RankSymmetry::Kind::rotation) return (rank + x) % p_;
  if (kind_ == RankSymmetry::Kind::none) return rank;
  if (power_of_two_radices_) {  // place i is 2^shift, the digit's mask radix - 1: no division
    int result = 0;
    for (std::size_t i = 0; i < radices_.size(); ++i) {
      const int shift = std::countr_zero(static_cast<unsigned>(places_[i])), mask = radices_[i] - 1;
      result |= (((rank >> shift) + (x >> shift)) & mask) << shift;
    }
    return result;
  }
  int result = 0;
  for (std::size_t i = 0; i < radices_.size(); ++i)
    result += (rank / places_[i] % radices_[i] + x / places_[i] % radices_[i]) % radices_[i] * places_[i];
  return result;
}

int RankOrbits::difference(int to, int from) const {
  if (kind_ == RankSymmetry::Kind::rotation) return (to - from + p_) % p_;
  if (kind_ == RankSymmetry::Kind::none) return 0;
  if (power_of_two_radices_) {
    int result = 0;
    for (std::size_t i = 0; i < radices_.size(); ++i) {
      const int shift = std::countr_zero(static_cast<unsigned>(places_[i])), mask = radices_[i] - 1;
      result |= (((to >> shift) - (from >> shift)) & mask) << shift;
    }
    return result;
  }
  int result = 0;
  for (std::size_t i = 0; i < radices_.size(); ++i)
    result +=
        (to / places_[i] % radices_[i] - from / places_[i] % radices_[i] + radices_[i]) % radices_[i] * places_[i];
  return result;
}

std::function<int(int)> RankOrbits::generator(int x) const {
  if (kind_ != RankSymmetry::Kind::digits) return [this, x](int rank) { return add(x, rank); };
  // A generator adds s at one digit j: only that digit changes, in constant time per rank.
  std::size_t j = 0;
  while (j + 1 < places_.size() && x >= places_[j + 1]) ++j;
  const int place = places_[j], radix = radices_[j], s = x / place;
  return [place, radix, s](int rank) {
    const int digit = rank / place % radix;
    return rank + ((digit + s) % radix - digit) * place;
  };
}

bool RankOrbits::keeps(int x, const std::vector<int>& node_of_rank, const std::vector<double>& start_us,
                       const std::vector<int>& switch_of_rank) const {
  const auto image = generator(x);
  for (int r = 0; r < p_ && !start_us.empty(); ++r) {
    const double mine = start_us[r], theirs = start_us[image(r)];
    if (std::abs(mine - theirs) > 1e-9 * std::max(1.0, std::abs(mine))) return false;
  }
  return keeps_classes(image, node_of_rank) && (switch_of_rank.empty() || keeps_classes(image, switch_of_rank));
}

bool RankOrbits::keeps_classes(const std::function<int(int)>& image_of, const std::vector<int>& class_of_rank) const {
  const int classes = *std::max_element(class_of_rank.begin(), class_of_rank.end()) + 1;
  std::vector<int> image(static_cast<std::size_t>(classes), -1);
  for (int r = 0; r < p_; ++r) {
    int& target = image[class_of_rank[r]];
    const int mapped = class_of_rank[image_of(r)];
    if (target >= 0 && target != mapped) return false;
    target = mapped;
  }
  std::sort(image.begin(), image.end());
  return std::adjacent_find(image.begin(), image.end()) == image.end();
}

}  // namespace collshim::model
