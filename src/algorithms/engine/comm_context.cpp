#include "algorithms/engine/comm_context.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>

#include "algorithms/engine/algorithm_spec.hpp"

namespace collshim {
namespace {

// The keyval of the serial-number attribute, made on first use (after MPI_Init) and kept.
int serial_keyval() {
  static const int keyval = [] {
    int made = MPI_KEYVAL_INVALID;
    PMPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, &made, nullptr);
    return made;
  }();
  return keyval;
}

std::atomic<std::uint64_t> next_serial{1};

}  // namespace

bool MessageTypeCache::key(const Region& region, const TypedBuffer& buffer, Key& key) const {
  int integers = 0, addresses = 0, types = 0, combiner = 0;
  if (PMPI_Type_get_envelope(buffer.type, &integers, &addresses, &types, &combiner) != MPI_SUCCESS) return false;
  std::uint64_t identity = 0;
  if (combiner == MPI_COMBINER_NAMED) {
    static_assert(sizeof(MPI_Datatype) <= sizeof identity);
    std::memcpy(&identity, &buffer.type, sizeof(MPI_Datatype));
    identity |= std::uint64_t{1} << 63;  // apart from serial numbers
  } else {
    const int keyval = serial_keyval();
    void* value = nullptr;
    int found = 0;
    if (keyval == MPI_KEYVAL_INVALID || PMPI_Type_get_attr(buffer.type, keyval, &value, &found) != MPI_SUCCESS)
      return false;
    if (!found) {
      value = reinterpret_cast<void*>(static_cast<std::uintptr_t>(next_serial.fetch_add(1)));
      if (PMPI_Type_set_attr(buffer.type, keyval, value) != MPI_SUCCESS) return false;
    }
    identity = reinterpret_cast<std::uintptr_t>(value);
  }
  key = {&region, identity, buffer.uniform_count, buffer.only_block};
  return true;
}

std::size_t MessageTypeCache::Hash::operator()(const Key& key) const {
  std::size_t h = std::hash<const void*>{}(key.transfer);
  for (const std::uint64_t part :
       {key.datatype, static_cast<std::uint64_t>(key.count), static_cast<std::uint64_t>(key.only_block)})
    h = (h ^ std::hash<std::uint64_t>{}(part)) * 0x9E3779B97F4A7C15ull;
  return h;
}

MPI_Datatype MessageTypeCache::find(const Key& key) const {
  const auto found = types_.find(key);
  return found == types_.end() ? MPI_DATATYPE_NULL : found->second;
}

void MessageTypeCache::store(const Key& key, MPI_Datatype type) {
  if (types_.size() >= max_types) {
    for (auto& [cached_key, cached] : types_) PMPI_Type_free(&cached);
    types_.clear();
  }
  types_.emplace(key, type);
}

MessageTypeCache::~MessageTypeCache() {
  for (auto& [key, type] : types_) PMPI_Type_free(&type);
}

std::byte* EngineStorage::allocate(std::size_t bytes) {
  if (chunks_used == chunks.size()) chunks.emplace_back();
  std::vector<std::byte>& chunk = chunks[chunks_used++];
  if (chunk.size() < bytes) chunk.resize(bytes);  // never shrinks here: the next call reuses it
  return chunk.data();
}

void EngineStorage::start_call() {
  chunks_used = 0;
  scratch_blocks.clear();
}

void EngineStorage::finish_call() {
  for (std::vector<std::byte>& chunk : chunks) {
    if (chunk.capacity() > kept_bytes) std::vector<std::byte>().swap(chunk);
  }
  if (temp.capacity() > kept_bytes) std::vector<std::byte>().swap(temp);
}

CommContext::CommContext(MPI_Comm shadow) : comm_(shadow) {
  PMPI_Comm_size(comm_, &size_);
  PMPI_Comm_rank(comm_, &rank_);
  node_of_rank_.assign(static_cast<std::size_t>(size_), 0);
}

CommContext::~CommContext() {
  states_.clear();  // communicators split from the shadow go first
  if (comm_ != MPI_COMM_NULL) PMPI_Comm_free(&comm_);
}

int CommContext::state(const AlgorithmChoice& choice, AlgorithmState*& state) {
  const auto known = [&] {
    const std::lock_guard lock(states_mutex_);
    const auto found = std::ranges::find(states_, &choice, [](const auto& entry) { return entry.first; });
    return found == states_.end() ? nullptr : found->second.get();
  };
  if ((state = known()) != nullptr) return MPI_SUCCESS;
  // Made unlocked: making may be collective (blocking-only algorithms, on the thread of a blocking call).
  std::unique_ptr<AlgorithmState> made;
  const int rc = make_algorithm_state(choice, *this, made);
  if (rc != MPI_SUCCESS) return rc;  // nothing kept: a later call starts over
  const std::lock_guard lock(states_mutex_);
  const auto found = std::ranges::find(states_, &choice, [](const auto& entry) { return entry.first; });
  if (found != states_.end()) {  // another thread's operation made it meanwhile
    state = found->second.get();
    return MPI_SUCCESS;
  }
  state = made.get();
  states_.emplace_back(&choice, std::move(made));
  return MPI_SUCCESS;
}

int CommContext::complete_requests(std::span<MPI_Request> pending) {
  return collshim::complete_requests(pending, statuses_);
}

}  // namespace collshim
