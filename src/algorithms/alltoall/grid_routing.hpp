#pragma once
// Routing of the grid Alltoallv (the grid indirection of Peters, "Exploring Aggregation Techniques
// for Irregular All-To-All Communication", 2024): pure functions of (p, shape), no MPI.
//
// Shape. The ranks are laid out in a d_0 x ... x d_{k-1} box (k phases, prod d_j >= p). Dimension 0
// has the largest rank stride and the last dimension holds consecutive ranks, as in the paper: the
// late, heavy phases run between nearby ranks. The box is filled by nested balanced splitting: the
// depth-j block holding a rank (all ranks sharing its coordinates 0..j-1; depth 0 is every rank) is
// cut into ceil(n / capacity_{j+1}) consecutive sub-blocks whose sizes differ by at most one
// (capacity_j = prod_{i>=j} d_i). A rank's coordinate j is the index of its sub-block at depth j.
// When p = prod d_j every cut is exact and this is the classic grid: coord_j(r) = r / stride_j mod d_j.
//
// Holes. Otherwise the box has prod d_j - p empty positions. They sit at the ends of the short
// blocks, so they are spread over the box (sub-block sizes never differ by more than one) instead of
// piled into one partial top layer, which keeps most lines of every dimension complete.
//
// Phases. Phase j runs inside a depth-j block B cut into sub-blocks of q or q+1 ranks. Line i < q
// (the phase-j group, one communicator) is the i-th rank of every sub-block, d_j or fewer ranks. An
// item held by x (line g) for a destination t in sub-block b moves to the rank at index g of b: same
// coordinates as x except coordinate j, which becomes t's. After phase j the item is in t's
// depth-(j+1) block; after phase k-1 it is at t. So the path has at most k hops.
//
// Routing around holes. The rank at index q of a long sub-block a is on a line that crosses a hole
// in every short sub-block, so a destination there would have no hop. That rank therefore joins line
// a mod q, which is complete; an item it holds for sub-block b goes to index a mod q of b, which
// exists in every sub-block. A line then has at most one such guest per long sub-block, i.e. groups
// have up to d_j + ceil((d_j - 1) / q) members instead of d_j: a few more start-ups for those ranks,
// never a longer path.
//
// Example p = 7, dims = 2: shape 2 x 4 (one hole at (1,3)); rows {0,1,2,3} {4,5,6}; columns
// {0,4} {1,5} {2,6}, and rank 3, whose column has no row-1 member, joins column 0: {0,3,4}.
// 3 -> 6 goes 3 -> 4 (phase 0) -> 6 (phase 1); 6 -> 3 goes 6 -> 2 -> 3.
// p = 14, dims = 2: shape 3 x 5, rows {0..4} {5..9} {10..13} (hole at (2,4)); columns {0,5,10} ...
// {3,8,13}; ranks 4 and 9 sit on the column through the hole and join columns 0 and 1:
// {0,4,5,10} and {1,6,9,11}. Start-ups per rank: 5 to 7 instead of 13.
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace collshim {

// The `dims` parameter of `grid`: a number of dimensions, or a hypercube (all sides 2).
struct GridDims {
  int count = 2;
  bool hypercube = false;
};
inline constexpr int grid_max_dims = 16;
std::optional<GridDims> parse_grid_dims(std::string_view text);  // "2".."16" or "hypercube"

// The shape for p ranks. A number of dimensions k gives k sides in ascending order (largest last) that
// minimise the start-ups sum(d_j - 1) subject to prod d_j >= p, then the number of holes; sides of 1
// are phases without traffic. A hypercube has ceil(log2 p) sides of 2.
std::vector<int> grid_shape(int p, const GridDims& dims);

// What one rank needs to run one phase: its group (the phase-j communicator) and the next hop of
// every destination that can still be routed through it.
struct GridPhase {
  int block_begin = 0;  // the depth-j block holding this rank: [block_begin, block_begin + block_size)
  int block_size = 1;
  int parts = 1;      // sub-blocks of that block
  int part_size = 1;  // q: the short sub-block size; the first `long_parts` have q + 1 ranks
  int long_parts = 0;
  std::vector<int> members;       // the group, ascending ranks, including this rank
  int my_index = 0;               // this rank's position in `members` (its rank in the communicator)
  std::vector<int> next_by_part;  // per sub-block: index in `members` of the hop for destinations there

  int part_of(int rank) const;  // sub-block of a rank of this block
  int part_begin(int part) const { return block_begin + part * part_size + (part < long_parts ? part : long_parts); }
  int part_length(int part) const { return part_size + (part < long_parts ? 1 : 0); }
  // Index in `members` of the next hop of an item for `destination` (a rank of this block).
  int next_index(int destination) const { return next_by_part[part_of(destination)]; }
};

class GridRouting {
 public:
  GridRouting(int p, std::vector<int> dims);  // requires 1 <= p <= prod dims, every side >= 1

  int size() const { return p_; }
  int phases() const { return static_cast<int>(dims_.size()); }
  const std::vector<int>& dims() const { return dims_; }
  long long box() const { return capacity_.front(); }  // prod d_j
  long long holes() const { return box() - p_; }

  // Coordinate j is the sub-block index at depth j; coordinate j < dims[j].
  std::vector<int> coordinates(int rank) const;
  // The rank at `coordinates`, or -1 for a hole (or coordinates outside the box).
  int rank_at(std::span<const int> coordinates) const;

  // Where an item for `destination` held by `current` is after `phase`. Requires the item to be where
  // the routing puts it: current and destination share coordinates 0..phase-1. Returns -1 otherwise.
  int next_hop(int phase, int current, int destination) const;
  // The phase-`phase` group of `rank` and its next hops.
  GridPhase phase(int phase, int rank) const;

 private:
  struct Block {
    int begin;
    int size;
  };
  struct Cut {
    int parts, q, long_parts;
    int begin(int part) const { return part * q + (part < long_parts ? part : long_parts); }
    int size(int part) const { return q + (part < long_parts ? 1 : 0); }
    int part_of(int offset) const;
  };
  Cut cut(int depth, int block_size) const;
  Block block(int depth, int rank) const;               // the depth-`depth` block holding rank
  int line(const Cut& cut, int part, int index) const;  // the group of the rank at (part, index)

  int p_;
  std::vector<int> dims_;
  std::vector<long long> capacity_;  // capacity_[j] = prod_{i>=j} dims[i], capacity_[k] = 1
};

}  // namespace collshim
