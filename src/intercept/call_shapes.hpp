#pragma once
// The call shapes: one struct per collective holding one call's arguments, with what the shim's
// flows ask of them (are the arguments usable, how many bytes, run an algorithm, device buffers),
// and the data the cost model needs of a call.
#include <mpi.h>

#include <concepts>
#include <vector>

#include "algorithms/engine/run_algorithm.hpp"
#include "algorithms/engine/local_copy.hpp"
#include "decide/collective_steps.hpp"
#include "intercept/call_arguments.hpp"
#include "intercept/device_memory.hpp"
#include "intercept/reduction_properties.hpp"
#include "model/cost/alltoall_summary.hpp"

namespace collshim {

inline bool counts_valid(const int* counts, int p) {
  if (counts == nullptr) return false;
  for (int i = 0; i < p; ++i) {
    if (counts[i] < 0) return false;
  }
  return true;
}

inline bool any_positive(const int* counts, int p) {
  for (int i = 0; i < p; ++i) {
    if (counts[i] > 0) return true;
  }
  return false;
}

// Bytes of p blocks of counts[i] elements of `type`.
inline long long bytes_of_blocks(const int* counts, int p, MPI_Datatype type) {
  long long elements = 0;
  for (int block = 0; block < p; ++block) elements += counts[block];
  return elements * type_size(type);
}

// What run_collective() needs of a collective: a struct holding one call's arguments, with
// clang-format off
template <typename Shape>
concept ShapeOfCall = requires(const Shape& shape, int p, const AlgorithmChoice& choice, CommContext& context,
                             DeviceMemory& memory) {
  { Shape::collective } -> std::convertible_to<Collective>;  // its row in the collective table
  { shape.arguments_usable(p) } -> std::same_as<bool>;  // false: the MPI library gets the call (and reports errors)
  { shape.received_bytes(p) } -> std::same_as<long long>;  // bytes this rank receives (rooted: root's total, others' own)
  { shape.run(choice, context) } -> std::same_as<int>;     // the decided algorithm
  // Whether a buffer this rank's part of the call reads or writes is device memory (buffers with no
  // data to move, and MPI_IN_PLACE, are not asked about).
  { shape.device_buffers(memory, p) } -> std::same_as<bool>;
};
// A blocking call: its shape, with the library's function for it.
template <typename Shape>
concept BlockingShape = ShapeOfCall<Shape> && requires(const Shape& shape, MPI_Comm comm) {
  { shape.pass_through(comm) } -> std::same_as<int>;       // the PMPI_* call with the user's arguments
};
// clang-format on
// (Not formatted: clang-format 14 breaks the requirement lines apart.)

// The data of a call as the cost model needs it (model::ModelCall): the size, each rank's block
// where they differ (Allgatherv), the element (Allreduce), and Alltoallv's pattern, which only the
// ranks together know (a summary of each rank's counts gathered on rank 0 of the shadow through
// `steps`: collective).
template <ShapeOfCall Shape>
model::ModelCall model_call(const Shape& shape, CollectiveSteps& steps, long long block_bytes,
                            const std::vector<int>& node_of_rank, bool gather_pattern = true) {
  const int p = steps.size();
  model::ModelCall call;
  call.collective = Shape::collective;
  call.p = p;
  call.bytes = block_bytes;
  if constexpr (requires { shape.block_bytes_by_rank(p); }) call.block_bytes = shape.block_bytes_by_rank(p);
  if constexpr (requires { shape.element_bytes(); }) call.element_bytes = shape.element_bytes();
  if constexpr (requires { shape.call.sendbuf; }) call.in_place = shape.call.sendbuf == MPI_IN_PLACE;
  if constexpr (requires { shape.call.op; }) call.builtin_op = predefined_operation(shape.call.op);
  if constexpr (requires { shape.sent_bytes(p); }) {
    if (!gather_pattern) return call;
    call.pairs = model::gather_alltoall_pattern(steps, shape.sent_bytes(p), shape.received_bytes_by_source(p),
                                                node_of_rank, block_bytes);
    // Every pair holding the same bytes: the uniform call, costed by its symmetry.
    if (call.pairs.uniform()) call.bytes = call.pairs.every_pair_bytes;
  }
  return call;
}

// The BlockingShape of each collective.

// MPI_Allgather and MPI_Allgatherv: the executor's block model, one AllgathervCall.
struct AllgatherFamilyShape {
  AllgathervCall call;

