// Grid routing without MPI: for every p up to 130 and the 2D, 3D, 4D and hypercube shapes (plus some
// hand-picked ones), every (source, destination) path must stay on ranks (never a hole), move only
// inside the group of the current phase, fix one more coordinate per phase, take at most k hops and
// end at the destination.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <string>

#include "algorithms/alltoall/grid_routing.hpp"

namespace collshim {
namespace {

std::string describe(int p, const std::vector<int>& dims) {
  std::string text = "p=" + std::to_string(p) + " dims=";
  for (int d : dims) text += std::to_string(d) + "x";
  return text;
}

long long product(const std::vector<int>& dims) {
  return std::accumulate(dims.begin(), dims.end(), 1LL, std::multiplies<>());
}

// The shapes the algorithm uses for p, plus fixed shapes that fit p (non-ascending ones included:
// the routing must not depend on the shape search's ordering).
std::vector<std::vector<int>> shapes_for(int p) {
  std::vector<std::vector<int>> shapes = {grid_shape(p, {2, false}), grid_shape(p, {3, false}),
                                          grid_shape(p, {4, false}), grid_shape(p, {0, true})};
  for (std::vector<int> fixed : {std::vector<int>{16, 9}, {3, 50}, {130}, {5, 2, 14}, {2, 3, 4, 2}}) {
    if (product(fixed) >= p) shapes.push_back(fixed);
  }
  return shapes;
}

void check_routing(int p, const std::vector<int>& dims) {
  SCOPED_TRACE(describe(p, dims));
  const GridRouting routing(p, dims);
  const int k = routing.phases();
  ASSERT_EQ(routing.box(), product(dims));
  ASSERT_GE(routing.box(), p);

  // Coordinates: inside the box, one rank per position, box - p holes.
  std::vector<std::vector<int>> coords(p);
  std::map<std::vector<int>, int> occupied;
  for (int r = 0; r < p; ++r) {
    coords[r] = routing.coordinates(r);
    ASSERT_EQ(static_cast<int>(coords[r].size()), k);
    for (int j = 0; j < k; ++j) {
      ASSERT_GE(coords[r][j], 0);
      ASSERT_LT(coords[r][j], dims[j]);
    }
    ASSERT_EQ(routing.rank_at(coords[r]), r);
    ASSERT_TRUE(occupied.emplace(coords[r], r).second) << "two ranks at one position";
  }
  if (routing.box() <= 4096) {
    long long holes = 0;
    std::vector<int> position(k, 0);
    for (long long i = 0; i < routing.box(); ++i) {
      long long rest = i;
      for (int j = k - 1; j >= 0; --j) position[j] = static_cast<int>(rest % dims[j]), rest /= dims[j];
      if (routing.rank_at(position) < 0) ++holes;
    }
    EXPECT_EQ(holes, routing.holes());
  }

  // Groups: a partition of each depth-j block; every member sees the same group.
  std::vector<std::vector<GridPhase>> plans(k);
  for (int j = 0; j < k; ++j) {
    for (int r = 0; r < p; ++r) plans[j].push_back(routing.phase(j, r));
    for (int r = 0; r < p; ++r) {
      const GridPhase& plan = plans[j][r];
      ASSERT_TRUE(std::is_sorted(plan.members.begin(), plan.members.end()));
      ASSERT_EQ(plan.members.at(plan.my_index), r);
      const int d = static_cast<int>(plan.members.size());
      // Guests add at most one member per long sub-block sharing the line.
      EXPECT_LE(d, dims[j] + (dims[j] - 1 + plan.part_size - 1) / plan.part_size);
      if (routing.holes() == 0) EXPECT_EQ(d, dims[j]) << "full grids have lines of exactly d_j";
      for (int member : plan.members) {
        ASSERT_EQ(plans[j][member].members, plan.members) << "rank " << r << " phase " << j;
      }
    }
  }

  // Paths.
  for (int s = 0; s < p; ++s) {
    for (int t = 0; t < p; ++t) {
      int at = s;
      int hops = 0;
      for (int j = 0; j < k; ++j) {
        const int next = routing.next_hop(j, at, t);
        ASSERT_GE(next, 0) << s << "->" << t << " phase " << j << " at " << at;
        ASSERT_LT(next, p);
        ASSERT_EQ(routing.rank_at(coords[next]), next) << "visits a hole";
        const GridPhase& plan = plans[j][at];
        ASSERT_TRUE(std::binary_search(plan.members.begin(), plan.members.end(), next))
            << s << "->" << t << " phase " << j << ": " << at << " -> " << next << " leaves the group";
        ASSERT_EQ(plan.members[plan.next_index(t)], next) << "the plan disagrees with next_hop";
        for (int i = 0; i <= j; ++i) ASSERT_EQ(coords[next][i], coords[t][i]) << s << "->" << t << " phase " << j;
        if (next != at) ++hops;
        at = next;
      }
      ASSERT_EQ(at, t) << s << "->" << t;
      ASSERT_LE(hops, k);
    }
  }
}

TEST(GridRouting, EveryPathEndsAtItsDestinationWithinKHopsAvoidingHoles) {
  for (int p = 1; p <= 130; ++p) {
    for (const std::vector<int>& dims : shapes_for(p)) {
      check_routing(p, dims);
      if (HasFatalFailure()) return;
    }
  }
}

TEST(GridRouting, FullGridsUseTheClassicCoordinates) {
  for (const std::vector<int>& dims : {std::vector<int>{4, 4}, {2, 6}, {3, 3, 3}, {2, 2, 2, 2}, {5, 1, 3}}) {
    const int p = static_cast<int>(product(dims));
    const GridRouting routing(p, dims);
    EXPECT_EQ(routing.holes(), 0);
    for (int r = 0; r < p; ++r) {
      int stride = p;
      for (int j = 0; j < routing.phases(); ++j) {
        stride /= dims[j];
        EXPECT_EQ(routing.coordinates(r)[j], r / stride % dims[j]) << describe(p, dims) << " rank " << r;
      }
    }
  }
  // 2D 4x4: the item for t goes first to t's row in the source's column: (t / 4) * 4 + s % 4.
  const GridRouting grid(16, {4, 4});
  for (int s = 0; s < 16; ++s) {
    for (int t = 0; t < 16; ++t) EXPECT_EQ(grid.next_hop(0, s, t), t / 4 * 4 + s % 4);
  }
  // Hypercube: phase j pairs r with r xor 2^(k-1-j), highest bit first.
  const GridRouting cube(8, {2, 2, 2});
  for (int r = 0; r < 8; ++r) {
    for (int j = 0; j < 3; ++j)
      EXPECT_EQ(cube.phase(j, r).members, (std::vector<int>{std::min(r, r ^ (4 >> j)), std::max(r, r ^ (4 >> j))}));
  }
}

TEST(GridRouting, HolesAreRoutedAroundAsDocumented) {
  // p = 7, 2D: 2 x 4 with one hole at (1,3); rank 3's column has no row-1 rank, so it joins column 0.
  const GridRouting seven(7, grid_shape(7, {2, false}));
  EXPECT_EQ(seven.dims(), (std::vector<int>{2, 4}));
  EXPECT_EQ(seven.holes(), 1);
  const int hole[2] = {1, 3};
  EXPECT_EQ(seven.rank_at(hole), -1);
  EXPECT_EQ(seven.phase(0, 3).members, (std::vector<int>{0, 3, 4}));
  EXPECT_EQ(seven.phase(0, 5).members, (std::vector<int>{1, 5}));
  EXPECT_EQ(seven.phase(1, 5).members, (std::vector<int>{4, 5, 6}));
  EXPECT_EQ(seven.next_hop(0, 3, 6), 4);
  EXPECT_EQ(seven.next_hop(1, 4, 6), 6);
  EXPECT_EQ(seven.next_hop(0, 6, 3), 2);
  // p = 14, 2D: 3 x 5, rows of 5, 5, 4; ranks 4 and 9 sit on the column through the hole (2,4).
  const GridRouting fourteen(14, grid_shape(14, {2, false}));
  EXPECT_EQ(fourteen.dims(), (std::vector<int>{3, 5}));
  EXPECT_EQ(fourteen.phase(0, 4).members, (std::vector<int>{0, 4, 5, 10}));
  EXPECT_EQ(fourteen.phase(0, 9).members, (std::vector<int>{1, 6, 9, 11}));
  EXPECT_EQ(fourteen.phase(0, 13).members, (std::vector<int>{3, 8, 13}));
  EXPECT_EQ(fourteen.phase(1, 12).members, (std::vector<int>{10, 11, 12, 13}));
}

TEST(GridShape, MinimisesStartupsThenHoles) {
  EXPECT_EQ(grid_shape(1, {2, false}), (std::vector<int>{1, 1}));
  EXPECT_EQ(grid_shape(2, {3, false}), (std::vector<int>{1, 1, 2}));
  EXPECT_EQ(grid_shape(16, {2, false}), (std::vector<int>{4, 4}));
  EXPECT_EQ(grid_shape(24, {2, false}), (std::vector<int>{4, 6}));  // 5 x 5 has the same sum but a hole
  EXPECT_EQ(grid_shape(27, {3, false}), (std::vector<int>{3, 3, 3}));
  EXPECT_EQ(grid_shape(1, {0, true}), std::vector<int>{});
  EXPECT_EQ(grid_shape(7, {0, true}), (std::vector<int>{2, 2, 2}));
  EXPECT_EQ(grid_shape(64, {0, true}), std::vector<int>(6, 2));
  EXPECT_EQ(grid_shape(65, {0, true}), std::vector<int>(7, 2));
  // Against brute force over every 2D and 3D shape.
  for (int p = 1; p <= 130; ++p) {
    long long best2 = 1 << 30, best3 = 1 << 30;
    for (int a = 1; a <= p; ++a) {
      for (int b = 1; b <= p; ++b) {
        if (static_cast<long long>(a) * b >= p) best2 = std::min<long long>(best2, a + b);
        for (int c = 1; c <= p && a + b + c < best3; ++c) {
          if (static_cast<long long>(a) * b * c >= p) best3 = a + b + c;
        }
      }
    }
    for (int k : {2, 3}) {
      const auto shape = grid_shape(p, {k, false});
      ASSERT_EQ(static_cast<int>(shape.size()), k);
      EXPECT_TRUE(std::is_sorted(shape.begin(), shape.end())) << p;
      EXPECT_GE(product(shape), p);
      EXPECT_EQ(std::accumulate(shape.begin(), shape.end(), 0LL), k == 2 ? best2 : best3) << "p=" << p << " k=" << k;
    }
  }
  // Large p stays fast and valid.
  for (int k = 2; k <= grid_max_dims; ++k) EXPECT_GE(product(grid_shape(1 << 20, {k, false})), 1 << 20) << k;
}

TEST(GridShape, ParsesTheDimsParameter) {
  EXPECT_EQ(parse_grid_dims("2")->count, 2);
  EXPECT_EQ(parse_grid_dims("16")->count, 16);
  EXPECT_TRUE(parse_grid_dims("hypercube")->hypercube);
  for (const char* bad : {"1", "0", "17", "-2", "2x", "", "Hypercube", "cube"})
    EXPECT_FALSE(parse_grid_dims(bad)) << bad;
}

}  // namespace
}  // namespace collshim
