#pragma once
// Where the blocks a schedule names are, for one call: the engine's view of the user's buffers.
#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <climits>
#include <optional>
#include <vector>

#include "algorithms/engine/collective_call.hpp"
#include "algorithms/engine/local_copy.hpp"
#include "algorithms/engine/schedule.hpp"

namespace collshim {

// What a block index means, per collective family (schedule.hpp). Every (rank, buffer, block) holds
// one datum: datum_of() names it, so the checker can tell whether the right data arrived.
enum class BlockNaming : std::uint8_t {
  allgather,  // block b is rank b's contribution, in every buffer
  alltoall,   // send block d = datum rank*p+d, recv block o = datum o*p+rank, scratch block = datum
  reduction,  // block b of send, recv and temp (copy c: c*p+b) is segment b of the vector: datum b
  gather,     // block b is rank b's block, in every buffer; the root's recv holds all, rank b's send block b
  scatter,    // block b is rank b's block, in every buffer; the root's send holds all, rank b's recv block b
};

inline bool is_rooted(BlockNaming naming) { return naming == BlockNaming::gather || naming == BlockNaming::scatter; }

// The datum that block `block` of `buffer` holds on `rank` when the collective is done (recv), at
// its start (send), or whenever it holds anything (scratch, shared).
std::int64_t datum_of(BlockNaming naming, int p, int rank, Buffer buffer, std::int64_t block);
// How many of blocks block, block + 1, ..., block + count - 1 (from the first on) hold consecutive
// datums on any rank: a run of blocks then carries a run of data, whose bytes can be summed at once.
std::int64_t consecutive_datums(BlockNaming naming, int p, Buffer buffer, std::int64_t block, std::int64_t count);

// Whether `rank` knows the bytes of scratch block `block` without being told: its own send or
// receive data (for the allgathers, every rank holds every count; for Gatherv and Scatterv the root
// holds every count, the others their own). Otherwise the block's size travels with it, in a header
// in front of the message.
bool knows_scratch_bytes(BlockNaming naming, int p, int root, int rank, std::int64_t block);

// One of the user's buffers as blocks of one datatype.
struct TypedBuffer {
  char* base = nullptr;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  MPI_Aint extent = 0;
  const int* counts = nullptr;  // per block; null: every block has uniform_count elements
  const int* displs = nullptr;  // per block, in extents; null: block * uniform_count
  int uniform_count = 0;
  std::int64_t only_block = -1;  // >= 0: the buffer holds just this block, at displacement 0
  // Several copies of the same layout (Buffer::temp): block c*blocks_per_copy+b is block b of copy
  // c, which starts copy_displacement extents after copy c-1. 0: one copy.
  std::int64_t blocks_per_copy = 0;
  MPI_Aint copy_displacement = 0;

  int count(std::int64_t block) const {
    if (blocks_per_copy > 0) block %= blocks_per_copy;
    return counts ? counts[block] : uniform_count;
  }
  MPI_Aint displacement(std::int64_t block) const {
    if (only_block >= 0) return 0;
    MPI_Aint copy_start = 0;
    if (blocks_per_copy > 0) {
      copy_start = static_cast<MPI_Aint>(block / blocks_per_copy) * copy_displacement;
      block %= blocks_per_copy;
    }
    return copy_start + (displs ? static_cast<MPI_Aint>(displs[block]) : static_cast<MPI_Aint>(block) * uniform_count);
  }
  char* address(std::int64_t block) const { return base + displacement(block) * extent; }
  long long bytes(std::int64_t block) const { return count(block) * element_bytes(); }
  // Bytes of one element (MPI_Type_size_x), asked of MPI on first use only: most calls never need it.
  long long element_bytes() const {
    if (element_bytes_ < 0) element_bytes_ = type_size(type);
    return element_bytes_;
  }
  mutable long long element_bytes_ = -1;
};

// Packed bytes that an opaque phase provides (Buffer::shared): block b at base + offsets[b].
struct PackedBuffer {
  std::byte* base = nullptr;
  const int* offsets = nullptr;
  const int* bytes = nullptr;
};

struct CallLayout {
  BlockNaming naming = BlockNaming::allgather;
  int p = 1;
  int rank = 0;
  int root = 0;  // of a rooted collective (Gatherv, Scatterv)
  TypedBuffer send;
  TypedBuffer recv;
  TypedBuffer temp;  // reductions: the engine sets it up for schedules with temp_copies
  PackedBuffer shared;
  MPI_Op op = MPI_OP_NULL;  // of a reduction; LocalReduce steps use it