  bool arguments_usable(int p) const {
    if (call.recvtype == MPI_DATATYPE_NULL ||
        (call.sendbuf != MPI_IN_PLACE && (call.sendtype == MPI_DATATYPE_NULL || call.sendcount < 0)))
      return false;
    return call.recvcounts ? counts_valid(call.recvcounts, p) && call.displs != nullptr : call.uniform_count >= 0;
  }
  bool device_buffers(DeviceMemory& memory, int p) const {
    if (call.sendbuf != MPI_IN_PLACE && call.sendcount > 0 && memory.is_device(call.sendbuf)) return true;
    const bool receives = call.recvcounts ? any_positive(call.recvcounts, p) : call.uniform_count > 0;
    return receives && memory.is_device(call.recvbuf);
  }
  int run(const AlgorithmChoice& choice, CommContext& context) const { return run_call(call, choice, context); }
};

struct AllgatherShape : AllgatherFamilyShape {
  static constexpr Collective collective = Collective::allgather;
  explicit AllgatherShape(const CallArguments<collective>& a)
      : AllgatherFamilyShape{
            {a.sendbuf, a.sendcount, a.sendtype, a.recvbuf, nullptr, nullptr, a.recvcount, a.recvtype}} {}
  long long received_bytes(int p) const {
    return static_cast<long long>(call.uniform_count) * p * type_size(call.recvtype);
  }
};

struct AllgathervShape : AllgatherFamilyShape {
  static constexpr Collective collective = Collective::allgatherv;
  explicit AllgathervShape(const CallArguments<collective>& a)
      : AllgatherFamilyShape{{a.sendbuf, a.sendcount, a.sendtype, a.recvbuf, a.recvcounts, a.displs, 0, a.recvtype}} {}
  long long received_bytes(int p) const { return bytes_of_blocks(call.recvcounts, p, call.recvtype); }
  std::vector<long long> block_bytes_by_rank(int p) const {
    std::vector<long long> bytes(p);
    for (int rank = 0; rank < p; ++rank)
      bytes[rank] = static_cast<long long>(call.recvcounts[rank]) * type_size(call.recvtype);
    return bytes;
  }
};

struct AlltoallvShape {
  static constexpr Collective collective = Collective::alltoallv;
  AlltoallvCall call;
  explicit AlltoallvShape(const CallArguments<collective>& a)
      : call{a.sendbuf, a.sendcounts, a.sdispls, a.sendtype, a.recvbuf, a.recvcounts, a.rdispls, a.recvtype} {}

  bool arguments_usable(int p) const {
    const bool in_place = call.sendbuf == MPI_IN_PLACE;
    if (call.recvtype == MPI_DATATYPE_NULL || (!in_place && call.sendtype == MPI_DATATYPE_NULL)) return false;
    return counts_valid(call.recvcounts, p) && call.rdispls != nullptr &&
           (in_place || (counts_valid(call.sendcounts, p) && call.sdispls != nullptr));
  }
  long long received_bytes(int p) const { return bytes_of_blocks(call.recvcounts, p, call.recvtype); }
  // Bytes to each destination (in place: the receive counts, which then also describe what is sent).
  std::vector<long long> sent_bytes(int p) const {
    const bool in_place = call.sendbuf == MPI_IN_PLACE;
    const int* counts = in_place ? call.recvcounts : call.sendcounts;
    const long long size = type_size(in_place ? call.recvtype : call.sendtype);
    std::vector<long long> bytes(p);
    for (int destination = 0; destination < p; ++destination) bytes[destination] = counts[destination] * size;
    return bytes;
  }
  // Bytes from each source.
  std::vector<long long> received_bytes_by_source(int p) const {
    const long long size = type_size(call.recvtype);
    std::vector<long long> bytes(p);
    for (int source = 0; source < p; ++source) bytes[source] = call.recvcounts[source] * size;
    return bytes;
  }
  bool device_buffers(DeviceMemory& memory, int p) const {
    if (call.sendbuf != MPI_IN_PLACE && any_positive(call.sendcounts, p) && memory.is_device(call.sendbuf)) return true;
    return any_positive(call.recvcounts, p) && memory.is_device(call.recvbuf);
  }
  int run(const AlgorithmChoice& choice, CommContext& context) const { return run_call(call, choice, context); }
};

// MPI_Alltoall: Alltoallv with equal counts (AlltoallvCall's uniform form, no count arrays).
struct AlltoallShape {
  static constexpr Collective collective = Collective::alltoall;
  AlltoallvCall call;
  explicit AlltoallShape(const CallArguments<collective>& a)
      : call{a.sendbuf, nullptr, nullptr,    a.sendtype,  a.recvbuf,
             nullptr,   nullptr, a.recvtype, a.sendcount, a.recvcount} {}

  bool arguments_usable(int) const {
    const bool in_place = call.sendbuf == MPI_IN_PLACE;
    if (call.recvtype == MPI_DATATYPE_NULL || call.recv_uniform_count < 0) return false;
    return in_place || (call.sendtype != MPI_DATATYPE_NULL && call.send_uniform_count >= 0);
  }
  long long received_bytes(int p) const {
    return static_cast<long long>(call.recv_uniform_count) * p * type_size(call.recvtype);
  }
  bool device_buffers(DeviceMemory& memory, int) const {
    if (call.sendbuf != MPI_IN_PLACE && call.send_uniform_count > 0 && memory.is_device(call.sendbuf)) return true;
    return call.recv_uniform_count > 0 && memory.is_device(call.recvbuf);
  }
  int run(const AlgorithmChoice& choice, CommContext& context) const { return run_call(call, choice, context); }
};

// MPI_Allreduce: the vector cut into p segments. Types whose extent is not positive (nothing a
// temporary copy could lay out) and aliased buffers go to the MPI library, which reports the latter.
struct AllreduceShape {
  static constexpr Collective collective = Collective::allreduce;
  AllreduceCall call;
  explicit AllreduceShape(const CallArguments<collective>& a) : call{a.sendbuf, a.recvbuf, a.count, a.datatype, a.op} {}

