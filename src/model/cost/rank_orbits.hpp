#pragma once
// Which ranks the cost model must cost. Of an algorithm's RankSymmetry (schedule.hpp) it keeps the
// relabelings g that also keep nodes whole (node(r) = node(s) exactly when node(g r) = node(g s)):
// they form a group G, and every rank of an orbit of G has the same clock in every step, so the
// model costs one representative per orbit:
//   rotation: G = shifts by multiples of t (t a multiple of the period that divides p, the smallest
//             that keeps the nodes); the representatives are ranks 0..t-1;
//   digits:   G = additions of multiples of s_j at each digit j not fixed, s_j the smallest divisor
//             of its radix whose addition keeps the nodes; the representatives are the ranks whose
//             digit j is below s_j at every such digit.
// Sequential nodes of n ranks give t = n under rotation (n a power of two under digits of 2),
// round-robin placement t = 1. Without a symmetry, or where none keeps the nodes, every rank.
// Nodes fall into orbits of G too: a count of events at a node (τ's messages) is the count of the
// representatives' events in the node's orbit times |G| / (orbit size).
#include <functional>
#include <vector>

#include "algorithms/engine/schedule.hpp"

namespace collshim::model {

class RankOrbits {
 public:
  // node_of_rank: p entries, nodes numbered 0..M-1. start_us, if given (p entries): the relabelings
  // must also keep every rank's start time (a barrier's exit skew repeats only under some of them).
  // switch_of_rank, if given: they must keep the ranks' network switches whole too (a message across
  // switches takes longer).
  RankOrbits(const RankSymmetry& symmetry, const std::vector<int>& node_of_rank,
             const std::vector<double>& start_us = {}, const std::vector<int>& switch_of_rank = {});

  // none where the declared symmetry does not fit p (then every rank is its own orbit)
  RankSymmetry::Kind kind() const { return kind_; }
  // Orbits are numbered 0..representatives()-1, in the order of their representatives' ranks.
  int representatives() const { return static_cast<int>(ranks_.size()); }
  int representative_rank(int orbit) const { return ranks_[static_cast<std::size_t>(orbit)]; }
  int orbit_of(int rank) const { return orbit_of_[static_cast<std::size_t>(rank)]; }
  bool is_representative(int rank) const { return representative_rank(orbit_of(rank)) == rank; }
  int group_order() const { return p_ / representatives(); }
  // The g in G with g(from) = to, applied to `rank` (from and to in one orbit).
  int relabel(int from, int to, int rank) const { return add(difference(to, from), rank); }
  int node_orbit(int node) const { return node_orbit_[static_cast<std::size_t>(node)]; }
  int node_orbits() const { return static_cast<int>(orbit_size_.size()); }
  // A node's count of some event, from the representatives' count of it in the node's orbit.
  int per_node(int orbit_count, int orbit) const {
    return orbit_count * group_order() / orbit_size_[static_cast<std::size_t>(orbit)];
  }
  double per_node(double orbit_amount, int orbit) const {
    return orbit_amount * group_order() / orbit_size_[static_cast<std::size_t>(orbit)];
  }

 private:
  int add(int x, int rank) const;          // the relabeling g_x
  int difference(int to, int from) const;  // x with g_x(from) = to
  // Whether g_x maps nodes onto nodes one to one (and switches onto switches), and every rank to one
  // that starts when it does.
  bool keeps(int x, const std::vector<int>& node_of_rank, const std::vector<double>& start_us,
             const std::vector<int>& switch_of_rank) const;
  // Whether the relabeling maps the classes of `class_of_rank` onto classes one to one.
  bool keeps_classes(const std::function<int(int)>& image, const std::vector<int>& class_of_rank) const;
  // g_x for a generator x (a rotation's shift, or a multiple of one digit's place below the next).
  std::function<int(int)> generator(int x) const;

  RankSymmetry::Kind kind_ = RankSymmetry::Kind::none;
  int p_ = 1;
  std::vector<int> radices_, places_;  // digits: radix and place value, least significant first
  std::vector<int> steps_;             // digits: G adds multiples of this there (0: nothing)
  bool power_of_two_radices_ = true;   // digits: every radix a power of two (add() by masks)
  std::vector<int> ranks_;             // orbit -> its representative
  std::vector<int> orbit_of_;          // rank -> orbit
  std::vector<int> node_orbit_;        // node -> orbit 0..K-1
  std::vector<int> orbit_size_;        // nodes per orbit
};

}  // namespace collshim::model