  // The bytes of scratch block `block` if this rank knows them (knows_scratch_bytes).
  std::optional<long long> scratch_block_bytes(std::int64_t block) const;
  bool knows_scratch_bytes(int peer, std::int64_t block) const {
    return collshim::knows_scratch_bytes(naming, p, root, peer, block);
  }
};

// A committed hindexed type over buffer.type covering `blocks` in that order (offsets from
// buffer.base), one entry per run of blocks that lie back to back, as long as a run's length fits
// an int. `lengths` and `offsets` are scratch. The caller frees the type.
template <typename Blocks>
int create_blocks_type(const TypedBuffer& buffer, const Blocks& blocks, std::vector<int>& lengths,
                       std::vector<MPI_Aint>& offsets, MPI_Datatype& type) {
  lengths.clear();
  offsets.clear();
  MPI_Aint run_end = 0;
  for (const auto block : blocks) {
    const int count = buffer.count(block);
    if (count == 0) continue;
    const MPI_Aint displacement = buffer.displacement(block);
    if (!lengths.empty() && displacement == run_end && lengths.back() <= INT_MAX - count) {
      lengths.back() += count;
    } else {
      lengths.push_back(count);
      offsets.push_back(displacement * buffer.extent);
    }
    run_end = displacement + count;
  }
  int rc =
      PMPI_Type_create_hindexed(static_cast<int>(lengths.size()), lengths.data(), offsets.data(), buffer.type, &type);
  if (rc == MPI_SUCCESS) rc = PMPI_Type_commit(&type);
  return rc;
}

// What a layout may point into besides the user's buffers: an in-place Alltoallv's staged outgoing
// blocks, a reduction's segments. A blocking call uses its communicator's (CommContext); a
// nonblocking or persistent operation keeps its own until it completes.
struct LayoutStorage {
  std::vector<std::byte> staging;
  std::vector<int> segment_counts, segment_displs;
};

// Layouts of the calls of `rank` of `p` ranks. MPI_IN_PLACE: the allgather's own block is already
// in recvbuf (its send buffer is recvbuf); the Alltoallv's outgoing blocks are copied to the
// storage's staging buffer first, since receiving overwrites them. Returns an MPI error code.
int make_layout(const AllgathervCall& call, int p, int rank, LayoutStorage& storage, CallLayout& layout);
int make_layout(const AlltoallvCall& call, int p, int rank, LayoutStorage& storage, CallLayout& layout);
// Elements of segment `segment` of a reduction's `count` elements cut into p segments: equal, the
// first count % p one element longer. Every algorithm, and the cost model, cuts the same way.
inline long long segment_elements(long long count, int p, int segment) {
  return count / p + (segment < count % p ? 1 : 0);
}
// Elements of segments [first, first + n) together.
inline long long segments_elements(long long count, int p, long long first, long long n) {
  const long long longer = std::max(0LL, std::min(first + n, count % p) - first);  // of the first count % p
  return n * (count / p) + longer;
}

// A reduction's vector cut into p segments as equal as possible, in whole elements (the counts and
// displacements live in `storage`). MPI_IN_PLACE: the send buffer is recvbuf.
int make_layout(const AllreduceCall& call, int p, int rank, LayoutStorage& storage, CallLayout& layout);
// Rooted calls: the arguments that mean nothing on this rank (the receive side of a Gatherv's
// non-root, the send side of a Scatterv's) are left out (empty TypedBuffer), never asked of MPI.
// MPI_IN_PLACE at the root: its block stays where it is (the other buffer stands in for it).
int make_layout(const GathervCall& call, int p, int rank, LayoutStorage& storage, CallLayout& layout);
int make_layout(const ScattervCall& call, int p, int rank, LayoutStorage& storage, CallLayout& layout);
// The bytes of this rank's own block in a rooted call (what it sends or receives).
long long own_block_bytes(const CallLayout& layout);

}  // namespace collshim