  bool arguments_usable(int) const {
    if (call.type == MPI_DATATYPE_NULL || call.op == MPI_OP_NULL || call.count < 0 || call.sendbuf == call.recvbuf)
      return false;
    MPI_Aint lower_bound = 0, extent = 0;
    return PMPI_Type_get_extent(call.type, &lower_bound, &extent) == MPI_SUCCESS && extent > 0;
  }
  long long received_bytes(int) const { return static_cast<long long>(call.count) * type_size(call.type); }
  int reduction_properties() const { return collshim::reduction_properties(call.type, call.op); }
  long long element_bytes() const { return type_size(call.type); }
  bool device_buffers(DeviceMemory& memory, int) const {
    if (call.count == 0) return false;
    return (call.sendbuf != MPI_IN_PLACE && memory.is_device(call.sendbuf)) || memory.is_device(call.recvbuf);
  }
  int run(const AlgorithmChoice& choice, CommContext& context) const { return run_call(call, choice, context); }
};

// MPI_Gatherv and MPI_Scatterv: the counts and the root-side arguments are checked at the root
// only (where they mean something); a root outside the communicator goes to the MPI library, which
// reports it. The rank-local view of the arguments is what MPI allows: an erroneous call at one
// rank is erroneous for all.
inline bool root_usable(int root, int p) { return root >= 0 && root < p; }

// The two sides of a rooted call: the root's, a block per rank (a Gatherv's receive side, a
// Scatterv's send side), and every rank's own block (the other side; MPI_IN_PLACE at the root).
struct RootSide {
  const void* buffer;
  const int* counts;
  const int* displs;
  MPI_Datatype type;
};
struct OwnSide {
  const void* buffer;
  int count;
  MPI_Datatype type;
};
inline RootSide root_side(const GathervCall& c) { return {c.recvbuf, c.recvcounts, c.displs, c.recvtype}; }
inline OwnSide own_side(const GathervCall& c) { return {c.sendbuf, c.sendcount, c.sendtype}; }
inline RootSide root_side(const ScattervCall& c) { return {c.sendbuf, c.sendcounts, c.displs, c.sendtype}; }
inline OwnSide own_side(const ScattervCall& c) { return {c.recvbuf, c.recvcount, c.recvtype}; }

// Gatherv and Scatterv, which mirror each other.
template <Collective rooted_collective, typename Call>
struct RootedShape {
  static constexpr Collective collective = rooted_collective;
  Call call;
  int rank = MPI_PROC_NULL;  // in the call's communicator (set by intercept())

  bool at_root() const { return rank == call.root; }
  // Whether this rank moves its own block (not the root's in place).
  bool moves_own_block() const { return !(at_root() && own_side(call).buffer == MPI_IN_PLACE); }
  bool arguments_usable(int p) const {
    if (!root_usable(call.root, p)) return false;
    const OwnSide own = own_side(call);
    if (moves_own_block() && (own.type == MPI_DATATYPE_NULL || own.count < 0)) return false;
    const RootSide all = root_side(call);
    return !at_root() || (all.type != MPI_DATATYPE_NULL && counts_valid(all.counts, p) && all.displs != nullptr);
  }
  long long received_bytes(int p) const {
    const OwnSide own = own_side(call);
    const RootSide all = root_side(call);
    return at_root() ? bytes_of_blocks(all.counts, p, all.type)
                     : static_cast<long long>(own.count) * type_size(own.type);
  }
  bool device_buffers(DeviceMemory& memory, int p) const {
    const OwnSide own = own_side(call);
    if (moves_own_block() && own.count > 0 && memory.is_device(own.buffer)) return true;
    const RootSide all = root_side(call);
    return at_root() && any_positive(all.counts, p) && memory.is_device(all.buffer);
  }
  int run(const AlgorithmChoice& choice, CommContext& context) const { return run_call(call, choice, context); }
};

struct GathervShape : RootedShape<Collective::gatherv, GathervCall> {
  explicit GathervShape(const CallArguments<Collective::gatherv>& a)
      : RootedShape{{a.sendbuf, a.sendcount, a.sendtype, a.recvbuf, a.recvcounts, a.displs, a.recvtype, a.root}} {}
};

struct ScattervShape : RootedShape<Collective::scatterv, ScattervCall> {
  explicit ScattervShape(const CallArguments<Collective::scatterv>& a)
      : RootedShape{{a.sendbuf, a.sendcounts, a.displs, a.sendtype, a.recvbuf, a.recvcount, a.recvtype, a.root}} {}
};

}  // namespace collshim
