#pragma once
// Per-communicator state of the algorithms: the shadow communicator all internal traffic uses, each
// algorithm choice's state (its schedule, and whatever its opaque phases keep), and the engine's
// storage, reused between calls so that repeated calls do not allocate. Owned by the intercept
// layer's communicator cache.
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "algorithms/engine/schedule_engine.hpp"

namespace collshim {

struct AlgorithmChoice;

// Where a packed block is: a chunk of the engine's scratch storage, or the shared buffer.
struct PackedLocation {
  std::byte* address = nullptr;
  long long bytes = 0;
};

// The derived datatypes of messages whose layout repeats from call to call: a schedule's transfer
// over blocks of equal counts (an Allgather), for one user datatype and count. Building, committing
// and freeing such a type costs more than the rest of the engine's bookkeeping for a small message.
// A user datatype is identified safely: predefined types by handle (they are never freed), derived
// ones by a serial number kept in an attribute on the type, which a freed handle reused for another
// type does not carry.
class MessageTypeCache {
 public:
  struct Key {
    const void* transfer = nullptr;  // the Region of a schedule kept for the communicator's life
    std::uint64_t datatype = 0;
    int count = 0;
    std::int64_t only_block = -1;
    bool operator==(const Key&) const = default;
  };
  MessageTypeCache() = default;
  ~MessageTypeCache();
  MessageTypeCache(const MessageTypeCache&) = delete;
  MessageTypeCache& operator=(const MessageTypeCache&) = delete;

  bool key(const Region& region, const TypedBuffer& buffer, Key& key) const;
  MPI_Datatype find(const Key& key) const;
  void store(const Key& key, MPI_Datatype type);  // takes ownership

 private:
  struct Hash {
    std::size_t operator()(const Key& key) const;
  };
  static constexpr std::size_t max_types = 4096;  // then all are dropped: a bound for odd workloads
  std::unordered_map<Key, MPI_Datatype, Hash> types_;
};

// What the engine needs during a call; contents are meaningless between calls (but for the cache).
struct EngineStorage {
  // Chunks of packed scratch bytes, one per packed receive or copy target. A chunk never moves
  // once a request points into it; chunks are kept for the next call, up to kept_bytes each.
  static constexpr std::size_t kept_bytes = std::size_t{64} << 20;
  std::byte* allocate(std::size_t bytes);
  void start_call();   // forgets the previous call's blocks
  void finish_call();  // frees chunks above kept_bytes, so one huge call does not pin its memory

  std::vector<std::vector<std::byte>> chunks;
  std::size_t chunks_used = 0;
  std::unordered_map<std::int64_t, PackedLocation> scratch_blocks;
  std::vector<MPI_Request> requests;
  std::vector<MPI_Status> statuses;
  std::vector<int> indices;
  std::vector<MPI_Datatype> message_types;  // built for this step, freed after it
  std::vector<int> type_lengths;
  std::vector<MPI_Aint> type_offsets;
  std::deque<std::vector<std::int64_t>> headers;  // size headers of this step's messages (stable addresses)
  MessageTypeCache message_type_cache;
  std::vector<std::byte> temp;  // Buffer::temp of reductions: typed copies laid out like recv, kept between calls
};

class CommContext {
 public:
  // Takes ownership of `shadow` (a PMPI_Comm_dup of the user's communicator) and frees it.
  explicit CommContext(MPI_Comm shadow);
  ~CommContext();
  CommContext(const CommContext&) = delete;
  CommContext& operator=(const CommContext&) = delete;

  MPI_Comm comm() const { return comm_; }
  int size() const { return size_; }
  int rank() const { return rank_; }

  // Where the ranks run (node identifiers, one per rank; default: all on one node). Set once, before
  // the first algorithm state is made.
  void set_node_of_rank(std::vector<int> node_of_rank) { node_of_rank_ = std::move(node_of_rank); }
  const std::vector<int>& node_of_rank() const { return node_of_rank_; }

  // The state of `choice` on this communicator, made on its first call (collective then: every
  // rank of the call makes it). Keyed by the choice's address: the caller keeps its choices for the
  // context's life (the selector's interned ones, a benchmark's list). Returns an MPI error code.
  int state(const AlgorithmChoice& choice, AlgorithmState*& state);

  // Completes every request, even when some fail, so that no message still lands in a user's buffer
  // (or reads one) after the call returns, and no request is left behind. Returns MPI_SUCCESS or the
  // error of the first failed message (not MPI_ERR_IN_STATUS).
  int complete_requests(std::span<MPI_Request> pending);

  EngineStorage engine;
  LayoutStorage layout_storage;    // of the blocking calls (make_layout)
  std::vector<std::byte> staging;  // an algorithm's staging copy (a hierarchical allgather's)

 private:
  MPI_Comm comm_;
  int size_ = 0;
  int rank_ = 0;
  std::vector<int> node_of_rank_;
  std::vector<MPI_Status> statuses_;
  std::vector<std::pair<const AlgorithmChoice*, std::unique_ptr<AlgorithmState>>> states_;
  // A nonblocking operation may make or look up its state while another thread's blocking call does.
  std::mutex states_mutex_;
};

}  // namespace collshim
