#include "algorithms/engine/call_layout.hpp"

#include <algorithm>
#include <cstring>

#include "algorithms/engine/comm_context.hpp"
#include "algorithms/engine/local_copy.hpp"

namespace collshim {
namespace {

TypedBuffer typed_buffer(const void* base, MPI_Datatype type, const int* counts, const int* displs, int uniform_count) {
  TypedBuffer buffer;
  buffer.base = static_cast<char*>(const_cast<void*>(base));
  buffer.type = type;
  MPI_Aint lower_bound = 0;
  PMPI_Type_get_extent(type, &lower_bound, &buffer.extent);
  buffer.counts = counts;
  buffer.displs = displs;
  buffer.uniform_count = uniform_count;
  return buffer;
}

// A rooted call's two sides: the buffer that holds every rank's block at the root (a Gatherv's
// receive buffer, a Scatterv's send buffer) and the one that holds each other rank's own block.
const TypedBuffer& all_blocks_side(const CallLayout& layout) {
  return layout.naming == BlockNaming::gather ? layout.recv : layout.send;
}
const TypedBuffer& own_block_side(const CallLayout& layout) {
  return layout.naming == BlockNaming::gather ? layout.send : layout.recv;
}

}  // namespace

std::int64_t datum_of(BlockNaming naming, int p, int rank, Buffer buffer, std::int64_t block) {
  if (naming == BlockNaming::allgather || is_rooted(naming)) return block;  // rank b's block, in every buffer
  if (naming == BlockNaming::reduction) return block % p;                   // the segment, in every buffer and copy
  switch (buffer) {
    case Buffer::send: return static_cast<std::int64_t>(rank) * p + block;
    case Buffer::recv: return block * p + rank;
    case Buffer::scratch:
    case Buffer::shared:
    case Buffer::temp: return block;
  }
  return block;
}

std::int64_t consecutive_datums(BlockNaming naming, int p, Buffer buffer, std::int64_t block, std::int64_t count) {
  if (naming == BlockNaming::reduction) return std::min(count, p - block % p);  // up to the copy's end
  if (naming == BlockNaming::alltoall && buffer == Buffer::recv) return std::min<std::int64_t>(count, 1);  // o*p+rank
  return count;
}

std::optional<long long> CallLayout::scratch_block_bytes(std::int64_t block) const {
  if (naming == BlockNaming::allgather) return recv.bytes(block);
  if (is_rooted(naming)) {
    if (rank == root) return all_blocks_side(*this).bytes(block);
    if (block == rank) return own_block_side(*this).bytes(block);
    return std::nullopt;
  }
  if (naming == BlockNaming::reduction) return recv.bytes(block % p);
  const std::int64_t origin = block / p, destination = block % p;
  if (origin == rank) return send.bytes(destination);
  if (destination == rank) return recv.bytes(origin);
  return std::nullopt;
}

bool knows_scratch_bytes(BlockNaming naming, int p, int root, int rank, std::int64_t block) {
  if (is_rooted(naming)) return rank == root || block == rank;
  return naming != BlockNaming::alltoall || block / p == rank || block % p == rank;
}

long long own_block_bytes(const CallLayout& layout) {
  return (layout.rank == layout.root ? all_blocks_side(layout) : own_block_side(layout)).bytes(layout.rank);
}

int make_layout(const GathervCall& call, int p, int rank, LayoutStorage&, CallLayout& layout) {
  layout = {};
  layout.naming = BlockNaming::gather;
  layout.p = p;
  layout.rank = rank;
  layout.root = call.root;
  if (layout.rank == call.root) {
    layout.recv = typed_buffer(call.recvbuf, call.recvtype, call.recvcounts, call.displs, 0);
    if (call.sendbuf == MPI_IN_PLACE) {
      layout.send = layout.recv;  // the own block's copy is then from a place to itself: nothing
      return MPI_SUCCESS;
    }
  }
  layout.send = typed_buffer(call.sendbuf, call.sendtype, nullptr, nullptr, call.sendcount);
  layout.send.only_block = layout.rank;
  return MPI_SUCCESS;
}

int make_layout(const ScattervCall& call, int p, int rank, LayoutStorage&, CallLayout& layout) {
  layout = {};
  layout.naming = BlockNaming::scatter;
  layout.p = p;
  layout.rank = rank;
  layout.root = call.root;
  if (layout.rank == call.root) {
    layout.send = typed_buffer(call.sendbuf, call.sendtype, call.sendcounts, call.displs, 0);
    if (call.recvbuf == MPI_IN_PLACE) {
      layout.recv = layout.send;  // the own block stays in sendbuf: its copy does nothing
      return MPI_SUCCESS;
    }
  }
  layout.recv = typed_buffer(call.recvbuf, call.recvtype, nullptr, nullptr, call.recvcount);
  layout.recv.only_block = layout.rank;
  return MPI_SUCCESS;
}

int make_layout(const AllgathervCall& call, int p, int rank, LayoutStorage&, CallLayout& layout) {
  layout = {};
  layout.naming = BlockNaming::allgather;
  layout.p = p;
  layout.rank = rank;
  layout.recv = typed_buffer(call.recvbuf, call.recvtype, call.recvcounts, call.displs, call.uniform_count);
  if (call.sendbuf == MPI_IN_PLACE) {
    layout.send = layout.recv;  // the own block's copy is then from a place to itself: nothing
  } else {
    layout.send = typed_buffer(call.sendbuf, call.sendtype, nullptr, nullptr, call.sendcount);
    layout.send.only_block = layout.rank;
  }
  return MPI_SUCCESS;
}

int make_layout(const AlltoallvCall& call, int p, int rank, LayoutStorage& storage, CallLayout& layout) {
  layout = {};
  layout.naming = BlockNaming::alltoall;
  layout.p = p;
  layout.rank = rank;
  layout.recv = typed_buffer(call.recvbuf, call.recvtype, call.recvcounts, call.rdispls, call.recv_uniform_count);
  if (call.sendbuf != MPI_IN_PLACE) {
    layout.send = typed_buffer(call.sendbuf, call.sendtype, call.sendcounts, call.sdispls, call.send_uniform_count);
    return MPI_SUCCESS;
  }
  // Copy the byte span that covers every outgoing block, gaps included, so that each block keeps its
  // layout and still goes out as the user's datatype.
  layout.send = layout.recv;
  const TypedBuffer& recv = layout.recv;
  MPI_Aint true_lb = 0, true_extent = 0;
  PMPI_Type_get_true_extent(recv.type, &true_lb, &true_extent);
  MPI_Aint span_begin = 0, span_end = 0;
  bool any = false;
  for (int peer = 0; peer < layout.p; ++peer) {
    if (recv.count(peer) == 0) continue;
    const MPI_Aint begin = recv.displacement(peer) * recv.extent + true_lb;
    const MPI_Aint end = begin + (recv.count(peer) - 1) * recv.extent + true_extent;
    span_begin = any ? std::min(span_begin, begin) : begin;
    span_end = any ? std::max(span_end, end) : end;
    any = true;
  }
  storage.staging.resize(static_cast<std::size_t>(span_end - span_begin));
  if (any) std::memcpy(storage.staging.data(), recv.base + span_begin, storage.staging.size());
  // The staged copy stands where recvbuf was: block d at base + displacement(d) * extent.
  layout.send.base = reinterpret_cast<char*>(storage.staging.data()) - span_begin;
  return MPI_SUCCESS;
}

int make_layout(const AllreduceCall& call, int p, int rank, LayoutStorage& storage, CallLayout& layout) {
  layout = {};
  layout.naming = BlockNaming::reduction;
  layout.p = p;
  layout.rank = rank;
  layout.op = call.op;
  storage.segment_counts.resize(static_cast<std::size_t>(p));
  storage.segment_displs.resize(static_cast<std::size_t>(p));
  int displacement = 0;
  for (int b = 0; b < p; ++b) {
    storage.segment_counts[b] = static_cast<int>(segment_elements(call.count, p, b));
    storage.segment_displs[b] = displacement;
    displacement += storage.segment_counts[b];
  }
  layout.recv = typed_buffer(call.recvbuf, call.type, storage.segment_counts.data(), storage.segment_displs.data(), 0);
  layout.send = call.sendbuf == MPI_IN_PLACE ? layout.recv
                                             : typed_buffer(call.sendbuf, call.type, storage.segment_counts.data(),
                                                            storage.segment_displs.data(), 0);
  return MPI_SUCCESS;
}

}  // namespace collshim
